"""`jitviz.debug.print`: a print that is part of the program, so it runs on every call
(a plain `print` inside a jitted function runs once, while tracing)."""
from __future__ import annotations

import sys

import numpy as np

from .core.registry import primitive


def _debug_print_rule(*avals, fmt, names):
    return []


def _debug_print_impl(*values, fmt, names):
    emit(fmt, names, values)
    return []


def emit(fmt, names, values):
    """Format and write one debug print (shared by every backend's lowering)."""
    n_pos = len(values) - len(names)
    pos = [_show(v) for v in values[:n_pos]]
    kw = {k: _show(v) for k, v in zip(names, values[n_pos:])}
    sys.stdout.write(fmt.format(*pos, **kw) + "\n")


def _show(v):
    arr = np.asarray(v)
    return arr.item() if arr.ndim == 0 else arr


def _pp(params):
    return [("fmt", repr(params["fmt"]))] + (
        [("names", params["names"])] if params["names"] else [])


debug_print_p = primitive("debug_print", abstract_eval=_debug_print_rule,
                          impl=_debug_print_impl, multiple_results=True, pp_params=_pp,
                          kind="other", effectful=True)


def print(fmt: str, *args, **kwargs) -> None:  # noqa: A001 (mirrors jax.debug.print)
    """Print `fmt.format(*args, **kwargs)` on every call, with the runtime values.

        jitviz.debug.print("x = {}", x)
    """
    if not isinstance(fmt, str):
        raise TypeError(f"jitviz.debug.print needs a format string first, got {type(fmt)}")
    names = tuple(sorted(kwargs))
    debug_print_p.bind(*args, *[kwargs[k] for k in names], fmt=fmt, names=names)
