"""The one registry of primitives.

Each primitive carries its rules side by side: `abstract_eval` (shapes and dtypes), `impl`
(NumPy, the reference semantics), how its params print, and the backends' lowering rules
(`lowerings["cpu"]`, `lowerings["cuda"]`, and `scalar`, the per-element expression that fused
kernels use). `tests/test_primitive_rules.py` fails when a primitive lacks a rule.
"""
from __future__ import annotations

from typing import Callable

PRIMITIVES: dict[str, "Primitive"] = {}


class Primitive:
    def __init__(self, name: str, *, abstract_eval: Callable, impl: Callable,
                 multiple_results: bool = False, pp_params: Callable | None = None,
                 scalar: str | Callable | None = None, kind: str = "other",
                 effectful: bool = False, call_param: str | None = None,
                 sub_io: Callable | None = None):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is defined twice")
        self.name = name
        self.abstract_eval = abstract_eval  # (*avals, **params) -> aval or [avals]
        self.impl = impl  # (*ndarrays, **params) -> ndarray or [ndarrays]
        self.multiple_results = multiple_results
        self._pp_params = pp_params
        self.scalar = scalar  # elementwise template, e.g. "np.exp({0})"
        self.kind = kind  # "elementwise" | "reduction" | "structural" | "control" | "other"
        self.effectful = effectful  # never removed by DCE, runs on every call
        # a call primitive (jit): the param holding the called jaxpr, which is printed with
        # the caller's variable names for its inputs and outputs (JAX's jit printing rule)
        self.call_param = call_param
        # for primitives with sub-jaxprs: (params, invars, outvars, param key) -> (outer atoms
        # feeding the sub-jaxpr's invars, outer vars its outvars become; None where none)
        self.sub_io = sub_io or _same_io
        self.lowerings: dict[str, Callable] = {}
        PRIMITIVES[name] = self

    def bind(self, *args, **params):
        from .trace import bind
        return bind(self, args, params)

    def printed_params(self, params: dict):
        if self._pp_params is not None:
            return self._pp_params(params)
        return sorted(params.items())

    def __repr__(self):
        return self.name


def _same_io(params, invars, outvars, key):
    """The default routing: the equation's operands and results are the sub-jaxpr's own."""
    return list(invars), list(outvars)


def primitive(name, **rules) -> Primitive:
    return Primitive(name, **rules)
