"""jitviz's composed lax windows (conv_general_dilated as im2col + one dot_general, max pooling
as strided slices folded with max) and associative_scan, on the CPU backend, against jax.jit.

    python benchmarks/bench_windows.py            # a CNN-sized table (about a minute)
    python benchmarks/bench_windows.py --quick    # fewer repetitions

Times are best-of interleaved rounds through `jitviz.jit` after a warm-up call (compile
excluded). Nothing here is asserted; the README quotes the output.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_times, fmt_time, jax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jitviz  # noqa: E402
import jitviz.numpy as jnp  # noqa: E402
from jitviz import lax  # noqa: E402


def workloads():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 32, 32, 16)).astype(np.float32)
    w = rng.normal(size=(3, 3, 16, 32)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    seq = rng.normal(size=(4096, 64)).astype(np.float32)

    def conv(lib):
        return lambda a, k: lib.conv_general_dilated(a, k, (1, 1), "SAME", dimension_numbers=dn)

    def conv_grad(lib, np_):
        return lambda a, k: (lib.conv_general_dilated(a, k, (1, 1), "SAME",
                                                      dimension_numbers=dn) ** 2).sum()

    def pool(lib):
        return lambda a: lib.reduce_window(a, -np.inf, lib.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                           "SAME")

    def scan(lib, np_):
        return lambda s: lib.associative_scan(np_.add, s)
    yield "conv 3x3 16->32, 16x32x32", (x, w), conv(lax), \
        (conv(jax.lax) if jax else None)
    # the bound of the im2col method: NumPy's BLAS product of the patch matrix and the kernel
    cols = rng.normal(size=(16 * 32 * 32, 9 * 16)).astype(np.float32)
    yield "  its matrix product alone (NumPy)", (cols, w.reshape(144, 32)), None, None
    yield "grad of conv (w.r.t. input)", (x, w), jitviz.grad(conv_grad(lax, jnp)), \
        (jax.grad(conv_grad(jax.lax, jax.numpy)) if jax else None)
    yield "max pool 3x3 stride 2", (x,), pool(lax), (pool(jax.lax) if jax else None)
    yield "associative_scan add, 4096x64", (seq,), scan(lax, jnp), \
        (scan(jax.lax, jax.numpy) if jax else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    rounds, budget = (3, 0.2) if a.quick else (7, 0.5)
    print(f"{'workload':34s} {'jitviz cpu':>12s} {'jax.jit':>12s}")
    for name, args, ours, theirs in workloads():
        if ours is None:  # a NumPy reference line
            t = best_times({"numpy": np.matmul}, args, rounds, budget, max_calls=50)
            print(f"{name:34s} {fmt_time(t['numpy']):>12s}")
            continue
        fns = {"jitviz": jitviz.jit(ours)}
        if theirs is not None:
            fns["jax"] = jax.jit(theirs)
        t = best_times(fns, args, rounds, budget, max_calls=50)
        print(f"{name:34s} {fmt_time(t['jitviz']):>12s} "
              f"{fmt_time(t['jax']) if 'jax' in t else '-':>12s}")


if __name__ == "__main__":
    main()
