"""`jax_debug_nans` / `jax_debug_infs`: stop at the first NaN (or infinity) a program makes.

    jitviz.config.update("jax_debug_nans", True)

Eager operations check each result. A jitted function's outputs are checked after each call;
when one holds a NaN, its traced program is replayed op by op with the NumPy interpreter (the
oracle) to find the first equation that made one from operands without any, and the error
names that equation, the user's line that wrote it, and the calls it sits inside, as JAX's
`FloatingPointError` does (JAX re-runs the function un-jitted; the replay here needs no second
trace). Off by default: the checks cost a pass over every floating output.
"""
from __future__ import annotations

import numpy as np

from .config import config
from .core.interpreter import results, run_jaxpr
from .core.ir import ClosedJaxpr, Jaxpr, literal_value


def enabled() -> bool:
    return config.debug_nans or config.debug_infs


def _bad(value) -> str | None:
    """'nan' or 'inf' when `value` holds one that the switches ask about."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    if config.debug_nans and np.isnan(arr).any():
        return "nan"
    if config.debug_infs and np.isinf(arr).any():
        return "inf"
    return None


def check_eager(prim, inputs, outputs) -> None:
    """After an eager primitive: raise when it made a NaN/inf from clean operands."""
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    kind = next((k for k in map(_bad, outs) if k), None)
    if kind and not any(_bad(x) == kind for x in inputs):
        raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")


def check_jitted(name: str, closed: ClosedJaxpr, args, outs) -> None:
    """After a jitted call: when an output holds a NaN/inf, find where it was made."""
    kind = next((k for k in map(_bad, outs) if k), None)
    if kind is None or any(_bad(a) == kind for a in args):
        return
    where = _first_bad_equation(closed.jaxpr, list(closed.consts), list(args), kind, [])
    if where is None:  # the compiled code disagrees with the interpreter
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in the output of jitted function {name}; "
            f"its program replayed op by op with the NumPy interpreter makes none, so the "
            f"compiled kernels computed it (run jit(..., backend='interpret') to compare)")
    eqn, path = where
    src = f" at {eqn.source.file}:{eqn.source.line} ({eqn.source.function}): " \
          f"{eqn.source.code.strip()}" if eqn.source else ""
    inside = "".join(f" inside {p}" for p in reversed(path))
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in {eqn.primitive.name}{src}\n"
        f"  (jitted function {name}{inside}; set jitviz.config.update("
        f"'jax_debug_{kind}s', False) to stop checking)")


def _first_bad_equation(jaxpr: Jaxpr, consts, args, kind, path):
    """The first equation whose result holds `kind` while its operands do not; inside a
    call (jit, custom derivatives, fused kernels) the equation inside it."""
    found = []

    def apply_eqn(eqn, ins):
        out = results(eqn, eqn.primitive.impl(*ins, **eqn.params))
        if not found and any(_bad(o) == kind for o in out) and \
                not any(_bad(x) == kind for x in ins):
            found.append(_inside(eqn, ins, kind, path) or (eqn, path))
        return out

    run_jaxpr(jaxpr, args, apply_eqn, literal=literal_value, consts=consts)
    return found[0] if found else None


def _inside(eqn, ins, kind, path):
    """Look inside a call's jaxpr for the equation that made the value."""
    param = eqn.primitive.call_param
    sub = eqn.params.get(param) if param else None
    if not isinstance(sub, ClosedJaxpr):
        return None
    label = f"{eqn.primitive.name} {eqn.params.get('name', '')}".strip()
    return _first_bad_equation(sub.jaxpr, list(sub.consts), list(ins), kind, path + [label])
