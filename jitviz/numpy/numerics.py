"""Numerical helpers composed from existing jnp/lax functions, as JAX defines them:
`gradient`, `trapezoid`, `cumulative_sum`, `cumulative_prod`, `nancumsum`, `nancumprod`,
`vecdot`, `matvec`, `vecmat`, `partition`, `argpartition`, `sort_complex`, `unwrap`.
All are differentiable and batchable through their parts."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ._core import aval, canonical_axes, canonical_axis, is_traced, promote, to_dtype
from .creation import asarray, ones, zeros
from .indexing import where
from .shape import concatenate, expand_dims, moveaxis, reshape


def _operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


def _along(a, axis, sl):
    """a[..., sl, ...] with the slice on `axis`."""
    index = [slice(None)] * aval(a).ndim
    index[axis] = sl
    return a[tuple(index)]


def _line_shape(nd, axis, n):
    """The shape that lays a 1-D array of n along `axis` of an nd-dimensional array."""
    shape = [1] * nd
    shape[axis] = n
    return tuple(shape)


# --- differences and integrals ----------------------------------------------------------------

def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided at the ends, along each axis (one array for a
    single int axis, else a list); spacing: 1, one scalar, or per axis a scalar or the
    coordinates."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    # promoted together, as JAX's promote_dtypes_inexact(f, *varargs): weak when all are
    f, *varargs = promote(f, *[_operand(v) for v in varargs], inexact=True)
    f = _operand(f)
    nd = aval(f).ndim
    axes = canonical_axes(axis, nd)
    if len(varargs) == 0:
        spacings = [to_dtype(1.0, aval(f).dtype, aval(f).weak_type)] * len(axes)
    elif len(varargs) == 1 and len(axes) > 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments: one for all axes or one per "
                        f"axis ({len(axes)}), got {len(varargs)}")
    out = [_gradient_along(f, ax, h) for ax, h in zip(axes, spacings)]
    return out[0] if isinstance(axis, int) or (nd == 1 and axis is None) else out


def _gradient_along(f, axis, spacing):
    from .extra import diff
    from .ufuncs import add, multiply, subtract, true_divide
    n = aval(f).shape[axis]
    if n < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    nd, dt = aval(f).ndim, aval(f).dtype
    if np.ndim(spacing) == 0 and not (is_traced(spacing) and aval(spacing).ndim):
        h = spacing
        inner = true_divide(subtract(_along(f, axis, slice(2, None)),
                                     _along(f, axis, slice(None, -2))), multiply(2, h))
        first_d, last_d = h, h
    else:
        x = _operand(spacing)
        if aval(x).ndim != 1 or aval(x).shape[0] != n:
            raise ValueError("The spacing of jnp.gradient along an axis must be a scalar or "
                             f"1-D coordinates of its length {n}; got shape {aval(x).shape}")
        dx = reshape(diff(x), _line_shape(nd, axis, n - 1))
        dx1, dx2 = _along(dx, axis, slice(None, -1)), _along(dx, axis, slice(1, None))
        # the second-order accurate weights of f[i-1], f[i], f[i+1] on an uneven grid
        total = add(dx1, dx2)
        w_prev = true_divide(-dx2, multiply(dx1, total))
        w_mid = true_divide(subtract(dx2, dx1), multiply(dx1, dx2))
        w_next = true_divide(dx1, multiply(dx2, total))
        inner = add(add(multiply(w_prev, _along(f, axis, slice(None, -2))),
                        multiply(w_mid, _along(f, axis, slice(1, -1)))),
                    multiply(w_next, _along(f, axis, slice(2, None))))
        first_d, last_d = _along(dx, axis, slice(0, 1)), _along(dx, axis, slice(-1, None))
    first = true_divide(subtract(_along(f, axis, slice(1, 2)), _along(f, axis, slice(0, 1))),
                        first_d)
    last = true_divide(subtract(_along(f, axis, slice(-1, None)), _along(f, axis,
                                                                          slice(-2, -1))),
                       last_d)
    return concatenate([first, inner, last], axis=axis)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along `axis` by the trapezoidal rule (spacing dx, or the sample
    points x)."""
    from .extra import diff
    from .reductions import sum as sum_
    from .ufuncs import add, multiply
    if x is None:
        (y,) = promote(y, inexact=True)
        y = _operand(y)
        axis = canonical_axis(axis, aval(y).ndim)
        d = _operand(dx)
    else:
        y, x = promote(y, x, inexact=True)
        y, x = _operand(y), _operand(x)
        axis = canonical_axis(axis, aval(y).ndim)
        if aval(x).ndim == 1:
            d = reshape(diff(x), _line_shape(aval(y).ndim, axis, aval(x).shape[0] - 1))
        else:
            d = diff(x, axis=axis)
    pairs = add(_along(y, axis, slice(1, None)), _along(y, axis, slice(None, -1)))
    return multiply(0.5, sum_(multiply(d, pairs), axis=axis))


# --- cumulative -------------------------------------------------------------------------------

def _cumulative(name, fn, identity, x, axis, dtype, include_initial):
    x = _operand(x)
    nd = aval(x).ndim
    if nd == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative "
                         f"{'sum' if name == 'cumulative_sum' else 'product'}, however a "
                         "scalar value or scalar array was given.")
    if axis is None:
        if nd > 1:
            raise ValueError(f"The input array has rank {nd}, however axis was not set to an "
                             "explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    axis = canonical_axis(axis, nd)
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(aval(out).shape)
        shape[axis] = 1
        out = concatenate([identity(tuple(shape), aval(out).dtype), out], axis=axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumsum along axis (optional for 1-D input), with a leading 0 if include_initial."""
    from .reductions import cumsum
    return _cumulative("cumulative_sum", cumsum, zeros, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumprod along axis (optional for 1-D input), with a leading 1 if include_initial."""
    from .reductions import cumprod
    return _cumulative("cumulative_prod", cumprod, ones, x, axis, dtype, include_initial)


def _nan_as(a, value):
    from .ufuncs import isnan
    a = _operand(a)
    if not dtypes.is_inexact(aval(a).dtype):
        return a
    return where(isnan(a), to_dtype(value, aval(a).dtype), a)


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum with NaNs counted as 0."""
    from .reductions import cumsum
    return cumsum(_nan_as(a, 0), axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod with NaNs counted as 1."""
    from .reductions import cumprod
    return cumprod(_nan_as(a, 1), axis=axis, dtype=dtype, out=out)


# --- products of vectors ------------------------------------------------------------------------

def _sum_of_products(x1, x2, axis, conjugate_first):
    from .reductions import sum as sum_
    from .ufuncs import conj, multiply
    if conjugate_first and np.dtype(aval(x1).dtype).kind == "c":
        x1 = conj(x1)
    return sum_(multiply(x1, x2), axis=axis)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis` (the other axes broadcast)."""
    x1, x2 = promote(x1, x2)
    x1, x2 = _operand(x1), _operand(x2)
    n1 = aval(x1).shape[canonical_axis(axis, aval(x1).ndim)]
    n2 = aval(x2).shape[canonical_axis(axis, aval(x2).ndim)]
    if n1 != n2:
        raise ValueError(f"axes must match; got shapes {aval(x1).shape} and {aval(x2).shape} "
                         f"with axis={axis}")
    x1 = moveaxis(x1, axis, -1)
    x2 = moveaxis(x2, axis, -1)
    out = _sum_of_products(x1, x2, -1, True)
    return out if preferred_element_type is None else to_dtype(out, preferred_element_type)


def matvec(x1, x2, /):
    """The matrices x1 (..., m, n) times the vectors x2 (..., n): (..., m)."""
    x1, x2 = promote(x1, x2)
    x1, x2 = _operand(x1), _operand(x2)
    if aval(x1).ndim < 2 or aval(x2).ndim < 1 or aval(x1).shape[-1] != aval(x2).shape[-1]:
        raise ValueError(f"matvec: x1 must be (..., m, n) and x2 (..., n); got shapes "
                         f"{aval(x1).shape} and {aval(x2).shape}")
    return _sum_of_products(x1, expand_dims(x2, -2), -1, False)


def vecmat(x1, x2, /):
    """The conjugated vectors x1 (..., m) times the matrices x2 (..., m, n): (..., n)."""
    x1, x2 = promote(x1, x2)
    x1, x2 = _operand(x1), _operand(x2)
    if aval(x2).ndim < 2 or aval(x1).ndim < 1 or aval(x1).shape[-1] != aval(x2).shape[-2]:
        raise ValueError(f"vecmat: x1 must be (..., m) and x2 (..., m, n); got shapes "
                         f"{aval(x1).shape} and {aval(x2).shape}")
    return _sum_of_products(expand_dims(x1, -1), x2, -2, True)


# --- partial sorts ------------------------------------------------------------------------------

def _partition_operand(name, a, kth, axis):
    a = _operand(a)
    if aval(a).dtype.kind == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonical_axis(axis, aval(a).ndim)
    kth = canonical_axis(kth, aval(a).shape[axis], what="kth")
    return moveaxis(a, axis, -1), kth, axis


def partition(a, kth, axis=-1):
    """The kth+1 smallest values along `axis` (ascending), then the others (descending), as
    JAX orders them."""
    from .sorting import sort
    a, kth, axis = _partition_operand("partition", a, kth, axis)
    ordered = sort(a, axis=-1)
    bottom = ordered[..., :kth + 1]
    top = lax.rev(ordered, (aval(a).ndim - 1,))[..., :aval(a).shape[-1] - kth - 1]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """The indices of the kth+1 smallest values along `axis` (in ascending order of value),
    then the indices of the others in increasing order, as JAX orders them."""
    from .extra import take_along_axis
    from .sorting import argsort
    a, kth, axis = _partition_operand("argpartition", a, kth, axis)
    order = argsort(a, axis=-1)
    bottom = order[..., :kth + 1]
    n = aval(a).shape[-1]
    rank = argsort(order, axis=-1)  # each element's position in the sorted order
    rest = argsort(rank <= kth, axis=-1)[..., :n - kth - 1]  # (stable: increasing index)
    return moveaxis(concatenate([bottom, rest], axis=-1), -1, axis)


def sort_complex(a):
    """a sorted along its last axis by real part, then imaginary part, as a complex array
    (the order of complex keys in `sort`)."""
    from .sorting import sort
    a = _operand(a)
    return to_dtype(sort(a), np.result_type(aval(a).dtype, np.complex64))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """p with each jump larger than `discont` between neighbours along `axis` reduced by
    a multiple of `period` (integer p and period: computed in integers, as NumPy)."""
    from .extra import diff
    from .reductions import cumsum
    from .ufuncs import absolute, add, logical_and, remainder, subtract
    p, period = promote(p, period)
    p, period = _operand(p), _operand(period)
    axis = canonical_axis(axis, aval(p).ndim)
    if discont is None:
        discont = period / 2
    dd = diff(p, axis=axis)
    integer = dtypes.is_integer(aval(p).dtype)
    high = period // 2 if integer else period / 2
    low = -high
    ddmod = add(remainder(subtract(dd, low), period), low)
    ambiguous = (not integer) or remainder(period, 2) == 0
    ddmod = where(logical_and(logical_and(ddmod == low, dd > 0), ambiguous), high, ddmod)
    correction = where(absolute(dd) < discont, 0, subtract(ddmod, dd))
    rest = add(_along(p, axis, slice(1, None)), cumsum(correction, axis=axis))
    return concatenate([_along(p, axis, slice(0, 1)), to_dtype(rest, aval(p).dtype)],
                       axis=axis)


__all__ = ["gradient", "trapezoid", "cumulative_sum", "cumulative_prod", "nancumsum",
           "nancumprod", "vecdot", "matvec", "vecmat", "partition", "argpartition",
           "sort_complex", "unwrap"]
