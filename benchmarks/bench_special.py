"""The special functions (jitviz/lax/erf.py, special.py) on jitviz's CPU backend against
jax.jit: one function per jitted kernel, 1M float32 values (or pairs) in a typical domain.
erf, erfc and erf_inv are vecmath's vectorized functions (vecmath_erf.py, float32 arithmetic
for float32), and so are lgamma and digamma (vecmath_gamma.py, float64 arithmetic; a block
of 128 values holding an x <= 0 runs the full function, digamma's reflection and lgamma's
scalar helper, as the `±` rows show); the others:

    python benchmarks/bench_special.py            # the table
    python benchmarks/bench_special.py --quick    # fewer, shorter rounds

jitviz's helpers compute each element in float64 with a data-dependent number of series or
continued-fraction terms; XLA's are float32 with fixed iteration counts. `agree`: the largest
difference between the two relative to max(|JAX's value|, 1) (relative near the functions'
zeros would say nothing; JAX's float32 results are themselves a few ulps, up to ~1e-4 for
igamma/betainc, from the exact ones).

Nothing here is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jitviz  # noqa: E402
from _timing import best_times, fmt_ratio, fmt_time, jax  # noqa: E402
from jitviz import lax  # noqa: E402

N = 1_000_000
rng = np.random.default_rng(0)
POS = rng.uniform(0.1, 20.0, N).astype(np.float32)
POS2 = rng.uniform(0.1, 20.0, N).astype(np.float32)
UNIT = rng.uniform(0.01, 0.99, N).astype(np.float32)
REAL = rng.uniform(-20.0, 20.0, N).astype(np.float32)

SIGNED_UNIT = rng.uniform(-0.999, 0.999, N).astype(np.float32)
NORMAL = (rng.standard_normal(N) * 2).astype(np.float32)

# name -> (argument arrays, jax.lax function name)
CASES = {
    "erf": ((NORMAL,), "erf"),
    "erfc": ((NORMAL,), "erfc"),
    "erf_inv": ((SIGNED_UNIT,), "erf_inv"),
    "lgamma": ((POS,), "lgamma"),
    "digamma": ((POS,), "digamma"),
    # half the values negative: nearly every block of 128 has one, so runs the full function
    "lgamma ±": ((REAL,), "lgamma"),
    "digamma ±": ((REAL,), "digamma"),
    "bessel_i0e": ((REAL,), "bessel_i0e"),
    "igamma": ((POS, POS2), "igamma"),
    "betainc": ((POS, POS2, UNIT), "betainc"),
    "zeta": ((POS + 1.5, POS2), "zeta"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    rounds, budget = (2, 0.2) if opts.quick else (5, 0.5)
    print(f"{'function':12} {'jitviz cpu':>12} {'jax.jit':>12} {'jax/jitviz':>11} {'agree':>9}")
    for name, (args, jax_name) in CASES.items():
        fns = {"jitviz": jitviz.jit(getattr(lax, jax_name))}
        if jax is not None:
            fns["jax"] = jax.jit(getattr(jax.lax, jax_name))
        t = best_times(fns, args, rounds, budget, max_calls=20)
        agree = "n/a"
        if jax is not None:
            ours = np.asarray(fns["jitviz"](*args), np.float64)
            theirs = np.asarray(fns["jax"](*args), np.float64)
            scale = np.maximum(np.abs(theirs), 1.0)
            agree = f"{np.max(np.abs(ours - theirs) / scale):.1e}"
        print(f"{name:12} {fmt_time(t['jitviz']):>12} {fmt_time(t.get('jax')):>12} "
              f"{fmt_ratio(t.get('jax'), t['jitviz']):>11} {agree:>9}")


if __name__ == "__main__":
    main()
