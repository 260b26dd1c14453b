"""Common-subexpression elimination: an equation equal to an earlier one (same primitive,
same operands, same params) reuses the earlier results.

Commutative operations match either operand order (IEEE `a + b == b + a` exactly, so this
needs no fastmath). Effectful equations are never merged: two prints print twice. Each
control-flow body is its own scope.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr
from ._ir import Subst, atom_key, is_effectful, map_sub_jaxprs

COMMUTATIVE = {"add", "mul", "max", "min", "and", "or", "xor", "eq", "ne"}


def param_key(v):
    """A hashable stand-in for a param value (jaxprs by identity, arrays by content)."""
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return ("jaxpr", id(v))
    if isinstance(v, dict):
        return ("dict",) + tuple((k, param_key(x)) for k, x in sorted(v.items()))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(param_key(x) for x in v)
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    try:
        hash(v)
    except TypeError:
        return ("repr", repr(v))
    return (type(v).__name__, v)


def eqn_key(eqn):
    operands = [atom_key(a) for a in eqn.invars]
    if eqn.primitive.name in COMMUTATIVE:
        operands.sort(key=repr)
    return (eqn.primitive.name, id(eqn.primitive), tuple(operands), param_key(eqn.params))


def cse_jaxpr(jaxpr: Jaxpr, memo=None) -> Jaxpr:
    memo = {} if memo is None else memo
    env, seen, eqns = Subst(), {}, []
    for eqn in jaxpr.eqns:
        eqn = map_sub_jaxprs(env.eqn(eqn), lambda j: cse_jaxpr(j, memo), memo)
        if not is_effectful(eqn):
            key = eqn_key(eqn)
            earlier = seen.get(key)
            if earlier is not None:
                for v, w in zip(eqn.outvars, earlier.outvars):
                    env[v] = w
                continue
            seen[key] = eqn
        eqns.append(eqn)
    outvars = env.atoms(jaxpr.outvars)
    if len(eqns) == len(jaxpr.eqns) and all(a is b for a, b in zip(eqns, jaxpr.eqns)) \
            and all(a is b for a, b in zip(outvars, jaxpr.outvars)):
        return jaxpr
    return jaxpr.replace(eqns=eqns, outvars=outvars)


def cse(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j = cse_jaxpr(closed.jaxpr)
    return closed if j is closed.jaxpr else closed.replace_jaxpr(j)
