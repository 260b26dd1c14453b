"""More array manipulation, composed from existing jnp/lax functions as JAX defines it:
`append`, `insert`, `delete`, `resize`, `tri`, `diagflat`, `dstack`, `unstack`, `choose`,
`compress`, `extract`, `place`, `put`, `flatnonzero`, `trim_zeros`, `fromfunction`,
`apply_over_axes`, `matrix_transpose`, `rollaxis`, `array_equiv`, `mask_indices`.

Where the result's shape depends on values (delete's indices, compress's condition,
trim_zeros), those values must be concrete, or a static `size=` given where JAX has one.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, canonical_axis, is_traced, promote, to_dtype
from .creation import arange, asarray, zeros
from .indexing import nonzero, where
from .shape import (broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape,
                    swapaxes)


def _operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


def _axis_or_flat(arr, axis):
    """(arr, axis): the flattened array and axis 0 when axis is None."""
    arr = _operand(arr)
    if axis is None:
        return ravel(arr), 0
    return arr, canonical_axis(axis, aval(arr).ndim)


def append(arr, values, axis=None):
    """arr with values added at the end (both flattened when axis is None)."""
    if axis is None:
        return concatenate([ravel(_operand(arr)), ravel(_operand(values))])
    return concatenate([_operand(arr), _operand(values)], axis=axis)


# --- delete / insert ----------------------------------------------------------------------------

def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries `obj` (an index, indices or a slice) along `axis`. The
    indices must be concrete, unless assume_unique_indices=True promises that traced ones
    are unique and in bounds."""
    a, axis = _axis_or_flat(arr, axis)
    n = aval(a).shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(n)[obj]
    if assume_unique_indices and is_traced(obj):
        return _delete_traced(a, obj, axis, n)
    obj = explain.concrete_or_error(
        obj, "The error arose in the obj argument of jnp.delete: the deleted indices decide "
             "the result's shape. Pass assume_unique_indices=True if they are unique and in "
             "bounds.")
    idx = np.asarray(obj)
    if idx.dtype == np.bool_:
        raise ValueError("jnp.delete(arr, obj): obj must be an integer index, indices or a "
                         "slice; for a boolean mask use arr[~mask]")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"jnp.delete(arr, obj): obj must be integers, got {idx.dtype}")
    idx = idx.ravel()
    out_of_bounds = (idx < -n) | (idx >= n)
    if np.any(out_of_bounds):
        raise ValueError(f"jnp.delete: index {idx[out_of_bounds][0]} is out of bounds for "
                         f"axis {axis} with size {n}")
    keep = np.ones(n, bool)
    keep[idx % n if n else idx] = False
    return _take_static(a, np.flatnonzero(keep), axis)


def _take_static(a, positions, axis):
    from .indexing import take
    return take(a, asarray(positions.astype(dtypes.default_int())), axis=axis)


def _delete_traced(a, obj, axis, n):
    """Output j reads input j + (number of deleted indices at or below it), found with a
    search in the sorted indices minus their rank."""
    from .histograms import searchsorted
    from .indexing import take
    from .sorting import sort
    from .ufuncs import add, subtract
    idx = ravel(obj)
    k = aval(idx).shape[0]
    idx = where(idx < 0, add(idx, n), idx)
    shifted = subtract(sort(idx), arange(k, dtype=aval(idx).dtype))
    out = arange(n - k, dtype=dtypes.default_int())
    source = add(out, searchsorted(shifted, out, side="right"))
    return take(a, source, axis=axis)


def insert(arr, obj, values, axis=None):
    """arr with `values` inserted before index `obj` (a block of values at one index), or
    before each of the indices `obj` (one value each), along `axis`."""
    a, axis = _axis_or_flat(arr, axis)
    n = aval(a).shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(n)[obj]
    idx = obj if is_traced(obj) else asarray(obj)
    if not dtypes.is_integer(aval(idx).dtype):
        raise ValueError(f"jnp.insert(): index array must be integer typed; got "
                         f"{aval(idx).dtype}")
    values = to_dtype(_operand(values), aval(a).dtype, aval(a).weak_type)
    if aval(idx).ndim > 1:
        raise ValueError("jnp.insert(): obj must be a scalar or a one-dimensional array")
    if aval(idx).ndim == 0 or aval(idx).shape == (1,):
        idx = reshape(idx, ())
        # a block: values get a's rank, their first axis running along `axis`
        nd = aval(a).ndim
        values = reshape(values, (1,) * (nd - aval(values).ndim) + aval(values).shape)
        values = moveaxis(values, 0, axis)
        k = aval(values).shape[axis]
        new_at = arange(k, dtype=aval(idx).dtype) + _insert_position(idx, n)
    else:
        k = aval(idx).shape[0]
        # one value before each index; equal indices keep their order (a stable sort)
        from .sorting import argsort
        pos = _insert_position(idx, n)
        order = argsort(pos)
        new_at = zeros(k, aval(pos).dtype).at[order].set(
            pos[order] + arange(k, dtype=aval(pos).dtype))
    shape = list(aval(a).shape)
    shape[axis] = k
    values = broadcast_to(values, shape)
    is_new = zeros(n + k, np.bool_).at[new_at].set(True)
    old_at = nonzero(~is_new, size=n)[0]
    out_shape = list(aval(a).shape)
    out_shape[axis] = n + k
    out = zeros(tuple(np.moveaxis(np.empty(out_shape, bool), axis, 0).shape), aval(a).dtype)
    out = out.at[new_at].set(moveaxis(values, axis, 0)).at[old_at].set(moveaxis(a, axis, 0))
    return moveaxis(out, 0, axis)


def _insert_position(idx, n):
    """A possibly negative index into an axis of n, as a position in [0, n]."""
    from .ufuncs import add, clip
    return clip(where(idx < 0, add(idx, n), idx), 0, n)


# --- shapes -----------------------------------------------------------------------------------

def resize(a, new_shape):
    """a's elements, repeated in order as often as needed, in `new_shape`."""
    from .shape import tile
    a = ravel(_operand(a))
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    new_shape = tuple(operator.index(explain.concrete_or_error(
        d, "It arose in the new_shape argument of jnp.resize, which must be static."))
        for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    total, n = math.prod(new_shape), aval(a).shape[0]
    if n == 0 or total == 0:
        return zeros(new_shape, aval(a).dtype)
    repeats = -(-total // n)
    return reshape(tile(a, repeats)[:total], new_shape)


def tri(N, M=None, k=0, dtype=None):
    """An N x M array with ones at and below the k-th diagonal (default dtype float)."""
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    dtype = dtypes.canonical_creation_dtype(dtype) or dtypes.default_float()
    rows = lax.broadcasted_iota(dtypes.default_int(), (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.default_int(), (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(rows, to_dtype(k, dtypes.default_int())),
                                           cols), np.dtype(dtype))


def diagflat(v, k=0):
    """A 2-D array with the flattened v on its k-th diagonal."""
    from .extra import diag
    out = diag(ravel(_operand(v)), k)
    # JAX writes v into zeros of its dtype: strongly typed whatever v is
    return lax.convert_element_type(out, aval(out).dtype, False)


def dstack(tup, dtype=None):
    """Arrays stacked along the third axis (each made at least 3-D)."""
    from .extra import atleast_3d
    from .shape import _at_least_3d, _concatenate_rows, _rows_shaped, _whole_array
    if _whole_array(tup):
        return _concatenate_rows(_rows_shaped(tup, _at_least_3d, dtype), 2)
    arrays = [atleast_3d(_operand(t)) for t in tup]
    return concatenate(arrays, axis=2, dtype=dtype)


def unstack(x, /, *, axis=0):
    """The slices of x along `axis`, as a tuple."""
    x = _operand(x)
    if aval(x).ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    x = moveaxis(x, canonical_axis(axis, aval(x).ndim), 0)
    return tuple(x[i] for i in range(aval(x).shape[0]))


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x = _operand(x)
    if aval(x).ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={aval(x).ndim}")
    return swapaxes(x, -1, -2)


def rollaxis(a, axis, start=0):
    """`axis` moved to just before position `start` (NumPy's older moveaxis)."""
    a = _operand(a)
    nd = aval(a).ndim
    axis = canonical_axis(axis, nd)
    start = operator.index(start)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd} <= start <= {nd}")
    start = start + nd if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def array_equiv(a1, a2):
    """Whether a1 and a2 have equal elements after broadcasting (False if they cannot)."""
    from .reductions import all as all_
    from .ufuncs import equal
    a1, a2 = _operand(a1), _operand(a2)
    try:
        np.broadcast_shapes(aval(a1).shape, aval(a2).shape)
    except ValueError:
        return asarray(False)
    return all_(equal(a1, a2))


# --- selecting by condition or index ----------------------------------------------------------

def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] for each i (a and the choices broadcast together); mode 'raise'
    checks a is in bounds (concrete a only, as in JAX), 'wrap' wraps, 'clip' clamps."""
    from .extra import take_along_axis
    from .shape import broadcast_arrays, stack
    from .ufuncs import clip, remainder
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = _operand(a)
    if not dtypes.is_integer(aval(a).dtype):
        raise TypeError(f"jnp.choose: a must be an integer array, got {aval(a).dtype}")
    choices = [_operand(c) for c in choices]
    n = len(choices)
    if mode == "raise":
        value = np.asarray(explain.concrete_or_error(
            a, "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
               "mode='wrap' or mode='clip' instead."))
        if np.any((value < 0) | (value >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *choices = broadcast_arrays(a, *choices)
    picked = take_along_axis(stack(promote(*choices), axis=0), expand_dims(a, 0), 0)
    return reshape(picked, aval(a).shape)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-D `condition` is true (a flattened when
    axis is None); size= makes the length static (padding with fill_value)."""
    from .indexing import take
    from .ufuncs import _to_bool
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = _to_bool(_operand(condition))
    if aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    a, axis = _axis_or_flat(a, axis)
    n = aval(a).shape[axis]
    m = aval(cond).shape[0]
    if m > n:  # NumPy's rule: the extra entries may only be False
        extra = explain.concrete_or_error(cond[n:], "The error arose in jnp.compress: a "
                                                    "condition longer than the axis.")
        if np.any(np.asarray(extra)):
            raise IndexError(f"index {n + int(np.argmax(np.asarray(extra)))} is out of "
                             f"bounds for axis {axis} with size {n}")
        cond = cond[:n]
    elif m < n:
        a = take(a, arange(m), axis=axis)
    if size is None:
        cond = explain.concrete_or_error(
            cond, "The error arose in jnp.compress: the number of true conditions decides "
                  "the result's shape. Pass a static size= to pad or truncate the result.")
        return take(a, nonzero(cond)[0], axis=axis)
    size = operator.index(size)
    kept = take(a, nonzero(cond, size=size)[0], axis=axis) if aval(cond).shape[0] else \
        zeros(tuple(size if d == axis else s for d, s in enumerate(aval(a).shape)),
              aval(a).dtype)
    from .reductions import sum as sum_
    shape = [1] * aval(a).ndim
    shape[axis] = size
    valid = reshape(arange(size) < sum_(cond), shape)
    return where(valid, kept, to_dtype(asarray(fill_value), aval(a).dtype))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened arr where the flattened condition is nonzero."""
    from .ufuncs import _to_bool
    return compress(ravel(_to_bool(_operand(condition))), ravel(_operand(arr)), size=size,
                    fill_value=fill_value)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened a."""
    return nonzero(ravel(_operand(a)), size=size, fill_value=fill_value)[0]


def _no_inplace(name, inplace):
    if inplace:
        raise ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays "
                         f"are immutable. Pass inplace=False to instead return an updated "
                         f"array.")


def place(arr, mask, vals, *, inplace=True):
    """arr with its elements where mask is true replaced by vals, in order, repeated."""
    from .reductions import cumsum
    from .ufuncs import _to_bool, remainder, subtract
    _no_inplace("place", inplace)
    a = _operand(arr)
    m = _to_bool(_operand(mask))
    if aval(m).shape != aval(a).shape:
        raise ValueError(f"place: arr and mask must have the same shape, got "
                         f"{aval(a).shape} and {aval(m).shape}")
    vals = ravel(to_dtype(_operand(vals), aval(a).dtype))
    nv = aval(vals).shape[0]
    if nv == 0:
        raise ValueError("Cannot place values from an empty array")
    rank = subtract(cumsum(ravel(m), dtype=dtypes.default_int()), 1)
    new = reshape(vals[remainder(rank, nv)], aval(a).shape)
    return where(m, new, a)


def put(a, ind, v, mode=None, *, inplace=True):
    """The flattened a with a[ind] = v (v repeated to the number of indices), in a's
    shape; mode as for `x.at[...].set` ('clip', 'wrap', or None: out of bounds dropped)."""
    from .ufuncs import remainder
    _no_inplace("put", inplace)
    a = _operand(a)
    ind = ravel(_operand(ind))
    v = ravel(to_dtype(_operand(v), aval(a).dtype))
    if mode not in (None, "clip", "wrap", "drop", "fill", "promise_in_bounds", "raise"):
        raise ValueError(f"mode={mode!r} not understood")
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    k, nv, size = aval(ind).shape[0], aval(v).shape[0], aval(a).size
    if nv == 0 or k == 0:
        return a
    if nv != k:
        v = v[remainder(arange(k), nv)]
    if mode == "wrap":
        ind, mode = remainder(ind, size), None
    return reshape(ravel(a).at[ind].set(v, mode=None if mode == "fill" else mode),
                   aval(a).shape)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') zeros (along every axis, or
    `axis`); filt must be concrete, its values decide the shape."""
    filt = _operand(filt)
    value = np.asarray(explain.concrete_or_error(
        filt, "The error arose in jnp.trim_zeros: the number of zeros decides the result's "
              "shape."))
    trim = trim.lower()
    if not set(trim) <= {"f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    if value.ndim == 0:
        raise ValueError("trim_zeros: filt must be at least 1-dimensional")
    axes = range(value.ndim) if axis is None else [canonical_axis(ax, value.ndim) for ax in
                                                   np.atleast_1d(axis)]
    index = [slice(None)] * value.ndim
    nz = np.argwhere(value)
    for ax in axes:
        if nz.size == 0:
            index[ax] = slice(0, 0)
            continue
        start = nz[:, ax].min() if "f" in trim else 0
        stop = nz[:, ax].max() + 1 if "b" in trim else value.shape[ax]
        index[ax] = slice(int(start), int(stop))
    return filt[tuple(index)]


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function applied to the coordinates of every element of `shape`: vmapped over each
    axis, so it sees scalar coordinates, as in JAX."""
    from ..transforms import vmap
    shape = tuple(operator.index(explain.concrete_or_error(
        d, "It arose in the shape argument of jnp.fromfunction, which must be static."))
        for d in (shape if np.ndim(shape) else (shape,)))
    dtype = dtypes.canonical_creation_dtype(dtype)
    nd = len(shape)
    f = function
    for i in range(nd):  # the innermost vmap maps the last coordinate
        f = vmap(f, in_axes=tuple(0 if j == nd - 1 - i else None for j in range(nd)))
    return f(*(arange(n, dtype=dtype) for n in shape), **kwargs)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, each result kept at a's rank."""
    a = _operand(a)
    for axis in axes:
        b = func(a, axis)
        if aval(b).ndim == aval(a).ndim - 1:
            b = expand_dims(b, axis)
        elif aval(b).ndim != aval(a).ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where mask_func(ones((n, n)), k) is nonzero (e.g. jnp.triu)."""
    from .creation import ones
    return nonzero(mask_func(ones((n, n), dtypes.default_int()), k), size=size)


__all__ = ["append", "delete", "insert", "resize", "tri", "diagflat", "dstack", "unstack",
           "matrix_transpose", "rollaxis", "array_equiv", "choose", "compress", "extract",
           "flatnonzero", "place", "put", "trim_zeros", "fromfunction", "apply_over_axes",
           "mask_indices"]
