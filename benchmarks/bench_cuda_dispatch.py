"""Where a jitted CUDA call's time goes: one elementwise kernel (SELU), taken apart, and a
program of several kernels (the tutorials' `norm`).

    python benchmarks/bench_cuda_dispatch.py            # needs an NVIDIA GPU
    python benchmarks/bench_cuda_dispatch.py --profile  # and cProfile's top entries of the call
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_cuda_dispatch.py --smoke   # checks the script

Each row is the median of `--repeat` runs of one piece followed by a synchronize, with 1M
float32 values already on the device; the first row is the synchronize alone, so every other
row includes it. A kernel of this size runs in a few microseconds on a current GPU, so what
the rows measure is host-side work: Numba's launch, buffers, and jitviz's own dispatch.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), HERE]

import bench_cuda  # noqa: E402  (its hand-written kernels and timer)
import jitviz  # noqa: E402
from bench_cuda import timeit as median_time  # noqa: E402
from jitviz.backends.cuda.runtime import runtime as cuda_runtime  # noqa: E402
from jitviz.examples import norm, selu  # noqa: E402


def rows(n, repeat, rows_of_x=10000):
    rt = cuda_runtime().require()
    cuda, sync = rt.cuda, rt.synchronize
    bench_cuda.cuda = cuda  # the simulator swaps the kernels' global `cuda`
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xd = cuda.to_device(x)
    out = cuda.device_array_like(xd)
    f = jitviz.jit(selu, backend="cuda")
    compiled = f.lower(xd).compile()
    exe = compiled.executable
    spec = exe.program.kernels()[0]
    k_selu = bench_cuda.baselines()["k_selu"]
    grid = (min(1024, -(-n // 256)),)
    yield "synchronize alone", median_time(lambda: None, sync, repeat)
    yield "numba.cuda.current_context()", median_time(cuda.current_context, sync, repeat)
    yield "hand-written kernel, output given", median_time(
        lambda: k_selu[grid, (256,)](xd, out), sync, repeat)
    launch = exe.launcher(spec)
    print(f"  (jitviz launches contiguous arguments by: {getattr(launch, 'how', '?')})")
    yield "jitviz's kernel by its launcher, output given", median_time(
        lambda: launch(spec.grid, spec.block, [xd], [out]), sync, repeat)
    yield "numba.cuda.device_array(n)", median_time(
        lambda: cuda.device_array(n, np.float32), sync, repeat)
    if rt.pool is not None:
        yield "jitviz's pool: empty(n)", median_time(
            lambda: rt.pool.empty((n,), np.float32), sync, repeat)
    yield "compiled executable (no jit cache lookup)", median_time(
        lambda: compiled.executable(xd), sync, repeat)
    yield "f(x): the jitted call", median_time(lambda: f(xd), sync, repeat)
    X = np.random.default_rng(1).standard_normal((rows_of_x, 10)).astype(np.float32)
    Xd = cuda.to_device(X)
    g = jitviz.jit(norm, backend="cuda")
    yield f"norm(X), X {rows_of_x}x10 ({len(g.lower(Xd).compile().kernels)} kernels)", median_time(
        lambda: g(Xd), sync, repeat)


def profile(n, calls):
    rt = cuda_runtime().require()
    xd = rt.cuda.to_device(np.ones(n, np.float32))
    f = jitviz.jit(selu, backend="cuda")
    f(xd)
    rt.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        f(xd)
        rt.synchronize()
    prof.disable()
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(order).print_stats(35)
        print(f"--- cProfile of {calls} calls of f(x), by {order}")
        print(buf.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (works in the simulator)")
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--profile", action="store_true", help="also cProfile 2000 calls")
    args = ap.parse_args(argv)
    n, repeat, rows_of_x = (256, 3, 100) if args.smoke else (1 << 20, args.repeat, 10000)
    rt = cuda_runtime()
    if rt.mode is None:
        sys.exit(f"no CUDA device: {rt.why}")
    print(f"SELU over {n} float32 values on the device ({rt.mode}); median of {repeat} runs, "
          "each ending in a synchronize")
    for name, t in rows(n, repeat, rows_of_x):
        print(f"  {name:50s} {t * 1e6:8.1f} us")
    if args.profile:
        profile(n, 20 if args.smoke else 2000)


if __name__ == "__main__":
    main()
