"""What a Ref costs a jitted call: dispatch with a Ref argument, with a closed-over Ref, and the
pure function that threads the same state by value, on jitviz's CPU backend and under jax.jit
when JAX is installed.

    python benchmarks/bench_refs.py [--n 1000]

Each row is the median time per call of one `acc += x` step on float32 vectors of length n
(see jitviz/state.py: a Ref's current value goes in as an input and the final value is
copied back into its buffer after the call).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import timeit

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])

import numpy as np  # noqa: E402

import jitviz  # noqa: E402
import jitviz.numpy as jnp  # noqa: E402


def per_call(call, number=2000, repeat=5):
    call()
    return statistics.median(timeit.repeat(call, number=number, repeat=repeat)) / number


def cases(api, np_, n):
    x = np_.ones(n, np_.float32)
    acc = api.new_ref(np_.zeros(n, np_.float32))
    closed = api.new_ref(np_.zeros(n, np_.float32))

    def step_arg(r, x):
        r[...] += x

    def step_closed(x):
        closed[...] += x

    pure = api.jit(lambda a, x: a + x)
    with_arg, with_closed = api.jit(step_arg), api.jit(step_closed)
    state = {"a": np_.zeros(n, np_.float32)}

    def pure_call():
        state["a"] = pure(state["a"], x)
    return [("pure, state threaded by value", pure_call),
            ("Ref argument", lambda: with_arg(acc, x)),
            ("closed-over Ref", lambda: with_closed(x))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    n = ap.parse_args().n
    apis = [("jitviz (cpu)", jitviz, jnp)]
    try:
        import jax
        apis.append(("jax.jit", jax, jax.numpy))
    except ImportError:
        pass
    print(f"acc += x on float32[{n}], microseconds per call")
    for name, api, np_ in apis:
        for label, call in cases(api, np_, n):
            print(f"  {name:14s} {label:32s} {per_call(call) * 1e6:8.1f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
