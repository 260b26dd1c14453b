"""jitviz's IPython magics: `%%jit`, `%jaxpr`, `%jitbench`, `%jitledger` (`%load_ext jitviz`).

Importing this package does not import IPython; `load_ipython_extension` does. Each magic is a
thin layer over a plain API that works without IPython:

- `%%jit`     -> `jitviz.magics.transform.jit_cell(source, namespace, ...)` and
                 `jitviz.magics.cell_monitor.CellMonitor(*jitted_functions)`
- `%jaxpr`    -> `jitviz.magics.jaxpr.jaxpr_view(f, *args, stage=...)`
- `%jitbench` -> `jitviz.bench.jitbench(f, *args, ...)` (a `BenchResult`)
- `%jitledger` -> `jitviz.ledger()` (a `Ledger`; `--live` keeps it up to date)

Tracing errors raised in cells are shown as `jitviz.magics.errorview.ErrorView`s.
"""
from __future__ import annotations

__all__ = ["load_ipython_extension", "unload_ipython_extension", "CellMonitor", "jit_cell",
           "jaxpr_view", "ErrorView", "JitvizMagics"]

_LAZY = {
    "CellMonitor": ("cell_monitor", "CellMonitor"),
    "jit_cell": ("transform", "jit_cell"),
    "jaxpr_view": ("jaxpr", "jaxpr_view"),
    "ErrorView": ("errorview", "ErrorView"),
    "JitvizMagics": ("magics", "JitvizMagics"),
}


def load_ipython_extension(ip):
    """Register the magics on the shell `ip` (`%load_ext jitviz`)."""
    from .magics import load
    load(ip)


def unload_ipython_extension(ip):
    """Remove the magics, the error display and the monitors (`%unload_ext jitviz`)."""
    from .magics import unload
    unload(ip)


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
