"""The elementwise primitives: arithmetic, math functions, comparisons, bitwise operations,
conversions, selection and clamping (kind "elementwise": fusion fuses them, each Numba target
has an expression for each)."""
from __future__ import annotations

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from ..dtypes import int_range_as_float
from .dtype_kinds import (ANY, COMPLEX, FLOAT, INEXACT, INT, INTEGRAL, NUMERIC, ORDERED, UINT,
                          _check_kind, _quiet)


def _real_dtype(dt):
    return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)


def unary(name, impl, accepts=ANY, out_dtype=None):
    def rule(x):
        _check_kind(name, x.dtype, accepts)
        dt = out_dtype(x.dtype) if out_dtype else x.dtype
        # the operand's weak type carries over, also to a new dtype (JAX: is_finite of a
        # weak float is a weak bool, abs of a weak complex a weak float)
        return ShapedArray(x.shape, dt, x.weak_type)
    return primitive(name, abstract_eval=rule, impl=_quiet(impl),
                     kind="elementwise")


def broadcast_shapes_scalar(name, *shapes):
    """The result shape of an elementwise op, as in JAX 0.10: rank-0 operands broadcast;
    the others must have equal rank, each dimension equal or 1 (no implicit rank promotion,
    which jnp does with an explicit broadcast_in_dim)."""
    full = [s for s in shapes if s != ()]
    if not full:
        return ()
    ranks = {len(s) for s in full}
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        "{" + ", ".join(map(str, sorted(ranks))) + "}")
    out = []
    for dims in zip(*full):
        sizes = set(dims) - {1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            + ", ".join(str(s) for s in shapes) + ".")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def binary(name, impl, accepts=ANY, compare=False):
    def rule(x, y):
        if x.dtype != y.dtype:
            raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                            f"{x.dtype.name}, {y.dtype.name}.")
        _check_kind(name, x.dtype, accepts)
        shape = broadcast_shapes_scalar(name, x.shape, y.shape)
        # weak only when both operands are (JAX: `1.0 < 2.0` is a weak bool)
        return ShapedArray(shape, np.bool_ if compare else x.dtype, x.weak_type and y.weak_type)
    return primitive(name, abstract_eval=rule, impl=_quiet(impl),
                     kind="elementwise")


def _logistic(x):
    """1 / (1 + e), times e below 0, with e = e^-|x|, as the CPU and CUDA kernels compute it:
    1 / (1 + e^-x) alone gives 0 below -88.7 in float32 (e^-x overflows) where the result is
    a subnormal number down to -103.9 (XLA's expansion gives 0 there)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    r = 1 / (1 + e)
    return np.where(x >= 0, r, e * r)


def _int_div(x, y):
    """lax.div on integers rounds toward zero, as C does. Where C is undefined, XLA's CPU
    and GPU results (jitviz's choice, in every backend): x / 0 is -1 (all bits set: the
    largest value of an unsigned type) and INT_MIN / -1 wraps to INT_MIN."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind not in "iu":
        return np.true_divide(x, y)
    zero = y == 0
    minus_one = (y == -1) if x.dtype.kind == "i" else np.zeros(y.shape, bool)
    safe = np.where(zero | minus_one, 1, y).astype(x.dtype)
    q = (x - np.fmod(x, safe)) // safe  # an exact division: no rounding to choose
    q = np.where(minus_one, np.negative(x), q)  # -INT_MIN wraps to INT_MIN
    return np.where(zero, np.invert(np.zeros((), x.dtype)), q).astype(x.dtype)


def _rem(x, y):
    """lax.rem: C's remainder, with the dividend's sign. On integers, where C is undefined,
    XLA's results: x rem 0 is x, INT_MIN rem -1 is 0."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)
    zero = y == 0
    return np.where(zero, x, np.fmod(x, np.where(zero, 1, y).astype(x.dtype))).astype(x.dtype)


def _pow(x, y):
    """C's pow, as XLA computes it. NumPy's power takes sqrt for a scalar exponent of 0.5,
    which differs at -inf (pow: inf) and -0.0 (pow: 0.0): a full exponent array keeps pow."""
    x, y = np.broadcast_arrays(x, y)
    flat = np.power(np.ravel(x), np.array(y).reshape(-1))
    return flat.reshape(x.shape)


def _round_half_even_or_away(x, rounding_method=1):
    if rounding_method == 0:
        return _round_half_away(np.asarray(x))
    return np.round(x)


def _round_half_away(x):
    """C's round (XLA's, lax.round's default): half away from zero, exact for every float
    (x + 0.5 would round 0.49999997 up to 1) and keeping the sign (round(-0.3) is -0.0)."""
    t = np.trunc(x)
    away = np.abs(x - t) >= 0.5  # the fraction x - t is exact
    return np.copysign(np.where(away, t + np.sign(x), t), x).astype(x.dtype)


def _integer_pow(x, *, y):
    if y == 0:
        return np.ones_like(x)
    if x.dtype.kind in "iu":
        return 1 // np.power(x, -y) if y < 0 else np.power(x, y)
    # NumPy would round a Python int exponent to x's type: 2**31 - 1 is 2**31 in float32, an
    # odd power turned even ((-2.0) ** (2**31 - 1) would be inf, not -inf). The exponent as
    # a float64 (exact below 2**53) and, for reals, the sign from its parity
    if x.dtype.kind == "c":
        return np.power(x.astype(np.complex128), float(y)).astype(x.dtype)
    mag = np.power(np.abs(x).astype(np.float64), float(y)).astype(x.dtype)
    return np.where(np.signbit(x) & (y % 2 == 1), -mag, mag)


neg_p = unary("neg", np.negative, NUMERIC)
def _sign(x):
    """XLA's sign keeps a zero's sign (sign(-0.0) is -0.0); NumPy's gives +0.0."""
    x = np.asarray(x)
    return np.where(x == 0, x, np.sign(x))


sign_p = unary("sign", _sign, NUMERIC)
floor_p = unary("floor", np.floor, FLOAT)
ceil_p = unary("ceil", np.ceil, FLOAT)
is_finite_p = unary("is_finite", np.isfinite, FLOAT,
                    out_dtype=lambda dt: np.dtype(bool))
exp_p = unary("exp", np.exp, INEXACT)
exp2_p = unary("exp2", np.exp2, INEXACT)
log_p = unary("log", np.log, INEXACT)
log1p_p = unary("log1p", np.log1p, INEXACT)
expm1_p = unary("expm1", np.expm1, INEXACT)
tanh_p = unary("tanh", np.tanh, INEXACT)
logistic_p = unary("logistic", _logistic, INEXACT)
sin_p = unary("sin", np.sin, INEXACT)
cos_p = unary("cos", np.cos, INEXACT)
tan_p = unary("tan", np.tan, INEXACT)
asin_p = unary("asin", np.arcsin, INEXACT)
acos_p = unary("acos", np.arccos, INEXACT)
atan_p = unary("atan", np.arctan, INEXACT)
sinh_p = unary("sinh", np.sinh, INEXACT)
cosh_p = unary("cosh", np.cosh, INEXACT)
asinh_p = unary("asinh", np.arcsinh, INEXACT)
acosh_p = unary("acosh", np.arccosh, INEXACT)
atanh_p = unary("atanh", np.arctanh, INEXACT)
sqrt_p = unary("sqrt", np.sqrt, INEXACT)
rsqrt_p = unary("rsqrt", lambda x: 1 / np.sqrt(x), INEXACT)
cbrt_p = unary("cbrt", np.cbrt, FLOAT)
square_p = unary("square", np.square, NUMERIC)
not_p = unary("not", np.invert, INTEGRAL)
abs_p = unary("abs", np.abs, NUMERIC,
              out_dtype=lambda dt: _real_dtype(dt) if dt.kind == "c" else dt)
real_p = unary("real", np.real, COMPLEX, out_dtype=_real_dtype)
imag_p = unary("imag", np.imag, COMPLEX, out_dtype=_real_dtype)
conj_p = unary("conj", np.conj, COMPLEX)


def _complex_rule(x, y):
    if x.dtype != y.dtype:
        raise TypeError(f"complex requires arguments to have the same dtypes, got "
                        f"{x.dtype.name}, {y.dtype.name}.")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"complex does not accept dtype {x.dtype.name}. Accepted dtypes are "
                        "float32, float64.")
    shape = broadcast_shapes_scalar("complex", x.shape, y.shape)
    dt = np.complex64 if x.dtype == np.float32 else np.complex128
    return ShapedArray(shape, dt, x.weak_type and y.weak_type)


def _complex(x, y):
    """x + iy with both parts as given: x + 1j * y would turn an infinite y's real part into
    NaN (inf * 0)."""
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, np.complex64))
    out.real, out.imag = x, y
    return out


complex_p = primitive("complex", abstract_eval=_complex_rule, impl=_complex, kind="elementwise")


def _round_rule(x, *, rounding_method):
    _check_kind("round", x.dtype, FLOAT)
    return x


round_p = primitive("round", abstract_eval=_round_rule, impl=_quiet(_round_half_even_or_away),
                    kind="elementwise")


def _integer_pow_rule(x, *, y):
    _check_kind("integer_pow", x.dtype, NUMERIC)
    if y < 0 and x.dtype.kind in "iu":
        raise TypeError(f"integer_pow with a negative exponent {y} needs a float operand, "
                        f"got {x.dtype.name}")
    return x


integer_pow_p = primitive("integer_pow", abstract_eval=_integer_pow_rule,
                          impl=_quiet(_integer_pow), kind="elementwise")


def _ieee_extremum(np_fn, positive):
    """np.maximum/np.minimum, with IEEE 754-2019's order of zeros (max(-0.0, 0.0) is 0.0,
    min is -0.0, whatever the operands' order), as XLA computes them."""
    def impl(x, y):
        x, y = np.asarray(x), np.asarray(y)
        r = np_fn(x, y)
        if r.dtype.kind != "f":
            return r
        tie = (x == y) & (x == 0)
        pick_x = ~np.signbit(x) if positive else np.signbit(x)
        return np.where(tie, np.where(pick_x, x, y), r).astype(r.dtype)
    return impl


add_p = binary("add", np.add, NUMERIC)
sub_p = binary("sub", np.subtract, NUMERIC)
mul_p = binary("mul", np.multiply, NUMERIC)
div_p = binary("div", _int_div, NUMERIC)
rem_p = binary("rem", _rem, NUMERIC)
pow_p = binary("pow", _pow, INEXACT)
max_p = binary("max", _ieee_extremum(np.maximum, True), ORDERED)  # complex: lax.max
min_p = binary("min", _ieee_extremum(np.minimum, False), ORDERED)
atan2_p = binary("atan2", np.arctan2, FLOAT)
nextafter_p = binary("nextafter", np.nextafter, FLOAT)
and_p = binary("and", np.bitwise_and, INTEGRAL)
or_p = binary("or", np.bitwise_or, INTEGRAL)
xor_p = binary("xor", np.bitwise_xor, INTEGRAL)
shift_left_p = binary("shift_left", np.left_shift, INT + UINT)
shift_right_arithmetic_p = binary("shift_right_arithmetic", np.right_shift, INT + UINT)
eq_p = binary("eq", np.equal, ANY, compare=True)
ne_p = binary("ne", np.not_equal, ANY, compare=True)
# JAX's lax orders no complex numbers (jnp's comparisons and lax.max/min order them by real,
# then imaginary part, over these: lax._lexicographic)
lt_p = binary("lt", np.less, ORDERED, compare=True)
le_p = binary("le", np.less_equal, ORDERED, compare=True)
gt_p = binary("gt", np.greater, ORDERED, compare=True)
ge_p = binary("ge", np.greater_equal, ORDERED, compare=True)


def _convert_rule(x, *, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _saturating_float_to_int(x, dtype):
    """XLA's float -> integer conversion: truncate toward zero, saturate at the dtype's
    bounds (infinities and out-of-range values too), NaN -> 0."""
    info = np.iinfo(dtype)
    lo, hi = int_range_as_float(dtype)
    wide = x.astype(np.float64)
    inside = (wide >= lo) & (wide < hi)  # False for NaN
    out = np.trunc(np.where(inside, wide, 0)).astype(dtype)
    out = np.where(wide >= hi, info.max, out)
    return np.where(wide < lo, info.min, out).astype(dtype)


def _convert_impl(x, *, new_dtype, weak_type):
    x = np.asarray(x)
    if np.dtype(new_dtype).kind != "c" and x.dtype.kind == "c":
        x = x.real
    if np.dtype(new_dtype).kind in "iu" and x.dtype.kind == "f":
        return _saturating_float_to_int(x, np.dtype(new_dtype))
    return x.astype(new_dtype)


convert_element_type_p = primitive(
    "convert_element_type", abstract_eval=_convert_rule, impl=_quiet(_convert_impl),
    kind="elementwise")


def _select_n_rule(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != np.bool_ and which.dtype != np.int32:
        raise TypeError(f"select_n selector must be bool or int32, got {which.dtype.name}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select_n with a boolean selector takes exactly two cases")
    first = cases[0]
    for c in cases[1:]:
        if not c.same_type(first):
            raise TypeError("select_n cases must have the same shapes and dtypes, got "
                            + ", ".join(c.str_short() for c in cases))
    if which.shape not in ((), first.shape):
        raise TypeError(f"select_n selector shape {which.shape} must be scalar or equal to "
                        f"the case shape {first.shape}")
    return ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else np.asarray(cases[0])
    return np.choose(np.clip(which, 0, len(cases) - 1), cases)


select_n_p = primitive("select_n", abstract_eval=_select_n_rule, impl=_select_n_impl,
                       kind="elementwise")


def _clamp_rule(lo, x, hi):
    for b in (lo, hi):
        if b.dtype != x.dtype:
            raise TypeError(f"clamp requires arguments to have the same dtypes, got "
                            f"{lo.dtype.name}, {x.dtype.name}, {hi.dtype.name}.")
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp bounds must be scalars or have shape {x.shape}")
    # JAX's standard weak-type rule: weak only if every operand is
    return ShapedArray(x.shape, x.dtype, lo.weak_type and x.weak_type and hi.weak_type)


def _clamp_impl(lo, x, hi):
    """min(max(x, lo), hi) with IEEE 754-2019's order of zeros, as XLA's clamp: clamp(-0.0,
    0.0, 1.0) is 0.0 (NumPy's maximum would keep whichever zero it met first)."""
    return min_p.impl(max_p.impl(x, lo), hi)


clamp_p = primitive("clamp", abstract_eval=_clamp_rule, impl=_clamp_impl, kind="elementwise")
