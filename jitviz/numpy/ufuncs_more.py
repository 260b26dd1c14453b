"""More elementwise functions, composed from existing jnp/lax functions with JAX's dtypes:
`frexp`, `fabs`, `spacing`, `logaddexp2`, `i0`, `bitwise_count` (and the Array API's
`bitwise_invert`/`bitwise_left_shift`/`bitwise_right_shift`), `iscomplex`, `isreal`,
`iscomplexobj`, `isrealobj`, `packbits`, `unpackbits`, and the window functions `bartlett`,
`blackman`, `hamming`, `hanning`, `kaiser`.

jitviz has no bitcast primitive, so `frexp` finds the exponent arithmetically (log2, then a
correction by one where rounding moved it) and `bitwise_count` adds the bits one shift at a time.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, canonical_axis, is_traced, promote, to_dtype
from .creation import arange, asarray, ones, zeros
from .indexing import where
from .shape import concatenate, expand_dims, moveaxis, ravel, reshape
from . import ufuncs as _u


def _operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


def _inexact(x):
    (x,) = promote(x, inexact=True)
    return _operand(x)


# --- floating point ------------------------------------------------------------------------

def fabs(x, /):
    """|x| as a float (integers become the default float), as JAX."""
    x = _inexact(x)
    if aval(x).dtype.kind == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return _u.absolute(x)


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in [0.5, 1)
    (0, inf and NaN: themselves and exponent 0); exponent int32."""
    x = _inexact(x)
    if aval(x).dtype.kind == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    int_ = dtypes.default_int()
    special = _u.logical_or(_u.logical_not(_u.isfinite(x)), _u.equal(x, 0))
    safe = where(special, to_dtype(1, aval(x).dtype), x)
    exponent = _u.add(_u.floor(_u.log2(_u.absolute(safe))), 1)
    mantissa = _scaled_down(safe, exponent)
    # log2 may round across a power of two: move the exponent by one where it did
    too_big = _u.greater_equal(_u.absolute(mantissa), 1)
    too_small = _u.less(_u.absolute(mantissa), 0.5)
    exponent = _u.add(exponent, _u.subtract(too_big.astype(aval(x).dtype),
                                            too_small.astype(aval(x).dtype)))
    mantissa = _scaled_down(safe, exponent)
    return (where(special, x, mantissa),
            where(special, to_dtype(0, int_), lax.convert_element_type(exponent, int_)))


def _scaled_down(x, exponent):
    """x / 2**exponent in two exact steps (2**exponent alone can overflow for the largest
    floats and underflow for the smallest)."""
    half = _u.floor(_u.true_divide(exponent, 2))
    return _u.true_divide(_u.true_divide(x, _u.exp2(half)), _u.exp2(_u.subtract(exponent,
                                                                                half)))


def spacing(x, /):
    """The distance from x to the next float away from zero (negative for negative x)."""
    x = _inexact(x)
    away = where(_u.less(x, 0), to_dtype(-np.inf, aval(x).dtype),
                 to_dtype(np.inf, aval(x).dtype))
    return _u.subtract(_u.nextafter(x, away), x)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = promote(x1, x2, inexact=True)
    x1, x2 = _operand(x1), _operand(x2)
    largest = _u.maximum(x1, x2)
    delta = _u.subtract(x1, x2)
    tail = _u.true_divide(_u.log1p(_u.exp2(_u.negative(_u.absolute(delta)))),
                          to_dtype(math.log(2), aval(x1).dtype))
    # equal infinities give a NaN delta: their sum is the answer (inf, or -inf)
    return where(_u.isnan(delta), _u.add(x1, x2), _u.add(largest, tail))


_SERIES_LIMIT = 20.0
# terms of sum_k (x^2/4)^k / (k!)^2 below |x| <= _SERIES_LIMIT, and of the asymptotic
# e^x / sqrt(2 pi x) * sum_k ((2k-1)!!)^2 / (k! (8x)^k) beyond it, enough for each precision
_TERMS = {4: (30, 8), 8: (42, 14)}


_SERIES_SCALE = _SERIES_LIMIT ** 2 / 4  # the series runs in t = (x^2/4) / this, in [0, 1]


def _series_coefficients(n):
    """(scale^k / (k!)^2): moderate numbers (1/(k!)^2 alone underflows float32 by k=24)."""
    return [_SERIES_SCALE ** k / math.factorial(k) ** 2 for k in range(n)]


def _asymptotic_coefficients(n):
    out, c = [1.0], 1.0
    for k in range(1, n):
        c *= (2 * k - 1) ** 2 / k
        out.append(c)
    return out


def _horner(coefficients, t):
    """sum_k coefficients[k] * t**k, two equations a term."""
    acc = to_dtype(coefficients[-1], aval(t).dtype, aval(t).weak_type)
    for c in reversed(coefficients[:-1]):
        acc = _u.add(_u.multiply(acc, t), c)
    return acc


def i0(x):
    """The modified Bessel function of the first kind of order zero: its power series for
    small |x|, its asymptotic expansion for large |x| (each evaluated where it is used, so
    the other branch cannot put a NaN into a gradient)."""
    x = _inexact(x)
    if aval(x).dtype.kind == "c":
        raise TypeError("i0 does not support complex-valued inputs")
    dt, weak = aval(x).dtype, aval(x).weak_type  # (weak stays weak, as JAX's lax ops)
    n_series, n_asymptotic = _TERMS[8 if dt.itemsize >= 8 else 4]
    ax = _u.absolute(x)
    small = _u.less_equal(ax, _SERIES_LIMIT)
    xs = where(small, ax, to_dtype(0, dt, weak))
    series = _horner(_series_coefficients(n_series),
                     _u.multiply(0.25 / _SERIES_SCALE, _u.square(xs)))
    xl = where(small, to_dtype(2 * _SERIES_LIMIT, dt, weak), ax)
    tail = _horner(_asymptotic_coefficients(n_asymptotic),
                   _u.reciprocal(_u.multiply(8.0, xl)))
    large = _u.multiply(_u.true_divide(_u.exp(xl), _u.sqrt(_u.multiply(2 * np.pi, xl))), tail)
    return where(small, series, large)


# --- complex or real ---------------------------------------------------------------------------

def iscomplex(x):
    """Elementwise: whether x has a nonzero imaginary part."""
    x = _operand(x)
    if aval(x).dtype.kind != "c":
        return _typed_as_jax(zeros(aval(x).shape, np.bool_), x)
    return _u.not_equal(_u.imag(x), 0)


def isreal(x):
    """Elementwise: whether x has no imaginary part (zero imaginary part)."""
    x = _operand(x)
    if aval(x).dtype.kind != "c":
        return _typed_as_jax(ones(aval(x).shape, np.bool_), x)
    return _u.equal(_u.imag(x), 0)


def _typed_as_jax(answer, x):
    """isreal/iscomplex of a real `x`: JAX compares its imaginary part with a constant of
    its dtype, which leaves the answer weak for a weak 0-d `x` (`isreal(2.5)`), strong
    otherwise."""
    weak = aval(x).weak_type and aval(x).ndim == 0
    return lax.convert_element_type(answer, np.bool_, True) if weak else answer


def iscomplexobj(x):
    """Whether x's dtype is complex (not its values)."""
    if x is None:
        return False
    return np.dtype(aval(x).dtype if is_traced(x) or hasattr(x, "dtype") else
                    np.result_type(x)).kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


# --- bits ---------------------------------------------------------------------------------------

def bitwise_count(x, /):
    """The number of 1 bits in |x| of each integer, as uint8."""
    x = _operand(x)
    dt = aval(x).dtype
    if dt.kind not in "iub":
        raise TypeError(f"bitwise_count requires integer or boolean input, got {dt}")
    if dt.kind == "b":
        return lax.convert_element_type(x, np.uint8)
    x = where(_u.less(x, 0), _u.negative(x), x) if dt.kind == "i" else x
    one = to_dtype(1, dt)
    count = zeros(aval(x).shape, dt)
    for bit in range(dt.itemsize * 8):  # (an arithmetic shift keeps each bit in its place)
        shifted = lax.shift_right_arithmetic(x, to_dtype(bit, dt)) if bit else x
        count = _u.add(count, _u.bitwise_and(shifted, one))
    return lax.convert_element_type(count, np.uint8)


def bitwise_invert(x, /):
    return _u.invert(x)


def bitwise_left_shift(x1, x2, /):
    return _u.left_shift(x1, x2)


def bitwise_right_shift(x1, x2, /):
    return _u.right_shift(x1, x2)


def _bit_weights(bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    weights = 2 ** np.arange(8, dtype=np.uint8)
    return weights[::-1].copy() if bitorder == "big" else weights


def packbits(a, axis=None, bitorder="big"):
    """Groups of 8 elements (nonzero: 1) along `axis` packed into uint8 (zero-padded at the
    end), the first of each group in the highest bit ('big') or the lowest ('little')."""
    from .reductions import sum as sum_
    a = _operand(a)
    if aval(a).dtype.kind not in "iub":
        raise TypeError("Expected an input array of integer or boolean data type")
    weights = _bit_weights(bitorder)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, aval(a).ndim)
    bits = lax.convert_element_type(_u.not_equal(a, 0), np.uint8)
    bits = moveaxis(bits, axis, -1)
    n = aval(bits).shape[-1]
    padded = -(-n // 8) * 8
    if padded != n:
        bits = concatenate([bits, zeros(aval(bits).shape[:-1] + (padded - n,), np.uint8)], -1)
    groups = reshape(bits, aval(bits).shape[:-1] + (padded // 8, 8))
    packed = sum_(_u.multiply(groups, asarray(weights)), axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of each uint8 of `a` along `axis` (8 per byte, in `bitorder`), the first
    `count` of them (or padded with zeros to `count`)."""
    a = _operand(a)
    if aval(a).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1].copy() if bitorder == "big" else shifts
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, aval(a).ndim)
    a = moveaxis(a, axis, -1)
    bits = _u.bitwise_and(_u.right_shift(expand_dims(a, -1), asarray(shifts)),
                          to_dtype(1, np.uint8))
    bits = reshape(bits, aval(a).shape[:-1] + (aval(a).shape[-1] * 8,))
    if count is not None:
        count = operator.index(count)
        n = aval(bits).shape[-1]
        if count <= n:
            bits = bits[..., :count]
        else:
            bits = concatenate([bits, zeros(aval(bits).shape[:-1] + (count - n,), np.uint8)],
                               -1)
    return moveaxis(bits, -1, axis)


# --- windows ------------------------------------------------------------------------------------

def _window_points(M, name):
    # int(M), as JAX's concrete_or_error(int, M): a float size truncates (bartlett(2.5) has
    # 2 points); a traced one is a ConcretizationTypeError
    M = int(explain.concrete_or_error(M, f"The error arose in the M argument of jnp.{name}."))
    return M, arange(1 - M, M, 2, dtype=dtypes.default_float())


def _cosine_window(name, M, coefficients):
    """sum_k c_k cos(k pi n / (M - 1)) at n = 1-M, 3-M, ..., M-1."""
    M, n = _window_points(M, name)
    if M < 1:
        return zeros(0, dtypes.default_float())
    if M == 1:
        return ones(1, dtypes.default_float())
    out = None
    for k, c in enumerate(coefficients):
        term = to_dtype(c, dtypes.default_float()) if k == 0 else _u.multiply(
            c, _u.cos(_u.true_divide(_u.multiply(k * np.pi, n), M - 1)))
        out = term if out is None else _u.add(out, term)
    return out


def bartlett(M):
    """The triangular window of M points."""
    M, n = _window_points(M, "bartlett")
    if M < 1:
        return zeros(0, dtypes.default_float())
    if M == 1:
        return ones(1, dtypes.default_float())
    ramp = _u.true_divide(n, M - 1)
    return where(_u.less_equal(n, 0), _u.add(1, ramp), _u.subtract(1, ramp))


def blackman(M):
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M):
    return _cosine_window("hamming", M, (0.54, 0.46))


def hanning(M):
    return _cosine_window("hanning", M, (0.5, 0.5))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta."""
    M = int(explain.concrete_or_error(M, "The error arose in the M argument of jnp.kaiser."))
    if M < 1:
        return zeros(0, dtypes.default_float())
    if M == 1:
        return ones(1, dtypes.default_float())
    n = arange(0, M, dtype=dtypes.default_float())
    alpha = 0.5 * (M - 1)
    ratio = _u.true_divide(_u.subtract(n, alpha), alpha)
    (beta,) = promote(beta, inexact=True)
    beta = to_dtype(beta, dtypes.default_float())
    return _u.true_divide(i0(_u.multiply(beta, _u.sqrt(_u.subtract(1, _u.square(ratio))))),
                          i0(beta))


__all__ = ["fabs", "frexp", "spacing", "logaddexp2", "i0", "iscomplex", "isreal",
           "iscomplexobj", "isrealobj", "bitwise_count", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "packbits", "unpackbits", "bartlett",
           "blackman", "hamming", "hanning", "kaiser"]
