"""Backends: each compiles an optimized `ClosedJaxpr` into an `Executable`.

One file per backend behind the small interface in `base.py`: `interpret` (NumPy op by op,
the oracle), `cpu` (Numba njit), `cuda` (Numba CUDA).
"""
from __future__ import annotations

from .base import Backend, Executable, Kernel

_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    _BACKENDS[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    if name not in _BACKENDS:
        _load(name)
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of 'cpu', 'cuda', "
                         "'interpret'") from None


def _load(name):
    import importlib
    if name in ("interpret", "cpu", "cuda"):
        importlib.import_module(f"{__name__}.{name}")


__all__ = ["Backend", "Executable", "Kernel", "get_backend", "register_backend"]
