"""The `jax.lax` conveniences composed from other lax functions: slicing and indexing along one
axis (`slice_in_dim`, `index_in_dim`, `dynamic_slice_in_dim`, `dynamic_index_in_dim`,
`dynamic_update_slice_in_dim`, `dynamic_update_index_in_dim`), `split`, `collapse`, `tile`,
`broadcast_to_rank`, `batch_matmul`, `reciprocal` and `full_like`. Each emits the equations
JAX's does (a `slice`, `dynamic_slice`, `reshape`, `dot_general`, `integer_pow[y=-1]`, ...)."""
from __future__ import annotations

import operator

import numpy as np


def _lax():
    from .. import lax
    return lax


def _axis(axis, ndim, name):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`operand[start:limit:stride]` along `axis` (None and negative bounds as in Python)."""
    lax = _lax()
    shape = lax.aval_of(operand).shape
    axis = _axis(axis, len(shape), "slice_in_dim")
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = (start + size if start < 0 else start), (limit + size if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return lax.slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The `index`-th entry along `axis` (a Python int; negative counts from the end)."""
    lax = _lax()
    shape = lax.aval_of(operand).shape
    axis = _axis(axis, len(shape), "index_in_dim")
    index = operator.index(index)
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                         f"{shape[axis]}")
    index %= shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else lax.squeeze(out, (axis,))


def _starts(operand, start_index, axis, name):
    """Start indices: `start_index` along `axis`, zeros (of its dtype) elsewhere."""
    lax = _lax()
    ndim = lax.aval_of(operand).ndim
    axis = _axis(axis, ndim, name)
    zero = np.zeros((), lax.aval_of(start_index).dtype)
    starts = [zero] * ndim
    starts[axis] = start_index
    return starts, axis


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """`slice_size` entries along `axis` from a traced `start_index` (clamped into range)."""
    lax = _lax()
    starts, axis = _starts(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(lax.aval_of(operand).shape)
    sizes[axis] = int(slice_size)
    return lax.dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """The entry at a traced `index` along `axis`."""
    lax = _lax()
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    axis = _axis(axis, lax.aval_of(operand).ndim, "dynamic_index_in_dim")
    return out if keepdims else lax.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """`operand` with `update` written from a traced `start_index` along `axis`."""
    starts, _ = _starts(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return _lax().dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """`operand` with entry `index` along `axis` replaced by `update` (which may lack that
    axis)."""
    lax = _lax()
    ndim = lax.aval_of(operand).ndim
    axis = _axis(axis, ndim, "dynamic_update_index_in_dim")
    if lax.aval_of(update).ndim == ndim - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


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


def collapse(operand, start_dimension, stop_dimension=None):
    """Dimensions [start, stop) merged into one."""
    lax = _lax()
    shape = lax.aval_of(operand).shape
    ndim = len(shape)
    start = operator.index(start_dimension) % max(ndim, 1) if start_dimension < 0 \
        else operator.index(start_dimension)
    stop = ndim if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + ndim if stop < 0 else stop
    if not 0 <= start <= stop <= ndim:
        raise ValueError(f"collapse: dimensions [{start_dimension}, {stop_dimension}) are not "
                         f"a range of the operand's {ndim} dimensions")
    size = int(np.prod(shape[start:stop], dtype=np.int64))
    return lax.reshape(operand, shape[:start] + (size,) + shape[stop:])


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


def reciprocal(x):
    """1 / x, as `integer_pow[y=-1]`."""
    return _lax().integer_pow(x, -1)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`; a weakly
    typed `x` gives a weakly typed result, as in JAX."""
    lax = _lax()
    aval = lax.aval_of(x)
    out = lax.full(aval.shape if shape is None else shape, fill_value,
                   aval.dtype if dtype is None else dtype)
    if dtype is None and aval.weak_type:
        out = lax.convert_element_type(out, aval.dtype, True)
    return out
