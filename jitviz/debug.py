"""`jitviz.debug.print`: a print that is part of the program, so it runs on every call
(a plain `print` inside a jitted function runs once, while tracing); `debug.callback`; and
`debug.breakpoint` (the debugger that stops the running program: `debugger.py`)."""
from __future__ import annotations

import sys

import numpy as np

from .core.registry import primitive


def _debug_print_rule(*avals, fmt, names, batch_rank=0):
    return []


def _debug_print_impl(*values, fmt, names, batch_rank=0):
    emit(fmt, names, values, batch_rank)
    return []


def emit(fmt, names, values, batch_rank=0):
    """Format and write a debug print (shared by every backend's lowering). Under `vmap`
    (`batch_rank` leading batch axes on every value) one line per example, in order, as
    JAX prints them."""
    if batch_rank:
        batch_shape = np.shape(values[0])[:batch_rank]
        for index in np.ndindex(*batch_shape):
            emit(fmt, names, [np.asarray(v)[index] for v in values])
        return
    n_pos = len(values) - len(names)
    pos = [_show(v) for v in values[:n_pos]]
    kw = {k: _show(v) for k, v in zip(names, values[n_pos:])}
    sys.stdout.write(fmt.format(*pos, **kw) + "\n")


def _show(v):
    arr = np.asarray(v)
    return arr.item() if arr.ndim == 0 else arr


def _pp(params):
    return [("fmt", repr(params["fmt"]))] + (
        [("names", params["names"])] if params["names"] else []) + (
        [("batch_rank", params["batch_rank"])] if params.get("batch_rank") else [])


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


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` with the runtime values (NumPy arrays) on every call;
    under `vmap` once per example. Its return value is ignored (`jax.debug.callback`).

        jitviz.debug.callback(lambda x: losses.append(float(x)), loss)
    """
    from .callbacks import debug_callback
    return debug_callback(callback, *args, ordered=ordered, partitioned=partitioned,
                          **kwargs)


from .debugger import breakpoint  # noqa: E402,F401,A001 (jax.debug.breakpoint)
