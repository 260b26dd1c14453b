"""Small IR helpers of the passes: effects, use counts, operand keys, literals, descriptions.
The jaxpr walks and the rewrite driver they share with the rest of jitviz are in
`jitviz.core.jaxpr_util`.

Every pass rebuilds equations rather than mutating them (the IR is immutable), and keeps an
equation's `source` so kernels and errors can still point at the user's line.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Eqn, Jaxpr, Literal, Var, literal_key
from ..core.jaxpr_util import sub_jaxprs
# The backends still import these from here; they move to `jitviz.core` imports with the
# backend refactor (issue 13, item 3).
from ..core.ir import literal_value  # noqa: F401
from ..core.jaxpr_util import Subst, rename_jaxpr_copy  # noqa: F401

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


def describe_eqn(eqn: Eqn) -> str:
    """`mul (at user.py:3: return x * x)`, for error messages."""
    where = ""
    if eqn.source is not None:
        where = f" (at {eqn.source.file}:{eqn.source.line}: {eqn.source.code})"
    return f"{eqn.primitive.name}{where}"
