"""`eval_jaxpr`: the reference interpreter, NumPy op by op — the oracle every backend is
tested against — and `inline_jaxpr`, which replays a jaxpr through `bind` (so inside a
trace it re-emits the equations)."""
from __future__ import annotations

import numpy as np

from .ir import Jaxpr, Literal, literal_value


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, timings=None):
    """Run `jaxpr` with NumPy; returns the list of outputs as NumPy arrays. With `timings`
    (backends.base.Timings) each equation's run time is recorded under the equation."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, "
                        f"got {len(args)}")
    env: dict[int, object] = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v.id] = _as_input(c, v.aval)
    for v, a in zip(jaxpr.invars, args):
        env[v.id] = _as_input(a, v.aval)

    def read(atom):
        if isinstance(atom, Literal):
            return literal_value(atom)
        return env[atom.id]

    for eqn in jaxpr.eqns:
        impl = eqn.primitive.impl if timings is None else \
            timings.timed(id(eqn), (eqn,), eqn.primitive.impl)
        try:
            out = impl(*[read(a) for a in eqn.invars], **eqn.params)
        except Exception as e:
            where = f" (from {eqn.source.file}:{eqn.source.line})" if eqn.source else ""
            raise type(e)(f"{e}\n  while evaluating {eqn.primitive.name}{where}") from e
        outs = out if eqn.primitive.multiple_results else (out,)
        for v, o in zip(eqn.outvars, outs):
            o = np.asarray(o)
            if o.dtype != v.aval.dtype:
                o = o.astype(v.aval.dtype)
            env[v.id] = o
    return [read(v) for v in jaxpr.outvars]


def _as_input(a, aval):
    """An argument as a NumPy array. Python scalars take the variable's dtype, and
    big-endian data is brought to native byte order (what tracing typed it as)."""
    arr = np.asarray(a)
    if arr.dtype != aval.dtype and (isinstance(a, (bool, int, float, complex)) or
                                    arr.dtype.newbyteorder("=") == aval.dtype):
        arr = arr.astype(aval.dtype)
    return arr


def inline_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Apply the jaxpr's equations to `args` with `bind` (tracers or concrete values)."""
    env: dict[int, object] = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v.id] = c
    for v, a in zip(jaxpr.invars, args):
        env[v.id] = a

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[atom.id]

    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        outs = out if eqn.primitive.multiple_results else (out,)
        for v, o in zip(eqn.outvars, outs):
            env[v.id] = o
    return [read(v) for v in jaxpr.outvars]
