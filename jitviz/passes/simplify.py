"""Algebraic simplification that reassociates: run only with `fastmath=True`.

Chains of `add`/`sub`/`neg` (and of `mul`/`div` on inexact types) whose intermediate
results have no other use are flattened into signed terms; a term and its inverse cancel,
and literal terms are combined. So the seed's `x + y - x` becomes exactly `y` (old XLA's
answer, 0.001 in float32), where IEEE evaluation in order gives 0.0010000467. Like LLVM's
fast-math flags this assumes no NaN/inf and ignores the sign of zero; without fastmath the
pass does not run and results are those of NumPy, operation by operation.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var, literal_value
from ..core.jaxpr_util import Subst, rewrite_jaxpr
from ..core.registry import Primitive
from ..lax import primitives as P
from ._ir import atom_key, make_literal, use_counts


class Algebra(NamedTuple):
    """A group under one operation: how each primitive splits into (sign, operand) terms and
    how a list of terms is rebuilt."""
    name: str
    combine: Primitive  # `a op b`
    inverse_combine: Primitive  # `a op b^-1`
    identity: float
    accepts: str  # dtype kinds it applies to
    split: dict  # primitive -> signs of its operands (+1 / -1)
    unary_inverse: Primitive | None  # `b^-1` alone (neg), or None


ADDITIVE = Algebra("additive", P.add_p, P.sub_p, 0, "fciu",
                   {P.add_p: (1, 1), P.sub_p: (1, -1), P.neg_p: (-1,)}, P.neg_p)
# integer `div` truncates, so it is no inverse of `mul`: the multiplicative group is inexact only
MULTIPLICATIVE = Algebra("multiplicative", P.mul_p, P.div_p, 1, "fc",
                         {P.mul_p: (1, 1), P.div_p: (1, -1)}, None)
ALGEBRAS = {prim: alg for alg in (ADDITIVE, MULTIPLICATIVE) for prim in alg.split}


class _Simplifier:
    """One scope's rule. Terms are read from the scope's original producers (a substitution
    only replaces roots), their leaves through the substitution (`subst`)."""

    def __init__(self, jaxpr: Jaxpr, subst: Subst):
        self.uses = use_counts(jaxpr)
        self.producer = {v.id: e for e in jaxpr.eqns for v in e.outvars}
        self.subst = subst

    def terms(self, alg: Algebra, atom, sign, out, root: bool):
        """Flatten `atom` into (sign, atom) terms through single-use equations of `alg`."""
        eqn = self.producer.get(atom.id) if isinstance(atom, Var) else None
        expandable = eqn is not None and eqn.primitive in alg.split and \
            ALGEBRAS[eqn.primitive] is alg and (root or self.uses.get(atom.id, 0) == 1)
        if not expandable:
            out.append((sign, atom))
            return
        for s, a in zip(alg.split[eqn.primitive], eqn.invars):
            self.terms(alg, a, sign * s, out, False)

    def rule(self, eqn: Eqn):
        """New equations and the atom replacing `eqn`'s output, or None to keep it."""
        alg = ALGEBRAS.get(eqn.primitive)
        out_aval = eqn.outvars[0].aval if eqn.outvars else None
        if alg is None or out_aval.dtype.kind not in alg.accepts:
            return None
        terms: list = []
        self.terms(alg, eqn.outvars[0], 1, terms, True)
        # leaves may be outputs of equations this pass already replaced
        terms = [(sign, self.subst(a)) for sign, a in terms]
        reduced = _cancel(terms)
        reduced, changed_lits = _combine_literals(alg, reduced, out_aval)
        if len(reduced) == len(terms) and not changed_lits:
            return None
        new_eqns, atom = _rebuild(alg, reduced, eqn, out_aval)
        self.producer.update({v.id: e for e in new_eqns for v in e.outvars})
        return new_eqns, [atom]


def _cancel(terms):
    """Drop pairs (+x, -x) of the same atom."""
    pending: dict = {}
    out = []
    for sign, a in terms:
        k = atom_key(a)
        opposite = pending.get((k, -sign))
        if opposite:
            out[opposite.pop()] = None
            continue
        pending.setdefault((k, sign), []).append(len(out))
        out.append((sign, a))
    return [t for t in out if t is not None]


def _combine_literals(alg: Algebra, terms, aval):
    lits = [(s, a) for s, a in terms if isinstance(a, Literal)]
    if len(lits) < 2:
        return terms, False
    op = np.add if alg is ADDITIVE else np.multiply
    inv = np.negative if alg is ADDITIVE else np.reciprocal
    acc = np.asarray(alg.identity, aval.dtype)
    with np.errstate(all="ignore"):
        for s, a in lits:
            v = literal_value(a)
            acc = op(acc, v if s > 0 else inv(v)).astype(aval.dtype)
    rest = [(s, a) for s, a in terms if not isinstance(a, Literal)]
    return rest + [(1, make_literal(acc, ShapedArray((), aval.dtype, aval.weak_type)))], True


def _rebuild(alg: Algebra, terms, eqn: Eqn, out_aval: ShapedArray):
    """Equations computing the product/sum of `terms`, typed exactly as `eqn`'s output."""
    new: list[Eqn] = []

    def emit(prim, args, aval, **params):
        v = Var(aval)
        new.append(Eqn(prim, args, [v], params, eqn.source))
        return v

    def joined(a, b):
        shape = a.aval.shape if len(a.aval.shape) >= len(b.aval.shape) else b.aval.shape
        return ShapedArray(shape, out_aval.dtype, a.aval.weak_type and b.aval.weak_type)

    positive = [a for s, a in terms if s > 0]
    negative = [a for s, a in terms if s < 0]
    if positive:
        acc = positive[0]
        for a in positive[1:]:
            acc = emit(alg.combine, [acc, a], joined(acc, a))
    elif negative and alg.unary_inverse:
        first = negative.pop(0)
        acc = emit(alg.unary_inverse, [first], first.aval)
    else:
        acc = make_literal(alg.identity, ShapedArray((), out_aval.dtype, True))
    for a in negative:
        acc = emit(alg.inverse_combine, [acc, a], joined(acc, a))
    if acc.aval.shape != out_aval.shape:
        acc = emit(P.broadcast_in_dim_p, [acc], acc.aval.update(shape=out_aval.shape),
                   shape=out_aval.shape, broadcast_dimensions=())
    if acc.aval.weak_type != out_aval.weak_type:
        acc = emit(P.convert_element_type_p, [acc], out_aval, new_dtype=out_aval.dtype,
                   weak_type=out_aval.weak_type)
    return new, acc


def simplify(closed: ClosedJaxpr, *, fastmath: bool = False) -> ClosedJaxpr:
    if not fastmath:
        return closed
    j, changed = rewrite_jaxpr(closed.jaxpr, lambda jaxpr, subst: _Simplifier(jaxpr, subst).rule)
    return closed.replace(jaxpr=j) if changed else closed
