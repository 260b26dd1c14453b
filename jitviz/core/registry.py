"""The one registry: primitives, and the rules that lower them to each backend.

A primitive is defined once (`Primitive`: its shape/dtype rule `abstract_eval`, its NumPy
`impl`, how its params print, its `kind`); transformations register their rules in
`jitviz.transforms`; backends find their rules here, keyed by the `Primitive` object:

    register_lowering(exp_p, "cpu.expr", rule)
    register_lowering(threefry2x32_p, "cuda.expr", rule, helpers=[threefry2x32_scalar])

A *target* is one rule table of one backend ("cpu.expr": the per-element expression inside a
fused CPU kernel; "cuda.pull": how a CUDA kernel reads an operand through a structural op;
...). A backend declares its targets with `declare_target`, saying which primitives each must
cover, what a rule there is called with, and optionally a `fallback` target whose rules it
reuses (both Numba targets read the shared "numba.expr" table and override what differs).
`helpers` are the plain Python functions a rule's generated text calls; the backend compiles
them for its target (an `njit` function in the CPU kernels' `rt` namespace, a CUDA device
function). `tests/test_lowering_registry.py` fails when a declared target lacks a rule for a
primitive it must cover.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

PRIMITIVES: dict[str, "Primitive"] = {}


class Primitive:
    def __init__(self, name: str, *, abstract_eval: Callable, impl: Callable,
                 multiple_results: bool = False, pp_params: Callable | None = None,
                 kind: str = "other", effectful: bool = False, call_param: str | None = None,
                 sub_io: Callable | None = None):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is defined twice")
        self.name = name
        self.abstract_eval = abstract_eval  # (*avals, **params) -> aval or [avals]
        self.impl = impl  # (*ndarrays, **params) -> ndarray or [ndarrays]
        self.multiple_results = multiple_results
        self._pp_params = pp_params
        # "elementwise", "reduction" (an associative monoid: sum, prod, max, min, and, or),
        # "arg_reduction", "scan_op", "structural", "dot", "control" or "other": what a pass or a
        # backend may assume about it (fusion fuses elementwise ones, DCE keeps effectful ones)
        self.kind = kind
        self.effectful = effectful  # never removed by DCE, runs on every call
        # a call primitive (jit, fused): the param holding the called jaxpr, which is printed
        # with the caller's variable names for its inputs and outputs (JAX's jit printing rule)
        self.call_param = call_param
        # for primitives with sub-jaxprs: (params, invars, outvars, param key) -> (outer atoms
        # feeding the sub-jaxpr's invars, outer vars its outvars become; None where none)
        self.sub_io = sub_io or _same_io
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


# --- lowering rules --------------------------------------------------------------------------

class Lowering(NamedTuple):
    rule: object  # what the target's renderer calls (its signature is the target's `doc`)
    helpers: tuple  # ((name, python function), ...) the rule's generated text calls


class Target(NamedTuple):
    name: str
    needs: Callable  # Primitive -> bool: the primitives this table must have a rule for
    fallback: str | None  # a table whose rules apply where this one has none
    doc: str


TARGETS: dict[str, Target] = {}
_RULES: dict[str, dict[Primitive, Lowering]] = {}


def declare_target(name: str, *, needs: Callable = lambda prim: False,
                   fallback: str | None = None, doc: str = "") -> Target:
    """Declare a rule table (idempotent: a backend module imported twice declares it again)."""
    target = Target(name, needs, fallback, doc)
    TARGETS[name] = target
    _RULES.setdefault(name, {})
    return target


def register_lowering(prim: Primitive, target: str, rule, helpers=()) -> None:
    """Make `rule` lower `prim` on `target`. `helpers`: functions the rule's text calls, each
    a plain function (named by its `__name__`) or a `(name, function)` pair."""
    if not isinstance(prim, Primitive):
        raise TypeError(f"register_lowering takes a Primitive, got {prim!r}")
    pairs = tuple(h if isinstance(h, tuple) else (h.__name__, h) for h in helpers)
    _RULES.setdefault(target, {})[prim] = Lowering(rule, pairs)


def lowering(prim: Primitive, target: str) -> Lowering | None:
    """The rule for `prim` on `target`, following the target's fallback chain."""
    while target is not None:
        found = _RULES.get(target, {}).get(prim)
        if found is not None:
            return found
        declared = TARGETS.get(target)
        target = declared.fallback if declared else None
    return None


def lowering_rule(prim: Primitive, target: str):
    found = lowering(prim, target)
    return None if found is None else found.rule


def has_lowering(prim: Primitive, target: str) -> bool:
    return lowering(prim, target) is not None


def lowered_primitives(target: str) -> set[Primitive]:
    """Every primitive with a rule on `target` (its fallbacks included)."""
    prims: set[Primitive] = set()
    while target is not None:
        prims |= set(_RULES.get(target, {}))
        declared = TARGETS.get(target)
        target = declared.fallback if declared else None
    return prims


def lowering_helpers(target: str) -> dict[str, Callable]:
    """name -> function of every helper the rules of `target` (and its fallbacks) call."""
    chain = []
    while target is not None:
        chain.append(target)
        declared = TARGETS.get(target)
        target = declared.fallback if declared else None
    found: dict[str, Callable] = {}
    for name in reversed(chain):  # a target's own helpers win over its fallback's
        for low in _RULES.get(name, {}).values():
            found.update(low.helpers)
    return found


def missing_lowerings(target: str) -> list[str]:
    """Names of the registered primitives `target` must cover and has no rule for."""
    needs = TARGETS[target].needs
    return sorted(p.name for p in PRIMITIVES.values()
                  if needs(p) and not has_lowering(p, target))
