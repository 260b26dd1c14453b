"""`jax.lax`'s one-axis conveniences and `lax.reduce`, composed from existing primitives:
`slice_in_dim`, `index_in_dim`, `dynamic_slice_in_dim`, `dynamic_index_in_dim`,
`dynamic_update_slice_in_dim`, `dynamic_update_index_in_dim`, `collapse`, `full_like`,
`reciprocal` and `reduce`.

`reduce` with `lax.add` / `mul` / `max` / `min` / `bitwise_and` / `bitwise_or` (or the matching
`jnp` ufuncs) is the matching `reduce_*` primitive, as in JAX (the init value is applied once
more when it is not the operation's identity); any other computation is folded pairwise over
the reduced elements (log2(n) levels of `slice`s, one call of the computation each), then
combined with the init value — XLA too leaves the order of a reduction unspecified, so the
computation must be associative.
"""
from __future__ import annotations

import operator

import numpy as np

from . import primitives as P


def _aval(x):
    from . import aval_of
    return aval_of(x)


def _axis(axis, ndim, name):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of {ndim} "
                         "dimensions")
    return axis % ndim


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`jax.lax.slice_in_dim`: `operand[start:limit:stride]` along `axis` (None and negative
    bounds as in Python; out-of-range bounds are `slice`'s error, as in JAX)."""
    from . import slice as lax_slice
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = (v + n if v < 0 else v for v in (start, limit))  # no clamping, as JAX
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return lax_slice(operand, starts, limits, None if stride == 1 else strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """`jax.lax.index_in_dim`: one static index along `axis` (negative counts from the end)."""
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "index_in_dim")
    index = operator.index(index)
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                         f"{shape[axis]}")
    index %= shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else P.squeeze_p.bind(out, dimensions=(axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """`jax.lax.dynamic_slice_in_dim`: `slice_size` elements from a (traced) start along
    `axis`; the start is clamped into range as `dynamic_slice` clamps it."""
    from . import dynamic_slice
    shape = _aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_slice_in_dim")
    starts = [np.int32(0)] * len(shape)
    starts[axis] = start_index if allow_negative_indices else _nonnegative(start_index)
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """`jax.lax.dynamic_index_in_dim`: one (traced) index along `axis`."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    axis = _axis(axis, _aval(operand).ndim, "dynamic_index_in_dim")
    return out if keepdims else P.squeeze_p.bind(out, dimensions=(axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """`jax.lax.dynamic_update_slice_in_dim`: `update` written from a (traced) start along
    `axis` (clamped as `dynamic_update_slice` clamps)."""
    from . import dynamic_update_slice
    ndim = _aval(operand).ndim
    axis = _axis(axis, ndim, "dynamic_update_slice_in_dim")
    starts = [np.int32(0)] * ndim
    starts[axis] = start_index if allow_negative_indices else _nonnegative(start_index)
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
    """`jax.lax.dynamic_update_index_in_dim`: `update` written at one (traced) index along
    `axis` (an update without that axis gets it)."""
    from . import expand_dims
    ndim = _aval(operand).ndim
    axis = _axis(axis, ndim, "dynamic_update_index_in_dim")
    if _aval(update).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def _nonnegative(index):
    """An index used as given (JAX's allow_negative_indices=False: no wrap from the end)."""
    from ..core.trace import Tracer
    return index if isinstance(index, Tracer) else np.int32(operator.index(index))


def collapse(operand, start_dimension, stop_dimension=None):
    """`jax.lax.collapse`: dimensions [start, stop) merged into one."""
    from . import reshape
    shape = _aval(operand).shape
    stop = len(shape) if stop_dimension is None else stop_dimension
    start = operator.index(start_dimension) % (len(shape) + 1) if shape else 0
    stop = operator.index(stop) % (len(shape) + 1) if stop != len(shape) else stop
    size = int(np.prod(shape[start:stop], dtype=np.int64))
    return reshape(operand, shape[:start] + (size,) + shape[stop:])


def full_like(x, fill_value, dtype=None, shape=None):
    """`jax.lax.full_like`: an array like `x` (or of `shape`) filled with `fill_value`, of
    `x`'s dtype (and weak type) unless `dtype` is given."""
    from . import _requested, convert_element_type, full
    av = _aval(x)
    dt = _requested(dtype, "dtype") if dtype is not None else av.dtype
    weak = av.weak_type if dtype is None else False
    value = convert_element_type(fill_value, dt, weak)
    return full(av.shape if shape is None else tuple(shape), value)


def reciprocal(x):
    """`jax.lax.reciprocal`: 1 / x, as `integer_pow(x, -1)`."""
    from . import integer_pow
    return integer_pow(x, -1)


# --- reduce ------------------------------------------------------------------------------------

def _monoids():
    """computation -> (its reduce primitive, its identity for a dtype)."""
    from .. import numpy as jnp
    from . import add, bitwise_and, bitwise_or, max, min, mul

    def lowest(dt):
        return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)

    def highest(dt):
        return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)
    table = {add: (P.reduce_sum_p, lambda dt: 0), mul: (P.reduce_prod_p, lambda dt: 1),
             max: (P.reduce_max_p, lowest), min: (P.reduce_min_p, highest),
             bitwise_and: (P.reduce_and_p, lambda dt: True if dt.kind == "b" else -1),
             bitwise_or: (P.reduce_or_p, lambda dt: 0)}
    for ufunc, op in ((jnp.add, add), (jnp.multiply, mul), (jnp.maximum, max),
                      (jnp.minimum, min)):
        table[ufunc] = table[op]
    return table


def reduce(operands, init_values, computation, dimensions):
    """`jax.lax.reduce`: `computation` folded over `dimensions` of each operand (a pytree of
    arrays with matching scalar `init_values`)."""
    from ..core.trace import Tracer
    from ..tree import tree_flatten, tree_unflatten
    from . import convert_element_type
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"reduce: init_values' structure {init_tree} must match operands' "
                        f"{tree}")
    if not leaves:
        raise TypeError("reduce: operands has no arrays")
    shape = _aval(leaves[0]).shape
    if any(_aval(x).shape != shape for x in leaves):
        raise TypeError("reduce: the operands must have the same shape")
    dims = tuple(sorted({_axis(d, len(shape), "reduce") for d in dimensions}))
    inits = [convert_element_type(v, _aval(x).dtype, _aval(x).weak_type)
             if _aval(v).dtype != _aval(x).dtype else v for x, v in zip(leaves, inits)]
    monoid = _monoids().get(computation) if len(leaves) == 1 else None
    if monoid is not None:
        prim, identity = monoid
        x, init = leaves[0], inits[0]
        out = prim.bind(x, axes=dims)
        dt = _aval(x).dtype
        if isinstance(init, Tracer) or np.asarray(init) != np.asarray(identity(dt), dt):
            out = computation(init, out)
        return tree_unflatten(tree, [out])
    outs = _fold(leaves, inits, dims, lambda a, b: _call(computation, tree, a, b))
    return tree_unflatten(tree, outs)


def _call(computation, tree, a, b):
    from ..tree import tree_flatten, tree_unflatten
    out, out_tree = tree_flatten(computation(tree_unflatten(tree, a), tree_unflatten(tree, b)))
    if out_tree != tree:
        raise TypeError(f"reduce: computation returned {out_tree}, expected the operands' "
                        f"structure {tree}")
    return out


def _fold(leaves, inits, dims, combine):
    """Pairwise folding of the reduced elements (moved to one leading axis), then the init."""
    from . import broadcast_in_dim, concatenate, reshape, transpose
    shape = _aval(leaves[0]).shape
    kept = [d for d in range(len(shape)) if d not in dims]
    n = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    rest = tuple(shape[d] for d in kept)
    xs = [reshape(transpose(x, tuple(dims) + tuple(kept)), (n,) + rest) for x in leaves]
    start = [broadcast_in_dim(v, rest, ()) for v in inits]
    if n == 0:
        return start
    while n > 1:
        half = n // 2
        pairs = combine([_rows(x, 0, half) for x in xs], [_rows(x, half, 2 * half) for x in xs])
        if n % 2:
            pairs = [concatenate([p, _rows(x, 2 * half, n)], 0) for p, x in zip(pairs, xs)]
        xs, n = pairs, half + n % 2
    return combine(start, [reshape(x, rest) for x in xs])


def _rows(x, start, limit):
    from .windows import _slice_axis
    return _slice_axis(x, 0, start, limit)
