"""Interpreters over a jaxpr. `run_jaxpr` is the loop every one of them shares (torch.fx's
`Interpreter.run`): bind the inputs, apply each equation to its operands' values, read the
outputs. Each interpreter is its `apply_eqn`:

- `eval_jaxpr`, the reference interpreter, NumPy op by op: the oracle every backend is tested
  against;
- `inline_jaxpr`, which replays a jaxpr through `bind` (so inside a trace it re-emits the
  equations);
- the transformations (`transforms/jvp.py`, `vjp.py`, `batching.py`), whose values are pairs
  or tracers.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .ir import Jaxpr, Literal, literal_value


class Env(dict):
    """An interpreter's values by variable id; literals are read through `literal`."""

    def __init__(self, literal: Callable):
        super().__init__()
        self.literal = literal

    def read(self, atom):
        return self.literal(atom) if isinstance(atom, Literal) else self[atom.id]

    def write(self, variables, values):
        for v, x in zip(variables, values):
            self[v.id] = x


def run_jaxpr(jaxpr: Jaxpr, args, apply_eqn: Callable, *, literal: Callable,
              consts=()) -> tuple[list, Env]:
    """Run `jaxpr` with `apply_eqn(eqn, operand values) -> output values` for each equation
    (a list, one value per outvar). Returns (output values, the environment of every value)."""
    env = Env(literal)
    env.write(jaxpr.constvars, consts)
    env.write(jaxpr.invars, args)
    for eqn in jaxpr.eqns:
        env.write(eqn.outvars, apply_eqn(eqn, [env.read(a) for a in eqn.invars]))
    return [env.read(v) for v in jaxpr.outvars], env


def results(eqn, out) -> list:
    """A primitive's result as a list, one value per outvar."""
    return list(out) if eqn.primitive.multiple_results else [out]


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, timings=None):
    """Run `jaxpr` with NumPy; returns the list of outputs as NumPy arrays. With `timings`
    (backends.base.Timings) each equation's run time is recorded under the equation."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, "
                        f"got {len(args)}")

    def apply_eqn(eqn, ins):
        impl = eqn.primitive.impl if timings is None else \
            timings.timed(id(eqn), (eqn,), eqn.primitive.impl)
        try:
            out = impl(*ins, **eqn.params)
        except Exception as e:
            where = f" (from {eqn.source.file}:{eqn.source.line})" if eqn.source else ""
            raise type(e)(f"{e}\n  while evaluating {eqn.primitive.name}{where}") from e
        return [_as_output(o, v.aval) for v, o in zip(eqn.outvars, results(eqn, out))]

    outs, _ = run_jaxpr(jaxpr, [_as_input(a, v.aval) for v, a in zip(jaxpr.invars, args)],
                        apply_eqn, literal=literal_value,
                        consts=[_as_input(c, v.aval) for v, c in zip(jaxpr.constvars, consts)])
    return outs


def _as_input(a, aval):
    """An argument as a NumPy array. Python scalars take the variable's dtype, and
    big-endian data is brought to native byte order (what tracing typed it as)."""
    arr = np.asarray(a)
    if arr.dtype != aval.dtype and (isinstance(a, (bool, int, float, complex)) or
                                    arr.dtype.newbyteorder("=") == aval.dtype):
        arr = arr.astype(aval.dtype)
    return arr


def _as_output(out, aval):
    """A result as a NumPy array of exactly the dtype its outvar was typed with."""
    out = np.asarray(out)
    return out.astype(aval.dtype) if out.dtype != aval.dtype else out


def inline_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Apply the jaxpr's equations to `args` with `bind` (tracers or concrete values)."""
    def apply_eqn(eqn, ins):
        return results(eqn, eqn.primitive.bind(*ins, **eqn.params))
    return run_jaxpr(jaxpr, args, apply_eqn, literal=lambda lit: lit.val, consts=consts)[0]
