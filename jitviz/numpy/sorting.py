"""Sorting and order statistics over `lax.sort` (stable, NaN last), as JAX builds them:
`jnp.sort`, `jnp.argsort`, and the quantile family (`quantile`, `percentile`, `median` and
their `nan*` forms)."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes, lax
from ._core import aval, canonical_axis


def _prepared(a, axis):
    from ._core import promote
    from .shape import ravel
    (a,) = promote(a)
    if axis is None:
        return ravel(a), 0
    return a, canonical_axis(axis, aval(a).ndim)


def _no_numpy_options(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _no_numpy_options("sort", kind, order)
    a, dim = _prepared(a, axis)
    out = lax.sort(a, dimension=dim, is_stable=stable)
    return lax.rev(out, (dim,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    _no_numpy_options("argsort", kind, order)
    a, dim = _prepared(a, axis)
    index_dtype = dtypes.canonical_creation_dtype(dtype, "argsort") or dtypes.default_int()
    iota = lax.broadcasted_iota(index_dtype, aval(a).shape, dim)
    if descending and stable:  # equal keys keep their order once the result is reversed
        a, iota = lax.rev(a, (dim,)), lax.rev(iota, (dim,))
    _, indices = lax.sort_key_val(a, iota, dimension=dim, is_stable=stable)
    return lax.rev(indices, (dim,)) if descending else indices


__all__ = ["sort", "argsort"]


# --- quantiles: a sort, then the two order statistics around each q ----------------------------

def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    _no_output_arguments("quantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    _no_output_arguments("nanquantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    from .ufuncs import true_divide
    from ._core import promote
    (q,) = promote(q, inexact=True)
    return quantile(a, true_divide(q, 100), axis, out, overwrite_input, method, keepdims,
                    weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    from .ufuncs import true_divide
    from ._core import promote
    (q,) = promote(q, inexact=True)
    return nanquantile(a, true_divide(q, 100), axis, out, overwrite_input, method, keepdims,
                       weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def _no_output_arguments(name, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")


def _quantile(a, q, axis, method, keepdims, squash_nans, weights):
    """JAX's algorithm (jnp.quantile's `_quantile`) for every method but inverted_cdf."""
    from ._core import promote
    from .creation import asarray
    from .reductions import any as any_, sum as sum_
    from .shape import reshape, transpose
    from .ufuncs import isnan
    from .indexing import where
    if method not in tuple(_COMBINE) + ("inverted_cdf",):
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None or method == "inverted_cdf":
        raise NotImplementedError("jitviz's quantiles have no weights and no 'inverted_cdf' "
                                  "method yet")
    (a,) = promote(a, inexact=True)
    q = asarray(q)
    if aval(a).dtype.kind == "c":
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if aval(q).ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {aval(q).shape}")
    shape, keep_shape = aval(a).shape, None
    if axis is None:
        keep_shape = (1,) * len(shape) if keepdims else None
        a, axis = reshape(a, (-1,)), 0
    elif isinstance(axis, tuple):
        axes = tuple(canonical_axis(ax, len(shape)) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        kept = [d for d in range(len(shape)) if d not in axes]
        keep_shape = tuple(1 if d in axes else n for d, n in enumerate(shape))
        reduced = math.prod(shape[d] for d in axes)  # (not -1: the array may be empty)
        # JAX's order of the flattened values: kept axes swapped to the front one by one,
        # the reduced ones left as the swaps leave them (not in `axis`'s order). Ties that
        # differ, 0.0 and -0.0, keep this order in the stable sort (seed 39000710)
        order = list(range(len(shape)))
        for i, s in enumerate(kept):
            order[i], order[s] = order[s], order[i]
        a = reshape(transpose(a, order), tuple(shape[d] for d in kept) + (reduced,))
        axis = len(kept)
    else:
        axis = canonical_axis(axis, len(shape))
    n_axis = aval(a).shape[axis]
    if n_axis == 0 and squash_nans and aval(a).ndim == 1 and not keepdims:
        # JAX's nan-quantiles index the statistics of an empty axis: with every axis
        # reduced (a scalar result) that is its IndexError; with keepdims its index has
        # the kept axis, a gather: the TypeError below (seed 61000115)
        raise IndexError("index is out of bounds for axis 0 with size 0")
    if n_axis == 0 and not squash_nans:
        # JAX gathers the order statistics with slices of 1 along the axis: its TypeError
        # for an empty axis, even when the result is empty (seed 36006976). Its
        # nan-quantiles index instead, which raises only for a non-empty result (the
        # gather below says so; seed 40000894: nanquantile of zeros((0, 0)) is empty)
        raise TypeError(f"Slice size at index {axis} in gather op is out of range, must be "
                        f"within [0, 0 + 1), got 1: the quantile's axis of the operand "
                        f"{tuple(aval(a).shape)} is empty, so there is no element to take")
    if squash_nans:
        a = lax.sort(where(isnan(a), np.nan, a), dimension=axis)  # NaNs last, of one sign
        counts = sum_(~isnan(a), axis=axis, dtype=aval(q).dtype, keepdims=True)
    else:
        a = lax.sort(where(any_(isnan(a), axis=axis, keepdims=True), np.nan, a), dimension=axis)
        counts = np.asarray(n_axis, aval(q).dtype)
    low_value, high_value, high_weight = _order_statistics(a, q, axis, counts)
    result = _COMBINE[method](low_value, high_value, high_weight, aval(q).dtype)
    if not keepdims:  # the statistics keep the reduced axis (after q's) as size 1
        result = reshape(result, tuple(d for i, d in enumerate(aval(result).shape)
                                       if i != aval(q).ndim + axis))
    elif keep_shape:  # (a 0-d input keeps the axis its ravel made, as in JAX)
        result = reshape(result, aval(q).shape + keep_shape)
    return lax.convert_element_type(result, aval(a).dtype)


def _order_statistics(a, q, axis, counts):
    """The sorted values just below and above position q * (count - 1) of each line, and
    the weight of the one above; shaped q.shape + a.shape with the axis of size 1."""
    from .extra import take_along_axis
    from .shape import broadcast_to, expand_dims
    from .ufuncs import ceil, floor, maximum, minimum, subtract, multiply
    qn = aval(q).ndim
    line = tuple(1 if i == axis else d for i, d in enumerate(aval(a).shape))
    counts = broadcast_to(counts, line)
    qb = expand_dims(q, tuple(range(qn, qn + len(line)))) if len(line) else q
    pos = multiply(qb, subtract(counts, 1))
    low, high = floor(pos), ceil(pos)
    weight = subtract(pos, low)
    top = subtract(counts, 1)
    low = lax.convert_element_type(maximum(0, minimum(low, top)), dtypes.default_int())
    high = lax.convert_element_type(maximum(0, minimum(high, top)), dtypes.default_int())
    full = aval(q).shape + aval(a).shape
    stacked = broadcast_to(expand_dims(a, tuple(range(qn))) if qn else a, full)
    idx_shape = aval(q).shape + line
    lo = take_along_axis(stacked, broadcast_to(low, idx_shape), axis + qn)
    hi = take_along_axis(stacked, broadcast_to(high, idx_shape), axis + qn)
    return lo, hi, broadcast_to(weight, idx_shape)


def _linear(low, high, high_weight, q_dtype):
    from .ufuncs import add, multiply, subtract
    return add(multiply(lax.convert_element_type(low, q_dtype), subtract(1, high_weight)),
               multiply(lax.convert_element_type(high, q_dtype), high_weight))


def _nearest(low, high, high_weight, q_dtype):
    from .indexing import where
    return where(high_weight <= 0.5, low, high)


def _midpoint(low, high, high_weight, q_dtype):
    from .ufuncs import add, multiply
    return multiply(add(low, high), 0.5)


# method -> the quantile from the order statistics around it (JAX's formulas)
_COMBINE = {"linear": _linear, "lower": lambda low, high, w, dt: low,
            "higher": lambda low, high, w, dt: high, "nearest": _nearest,
            "midpoint": _midpoint}


__all__ += ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]
