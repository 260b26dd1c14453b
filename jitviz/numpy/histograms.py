"""Searching sorted arrays and counting into bins, as JAX does them: `searchsorted`,
`digitize`, `bincount`, `histogram_bin_edges`, `histogram`, `histogram2d`, `histogramdd`,
`interp`.

`searchsorted` is a binary search of a fixed number of steps (ceil(log2(n + 1)), known from
the shapes), each a gather and a select over all the queries at once; NaNs sort last. Counting
into bins is a scatter-add (`x.at[bins].add(weights)`), so weights are differentiable.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, converted, is_traced, promote, to_dtype
from .creation import asarray, linspace, ones_like, zeros
from .indexing import where
from .shape import concatenate, ravel, reshape

_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


def _sorts_before(x, y):
    """x < y in the order jnp.sort gives (NaNs last), elementwise."""
    from .ufuncs import isnan, less, logical_and, logical_not, logical_or
    if not dtypes.is_inexact(aval(x).dtype):
        return less(x, y)
    return logical_or(less(x, y), logical_and(isnan(y), logical_not(isnan(x))))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Where each of `v` would be inserted into the sorted 1-D `a` to keep it sorted: the
    number of elements of `a` below it (side='left') or not above it (side='right')."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"jnp.searchsorted: invalid method={method!r}; expected one of "
                         f"{list(_SEARCH_METHODS)}")
    a, v = promote(a, v)
    a, v = _operand(a), _operand(v)
    if aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = a[_operand(sorter)]
    n = aval(a).shape[0]
    int_ = dtypes.default_int()
    if n == 0:
        return zeros(aval(v).shape, int_)
    # the answer is the first position i whose element `v` must go before (n if none)
    if side == "left":
        def goes_before(elem): return ~_sorts_before(elem, v)  # v <= a[i]
    else:
        def goes_before(elem): return _sorts_before(v, elem)   # v < a[i]
    if method == "compare_all":
        from .reductions import sum as sum_
        return sum_(~goes_before(a.reshape((n,) + (1,) * aval(v).ndim)), axis=0, dtype=int_)
    return _binary_search(a, goes_before, aval(v).shape, int_)


def _binary_search(a, goes_before, shape, int_):
    """The first i in [0, n] with goes_before(a[i]) (true at n), for every query at once:
    `low` stays below the answer and `high` at or above it; each step halves the gap."""
    from .creation import full
    n = aval(a).shape[0]
    one = to_dtype(1, int_)

    def halve(_, bounds):
        low, high = bounds
        # the midpoint rounded up: in (low, high], so a gap of 1 leaves high as it is (at
        # n the gather clamps, and whichever way it goes high stays n)
        mid = lax.shift_right_arithmetic(lax.add(lax.add(low, high), one), one)
        before = goes_before(a[mid])
        return where(before, low, mid), where(before, mid, high)
    # one loop body, traced once (an unrolled search would be ~18 equations per step)
    _, high = lax.fori_loop(0, math.ceil(math.log2(n + 1)), halve,
                            (full(shape, -1, int_), full(shape, n, int_)))
    return high


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    x, bins = promote(x, bins)
    x, bins = _operand(x), _operand(bins)
    if aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    n = aval(bins).shape[0]
    if n == 0:
        return zeros(aval(x).shape, dtypes.default_int())
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    rising = searchsorted(bins, x, side=side, **kw)
    falling = lax.sub(to_dtype(n, aval(rising).dtype),
                      searchsorted(bins[::-1], x, side=side, **kw))
    return where(bins[-1] >= bins[0], rising, falling)


def bincount(x, weights=None, minlength=0, *, length=None):
    """How often each value 0..length-1 occurs in the non-negative integer array `x`
    (negative values count as 0, values >= length are dropped), weighted by `weights`."""
    from .ufuncs import maximum
    x = _operand(x)
    if not dtypes.is_integer(aval(x).dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got "
                        f"{aval(x).dtype}")
    if aval(x).ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(explain.concrete_or_error(
        minlength, "The error occurred because of argument 'minlength' of jnp.bincount."))
    if minlength < 0:
        raise ValueError(f"minlength must not be negative, got minlength={minlength}")
    if length is None:
        x = explain.concrete_or_error(
            x, "The error occurred because of argument 'x' of jnp.bincount. To avoid this "
               "error, pass a static `length` argument.")
        values = np.asarray(x)
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = operator.index(explain.concrete_or_error(
            length, "The error occurred because of argument 'length' of jnp.bincount."))
    if weights is None:
        weights = asarray(1, dtypes.default_int())
    else:
        weights = _operand(weights)
        if aval(weights).shape != aval(x).shape:
            raise ValueError("shape of weights must match shape of x.")
    return zeros(length, aval(weights).dtype).at[maximum(x, 0)].add(weights, mode="drop")


# --- histograms -------------------------------------------------------------------------------

def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges `histogram` uses: `bins` itself (edges), or `bins` equal bins over
    `range` (default: a's min to max, widened by 0.5 each side when they are equal)."""
    from .reductions import max as max_, min as min_
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    (a,) = promote(a, inexact=True)
    a = ravel(_operand(a))
    dtype = aval(a).dtype
    if np.ndim(bins) == 1 or (is_traced(bins) and aval(bins).ndim == 1):
        return converted(to_dtype(_operand(bins), dtype), bins)
    bins = operator.index(explain.concrete_or_error(
        bins, "The error occurred in the bins argument of histogram_bin_edges, which must be "
              "a static integer or an array of edges."))
    if range is None:
        lo, hi = min_(a), max_(a)
    else:
        if np.ndim(range) != 1 or len(range) != 2:
            raise ValueError(f"`range` must be either None or a sequence of scalars, got "
                             f"{range}")
        lo, hi = (to_dtype(_operand(r), dtype) for r in range)
    flat = hi == lo
    lo, hi = where(flat, lo - 0.5, lo), where(flat, hi + 0.5, hi)
    return linspace(lo, hi, bins + 1, dtype=dtype)


def _bin_index(values, edges):
    """The index of each value's bin counting an underflow bin 0 (values on the last edge
    go into the last bin, as NumPy closes it)."""
    n = aval(edges).shape[0]
    idx = searchsorted(edges, values, side="right")
    return where(values == edges[-1], n - 1, idx)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, edges): the (weighted) number of values of `a` in each bin."""
    from .extra import diff
    from .reductions import sum as sum_
    if isinstance(bins, str):  # (JAX checks bins is an array first: a TypeError)
        raise TypeError(f"histogram requires ndarray or scalar arguments, got a string for "
                        f"bins ({bins!r}): pass the number of bins or their edges")
    (a,) = promote(a, inexact=True)
    a = _operand(a)
    if weights is None:
        weights = ones_like(a)
    else:
        weights = _operand(weights)
        if aval(weights).shape != aval(a).shape:
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote(a, weights, inexact=True)
    edges = histogram_bin_edges(a, bins, range, weights)
    nbins = aval(edges).shape[0] + 1
    counts = zeros(nbins, aval(weights).dtype).at[_bin_index(ravel(a), edges)].add(
        ravel(weights))[1:-1]
    if density:
        counts = counts / diff(edges) / sum_(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, [edges per dimension]) of the N points of `sample` (N, D)."""
    from .extra import diff
    from .reductions import sum as sum_
    from .index_tricks import ravel_multi_index
    sample = _operand(sample)
    if aval(sample).ndim != 2:
        raise ValueError(f"histogramdd: sample must be a 2-D array of N points of D "
                         f"dimensions, got shape {aval(sample).shape}")
    n, d = aval(sample).shape
    if weights is not None:
        weights = _operand(weights)
        if aval(weights).shape != (n,):
            raise ValueError("should have one weight for each sample.")
    per_dim_bins = _per_dimension(bins, d, "bins")
    ranges = [None] * d if range is None else _per_dimension(range, d, "range", True)
    edges = [histogram_bin_edges(sample[:, i], per_dim_bins[i], ranges[i]) for i in
             np_range(d)]
    idx = [_bin_index(sample[:, i], e) for i, e in enumerate(edges)]
    dims = tuple(aval(e).shape[0] + 1 for e in edges)
    flat = ravel_multi_index(idx, dims, mode="clip")
    values = asarray(1, dtypes.default_int()) if weights is None else weights
    counts = zeros(math.prod(dims), aval(values).dtype).at[flat].add(values)
    counts = reshape(counts, dims)[tuple(slice(1, -1) for _ in dims)]
    if density:
        counts = counts / sum_(counts)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = aval(e).shape[0] - 1
            counts = counts / reshape(diff(e), shape)
    return counts, edges


np_range = range  # the builtin, shadowed by the `range` arguments above


def _per_dimension(spec, d, what, pairs=False):
    """bins/range for each of d dimensions: one shared spec, or a sequence of d."""
    if isinstance(spec, (list, tuple)) and len(spec) == d and not (
            pairs and d == 2 and all(np.ndim(s) == 0 and s is not None for s in spec)):
        return list(spec)
    if pairs:
        raise ValueError(f"histogramdd: {what} must be a sequence of {d} (min, max) pairs or "
                         f"None")
    if np.ndim(spec) == 0 or is_traced(spec):
        return [spec] * d
    raise ValueError(f"histogramdd: {what} must be an integer, an array of edges or a "
                     f"sequence of {d} of them; got {spec!r}")


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges) of the points (x[i], y[i])."""
    from .shape import stack
    x, y = promote(x, y)
    sample = stack([_operand(x), _operand(y)], axis=1)
    if not (isinstance(bins, (list, tuple)) and len(bins) == 2):
        bins = [bins, bins]  # one count, or one array of edges, for both axes
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


# --- interpolation ----------------------------------------------------------------------------

def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp increasing; with
    `period`, xp is taken modulo the period). left/right: the values beyond the ends (default
    fp's end values; 'extrapolate' continues the end segments)."""
    from .ufuncs import absolute, add, multiply, remainder, subtract, true_divide
    x, xp, fp = promote(x, xp, fp, inexact=True)
    x, xp, fp = _operand(x), _operand(xp), _operand(fp)
    if aval(xp).ndim != 1 or aval(fp).ndim != 1 or aval(xp).shape != aval(fp).shape:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"jnp.interp: the only valid string value of `{name}` is "
                             f"'extrapolate', got {v!r}")
    if period is not None:  # (left and right are ignored then, as in NumPy)
        x, xp, fp = _periodic(x, xp, fp, period)
    n = aval(xp).shape[0]
    i = lax.clamp(to_dtype(1, dtypes.default_int()), searchsorted(xp, x, side="right"),
                  to_dtype(max(n - 1, 1), dtypes.default_int()))
    x0, f0 = xp[i - 1], fp[i - 1]
    dx, df = subtract(xp[i], x0), subtract(fp[i], f0)
    tiny = absolute(dx) <= 10 * np.finfo(aval(dx).dtype).eps
    f = where(tiny, f0, add(f0, multiply(true_divide(subtract(x, x0), where(tiny, 1, dx)), df)))
    if period is None:
        if left != "extrapolate":
            f = where(x < xp[0], fp[0] if left is None else left, f)
        if right != "extrapolate":
            f = where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


def _periodic(x, xp, fp, period):
    """x and xp reduced modulo the period, xp sorted, and one point of the neighbouring
    periods added at each end, so every x lies between two points."""
    from .sorting import argsort
    from .ufuncs import absolute, remainder
    period = absolute(to_dtype(_operand(period), aval(x).dtype))
    x, xp = remainder(x, period), remainder(xp, period)
    order = argsort(xp)
    xp, fp = xp[order], fp[order]
    xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
    fp = concatenate([fp[-1:], fp, fp[:1]])
    return x, xp, fp


__all__ = ["searchsorted", "digitize", "bincount", "histogram_bin_edges", "histogram",
           "histogram2d", "histogramdd", "interp"]
