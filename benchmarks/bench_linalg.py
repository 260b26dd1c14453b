"""jnp.linalg, jax.scipy.linalg and jnp.fft on jitviz's CPU backend against NumPy and jax.jit.

    python benchmarks/bench_linalg.py            # the full table
    python benchmarks/bench_linalg.py --quick    # fewer repetitions

jitviz's decompositions run NumPy's LAPACK and pocketfft from the compiled driver, so the
NumPy column is the floor; what the table shows is jitviz's overhead over it (dispatch,
argument checks, the composed steps around the LAPACK calls: solve is an LU, two triangular
solves and a gather; the LU and the substitutions are NumPy loops over the rows, vectorized
over the batch and the columns, since NumPy's LAPACK has no getrf/trsm) and how far from
XLA's. Each call goes through `jitviz.jit`. `ok` compares with NumPy's result. Nothing here
is asserted.
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


def _spd(rng, batch, n):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def cases():
    """(label, size label, jnp-style function of a module, NumPy reference, arguments)."""
    rng = np.random.default_rng(0)
    rows = []
    for batch, n in [((), 64), ((), 512), ((64,), 16)]:
        size = f"{'x'.join(map(str, batch + (n, n)))} f32"
        a = _spd(rng, batch, n)
        b = rng.standard_normal(batch + (n, 8)).astype(np.float32)
        rows += [
            ("solve", size, lambda m, a, b: m.linalg.solve(a, b), np.linalg.solve, (a, b)),
            ("inv", size, lambda m, a: m.linalg.inv(a), np.linalg.inv, (a,)),
            ("slogdet", size, lambda m, a: m.linalg.slogdet(a)[1],
             lambda a: np.linalg.slogdet(a)[1], (a,)),
            ("cholesky", size, lambda m, a: m.linalg.cholesky(a), np.linalg.cholesky, (a,)),
            ("eigh", size, lambda m, a: m.linalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0],
             (a,)),
            ("svd values", size, lambda m, a: m.linalg.svd(a, compute_uv=False),
             lambda a: np.linalg.svd(a, compute_uv=False), (a,)),
        ]
    for shape in [(4096,), (256, 1024)]:
        x = rng.standard_normal(shape).astype(np.float32)
        size = f"{'x'.join(map(str, shape))} f32"
        rows += [("rfft", size, lambda m, x: m.fft.rfft(x),
                  lambda x: np.fft.rfft(x).astype(np.complex64), (x,)),
                 ("fft2" if len(shape) == 2 else "fft", size,
                  (lambda m, x: m.fft.fft2(x)) if len(shape) == 2 else
                  (lambda m, x: m.fft.fft(x)),
                  (lambda x: np.fft.fft2(x).astype(np.complex64)) if len(shape) == 2 else
                  (lambda x: np.fft.fft(x).astype(np.complex64)), (x,))]
    return rows


def run_table(rounds, budget):
    rows = []
    for label, size, f, ref, args in cases():
        jf = jitviz.jit(lambda *xs, f=f: f(jnp, *xs))
        fns = {"jitviz": jf, "numpy": ref}
        if jax is not None:
            jaxf = jax.jit(lambda *xs, f=f: f(jjnp, *xs))
            jargs = [jax.numpy.asarray(x) for x in args]
            fns["jax"] = lambda *_, g=jaxf, j=jargs: g(*j)
        t = best_times(fns, args, rounds, budget, max_calls=200)
        got, want = np.asarray(jf(*args)), np.asarray(ref(*args))
        scale = 1 + float(np.abs(want).max())
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-3 * scale)
        rows.append(((label, size), t, ok))
    return rows


def main():
    warnings.filterwarnings("ignore", message=".*traced and compiled")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    args = p.parse_args()
    rounds, budget = (3, 0.02) if args.quick else (7, 0.05)
    print(f"NumPy {np.__version__}; jax {jax.__version__ if jax else 'not installed'}; "
          f"best of {rounds} interleaved rounds; NumPy/jitviz > 1 means jitviz is faster\n")
    print_against_peers(["function", "size"], run_table(rounds, budget))


if __name__ == "__main__":
    main()
