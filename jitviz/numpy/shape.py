"""Shape manipulation: reshape, ravel, transpose, swapaxes, expand_dims, squeeze,
broadcast_to, concatenate, stack, flip, and friends."""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..core import explain
from ._core import aval, broadcast_to_shape, canonical_axes, canonical_axis, concrete_shape, \
    promote, to_dtype, unchanged


def reshape(a, *args, order="C", newshape=None, shape=None):
    """`a.reshape(shape)`; the shape must be concrete (use np.prod(x.shape), not jnp)."""
    if order != "C":
        raise NotImplementedError("jnp.reshape supports order='C' only")
    new = shape if shape is not None else newshape
    if new is None:
        if not args:
            raise TypeError("reshape() missing the new shape")
        new = args[0] if len(args) == 1 else args
    for d in (new if isinstance(new, (tuple, list)) else (new,)):
        explain.concrete_or_error(d, "It arose in jnp.reshape: the new shape must be "
                                     "concrete (compute it with np.prod(x.shape), not jnp).")
    new = concrete_shape(new, "jnp.reshape")
    (a,) = promote(a)
    size = aval(a).size
    if new.count(-1) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{new}")
    if -1 in new:
        known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {new}")  # JAX's
        new = tuple(size // known if d == -1 else d for d in new)
    if int(np.prod(new, dtype=np.int64)) != size:
        raise TypeError(f"cannot reshape array of size {size} into shape {new}")  # JAX's
    return lax.reshape(a, new)


def ravel(a, order="C"):
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    (a,) = promote(a)
    nd = aval(a).ndim
    perm = tuple(reversed(range(nd))) if axes is None else \
        tuple(canonical_axis(x, nd) for x in axes)
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"axes {axes} don't match array of dimension {nd}")
    return lax.transpose(a, perm)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    nd = aval(a).ndim
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd), canonical_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    nd = aval(a).ndim
    src = canonical_axes(source, nd)
    dst = canonical_axes(destination, nd)
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    (a,) = promote(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_nd = aval(a).ndim + len(axes)
    return lax.expand_dims(a, tuple(canonical_axis(x, out_nd) for x in axes))


def squeeze(a, axis=None):
    (a,) = promote(a)
    shape = aval(a).shape
    if axis is None:
        dims = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        dims = canonical_axes(axis, len(shape))
        for d in dims:
            if shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
    return lax.squeeze(a, dims) if dims else unchanged(a)


def broadcast_to(array, shape):
    (array,) = promote(array)
    return broadcast_to_shape(array, concrete_shape(shape, "jnp.broadcast_to"))


def broadcast_arrays(*args):
    """Each operand keeps its own dtype and weak type (no promotion, as in JAX); a Python
    scalar becomes a weakly typed array."""
    from ._core import _scalarize, broadcast_args, wrap_result
    # (JAX's broadcast_arrays is jitted: inside a trace every output is traced)
    outs = broadcast_args(*[wrap_result(_scalarize(a)) for a in args], keep_scalars=False)
    return [unchanged(out) for out in outs]


def _whole_array(seq) -> bool:
    """A sequence given as one array (not a list or tuple): JAX concatenates and stacks its
    rows without splitting it (a reshape, no concatenate), so a weak type is kept."""
    return not isinstance(seq, (list, tuple)) and np.ndim(seq) > 0


def _rows_shaped(seq, row_shape, dtype=None):
    """The array `seq`, each row reshaped by `row_shape` (an atleast_Nd rule)."""
    (a,) = promote(seq)
    if dtype is not None:
        a = to_dtype(a, np.dtype(dtype))
    shape = aval(a).shape
    return reshape(a, shape[:1] + row_shape(shape[1:]))


def _concatenate_rows(a, axis):
    """The rows of the array `a` concatenated along `axis` of a row."""
    shape = aval(a).shape
    if axis is None:
        return reshape(a, (-1,))
    if len(shape) == 1:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    k = canonical_axis(axis, len(shape) - 1)
    return reshape(moveaxis(a, 0, k), shape[1:k + 1] + (shape[0] * shape[k + 1],)
                   + shape[k + 2:])


def concatenate(arrays, axis=0, dtype=None):
    if _whole_array(arrays):
        return _concatenate_rows(_rows_shaped(arrays, tuple, dtype), axis)
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    arrays = promote(*arrays)
    if dtype is not None:
        arrays = [to_dtype(a, np.dtype(dtype)) for a in arrays]
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    nd = aval(arrays[0]).ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, canonical_axis(axis, nd))


concat = concatenate


def stack(arrays, axis=0, dtype=None):
    if _whole_array(arrays):
        a = _rows_shaped(arrays, tuple, dtype)
        return moveaxis(a, 0, canonical_axis(axis, aval(a).ndim))
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    arrays = promote(*arrays)
    if dtype is not None:
        arrays = [to_dtype(a, np.dtype(dtype)) for a in arrays]
    shapes = {aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape, got "
                         + ", ".join(str(s) for s in shapes))
    ax = canonical_axis(axis, aval(arrays[0]).ndim + 1)
    return lax.stack(arrays, ax)


# each function's rule for one operand's shape (atleast_1d, atleast_2d, column form)
def _at_least_1d(s):
    return s or (1,)


def _at_least_2d(s):
    return (1,) * (2 - len(s)) + s if len(s) < 2 else s


def _at_least_3d(s):
    """(1, 1, 1), (1, n, 1), (m, n, 1) or the shape itself."""
    return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)


def _as_column(s):
    return (s[0] if s else 1, 1) if len(s) < 2 else s


def vstack(tup):
    if _whole_array(tup):
        return _concatenate_rows(_rows_shaped(tup, _at_least_2d), 0)
    return concatenate([atleast_2d(a) for a in tup], 0)


def hstack(tup):
    if _whole_array(tup):
        a = _rows_shaped(tup, _at_least_1d)
        return _concatenate_rows(a, 0 if aval(a).ndim == 2 else 1)
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if aval(arrs[0]).ndim == 1 else 1)


def column_stack(tup):
    if _whole_array(tup):
        return _concatenate_rows(_rows_shaped(tup, _as_column), 1)
    arrs = [reshape(a, (-1, 1)) if aval(a).ndim < 2 else a for a in promote(*tup)]
    return concatenate(arrs, 1)


def _at_least(a, rule):
    """`a` reshaped by an atleast_Nd rule; unchanged (traced in a trace) if it fits."""
    (y,) = promote(a)
    shape = aval(y).shape
    return reshape(y, rule(shape)) if rule(shape) != shape else unchanged(y)


def atleast_1d(a):
    return _at_least(a, _at_least_1d)


def atleast_2d(a):
    return _at_least(a, _at_least_2d)


def flip(m, axis=None):
    (m,) = promote(m)
    return lax.rev(m, canonical_axes(axis, aval(m).ndim))


def flipud(m):
    return flip(m, 0)


def fliplr(m):
    return flip(m, 1)


def _shape_of(a, name):
    """The shape `shape`/`ndim`/`size` report: of a list or tuple too, NumPy's, with JAX's
    DeprecationWarning (JAX still answers these three for sequences)."""
    if isinstance(a, (list, tuple)):
        import warnings
        warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at position "
                      "0. In a future JAX release this will be an error.", DeprecationWarning,
                      stacklevel=3)
        return np.shape(a)
    return aval(a).shape


def shape(a):
    return _shape_of(a, "shape")


def ndim(a):
    return len(_shape_of(a, "ndim"))


def size(a, axis=None):
    """The number of elements, or along `axis` (an int or a tuple of them: their product),
    as JAX: an axis beyond the array's rank is JAX's ValueError."""
    s = _shape_of(a, "size")
    if axis is None:
        return int(np.prod(s, dtype=np.int64))
    total = 1
    for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        ax = operator.index(ax)
        if not -len(s) <= ax < len(s):
            raise ValueError(f"axis {ax} is out of bounds for array of dimension {len(s)}")
        total *= s[ax]
    return total


def tile(A, reps):
    (A,) = promote(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape_ = aval(A).shape
    nd = builtins_max(len(shape_), len(reps))
    shape_ = (1,) * (nd - len(shape_)) + shape_
    reps = (1,) * (nd - len(reps)) + reps
    A = reshape(A, shape_)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    inter = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, shape_)):
        inter += [r, s]
        dims.append(2 * i + 1)
    out = lax.broadcast_in_dim(A, inter, tuple(dims))
    return reshape(out, tuple(r * s for r, s in zip(reps, shape_)))


def repeat(a, repeats, axis=None):
    repeats = operator.index(explain.concrete_or_error(
        repeats, "It arose in the jnp.repeat argument 'repeats'."))
    (a,) = promote(a)
    if axis is None or aval(a).ndim == 0:  # JAX repeats a 0-d array along any axis
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, aval(a).ndim)
    s = aval(a).shape
    inter = s[:ax + 1] + (repeats,) + s[ax + 1:]
    out = lax.broadcast_in_dim(a, inter, tuple(i if i <= ax else i + 1 for i in range(len(s))))
    return reshape(out, s[:ax] + (s[ax] * repeats,) + s[ax + 1:])


import builtins as _builtins  # noqa: E402

builtins_max = _builtins.max
