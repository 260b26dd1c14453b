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


# JAX's switches between two of its own implementations of one behaviour (`jax_remat3`, the
# new scan / remat / custom_vjp machinery; `jax_use_shardy_partitioner`), with JAX's defaults:
# jitviz has one implementation of each, so they are recorded and change nothing. Switches
# that change values (`jax_threefry_partitionable`, `jax_softmax_custom_jvp`) are not here.
_JAX_IMPLEMENTATION_SWITCHES = {"scan3": False, "remat3": False, "custom_vjp3": False,
                                "use_shardy_partitioner": True}


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
        # FloatingPointError at the first NaN / infinity made (jitviz/debug_nans.py)
        "debug_nans": False,
        "debug_infs": False,
        # JAX's platform switch: jitviz picks the backend per function (jit(backend=...));
        # the platform is the CPU's unless a function asks for "cuda"
        "platform_name": "cpu",
        # JAX's matmul precision: on the CPU (JAX's and jitviz's) float32 products are
        # computed in float32 whatever it says; kept for code that sets it
        "default_matmul_precision": None,
        # a CacheMissWarning at every trace, with its reason (JAX's jax_explain_cache_misses)
        "explain_cache_misses": False,
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
        **_JAX_IMPLEMENTATION_SWITCHES,
    }

    def __init__(self):
        self._lock = threading.Lock()
        self.__dict__.update(self._defaults)

    def update(self, name: str, value) -> None:
        name = self._jax_name(name)
        if name not in self._defaults:
            known = ", ".join(sorted(self._defaults))
            raise AttributeError(f"jitviz.config has no option {name!r}; known options: {known}")
        check = _CHECKS.get(name)
        if check is not None:
            check(value)
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


def _check_platform(value):
    if value not in ("cpu", None):
        raise ValueError(f"jitviz runs on the CPU unless a function asks for CUDA: "
                         f"jax_platform_name={value!r} is not a switch here; use "
                         f"jitviz.jit(f, backend='cuda') for the functions to run on the GPU")


_MATMUL_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32",
                      "float32", "ANY_F8_ANY_F8_F32", "BF16_BF16_F32", "TF32_TF32_F32",
                      "F32_F32_F32")


def _check_precision(value):
    if value not in _MATMUL_PRECISIONS and not hasattr(value, "name"):
        raise ValueError(f"jax_default_matmul_precision must be one of "
                         f"{_MATMUL_PRECISIONS[1:]}, got {value!r}")


def _implementation_switch_check(name):
    def check(value):
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise ValueError(f"jax_{name} selects one of JAX's own implementations and takes "
                             f"True or False, got {value!r}")
    return check


_CHECKS = {"platform_name": _check_platform, "default_matmul_precision": _check_precision,
           **{name: _implementation_switch_check(name) for name in _JAX_IMPLEMENTATION_SWITCHES}}

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
