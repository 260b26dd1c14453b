"""Cache-hit dispatch overhead and retrace cost of jitviz.jit, side by side with its peers.

    python benchmarks/bench_dispatch.py

Prints per-call times (median of repeats) for a scalar function: plain Python, a Numba
@njit function (the floor for calling compiled code from Python), jitviz.jit on each backend,
and jax.jit when JAX is installed; then the same for an array function called right after
16 MB were copied (as after any large kernel: the caches hold the copy's data, not the code
and objects a call touches, so each call costs several times its warm time, and that is
what a call in a loop of large kernels pays); then the cost of a retrace (a new shape).
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


def cold_call(fn, arg, calls=300):
    """Median time of `fn(arg)` right after copying 16 MB (caches cold for the call)."""
    big = np.ones(1 << 22, np.float32)
    copy = np.empty_like(big)
    fn(arg)
    times = []
    for _ in range(calls):
        np.copyto(copy, big)
        t0 = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def exp2_of(x):
    return jitviz.numpy.exp2(x)


def cold_rows():
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    out = [("NumPy np.exp2", cold_call(np.exp2, x))]
    try:
        import numba

        @numba.njit
        def loop(v):
            r = np.empty_like(v)
            for i in range(v.shape[0]):
                r[i] = np.exp2(v[i])
            return r
        out.append(("numba.njit loop", cold_call(loop, x)))
    except ImportError:
        pass
    for backend in ("interpret", "cpu"):
        out.append((f"jitviz.jit[{backend}]", cold_call(jit(exp2_of, backend=backend), x)))
    try:
        import jax
        jf = jax.jit(lambda v: jax.numpy.exp2(v))
        out.append(("jax.jit (NumPy argument)",
                    cold_call(lambda v: jf(v).block_until_ready(), x)))
        out.append(("jax.jit (device argument)",
                    cold_call(lambda v: jf(v).block_until_ready(), jax.device_put(x))))
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
    print(f"{'a cache hit after a 16 MB copy (exp2 of 16 f32)':<46} {'median':>12}")
    for name, t in cold_rows():
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
