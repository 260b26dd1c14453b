"""Products: dot, matmul (`@`), vdot, inner, outer, tensordot, einsum-free."""
from __future__ import annotations

from .. import lax
from ._core import aval, broadcast_to_shape, promote


def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's `dot`: scalars multiply; otherwise contract a's last axis with b's
    second-to-last (or only) axis."""
    a, b = promote(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 0 or nb == 0:
        from .ufuncs import multiply
        return multiply(a, b)
    contract_b = 0 if nb == 1 else nb - 2
    return lax.dot_general(a, b, (((na - 1,), (contract_b,)), ((), ())), precision,
                           preferred_element_type)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """`a @ b` with NumPy's broadcasting of batch dimensions."""
    a, b = promote(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions (scalars "
                         "are not allowed; use * instead)")
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        a = lax.reshape(a, (1,) + sa)
    if b1:
        b = lax.reshape(b, sb + (1,))
    sa, sb = aval(a).shape, aval(b).shape
    import numpy as np
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    a = broadcast_to_shape(a, batch + sa[-2:])
    b = broadcast_to_shape(b, batch + sb[-2:])
    nb = len(batch)
    bd = tuple(range(nb))
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)), precision,
                          preferred_element_type)
    if a1:
        out = lax.squeeze(out, (nb,))
    if b1:
        out = lax.squeeze(out, (aval(out).ndim - 1,))
    return out


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
    return lax.dot_general(a, b, (((na - 1,), (nb - 1,)), ((), ())))


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
    return lax.dot_general(a, b, ((ca, cb), ((), ())))


def trace(a, offset=0, axis1=0, axis2=1):
    from .creation import eye
    from .reductions import sum
    from .ufuncs import multiply
    (a,) = promote(a)
    s = aval(a).shape
    mask = eye(s[axis1], s[axis2], k=offset, dtype=aval(a).dtype)
    from .shape import moveaxis
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    return sum(multiply(a, mask), axis=(-2, -1))
