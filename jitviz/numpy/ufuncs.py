"""Elementwise functions with NumPy's names and JAX's promotion rules."""
from __future__ import annotations

import numpy as np

from .. import dtypes, lax
from ..errors import UnsupportedOperationError
from ._core import aval, broadcast_args, is_traced, promote, to_dtype


def _unary(name, lax_fn, inexact=False, int_identity=False, bool_ok=True):
    def f(x, /):
        (x,) = promote(x, inexact=inexact)
        if int_identity and aval(x).dtype.kind in "iub":
            return x
        return lax_fn(x)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (traced when tracing)."
    return f


def _binary(name, lax_fn, inexact=False, bool_fn=None):
    def f(x1, x2, /):
        a, b = promote(x1, x2, inexact=inexact)
        a, b = broadcast_args(a, b)
        if bool_fn is not None and aval(a).dtype == np.bool_:
            return bool_fn(a, b)  # NumPy and JAX: on booleans + is `or`, * is `and`
        return lax_fn(a, b)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (traced when tracing)."
    return f


add = _binary("add", lax.add, bool_fn=lax.bitwise_or)
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lax.mul, bool_fn=lax.bitwise_and)
true_divide = divide = _binary("true_divide", lax.div, inexact=True)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
fmax, fmin = maximum, minimum
arctan2 = _binary("arctan2", lax.atan2, inexact=True)
nextafter = _binary("nextafter", lax.nextafter, inexact=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
left_shift = _binary("left_shift", lax.shift_left)
right_shift = _binary("right_shift", lax.shift_right_arithmetic)

negative = _unary("negative", lax.neg)
sign = _unary("sign", lax.sign)
floor = _unary("floor", lax.floor, inexact=True)
ceil = _unary("ceil", lax.ceil, inexact=True)
exp = _unary("exp", lax.exp, inexact=True)
exp2 = _unary("exp2", lax.exp2, inexact=True)
expm1 = _unary("expm1", lax.expm1, inexact=True)
log = _unary("log", lax.log, inexact=True)
log1p = _unary("log1p", lax.log1p, inexact=True)
sqrt = _unary("sqrt", lax.sqrt, inexact=True)
cbrt = _unary("cbrt", lax.cbrt, inexact=True)
sin = _unary("sin", lax.sin, inexact=True)
cos = _unary("cos", lax.cos, inexact=True)
tan = _unary("tan", lax.tan, inexact=True)
arcsin = _unary("arcsin", lax.asin, inexact=True)
arccos = _unary("arccos", lax.acos, inexact=True)
arctan = _unary("arctan", lax.atan, inexact=True)
sinh = _unary("sinh", lax.sinh, inexact=True)
cosh = _unary("cosh", lax.cosh, inexact=True)
tanh = _unary("tanh", lax.tanh, inexact=True)
arcsinh = _unary("arcsinh", lax.asinh, inexact=True)
arccosh = _unary("arccosh", lax.acosh, inexact=True)
arctanh = _unary("arctanh", lax.atanh, inexact=True)
square = _unary("square", lax.square)
real = _unary("real", lambda x: lax.real(x) if aval(x).dtype.kind == "c" else x)
imag = _unary("imag", lambda x: lax.imag(x) if aval(x).dtype.kind == "c"
              else lax.sub(x, x))
conjugate = conj = _unary("conjugate", lambda x: lax.conj(x) if aval(x).dtype.kind == "c" else x)
asin, acos, atan, asinh, acosh, atanh, atan2 = (arcsin, arccos, arctan, arcsinh, arccosh,
                                                 arctanh, arctan2)


def positive(x, /):
    (x,) = promote(x)
    return x


def absolute(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind in "ub":
        return x
    return lax.abs(x)


abs = absolute


def log2(x, /):
    (x,) = promote(x, inexact=True)
    return lax.div(lax.log(x), lax.log(to_dtype(2, aval(x).dtype, aval(x).weak_type)))


def log10(x, /):
    """`log(x) * (1 / ln 10)`, the constant rounded to x's dtype (as JAX)."""
    (x,) = promote(x, inexact=True)
    return lax.mul(lax.log(x), np.array(1 / np.log(10), aval(x).dtype)[()])


def reciprocal(x, /):
    (x,) = promote(x, inexact=True)
    return lax.integer_pow(x, -1)


def _scalar_like(v, x):
    return to_dtype(v, aval(x).dtype, aval(x).weak_type)


def power(x1, x2, /):
    """`x1 ** x2`; a concrete integer exponent becomes `integer_pow`, as in JAX."""
    if not is_traced(x2) and isinstance(x2, (int, np.integer)) and not isinstance(x2, bool) \
            and np.ndim(x2) == 0:
        (x,) = promote(x1)
        if int(x2) < 0 and aval(x).dtype.kind in "iu":
            raise ValueError("Integers to negative integer powers are not allowed.")
        return lax.integer_pow(x, int(x2))
    a, b = promote(x1, x2)
    if aval(a).dtype.kind in "iub":
        raise UnsupportedOperationError(
            "power of integers with an array or traced exponent is not supported by jitviz; "
            "use a float base (x.astype(jnp.float32) ** n) or a concrete Python int exponent")
    a, b = broadcast_args(a, b)
    return lax.pow(a, b)


pow = power


def float_power(x1, x2, /):
    a, b = promote(x1, x2, inexact=True)
    return power(to_dtype(a, np.float64), to_dtype(b, np.float64))


def floor_divide(x1, x2, /):
    a, b = promote(x1, x2)
    a, b = broadcast_args(a, b)
    if aval(a).dtype.kind in "iu":
        q = lax.div(a, b)
        r = lax.rem(a, b)
        zero = _scalar_like(0, r)
        fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
        return lax.select(fix, lax.sub(q, _scalar_like(1, q)), q)
    if aval(a).dtype.kind == "b":
        raise TypeError("floor_divide is not defined for booleans")
    return lax.floor(lax.div(a, b))


def remainder(x1, x2, /):
    """Python's `%`: the result has the sign of the divisor."""
    a, b = promote(x1, x2)
    a, b = broadcast_args(a, b)
    r = lax.rem(a, b)
    zero = _scalar_like(0, r)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return lax.select(fix, lax.add(r, b), r)


mod = remainder


def fmod(x1, x2, /):
    a, b = promote(x1, x2)
    a, b = broadcast_args(a, b)
    return lax.rem(a, b)


def divmod_(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _to_bool(x):
    (x,) = promote(x)
    if aval(x).dtype == np.bool_:
        return x
    return lax.ne(x, _scalar_like(0, x))


def logical_and(x1, x2, /):
    a, b = broadcast_args(_to_bool(x1), _to_bool(x2))
    return lax.bitwise_and(a, b)


def logical_or(x1, x2, /):
    a, b = broadcast_args(_to_bool(x1), _to_bool(x2))
    return lax.bitwise_or(a, b)


def logical_xor(x1, x2, /):
    a, b = broadcast_args(_to_bool(x1), _to_bool(x2))
    return lax.bitwise_xor(a, b)


def logical_not(x, /):
    return lax.bitwise_not(_to_bool(x))


def invert(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "iub":
        raise TypeError(f"bitwise_not/invert needs integers or booleans, got {aval(x).dtype}")
    return lax.bitwise_not(x)


bitwise_not = invert


def isnan(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "fc":
        return _all_false(x)
    return lax.ne(x, x)


def _all_false(x):
    return lax.broadcast_in_dim(np.bool_(False), aval(x).shape, ())


def _all_true(x):
    return lax.broadcast_in_dim(np.bool_(True), aval(x).shape, ())


def isfinite(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "fc":
        return _all_true(x)
    return lax.is_finite(x)


def isinf(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "fc":
        return _all_false(x)
    return lax.eq(lax.abs(x), _scalar_like(np.inf, lax.abs(x)))


def isposinf(x, /):
    (x,) = promote(x)
    return lax.eq(x, _scalar_like(np.inf, x))


def isneginf(x, /):
    (x,) = promote(x)
    return lax.eq(x, _scalar_like(-np.inf, x))


def signbit(x, /):
    (x,) = promote(x)
    return lax.lt(x, _scalar_like(0, x))


def round(a, decimals=0):
    """Round half to even, as NumPy and JAX; `decimals` may be negative."""
    (a,) = promote(a)
    if aval(a).dtype.kind in "iub":
        return a
    if decimals == 0:
        return lax.round(a, 1)
    f = _scalar_like(10.0 ** decimals, a)
    return lax.div(lax.round(lax.mul(a, f), 1), f)


around = round


def rint(x, /):
    (x,) = promote(x, inexact=True)
    return lax.round(x, 1)


def trunc(x, /):
    (x,) = promote(x, inexact=True)
    return lax.select(lax.lt(x, _scalar_like(0, x)), lax.ceil(x), lax.floor(x))


fix = trunc


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """`minimum(maximum(a, a_min), a_max)`; either bound may be None."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    if lo is not None:
        a = maximum(a, lo)
    if hi is not None:
        a = minimum(a, hi)
    return a


def hypot(x1, x2, /):
    a, b = promote(x1, x2, inexact=True)
    return sqrt(add(multiply(a, a), multiply(b, b)))


def deg2rad(x, /):
    (x,) = promote(x, inexact=True)
    return lax.mul(x, _scalar_like(np.pi / 180, x))


def rad2deg(x, /):
    (x,) = promote(x, inexact=True)
    return lax.mul(x, _scalar_like(180 / np.pi, x))


radians, degrees = deg2rad, rad2deg


def logaddexp(x1, x2, /):
    a, b = promote(x1, x2, inexact=True)
    m = maximum(a, b)
    return add(m, log1p(exp(negative(absolute(subtract(a, b))))))


def heaviside(x1, x2, /):
    from .indexing import where
    a, b = promote(x1, x2)
    return where(less(a, 0), _scalar_like(0, a), where(greater(a, 0), _scalar_like(1, a), b))


def sinc(x, /):
    from .indexing import where
    (x,) = promote(x, inexact=True)
    px = multiply(x, np.pi)
    safe = where(equal(x, 0), _scalar_like(1, x), px)
    return where(equal(x, 0), _scalar_like(1, x), true_divide(sin(safe), safe))


def copysign(x1, x2, /):
    from .indexing import where
    a, b = promote(x1, x2, inexact=True)
    return where(signbit(b), negative(absolute(a)), absolute(a))
