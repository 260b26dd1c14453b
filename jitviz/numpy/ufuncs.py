"""Elementwise functions with NumPy's names and JAX's promotion rules."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..lax import _lexicographic  # jnp's comparisons order complex numbers; lax's refuse them
from ..core.trace import stage
from ._core import (_scalarize, aval, broadcast_args, converted, is_traced, promote,
                    to_dtype, unchanged, wrap_result)


def _name(f, name):
    """Name a function made by a factory, its code too (tracebacks and the messages that
    name the jnp function called, e.g. for a list operand, then say `exp`, not `f`)."""
    f.__name__ = f.__qualname__ = name
    f.__code__ = f.__code__.replace(co_name=name, co_qualname=name)


def _unary(name, lax_fn, inexact=False, numeric=False):
    def f(x, /):
        (x,) = promote(x, inexact=inexact, numeric=numeric)
        return lax_fn(x)
    _name(f, name)
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (traced when tracing)."
    return f


def _binary(name, lax_fn, inexact=False, numeric=False, bool_fn=None):
    def f(x1, x2, /):
        a, b = promote(x1, x2, inexact=inexact, numeric=numeric)
        a, b = broadcast_args(a, b)
        if bool_fn is not None and aval(a).dtype == np.bool_:
            return bool_fn(a, b)  # NumPy and JAX: on booleans + is `or`, * is `and`
        return lax_fn(a, b)
    _name(f, name)
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (traced when tracing)."
    return f


add = _binary("add", lax.add, bool_fn=lax.bitwise_or)
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lax.mul, bool_fn=lax.bitwise_and)
true_divide = divide = _binary("true_divide", lax.div, inexact=True)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, inexact=True)
nextafter = _binary("nextafter", lax.nextafter, inexact=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", _lexicographic(lax.lt))
less_equal = _binary("less_equal", _lexicographic(lax.le))
greater = _binary("greater", _lexicographic(lax.gt))
greater_equal = _binary("greater_equal", _lexicographic(lax.ge))
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
left_shift = _binary("left_shift", lax.shift_left, numeric=True)
right_shift = _binary("right_shift", lax.shift_right_arithmetic, numeric=True)

negative = _unary("negative", lax.neg)
sign = _unary("sign", lax.sign)
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
square = _unary("square", lax.square, numeric=True)  # square(bool) is int32, as in JAX
imag = _unary("imag", lambda x: lax.imag(x) if aval(x).dtype.kind == "c" else _zeros_like(x))


def _complex_only(name, lax_fn):
    """real/conj: `lax_fn` of a complex operand; any other operand unchanged."""
    def f(x, /):
        (y,) = promote(x)
        return lax_fn(y) if aval(y).dtype.kind == "c" else unchanged(y)
    _name(f, name)
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (traced when tracing)."
    return f


real = _complex_only("real", lax.real)
conjugate = conj = _complex_only("conjugate", lax.conj)
asin, acos, atan, asinh, acosh, atanh, atan2 = (arcsin, arccos, arctan, arcsinh, arccosh,
                                                 arctanh, arctan2)


def _zeros_like(x):
    """Zeros of x's type (JAX's `lax.full_like(x, 0)`: weak if x is), whatever x holds."""
    return stage(wrap_result(lax.broadcast_in_dim(
        to_dtype(0, aval(x).dtype, aval(x).weak_type), aval(x).shape, ())))


def positive(x, /):
    (y,) = promote(x)
    return unchanged(y)


def absolute(x, /):
    (y,) = promote(x)
    if aval(y).dtype.kind in "ub":
        return unchanged(y)
    return lax.abs(y)


abs = absolute


def log2(x, /):
    """`log(x) / log(2)` with a strongly typed 2, as JAX: log2 of a Python scalar is not weak."""
    (x,) = promote(x, inexact=True)
    return lax.div(lax.log(x), lax.log(_constant_like(2, x)))


def log10(x, /):
    """`log(x) * (1 / ln 10)`, the constant rounded to x's dtype (as JAX)."""
    (x,) = promote(x, inexact=True)
    return lax.mul(lax.log(x), np.array(1 / np.log(10), aval(x).dtype)[()])


def reciprocal(x, /):
    (x,) = promote(x, inexact=True)
    return lax.integer_pow(x, -1)


def _scalar_like(v, x):
    """`v` in x's dtype, weakly typed only where x is a weak scalar (JAX's `lax._const`: a
    weak array's constants are strong, so `x != 0` of a weak array is a strong bool)."""
    av = aval(x)
    return to_dtype(v, av.dtype, av.weak_type and not av.shape)


def _full_like(v, x):
    """`v` in x's dtype and weak type, whatever x's shape (JAX's `full_like`/`lax._ones`)."""
    return to_dtype(v, aval(x).dtype, aval(x).weak_type)


def power(x1, x2, /):
    """`x1 ** x2` in JAX's cases: a concrete integer exponent (anything `operator.index`
    takes, Python's True included, NumPy's not) becomes `integer_pow`; integer and boolean
    bases compute in the promoted integer type; a float base keeps its type with an integer
    exponent array (no promotion: a weak float ** int32 is not weak); the rest promotes."""
    n = _concrete_index(x2)
    if n is not None:
        (x,) = promote(x1, numeric=True)  # a boolean base computes in int32, as in JAX
        if n < 0 and aval(x).dtype.kind in "iu":  # JAX's TypeError, from integer_pow
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"integer_pow({aval(x).dtype.name}, {n})")
        return lax.integer_pow(x, n)
    a, b = broadcast_args(*promote(x1, x2, numeric=True))
    if aval(a).dtype.kind in "iu":
        return _integer_power(a, b)
    if aval(x1).dtype.kind in "fc" and aval(x2).dtype.kind in "iu":
        return lax.pow(*broadcast_args(_scalarize(x1), _scalarize(x2)))
    return lax.pow(a, b)


def _concrete_index(x):
    """The Python int of a concrete exponent that `operator.index` takes (as JAX asks it):
    an integer scalar or 0-d integer array, or a Python bool; None for anything else,
    a NumPy bool included (NumPy 2 has no index of a bool: JAX then computes `pow`)."""
    if is_traced(x):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _integer_power(x, n):
    """JAX's integer power for an array exponent: binary exponentiation over the exponent's
    low 6 bits (anything larger overflows for |x| > 1); so a negative exponent reads as
    its two's-complement low bits, and 0 ** n is 0 for n != 0, 1 for n == 0."""
    from .indexing import where
    zero, one = _scalar_like(0, n), _scalar_like(1, n)
    # the accumulator starts from strong constants (JAX's _constant_like), so the result
    # is strongly typed even for weak operands
    dt = aval(x).dtype
    acc = where(lax.bitwise_and(lax.eq(x, _scalar_like(0, x)), lax.ne(n, zero)),
                to_dtype(0, dt), to_dtype(1, dt))
    for _ in range(6):
        acc = where(lax.ne(lax.bitwise_and(n, one), zero), lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        n = lax.shift_right_arithmetic(n, one)
    return acc


pow = power


def float_power(x1, x2, /):
    """`pow` of the inexact-promoted operands (JAX: no forced float64)."""
    a, b = broadcast_args(*promote(x1, x2, inexact=True))
    return lax.pow(a, b)


def _numeric_operands(x1, x2):
    """Promoted as JAX's promote_args_numeric (booleans become int32), rank-broadcast."""
    return broadcast_args(*promote(x1, x2, numeric=True))


def _nonzero_divisor(b):
    """An integer divisor with its zeros replaced by ones, as jnp.remainder and jnp.fmod
    do: `x % 0` is 0 whatever lax.rem gives for a zero divisor."""
    from .indexing import where
    if aval(b).dtype.kind not in "iu":
        return b
    return where(lax.eq(b, _scalar_like(0, b)), _full_like(1, b), b)


def _float_divmod(a, b):
    """JAX's (and CPython's) float divmod: the quotient rounded from (a - a % b) / b, so an
    infinite dividend gives NaN, not an infinite quotient."""
    from .indexing import where
    mod = lax.rem(a, b)
    div = lax.div(where(lax.eq(b, _scalar_like(0, b)), a, lax.sub(a, mod)), b)
    fix = lax.bitwise_and(lax.ne(mod, _scalar_like(0, mod)), lax.ne(lax.sign(b), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, b), mod)
    div = lax.select(fix, subtract(div, 1.0), div)  # a Python 1.0: div's weak type stays
    return lax.round(div), mod


def _int_floor_divide(a, b):
    """The truncated quotient, one less where the signs differ and the division is inexact
    (JAX's formula; a zero divisor gives what lax.div and lax.rem give for it: -2 for
    x != 0, -1 for 0, as JAX on CPU)."""
    from .indexing import where
    q = lax.div(a, b)
    if aval(a).dtype.kind == "u":
        return q
    inexact = lax.bitwise_and(lax.ne(lax.sign(a), lax.sign(b)),
                              lax.ne(lax.rem(a, b), _scalar_like(0, a)))
    return where(inexact, subtract(q, 1), q)  # a Python 1: q's weak type stays


def floor_divide(x1, x2, /):
    a, b = _numeric_operands(x1, x2)
    if aval(a).dtype.kind in "iu":
        return _int_floor_divide(a, b)
    if aval(a).dtype.kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(a, b)[0]


def remainder(x1, x2, /):
    """Python's `%`: the result has the sign of the divisor; an integer `x % 0` is 0."""
    a, b = _numeric_operands(x1, x2)
    b = _nonzero_divisor(b)
    r = lax.rem(a, b)
    zero = _scalar_like(0, r)
    nonzero = lax.ne(r, zero)
    fix = lax.bitwise_and(lax.ne(lax.lt(r, zero), lax.lt(b, zero)), nonzero)
    return lax.select(fix, lax.add(r, b), r)


mod = remainder


def fmod(x1, x2, /):
    """C's remainder (the sign of the dividend); an integer `fmod(x, 0)` is 0."""
    a, b = _numeric_operands(x1, x2)
    return lax.rem(a, _nonzero_divisor(b))


def divmod_(x1, x2, /):
    a, b = _numeric_operands(x1, x2)
    if aval(a).dtype.kind in "iu":
        return floor_divide(a, b), remainder(a, b)
    return _float_divmod(a, b)


def _to_bool(x):
    (x,) = promote(x)
    if aval(x).dtype == np.bool_:
        return x
    return lax.ne(x, _scalar_like(0, x))


def _bool_operands(x1, x2):
    """Promoted together, then made booleans (JAX's order): two weak booleans (`x < 1.0` of
    a weak x) become strong ones, two weak numbers give weak booleans."""
    a, b = broadcast_args(*promote(x1, x2))
    return _to_bool(a), _to_bool(b)


def logical_and(x1, x2, /):
    return lax.bitwise_and(*_bool_operands(x1, x2))


def logical_or(x1, x2, /):
    return lax.bitwise_or(*_bool_operands(x1, x2))


def logical_xor(x1, x2, /):
    return lax.bitwise_xor(*_bool_operands(x1, x2))


def logical_not(x, /):
    return lax.bitwise_not(_to_bool(x))


def invert(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "iub":
        raise TypeError(f"bitwise_not/invert needs integers or booleans, got {aval(x).dtype}")
    return lax.bitwise_not(x)


bitwise_not = invert


def isnan(x, /):
    """`x != x`, for every dtype (as JAX: a weak operand gives a weak bool)."""
    (x,) = promote(x)
    return lax.ne(x, x)


def _constant_like(v, x):
    """`v` in x's dtype, strongly typed (JAX's `_constant_like`): comparing a weak x with it
    gives a strong bool."""
    return np.array(v, aval(x).dtype)[()]


def _all_false(x):
    # wrapped: for a 0-d x the "broadcast" is the NumPy scalar itself, whose methods and
    # operators are NumPy's (x.argmax() would be int64). Staged: JAX's `lax.full_like` is a
    # tracer inside a trace, so `y[jnp.isneginf(i)]` of an int `i` is JAX's
    # NonConcreteBooleanIndexError there, not a concrete empty selection (seed 36000829)
    return stage(wrap_result(lax.broadcast_in_dim(np.bool_(False), aval(x).shape, ())))


def _all_true(x):
    return stage(wrap_result(lax.broadcast_in_dim(np.bool_(True), aval(x).shape, ())))


def isfinite(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "fc":
        return _all_true(x)
    return lax.is_finite(x)


def isinf(x, /):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "fc":
        return _all_false(x)
    return lax.eq(lax.abs(x), _constant_like(np.inf, lax.abs(x)))


def _is_infinity(infinity, x):
    (x,) = promote(x)
    if aval(x).dtype.kind not in "f":
        if aval(x).dtype.kind == "c":
            raise ValueError("isposinf/isneginf are not well defined for complex numbers")
        return _all_false(x)
    return lax.eq(x, _constant_like(infinity, x))


def isposinf(x, /):
    return _is_infinity(np.inf, x)


def isneginf(x, /):
    return _is_infinity(-np.inf, x)


def signbit(x, /):
    """True where the sign bit is set, -0.0 included: `x < 0 or 1 / x < 0` (1 / -0.0 is
    -inf). JAX reads the bit itself, so it also says True for a negative NaN; jitviz has no
    bitcast primitive and says False there."""
    (x,) = promote(x)
    kind = aval(x).dtype.kind
    if kind == "b":
        return _all_false(x)
    if kind == "c":
        raise ValueError(f"jax.numpy.signbit is not well defined for {aval(x).dtype}")
    zero = _constant_like(0, x)
    negative = lax.lt(x, zero)
    if kind in "iu":
        return negative
    return lax.bitwise_or(negative, lax.lt(lax.div(_constant_like(1, x), x), zero))


def _whole(name, lax_fn):
    """floor/ceil: integers and booleans are whole already and come back unchanged (dtype
    and weak type: JAX's ceil(True) is True), floats are rounded."""
    def f(x, /):
        (y,) = promote(x)
        if aval(y).dtype.kind in "iub":
            return unchanged(y)
        return lax_fn(y)
    _name(f, name)
    f.__doc__ = f"Elementwise {name}, as numpy.{name}; integers and booleans unchanged."
    return f


floor = _whole("floor", lax.floor)
ceil = _whole("ceil", lax.ceil)


def round(a, decimals=0):
    """Round half to even, as NumPy and JAX; `decimals` may be negative. Integers come back
    unchanged; booleans are rejected, as JAX rejects them."""
    (a,) = promote(a)
    if aval(a).dtype == np.bool_:
        raise ValueError("jnp.round does not accept booleans: data type bool is not inexact")
    if aval(a).dtype.kind == "c":  # each part on its own, as JAX
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if aval(a).dtype.kind in "iu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return unchanged(a)
    if decimals == 0:
        return lax.round(a, 1)
    f = _scalar_like(10.0 ** decimals, a)
    return lax.div(lax.round(lax.mul(a, f), 1), f)


around = round


def rint(x, /):
    """Round half to even; integers and booleans become the default float (strongly typed,
    as JAX converts them), keeping 64-bit integers' precision in float64."""
    (x,) = promote(x)
    dt = aval(x).dtype
    if dt.kind in "iub":
        return converted(to_dtype(x, dtypes.float64 if dt.itemsize >= 8
                                  else dtypes.default_float()), x)
    if dt.kind == "c":  # each part on its own, as JAX
        return lax.complex(lax.round(lax.real(x), 1), lax.round(lax.imag(x), 1))
    return lax.round(x, 1)


def trunc(x, /):
    (y,) = promote(x)
    if aval(y).dtype.kind in "iub":
        return unchanged(y)
    return lax.select(lax.lt(y, _scalar_like(0, y)), lax.ceil(y), lax.floor(y))


fix = trunc


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """`minimum(maximum(a, a_min), a_max)`; either bound may be None."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    if any(b is not None and aval(promote(b)[0]).dtype.kind == "c" for b in (a, lo, hi)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the real "
                         "or imaginary components via jax.numpy.real/imag respectively.")
    if lo is None and hi is None:
        (y,) = promote(a)
        return unchanged(y)
    if lo is not None:
        a = maximum(a, lo)
    if hi is not None:
        a = minimum(a, hi)
    return a


def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without overflow, as JAX computes it: the larger magnitude times
    sqrt(1 + (smaller / larger)**2); inf if either is infinite, even with a NaN."""
    from .indexing import where
    a, b = promote(x1, x2, inexact=True)
    if aval(a).dtype.kind == "c":
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    a, b = lax.abs(a), lax.abs(b)
    infinite = logical_or(isposinf(a), isposinf(b))
    big, small = maximum(a, b), minimum(a, b)
    big_is_zero = equal(big, _scalar_like(0, big))
    ratio = lax.div(small, where(big_is_zero, _full_like(1, big), big))
    scaled = multiply(big, lax.sqrt(add(1, lax.square(ratio))))
    out = where(big_is_zero, big, scaled)
    return where(infinite, _scalar_like(np.inf, out), out)


def deg2rad(x, /):
    (x,) = promote(x, inexact=True)
    return lax.mul(x, _scalar_like(np.pi / 180, x))


def rad2deg(x, /):
    (x,) = promote(x, inexact=True)
    return lax.mul(x, _scalar_like(180 / np.pi, x))


radians, degrees = deg2rad, rad2deg


def fmax(x1, x2, /):
    """The larger value, ignoring a NaN unless both are NaN (JAX's formula: x1 where
    x1 > x2 or x2 is NaN, else x2)."""
    from .indexing import where
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2, /):
    """The smaller value, ignoring a NaN unless both are NaN."""
    from .indexing import where
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow. Where x1 - x2 is NaN (a NaN, or infinities
    of one sign) the result is x1 + x2, as in JAX: logaddexp(inf, inf) is inf."""
    a, b = broadcast_args(*promote(x1, x2, inexact=True))
    if aval(a).dtype.kind == "c":
        m = maximum(a, b)
        return add(m, log1p(exp(negative(absolute(subtract(a, b))))))
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    return lax.select(lax.ne(delta, delta), lax.add(a, b),
                      lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def heaviside(x1, x2, /):
    """0 below zero, 1 above, x2 at zero, NaN at NaN; floating, as in JAX."""
    from .indexing import where
    a, b = promote(x1, x2, inexact=True)
    zero = _scalar_like(0, a)
    return where(lax.lt(a, zero), zero,
                 where(lax.gt(a, zero), _scalar_like(1, a), where(lax.ne(a, a), a, b)))


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
