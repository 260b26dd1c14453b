"""Dead-code elimination: drop equations whose results nobody uses, and unused constants.

Effectful equations (`debug_print`, or control flow whose body prints) are always live: they
must run on every call. Bodies of control flow are cleaned too, keeping their interface; a
`cond` also loses the outputs nobody reads (in every branch at once).
"""
from __future__ import annotations

from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.jaxpr_util import is_effectful, map_sub_jaxprs
from ..lax.control_flow import cond_p


def dce_jaxpr(jaxpr: Jaxpr, memo=None) -> Jaxpr:
    memo = {} if memo is None else memo
    live = {v.id for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if not (is_effectful(eqn) or any(v.id in live for v in eqn.outvars)):
            continue
        eqn = _prune_outputs(eqn, live)
        eqn = map_sub_jaxprs(eqn, lambda j: dce_jaxpr(j, memo), memo)
        kept.append(eqn)
        live.update(a.id for a in eqn.invars if isinstance(a, Var))
    kept.reverse()
    if len(kept) == len(jaxpr.eqns) and all(a is b for a, b in zip(kept, jaxpr.eqns)):
        return jaxpr
    return jaxpr.replace(eqns=kept)


def _prune_cond_outputs(eqn, live):
    keep = [i for i, v in enumerate(eqn.outvars) if v.id in live]
    if len(keep) == len(eqn.outvars) or not keep and not is_effectful(eqn):
        return eqn
    branches = tuple(b.replace_jaxpr(b.jaxpr.replace(outvars=[b.jaxpr.outvars[i] for i in keep]))
                     for b in eqn.params["branches"])
    return eqn.replace(outvars=[eqn.outvars[i] for i in keep],
                       params={**eqn.params, "branches": branches})


# Output pruning rules keyed by primitive (only where dropping an output is always sound).
_PRUNE_RULES = {cond_p: _prune_cond_outputs}


def _prune_outputs(eqn, live):
    rule = _PRUNE_RULES.get(eqn.primitive)
    return eqn if rule is None else rule(eqn, live)


def dce(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j = dce_jaxpr(closed.jaxpr)
    used = {a.id for e in j.eqns for a in e.invars if isinstance(a, Var)}
    used |= {a.id for a in j.outvars if isinstance(a, Var)}
    pairs = [(v, c) for v, c in zip(j.constvars, closed.consts) if v.id in used]
    if j is closed.jaxpr and len(pairs) == len(closed.consts):
        return closed
    return closed.replace(jaxpr=j.replace(constvars=[v for v, _ in pairs]),
                          consts=[c for _, c in pairs])
