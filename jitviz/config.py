"""Global settings: `jitviz.config.update("enable_x64", True)`, as in JAX."""
from __future__ import annotations

import contextlib
import os
import threading


def _env_bytes(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"${name} must be a whole number of bytes, not {raw!r}") from None


class Config:
    """Named switches. Reading is a plain attribute access, so it is cheap on hot paths."""

    _defaults = {
        # dtypes
        "enable_x64": False,
        # jitviz's one deliberate dtype difference, off by default (JAX's behaviour): when
        # True and x64 is off, NumPy 64-bit inputs and 64-bit dtypes named in the program
        # keep their dtype instead of becoming 32-bit
        "keep_float64": False,
        "warn_x64_conversion": True,
        # diagnostics (issue 3 reads these)
        "warn_side_effects": True,
        "warn_stale_globals": True,
        "warn_retrace": True,
        "warn_unrolled_loops": True,
        "unrolled_loop_threshold": 200,
        "retrace_churn_threshold": 3,
        "jit_cache_size": 64,
        "stale_check_max_elements": 64,
        # cpu: with jit(parallel=None), the default, a kernel of at least this many
        # operations (one per element per operation) runs its outer loop on every core.
        # High on purpose: when another process holds a core, each threaded call can wait
        # a scheduler slice (~4 ms, measured on a busy 2-core machine) for its thread
        "parallel_min_ops": 1 << 23,
        # tracing
        "record_nondeterminism": True,
        # jitted functions run as plain Python, op by op (`jitviz.disable_jit()`)
        "disable_jit": False,
        # the disk kernel cache: least recently used entries are deleted beyond this size
        "kernel_cache_max_bytes": _env_bytes("JITVIZ_CACHE_MAX_BYTES", 256 << 20),
    }

    def __init__(self):
        self._lock = threading.Lock()
        self.__dict__.update(self._defaults)

    def update(self, name: str, value) -> None:
        name = self._jax_name(name)
        if name not in self._defaults:
            known = ", ".join(sorted(self._defaults))
            raise AttributeError(f"jitviz.config has no option {name!r}; known options: {known}")
        with self._lock:
            setattr(self, name, value)

    def read(self, name: str):
        return getattr(self, self._jax_name(name))

    def _jax_name(self, name: str) -> str:
        """JAX's option names (`jax_enable_x64`) name the same switches."""
        if name.startswith("jax_") and name[4:] in self._defaults:
            return name[4:]
        return name

    def reset(self) -> None:
        self.__dict__.update(self._defaults)

    def __repr__(self):
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in sorted(self._defaults))
        return f"Config({body})"


config = Config()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """`jax.disable_jit()`: inside the block, jitted functions run their Python op by op
    (eagerly; `print` prints every call), for debugging."""
    before = config.disable_jit
    config.update("disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("disable_jit", before)
