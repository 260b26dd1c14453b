"""Inline nested `jit` calls, as XLA does: the callee's equations join the caller's, so the
later passes (CSE, folding, fusion) see across the call boundary."""
from __future__ import annotations

from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.registry import PRIMITIVES
from ._ir import Subst, map_sub_jaxprs, rename_jaxpr_copy


def _is_call(eqn) -> bool:
    return eqn.primitive is PRIMITIVES.get("jit")


def inline_jaxpr(jaxpr: Jaxpr, memo=None) -> Jaxpr:
    memo = {} if memo is None else memo
    env, eqns, changed = Subst(), [], False
    for eqn in jaxpr.eqns:
        eqn = map_sub_jaxprs(env.eqn(eqn), lambda j: inline_jaxpr(j, memo), memo)
        callee = eqn.params.get("jaxpr") if _is_call(eqn) else None
        # a callee with constvars cannot be spliced into a const-free body: keep the call
        if callee is None or callee.jaxpr.constvars:
            eqns.append(eqn)
            continue
        changed = True
        new_eqns, outs = rename_jaxpr_copy(callee.jaxpr, eqn.invars)
        eqns.extend(e if e.source is not None else e.replace(source=eqn.source)
                    for e in new_eqns)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    if not changed and all(a is b for a, b in zip(eqns, jaxpr.eqns)):
        return jaxpr
    return jaxpr.replace(eqns=eqns, outvars=env.atoms(jaxpr.outvars))


def inline_calls(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j = inline_jaxpr(closed.jaxpr)
    return closed if j is closed.jaxpr else closed.replace_jaxpr(j)
