"""Backends: each compiles an optimized `ClosedJaxpr` into an `Executable`.

One file per backend behind the small interface in `base.py`: `interpret` (NumPy op by op,
the oracle), `cpu` (Numba njit), `cuda` (Numba CUDA). The two Numba backends share the Python
source text both generate (`numba_text.py`) and the expression rules and reduction monoids
both emit (`numba_expr.py`, each backend's `rules.py` overriding what it writes its own way).
"""
from __future__ import annotations

from .base import Backend, Executable, Kernel

#: The built-in backends, each a module of this package imported on first use.
BACKEND_NAMES = ("cpu", "cuda", "interpret")

_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    _BACKENDS[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    if name not in _BACKENDS:
        check_backend_name(name)
        _load(name)
    return _BACKENDS[name]


def check_backend_name(name: str) -> None:
    """Raise ValueError unless `name` is a built-in or a registered backend (without
    importing it: `jit(f, backend="cuda")` is fine on a machine without CUDA)."""
    if name not in BACKEND_NAMES and name not in _BACKENDS:
        choices = ", ".join(repr(n) for n in BACKEND_NAMES)
        raise ValueError(f"unknown backend {name!r}; choose one of {choices}")


def _load(name):
    import importlib
    importlib.import_module(f"{__name__}.{name}")


__all__ = ["BACKEND_NAMES", "Backend", "Executable", "Kernel", "check_backend_name",
           "get_backend", "register_backend"]
