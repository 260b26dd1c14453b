"""The `jax.lax` conveniences composed from other lax functions: `split`, `tile`,
`broadcast_to_rank` and `batch_matmul` (the one-axis slicing helpers, `collapse`, `reciprocal`
and `full_like` are `in_dim.py`'s). Each emits the equations JAX's does."""
from __future__ import annotations

import operator

import numpy as np

from .in_dim import slice_in_dim


def _lax():
    from .. import lax
    return lax


def _axis(axis, ndim, name):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def split(operand, sizes, axis=0):
    """Consecutive pieces of `sizes` along `axis` (they must add up to its length)."""
    lax = _lax()
    shape = lax.aval_of(operand).shape
    axis = _axis(axis, len(shape), "split")
    sizes = [operator.index(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {shape[axis]} "
                         f"of the operand shape {shape} (and each size non-negative)")
    bounds = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(lo), int(hi), 1, axis)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def tile(operand, multiples):
    """`operand` repeated `multiples[i]` times along each dimension i."""
    lax = _lax()
    shape = lax.aval_of(operand).shape
    multiples = tuple(operator.index(m) for m in multiples)
    if len(multiples) != len(shape):
        raise ValueError(f"tile: multiples {multiples} must have one entry per dimension of "
                         f"the operand's shape {shape}")
    if any(m < 0 for m in multiples):
        raise ValueError(f"tile: multiples {multiples} must be non-negative")
    interleaved = tuple(d for pair in zip(multiples, shape) for d in pair)
    wide = lax.broadcast_in_dim(operand, interleaved, tuple(range(1, 2 * len(shape), 2)))
    return lax.reshape(wide, tuple(m * d for m, d in zip(multiples, shape)))


def broadcast_to_rank(x, rank):
    """`x` with leading 1s added up to `rank` dimensions."""
    lax = _lax()
    ndim = lax.aval_of(x).ndim
    if ndim >= rank:
        return x
    return lax.broadcast(x, (1,) * (rank - ndim))


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) dimensions: [..., m, k] @ [..., k, n]."""
    lax = _lax()
    ls, rs = lax.aval_of(lhs).shape, lax.aval_of(rhs).shape
    if len(ls) < 2 or len(ls) != len(rs) or ls[:-2] != rs[:-2]:
        raise ValueError("batch_matmul: the operands need the same batch dimensions and rank "
                         f">= 2, got shapes {ls} and {rs}")
    batch = tuple(range(len(ls) - 2))
    return lax.dot_general(lhs, rhs, (((len(ls) - 1,), (len(rs) - 2,)), (batch, batch)),
                           precision=precision)
