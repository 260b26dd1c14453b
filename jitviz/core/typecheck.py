"""`typecheck_jaxpr`: every var defined once before use, every equation's output types equal
to its primitive's abstract-eval rule, sub-jaxprs checked recursively. Run on every traced
jaxpr in the tests and after every compiler pass."""
from __future__ import annotations

from .ir import ClosedJaxpr, Literal
from .jaxpr_util import jaxpr_params


class JaxprTypeError(TypeError):
    pass


def typecheck_jaxpr(jaxpr, where: str = "") -> None:
    """Check a (closed) jaxpr's types, equation by equation: raises `JaxprTypeError`
    (prefixed by `where`) at the first mismatch."""
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise JaxprTypeError(f"{where}: {len(jaxpr.consts)} consts for "
                                 f"{len(jaxpr.jaxpr.constvars)} constvars")
        jaxpr = jaxpr.jaxpr
    defined: set[int] = set()

    def define(v, what):
        if v.id in defined:
            raise JaxprTypeError(f"{where}: variable {v!r} defined twice ({what})")
        defined.add(v.id)

    def use(a, what):
        if isinstance(a, Literal):
            return
        if a.id not in defined:
            raise JaxprTypeError(f"{where}: variable {a!r} used before definition in {what}")

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        define(v, "binder")
    for i, eqn in enumerate(jaxpr.eqns):
        label = f"equation {i} ({eqn.primitive.name}" + (
            f", line {eqn.source.line}" if eqn.source else "") + ")"
        for a in eqn.invars:
            use(a, label)
        for _, subs in jaxpr_params(eqn):
            for sub in subs:
                typecheck_jaxpr(sub, f"{where}/{eqn.primitive.name}")
        try:
            out = eqn.primitive.abstract_eval(*[a.aval for a in eqn.invars], **eqn.params)
        except (TypeError, ValueError) as e:
            raise JaxprTypeError(f"{where}: {label} fails its type rule: {e}") from e
        outs = out if eqn.primitive.multiple_results else [out]
        if len(outs) != len(eqn.outvars):
            raise JaxprTypeError(f"{where}: {label} binds {len(eqn.outvars)} outputs, rule "
                                 f"gives {len(outs)}")
        for v, av in zip(eqn.outvars, outs):
            if v.aval != av:
                raise JaxprTypeError(f"{where}: {label} output {v.aval!r} but its rule "
                                     f"gives {av!r}")
            define(v, label)
    for v in jaxpr.outvars:
        use(v, "outvars")
