"""The CPU backend's rules for what a fused kernel computes, registered by `Primitive` in the
lowering registry (`jitviz.core.registry`); the program-level rules are `statements.py`'s.

Targets (the rule tables) and what a rule there is called with:

    cpu.expr       rule(args, in_dtypes, out_dtype, params) -> str: one element of an
                   elementwise primitive, from its operands' expressions; it falls back to
                   the rules both Numba targets share (`numba_expr.py`, written against a
                   dialect: `CpuDialect` here), so it holds only what the CPU writes its own
                   way (vectorized `rt.*_f32/_f64` math, integer division and shifts)
    cpu.reduce     a `Reduction`: the shared monoid per dtype kind, and its blockwise form
    cpu.index      rule(eqn, idx) -> idx: where the operand is read for output index `idx`
                   (broadcasts, squeezes and unit reshapes cost no memory inside a kernel)
    cpu.generate   rule(eqn, idx) -> str: a value made from the index alone (iota)
    cpu.statement  rule(fb, eqn): statements of the driver or a control-flow region
    cpu.with_producer  rule(eqn, sole_producer) -> a `Combined` or None: one
                   element of an elementwise equation computed together with the equation
                   that made one of its operands, where nothing else reads that value
                   (`sole_producer(operand)`: its equation, or None); None renders the two
                   apart (a log scaled by a constant, `jnp.log2`, is one function)

Every elementwise primitive needs an expression, every monoid reduction a `Reduction`, and
every primitive without a kernel rule a statement rule (`tests/test_lowering_registry.py`).
A rule's text may call helpers registered with it (`register_lowering(..., helpers=[f])`):
the backend compiles them into its runtime namespace, `rt.<name>`.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ...core.ir import Literal, literal_value
from ...core.registry import (declare_target, has_lowering, lowering, lowering_helpers,
                              register_lowering)
from ...lax import primitives as lax
from ...lax.erf import erf_inv_p, erf_p, erfc_p
from ...lax.special import bessel_i0e_p, bessel_i1e_p, digamma_p, lgamma_p
from ..numba_expr import (AND, MAX, MIN, NUMBA_EXPR, OR, PROD, SUM, Dialect, expression_rule,
                          shared_rule)
from ..numba_text import compute_dtype, ctor, is_half, saturating_float_to_int, typed_const
from .vecmath_core import target_has_avx512

EXPR, REDUCE, INDEX, GENERATE, STATEMENT, WITH_PRODUCER = (
    "cpu.expr", "cpu.reduce", "cpu.index", "cpu.generate", "cpu.statement",
    "cpu.with_producer")
KERNEL_TARGETS = (EXPR, REDUCE, INDEX, GENERATE)


def in_kernels(prim) -> bool:
    """Whether a fused kernel can compute `prim` (it has a rule on a kernel target)."""
    return any(has_lowering(prim, target) for target in KERNEL_TARGETS)


declare_target(EXPR, needs=lambda prim: prim.kind == "elementwise", fallback=NUMBA_EXPR,
               doc="rule(args, in_dtypes, out_dtype, params) -> Numba expression")
declare_target(REDUCE, needs=lambda prim: prim.kind == "reduction",
               doc="a Reduction (identity and combine per dtype kind, blockwise form)")


def fused_structural(prim) -> bool:
    """Whether the fusion pass (the CPU pipeline's planning stage) puts the structural
    primitive `prim` into kernels (broadcasts, squeezes, unit reshapes, iota: its `FUSABLE`
    table, not a kind), where it must be an index map or generated from the index."""
    from ...passes.fuse import FUSABLE  # at call time: the passes import the primitives first
    return prim in FUSABLE


declare_target(INDEX, needs=lambda prim: fused_structural(prim)
               and not has_lowering(prim, GENERATE),
               doc="rule(eqn, idx) -> the operand's index (structural ops in kernels)")
declare_target(GENERATE, doc="rule(eqn, idx) -> a value computed from the index (a fused "
                             "structural primitive has this rule or an index map)")
declare_target(STATEMENT, needs=lambda prim: not in_kernels(prim),
               doc="rule(fb, eqn): statements of the driver or of a control-flow region")
declare_target(WITH_PRODUCER, doc="rule(eqn, sole_producer) -> Combined or None: an "
                                  "equation and its operand's producer as one")


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


class CpuDialect(Dialect):
    """The shared rules (`numba_expr.py`) as CPU kernels write them: NumPy's math, and no
    wrapping of integer results (the renderer casts every result to its dtype)."""

    target = EXPR

    def call(self, name, args, in_dtype, out_dtype):
        return f"np.{name}({', '.join(args)})"

    def const(self, value, dtype):
        return typed_const(value, dtype)

    def wrap(self, text, dtype):
        return text

    def group(self, text):
        return text  # operands are always plain names

    def extremum(self, monoid, a, b, dtype):
        kind = np.dtype(dtype).kind
        if kind == "b":
            return f"({a} {'or' if monoid is MAX else 'and'} {b})"
        if kind in "iu":
            return f"{monoid.name}({a}, {b})"
        if kind == "f":  # branch-free, NaN-propagating (vectorizes); vrange where it can
            dt = compute_dtype(dtype)
            suffix = {np.float32: "_f32", np.float64: "_f64"}.get(np.dtype(dt).type, "")
            return f"rt.f{monoid.name}{suffix}({a}, {b})"
        return f"np.{'maximum' if monoid is MAX else 'minimum'}({a}, {b})"

    def helper(self, name):
        return f"rt.{name}"  # the kernels' runtime namespace


CPU = CpuDialect()


def expr_rule(prim):
    """`prim`'s expression rule in CPU kernels (its own or the shared one): rule(args,
    in_dtypes, out_dtype, params) -> str; None if it has none."""
    return expression_rule(prim, CPU)


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


def _logistic(a, ins, out, params):
    if ins[0].kind == "f":
        return _vector("logistic", "")(a, ins, out, params)
    return shared_rule(lax.logistic_p, CPU)(a, ins, out, params)


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


INLINE_POWER_MAX = 32  # beyond, rt.ipow: the inline text doubles with each bit of n


def _power_text(x, n):
    """x**n for n >= 1 by repeated squaring (what XLA emits for integer_pow): inline
    products for a small n, rt.ipow's loop (the same order) for a large one, whose inline
    text would grow like n (x ** (2**31 - 1) was 2**31 copies of x)."""
    if n > INLINE_POWER_MAX:
        return f"rt.ipow({x}, {n})"
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


# a constant divisor c with 2^-R <= |c| <= 2^R takes vecmath's `div_const` (R per type: the
# dividends its fast variant takes give quotients far from the subnormals and from overflow)
DIV_CONST_RANGE = {np.dtype(np.float32): 60, np.dtype(np.float64): 500}


def _div(a, ins, out, params):
    kind = ins[0].kind
    if kind in "iu":
        return f"rt.idiv({a[0]}, {a[1]})"
    if kind == "c":
        return f"rt.cdiv({a[0]}, {a[1]})"
    dt = compute_dtype(ins[0])
    c = getattr(a[1], "value", None)  # a constant divisor (numba_text.ConstName)
    if c is not None and _reciprocal_corrects(float(c), dt):
        return f"rt.div_const_{'f32' if dt == np.float32 else 'f64'}({a[0]}, {a[1]})"
    return f"{a[0]} / {a[1]}"


def _reciprocal_corrects(c, dt) -> bool:
    """Whether x / c takes vecmath's `div_const` (a product by 1/c and an FMA correction,
    exactly the quotient): c finite, in DIV_CONST_RANGE, and not a power of two (LLVM makes
    a division by one a product itself)."""
    bound = DIV_CONST_RANGE.get(np.dtype(dt))
    if bound is None or not np.isfinite(c) or c == 0:
        return False
    mantissa, exponent = np.frexp(abs(c))
    return mantissa != 0.5 and -bound <= exponent - 1 <= bound


# --- a log times or over a constant: one function (vecmath `log_scaled`) --------------------
# `jnp.log2` traces as log(x) / log(2) and `jnp.log10` as log(x) * log10(e), as JAX writes them.
# A log then a division costs a vector division more than the log (float32 `jnp.log2` of 64K
# values through jit: 26.8 -> 23.4-25.5 us combined), and the product one rounding more: the
# scale goes into the log's last steps instead, within 2.5 ulp of log(x) / c (the two steps
# apart, float32: up to 4.2 ulp). The scale is positive (log(1) / c keeps +0.0) and in
# DIV_CONST_RANGE, the log's result read nowhere else and its dtype float32 or float64.

class Combined(NamedTuple):
    """A WITH_PRODUCER rule's answer: the producer it takes in, the operands to render and
    the text of one element from their names."""
    producer: object
    operands: list
    text: object


def _scaled_log(kind, eqn, sole_producer):
    """`kind` "div" (log(x) / c) or "mul" (log(x) * c or c * log(x))."""
    dt = np.dtype(eqn.outvars[0].aval.dtype)
    if dt not in DIV_CONST_RANGE:
        return None
    for log_at in ((0,) if kind == "div" else (0, 1)):
        log, const = eqn.invars[log_at], eqn.invars[1 - log_at]
        producer = sole_producer(log)
        if producer is None or producer.primitive is not lax.log_p or \
                not isinstance(const, Literal) or not _positive_in_range(const, dt):
            continue
        helper = f"rt.log_{kind}_const_{'f32' if dt == np.float32 else 'f64'}"
        return Combined(producer, [producer.invars[0], const],
                        lambda a: f"{helper}({a[0]}, {a[1]})")
    return None


def _positive_in_range(lit, dt) -> bool:
    c = float(literal_value(lit))
    if not (np.isfinite(c) and c > 0):
        return False
    return abs(int(np.frexp(c)[1]) - 1) <= DIV_CONST_RANGE[dt]


register_rules(WITH_PRODUCER, {lax.div_p: functools.partial(_scaled_log, "div"),
                               lax.mul_p: functools.partial(_scaled_log, "mul")})


def _rem(a, ins, out, params):
    return f"rt.irem({a[0]}, {a[1]})" if ins[0].kind in "iu" else f"np.fmod({a[0]}, {a[1]})"


def _shift(helper):
    return lambda a, ins, out, params: f"rt.{helper}({a[0]}, {a[1]}, {_bits(ins[0])})"


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


# CPU's own rules, over the shared ones of `numba_expr.py` (which it falls back to)
register_rules(EXPR, {
    lax.sign_p: _np1("sign"), lax.exp_p: _vector("exp", "exp"),
    lax.exp2_p: _vector("exp2", "exp2"), lax.log_p: _vector("log", "log"),
    lax.log1p_p: _vector("log1p", "log1p"), lax.expm1_p: _vector("expm1", "expm1"),
    lax.tanh_p: _vector("tanh", "tanh"), lax.logistic_p: _logistic,
    lax.sin_p: _vector("sin", "sin"), lax.cos_p: _vector("cos", "cos"),
    lax.tan_p: _vector("tan", "tan"), lax.asin_p: _vector("asin", "arcsin"),
    lax.acos_p: _vector("acos", "arccos"), lax.atan_p: _vector("atan", "arctan"),
    lax.sinh_p: _vector("sinh", "sinh"), lax.cosh_p: _vector("cosh", "cosh"),
    lax.asinh_p: _vector("asinh", "arcsinh"), lax.acosh_p: _vector("acosh", "arccosh"),
    lax.atanh_p: _vector("atanh", "arctanh"), lax.cbrt_p: _vector("cbrt", "cbrt"),
    # (erf's primitives take real floats only: no NumPy fallback for complex operands)
    erf_p: _vector("erf", ""), erfc_p: _vector("erfc", ""), erf_inv_p: _vector("erf_inv", ""),
    lgamma_p: _vector("lgamma", ""), digamma_p: _vector("digamma", ""),
    bessel_i0e_p: _vector("bessel_i0e", ""), bessel_i1e_p: _vector("bessel_i1e", ""),
    lax.not_p: _not, lax.abs_p: _np1("abs"), lax.conj_p: _np1("conj"), lax.round_p: _round,
    lax.integer_pow_p: _integer_pow, lax.div_p: _div, lax.rem_p: _rem, lax.pow_p: _pow,
    lax.atan2_p: _vector("atan2", "arctan2"), lax.shift_left_p: _shift("shl"),
    lax.shift_right_arithmetic_p: _shift("shr"), lax.convert_element_type_p: _convert,
    lax.select_n_p: _select_n,
})


# --- work estimate: operations per element of the elementary functions -------------------
# Kernel.cost counts one operation per element per equation; a vectorized elementary function
# costs several: its time per element over that of a copy (66 us per 1M float32 values on
# this machine, 1M values through a kernel of the function alone: README's tables, e.g. tanh
# 219 us -> 3). The estimate picks a kernel's threads (compile.py: parallel_min_ops), so a
# GELU's tanh counts for what it costs. Unlisted primitives count 1. (erf and erfc: 12, and
# erf_inv 17, measured on the AVX2-only CPU of README's "On an AVX2-only CPU" and halved, as
# the factor below doubles them there; lgamma 45 and digamma 52 times `x + 1` there, halved;
# float32 bessel_i0e 21 and bessel_i1e 18.5, halved: float64's are 34 and 35.)
COST = "cpu.cost"
declare_target(COST, doc="operations per element (an int) of an elementwise primitive whose "
                         "kernel code costs more than an add; 1 where absent")
register_rules(COST, {
    lax.exp_p: 2, lax.exp2_p: 3, lax.expm1_p: 4, lax.log_p: 4, lax.log1p_p: 5,
    lax.logistic_p: 3, lax.tanh_p: 3, lax.sinh_p: 3, lax.cosh_p: 3, lax.asinh_p: 5,
    lax.acosh_p: 5, lax.atanh_p: 5, lax.sin_p: 4, lax.cos_p: 4, lax.tan_p: 4,
    lax.asin_p: 3, lax.acos_p: 3, lax.atan_p: 3, lax.cbrt_p: 5, lax.atan2_p: 7,
    lax.pow_p: 7, erf_p: 6, erfc_p: 6, erf_inv_p: 8, lgamma_p: 22, digamma_p: 26,
    bessel_i0e_p: 10, bessel_i1e_p: 10,
})


# Without AVX-512 a vector holds half the values (ymm) for about the same instructions, and
# the tables (vector_isa) are missing, while the copy the weights are measured against stays
# bound by memory: on an AVX2-only Zen 3 (README: "On an AVX2-only CPU") the weights measured
# 1.5 to 2.9 times these (exp 4.4, tanh 6.6, log 7.9, sin 7.3, pow 20). Decided at import, as
# vecmath decides its code (asking LLVM for the host's features takes 0.4 ms).
_TARGET_FACTOR = 1 if target_has_avx512() else 2


def operations_per_element(prim) -> int:
    found = lowering(prim, COST)
    if found is None:
        return 1
    return found.rule * _TARGET_FACTOR


# --- reductions: the shared monoids per dtype kind, and the blockwise form -------------------

class Reduction(NamedTuple):
    # dtype kind -> its Monoid (numba_expr.py: identity and combine, shared with CUDA)
    monoids: dict
    # the suffix of the rt helpers that reduce a float row blockwise (rt.add_reassoc,
    # rt.cascade_push_add, rt.lane_max...); None: a plain loop
    blocked: str | None = None
    cascade: bool = False  # blocks combined by a cascade (sum, prod), else by lanes (max, min)


def _kinds(monoid, kinds="fciu", **by_kind):
    """`monoid` for every dtype kind in `kinds`, except the kinds `by_kind` names."""
    return {kind: by_kind.get(kind, monoid) for kind in kinds + "".join(by_kind)}


register_rules(REDUCE, {
    lax.reduce_sum_p: Reduction(_kinds(SUM), "add", True),
    lax.reduce_prod_p: Reduction(_kinds(PROD), "mul", True),
    # a boolean max is an or, a boolean min an and
    lax.reduce_max_p: Reduction(_kinds(MAX, b=OR), "max"),
    lax.reduce_min_p: Reduction(_kinds(MIN, b=AND), "min"),
    lax.reduce_and_p: Reduction(_kinds(AND, "iub")),
    lax.reduce_or_p: Reduction(_kinds(OR, "iub")),
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
