"""Elementary functions on jitviz's CUDA backend against CuPy, jax.jit and the GPU's copy
bandwidth: one function per jitted kernel, float32 and float64, inputs on the device.

    python benchmarks/bench_cuda_math.py                   # needs an NVIDIA GPU
    python benchmarks/bench_cuda_math.py --only tanh,pow --dtype float32 --n 16777216
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_cuda_math.py --smoke   # checks the script
                                                                          # in the simulator

jitviz's CUDA kernels call libdevice (NVIDIA's math library, through Numba's `math.*`), not the
CPU's vecmath: this table is what says whether that choice holds, function by function. An
elementwise function of large arrays is bound by memory on a GPU unless its arithmetic is
long (float64 on a chip with few float64 units); the `copy` column is a device-to-device copy
of as many bytes as the kernel reads and writes (the least any elementwise kernel takes) and
`GB/s` is those bytes over jitviz's time.

Timing: each implementation is called `--calls` times back to back and then synchronized, the
per-call time of the best of `--rounds` such rounds is reported (launches overlap the previous
kernels, as in a user's loop, so Python dispatch hides behind kernels longer than it).
`ulp`: jitviz's largest error over the first 2^20 results against NumPy's float64 result
rounded to the dtype (tests/test_vecmath.py measures accuracy over the whole range).

Nothing here is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jitviz  # noqa: E402
from jitviz.backends.cuda.runtime import runtime as cuda_runtime  # noqa: E402
from math_functions import BINARY, UNARY, inputs, selected  # noqa: E402

# CuPy's name where it differs from NumPy's (its ufuncs follow NumPy's names)
CUPY = {"logistic": lambda cp: (lambda x: 1 / (1 + cp.exp(-x))),
        "pow_y2.5": lambda cp: (lambda x: x ** 2.5)}


def _peer_fn(module, name, jax_name):
    """The peer's function of one row: `module.<name>` or the table's form of it."""
    if callable(jax_name):
        return jax_name(module)
    return getattr(module, jax_name if isinstance(jax_name, str) else name)


def time_calls(fn, args, sync, calls, rounds):
    """Best per-call time over `rounds` rounds of `calls` back-to-back calls and one sync."""
    out = fn(*args)
    sync(out)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        sync(out)
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def max_ulp(got, want, dtype):
    """Largest |got - want| in units of the dtype's spacing at `want` (finite values)."""
    both = np.isfinite(got) & np.isfinite(want)
    w = want[both].astype(dtype)
    ulp = np.maximum(np.spacing(np.abs(w)), np.finfo(dtype).smallest_subnormal).astype(float)
    if not w.size:
        return 0.0
    return float(np.max(np.abs(got[both].astype(float) - want[both]) / ulp))


def load_peers(gpu):
    """CuPy and JAX on the GPU, where installed (None otherwise)."""
    cp = jax = None
    if not gpu:
        return cp, jax
    try:
        import cupy as cp
        cp.zeros(1)
    except Exception:
        cp = None
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        if not any(d.platform == "gpu" for d in jax.devices()):
            jax = None
    except Exception:
        jax = None
    return cp, jax


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26, help="values per array")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--dtype", default="float32,float64")
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (works in the simulator)")
    args = ap.parse_args(argv)
    rt = cuda_runtime()
    if rt.mode is None:
        print(f"no CUDA device: {rt.why}")
        return 0
    if rt.mode == "sim" and not args.smoke:
        print("the simulator measures nothing: pass --smoke to check the script")
        return 0
    cuda = rt.cuda
    n = 1000 if args.smoke else args.n
    calls, rounds = (1, 1) if args.smoke else (args.calls, args.rounds)
    gpu = rt.mode == "gpu"
    cp, jax = load_peers(gpu)
    names = selected(args.only)
    dtypes = [np.dtype(d) for d in args.dtype.split(",")]
    if gpu:
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        print(f"device: {name}, cc {dev.compute_capability}; {n} values; per call, best of "
              f"{rounds} rounds of {calls} calls; CuPy {cp.__version__ if cp else 'n/a'}, "
              f"JAX {jax.__version__ if jax else 'n/a'}; jitviz from {os.path.dirname(jitviz.__file__)}")

    def sync_numba(out):
        cuda.synchronize()

    warnings.filterwarnings("ignore", message=".*traced and compiled")  # one jit per row
    jitviz.config.update("enable_x64", True)  # float64 rows in float64, as JAX's with x64
    rng = np.random.default_rng(0)
    copy_times = {}
    print_header()
    for name in names:
        fn, npf, jax_name, _ = (BINARY if name in BINARY else UNARY)[name]
        for dt in dtypes:
            host = inputs(name, dt, n, rng)
            dev_args = [cuda.to_device(a) for a in host]
            jf = jitviz.jit(fn, backend="cuda")
            t0 = time.perf_counter()
            out = jf(*dev_args)
            cuda.synchronize()
            first = time.perf_counter() - t0
            t = {"jitviz": time_calls(jf, dev_args, sync_numba, calls, rounds)}
            key = (dt, len(host))
            if key not in copy_times:  # the same bytes for every row of this dtype and arity
                src = cuda.device_array(n * (len(host) + 1) // 2, dt)
                dst = cuda.device_array_like(src)
                copy_times[key] = time_calls(lambda d=dst, s=src: d.copy_to_device(s), (),
                                             sync_numba, calls, rounds)
                del src, dst
            t["copy"] = copy_times[key]
            if cp is not None:
                cargs = [cp.asarray(a) for a in dev_args]  # the same device memory
                cfn = CUPY[name](cp) if name in CUPY else getattr(cp, npf.__name__)
                t["cupy"] = time_calls(cfn, cargs, lambda o: cp.cuda.Device().synchronize(),
                                       calls, rounds)
                del cargs
            if jax is not None and jax_name is not None:
                jargs = [jax.device_put(a) for a in host]
                jfn = jax.jit(_peer_fn(jax.numpy, name, jax_name))
                t["jax"] = time_calls(jfn, jargs, jax.block_until_ready, calls, rounds)
                del jargs
            m = min(n, 1 << 20)
            got = np.asarray(out)[:m]
            with np.errstate(all="ignore"):
                want = npf(*(a[:m].astype(np.float64) for a in host), out=np.empty(m))
            moved = sum(a.nbytes for a in host) + n * dt.itemsize
            print_row(name, dt.name, first, t, moved / t["jitviz"] / 1e9, max_ulp(got, want, dt))
            del dev_args, out
    print("(CuPy/jitviz, jax/jitviz > 1: jitviz is faster; copy: a device-to-device copy of "
          "the bytes the kernel moves, the memory bound)")
    return 0


def _fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


COLUMNS = [("function", 9), ("dtype", 8), ("1st call", 10), ("jitviz cuda", 12), ("GB/s", 6),
           ("copy", 10), ("CuPy", 10), ("jax.jit", 10), ("CuPy/jitviz", 12),
           ("jax/jitviz", 11), ("ulp", 6)]


def print_header():
    print("  ".join(h.ljust(w) for h, w in COLUMNS))
    print("  ".join("-" * w for _, w in COLUMNS))


def print_row(name, dt, first, t, gbs, ulp):
    """One row, printed as soon as it is measured (a run cut short keeps its rows)."""
    j = t["jitviz"]
    ratio = (lambda k: f"{t[k] / j:.2f}x" if k in t else "-")
    cells = [name, dt, _fmt(first), _fmt(j), f"{gbs:.0f}", _fmt(t["copy"]), _fmt(t.get("cupy")),
             _fmt(t.get("jax")), ratio("cupy"), ratio("jax"), f"{ulp:.2f}"]
    print("  ".join(c.ljust(w) for c, (_, w) in zip(cells, COLUMNS)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
