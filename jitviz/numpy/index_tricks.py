"""Index helpers, as in JAX: `unravel_index`, `ravel_multi_index`, `ix_`, and the index
objects `r_`, `c_`, `mgrid`, `ogrid` (with `s_` and `index_exp`, which are NumPy's own, as
JAX exports them).

Slices in `r_`/`c_`/`mgrid`/`ogrid` must be concrete (they decide the shape); a complex step
`a:b:nj` means n points from a to b inclusive (linspace), a real one a step (arange).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, is_traced, promote, to_dtype
from .creation import arange, asarray, linspace
from .indexing import where
from .shape import concatenate, reshape, stack, transpose

s_ = np.s_
index_exp = np.index_exp


def _static_shape(shape, name):
    shape = explain.concrete_or_error(shape, f"The error arose in the shape argument of "
                                             f"jnp.{name}, which must be static.")
    return tuple(operator.index(d) for d in (shape if np.ndim(shape) else (shape,)))


def _strides(shape):
    """C-order strides (in elements) of each dimension."""
    return [math.prod(shape[k + 1:]) for k in range(len(shape))]


def unravel_index(indices, shape):
    """The coordinates of flat indices into an array of `shape` (C order); indices out of
    bounds are clipped and negative ones count from the end, as in JAX."""
    from .ufuncs import add, clip, floor_divide, remainder
    shape = _static_shape(shape, "unravel_index")
    (idx,) = promote(indices)
    idx = idx if is_traced(idx) else asarray(idx)
    if not dtypes.is_integer(aval(idx).dtype):
        raise TypeError(f"unravel_index: indices must be integers, got {aval(idx).dtype}")
    if any(d < 0 for d in shape):
        raise ValueError(f"unravel_index: shape must be non-negative, got {shape}")
    total = math.prod(shape)
    if total == 0:
        raise ValueError("unravel_index: cannot unravel into an empty shape "
                         f"{shape}")
    idx = clip(idx, -total, total - 1)
    idx = where(idx < 0, add(idx, total), idx)
    return tuple(remainder(floor_divide(idx, st), n) for st, n in zip(_strides(shape), shape))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat index (C or Fortran order) of coordinates into an array of shape `dims`;
    mode 'clip' clamps each coordinate, 'wrap' wraps it, 'raise' checks them (concrete
    coordinates only, as in JAX)."""
    from .ufuncs import remainder
    dims = _static_shape(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    coords = [c if is_traced(c) else asarray(c) for c in multi_index]
    for c in coords:
        if not dtypes.is_integer(aval(c).dtype):
            raise TypeError(f"only int indices permitted, got {aval(c).dtype}")
    if mode == "raise":
        for c, n in zip(coords, dims):
            value = explain.concrete_or_error(
                c, "The error occurred because ravel_multi_index was jit-compiled with "
                   "mode='raise'. Use mode='wrap' or mode='clip' instead.")
            if np.any((np.asarray(value) < 0) | (np.asarray(value) >= n)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        coords = [lax.clamp(to_dtype(0, aval(c).dtype, aval(c).weak_type), c,
                            to_dtype(n - 1, aval(c).dtype, aval(c).weak_type))
                  for c, n in zip(coords, dims)]
    else:
        coords = [remainder(c, n) for c, n in zip(coords, dims)]
    strides = _strides(dims) if order == "C" else _strides(dims[::-1])[::-1]
    out_dtype = dtypes.canonical_creation_dtype(dtype) or dtypes.default_int()
    total = asarray(0, out_dtype)
    for c, st in zip(coords, strides):
        total = total + to_dtype(c, out_dtype) * st
    return total


def ix_(*args):
    """Open-mesh index arrays: the i-th 1-D argument shaped to run along dimension i."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = a if is_traced(a) else asarray(a)
        if aval(a).ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got shape {aval(a).shape}")
        if aval(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not "
                                      "implemented")
        if aval(a).shape[0] == 0:  # an empty index is integer whatever its dtype (NumPy's
            a = to_dtype(a, dtypes.default_int())  # intp; JAX's int32 without x64)
        out.append(reshape(a, (1,) * i + (aval(a).shape[0],) + (1,) * (n - i - 1)))
    return tuple(out)


# --- slices made arrays ---------------------------------------------------------------------

def _slice_values(s):
    """The array a slice stands for in r_/mgrid: arange(start, stop, step), or for a
    complex step nj, linspace(start, stop, n)."""
    for part, v in (("start", s.start), ("stop", s.stop), ("step", s.step)):
        explain.concrete_or_error(v, f"The slice {part} in an index trick (r_, c_, mgrid, "
                                     "ogrid) must be static.")
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex) or np.iscomplexobj(step):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _Grid:
    """mgrid / ogrid: `grid[a:b, c:d]` gives the coordinate arrays of the grid (dense:
    stacked along a new first axis; sparse: a list of broadcastable arrays)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        if not axes:
            return [] if self.sparse else asarray([], dtypes.default_int())
        axes = promote(*axes) if len(axes) > 1 else axes
        n = len(axes)
        shaped = [reshape(a, (1,) * i + (aval(a).shape[0],) + (1,) * (n - i - 1))
                  for i, a in enumerate(axes)]
        if self.sparse:
            return shaped
        from .shape import broadcast_arrays
        return stack(broadcast_arrays(*shaped), axis=0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


class _Concatenator:
    """r_ / c_: `r_[a, b, 0:3, 5]` concatenates arrays, scalars and slices (as arange or
    linspace); a leading string 'axis[,ndmin[,trans1d]]' or 'r'/'c' changes how."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d, matrix = _directive(items.pop(0), axis, ndmin, trans1d)
        parts = [self._part(item, ndmin, trans1d) for item in items]
        if not parts:
            return asarray([], dtypes.default_float())
        out = concatenate(parts, axis=axis)
        if matrix is not None and aval(out).ndim == 1:
            out = reshape(out, (1, -1) if matrix == "r" else (-1, 1))
        return out

    @staticmethod
    def _part(item, ndmin, trans1d):
        if isinstance(item, slice):
            a = _slice_values(item)
        else:
            (a,) = promote(item)
            a = a if is_traced(a) else asarray(a)
        nd = aval(a).ndim
        if nd >= ndmin:
            return a
        a = reshape(a, (1,) * (ndmin - nd) + aval(a).shape)
        if trans1d == -1 or isinstance(item, slice) and ndmin == 1:
            return a
        # the item's own axes go to position trans1d among the ndmin, as NumPy places them
        added = ndmin - nd
        k1 = trans1d + added + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        return transpose(a, axes[:k1] + axes[added:] + axes[k1:added])


def _directive(text, axis, ndmin, trans1d):
    if text in ("r", "c"):
        return 0, ndmin, trans1d, text
    try:
        fields = [int(f) for f in text.split(",")]
    except ValueError:
        raise ValueError(f"could not understand directive {text!r}") from None
    if len(fields) > 3:
        raise ValueError(f"could not understand directive {text!r}")
    fields += [axis, ndmin, trans1d][len(fields):]
    return fields[0], fields[1], fields[2], None


r_ = _Concatenator(axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator(axis=-1, ndmin=2, trans1d=0)


__all__ = ["unravel_index", "ravel_multi_index", "ix_", "r_", "c_", "s_", "index_exp",
           "mgrid", "ogrid"]
