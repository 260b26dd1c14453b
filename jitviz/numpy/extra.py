"""Array manipulation composed from existing jnp/lax functions (no new primitives): diff,
roll, rot90, pad, split, meshgrid, indices, tril/triu, diag, diagonal, kron, cross,
take_along_axis, put_along_axis, isin, select, piecewise, vander, block, and friends.

Shapes, offsets and sizes must be concrete (they decide the result's shape), as in JAX."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..array import as_array
from ..core import explain
from ..core.trace import stage
from ._core import aval, canonical_axes, canonical_axis, is_traced, promote, to_dtype, unchanged
from .creation import asarray, full, zeros, zeros_like
from .indexing import take, where
from .shape import concatenate, expand_dims, flip, moveaxis, ravel, reshape, stack, transpose
from .ufuncs import multiply, not_equal, subtract


def _static_int(v, what):
    return operator.index(explain.concrete_or_error(v, f"It arose in {what}, which must be "
                                                       "a static integer."))


def _slice_axis(a, axis, start, stop, step=1):
    """a[..., start:stop:step, ...] along `axis` (static bounds, one lax.slice)."""
    shape = aval(a).shape
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return lax.slice(a, starts, limits, None if step == 1 else strides)


def _int_array(x):
    """A static index result (tril_indices...) as JAX returns it: strong int32."""
    return as_array(np.asarray(x, dtype=dtypes.default_int()))


# --- differences ------------------------------------------------------------------------------

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """`jnp.diff`: the n-th discrete difference along `axis` (booleans: `!=`, as JAX)."""
    (a,) = promote(a)
    n = _static_int(n, "the jnp.diff argument 'n'")
    nd = aval(a).ndim
    if nd == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    axis = canonical_axis(axis, nd)
    parts = [_edge_operand(v, a, axis) for v in (prepend,)] if prepend is not None else []
    parts += [a] + ([_edge_operand(append, a, axis)] if append is not None else [])
    a = concatenate(parts, axis) if len(parts) > 1 else a
    op = not_equal if aval(a).dtype == np.bool_ else subtract
    for _ in range(n):
        size = aval(a).shape[axis]
        # an empty axis stays empty (NumPy and JAX: diff of zeros(0), or n past the length)
        a = op(_slice_axis(a, axis, min(1, size), size),
               _slice_axis(a, axis, 0, max(size - 1, 0)))
    return a


def _edge_operand(v, a, axis):
    """prepend/append: a scalar is broadcast to a's shape with size 1 along `axis`."""
    (v,) = promote(v)
    if aval(v).ndim == 0:
        from .shape import broadcast_to
        shape = list(aval(a).shape)
        shape[axis] = 1
        return broadcast_to(v, shape)
    return v


def ediff1d(ary, to_end=None, to_begin=None):
    """`jnp.ediff1d`: differences of the flattened array, with optional ends."""
    (ary,) = promote(ary)
    arr = ravel(ary)
    n = aval(arr).shape[0]
    out = lax.sub(_slice_axis(arr, 0, 1, n), _slice_axis(arr, 0, 0, max(n - 1, 0))) \
        if n else arr
    # the ends take the array's dtype (JAX converts them rather than promoting)
    dt = aval(arr).dtype
    if to_begin is not None:
        out = concatenate([ravel(to_dtype(asarray(to_begin), dt)), out])
    if to_end is not None:
        out = concatenate([out, ravel(to_dtype(asarray(to_end), dt))])
    return out


# --- rolling, rotating, padding -------------------------------------------------------------

def roll(a, shift, axis=None):
    """`jnp.roll`: a static shift is two slices and a concatenate; a traced shift slices
    `concatenate([a, a])` dynamically (as JAX does)."""
    (a,) = promote(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval(a).shape)
    nd = aval(a).ndim
    axes = canonical_axes(axis, nd) if isinstance(axis, (tuple, list)) else \
        (canonical_axis(axis, nd),)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    try:
        pairs = np.broadcast(np.empty(len(shifts)), np.empty(len(axes)))
    except ValueError:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D "
                         "arrays") from None
    shifts = shifts * pairs.shape[0] if len(shifts) == 1 else shifts
    axes = axes * pairs.shape[0] if len(axes) == 1 else axes
    for s, ax in zip(shifts, axes):
        a = _roll_axis(a, s, ax)
    return a


def _roll_axis(a, shift, axis):
    n = aval(a).shape[axis]
    if n == 0:
        return a
    if is_traced(shift):
        from .ufuncs import remainder
        start = remainder(lax.sub(to_dtype(n, aval(shift).dtype), remainder(shift, n)), n)
        starts = [0] * aval(a).ndim
        starts[axis] = start
        return lax.dynamic_slice(concatenate([a, a], axis), starts, aval(a).shape)
    s = int(shift) % n
    if s == 0:
        return a
    return concatenate([_slice_axis(a, axis, n - s, n), _slice_axis(a, axis, 0, n - s)], axis)


def rot90(m, k=1, axes=(0, 1)):
    """`jnp.rot90`: rotate by 90 degrees k times in the plane of `axes` (flip + swap)."""
    (m,) = promote(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    nd = aval(m).ndim
    if nd < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, "
                         f"but got first argument of shape {aval(m).shape}, which has ndim {nd}")
    ax1, ax2 = canonical_axis(axes[0], nd), canonical_axis(axes[1], nd)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = _static_int(k, "the jnp.rot90 argument 'k'") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return transpose(flip(m, ax2), perm) if k == 1 else flip(transpose(m, perm), ax2)


_PAD_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")
_PAD_UNSUPPORTED = ("linear_ramp", "maximum", "mean", "median", "minimum", "empty")


def pad(array, pad_width, mode="constant", **kwargs):
    """`jnp.pad` for modes constant, edge, reflect, symmetric and wrap. Constant padding is
    a concatenate of filled blocks; the other modes are one static gather per axis, whose
    indices come from NumPy padding `arange(n)` with the same mode. Not supported (a
    NotImplementedError): linear_ramp, maximum, mean, median, minimum, empty, a callable
    mode and reflect_type='odd'."""
    (y,) = promote(array)
    out = _pad(y, pad_width, mode, kwargs)
    return unchanged(out) if out is y else out  # nothing padded: `array` itself


def _pad(array, pad_width, mode, kwargs):
    nd = aval(array).ndim
    widths = _pad_widths(pad_width, nd)
    if callable(mode) or mode in _PAD_UNSUPPORTED:
        raise NotImplementedError(f"jnp.pad: mode {mode!r} is not supported by jitviz")
    if mode == "constant":
        cv = kwargs.pop("constant_values", 0)
        # a traced value (a scalar) is used as is; a static one may differ per axis and side
        values = [(cv, cv)] * nd if is_traced(cv) else \
            np.broadcast_to(np.asarray(cv, object), (nd, 2))
        _pad_kwargs(kwargs)
        for ax, (lo, hi) in enumerate(widths):
            array = _pad_constant(array, ax, lo, hi, values[ax])
        return array
    if mode not in _PAD_INDEX_MODES:  # JAX's error type for an unknown mode too
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    if kwargs.pop("reflect_type", "even") != "even":
        raise NotImplementedError("jnp.pad: reflect_type='odd' is not supported by jitviz")
    _pad_kwargs(kwargs)
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            n = aval(array).shape[ax]
            if n == 0:
                raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                 "'constant' or 'empty'")
            idx = np.pad(np.arange(n), (lo, hi), mode=mode)
            array = take(array, idx, axis=ax)
    return array


def _pad_kwargs(kwargs):
    if kwargs:
        raise ValueError(f"Unsupported keyword arguments for jnp.pad: {sorted(kwargs)}")


def _pad_widths(pad_width, nd):
    for w in (np.ravel(np.asarray(pad_width, object)) if not is_traced(pad_width)
              else (pad_width,)):
        explain.concrete_or_error(w, "It arose in the jnp.pad argument 'pad_width', which "
                                     "must be static.")
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise TypeError(f"`pad_width` must be of integral type, got {w.dtype}")
    w = np.broadcast_to(w, (nd, 2)) if w.ndim < 2 or w.shape == (1, 2) else w
    if w.shape != (nd, 2):
        raise ValueError(f"jnp.pad: pad_width with shape {w.shape} does not fit an array "
                         f"of dimension {nd}")
    if (w < 0).any():
        raise ValueError("index can't contain negative values")
    return [(int(lo), int(hi)) for lo, hi in w]


def _pad_constant(a, ax, lo, hi, values):
    shape, dt, weak = list(aval(a).shape), aval(a).dtype, aval(a).weak_type
    parts = []
    for width, v in ((lo, values[0]), (hi, values[1])):
        shape[ax] = width
        # the padding takes a's type, weak if a is (JAX's lax.pad of the converted value)
        parts.append(full(tuple(shape), to_dtype(v, dt, weak)) if width else None)
    pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
    return concatenate(pieces, ax) if len(pieces) > 1 else a


# --- splitting --------------------------------------------------------------------------------

def _split(name, ary, indices_or_sections, axis, equal):
    (ary,) = promote(ary)
    ax = canonical_axis(axis, aval(ary).ndim)
    n = aval(ary).shape[ax]
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) == 1:
        cuts = [_static_int(i, f"jnp.{name}'s indices") for i in indices_or_sections]
        cuts = [min(max(c + n if c < 0 else c, 0), n) for c in cuts]
    else:
        k = _static_int(indices_or_sections, f"jnp.{name}'s sections")
        if k < 0:  # 0 is JAX's ZeroDivisionError, from the divmod below
            raise ValueError("number sections must be larger than 0.")
        q, r = divmod(n, k)
        if equal and r:
            raise ValueError("array split does not result in an equal division: "
                             f"{n} is not divisible by {k}")
        sizes = [q + 1] * r + [q] * (k - r)
        cuts = list(np.cumsum(sizes)[:-1])
    bounds = [0] + [int(c) for c in cuts] + [n]
    return [_slice_axis(ary, ax, lo, max(lo, hi)) for lo, hi in zip(bounds, bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    """`jnp.split`: a list of sub-arrays (equal sections, or cuts at static indices)."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """`jnp.array_split`: as `split`, but sections may differ in size by one."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary, indices_or_sections):
    """`jnp.hsplit`: split along axis 1 (axis 0 for 1-D arrays)."""
    (ary,) = promote(ary)
    axis = 1 if aval(ary).ndim > 1 else 0
    return _split("hsplit", ary, indices_or_sections, axis, equal=True)


def vsplit(ary, indices_or_sections):
    """`jnp.vsplit`: `split` along axis 0 (JAX accepts 1-D arrays too)."""
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary, indices_or_sections):
    """`jnp.dsplit`: `split` along axis 2 (an AxisError, an IndexError, below 3-D)."""
    return _split("dsplit", ary, indices_or_sections, 2, equal=True)


# --- grids and triangles ------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """`jnp.meshgrid`: a list of coordinate arrays ('xy' or 'ij' indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    args = [ravel(x) for x in (promote(x)[0] for x in xi)]
    if any(aval(a).ndim != 1 for a in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D")
    shape = [aval(a).shape[0] for a in args]
    if indexing == "xy" and len(args) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(args):
        dim = (1 - i if i < 2 else i) if indexing == "xy" and len(args) >= 2 else i
        s = [1] * len(args) if sparse else list(shape)
        s[dim] = aval(a).shape[0]
        out.append(lax.broadcast_in_dim(a, tuple(s), (dim,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """`jnp.indices`: an array (or, sparse, a tuple) of index grids along each dimension."""
    dims = tuple(_static_int(d, "jnp.indices' dimensions") for d in dimensions)
    dtype = dtypes.canonical_creation_dtype(dtype, "indices") or dtypes.default_int()
    out = []
    for i, d in enumerate(dims):
        s = tuple(d if j == i else (1 if sparse else dj) for j, dj in enumerate(dims))
        out.append(lax.broadcasted_iota(dtype, s, i))
    if sparse:
        return tuple(out)
    return stack(out, 0) if out else zeros((0,), dtype)


def _tri_mask(shape, k, lower):
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    rows = lax.add(rows, np.int32(k))
    return lax.ge(rows, cols) if lower else lax.le(rows, cols)


def _tri(name, m, k, lower):
    (m,) = promote(m)
    if aval(m).ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    k = _static_int(k, f"the jnp.{name} argument 'k'")
    shape = aval(m).shape
    mask = _tri_mask(shape[-2:], k, lower)
    mask = lax.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))
    return lax.select(mask, m, zeros_like(m))


def tril(m, k=0):
    """`jnp.tril`: zero the elements above the k-th diagonal (last two axes)."""
    return _tri("tril", m, k, lower=True)


def triu(m, k=0):
    """`jnp.triu`: zero the elements below the k-th diagonal (last two axes)."""
    return _tri("triu", m, k, lower=False)


def tril_indices(n, k=0, m=None):
    """`jnp.tril_indices` (computed by NumPy; traced values inside a trace, as JAX's)."""
    return tuple(stage(_int_array(i)) for i in np.tril_indices(_static_int(n, "n"),
                                                        _static_int(k, "k"), m))


def triu_indices(n, k=0, m=None):
    """`jnp.triu_indices` (computed by NumPy; traced values inside a trace, as JAX's)."""
    return tuple(stage(_int_array(i)) for i in np.triu_indices(_static_int(n, "n"),
                                                        _static_int(k, "k"), m))


def tril_indices_from(arr, k=0):
    """`jnp.tril_indices_from`."""
    s = aval(arr).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k, s[1])


def triu_indices_from(arr, k=0):
    """`jnp.triu_indices_from`."""
    s = aval(arr).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k, s[1])


# --- diagonals ----------------------------------------------------------------------------

def diagonal(a, offset=0, axis1=0, axis2=1):
    """`jnp.diagonal`: the diagonal moves to the last axis. Flattening the two axes makes
    the diagonal a strided slice (stride m + 1), so no gather is needed."""
    (a,) = promote(a)
    nd = aval(a).ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = canonical_axis(axis1, nd), canonical_axis(axis2, nd)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 must not be equal")
    k = _static_int(offset, "the jnp.diagonal argument 'offset'")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    *batch, n, m = aval(a).shape
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    flat = reshape(a, tuple(batch) + (n * m,))
    if length == 0:
        return reshape(_slice_axis(flat, len(batch), 0, 0), tuple(batch) + (0,))
    start = k if k >= 0 else -k * m
    stop = start + (length - 1) * (m + 1) + 1
    return _slice_axis(flat, len(batch), start, stop, m + 1)


def diag(v, k=0):
    """`jnp.diag`: the k-th diagonal of a 2-D array, or a 2-D array with 1-D `v` on it."""
    (v,) = promote(v)
    k = _static_int(k, "the jnp.diag argument 'k'")
    nd = aval(v).ndim
    if nd == 2:
        return diagonal(v, k)
    if nd != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = aval(v).shape[0] + abs(k)
    mask = _tri_mask((n, n), k, True)
    mask = lax.bitwise_and(mask, _tri_mask((n, n), k, False))
    # the diagonal's element in column j (k >= 0) or row i (k < 0) is padded[j] / padded[i]
    padded = pad(v, (abs(k), 0))
    values = lax.broadcast_in_dim(padded, (n, n), (1,) if k >= 0 else (0,))
    out = lax.select(mask, values, zeros_like(values))
    # JAX's jnp.where of the two: booleans are never weak after promotion
    return lax.convert_element_type(out, np.bool_, False) if aval(out).dtype == np.bool_ \
        else out


def diag_indices(n, ndim=2):
    """`jnp.diag_indices`: `ndim` copies of arange(n) (static)."""
    n, ndim = _static_int(n, "n"), _static_int(ndim, "ndim")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (stage(_int_array(np.arange(n))),) * ndim


def diag_indices_from(arr):
    """`jnp.diag_indices_from`: the indices of the main diagonal of a square array."""
    s = aval(arr).shape
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """`jnp.fill_diagonal`: a new array with `val` on the main diagonal. As in JAX, arrays
    are immutable: pass inplace=False (the default, True, is an error); wrap=True is not
    supported (JAX neither)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    (a,) = promote(a)
    (val,) = promote(val)
    s = aval(a).shape
    if len(s) < 2:
        raise ValueError("array must be at least 2-d")
    if len(s) > 2 and len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(s)
    idx = diag_indices(n, len(s))
    if aval(val).ndim:
        val = take(ravel(val), np.arange(n) % max(aval(val).size, 1))
    return _updatable(a).at[idx].set(val)


def _updatable(a):
    """An operand with `.at` (a tracer or a jitviz Array, not a plain NumPy array)."""
    return a if is_traced(a) else asarray(a)


# --- products ---------------------------------------------------------------------------------

def kron(a, b):
    """`jnp.kron`: the Kronecker product (interleaved expand_dims, multiply, reshape)."""
    a, b = promote(a, b)
    na, nb = aval(a).ndim, aval(b).ndim
    if na < nb:
        a = expand_dims(a, tuple(range(nb - na)))
    elif nb < na:
        b = expand_dims(b, tuple(range(na - nb)))
    nd = aval(a).ndim
    out_shape = tuple(int(x) * int(y) for x, y in zip(aval(a).shape, aval(b).shape))
    if nd == 0:
        return multiply(a, b)
    a2 = expand_dims(a, tuple(range(1, 2 * nd, 2)))
    b2 = expand_dims(b, tuple(range(0, 2 * nd, 2)))
    return reshape(multiply(a2, b2), out_shape)


def _component(a, i):
    return lax.squeeze(_slice_axis(a, aval(a).ndim - 1, i, i + 1), (aval(a).ndim - 1,))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """`jnp.cross`: the cross product of 2- or 3-vectors (a 2x2 one is a scalar)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if aval(a).shape[-1] not in (2, 3) or aval(b).shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    a0, a1, b0, b1 = _component(a, 0), _component(a, 1), _component(b, 0), _component(b, 1)
    if aval(a).shape[-1] == 2 and aval(b).shape[-1] == 2:
        return subtract(multiply(a0, b1), multiply(a1, b0))
    a2 = _component(a, 2) if aval(a).shape[-1] == 3 else zeros_like(a0)
    b2 = _component(b, 2) if aval(b).shape[-1] == 3 else zeros_like(b0)
    from .shape import broadcast_arrays
    c = stack(broadcast_arrays(subtract(multiply(a1, b2), multiply(a2, b1)),
                               subtract(multiply(a2, b0), multiply(a0, b2)),
                               subtract(multiply(a0, b1), multiply(a1, b0))), 0)
    # JAX stacks the components with jnp.array(list): strongly typed (a 2x2 cross is not)
    c = lax.convert_element_type(c, aval(c).dtype, False)
    return moveaxis(c, 0, axisc)


# --- along an axis ------------------------------------------------------------------------

def _along_axis_index(name, arr, indices, axis):
    """The index tuple that takes `indices` along `axis` and the matching position in every
    other axis (broadcast iotas), for `arr[idx]` / `arr.at[idx]`."""
    ia = aval(indices)
    if ia.dtype.kind not in "iu":
        raise TypeError(f"{name} indices must be of integer type, got {ia.dtype}")
    nd = aval(arr).ndim
    if ia.ndim != nd:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{ia.ndim} vs. {nd}")
    ax = canonical_axis(axis, nd)
    shape = aval(arr).shape
    idx = []
    for d in range(nd):
        if d == ax:
            idx.append(indices)
        else:
            s = [1] * nd
            s[d] = shape[d]
            idx.append(np.arange(shape[d], dtype=np.int32).reshape(s))
    return tuple(idx)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """`jnp.take_along_axis`: `arr[..., indices, ...]` aligned with the other axes. Out of
    bounds indices follow `mode`: "fill" (JAX's default: `fill_value`, else NaN / the lowest
    signed or highest unsigned integer / True) or "clip" (clamped)."""
    (arr,) = promote(arr)
    indices = indices if is_traced(indices) else asarray(indices)
    if mode not in (None, "fill", "clip", "promise_in_bounds"):
        raise ValueError(f"Invalid mode {mode!r} for jnp.take_along_axis")
    if axis is None:
        if aval(indices).ndim != 1:
            raise ValueError(f"when axis=None, `indices` must have a single dimension."
                             f" Got indices.shape={aval(indices).shape}")
        arr, axis = ravel(arr), 0
    from .ufuncs import clip
    n = aval(arr).shape[canonical_axis(axis, aval(arr).ndim)]
    # clamped first: a concrete Array is indexed by NumPy, which rejects out-of-bounds indices
    safe = clip(indices, -n, max(n - 1, 0))
    out = arr[_along_axis_index("take_along_axis", arr, safe, axis)]
    if mode not in (None, "fill"):
        return out
    from .indexing import _take_fill_value
    from .ufuncs import greater_equal, less, logical_or
    outside = logical_or(less(indices, -n), greater_equal(indices, n))
    return where(outside, _take_fill_value(aval(arr).dtype, aval(arr).weak_type, fill_value),
                 out)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """`jnp.put_along_axis`: a new array with `values` written at `indices` along `axis`.
    As in JAX, pass inplace=False (arrays are immutable)."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "JAX arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    (arr,) = promote(arr)
    indices = indices if is_traced(indices) else asarray(indices)
    if axis is None:
        if aval(indices).ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return reshape(put_along_axis(ravel(arr), indices, ravel(asarray(values)), 0,
                                      inplace=False, mode=mode), aval(arr).shape)
    return _updatable(arr).at[_along_axis_index("put_along_axis", arr, indices, axis)].set(
        values, mode=mode)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """`jnp.isin`: each element compared with every test element (broadcast), any-reduced."""
    from .reductions import any as any_
    from .ufuncs import equal, logical_not
    (element,) = promote(element)
    test = ravel(promote(test_elements)[0])
    hit = any_(equal(expand_dims(element, -1), test), axis=-1)
    return logical_not(hit) if invert else hit


# --- selection ------------------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    """`jnp.select`: the choice of the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(choicelist)} "
                         f"vs {len(condlist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    for c in condlist:
        if aval(c).dtype != np.bool_:
            raise TypeError(f"condlist must be a list of boolean arrays, got {aval(c).dtype}")
    out = default
    for c, v in zip(reversed(condlist), reversed(choicelist)):
        out = where(c, v, out)
    return out if is_traced(out) else asarray(out)


def piecewise(x, condlist, funclist, *args, **kw):
    """`jnp.piecewise`: `funclist[i](x)` where `condlist[i]` (the last true one wins, as in
    JAX); an extra function is the default. The number of conditions must be static. Each
    function is evaluated on the whole array and the results are selected."""
    (x,) = promote(x)
    conds = list(condlist) if isinstance(condlist, (tuple, list)) else \
        [c for c in asarray(condlist)] if not is_traced(condlist) else \
        [condlist[i] for i in range(aval(condlist).shape[0])]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    dt = aval(x).dtype

    def value(f):
        v = f(x, *args, **kw) if callable(f) else asarray(f, dtype=dt)
        from .shape import broadcast_to
        return broadcast_to(to_dtype(v, dt), aval(x).shape)
    out = value(funclist[0])
    for c, f in zip(conds, funclist[1:]):
        out = lax.select(_bool_like(c, x), value(f), out)
    return out


def _bool_like(c, x):
    from .shape import broadcast_to
    return broadcast_to(to_dtype(c, np.dtype(np.bool_)), aval(x).shape)


def vander(x, N=None, increasing=False):
    """`jnp.vander`: columns are powers of x (decreasing unless `increasing`)."""
    (x,) = promote(x)
    if aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    if aval(x).dtype == np.bool_:  # JAX's iota-based vander rejects booleans
        raise TypeError("vander does not accept dtype bool")
    N = aval(x).shape[0] if N is None else _static_int(N, "the jnp.vander argument 'N'")
    if N < 0:
        raise ValueError("N must be nonnegative")
    # powers by repeated multiplication: N is static, and an integer base cannot take a
    # traced exponent in jitviz's power
    cols = [lax.full(aval(x).shape, to_dtype(1, aval(x).dtype, aval(x).weak_type))] * bool(N)
    for _ in range(1, N):
        cols.append(multiply(cols[-1], x))
    if not cols:
        return zeros(aval(x).shape + (0,), aval(x).dtype)
    return stack(cols if increasing else cols[::-1], 1)


def block(arrays):
    """`jnp.block`: assemble an array from nested lists of blocks (innermost lists join
    along the last axis)."""
    depth, nd = _block_depth(arrays)
    return _block(arrays, depth, max(depth, nd))


def _block_depth(x):
    if isinstance(x, tuple):
        raise ValueError("jax.numpy.block does not allow tuples, got {x}")
    if not isinstance(x, list):
        return 0, aval(x).ndim
    if not x:
        raise ValueError("Lists cannot be empty")
    found = [_block_depth(p) for p in x]
    if len({d for d, _ in found}) != 1:
        raise ValueError("List depths are mismatched")
    return found[0][0] + 1, max(n for _, n in found)


def _block(x, depth, nd):
    if not isinstance(x, list):
        (x,) = promote(x)
        s = aval(x).shape
        return reshape(x, (1,) * (nd - len(s)) + s)
    return concatenate([_block(p, depth - 1, nd) for p in x], axis=-depth)


def atleast_3d(*arys):
    """`jnp.atleast_3d`: (1, 1, 1), (1, n, 1) or (m, n, 1) for smaller ranks; a list for
    several arguments."""
    from .shape import _at_least, _at_least_3d
    out = [_at_least(a, _at_least_3d) for a in arys]
    return out[0] if len(out) == 1 else out


def broadcast_shapes(*shapes):
    """`jnp.broadcast_shapes`: the shape the given shapes broadcast to (a tuple)."""
    shapes = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None

