"""Reductions: sum, prod, mean, var, std, max, min, argmax, argmin, any, all, cumsum..."""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes, lax
from ..errors import UnsupportedOperationError
from ._core import aval, canonical_axes, canonical_axis, promote, to_dtype


def _reject(name, **kw):
    for k, v in kw.items():
        if v is not None:
            raise UnsupportedOperationError(f"jnp.{name}: the {k}= argument is not supported "
                                            "by jitviz")


def _keep(x, out, axes, keepdims):
    if not keepdims:
        return out
    return lax.expand_dims(out, axes)


def _strong(a, inexact=False):
    """The operand of a reduction: promoted, and strongly typed (JAX reduces a weakly
    typed value after a `convert_element_type[weak_type=False]`; results are strong)."""
    (a,) = promote(a, inexact=inexact)
    return to_dtype(a, aval(a).dtype, False)


def _cumulative_operand(a, dtype):
    """cumsum/cumprod's operand: JAX widens booleans only (an int8 cumsum stays int8 and
    wraps, unlike NumPy's and unlike jnp.sum)."""
    a = _strong(a)
    if dtype is not None:
        return to_dtype(a, dtypes.canonical_creation_dtype(dtype))
    if aval(a).dtype == np.bool_:
        return to_dtype(a, dtypes.sum_dtype(np.bool_))
    return a


def _accumulated(a, dtype):
    """The operand of sum/prod and the dtype of its result, as JAX types them: booleans and
    integers narrower than the default integer widen to it (`dtypes.sum_dtype`, so an int8
    sum does not wrap at 128), and float16 accumulates in float32, rounded back once."""
    a = _strong(a)
    if dtype is not None:
        out = dtypes.canonical_creation_dtype(dtype)
        return to_dtype(a, out), out
    out = dtypes.sum_dtype(aval(a).dtype)
    compute = dtypes.float32 if out == dtypes.float16 else out
    return to_dtype(a, compute), out


def _accumulate(reduce, combine, a, axis, dtype, keepdims, initial):
    """JAX's order: reduce, combine with `initial` (converted to the accumulator's dtype),
    keep the reduced dimensions, convert to the result dtype."""
    a, out = _accumulated(a, dtype)
    axes = canonical_axes(axis, aval(a).ndim)
    r = reduce(a, axes)
    if initial is not None:
        r = combine(to_dtype(initial, aval(r).dtype), r)
    return to_dtype(_keep(a, r, axes, keepdims), out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _reject("sum", out=out, where=where)
    return _accumulate(lax.reduce_sum, lax.add, a, axis, dtype, keepdims, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _reject("prod", out=out, where=where)
    return _accumulate(lax.reduce_prod, lax.mul, a, axis, dtype, keepdims, initial)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("max", out=out, where=where)
    a = _strong(a)
    axes = canonical_axes(axis, aval(a).ndim)
    if initial is None and builtins.any(aval(a).shape[i] == 0 for i in axes):
        raise ValueError("zero-size array to reduction operation max which has no identity")
    r = _keep(a, lax.reduce_max(a, axes), axes, keepdims)
    if initial is not None:
        from .ufuncs import maximum
        r = maximum(r, initial)
    return r


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("min", out=out, where=where)
    a = _strong(a)
    axes = canonical_axes(axis, aval(a).ndim)
    if initial is None and builtins.any(aval(a).shape[i] == 0 for i in axes):
        raise ValueError("zero-size array to reduction operation min which has no identity")
    r = _keep(a, lax.reduce_min(a, axes), axes, keepdims)
    if initial is not None:
        from .ufuncs import minimum
        r = minimum(r, initial)
    return r


amax, amin = max, min


def _count(a, axes):
    n = 1
    for i in axes:
        n *= aval(a).shape[i]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _reject("mean", out=out, where=where)
    a = _inexact_operand(a, dtype)
    axes = canonical_axes(axis, aval(a).ndim)
    r = lax.div(lax.reduce_sum(a, axes), _count_like(a, axes))
    return _keep(a, r, axes, keepdims)


def _inexact_operand(a, dtype):
    a = _strong(a, inexact=True)
    return a if dtype is None else to_dtype(a, dtypes.canonical_creation_dtype(dtype))


def _count_like(a, axes, ddof=0, dtype=None):
    """The number of reduced elements (less ddof) as a scalar of a's dtype (NaN if <= 0)."""
    n = _count(a, axes) - ddof
    return to_dtype(n if n > 0 else np.nan, dtype or aval(a).dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """In JAX's order: the mean kept as a broadcastable array, centred, squared, summed."""
    _reject("var", out=out, where=where)
    if correction is not None:
        ddof = correction
    a = _inexact_operand(a, dtype)
    axes = canonical_axes(axis, aval(a).ndim)
    centre = lax.div(lax.expand_dims(lax.reduce_sum(a, axes), axes), _count_like(a, axes))
    centered = lax.sub(a, centre)
    if aval(centered).dtype.kind == "c":
        sq = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        sq = lax.square(centered)
    total = lax.reduce_sum(sq, axes)
    r = lax.div(total, _count_like(a, axes, ddof, aval(total).dtype))
    return _keep(a, r, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where, correction))


def _arg(name, prim_fn, a, axis, keepdims):
    a = _strong(a)
    if axis is None:
        from .shape import ravel
        ndim = aval(a).ndim
        r = prim_fn(ravel(a), 0, dtypes.default_int())
        return lax.reshape(r, (1,) * ndim) if keepdims else r
    ax = canonical_axis(axis, aval(a).ndim)
    if aval(a).shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    r = prim_fn(a, ax, dtypes.default_int())
    return lax.expand_dims(r, (ax,)) if keepdims else r


def argmax(a, axis=None, out=None, keepdims=False):
    _reject("argmax", out=out)
    return _arg("argmax", lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    _reject("argmin", out=out)
    return _arg("argmin", lax.argmin, a, axis, keepdims)


def _strong_bool(a):
    """any/all's operand as JAX casts it: converted to a strong bool (x != 0), so any of a
    Python scalar is not weak. Complex values are compared with 0 (a cast would drop the
    imaginary part)."""
    (a,) = promote(a)
    if aval(a).dtype.kind == "c":
        from .ufuncs import _to_bool
        a = _to_bool(a)
    return to_dtype(a, np.bool_, False)


def _bool_reduce(a, axis, keepdims, fn):
    a = _strong_bool(a)
    axes = canonical_axes(axis, aval(a).ndim)
    return _keep(a, fn(a, axes), axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, where=None):
    _reject("any", out=out, where=where)
    return _bool_reduce(a, axis, keepdims, lax.reduce_or)


def all(a, axis=None, out=None, keepdims=False, where=None):
    _reject("all", out=out, where=where)
    return _bool_reduce(a, axis, keepdims, lax.reduce_and)


def _cumulative(fn, a, axis, dtype):
    a = _cumulative_operand(a, dtype)
    if axis is None:
        from .shape import ravel
        a, axis = ravel(a), 0
    return fn(a, canonical_axis(axis, aval(a).ndim))


def cumsum(a, axis=None, dtype=None, out=None):
    _reject("cumsum", out=out)
    return _cumulative(lax.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    _reject("cumprod", out=out)
    return _cumulative(lax.cumprod, a, axis, dtype)


def count_nonzero(a, axis=None, keepdims=False):
    from .ufuncs import _to_bool
    return sum(_to_bool(a), axis=axis, keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        r = mean(a, axis, keepdims=keepdims)
        return (r, to_dtype(_count(a, canonical_axes(axis, aval(a).ndim)), aval(r).dtype)) \
            if returned else r
    from .ufuncs import multiply, true_divide
    a, w = promote(a, weights, inexact=True)
    wsum = sum(w, axis, keepdims=keepdims) if aval(w).shape == aval(a).shape else sum(w)
    num = sum(multiply(a, w), axis, keepdims=keepdims)
    r = true_divide(num, wsum)
    return (r, wsum) if returned else r


def ptp(a, axis=None, keepdims=False):
    from .ufuncs import subtract
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))
