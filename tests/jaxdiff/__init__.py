"""Differential testing of jitviz against real JAX (issue 17).

A seeded generator (`generator.py`) writes random `jnp`/`lax` programs as Python source; each
one runs under `jax.jit` and under `jitviz.jit` (backends "interpret" and "cpu") with `jnp`/`lax`
bound to either library (`runner.py`); the results are compared (dtype, weak type, shape,
values, error class), mismatches are minimised and classified, and `known.py` lists the
deliberate differences (README, "Where jitviz differs") apart from the open bugs.

    python -m tests.jaxdiff --n 2000 --seed 1 --report /tmp/jaxdiff.json --markdown /tmp/r.md

The pytest entry is `tests/test_jax_differential.py` (skipped without JAX).
"""
