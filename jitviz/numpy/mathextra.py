"""Numerical functions composed from existing jnp/lax functions (no new primitives): the
nan* reductions, cov, corrcoef, convolve, correlate, polyval, logspace, geomspace,
nan_to_num, angle, ldexp, modf, gcd, lcm."""
from __future__ import annotations

import numpy as np

from .. import dtypes, lax
from ._core import aval, promote, to_dtype, unchanged
from .creation import asarray, linspace, zeros
from .linalg import _product
from .indexing import take
from .indexing import where as _where  # the reductions' where= argument shadows `where`
from .reductions import _reject, all as all_, argmax, argmin, max as max_, mean, min as min_, \
    prod, sum as sum_
from .shape import broadcast_arrays, concatenate, expand_dims, flip, moveaxis
from .ufuncs import (abs as abs_, arctan2, ceil, conj, equal, floor, floor_divide, imag,
                     isinf, isnan, log10, logical_not, logical_or, multiply, not_equal, power,
                     real, sign, sqrt, subtract, true_divide)


# --- nan reductions ---------------------------------------------------------------------------

def _inexact(a):
    return aval(a).dtype.kind in "fc"


def _nan_replaced(a, value):
    """`a` with NaNs replaced by `value` (integers and booleans have none: unchanged)."""
    (a,) = promote(a)
    return _where(isnan(a), to_dtype(value, aval(a).dtype), a) if _inexact(a) else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`jnp.nansum`: the sum with NaNs counted as zero."""
    _reject("nansum", out=out, where=where)
    return sum_(_nan_replaced(a, 0), axis, dtype, keepdims=keepdims, initial=initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`jnp.nanprod`: the product with NaNs counted as one."""
    _reject("nanprod", out=out, where=where)
    return prod(_nan_replaced(a, 1), axis, dtype, keepdims=keepdims, initial=initial)


def _nan_extreme(reduce, fill, a, axis, keepdims, initial):
    (a,) = promote(a)
    if not _inexact(a):
        return reduce(a, axis, keepdims=keepdims, initial=initial)
    out = reduce(_nan_replaced(a, fill), axis, keepdims=keepdims, initial=initial)
    # a slice of NaNs only has no maximum: NaN, as JAX (and NumPy, with a warning)
    return _where(all_(isnan(a), axis, keepdims=keepdims), to_dtype(np.nan, aval(out).dtype),
                 out)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`jnp.nanmax`: the maximum ignoring NaNs (NaN where every value is NaN)."""
    _reject("nanmax", out=out, where=where)
    return _nan_extreme(max_, -np.inf, a, axis, keepdims, initial)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`jnp.nanmin`: the minimum ignoring NaNs (NaN where every value is NaN)."""
    _reject("nanmin", out=out, where=where)
    return _nan_extreme(min_, np.inf, a, axis, keepdims, initial)


def _nan_count(a, axis, keepdims, dtype):
    return to_dtype(sum_(logical_not(isnan(a)), axis, keepdims=keepdims), dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """`jnp.nanmean`: the mean of the non-NaN values (integers: `mean`)."""
    _reject("nanmean", out=out, where=where)
    (a,) = promote(a)
    if not _inexact(a):
        return mean(a, axis, dtype, keepdims=keepdims)
    dt = dtypes.canonical_creation_dtype(dtype, "nanmean") or aval(a).dtype
    total = nansum(a, axis, dtype=dt, keepdims=keepdims)
    return lax.div(total, _nan_count(a, axis, keepdims, aval(total).dtype))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    """`jnp.nanvar`, in JAX's order: centre on the nanmean, zero the NaNs, square, sum,
    divide by the non-NaN count less ddof (NaN where that is <= 0)."""
    _reject("nanvar", out=out, where=where)
    ddof = ddof if correction is None else correction
    (a,) = promote(a, inexact=True)
    a = to_dtype(a, dtypes.canonical_creation_dtype(dtype, "nanvar") or aval(a).dtype, False)
    centre = nanmean(a, axis, keepdims=True)
    centered = _where(isnan(a), to_dtype(0, aval(a).dtype), subtract(a, centre))
    sq = real(multiply(centered, conj(centered))) if aval(a).dtype.kind == "c" else \
        multiply(centered, centered)
    total = sum_(sq, axis, keepdims=keepdims)
    count = subtract(sum_(logical_not(isnan(a)), axis, keepdims=keepdims), ddof)
    empty = lax.le(count, to_dtype(0, aval(count).dtype))
    total = _where(empty, to_dtype(np.nan, aval(total).dtype), total)
    divisor = _where(empty, to_dtype(1, aval(count).dtype), count)
    return lax.div(total, to_dtype(divisor, aval(total).dtype))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           correction=None):
    """`jnp.nanstd`: the square root of `nanvar`."""
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, correction))


def _nan_arg(name, arg, fill, a, axis, keepdims):
    (a,) = promote(a)
    if not _inexact(a):
        return arg(a, axis, keepdims=keepdims)
    nan = isnan(a)
    r = arg(_where(nan, to_dtype(fill, aval(a).dtype), a), axis, keepdims=keepdims)
    # JAX answers -1 for an all-NaN slice (NumPy raises)
    return _where(all_(nan, axis, keepdims=keepdims), to_dtype(-1, aval(r).dtype), r)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """`jnp.nanargmax`: the index of the maximum ignoring NaNs (-1 for all-NaN slices)."""
    _reject("nanargmax", out=out)
    return _nan_arg("nanargmax", argmax, -np.inf, a, axis, bool(keepdims))


def nanargmin(a, axis=None, out=None, keepdims=None):
    """`jnp.nanargmin`: the index of the minimum ignoring NaNs (-1 for all-NaN slices)."""
    _reject("nanargmin", out=out)
    return _nan_arg("nanargmin", argmin, np.inf, a, axis, bool(keepdims))


# --- statistics -------------------------------------------------------------------------------

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """`jnp.cov` without weights (fweights/aweights: NotImplementedError)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("jnp.cov: fweights and aweights are not supported by jitviz")
    from .linalg import dot
    from .shape import atleast_2d, reshape, squeeze, transpose
    (m,) = promote(m, inexact=True)
    if aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = atleast_2d(m)
    if not rowvar and aval(x).shape[0] != 1:
        x = transpose(x)
    if aval(x).shape[0] == 0:
        return reshape(asarray([], aval(x).dtype), (0, 0))
    if y is not None:
        (y,) = promote(y, inexact=True)
        y = atleast_2d(y)
        if not rowvar and aval(y).shape[0] != 1:
            y = transpose(y)
        x = concatenate([x, y], 0)
    ddof = (1 if not bias else 0) if ddof is None else ddof
    f = aval(x).shape[1] - ddof
    x = subtract(x, expand_dims(mean(x, axis=1), 1))
    return squeeze(true_divide(dot(x, conj(transpose(x))), f))


def corrcoef(x, y=None, rowvar=True):
    """`jnp.corrcoef`: the covariance normalised by the standard deviations, clipped to
    [-1, 1]."""
    from .extra import diag
    from .ufuncs import clip
    c = cov(x, y, rowvar)
    if aval(c).ndim == 0:
        return true_divide(c, c)
    d = diag(c)
    stddev = to_dtype(sqrt(real(d)), aval(c).dtype)
    c = true_divide(true_divide(c, expand_dims(stddev, 1)), expand_dims(stddev, 0))
    if aval(c).dtype.kind == "c":
        from .ufuncs import add
        return add(clip(real(c), -1, 1), multiply(1j, clip(imag(c), -1, 1)))
    return clip(c, -1, 1)


# --- convolution --------------------------------------------------------------------------

def _conv(op, a, v, mode, flip_v, precision, preferred_element_type):
    """JAX's `_conv`, with the 1-D correlation written as a static gather of the windows of
    the zero-padded `a` (an (out, k) matrix) and a matrix-vector product."""
    a, v = promote(a, v, inexact=True)
    if aval(a).ndim != 1 or aval(v).ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    n, k = aval(a).shape[0], aval(v).shape[0]
    if n == 0 or k == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {aval(a).shape} and "
                         f"{aval(v).shape}.")
    if n < k:
        a, v = v, a
        n, k = k, n
        if not flip_v:
            a, v = flip(a), flip(v)
    if flip_v:
        v = flip(v)
    pads = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    lo, hi = pads[mode]
    # zeros of a's type, weak if a is (JAX pads with lax.pad, which keeps a's weak type)
    zero = to_dtype(0, aval(a).dtype, aval(a).weak_type)
    parts = [lax.broadcast_in_dim(zero, (w,), ()) for w in (lo,) if w] + [a] + \
        [lax.broadcast_in_dim(zero, (w,), ()) for w in (hi,) if w]
    a = concatenate(parts) if len(parts) > 1 else a
    out_len = n + lo + hi - k + 1
    windows = take(a, np.arange(out_len)[:, None] + np.arange(k)[None, :])
    return _product(windows, v, (((1,), (0,)), ((), ())), precision,
                    preferred_element_type)


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """`jnp.convolve`: the discrete 1-D convolution (modes full, same, valid)."""
    return _conv("convolve", a, v, mode, True, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """`jnp.correlate`: the 1-D cross-correlation (modes full, same, valid)."""
    return _conv("correlate", a, v, mode, False, precision, preferred_element_type)


# --- polynomials and spaces ---------------------------------------------------------------

def polyval(p, x, *, unroll=16):
    """`jnp.polyval`: Horner's scheme, unrolled over the (static) number of coefficients
    (JAX scans; `unroll` is accepted and ignored)."""
    from .ufuncs import add
    p, x = promote(p, x)
    if aval(p).ndim == 0:
        raise ValueError("jnp.polyval: p must be at least one-dimensional")
    shape = np.broadcast_shapes(aval(p).shape[1:], aval(x).shape)
    y = zeros(shape, aval(x).dtype)
    for i in range(aval(p).shape[0]):
        row = lax.squeeze(lax.slice(p, (i,) + (0,) * (aval(p).ndim - 1),
                                    (i + 1,) + aval(p).shape[1:]), (0,))
        y = add(multiply(y, x), row)
    return y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`jnp.logspace`: `base ** linspace(start, stop)`, computed in a floating dtype."""
    dt = dtypes.canonical_creation_dtype(dtype, "logspace")
    compute = dtypes.to_inexact(dt) if dt is not None else None
    lin = linspace(start, stop, num, endpoint, dtype=compute, axis=axis)
    out = power(base, lin)
    return to_dtype(out, dt) if dt is not None else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`jnp.geomspace`: numbers evenly spaced on a log scale (signs kept, as JAX)."""
    dt = dtypes.canonical_creation_dtype(dtype, "geomspace")
    compute = dtypes.to_inexact(dt) if dt is not None else dtypes.default_float()
    start, stop = to_dtype(start, compute), to_dtype(stop, compute)
    s = sign(start)
    res = multiply(s, logspace(log10(true_divide(start, s)), log10(true_divide(stop, s)),
                               num, endpoint, 10.0, compute, 0))
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return to_dtype(res, dt) if dt is not None else res


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """`jnp.nan_to_num`: NaN -> `nan`, +inf -> `posinf` (the dtype's max), -inf -> `neginf`
    (its min); integers and booleans are returned unchanged."""
    (x,) = promote(x)
    dt = aval(x).dtype
    if dt.kind not in "fc":
        return unchanged(x)
    if dt.kind == "c":
        from .ufuncs import add
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return add(re, multiply(to_dtype(1j, dt), im))
    info = np.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _where(isnan(x), to_dtype(nan, dt), x)
    from .ufuncs import isneginf, isposinf
    out = _where(isposinf(out), to_dtype(posinf, dt), out)
    return _where(isneginf(out), to_dtype(neginf, dt), out)


# --- elementwise --------------------------------------------------------------------------

def angle(z, deg=False):
    """`jnp.angle`: the argument of a complex number (0 or pi for reals), in radians unless
    `deg`."""
    (z,) = promote(z)
    re, im = real(z), imag(z)
    # JAX converts both parts to the strong default float where z is not inexact or is a
    # 0-d float (angle(1.0) is not weakly typed); a weak float array stays weak
    if aval(re).dtype.kind != "f" or (aval(z).dtype.kind == "f" and aval(z).ndim == 0):
        re, im = (to_dtype(v, dtypes.default_float()) for v in (re, im))
    out = arctan2(im, re)
    if deg:
        from .ufuncs import degrees
        return degrees(out)
    return out


def ldexp(x1, x2, /):
    """`jnp.ldexp`: x1 * 2**x2 (x2 integer); inf and zero pass through, as JAX."""
    (x1,), (x2,) = promote(x1), promote(x2)
    d1, d2 = aval(x1).dtype, aval(x2).dtype
    if d1.kind == "c" or d2.kind in "fc":
        raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
    (x1,) = promote(x1, inexact=True)
    x = multiply(x1, power(2, to_dtype(x2, aval(x1).dtype)))
    return _where(logical_or(isinf(x1), equal(x1, 0)), x1, x)


def modf(x, /, out=None):
    """`jnp.modf`: the fractional and integral parts (both with x's sign)."""
    _reject("modf", out=out)
    (x,) = promote(x, inexact=True)
    whole = _where(lax.ge(x, to_dtype(0, aval(x).dtype, aval(x).weak_type)), floor(x), ceil(x))
    return subtract(x, whole), whole


def _integer_operands(name, x1, x2):
    x1, x2 = promote(x1, x2, numeric=True)
    if aval(x1).dtype.kind not in "iu":
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return broadcast_arrays(x1, x2)


def gcd(x1, x2, /):
    """`jnp.gcd`: Euclid's algorithm in a while_loop, elementwise."""
    x1, x2 = _integer_operands("gcd", x1, x2)
    zero = to_dtype(0, aval(x1).dtype, aval(x1).weak_type)
    one = to_dtype(1, aval(x1).dtype, aval(x1).weak_type)

    def cond(xs):
        from .reductions import any as any_
        return any_(not_equal(xs[1], zero))

    def body(xs):
        a, b = xs
        nz = not_equal(b, zero)
        from .ufuncs import remainder
        r = remainder(a, _where(nz, b, one))  # a safe divisor: b is 0 where nz is False
        a, b = _where(nz, b, a), _where(nz, r, zero)
        return _where(lax.lt(a, b), b, a), _where(lax.lt(a, b), a, b)
    out, _ = lax.while_loop(cond, body, (abs_(x1), abs_(x2)))
    # as JAX types it: an array result is strong (its loop body's zero is a strong constant
    # of the dtype), a 0-d one keeps the operands' weak type (JAX's gcd(6, 4) is weak)
    return lax.convert_element_type(out, aval(out).dtype, False) if aval(out).ndim else out


def lcm(x1, x2, /):
    """`jnp.lcm`: |x1 * (x2 // gcd)|, 0 where the gcd is 0."""
    x1, x2 = _integer_operands("lcm", x1, x2)
    d = gcd(x1, x2)
    zero = to_dtype(0, aval(d).dtype, aval(d).weak_type)
    safe = _where(equal(d, zero), to_dtype(1, aval(d).dtype, aval(d).weak_type), d)
    return _where(equal(d, zero), zero, multiply(abs_(x1), floor_divide(abs_(x2), safe)))

