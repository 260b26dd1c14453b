"""Cache-hit dispatch overhead and retrace cost of jitviz.jit, side by side with its peers.

    python benchmarks/bench_dispatch.py

Prints per-call times (median of repeats) for a scalar function: plain Python, a Numba
@njit function (the floor for calling compiled code from Python), jitviz.jit on each backend,
and jax.jit when JAX is installed; then the cost of a retrace (a new shape) and of a
recompile of the same code.
"""
from __future__ import annotations

import statistics
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])

import jitviz  # noqa: E402
from jitviz import jit  # noqa: E402


def per_call(fn, arg, number=20000, repeat=7):
    fn(arg)
    times = timeit.repeat(lambda: fn(arg), number=number, repeat=repeat)
    return statistics.median(times) / number


def scalar_fn(x):
    return x * 2.0 + 1.0


def rows():
    x = np.float32(1.5)
    out = [("python function", per_call(scalar_fn, x))]
    try:
        import numba
        out.append(("numba.njit", per_call(numba.njit(scalar_fn), x)))
    except ImportError:
        pass
    for backend in ("interpret", "cpu"):
        try:
            f = jit(scalar_fn, backend=backend)
            f(x)
        except Exception as e:  # a backend that is not available here
            out.append((f"jitviz.jit[{backend}]", f"unavailable: {type(e).__name__}"))
            continue
        out.append((f"jitviz.jit[{backend}]", per_call(f, x)))
    try:
        import jax
        jf = jax.jit(scalar_fn)
        jx = jax.numpy.float32(1.5)
        out.append(("jax.jit", per_call(lambda v: jf(v).block_until_ready(), jx, number=5000)))
    except ImportError:
        out.append(("jax.jit", "not installed"))
    return out


def retrace_costs(backend):
    f = jit(lambda x: jitviz.numpy.sin(x) * 2 + 1, backend=backend)
    f(np.ones(3, np.float32))
    t0 = time.perf_counter()
    f(np.ones(4, np.float32))
    new_shape = time.perf_counter() - t0
    ev = f.events.of_kind("trace")[-1], f.events.of_kind("compile")[-1]
    return new_shape, ev[0].duration_s, ev[1].duration_s


def main():
    print(f"{'dispatch of a cache hit (scalar f32 function)':<46} {'per call':>12}")
    for name, t in rows():
        text = f"{t * 1e6:9.2f} us" if isinstance(t, float) else t
        print(f"  {name:<44} {text:>12}")
    print()
    print(f"{'retrace for a new shape':<30} {'total':>10} {'trace':>10} {'compile':>10}")
    for backend in ("interpret", "cpu"):
        try:
            total, tr, co = retrace_costs(backend)
        except Exception as e:
            print(f"  {backend:<28} unavailable: {type(e).__name__}")
            continue
        print(f"  {backend:<28} {total * 1e3:8.2f} ms {tr * 1e3:8.2f} ms {co * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
