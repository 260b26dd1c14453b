"""Small IR helpers of the passes: use counts, operand keys, literals. The jaxpr walks, effects
and the rewrite driver they share with the rest of jitviz are in `jitviz.core.jaxpr_util`.

Every pass rebuilds equations rather than mutating them (the IR is immutable), and keeps an
equation's `source` so kernels and errors can still point at the user's line.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Jaxpr, Literal, Var, literal_key


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


def atom_key(a):
    return ("var", a.id) if isinstance(a, Var) else literal_key(a)


def make_literal(value, aval) -> Literal:
    return Literal(np.asarray(value, dtype=aval.dtype)[()], aval)
