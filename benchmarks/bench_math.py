"""Elementary functions on jitviz's CPU backend against NumPy's loops and jax.jit: one
function per jitted kernel, 1M values of float32 and of float64.

    python benchmarks/bench_math.py                    # the full table
    python benchmarks/bench_math.py --quick            # fewer, shorter rounds
    python benchmarks/bench_math.py --only tanh,log    # some functions
    # an AVX2-only target (the CPU name alone keeps the host's AVX-512 features), NumPy too:
    NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=-avx512f \
        NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" python benchmarks/bench_math.py

Each function is timed through `jitviz.jit` (dispatch included), NumPy's ufunc with a
preallocated output (its SIMD loop alone, no allocation) and jax.jit when installed, in
interleaved rounds; the best round is reported. The functions and their inputs are
math_functions.py's.
`ok`: jitviz's result is within 4 ulp of NumPy's float64 result (rounded to the dtype)
wherever both are finite (a sanity check; tests/test_vecmath.py measures accuracy against
exact references).

`--clock thread` times with the calling thread's CPU time instead of the wall clock: on a
machine shared with other work (other processes take the cores in turns) the wall clock counts
the time this process waits for a core, the thread's CPU time does not. That clock cannot see
other threads, so jitviz's kernels are then compiled with `parallel=False` (by default a
costly one such as `pow` runs on every core at 1M values) and run on the calling thread, as
NumPy's loops do: the ratio is single thread against single thread. jax.jit runs on XLA's
threads, so its column is left out then.

Nothing here is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jitviz  # noqa: E402
from _timing import best_times, jax, jjnp, print_against_peers  # noqa: E402
from math_functions import BINARY, UNARY, inputs, selected  # noqa: E402


def best_thread_times(fns: dict, args, rounds: int, budget: float, max_calls: int) -> dict:
    """_timing.best_times with the calling thread's CPU time as the clock (see the module's
    docstring): interleaved rounds, order rotated, the best per-call time of each."""
    per_call = {}
    for name, fn in fns.items():  # warm up, and size the inner loop
        fn(*args)
        t = time.thread_time()
        fn(*args)
        per_call[name] = max(time.thread_time() - t, 1e-6)
    best = {name: float("inf") for name in fns}
    names = list(fns)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            n = max(1, min(max_calls, int(budget / per_call[name])))
            t = time.thread_time()
            for _ in range(n):
                fns[name](*args)
            best[name] = min(best[name], (time.thread_time() - t) / n)
    return best


def _ulps_ok(got, want):
    got, want = np.asarray(got), np.asarray(want)
    both = np.isfinite(got) & np.isfinite(want)
    ulp = np.spacing(np.abs(want[both]).astype(want.dtype))
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got[both].astype(np.float64) - want[both]) <= 4 * ulp))


def run_table(names, dtypes, rounds, budget, n=1_000_000, clock="wall"):
    rng = np.random.default_rng(0)
    rows = []
    for name in names:
        fn, npf, jaxname, _ = (BINARY if name in BINARY else UNARY)[name]
        for dt in dtypes:
            args = inputs(name, dt, n, rng)
            out = np.empty(n, dt)
            # the thread clock sees the calling thread only: one thread, as NumPy's loop
            jf = jitviz.jit(fn, parallel=False) if clock == "thread" else jitviz.jit(fn)
            fns = {"jitviz": jf, "numpy": lambda *a, f=npf, o=out: f(*a, out=o)}
            if jax is not None and jaxname is not None and clock == "wall":
                jaxf = jax.jit(getattr(jjnp, jaxname) if isinstance(jaxname, str)
                               else jaxname(jjnp))
                jargs = tuple(jax.numpy.asarray(a) for a in args)
                fns["jax"] = lambda *a, f=jaxf, j=jargs: f(*j)
            timer = best_times if clock == "wall" else best_thread_times
            t = timer(fns, args, rounds, budget, max_calls=200)
            # float32 checked against NumPy's float64 result rounded (NumPy's own float32
            # loops are a few ulp off themselves)
            ref = npf(*(a.astype(np.float64) for a in args), out=np.empty(n)).astype(dt)
            ok = _ulps_ok(jf(*args), ref)
            rows.append((name, np.dtype(dt).name, t, ok))
    return rows


def print_table(rows):
    print_against_peers(["function", "dtype"], [((name, dt), t, ok) for name, dt, t, ok in rows])


def main():
    # each row jits its own function on purpose (one per row): not a retrace bug
    warnings.filterwarnings("ignore", message=".*traced and compiled")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    p.add_argument("--only", default="", help="comma-separated function names")
    p.add_argument("--dtype", default="float32,float64", help="float32, float64 or both")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds (best kept)")
    p.add_argument("--clock", choices=("wall", "thread"), default="wall",
                   help="wall clock, or the calling thread's CPU time (a shared machine)")
    args = p.parse_args()
    # float64 rows need 64-bit types in both libraries (without x64 both make them float32);
    # float32 rows stay float32 (their arguments are float32 arrays)
    jitviz.config.update("enable_x64", True)
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    names = selected(args.only)
    rounds, budget = (3, 0.02) if args.quick else (args.rounds, 0.05)
    cpu = os.environ.get("NUMBA_CPU_NAME", "host")
    clock_text = "CPU time of the calling thread; jitviz with parallel=False"
    print(f"NumPy {np.__version__}; jax {jax.__version__ if jax else 'not installed'}; "
          f"Numba target CPU: {cpu}; 1M values; best of {rounds} interleaved rounds "
          f"({'wall clock' if args.clock == 'wall' else clock_text}); "
          f"NumPy/jitviz > 1 means jitviz is faster\n")
    print_table(run_table(names, args.dtype.split(","), rounds, budget, clock=args.clock))


if __name__ == "__main__":
    main()
