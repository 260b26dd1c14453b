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

from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ._ir import Subst, is_effectful, literal_value, make_literal, map_sub_jaxprs, \
    rename_jaxpr_copy, sub_jaxprs


class _Folder:
    def __init__(self, known: dict, allow_consts: bool):
        self.known = known  # var id -> np.ndarray
        self.allow_consts = allow_consts
        self.new_consts: list[tuple[Var, np.ndarray]] = []

    def value(self, a):
        if isinstance(a, Literal):
            return literal_value(a)
        return self.known.get(a.id)

    def run(self, jaxpr: Jaxpr, memo) -> Jaxpr:
        env, eqns = Subst(), []
        for eqn in jaxpr.eqns:
            eqn = env.eqn(eqn)
            rule = FOLD_RULES.get(eqn.primitive.name)
            if rule is not None:
                replaced = rule(self, eqn)
                if replaced is not None:
                    new_eqns, outs = replaced
                    eqns.extend(new_eqns)
                    for v, o in zip(eqn.outvars, outs):
                        env[v] = o
                    continue
            eqn = map_sub_jaxprs(eqn, lambda j: _Folder({}, False).run(j, memo), memo)
            outs = self.try_fold(eqn)
            if outs is None:
                eqns.append(eqn)
                continue
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        return jaxpr.replace(eqns=eqns, outvars=env.atoms(jaxpr.outvars))

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
                res = prim.impl(*vals, **eqn.params)
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
FOLD_RULES = {"cond": _fold_cond}


def fold_constants(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    known = {v.id: np.asarray(c) for v, c in zip(closed.jaxpr.constvars, closed.consts)
             if isinstance(c, np.ndarray) or np.isscalar(c)}
    folder = _Folder(known, allow_consts=True)
    j = folder.run(closed.jaxpr, {})
    if folder.new_consts:
        j = j.replace(constvars=list(j.constvars) + [v for v, _ in folder.new_consts])
    out = closed.replace_jaxpr(j)
    out.consts = list(closed.consts) + [c for _, c in folder.new_consts]
    return out
