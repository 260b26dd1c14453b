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


def _masked(a, where, fill):
    """`a` with the elements `where` leaves out replaced by the reduction's identity
    `fill`, as JAX masks before it reduces."""
    if where is None:
        return a
    from .indexing import where as select
    return select(where, a, to_dtype(fill, aval(a).dtype))


def _identity(a, initial, name, fill):
    """The masked-out value of max/min: `initial` when given; JAX refuses a mask without
    it (the reduction has no identity)."""
    if initial is None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    return fill(aval(a).dtype)


def _accumulate(reduce, combine, a, axis, dtype, keepdims, initial, where=None, fill=0):
    """JAX's order: mask, reduce, combine with `initial` (converted to the accumulator's
    dtype), keep the reduced dimensions, convert to the result dtype."""
    a, out = _accumulated(a, dtype)
    a = _masked(a, where, fill)
    axes = canonical_axes(axis, aval(a).ndim)
    r = reduce(a, axes)
    if initial is not None:
        r = combine(to_dtype(initial, aval(r).dtype), r)
    return to_dtype(_keep(a, r, axes, keepdims), out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _reject("sum", out=out)
    return _accumulate(lax.reduce_sum, lax.add, a, axis, dtype, keepdims, initial, where, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _reject("prod", out=out)
    return _accumulate(lax.reduce_prod, lax.mul, a, axis, dtype, keepdims, initial, where, 1)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("max", out=out)
    a = _strong(a)
    if where is not None:
        a = _masked(a, where, _identity(a, initial, "max", dtypes.lowest))
    axes = canonical_axes(axis, aval(a).ndim)
    if initial is None and builtins.any(aval(a).shape[i] == 0 for i in axes):
        raise ValueError("zero-size array to reduction operation max which has no identity")
    r = lax.reduce_max(a, axes)
    if initial is not None:  # in a's dtype, as JAX converts it (no promotion)
        r = lax.max(to_dtype(initial, aval(a).dtype), r)
    return _keep(a, r, axes, keepdims)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("min", out=out)
    a = _strong(a)
    if where is not None:
        a = _masked(a, where, _identity(a, initial, "min", dtypes.highest))
    axes = canonical_axes(axis, aval(a).ndim)
    if initial is None and builtins.any(aval(a).shape[i] == 0 for i in axes):
        raise ValueError("zero-size array to reduction operation min which has no identity")
    r = lax.reduce_min(a, axes)
    if initial is not None:  # in a's dtype, as JAX converts it (no promotion)
        r = lax.min(to_dtype(initial, aval(a).dtype), r)
    return _keep(a, r, axes, keepdims)


amax, amin = max, min


def _count(a, axes):
    n = 1
    for i in axes:
        n *= aval(a).shape[i]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _reject("mean", out=out)
    a = _inexact_operand(a, dtype)
    axes = canonical_axes(axis, aval(a).ndim)
    if where is None:
        return _keep(a, lax.div(lax.reduce_sum(a, axes), _count_like(a, axes)), axes, keepdims)
    # JAX divides the masked sum by the number of selected elements (0: NaN or inf)
    from ._core import broadcast_to_shape
    count = sum(broadcast_to_shape(where, aval(a).shape), axis, aval(a).dtype, keepdims=True)
    r = lax.div(_keep(a, lax.reduce_sum(_masked(a, where, 0), axes), axes, True), count)
    return r if keepdims else lax.squeeze(r, axes)


def _inexact_operand(a, dtype):
    """mean's operand: in the default float, or converted straight to `dtype` (an integer
    `dtype` sums and divides in integers, as JAX: no trip through float32's 24 bits)."""
    if dtype is None:
        return _strong(a, inexact=True)
    return to_dtype(_strong(a), dtypes.canonical_creation_dtype(dtype))


def _count_like(a, axes, ddof=0, dtype=None):
    """The number of reduced elements (less ddof) as a scalar of a's dtype (NaN if <= 0)."""
    n = _count(a, axes) - ddof
    return to_dtype(n if n > 0 else np.nan, dtype or aval(a).dtype)


def _var_dtypes(a_dtype, dtype):
    """(computation dtype, result dtype) of var/std, as JAX's _var_promote_types: a
    `dtype=` is both (an integer one too); otherwise integers and booleans compute in the
    default float and complex values give a real result."""
    if dtype is not None:
        dt = dtypes.canonical_creation_dtype(dtype)
        if a_dtype.kind == "c" and dt.kind != "c":
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                             "computing the variance of an array of complex values")
        return dt, dt
    if a_dtype.kind not in "fc":
        dt = dtypes.to_inexact(a_dtype)
        return dt, dt
    return a_dtype, np.dtype(np.real(np.zeros((), a_dtype)).dtype)


def _selected_count(a, axis, where, keepdims, dtype):
    """The number of elements a reduction over `axis` reads (`where` selects), in dtype."""
    if where is None:
        return to_dtype(_count(a, canonical_axes(axis, aval(a).ndim)), dtype)
    from ._core import broadcast_to_shape
    return sum(broadcast_to_shape(where, aval(a).shape), axis, dtype, keepdims=keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """In JAX's order: the mean kept as a broadcastable array, centred, squared, summed,
    divided by the count less ddof, converted to the result dtype, and NaN where that count
    is not positive (a select that promotes: an integer `dtype=` gives a weak float)."""
    _reject("var", out=out)
    if correction is not None:
        ddof = correction
    comp, out_dt = _var_dtypes(aval(_strong(a)).dtype, dtype)
    a = to_dtype(_strong(a), comp)
    centered = lax.sub(a, mean(a, axis, comp, keepdims=True, where=where))
    if comp.kind == "c":
        sq = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        sq = lax.square(centered)
    sq_dt = aval(sq).dtype
    count = lax.sub(_selected_count(a, axis, where, keepdims, sq_dt), to_dtype(ddof, sq_dt))
    total = sum(sq, axis, sq_dt, keepdims=keepdims, where=where)
    r = to_dtype(lax.div(total, count), out_dt)
    from .indexing import where as select
    return select(lax.gt(count, to_dtype(0, sq_dt)), r, np.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    if dtype is not None and not np.issubdtype(dtypes.canonical_creation_dtype(dtype, "std"),
                                               np.inexact):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")
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


def _bool_reduce(a, axis, keepdims, fn, where=None, fill=False):
    a = _masked(_strong_bool(a), where, fill)
    axes = canonical_axes(axis, aval(a).ndim)
    return _keep(a, fn(a, axes), axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, where=None):
    _reject("any", out=out)
    return _bool_reduce(a, axis, keepdims, lax.reduce_or, where, False)


def all(a, axis=None, out=None, keepdims=False, where=None):
    _reject("all", out=out)
    return _bool_reduce(a, axis, keepdims, lax.reduce_and, where, True)


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
    from .ufuncs import multiply, true_divide
    axes = canonical_axes(axis, aval(a).ndim)
    if weights is None:
        (a,) = promote(a, inexact=True)
        r = mean(a, axis, keepdims=keepdims)
        wsum = to_dtype(_count(a, axes), aval(r).dtype)
    else:
        a, w = promote(a, weights, inexact=True)
        if aval(w).shape != aval(a).shape:
            w = _weights_along(w, aval(a), axis, axes)
        wsum = sum(w, axis, keepdims=keepdims)
        r = true_divide(sum(multiply(a, w), axis, keepdims=keepdims), wsum)
    if not returned:
        return r
    if aval(wsum).shape != aval(r).shape:
        from .shape import broadcast_to
        wsum = broadcast_to(wsum, aval(r).shape)
    return r, wsum


def _weights_along(w, a, axis, axes):
    """Weights with the shape of `a` along the averaged axes, laid out along them (JAX)."""
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if aval(w).shape != tuple(a.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
    order = sorted(range(len(axes)), key=lambda k: axes[k])  # the axes in a's order
    w = lax.transpose(w, order) if order != list(range(len(axes))) else w
    return lax.reshape(w, tuple(d if i in axes else 1 for i, d in enumerate(a.shape)))


def ptp(a, axis=None, keepdims=False):
    from .ufuncs import subtract
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))
