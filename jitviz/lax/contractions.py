"""dot_general (lax.dot, jnp.dot, matmul, einsum): contractions over paired dimensions, with
batch dimensions (kind "dot")."""
from __future__ import annotations

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from .dtype_kinds import BOOL, NUMERIC, _check_kind, _quiet
from .elementwise import _saturating_float_to_int


def _dot_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general requires operands of the same dtype, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    _check_kind("dot_general", lhs.dtype, NUMERIC + BOOL)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general contracting/batch dimensions must pair up")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general requires contracting dimensions to have the same "
                            f"shape, got {lhs.shape} and {rhs.shape} (dims {a} and {b}).")
    batch = [lhs.shape[i] for i in lb]
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    dt = preferred_element_type or lhs.dtype
    # weak when both operands are, booleans too (JAX's standard rule for lax.dot_general;
    # jnp's products of weak booleans are strong: jitviz.numpy.linalg._product)
    weak = lhs.weak_type and rhs.weak_type
    return ShapedArray(batch + lfree + rfree, dt, weak)


def dot_general_einsum(lhs_ndim, rhs_ndim, dimension_numbers):
    """The einsum spec of a dot_general (shared by the NumPy impl and the backends)."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [None] * rhs_ndim
    for a, b in zip(lc, rc):
        rhs[b] = lhs[a]
    for a, b in zip(lb, rb):
        rhs[b] = lhs[a]
    rhs = [r or next(letters) for r in rhs]
    out = [lhs[i] for i in lb] + [l for i, l in enumerate(lhs) if i not in lc and i not in lb] \
        + [r for i, r in enumerate(rhs) if i not in rc and i not in rb]
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


def _dot_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    dt = preferred_element_type or lhs.dtype
    if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and tuple(lc) == (lhs.ndim - 1,) and \
            tuple(rc) == (0,):
        return _as_result(np.matmul(lhs, rhs) if lhs.ndim and rhs.ndim else np.dot(lhs, rhs),
                          dt)
    spec = dot_general_einsum(lhs.ndim, rhs.ndim, dimension_numbers)
    return _as_result(np.einsum(spec, lhs, rhs), dt)


def _as_result(r, dt):
    """The product in preferred_element_type, converted as convert_element_type converts
    (a float product given an integer type saturates, as in XLA)."""
    r = np.asarray(r)
    if r.dtype.kind == "f" and np.dtype(dt).kind in "iu":
        return _saturating_float_to_int(r, dt)
    return r.astype(dt, copy=False)


class _DimNums(str):
    """dimension_numbers printed as JAX does: `(([1], [0]), ([], []))`."""


def _dot_pp(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lst = lambda t: "[" + ", ".join(map(str, t)) + "]"
    dn = _DimNums(f"(({lst(lc)}, {lst(rc)}), ({lst(lb)}, {lst(rb)}))")
    # JAX hides params that are None (lax.dot leaves preferred_element_type unset)
    rest = [(k, params[k]) for k in ("precision", "preferred_element_type")
            if params[k] is not None]
    rest = [(k, _DimNums("(" + ", ".join(map(repr, v)) + ")") if k == "precision" and
             isinstance(v, tuple) else v) for k, v in rest]  # (Precision.HIGHEST, ...)
    return [("dimension_numbers", dn)] + rest


dot_general_p = primitive("dot_general", abstract_eval=_dot_rule, impl=_quiet(_dot_impl),
                          pp_params=_dot_pp, kind="dot")
