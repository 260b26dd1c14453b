"""Small IR helpers shared by the passes: sub-jaxprs, substitution, effects, renaming.

Every pass rebuilds equations rather than mutating them (the IR is immutable), and keeps an
equation's `source` so kernels and errors can still point at the user's line.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var


def sub_jaxprs(eqn):
    """The jaxprs an equation's params hold (control-flow bodies, fused kernels)."""
    for v in eqn.params.values():
        for j in (v if isinstance(v, tuple) else (v,)):
            if isinstance(j, ClosedJaxpr):
                yield j.jaxpr
            elif isinstance(j, Jaxpr):
                yield j


def map_sub_jaxprs(eqn: Eqn, fn, memo: dict) -> Eqn:
    """`eqn` with `fn` applied to each sub-jaxpr. A jaxpr shared by several equations is
    transformed once (`memo`, keyed by identity), so sharing survives the pass."""
    changed = False
    params = {}
    for k, v in eqn.params.items():
        new = _map_param(v, fn, memo)
        changed |= new is not v
        params[k] = new
    return eqn.replace(params=params) if changed else eqn


def _map_param(v, fn, memo):
    if isinstance(v, tuple) and v and any(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        new = tuple(_map_param(j, fn, memo) for j in v)
        return v if all(a is b for a, b in zip(new, v)) else new
    if isinstance(v, ClosedJaxpr):
        key = id(v)
        if key not in memo:
            j = fn(v.jaxpr)
            memo[key] = v if j is v.jaxpr else v.replace_jaxpr(j)
        return memo[key]
    if isinstance(v, Jaxpr):
        key = id(v)
        if key not in memo:
            memo[key] = fn(v)
        return memo[key]
    return v


_effects_memo: dict[int, tuple[object, bool]] = {}


def has_effects(jaxpr: Jaxpr) -> bool:
    hit = _effects_memo.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    out = any(is_effectful(e) for e in jaxpr.eqns)
    if len(_effects_memo) > 10_000:
        _effects_memo.clear()
    _effects_memo[id(jaxpr)] = (jaxpr, out)
    return out


def is_effectful(eqn: Eqn) -> bool:
    """Effectful equations (debug prints) run on every call: no pass may drop or merge them,
    nor the control flow that contains them."""
    return bool(getattr(eqn.primitive, "effectful", False)) or \
        any(has_effects(j) for j in sub_jaxprs(eqn))


class Subst:
    """old var -> new atom, applied to equation operands and jaxpr outputs."""

    def __init__(self):
        self.env: dict[int, object] = {}

    def __setitem__(self, var, atom):
        self.env[var.id] = atom

    def __call__(self, a):
        if isinstance(a, Var):
            return self.env.get(a.id, a)
        return a

    def eqn(self, eqn: Eqn) -> Eqn:
        if not self.env:
            return eqn
        new = tuple(self(a) for a in eqn.invars)
        if all(a is b for a, b in zip(new, eqn.invars)):
            return eqn
        return eqn.replace(invars=new)

    def atoms(self, atoms):
        return [self(a) for a in atoms]


def use_counts(jaxpr: Jaxpr) -> dict[int, int]:
    counts: dict[int, int] = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if isinstance(a, Var):
                counts[a.id] = counts.get(a.id, 0) + 1
    for a in jaxpr.outvars:
        if isinstance(a, Var):
            counts[a.id] = counts.get(a.id, 0) + 1
    return counts


def literal_key(lit: Literal):
    """Literals equal as values of their type (so -0.0 and 0.0 stay apart, NaN payloads too)."""
    val = np.asarray(lit.val, dtype=lit.aval.dtype)
    return ("lit", lit.aval.dtype.str, lit.aval.weak_type, val.tobytes())


def atom_key(a):
    return ("var", a.id) if isinstance(a, Var) else literal_key(a)


def literal_value(lit: Literal) -> np.ndarray:
    """A literal's value in its own dtype (a weakly typed Python float becomes f32 here)."""
    with np.errstate(all="ignore"):
        return np.asarray(lit.val, dtype=lit.aval.dtype)


def make_literal(value, aval) -> Literal:
    return Literal(np.asarray(value, dtype=aval.dtype)[()], aval)


def rename_jaxpr_copy(jaxpr: Jaxpr, args) -> tuple[list[Eqn], list]:
    """The equations of `jaxpr` with its invars bound to `args` and fresh vars for everything
    it defines (so it can be inlined more than once); returns (eqns, outputs)."""
    env = Subst()
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    eqns = []
    for e in jaxpr.eqns:
        outs = [Var(v.aval) for v in e.outvars]
        for v, n in zip(e.outvars, outs):
            env[v] = n
        eqns.append(e.replace(invars=env.atoms(e.invars), outvars=outs))
    return eqns, env.atoms(jaxpr.outvars)


def describe_eqn(eqn: Eqn) -> str:
    """`mul (at user.py:3: return x * x)`, for error messages."""
    where = ""
    if eqn.source is not None:
        where = f" (at {eqn.source.file}:{eqn.source.line}: {eqn.source.code})"
    return f"{eqn.primitive.name}{where}"
