"""Inline call primitives (nested `jit` calls, `custom_vjp` calls once differentiated), as XLA
does: the callee's equations join the caller's, so the later passes (CSE, folding, fusion) see
across the call boundary."""
from __future__ import annotations

from ..core.ir import ClosedJaxpr
from ..core.jaxpr_util import rename_jaxpr_copy, rewrite_jaxpr


def inline_call(eqn):
    """A call's equations (its callee already inlined), renamed for this call site. A call
    primitive names the param holding its callee (`Primitive.call_param`)."""
    param = eqn.primitive.call_param
    callee = eqn.params.get(param) if param is not None else None
    # a callee with constvars cannot be spliced into a const-free body: keep the call
    if callee is None or callee.jaxpr.constvars:
        return None
    eqns, outs = rename_jaxpr_copy(callee.jaxpr, eqn.invars)
    return [e if e.source is not None else e.replace(source=eqn.source) for e in eqns], outs


def inline_calls(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    j, changed = rewrite_jaxpr(closed.jaxpr, lambda jaxpr, subst: inline_call)
    return closed.replace(jaxpr=j) if changed else closed
