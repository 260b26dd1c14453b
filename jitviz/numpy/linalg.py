"""Products: dot, matmul (`@`), vdot, inner, outer, tensordot, einsum-free."""
from __future__ import annotations

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, promote


def _product(a, b, dimension_numbers, precision=None, preferred_element_type=None):
    """`lax.dot_general` as jnp's products call it: JAX types their result by promotion,
    where a boolean is never weak (`jnp.vdot` of weak booleans is strong; `lax.dot` keeps
    the weak type)."""
    out = lax.dot_general(a, b, dimension_numbers, precision, preferred_element_type)
    if aval(out).weak_type and aval(out).dtype == np.bool_:
        return lax.convert_element_type(out, np.bool_, False)
    return out


def _dot_operands(a, b):
    """The operands of a product, in one dtype. JAX hands mixed dtypes to dot_general with
    preferred_element_type; jitviz's dot_general takes one dtype, so only an operand of
    another dtype is converted (a difference in weak type alone needs no convert), to the
    promoted weak type: the product of an int32 array and a Python float is weak."""
    from ._core import _scalarize, to_dtype
    a, b = _scalarize(a), _scalarize(b)
    avals = [aval(a), aval(b)]
    dt, weak = dtypes.result_type(*[(v.dtype, v.weak_type) for v in avals])
    return [x if v.dtype == dt else to_dtype(x, dt, weak)
            for x, v in zip((a, b), avals)]


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's `dot`: contract a's last axis with b's second-to-last (or only) axis; with a
    scalar operand, a dot_general that contracts nothing (as JAX)."""
    a, b = _dot_operands(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 0 or nb == 0:
        contract = ((), ())
    else:
        contract = ((na - 1,), (0 if nb == 1 else nb - 2,))
    return _product(a, b, (contract, ((), ())), precision, preferred_element_type)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """`a @ b` (JAX's algorithm): vectors are contracted directly, batch dimensions of size 1
    are squeezed, a batch dimension only one side has is a free dimension of that side, and
    the result is transposed into NumPy's order."""
    a, b = _dot_operands(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             "ndim 0")
    a_mat, b_mat = len(sa) > 1, len(sb) > 1
    nbatch = max(len(sa) - 2 if a_mat else 0, len(sb) - 2 if b_mat else 0)
    pad = lambda s, mat: (None,) * (nbatch - (len(s) - 2 if mat else 0)) + (s[:-2] if mat else ())
    try:
        plan = _matmul_plan(pad(sa, a_mat), pad(sb, b_mat), sa, sb)
    except ValueError as e:  # name the line and the arguments behind a and b
        raise explain.operand_error(e, (a, b)) from None
    (a_sq, b_sq, both_sq, a_bd, b_bd, idx_batch, idx_a, idx_b) = plan
    if a_mat:
        idx_a.append(nbatch)
    if b_mat:
        idx_b.append(nbatch + a_mat)
    perm = [int(i) for i in np.argsort(idx_batch + idx_a + idx_b)]
    a = lax.squeeze(a, a_sq) if a_sq else a
    b = lax.squeeze(b, b_sq) if b_sq else b
    contract = ((aval(a).ndim - 1,), (aval(b).ndim - 1 - b_mat,))
    out = _product(a, b, (contract, (tuple(a_bd), tuple(b_bd))), precision,
                   preferred_element_type)
    out = lax.transpose(out, perm)
    return lax.expand_dims(out, tuple(both_sq)) if both_sq else out


def _matmul_plan(a_batch, b_batch, sa, sb):
    """Classify each broadcast batch dimension (None where an operand lacks it)."""
    a_sq, b_sq, both_sq, a_bd, b_bd = [], [], [], [], []
    idx_batch, idx_a, idx_b = [], [], []
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch)):
        if ba is None:
            idx_b.append(i)
        elif bb is None:
            idx_a.append(i)
        elif ba == 1 and bb == 1:
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
            both_sq.append(i)
        elif ba == 1:
            idx_b.append(i)
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
        elif bb == 1:
            idx_a.append(i)
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
        elif ba == bb:
            a_bd.append(len(idx_batch) + len(idx_a))
            b_bd.append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {sa} and {sb}")
    return a_sq, b_sq, both_sq, a_bd, b_bd, idx_batch, idx_a, idx_b


def vdot(a, b):
    from .shape import ravel
    from .ufuncs import conj
    return dot(conj(ravel(a)), ravel(b))


def inner(a, b):
    a, b = promote(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 0 or nb == 0:
        from .ufuncs import multiply
        return multiply(a, b)
    return _product(a, b, (((na - 1,), (nb - 1,)), ((), ())))


def outer(a, b):
    from .shape import ravel
    from .ufuncs import multiply
    a, b = ravel(a), ravel(b)
    return multiply(lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)))


def tensordot(a, b, axes=2):
    a, b = promote(a, b)
    na = aval(a).ndim
    if isinstance(axes, int):
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
    return _product(a, b, ((ca, cb), ((), ())))


def trace(a, offset=0, axis1=0, axis2=1):
    from ._core import canonical_axis, to_dtype
    from .creation import eye
    from .indexing import where
    from .reductions import sum
    from .shape import moveaxis
    (a,) = promote(a)
    s = aval(a).shape
    axis1, axis2 = canonical_axis(axis1, len(s)), canonical_axis(axis2, len(s))  # JAX's errors
    # the diagonal selected, not multiplied by a 0/1 mask: a NaN off the diagonal (or a
    # diagonal past the edge, an empty one: 0) does not count
    mask = eye(s[axis1], s[axis2], k=offset, dtype=np.bool_)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    return sum(where(mask, a, to_dtype(0, aval(a).dtype)), axis=(-2, -1))


# `jnp.linalg`'s decompositions, solves and norms (jitviz.numpy.linalg is jnp.linalg)
from .linalg_solvers import (EighResult, EigResult, QRResult, SlogdetResult,  # noqa: E402,F401
                             SVDResult, cholesky, cond, det, eig, eigh, eigvals, eigvalsh, inv,
                             lstsq, matrix_norm, matrix_power, matrix_rank, matrix_transpose,
                             multi_dot, norm, pinv, qr, slogdet, solve, svd, svdvals,
                             tensorsolve, vector_norm)
