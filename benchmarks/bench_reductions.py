"""Reductions on jitviz's CPU backend against NumPy and jax.jit: sum/max/min over all
elements, over the innermost axis (axis=-1) and over the outermost (axis=0); then sums and
maxima of elementary functions (`FUNCTIONS`).

    python benchmarks/bench_reductions.py            # the full table
    python benchmarks/bench_reductions.py --quick    # fewer repetitions

Each reduction is timed through `jitviz.jit` (the user's path: dispatch, argument checks
and all), after a warm-up call. Implementations are timed in interleaved rounds and the
best round is reported (it filters out noise from other processes). `ok` compares jitviz's
result with NumPy's: bit for bit for max/min (they are exact in any order), within a
tolerance for sum (NumPy's pairwise summation and ours group the additions differently).

Nothing here is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jitviz  # noqa: E402
from _timing import best_times, jax, jjnp, print_against_peers  # noqa: E402
import jitviz.numpy as jnp  # noqa: E402


OPS = ("sum", "max", "min")


def arrays():
    """(size label, array): a long vector, and matrices with rows of 1000, 100, 4096, 37."""
    rng = np.random.default_rng(0)
    return [
        ("10M f32", rng.standard_normal(10_000_000).astype(np.float32)),
        ("1000x1000 f32", rng.standard_normal((1000, 1000)).astype(np.float32)),
        ("10000x100 f32", rng.standard_normal((10000, 100)).astype(np.float32)),
        ("256x4096 f32", rng.standard_normal((256, 4096)).astype(np.float32)),
        ("1000x1000 f64", rng.standard_normal((1000, 1000))),
        ("100x37 f64", rng.standard_normal((100, 37))),
    ]


def same(got, want, op) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if op == "sum":
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        return bool(np.allclose(got, want, rtol=1e-4, atol=1e-5 * scale))
    # max/min: bit-identical (NaNs, and -0.0 vs 0.0, included)
    return got.tobytes() == want.tobytes()


def run_table(rounds, budget):
    rows = []
    for size, x in arrays():
        axes = [None] if x.ndim == 1 else [None, -1, 0]
        jx = jax.numpy.asarray(x) if jax is not None else None
        for op in OPS:
            for axis in axes:
                jf = jitviz.jit(lambda a, op=op, axis=axis: getattr(jnp, op)(a, axis=axis))
                nf = lambda a, op=op, axis=axis: getattr(np, op)(a, axis=axis)  # noqa: E731
                fns = {"jitviz": jf, "numpy": nf}
                if jax is not None:
                    jaxf = jax.jit(lambda a, op=op, axis=axis: getattr(jjnp, op)(a, axis=axis))
                    fns["jax"] = lambda a, f=jaxf, j=jx: f(j)
                t = best_times(fns, (x,), rounds, budget, max_calls=2000)
                ok = same(jf(x), nf(x), op)
                label = f"{op} axis={'all' if axis is None else axis}"
                rows.append((label, size, t, ok))
    return rows


def _logsumexp(m, a):
    top = m.max(a, axis=-1, keepdims=True)
    return m.log(m.sum(m.exp(a - top), axis=-1)) + top[:, 0]


# reductions of elementary functions, written once for NumPy, jitviz.numpy and jax.numpy:
# the kernels test each block's arguments first and run its fast variants (sin without its
# large-argument table; exp without its clamp, on AVX2) unless a value needs the full function
FUNCTIONS = {
    "sum(sin(x))": lambda m, a: m.sum(m.sin(a)),
    "sum(sin(x)) axis=-1": lambda m, a: m.sum(m.sin(a), axis=-1),
    "sum(sin(x)) axis=0": lambda m, a: m.sum(m.sin(a), axis=0),
    "sum(sin(3 log(|x|+1)))": lambda m, a: m.sum(m.sin(m.log(m.abs(a) + 1) * 3)),
    "max(exp(x)) axis=0": lambda m, a: m.max(m.exp(a), axis=0),
    "logsumexp axis=-1": _logsumexp,
}


def function_table(rounds, budget, shape=(1024, 1024)):
    x = np.random.default_rng(1).uniform(-10, 10, shape).astype(np.float32)
    size = "x".join(map(str, shape)) + " f32"
    jx = jax.numpy.asarray(x) if jax is not None else None
    rows = []
    for label, f in FUNCTIONS.items():
        jf = jitviz.jit(lambda a, f=f: f(jnp, a))
        fns = {"jitviz": jf, "numpy": lambda a, f=f: f(np, a)}
        if jax is not None:
            fns["jax"] = lambda a, g=jax.jit(lambda a, f=f: f(jjnp, a)): g(jx)
        t = best_times(fns, (x,), rounds, budget, max_calls=500)
        want = np.asarray(f(np, x.astype(np.float64)))
        got = np.asarray(jf(x), np.float64)
        ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max())))
        rows.append((label, size, t, ok))
    return rows


def print_table(rows):
    print_against_peers(["reduction", "size"],
                        [((label, size), t, ok) for label, size, t, ok in rows])


def main():
    # each row jits its own lambda on purpose (one reduction per row): not a retrace bug
    warnings.filterwarnings("ignore", message=".*traced and compiled")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    p.add_argument("--functions-only", action="store_true",
                   help="only the second table (reductions of elementary functions)")
    p.add_argument("--shape", default="1024x1024",
                   help="the second table's array, rows x columns (default 1024x1024)")
    args = p.parse_args()
    shape = tuple(int(n) for n in args.shape.split("x"))
    rounds, budget = (3, 0.02) if args.quick else (7, 0.05)
    # the float64 rows compute in float64 on all three (without x64 jitviz and JAX would
    # compute them in float32, and `ok` would compare float32 results with NumPy's float64)
    jitviz.config.update("enable_x64", True)
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    print(f"NumPy {np.__version__}; jax {jax.__version__ if jax else 'not installed'}; "
          f"best of {rounds} interleaved rounds; NumPy/jitviz > 1 means jitviz is faster\n")
    if not args.functions_only:
        print_table(run_table(rounds, budget))
    print("\nreductions of elementary functions (float32; `ok`: within 1e-4 of NumPy's float64)")
    print_table(function_table(rounds, budget, shape))


if __name__ == "__main__":
    main()
