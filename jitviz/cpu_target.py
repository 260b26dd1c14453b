"""The CPU that Numba compiles jitviz's kernels for: the host, with 512-bit vectors on a CPU
that has AVX-512.

LLVM tunes Intel's AVX-512 CPUs (Skylake-SP to Sapphire Rapids) to prefer 256-bit vectors
(its `prefer-256-bit` tuning, against the clock drop heavy 512-bit code once caused on
Skylake-SP), so its loop vectorizer gave jitviz's kernels 8 float32 lanes where the CPU has 16
and split the vecmath tables' 32-entry permutes into 8-entry ones. On a Xeon with AMX that
LLVM names `rocketlake`, one thread, 1M float32 values: `jnp.tanh` 0.62 ms with the tuning and
0.33 ms without (NumPy 0.31), `jnp.cbrt` 0.65 and 0.36 (0.35), `jnp.tan` 0.68 and 0.41
(0.43). AMD's Zen 4 has no such tuning: removing it changes nothing there.

`prefer_512_bit_vectors()` turns the tuning off for every Numba compilation in the process
(Numba has one target machine per process), jitviz's and the user's, by setting Numba's
`CPU_FEATURES` to the host's features plus `-prefer-256-bit`. It runs when jitviz is
imported and does nothing where NUMBA_CPU_NAME or NUMBA_CPU_FEATURES is set (the user chose
the target), where JITVIZ_PREFER_256_BIT=1 is set, without AVX-512F, or once Numba has
made its target machine (at the first `njit` decoration of the process: then the
kernels keep 256-bit vectors). jitviz calls it first thing on import.
"""
from __future__ import annotations

import os

# what turns it off
KEEP_ENV = "JITVIZ_PREFER_256_BIT"


def prefer_512_bit_vectors() -> bool:
    """Turn LLVM's preference for 256-bit vectors off where the host has AVX-512F (see the
    module's docstring); True where it did."""
    from numba.core import config, registry
    if config.CPU_NAME is not None or config.CPU_FEATURES is not None:
        return False
    if os.environ.get(KEEP_ENV) == "1":
        return False
    # Numba's target machine exists already, with its features: its CPU context is a
    # cached property of the CPU target (a private name; tests/test_vector_isa.py
    # `-k 512_bit` fails if a Numba release renames it, as the decoration case would change)
    if "_toplevel_target_context" in vars(registry.cpu_target):
        return False
    import llvmlite.binding as ll
    features = ll.get_host_cpu_features()
    if not features.get("avx512f"):
        return False
    config.CPU_FEATURES = features.flatten() + ",-prefer-256-bit"
    return True
