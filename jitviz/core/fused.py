"""The `fused` primitive: a group of equations a backend compiles into one kernel.

The fusion pass (`jitviz.passes.fuse`) builds these; backends, the explorer and annotate read
them. It lives in core so that none of those readers imports a pass.

    fused[name=mul_add jaxpr={ lambda ; a:f32[5000,5000]. let
        b = mul a a; c = mul a 2.0; d = add b c in (d,) }] x
"""
from __future__ import annotations

from .interpreter import eval_jaxpr
from .registry import PRIMITIVES, Primitive


def _fused_rule(*avals, name, jaxpr):
    ins = jaxpr.jaxpr.in_avals
    if len(ins) != len(avals) or not all(a.same_type(b) for a, b in zip(ins, avals)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in ins)
        raise TypeError(f"fused kernel {name}: operands ({got}) do not match its body ({want})")
    return jaxpr.jaxpr.out_avals


def _fused_impl(*args, name, jaxpr):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _fused_pp(params):
    return [("name", params["name"]), ("jaxpr", params["jaxpr"])]


fused_p = PRIMITIVES.get("fused") or Primitive(
    "fused", abstract_eval=_fused_rule, impl=_fused_impl, multiple_results=True,
    pp_params=_fused_pp, kind="other")
