"""Walking and rewriting jaxprs: the loops the passes, the transformations, the printer and the
viewers share.

    for eqn in all_eqns(jaxpr): ...             # every equation, each body's after its equation
    for body in sub_jaxprs(eqn): ...            # the jaxprs an equation's params hold
    new, changed = rewrite_jaxpr(jaxpr, rule)   # substitute and recurse: a pass is its rule

The IR is immutable: rewriting builds new equations and jaxprs, and hands back the very same
object wherever nothing changed (so "did this pass change anything" is an identity test, and a
body shared by several equations stays shared).
"""
from __future__ import annotations

import weakref

from typing import Callable, Iterator, Optional

from .ir import ClosedJaxpr, Eqn, Jaxpr, Var

# --- sub-jaxprs --------------------------------------------------------------------------------


def holds_jaxprs(value) -> bool:
    """Whether a param value is a jaxpr (a body, a call's or a kernel's jaxpr) or a tuple of
    them (a cond's branches)."""
    items = value if isinstance(value, tuple) else (value,)
    return bool(items) and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in items)


def jaxpr_params(eqn: Eqn) -> Iterator[tuple[str, tuple]]:
    """(param name, the jaxprs it holds, open or closed) for each param of `eqn` holding any."""
    for key, value in eqn.params.items():
        if holds_jaxprs(value):
            yield key, value if isinstance(value, tuple) else (value,)


def open_jaxpr(j) -> Jaxpr:
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def sub_jaxprs(eqn: Eqn) -> Iterator[Jaxpr]:
    """The jaxprs an equation's params hold (control-flow bodies, calls, fused kernels)."""
    for _, items in jaxpr_params(eqn):
        for j in items:
            yield open_jaxpr(j)


def all_eqns(jaxpr: Jaxpr) -> Iterator[Eqn]:
    """Every equation of `jaxpr`, each followed by those of its sub-jaxprs, depth first."""
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in sub_jaxprs(eqn):
            yield from all_eqns(sub)


def map_sub_jaxprs(eqn: Eqn, fn: Callable[[Jaxpr], Jaxpr], memo: dict) -> Eqn:
    """`eqn` with `fn` applied to each sub-jaxpr (`eqn` itself if `fn` changed none). A jaxpr
    shared by several equations is mapped once (`memo`, keyed by identity), so it stays
    shared."""
    params = {}
    for key, value in eqn.params.items():
        params[key] = _map_param(value, fn, memo) if holds_jaxprs(value) else value
    if all(params[k] is v for k, v in eqn.params.items()):
        return eqn
    return eqn.replace(params=params)


def _map_param(value, fn, memo):
    if isinstance(value, tuple):
        new = tuple(_map_param(j, fn, memo) for j in value)
        return value if all(a is b for a, b in zip(new, value)) else new
    # the memo keeps each key's jaxpr alive: a jaxpr a pass builds and drops mid-pass (a
    # cond's pruned branches) could otherwise free its id for another, which would then be
    # "found" and replaced by the first one's result
    hit = memo.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if isinstance(value, ClosedJaxpr):
        j = fn(value.jaxpr)
        new = value if j is value.jaxpr else value.replace_jaxpr(j)
    else:
        new = fn(value)
    memo[id(value)] = (value, new)
    return new


# --- effects and descriptions ------------------------------------------------------------------

_effects_memo: dict[int, tuple[object, bool]] = {}


def has_effects(jaxpr: Jaxpr) -> bool:
    """Whether any equation of `jaxpr` is effectful (memoized: bodies are asked often). The
    memo holds a weak reference: it must not keep programs (and the host callbacks their
    equations hold) alive after their jitted function is gone."""
    hit = _effects_memo.get(id(jaxpr))
    if hit is not None and hit[0]() is jaxpr:
        return hit[1]
    out = any(is_effectful(e) for e in jaxpr.eqns)
    if len(_effects_memo) > 10_000:
        _effects_memo.clear()
    _effects_memo[id(jaxpr)] = (weakref.ref(jaxpr), out)
    return out


def is_effectful(eqn: Eqn) -> bool:
    """Effectful equations (debug prints) run on every call: no pass may drop or merge them,
    nor the control flow that contains them."""
    return bool(getattr(eqn.primitive, "effectful", False)) or \
        any(has_effects(j) for j in sub_jaxprs(eqn))


def describe_eqn(eqn: Eqn) -> str:
    """`mul (at user.py:3: return x * x)`, for error messages."""
    where = ""
    if eqn.source is not None:
        where = f" (at {eqn.source.file}:{eqn.source.line}: {eqn.source.code})"
    return f"{eqn.primitive.name}{where}"


# --- substitution ------------------------------------------------------------------------------

class Subst:
    """old var -> new atom, applied to equation operands and jaxpr outputs."""

    def __init__(self):
        self.env: dict[int, object] = {}

    def __setitem__(self, var, atom):
        self.env[var.id] = atom

    def __call__(self, a):
        if isinstance(a, Var):
            return self.env.get(a.id, a)
        return a

    def eqn(self, eqn: Eqn) -> Eqn:
        if not self.env:
            return eqn
        new = tuple(self(a) for a in eqn.invars)
        if all(a is b for a, b in zip(new, eqn.invars)):
            return eqn
        return eqn.replace(invars=new)

    def atoms(self, atoms):
        return [self(a) for a in atoms]


def rename_jaxpr_copy(jaxpr: Jaxpr, args) -> tuple[list[Eqn], list]:
    """The equations of `jaxpr` with its invars bound to `args` and fresh vars for everything
    it defines (so it can be inlined more than once); returns (eqns, outputs)."""
    env = Subst()
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    eqns = []
    for e in jaxpr.eqns:
        outs = [Var(v.aval) for v in e.outvars]
        for v, n in zip(e.outvars, outs):
            env[v] = n
        eqns.append(e.replace(invars=env.atoms(e.invars), outvars=outs))
    return eqns, env.atoms(jaxpr.outvars)


# --- the rewrite driver ------------------------------------------------------------------------

#: What a rule answers for an equation: None to keep it, or (equations to emit instead, the
#: atoms that now stand for its outputs).
Replacement = Optional[tuple[list, list]]
#: A rule for one scope: called once per jaxpr (the top one, then each body as it is reached)
#: with that jaxpr and its substitution, so a rule can keep state per scope (CSE's table of
#: equations seen, fold's known values); returns the scope's `eqn -> Replacement`.
MakeRule = Callable[[Jaxpr, Subst], Callable[[Eqn], Replacement]]


def rewrite_jaxpr(jaxpr: Jaxpr, make_rule: MakeRule, *,
                  bodies_first: bool = True) -> tuple[Jaxpr, bool]:
    """Rebuild `jaxpr` equation by equation through a rule; returns (jaxpr, changed).

    Each equation has its operands substituted (outputs of equations replaced earlier are read
    from their replacements) and its sub-jaxprs rewritten by the same rule, then goes to the
    rule. `bodies_first`: the rule sees the equation with its bodies already rewritten (inline
    splices a callee whose own calls are inlined); with False it sees them as they were and
    only a kept equation's bodies are rewritten (fold inlines the branch of a known `cond` as
    traced). Unchanged jaxprs are returned as they are, so `changed` is `new is not jaxpr`.
    """
    memo: dict = {}

    def rewrite(j: Jaxpr) -> Jaxpr:
        subst = Subst()
        rule = make_rule(j, subst)
        eqns, changed = [], False
        for old in j.eqns:
            eqn = subst.eqn(old)
            if bodies_first:
                eqn = map_sub_jaxprs(eqn, rewrite, memo)
            replacement = rule(eqn)
            if replacement is None:
                if not bodies_first:
                    eqn = map_sub_jaxprs(eqn, rewrite, memo)
                eqns.append(eqn)
                changed |= eqn is not old
                continue
            new_eqns, outs = replacement
            eqns.extend(new_eqns)
            for v, o in zip(eqn.outvars, outs):
                subst[v] = o
            changed = True
        if not changed:
            return j
        return j.replace(eqns=eqns, outvars=subst.atoms(j.outvars))

    out = rewrite(jaxpr)
    return out, out is not jaxpr
