"""jit(backend="interpret") equals NumPy on every primitive and on hypothesis programs.

Reuses the primitive table of `test_primitives.py` and the program generator of
`test_hypothesis_programs.py`: the jitted call goes through the whole of `jit` (argument
handling, cache, pipeline stages, executable, output wrapping).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import jitviz
import jitviz.numpy as jnp
from jitviz import jit
from jitviz.core.registry import PRIMITIVES

from helpers import assert_close, float64_kept
from test_hypothesis_programs import _reference, programs, run
from test_primitives import CASES, _case_id


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests compare with NumPy at the dtypes they name, float64 included: jitviz's
    keep_float64 switch keeps NumPy float64 operands float64 without x64."""
    with float64_kept():
        yield

# a side effect with no output, and the optimizer's own primitive, have no jit-level case
_NO_OUTPUT = {"debug_print"}


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("case", [c for c in CASES if c.prim not in _NO_OUTPUT], ids=_case_id)
def test_jit_interpret_matches_numpy_on_every_primitive(case):
    prim = PRIMITIVES[case.prim]

    def f(*xs):
        return prim.bind(*xs, **case.params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _as_list(jit(f, backend="interpret")(*case.args))
    ref = case.ref(*case.args)
    ref = ref if isinstance(ref, list) else [ref]
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert isinstance(g, jitviz.Array)
        assert g.shape == np.shape(r) and g.dtype == np.asarray(r).dtype
        assert_close(np.asarray(g), r, rtol=2e-6)


def test_the_table_covers_every_primitive():
    covered = {c.prim for c in CASES}
    from test_primitives import primitives_needing_cases
    assert primitives_needing_cases() - covered - _NO_OUTPUT <= {"fused"}


@pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")  # a new lambda per example
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_jit_interpret_matches_numpy_on_random_programs(prog):
    program, inputs = prog
    f = jit(lambda *xs: run(program, jnp, xs)[0], backend="interpret")
    got = f(*inputs)
    want = _reference(program, inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4, equal_nan=True)
    again = f(*inputs)  # the cache hit runs the same compiled program
    np.testing.assert_array_equal(np.asarray(again), np.asarray(got))
