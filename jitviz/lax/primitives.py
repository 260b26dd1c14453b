"""Definitions of the array primitives: each with its shape/dtype rule, its NumPy
implementation and, for elementwise ones, the per-element expression fused kernels use.

Control-flow primitives (cond, while, scan, jit) live in `control_flow.py`.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import highest, int_range_as_float, lowest
from ..core.ir import ShapedArray
from ..core.registry import primitive

_KIND_NAMES = {"f": "floating", "c": "complexfloating", "i": "signedinteger",
               "u": "unsignedinteger", "b": "bool"}
FLOAT, COMPLEX, INT, UINT, BOOL = "f", "c", "i", "u", "b"
INEXACT = FLOAT + COMPLEX
NUMERIC = INEXACT + INT + UINT
ANY = NUMERIC + BOOL
INTEGRAL = INT + UINT + BOOL


def _check_kind(name, dtype, accepts):
    if dtype.kind not in accepts:
        names = ", ".join(dict.fromkeys(_KIND_NAMES[k] for k in accepts))
        raise TypeError(f"{name} does not accept dtype {dtype.name}. Accepted dtypes are "
                        f"subtypes of {names}.")


def _quiet(f):
    """Run a NumPy kernel without its floating-point warnings (NaN/inf are values here)."""
    def run(*args, **kw):
        with np.errstate(all="ignore"):
            return f(*args, **kw)
    run.__name__ = getattr(f, "__name__", "impl")
    return run


# --- elementwise ---------------------------------------------------------------------------

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
    return 1 / (1 + np.exp(-x))


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
    if y < 0:
        return np.power(x, y) if x.dtype.kind in "fc" else 1 // np.power(x, -y)
    return np.power(x, y)


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
max_p = binary("max", _ieee_extremum(np.maximum, True), ANY)
min_p = binary("min", _ieee_extremum(np.minimum, False), ANY)
atan2_p = binary("atan2", np.arctan2, FLOAT)
nextafter_p = binary("nextafter", np.nextafter, FLOAT)
and_p = binary("and", np.bitwise_and, INTEGRAL)
or_p = binary("or", np.bitwise_or, INTEGRAL)
xor_p = binary("xor", np.bitwise_xor, INTEGRAL)
shift_left_p = binary("shift_left", np.left_shift, INT + UINT)
shift_right_arithmetic_p = binary("shift_right_arithmetic", np.right_shift, INT + UINT)
eq_p = binary("eq", np.equal, ANY, compare=True)
ne_p = binary("ne", np.not_equal, ANY, compare=True)
lt_p = binary("lt", np.less, ANY, compare=True)
le_p = binary("le", np.less_equal, ANY, compare=True)
gt_p = binary("gt", np.greater, ANY, compare=True)
ge_p = binary("ge", np.greater_equal, ANY, compare=True)


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


clamp_p = primitive("clamp", abstract_eval=_clamp_rule,
                    impl=lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
                    kind="elementwise")


# --- shape manipulation --------------------------------------------------------------------

def _bid_rule(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions {broadcast_dimensions} must "
                        f"have one entry per operand dimension ({x.ndim})")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim cannot broadcast operand of shape {x.shape} to "
                            f"{shape} with broadcast_dimensions={broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _bid_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = np.shape(x)[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _bid_pp(params):
    # today's JAX shows only non-empty broadcast_dimensions (the type shows the shape)
    dims = params["broadcast_dimensions"]
    return [("broadcast_dimensions", dims)] if dims else []


broadcast_in_dim_p = primitive("broadcast_in_dim", abstract_eval=_bid_rule, impl=_bid_impl,
                               pp_params=_bid_pp, kind="structural")


def _reshape_rule(x, *, new_sizes, dimensions):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {x.shape}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _pp_with(key):
    """Today's JAX prints a sharding param that jitviz does not model (always None)."""
    return lambda params: sorted([*params.items(), (key, None)])


reshape_p = primitive("reshape", abstract_eval=_reshape_rule,
                      impl=lambda x, *, new_sizes, dimensions: np.reshape(x, new_sizes),
                      pp_params=_pp_with("sharding"), kind="structural")


def _transpose_rule(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation {permutation} is not a permutation of the "
                        f"operand's {x.ndim} dimensions")
    return ShapedArray([x.shape[p] for p in permutation], x.dtype, x.weak_type)


transpose_p = primitive("transpose", abstract_eval=_transpose_rule,
                        impl=lambda x, *, permutation: np.transpose(x, permutation),
                        kind="structural")


def _squeeze_rule(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise TypeError(f"squeeze dimension {d} has size {x.shape[d]}, not 1")
    return ShapedArray([s for i, s in enumerate(x.shape) if i not in dimensions],
                       x.dtype, x.weak_type)


squeeze_p = primitive("squeeze", abstract_eval=_squeeze_rule,
                      impl=lambda x, *, dimensions: np.squeeze(x, tuple(dimensions)),
                      kind="structural")


def _rev_rule(x, *, dimensions):
    return x


rev_p = primitive("rev", abstract_eval=_rev_rule,
                  impl=lambda x, *, dimensions: np.flip(x, tuple(dimensions)) if dimensions
                  else np.asarray(x), kind="structural")


def _concat_rule(*xs, dimension):
    if not xs:
        raise TypeError("concatenate needs at least one operand")
    first = xs[0]
    for x in xs:
        if x.dtype != first.dtype:
            raise TypeError("concatenate requires operands to have the same dtypes, got "
                            + ", ".join(x.dtype.name for x in xs) + ".")
        if x.ndim != first.ndim or any(a != b for i, (a, b) in
                                       enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("concatenate operands must have equal shapes except along "
                            f"dimension {dimension}, got " + ", ".join(str(x.shape) for x in xs))
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {', '.join(str(x.shape) for x in xs)}.")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


concatenate_p = primitive("concatenate", abstract_eval=_concat_rule,
                          impl=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                          kind="structural")


def _stack_rule(*xs, axis):
    """JAX 0.10's `stack`: operands of one type, joined along a new axis."""
    if not xs:
        raise TypeError("stack needs at least one operand")
    first = xs[0]
    if any(not x.same_type(first) for x in xs):
        raise TypeError("stack requires operands of the same shape and dtype, got "
                        + ", ".join(x.str_short() for x in xs) + ".")
    if not 0 <= axis <= first.ndim:
        raise TypeError(f"stack axis {axis} is out of range for operands of rank {first.ndim}")
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


stack_p = primitive("stack", abstract_eval=_stack_rule,
                    impl=lambda *xs, axis: np.stack(xs, axis=axis), kind="structural")


def _slice_rule(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise TypeError("slice indices must have one entry per dimension")
    shape = []
    for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape):
        if not (0 <= s <= l <= d) or st < 1:
            raise TypeError(f"slice start {start_indices}, limit {limit_indices}, strides "
                            f"{strides} are out of bounds for shape {x.shape}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(slice(s, l, st) for s, l, st in
                               zip(start_indices, limit_indices, strides))]


slice_p = primitive("slice", abstract_eval=_slice_rule, impl=_slice_impl, kind="structural")


def _dyn_slice_rule(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError("dynamic_slice needs one start index and one size per dimension")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError("dynamic_slice start indices must be integer scalars")
    if any(not 0 <= z <= d for z, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice sizes {slice_sizes} do not fit shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _clamped_starts(shape, starts, sizes):
    return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, shape, sizes)]


def _dyn_slice_impl(x, *starts, slice_sizes):
    st = _clamped_starts(np.shape(x), starts, slice_sizes)
    return np.asarray(x)[tuple(slice(s, s + z) for s, z in zip(st, slice_sizes))]


dynamic_slice_p = primitive("dynamic_slice", abstract_eval=_dyn_slice_rule,
                            impl=_dyn_slice_impl, kind="structural")


def _dus_rule(x, update, *starts):
    if update.dtype != x.dtype or update.ndim != x.ndim or len(starts) != x.ndim:
        raise TypeError("dynamic_update_slice update must have the operand's dtype and rank, "
                        "with one start index per dimension")
    if any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update {update.shape} larger than {x.shape}")
    # JAX's standard rule: weak only if every operand is, the start indices included
    weak = all(a.weak_type for a in (x, update) + starts)
    return ShapedArray(x.shape, x.dtype, weak)


def _dus_impl(x, update, *starts):
    out = np.array(x, copy=True)
    st = _clamped_starts(out.shape, starts, np.shape(update))
    out[tuple(slice(s, s + z) for s, z in zip(st, np.shape(update)))] = update
    return out


dynamic_update_slice_p = primitive("dynamic_update_slice", abstract_eval=_dus_rule,
                                   impl=_dus_impl, kind="structural")


def _gather_shape(x, idx_shapes, axes, name="gather"):
    if not axes or list(axes) != list(range(axes[0], axes[0] + len(axes))):
        raise TypeError(f"{name} axes must be consecutive, got {axes}")
    if len(idx_shapes) != len(axes) or axes[-1] >= x.ndim:
        raise TypeError(f"{name} needs one index array per indexed axis")
    bshape = np.broadcast_shapes(*idx_shapes)
    return x.shape[:axes[0]] + tuple(bshape) + x.shape[axes[-1] + 1:]


def _gather_rule(x, *indices, axes):
    for i in indices:
        if i.dtype.kind not in "iu":
            raise TypeError(f"gather indices must be integers, got {i.dtype.name}")
    shape = _gather_shape(x, [i.shape for i in indices], axes)
    _check_gather_source(x.shape, shape, axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _check_gather_source(x_shape, out_shape, axes):
    """As in JAX, a gather that reads anything needs every indexed axis non-empty: clamping
    an index into an empty axis leaves no element to read (a kernel would read out of
    bounds). A gather of nothing (an empty result) is fine."""
    empty = [a for a in axes if x_shape[a] == 0]
    if empty and math.prod(out_shape):
        raise TypeError(f"Slice size at index {empty[0]} in gather op is out of range, must be "
                        f"within [0, 0 + 1), got 1: axis {empty[0]} of the operand "
                        f"{tuple(x_shape)} is empty, so there is no element to gather")


def _gather_index(shape, indices, axes):
    """Indices clamped into range, as JAX's gather does (`x[10]` of 5 elements is x[4])."""
    clipped = [np.clip(i, 0, shape[a] - 1) for i, a in zip(indices, axes)]
    return (slice(None),) * axes[0] + tuple(clipped)


def _gather_impl(x, *indices, axes):
    x = np.asarray(x)
    shape = _gather_shape(x, [np.shape(i) for i in indices], axes)
    if not math.prod(shape):  # nothing to read (the indexed axes may be empty)
        return np.empty(shape, x.dtype)
    return x[_gather_index(x.shape, indices, axes)]


gather_p = primitive("gather", abstract_eval=_gather_rule, impl=_gather_impl,
                     kind="structural")


def _scatter_rule(x, updates, *indices, axes, mode):
    for i in indices:
        if i.dtype.kind not in "iu":
            raise TypeError(f"scatter indices must be integers, got {i.dtype.name}")
    _gather_shape(x, [i.shape for i in indices], axes, "scatter")
    if updates.dtype != x.dtype:
        raise TypeError(f"scatter updates dtype {updates.dtype.name} differs from operand "
                        f"{x.dtype.name}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_impl(x, updates, *indices, axes, mode):
    """Updates at out-of-bounds indices (negative ones too) are dropped, as in JAX."""
    out = np.array(x, copy=True)
    idx = np.broadcast_arrays(*[np.asarray(i, np.int64) for i in indices])
    target = _gather_shape(out, [i.shape for i in idx], axes, "scatter")
    upd = np.broadcast_to(updates, target)
    inside = np.ones(idx[0].shape, bool) if idx else np.ones((), bool)
    for i, a in zip(idx, axes):
        inside &= (i >= 0) & (i < out.shape[a])
    kept = tuple(i[inside] for i in idx)
    # the broadcast index dimensions of `upd` start at axes[0]: keep the in-bounds ones
    upd = np.moveaxis(upd, range(axes[0], axes[0] + inside.ndim), range(inside.ndim))[inside]
    upd = np.moveaxis(upd, 0, axes[0])
    where = (slice(None),) * axes[0] + kept
    if mode == "set":
        out[where] = upd
    else:
        _SCATTER_UFUNCS[mode].at(out, where, upd)
    return out


scatter_p = primitive("scatter", abstract_eval=_scatter_rule, impl=_scatter_impl,
                      kind="structural")


def _iota_rule(*, dtype, shape, dimension):
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension):
    ar = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(ar.reshape([-1 if i == dimension else 1 for i in range(len(shape))]),
                           shape)


iota_p = primitive("iota", abstract_eval=_iota_rule, impl=_iota_impl,
                   pp_params=_pp_with("sharding"), kind="structural")


# --- reductions ----------------------------------------------------------------------------

def _reduce_rule(name, accepts, keeps_weak=True):
    """The reduced shape, in x's dtype; weakly typed if x is, except for the logical
    reductions (JAX types reduce_and/reduce_or results strongly)."""
    def rule(x, *, axes):
        _check_kind(name, x.dtype, accepts)
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            # JAX's classes: IndexError from the logical reductions' rule, else ValueError
            raise (ValueError if keeps_weak else IndexError)(
                f"{name} axes {axes} are invalid for shape {x.shape}")
        return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype,
                           x.weak_type and keeps_weak)
    return rule


def _identity_reduce(ufunc, identity_of):
    def impl(x, *, axes):
        x = np.asarray(x)
        return ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype, initial=identity_of(x.dtype))
    return impl


def _reduce_sum_impl(x, *, axes):
    """A float sum starts from -0.0, the additive identity (a sum of -0.0s is -0.0, as in
    XLA and in the compiled kernels); NumPy's pairwise sum starts from +0.0. An empty sum
    is +0.0 all the same."""
    x = np.asarray(x)
    empty = any(x.shape[a] == 0 for a in axes)
    initial = -0.0 if x.dtype.kind == "f" and not empty else None
    return np.add.reduce(x, axis=tuple(axes), dtype=x.dtype,
                         **({} if initial is None else {"initial": initial}))


def _reduce_prod_impl(x, *, axes):
    x = np.asarray(x)
    return np.multiply.reduce(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_max_impl(x, *, axes):
    x = np.asarray(x)
    if x.dtype.kind in "fc" and x.size:  # NaN propagates, as in XLA
        r = np.max(x, axis=tuple(axes), initial=lowest(x.dtype))
        return _zero_sign(r, x, axes, positive=True) if x.dtype.kind == "f" else r
    return np.maximum.reduce(x, axis=tuple(axes), initial=lowest(x.dtype))


def _reduce_min_impl(x, *, axes):
    x = np.asarray(x)
    if x.dtype.kind in "fc" and x.size:
        r = np.min(x, axis=tuple(axes), initial=highest(x.dtype))
        return _zero_sign(r, x, axes, positive=False) if x.dtype.kind == "f" else r
    return np.minimum.reduce(x, axis=tuple(axes), initial=highest(x.dtype))


def _zero_sign(r, x, axes, positive):
    """A zero max is +0.0 if the slice holds a +0.0 (IEEE 754-2019 maximum, XLA's: -0 < +0),
    a zero min -0.0 if it holds a -0.0; NumPy keeps whichever zero came first."""
    signed = np.signbit(x) if not positive else ~np.signbit(x)
    has = np.any((x == 0) & signed, axis=tuple(axes))
    zero = np.where(positive, 0.0, -0.0).astype(x.dtype)
    return np.where((r == 0) & has, zero, r).astype(x.dtype)




reduce_sum_p = primitive("reduce_sum", abstract_eval=_reduce_rule("reduce_sum", NUMERIC),
                         impl=_quiet(_reduce_sum_impl), pp_params=_pp_with("out_sharding"),
                         kind="reduction")
reduce_prod_p = primitive("reduce_prod", abstract_eval=_reduce_rule("reduce_prod", NUMERIC),
                          impl=_quiet(_reduce_prod_impl), kind="reduction")
reduce_max_p = primitive("reduce_max", abstract_eval=_reduce_rule("reduce_max", ANY),
                         impl=_quiet(_reduce_max_impl), kind="reduction")
reduce_min_p = primitive("reduce_min", abstract_eval=_reduce_rule("reduce_min", ANY),
                         impl=_quiet(_reduce_min_impl), kind="reduction")
reduce_and_p = primitive("reduce_and", abstract_eval=_reduce_rule("reduce_and", INTEGRAL, False),
                         impl=_identity_reduce(np.bitwise_and, lambda dt: highest(dt) if
                                               dt.kind != "i" else -1),
                         kind="reduction")
reduce_or_p = primitive("reduce_or", abstract_eval=_reduce_rule("reduce_or", INTEGRAL, False),
                        impl=_identity_reduce(np.bitwise_or, lambda dt: 0 if dt.kind != "b"
                                              else False),
                        kind="reduction")


def _arg_rule(name):
    def rule(x, *, axes, index_dtype):
        _check_kind(name, x.dtype, ANY)
        if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
            raise ValueError(f"Invalid axis {axes} for operand shape {x.shape}")  # JAX's
        if x.shape[axes[0]] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return ShapedArray([d for i, d in enumerate(x.shape) if i != axes[0]], index_dtype)
    return rule


argmax_p = primitive("argmax", abstract_eval=_arg_rule("argmax"),
                     impl=lambda x, *, axes, index_dtype:
                     np.argmax(x, axis=axes[0]).astype(index_dtype), kind="arg_reduction")
argmin_p = primitive("argmin", abstract_eval=_arg_rule("argmin"),
                     impl=lambda x, *, axes, index_dtype:
                     np.argmin(x, axis=axes[0]).astype(index_dtype), kind="arg_reduction")


def _check_cumulative_axis(x, axis):
    if not 0 <= axis < x.ndim:  # JAX's ValueError (a 0-d operand has no axis 0)
        raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")


def _cum_rule(name, accepts=NUMERIC):
    def rule(x, *, axis, reverse):
        _check_cumulative_axis(x, axis)  # before the dtype, as JAX checks them
        _check_kind(name, x.dtype, accepts)
        return x
    return rule


def _cum_impl(ufunc):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out
    return _quiet(impl)


cumsum_p = primitive("cumsum", abstract_eval=_cum_rule("cumsum"), impl=_cum_impl(np.add),
                     kind="scan_op")
cumprod_p = primitive("cumprod", abstract_eval=_cum_rule("cumprod"),
                      impl=_cum_impl(np.multiply), kind="scan_op")
cummax_p = primitive("cummax", abstract_eval=_cum_rule("cummax", ANY), impl=_cum_impl(np.maximum),
                     kind="scan_op")
cummin_p = primitive("cummin", abstract_eval=_cum_rule("cummin", ANY), impl=_cum_impl(np.minimum),
                     kind="scan_op")


# --- linear algebra ------------------------------------------------------------------------

def _dot_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general requires operands of the same dtype, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    _check_kind("dot_general", lhs.dtype, NUMERIC + BOOL)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general contracting/batch dimensions must pair up")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"dot_general requires contracting dimensions to have the same "
                            f"shape, got {lhs.shape} and {rhs.shape} (dims {a} and {b}).")
    batch = [lhs.shape[i] for i in lb]
    lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    dt = preferred_element_type or lhs.dtype
    # weak when both operands are, except for booleans (JAX: a product of weak booleans,
    # like their logical ops, is strong)
    weak = lhs.weak_type and rhs.weak_type and np.dtype(dt).kind != "b"
    return ShapedArray(batch + lfree + rfree, dt, weak)


def dot_general_einsum(lhs_ndim, rhs_ndim, dimension_numbers):
    """The einsum spec of a dot_general (shared by the NumPy impl and the backends)."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [None] * rhs_ndim
    for a, b in zip(lc, rc):
        rhs[b] = lhs[a]
    for a, b in zip(lb, rb):
        rhs[b] = lhs[a]
    rhs = [r or next(letters) for r in rhs]
    out = [lhs[i] for i in lb] + [l for i, l in enumerate(lhs) if i not in lc and i not in lb] \
        + [r for i, r in enumerate(rhs) if i not in rc and i not in rb]
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


def _dot_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    dt = preferred_element_type or lhs.dtype
    if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and tuple(lc) == (lhs.ndim - 1,) and \
            tuple(rc) == (0,):
        return _as_result(np.matmul(lhs, rhs) if lhs.ndim and rhs.ndim else np.dot(lhs, rhs),
                          dt)
    spec = dot_general_einsum(lhs.ndim, rhs.ndim, dimension_numbers)
    return _as_result(np.einsum(spec, lhs, rhs), dt)


def _as_result(r, dt):
    """The product in preferred_element_type, converted as convert_element_type converts
    (a float product given an integer type saturates, as in XLA)."""
    r = np.asarray(r)
    if r.dtype.kind == "f" and np.dtype(dt).kind in "iu":
        return _saturating_float_to_int(r, dt)
    return r.astype(dt, copy=False)


class _DimNums(str):
    """dimension_numbers printed as JAX does: `(([1], [0]), ([], []))`."""


def _dot_pp(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lst = lambda t: "[" + ", ".join(map(str, t)) + "]"
    dn = _DimNums(f"(({lst(lc)}, {lst(rc)}), ({lst(lb)}, {lst(rb)}))")
    # JAX hides params that are None (lax.dot leaves preferred_element_type unset)
    rest = [(k, params[k]) for k in ("precision", "preferred_element_type")
            if params[k] is not None]
    return [("dimension_numbers", dn)] + rest


dot_general_p = primitive("dot_general", abstract_eval=_dot_rule, impl=_quiet(_dot_impl),
                          pp_params=_dot_pp, kind="dot")
