"""Constant folding with the primitives' own NumPy implementations (the oracle's semantics,
so folding never changes a result).

An equation whose operands are all known (literals, or the jaxpr's constants) is evaluated
now: a scalar result becomes a literal, an array result becomes a constant, but only when it
is no bigger than its operands (folding `broadcast_in_dim 0.0` to 5000x5000 would trade a
free fused broadcast for 100 MB of constant). A `cond` on a known index is replaced by the
branch it takes. Bodies of control flow fold scalars only (they carry no constants).
"""
from __future__ import annotations

import numpy as np

from ..core.ir import ClosedJaxpr, Eqn, Literal, Var, literal_value
from ..core.jaxpr_util import is_effectful, rename_jaxpr_copy, rewrite_jaxpr, sub_jaxprs
from ..lax.control_flow import cond_p
from ._ir import make_literal


class _Folder:
    """One scope's values known now, and the rule that folds equations computing from them."""

    def __init__(self, known: dict, allow_consts: bool):
        self.known = known  # var id -> np.ndarray
        self.allow_consts = allow_consts
        self.new_consts: list[tuple[Var, np.ndarray]] = []

    def value(self, a):
        if isinstance(a, Literal):
            return literal_value(a)
        return self.known.get(a.id)

    def rule(self, eqn):
        rule = FOLD_RULES.get(eqn.primitive)
        replaced = rule(self, eqn) if rule is not None else None
        if replaced is not None:
            return replaced
        outs = self.try_fold(eqn)
        return None if outs is None else ([], outs)

    def try_fold(self, eqn):
        prim = eqn.primitive
        if is_effectful(eqn) or prim.kind == "control" or any(True for _ in sub_jaxprs(eqn)):
            return None  # calls and kernels are folded inside, not as a whole
        vals = [self.value(a) for a in eqn.invars]
        if any(v is None for v in vals):
            return None
        limit = max([1] + [v.size for v in vals])
        if any(v.aval.size > limit for v in eqn.outvars):
            return None
        if not self.allow_consts and any(v.aval.shape != () for v in eqn.outvars):
            return None
        try:
            with np.errstate(all="ignore"):
                # plain arrays: a jitviz Array's operators are JAX's, not the NumPy an impl uses
                res = prim.impl(*[np.asarray(v) if isinstance(v, np.ndarray) else v
                                  for v in vals], **eqn.params)
        except Exception:  # leave it to run time, where the error names the line
            return None
        res = res if prim.multiple_results else [res]
        outs = []
        for v, r in zip(eqn.outvars, res):
            r = np.asarray(r)
            if r.dtype != v.aval.dtype:
                r = r.astype(v.aval.dtype)
            if r.shape != v.aval.shape:
                return None
            if v.aval.shape == ():
                outs.append(make_literal(r, v.aval))
            else:
                self.known[v.id] = r
                self.new_consts.append((v, r))
                outs.append(v)
        return outs


def _fold_cond(folder: _Folder, eqn):
    """`cond` with a known index: inline the branch it takes (JAX does this while tracing)."""
    idx = folder.value(eqn.invars[0])
    if idx is None:
        return None
    branches = eqn.params["branches"]
    br = branches[int(np.clip(int(idx), 0, len(branches) - 1))]
    if br.jaxpr.constvars:
        return None
    eqns, outs = rename_jaxpr_copy(br.jaxpr, eqn.invars[1:])
    return eqns, [_retyped(o, v.aval, eqns, eqn.source) for o, v in zip(outs, eqn.outvars)]


def _retyped(atom, aval, eqns, source):
    """`atom` as the cond typed its result: a branch may differ from it in weak type only
    (cond's results are typed as branch 0), and the inlined value must keep the cond's."""
    if atom.aval.weak_type == aval.weak_type:
        return atom
    if isinstance(atom, Literal):
        return Literal(atom.val, aval)
    from ..lax.primitives import convert_element_type_p
    out = Var(aval)
    eqns.append(Eqn(convert_element_type_p, [atom], [out],
                    {"new_dtype": aval.dtype, "weak_type": aval.weak_type}, source))
    return out


# Structural folding rules keyed by primitive name (value folding needs no rule).
FOLD_RULES = {cond_p: _fold_cond}


def fold_constants(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    known = {v.id: np.asarray(c) for v, c in zip(closed.jaxpr.constvars, closed.consts)
             if isinstance(c, np.ndarray) or np.isscalar(c)}
    top = _Folder(known, allow_consts=True)

    def make_rule(jaxpr, subst):  # bodies fold scalars only: they carry no constants
        return top.rule if jaxpr is closed.jaxpr else _Folder({}, False).rule

    # a known `cond` inlines its branch as traced, so the rule sees bodies before they fold
    j, changed = rewrite_jaxpr(closed.jaxpr, make_rule, bodies_first=False)
    if not changed:
        return closed
    return closed.replace(jaxpr=j.replace(constvars=list(j.constvars) +
                                          [v for v, _ in top.new_consts]),
                          consts=list(closed.consts) + [c for _, c in top.new_consts])
