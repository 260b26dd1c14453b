"""Common-subexpression elimination: an equation equal to an earlier one (same primitive,
same operands, same params) reuses the earlier results.

Commutative operations match either operand order (IEEE `a + b == b + a` exactly, so this
needs no fastmath). Effectful equations are never merged: two prints print twice. Each
control-flow body is its own scope.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.jaxpr_util import is_effectful, rewrite_jaxpr
from ..lax import primitives as P
from ._ir import atom_key

COMMUTATIVE = {P.add_p, P.mul_p, P.max_p, P.min_p, P.and_p, P.or_p, P.xor_p, P.eq_p, P.ne_p}


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
    if eqn.primitive in COMMUTATIVE:
        operands.sort(key=repr)
    return (eqn.primitive.name, id(eqn.primitive), tuple(operands), param_key(eqn.params))


def cse_rule(jaxpr, subst):
    """One scope's rule: an equation seen before in this scope is replaced by its results."""
    seen = {}

    def reuse_earlier(eqn):
        if is_effectful(eqn):
            return None
        earlier = seen.setdefault(eqn_key(eqn), eqn)
        return None if earlier is eqn else ([], earlier.outvars)
    return reuse_earlier


def cse(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j, changed = rewrite_jaxpr(closed.jaxpr, cse_rule)
    return closed.replace(jaxpr=j) if changed else closed
