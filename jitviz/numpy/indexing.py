"""Indexing (`x[...]`), `where`, `take`: NumPy semantics lowered to slice, squeeze,
dynamic_slice, gather and select_n. A traced boolean mask is an error (the result's shape
would depend on values), as in JAX."""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..core import explain
from ..core.trace import Tracer
from ._core import aval, broadcast_args, promote, to_dtype


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition`, else `y` (three arguments); one argument is `nonzero`."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jnp.where")
    from .ufuncs import _to_bool
    c = _to_bool(condition)
    x, y = promote(x, y)
    c, x, y = broadcast_args(c, x, y, keep_scalars=False) \
        if any(aval(v).shape for v in (c, x, y)) else (c, x, y)
    return lax.select_n(c, y, x)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one array per dimension. Under a trace the
    result's length must be static: `size=` pads (with `fill_value`, else 0) or truncates,
    as in JAX."""
    if aval(a).ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        if isinstance(a, Tracer):
            raise explain.concretization_error(
                a, "nonzero", context="The size argument of jnp.nonzero must be statically "
                "specified to use jnp.nonzero within jitviz transformations: the number of "
                "nonzero elements decides the result's shape. Use jnp.where(cond, x, y) to "
                "keep the shape.")
        from ..array import as_array
        from .. import dtypes
        return tuple(as_array(i.astype(dtypes.default_int()))
                     for i in np.nonzero(np.asarray(a)))
    return _nonzero_sized(a, operator.index(size), fill_value)


def _nonzero_sized(a, size, fill_value):
    """JAX's formula: the j-th flat index is the number of positions whose running count
    of nonzeros is <= j (so past the last nonzero it is the size of `a`, whose unravelled
    coordinates are all 0), unravelled by strides, then `fill_value` past the count."""
    from .. import dtypes
    from . import creation, reductions
    from .shape import ravel
    from .ufuncs import _to_bool, floor_divide, less_equal, remainder
    dims, int_ = aval(a).shape, dtypes.default_int()
    if size == 0 or aval(a).size == 0:
        return tuple(creation.zeros(size, int_) for _ in dims)
    mask = ravel(_to_bool(a))
    seen = reductions.cumsum(mask)
    j = creation.arange(size, dtype=aval(seen).dtype)
    flat = reductions.sum(less_equal(seen[None, :], j[:, None]), axis=1, dtype=int_)
    strides = [int(np.prod(dims[k + 1:])) for k in range(len(dims))]
    out = tuple(remainder(floor_divide(flat, st), n) for st, n in zip(strides, dims))
    if fill_value is None:
        return out
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(dims)
    past = creation.arange(size) >= reductions.sum(mask)
    return tuple(where(past, f, o) for f, o in zip(fills, out))


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements as rows, (count or `size`, ndim), as JAX."""
    from .shape import atleast_1d, reshape, stack
    nd = aval(a).ndim
    out = stack(nonzero(atleast_1d(a), size=size, fill_value=fill_value), axis=1)
    return reshape(out[:, :0], (aval(out).shape[0], 0)) if nd == 0 else out


# --- x[idx] ------------------------------------------------------------------------------

def _expand_index(idx, ndim):
    if not isinstance(idx, tuple):
        idx = (idx,)
    for i in idx:  # before counting axes, as JAX (`x[1.5]` is a TypeError, never a view)
        _check_indexer_type(i)
    idx = [_canon_entry(i) for i in idx]
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in idx if i is not None and i is not Ellipsis and not _is_bool(i)) \
        + sum(np.ndim(i) for i in idx if _is_bool_array(i))
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{used} were indexed")
    if n_ell:
        # by identity: list.index would compare a NumPy index array with == (ambiguous)
        k = next(j for j, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:k] + [slice(None)] * (ndim - used) + idx[k + 1:]
    else:
        idx = idx + [slice(None)] * (ndim - used)
    return idx


def _check_indexer_type(i):
    """JAX's TypeError for an index of a float or complex type (a Python float reads as
    float64, as JAX names it)."""
    if isinstance(i, (float, complex)) and not isinstance(i, np.generic):
        dt = np.dtype(type(i))
    elif isinstance(i, (np.generic, np.ndarray, Tracer)):
        dt = i.dtype
    else:
        return
    if dt.kind in "fc":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dt.name}")


def _canon_entry(i):
    if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu":
        return int(i)  # a 0-d integer array indexes as the integer it holds (JAX)
    if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype == np.bool_:
        return bool(i)  # a 0-d mask indexes as the boolean scalar it holds
    if isinstance(i, list):
        return np.asarray(i) if not any(isinstance(e, Tracer) for e in i) else \
            _stack_tracers(i)
    return i


def _stack_tracers(items):
    from .creation import _array
    return _array(items)


def _is_bool_array(i):
    if isinstance(i, Tracer):  # 0-d too: a traced boolean scalar is a mask JAX refuses
        return i.dtype == np.bool_
    return isinstance(i, np.ndarray) and i.dtype == np.bool_


def _is_bool(i):
    """A boolean mask or a boolean scalar (`True` indexes no axis of the operand)."""
    return _is_bool_array(i) or isinstance(i, (bool, np.bool_))


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def getitem(x, idx):
    (x,) = promote(x)
    shape = aval(x).shape
    entries = _expand_index(idx, len(shape))
    # booleans: traced masks cannot work; concrete masks become integer arrays
    flat, dim = [], 0  # dim: the first axis of x the entry indexes
    for k, e in enumerate(entries):
        if _is_bool_array(e):
            if isinstance(e, Tracer):
                raise explain.boolean_index_error(e)
            covered = shape[dim:dim + np.ndim(e)]
            if np.shape(e) != covered:  # (JAX's IndexError, as NumPy's)
                raise IndexError(f"boolean index did not match shape of indexed array in "
                                 f"index {k}: got {np.shape(e)}, expected {list(covered)}")
            flat.extend(np.nonzero(e))
            dim += np.ndim(e)
        elif isinstance(e, (bool, np.bool_)):
            # NumPy's (and JAX's) 0-d mask: a new unit axis here, selected by [0] (True) or
            # by nothing (False), so it broadcasts with the other array indices as theirs does
            x = lax.expand_dims(x, (dim,))
            shape = aval(x).shape
            flat.append(np.arange(1 if e else 0))
            dim += 1
        else:
            flat.append(e)
            dim += e is not None
    entries = flat
    if not any(_is_array_index(e) for e in entries):
        # basic indexing first, then each None adds its axis to the result (as JAX)
        out = _basic(x, [e for e in entries if e is not None], shape)
        return lax.expand_dims(out, _new_axis_positions(entries))
    # None adds an axis: expand the operand, index the new axis with a full slice
    new_axes = [k for k, e in enumerate(entries) if e is None]
    if new_axes:
        x = lax.expand_dims(x, tuple(new_axes))
        entries = [slice(None) if e is None else e for e in entries]
        shape = aval(x).shape
    return _advanced(x, entries, shape)


def _new_axis_positions(entries):
    """Where each None lands in a basic-indexing result (slices keep an axis, ints drop it)."""
    out, pos = [], 0
    for e in entries:
        if e is None:
            out.append(pos)
            pos += 1
        elif isinstance(e, slice):
            pos += 1
    return tuple(out)


def _is_array_index(e):
    if isinstance(e, Tracer):
        return e.ndim > 0
    return isinstance(e, np.ndarray) and e.ndim > 0


def _check_int_dtype(e):
    dt = aval(e).dtype
    if dt == np.bool_ and isinstance(e, Tracer):  # a traced 0-d mask: JAX's IndexError
        raise explain.boolean_index_error(e)
    if dt.kind not in "iu":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dt.name}")


def _static_slices(x, entries, shape):
    """Apply static slices (and static ints as size-1 slices); returns (x, entries)."""
    starts, limits, strides, flips = [], [], [], []
    for d, (e, n) in enumerate(zip(entries, shape)):
        if isinstance(e, slice):
            for part in (e.start, e.stop, e.step):
                if isinstance(part, Tracer):
                    raise IndexError(f"Array slice indices must have static start/stop/step to "
                                     f"be used with NumPy indexing syntax, got {e}. To index a "
                                     "statically sized array at a dynamic position, use "
                                     "lax.dynamic_slice.")
            start, stop, step = e.indices(n)
            if step < 0:
                flips.append(d)
                # the same elements, in increasing order, then reversed
                count = len(range(start, stop, step))
                last = start + step * (count - 1) if count else 0
                start, stop, step = (last, start + 1, -step) if count else (0, 0, 1)
            starts.append(start)
            limits.append(max(stop, start))
            strides.append(step)
        elif _is_int_scalar(e):
            i = _clamped_static_index(int(e), n, d)
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(n)
            strides.append(1)
    if starts != [0] * len(shape) or limits != list(shape) or any(s != 1 for s in strides):
        x = lax.slice(x, starts, limits, strides if any(s != 1 for s in strides) else None)
    if flips:
        x = lax.rev(x, flips)
    return x


def _clamped_static_index(i, n, axis):
    """A static integer index: negative counts from the end, and out of bounds it is
    clamped, as JAX does (`x[10]` of 5 elements is `x[4]`, `x[-10]` is `x[0]`). An empty
    axis has no element to clamp to: an IndexError, as in JAX."""
    _check_not_empty(n, axis)
    return min(max(i + n if i < 0 else i, 0), n - 1)


def _check_not_empty(n, axis):
    if n == 0:
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")


def _dynamic_index(i, n):
    """A traced scalar index, negative values counted from the end (lax.normalize_index)."""
    _check_int_dtype(i)
    return lax.normalize_index(i, n)


def _basic(x, entries, shape):
    x = _static_slices(x, entries, shape)
    dyn = [d for d, e in enumerate(entries) if isinstance(e, Tracer)]
    if dyn:
        cur = aval(x).shape
        # lax.dynamic_slice counts negative traced starts from the end
        for d in dyn:
            _check_int_dtype(entries[d])
            _check_not_empty(cur[d], d)  # dynamic_slice clamps: it needs an element
        starts = [entries[d] if d in dyn else np.int32(0) for d in range(len(cur))]
        sizes = [1 if d in dyn else cur[d] for d in range(len(cur))]
        x = lax.dynamic_slice(x, starts, sizes)
    squeeze = [d for d, e in enumerate(entries) if _is_int_scalar(e) or isinstance(e, Tracer)]
    if squeeze:
        x = lax.squeeze(x, squeeze)
    return x


def _advanced(x, entries, shape):
    # slices first (ints count as advanced indices once an array index is present)
    pre = [e if isinstance(e, slice) else slice(None) for e in entries]
    x = _static_slices(x, pre, shape)
    shape = aval(x).shape
    adv = [d for d, e in enumerate(entries) if not isinstance(e, slice)]
    idx = []
    for d in adv:
        e = entries[d]
        if isinstance(e, Tracer):
            _check_int_dtype(e)
            idx.append(_dynamic_index(e, shape[d]) if e.ndim == 0 else
                       _normalize_traced(e, shape[d]))
        else:
            arr = np.asarray(e)
            if arr.dtype.kind not in "iu":
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with "
                                f"type {arr.dtype}")
            idx.append(_normalized_static(arr, shape[d]))
    consecutive = adv == list(range(adv[0], adv[0] + len(adv)))
    if not consecutive:  # NumPy puts the broadcast dimensions first
        rest = [d for d in range(len(shape)) if d not in adv]
        x = lax.transpose(x, adv + rest)
        axes = tuple(range(len(adv)))
    else:
        axes = tuple(adv)
    return lax.gather(x, idx, axes)


def _normalized_static(arr, n):
    """Static indices with negative ones counted from the end. Out-of-bounds ones stay out
    of bounds (the gather clamps them, its transpose drops them, as in JAX), saturated at
    -1 and n so that they fit in int32."""
    arr = arr.astype(np.int64)
    return np.clip(np.where(arr < 0, arr + n, arr), -1, n).astype(np.int32)


def _normalize_traced(e, n):
    zero = to_dtype(0, aval(e).dtype)
    return lax.select(lax.lt(e, lax.broadcast_in_dim(zero, aval(e).shape, ())),
                      lax.add(e, lax.broadcast_in_dim(to_dtype(n, aval(e).dtype),
                                                      aval(e).shape, ())), e)


def take(a, indices, axis=None, mode=None, fill_value=None):
    """`a` at `indices` along `axis` (the flattened `a` when None), as jnp.take: an
    out-of-bounds index follows `mode` -- "fill", JAX's default (`fill_value`, else NaN,
    the lowest signed or highest unsigned integer, True), "clip" (clamped; a negative index
    is 0) or "wrap" (modulo the axis' size)."""
    from ._core import canonical_axis
    from .shape import ravel
    (a,) = promote(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval(a).shape
    ax = canonical_axis(axis, len(shape))
    idx = indices if isinstance(indices, Tracer) else _static_take_indices(indices)
    _check_int_dtype(idx)
    if shape[ax] == 0:  # JAX returns the (flattened) operand itself for empty indices
        if aval(idx).size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    rule = _TAKE_MODES.get("fill" if mode is None else mode)
    if rule is None:
        raise ValueError(f"Invalid mode {mode!r} for jnp.take: choose 'fill', 'clip' or "
                         "'wrap' (jitviz, like JAX, has no 'raise' mode)")
    return rule(a, idx, ax, fill_value)


def _static_take_indices(indices):
    idx = np.asarray(_canon_entry(indices))
    return idx if idx.dtype.kind not in "iu" else idx.astype(np.int64)


def _take_clip(a, idx, ax, fill_value):
    return lax.gather(a, [_as_gather_index(idx)], (ax,))  # the gather clamps


def _take_wrap(a, idx, ax, fill_value):
    n = aval(a).shape[ax]
    if isinstance(idx, Tracer):
        from .ufuncs import remainder
        wrapped = remainder(idx, max(n, 1))
    else:
        wrapped = np.mod(idx, max(n, 1))
    return lax.gather(a, [_as_gather_index(wrapped)], (ax,))


def _take_fill(a, idx, ax, fill_value):
    n, nd = aval(a).shape[ax], aval(a).ndim
    if isinstance(idx, Tracer):
        from .ufuncs import greater_equal, less, logical_or
        norm = _normalize_traced(idx, n)
        outside = logical_or(less(norm, 0), greater_equal(norm, n))
    else:
        norm = _normalized_static(idx, n)
        outside = (norm < 0) | (norm >= n)
    out = lax.gather(a, [norm], (ax,))
    if not isinstance(outside, Tracer) and not outside.any():
        return out  # every static index in bounds: nothing to fill
    from .shape import reshape
    # the mask lines up with the gathered dimensions, which replace axis `ax`
    mask_shape = (1,) * ax + tuple(aval(outside).shape) + (1,) * (nd - ax - 1)
    fill = _take_fill_value(aval(a).dtype, aval(a).weak_type, fill_value)
    # a select of two values of a's type, not jnp.where: promotion would make a weak bool
    # strong (JAX fills inside the gather, so the result keeps a's type)
    mask, fill, out = broadcast_args(reshape(outside, mask_shape), fill, out,
                                     keep_scalars=False)
    return lax.select_n(mask, out, fill)


def _take_fill_value(dtype, weak, fill_value):
    """jnp.take's default fill: NaN, the lowest signed / highest unsigned integer, True;
    in the operand's dtype and weak type (a weak operand's take stays weak, as in JAX)."""
    if fill_value is None:
        dt = np.dtype(dtype)
        defaults = {"f": lambda: np.nan, "c": lambda: np.nan, "b": lambda: True,
                    "i": lambda: np.iinfo(dt).min, "u": lambda: np.iinfo(dt).max}
        fill_value = np.asarray(defaults[dt.kind](), dt)[()]
    return to_dtype(fill_value, dtype, weak)


def _as_gather_index(idx):
    if isinstance(idx, Tracer):
        return idx
    return np.clip(idx, -1, np.iinfo(np.int32).max).astype(np.int32)


_TAKE_MODES = {"fill": _take_fill, "clip": _take_clip, "wrap": _take_wrap}
