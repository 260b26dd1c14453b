"""The CPU backend's rules for what a fused kernel computes, registered by `Primitive` in the
lowering registry (`jitviz.core.registry`); the program-level rules are `statements.py`'s.

Targets (the rule tables) and what a rule there is called with:

    cpu.expr       rule(args, in_dtypes, out_dtype, params) -> str: one element of an
                   elementwise primitive, from its operands' expressions
    cpu.reduce     a `Reduction`: identity and combine per dtype kind, and its blockwise form
    cpu.index      rule(eqn, idx) -> idx: where the operand is read for output index `idx`
                   (broadcasts, squeezes and unit reshapes cost no memory inside a kernel)
    cpu.generate   rule(eqn, idx) -> str: a value made from the index alone (iota)
    cpu.statement  rule(fb, eqn): statements of the driver or a control-flow region

Every elementwise primitive needs an expression, every monoid reduction a `Reduction`, and
every primitive without a kernel rule a statement rule (`tests/test_lowering_registry.py`).
A rule's text may call helpers registered with it (`register_lowering(..., helpers=[f])`):
the backend compiles them into its runtime namespace, `rt.<name>`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...core.registry import declare_target, has_lowering, lowering_helpers, register_lowering
from ...dtypes import highest, lowest
from ...lax import primitives as lax
from ..numba_text import compute_dtype, ctor, is_half, saturating_float_to_int, typed_const

EXPR, REDUCE, INDEX, GENERATE, STATEMENT = (
    "cpu.expr", "cpu.reduce", "cpu.index", "cpu.generate", "cpu.statement")
KERNEL_TARGETS = (EXPR, REDUCE, INDEX, GENERATE)


def in_kernels(prim) -> bool:
    """Whether a fused kernel can compute `prim` (it has a rule on a kernel target)."""
    return any(has_lowering(prim, target) for target in KERNEL_TARGETS)


declare_target(EXPR, needs=lambda prim: prim.kind == "elementwise",
               doc="rule(args, in_dtypes, out_dtype, params) -> Numba expression")
declare_target(REDUCE, needs=lambda prim: prim.kind == "reduction",
               doc="a Reduction (identity and combine per dtype kind, blockwise form)")
# which structural primitives reach a kernel is the fusion pass's choice (broadcasts,
# squeezes, unit reshapes, iota), not a kind, so these two tables declare no needs
declare_target(INDEX, doc="rule(eqn, idx) -> the operand's index (structural ops in kernels)")
declare_target(GENERATE, doc="rule(eqn, idx) -> a value computed from the index")
declare_target(STATEMENT, needs=lambda prim: not in_kernels(prim),
               doc="rule(fb, eqn): statements of the driver or of a control-flow region")


def registered_helpers() -> dict:
    """name -> function: the helpers every CPU rule's text may call as `rt.<name>`."""
    found = {}
    for target in KERNEL_TARGETS + (STATEMENT,):
        found.update(lowering_helpers(target))
    return found


def register_rules(target, table: dict):
    """Register each `{primitive: rule}` of `table` on `target`."""
    for prim, rule in table.items():
        register_lowering(prim, target, rule)


def cast_text(dtype, text) -> str:
    """`text` converted to exactly `dtype` (also restoring integer wrap-around)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return text
    if is_half(dtype):
        return f"rt.round_f16(np.float32({text}))"
    return f"{ctor(dtype)}({text})"


def _bits(dtype) -> int:
    return np.dtype(dtype).itemsize * 8


# --- elementwise expressions -------------------------------------------------------------
# Operands are always plain names, so a rule may mention one twice. The renderer casts the
# result to the output dtype, which also restores integer wrap-around (Numba widens int32
# arithmetic to int64).

def _tmpl(template):
    return lambda a, ins, out, params: template.format(*a)


def _np1(name):
    return _tmpl(f"np.{name}({{0}})")


def _one(out):
    return typed_const(1, out)


def _vector(name, np_name):
    """A vectorizable rt.<name>_f32/_f64 (vecmath.py) for real floats (float16 computes in
    float32), NumPy's scalar function for complex operands."""
    def rule(a, ins, out, params):
        dt = compute_dtype(ins[0])
        if dt in (np.float32, np.float64):
            return f"rt.{name}_{'f32' if dt == np.float32 else 'f64'}({', '.join(a)})"
        return f"np.{np_name}({', '.join(a)})"
    return rule


def _exp(a, ins, out, params):  # float32: runtime's expf (about 1 ulp, SELU's hot loop)
    return f"rt.expf({a[0]})" if compute_dtype(ins[0]) == np.float32 \
        else _vector("exp", "exp")(a, ins, out, params)


def _logistic(a, ins, out, params):
    if ins[0].kind == "f":
        return _vector("logistic", "")(a, ins, out, params)
    one = _one(out)
    return f"{one} / ({one} + np.exp(-{a[0]}))"


def _pow(a, ins, out, params):
    # real floats: vecmath's vectorized pow (float16 computes in float32); complex: Python's
    dt = compute_dtype(ins[0])
    if dt in (np.float32, np.float64):
        return f"rt.pow_{'f32' if dt == np.float32 else 'f64'}({a[0]}, {a[1]})"
    return f"{a[0]} ** {a[1]}"


def _not(a, ins, out, params):
    return f"(not {a[0]})" if ins[0] == np.bool_ else f"~{a[0]}"


def _round(a, ins, out, params):
    if params.get("rounding_method", 0) == 1:
        return f"np.rint({a[0]})"
    # half away from zero as the interpreter computes it: exact, and keeping -0.0
    x, t = a[0], f"np.trunc({a[0]})"
    half = typed_const(0.5, ins[0])
    return f"np.copysign({t} + np.sign({x}) if abs({x} - {t}) >= {half} else {t}, {x})"


def _power_text(x, n):
    """x**n for n >= 1 by repeated squaring (what XLA emits for integer_pow)."""
    if n == 1:
        return x
    half = _power_text(x, n // 2)
    sq = f"({half} * {half})"
    return f"({sq} * {x})" if n % 2 else sq


def _integer_pow(a, ins, out, params):
    y = params["y"]
    if y == 0:
        return _one(out)
    text = _power_text(a[0], abs(y))
    return f"{_one(out)} / {text}" if y < 0 else text


def _rsqrt(a, ins, out, params):
    return f"{_one(out)} / np.sqrt({a[0]})"


def _div(a, ins, out, params):
    kind = ins[0].kind
    if kind in "iu":
        return f"rt.idiv({a[0]}, {a[1]})"
    if kind == "c":
        return f"rt.cdiv({a[0]}, {a[1]})"
    return f"{a[0]} / {a[1]}"


def _rem(a, ins, out, params):
    return f"rt.irem({a[0]}, {a[1]})" if ins[0].kind in "iu" else f"np.fmod({a[0]}, {a[1]})"


def _extremum(np_name, py_name, bool_op):
    def rule(a, ins, out, params):
        kind = ins[0].kind
        if kind == "b":
            return f"({a[0]} {bool_op} {a[1]})"
        if kind in "iu":
            return f"{py_name}({a[0]}, {a[1]})"
        if kind == "f":  # branch-free, NaN-propagating (vectorizes)
            return f"rt.f{py_name}({a[0]}, {a[1]})"
        return f"np.{np_name}({a[0]}, {a[1]})"
    return rule


def _shift(helper):
    return lambda a, ins, out, params: f"rt.{helper}({a[0]}, {a[1]}, {_bits(ins[0])})"


def _compare(op, complex_helper=None):
    def rule(a, ins, out, params):
        if ins[0].kind == "c" and complex_helper:
            return complex_helper(a)
        return f"{a[0]} {op} {a[1]}"
    return rule


def _convert(a, ins, out, params):
    src, dst = compute_dtype(ins[0]), np.dtype(params["new_dtype"])
    x = a[0]
    if dst == np.bool_:
        return f"{x} != {typed_const(0, src)}"
    if src.kind == "c" and dst.kind != "c":
        x = f"{x}.real"
        src = np.dtype(np.float32 if src == np.complex64 else np.float64)
    if src.kind == "f" and dst.kind in "iu":
        return saturating_float_to_int(x, src, dst)
    return cast_text(dst, x)


def _select_n(a, ins, out, params):
    which, cases = a[0], a[1:]
    if len(cases) == 1:
        return cases[0]
    if ins[0].kind == "b":
        return f"({cases[1]} if {which} else {cases[0]})"
    text = cases[-1]
    for i in range(len(cases) - 2, 0, -1):
        text = f"({cases[i]} if {which} == {i} else {text})"
    return f"({cases[0]} if {which} <= 0 else {text})"


def _clamp(a, ins, out, params):
    lo, x, hi = a
    if ins[1].kind in "iub":
        return f"min(max({x}, {lo}), {hi})"
    if ins[1].kind == "f":
        return f"rt.fmin(rt.fmax({x}, {lo}), {hi})"
    return f"np.minimum(np.maximum({x}, {lo}), {hi})"


register_rules(EXPR, {
    lax.neg_p: _tmpl("-{0}"), lax.sign_p: _np1("sign"), lax.floor_p: _np1("floor"),
    lax.ceil_p: _np1("ceil"), lax.is_finite_p: _np1("isfinite"), lax.exp_p: _exp,
    lax.exp2_p: _vector("exp2", "exp2"), lax.log_p: _vector("log", "log"),
    lax.log1p_p: _vector("log1p", "log1p"), lax.expm1_p: _vector("expm1", "expm1"),
    lax.tanh_p: _vector("tanh", "tanh"), lax.logistic_p: _logistic,
    lax.sin_p: _vector("sin", "sin"), lax.cos_p: _vector("cos", "cos"),
    lax.tan_p: _vector("tan", "tan"), lax.asin_p: _vector("asin", "arcsin"),
    lax.acos_p: _vector("acos", "arccos"), lax.atan_p: _vector("atan", "arctan"),
    lax.sinh_p: _vector("sinh", "sinh"), lax.cosh_p: _vector("cosh", "cosh"),
    lax.asinh_p: _vector("asinh", "arcsinh"), lax.acosh_p: _vector("acosh", "arccosh"),
    lax.atanh_p: _vector("atanh", "arctanh"), lax.sqrt_p: _np1("sqrt"), lax.rsqrt_p: _rsqrt,
    lax.cbrt_p: _vector("cbrt", "cbrt"), lax.square_p: _tmpl("{0} * {0}"), lax.not_p: _not,
    lax.abs_p: _np1("abs"), lax.real_p: _tmpl("{0}.real"), lax.imag_p: _tmpl("{0}.imag"),
    lax.conj_p: _np1("conj"), lax.round_p: _round, lax.integer_pow_p: _integer_pow,
    lax.add_p: _tmpl("{0} + {1}"), lax.sub_p: _tmpl("{0} - {1}"),
    lax.mul_p: _tmpl("{0} * {1}"), lax.div_p: _div, lax.rem_p: _rem, lax.pow_p: _pow,
    lax.max_p: _extremum("maximum", "max", "or"), lax.min_p: _extremum("minimum", "min", "and"),
    lax.atan2_p: _vector("atan2", "arctan2"), lax.nextafter_p: _tmpl("np.nextafter({0}, {1})"),
    lax.and_p: _tmpl("{0} & {1}"), lax.or_p: _tmpl("{0} | {1}"), lax.xor_p: _tmpl("{0} ^ {1}"),
    lax.shift_left_p: _shift("shl"), lax.shift_right_arithmetic_p: _shift("shr"),
    lax.eq_p: _compare("=="), lax.ne_p: _compare("!="),
    lax.lt_p: _compare("<", lambda a: f"rt.clt({a[0]}, {a[1]})"),
    lax.gt_p: _compare(">", lambda a: f"rt.clt({a[1]}, {a[0]})"),
    lax.le_p: _compare("<=", lambda a: f"not rt.clt({a[1]}, {a[0]})"),
    lax.ge_p: _compare(">=", lambda a: f"not rt.clt({a[0]}, {a[1]})"),
    lax.convert_element_type_p: _convert, lax.select_n_p: _select_n, lax.clamp_p: _clamp,
})


# --- reductions: identity and combine per dtype kind, and the blockwise form --------------

class Reducer(NamedTuple):
    identity: object  # value, or a function of the dtype
    combine: str  # template over (acc, value)


class Reduction(NamedTuple):
    by_kind: dict  # dtype kind -> Reducer
    # the suffix of the rt helpers that reduce a float row blockwise (rt.add_reassoc,
    # rt.cascade_push_add, rt.lane_max...); None: a plain loop
    blocked: str | None = None
    cascade: bool = False  # blocks combined by a cascade (sum, prod), else by lanes (max, min)


def _all_ones(dt):
    return True if dt.kind == "b" else (-1 if dt.kind == "i" else np.iinfo(dt).max)


_SUM = Reducer(lambda dt: -0.0 if dt.kind in "fc" else 0, "{0} + {1}")  # -0.0: exact identity
_PROD = Reducer(lambda dt: 1, "{0} * {1}")
_MAX_F = Reducer(lowest, "rt.fmax({0}, {1})")
_MIN_F = Reducer(highest, "rt.fmin({0}, {1})")
_MAX_C = Reducer(lowest, "np.maximum({0}, {1})")
_MIN_C = Reducer(highest, "np.minimum({0}, {1})")
_MAX_I = Reducer(lowest, "max({0}, {1})")
_MIN_I = Reducer(highest, "min({0}, {1})")
_OR = Reducer(lambda dt: False if dt.kind == "b" else 0, "{0} | {1}")
_AND = Reducer(_all_ones, "{0} & {1}")

register_rules(REDUCE, {
    lax.reduce_sum_p: Reduction({"f": _SUM, "c": _SUM, "i": _SUM, "u": _SUM}, "add", True),
    lax.reduce_prod_p: Reduction({"f": _PROD, "c": _PROD, "i": _PROD, "u": _PROD}, "mul",
                                 True),
    lax.reduce_max_p: Reduction({"f": _MAX_F, "c": _MAX_C, "i": _MAX_I, "u": _MAX_I,
                                 "b": _OR}, "max"),
    lax.reduce_min_p: Reduction({"f": _MIN_F, "c": _MIN_C, "i": _MIN_I, "u": _MIN_I,
                                 "b": _AND}, "min"),
    lax.reduce_and_p: Reduction({"i": _AND, "u": _AND, "b": _AND}),
    lax.reduce_or_p: Reduction({"i": _OR, "u": _OR, "b": _OR}),
})


# --- index maps: how an operand is read at an output index -------------------------------

def _bcast_index(eqn, idx):
    x, out = eqn.invars[0].aval, eqn.outvars[0].aval
    return tuple("0" if x.shape[k] == 1 and out.shape[d] != 1 else idx[d]
                 for k, d in enumerate(eqn.params["broadcast_dimensions"]))


def _squeeze_index(eqn, idx):
    it = iter(idx)
    dims = {d % max(eqn.invars[0].aval.ndim, 1) for d in eqn.params["dimensions"]}
    return tuple("0" if k in dims else next(it) for k in range(eqn.invars[0].aval.ndim))


def _reshape_index(eqn, idx):
    """A reshape that only adds/drops unit dims: non-unit dims correspond in order."""
    out = eqn.outvars[0].aval.shape
    it = iter(i for i, d in zip(idx, out) if d != 1)
    return tuple("0" if d == 1 else next(it) for d in eqn.invars[0].aval.shape)


def _iota(eqn, idx):
    return f"{ctor(eqn.params['dtype'])}({idx[eqn.params['dimension']]})"


register_rules(INDEX, {lax.broadcast_in_dim_p: _bcast_index, lax.squeeze_p: _squeeze_index,
                       lax.reshape_p: _reshape_index})
register_rules(GENERATE, {lax.iota_p: _iota})
