"""The CUDA backend's registered rules for values: per-element expressions ("cuda.expr") and
the monoids of reductions and cumulative scans ("cuda.reduce"), with typed literals and casts.

    register_lowering(exp_p, "cuda.expr", rule)   # rule(args, in_dtypes, out_dtype, params)
    register_lowering(reduce_sum_p, "cuda.reduce", "sum")

Each expression rule turns operand expressions into one Python expression that Numba's CUDA
target compiles (`math.*`, casts with `np.<dtype>(...)`, and the names of `runtime.py`, which
the simulator replaces with NumPy scalar versions). Numba promotes small integers to int64 in
arithmetic, so integer results are cast back to the primitive's dtype: they wrap exactly as
NumPy's do. float16 is computed in float32 and rounded, as NumPy does, except by the rules
that are exact in half precision.

No import of numba here: rendering works without the toolkit.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.registry import declare_target, has_lowering, lowering_rule, register_lowering
from ...dtypes import highest, lowest
from ...lax import primitives as P
from ..numba_text import ctor, float_text, saturating_float_to_int

# --- literals and casts ----------------------------------------------------------------------


def literal(value, dtype) -> str:
    """A typed constant: `np.float32(0.5)`, `np.int32(3)`, `True`, `np.float32(-math.inf)`."""
    dt = np.dtype(dtype)
    v = np.asarray(value).astype(dt)[()] if not isinstance(value, np.generic) or \
        value.dtype != dt else value
    if dt == np.bool_:
        return "True" if bool(v) else "False"
    if dt.kind in "iu":
        return f"{ctor(dt)}({int(v)})"
    if dt.kind == "f":
        return f"{ctor(dt)}({float_text(v, 'math')})"
    if dt.kind == "c":
        c = complex(v)
        parts = f"{float_text(c.real, 'math')}, {float_text(c.imag, 'math')}"
        return f"{ctor(dt)}(complex({parts}))"
    raise TypeError(f"no CUDA literal for dtype {dt}")


def cast(expr: str, src, dst) -> str:
    """`expr` (of dtype `src`) converted to `dst` with NumPy's `astype` semantics."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return expr
    if dst == np.bool_:
        return f"({expr} != {literal(0, src)})"
    if src.kind == "c" and dst.kind != "c":
        expr, src = f"({expr}).real", np.dtype(np.float32 if src == np.complex64 else np.float64)
        if src == dst:
            return expr
    if src.kind == "f" and dst.kind in "iu":
        if src == np.float16:  # compared in float32: 2**31 and beyond are inf in half
            expr, src = f"np.float32({expr})", np.dtype(np.float32)
        # XLA's saturating conversion, as the interpreter and the CPU kernels
        return saturating_float_to_int(expr, src, dst, const=literal)
    return f"{ctor(dst)}({expr})"


def identity(op: str, dtype) -> str:
    """The identity of a reduction monoid, as a typed literal."""
    dt = np.dtype(dtype)
    if op == "sum":  # -0.0 is the exact identity: a sum of -0.0 stays -0.0, as in NumPy
        return literal(-0.0 if dt.kind in "fc" else 0, dt)
    if op == "prod":
        return literal(1, dt)
    if op in ("max", "min"):
        return literal(lowest(dt) if op == "max" else highest(dt), dt)
    if op == "and":
        return literal(True, dt) if dt.kind == "b" else literal(-1 if dt.kind == "i" else
                                                                np.iinfo(dt).max, dt)
    if op == "or":
        return literal(False if dt.kind == "b" else 0, dt)
    raise KeyError(op)


def combine(op: str, a: str, b: str, dtype) -> str:
    """`a <op> b` for a reduction/cumulative monoid, in `dtype`."""
    dt = np.dtype(dtype)
    if op == "sum":
        return _wrap_int(f"{a} + {b}", dt)
    if op == "prod":
        return _wrap_int(f"{a} * {b}", dt)
    if op in ("max", "min"):
        return minmax(op, a, b, dt)
    if op == "and":
        return _wrap_int(f"{a} & {b}", dt)
    if op == "or":
        return _wrap_int(f"{a} | {b}", dt)
    raise KeyError(op)


def _wrap_int(expr, dt):
    return f"{ctor(dt)}({expr})" if dt.kind in "iub" or dt == np.float16 else expr


declare_target(
    "cuda.reduce", needs=lambda prim: prim.kind in ("reduction", "arg_reduction", "scan_op"),
    doc="the monoid a reduction or cumulative scan combines with: 'sum', 'prod', 'max', 'min', "
        "'and' or 'or' (argmax/argmin: the extreme they look for, 'max' or 'min')")
for _prim, _op in [(P.reduce_sum_p, "sum"), (P.reduce_prod_p, "prod"), (P.reduce_max_p, "max"),
                   (P.reduce_min_p, "min"), (P.reduce_and_p, "and"), (P.reduce_or_p, "or"),
                   (P.argmax_p, "max"), (P.argmin_p, "min"), (P.cumsum_p, "sum"),
                   (P.cumprod_p, "prod"), (P.cummax_p, "max"), (P.cummin_p, "min")]:
    register_lowering(_prim, "cuda.reduce", _op)


def monoid(prim) -> str:
    """The monoid `prim` (a reduction, arg-reduction or cumulative scan) combines with."""
    return lowering_rule(prim, "cuda.reduce")


# --- elementwise rules -----------------------------------------------------------------------
# rule(args, in_dtypes, out_dtype, params) -> expression; `args` are operand expressions.

def _tmpl(template):
    """A rule that fills a fixed template with the operand expressions, whatever the dtypes:
    `_tmpl("atan2({0}, {1})")`."""
    def rule(args, dts, out, params):
        return template.format(*args)
    return rule


def _libm(name):
    """A rule calling the libdevice function `name` in the result's precision (`_f`):
    `_libm("cbrt")` gives `cbrtf(x)` for float32, `cbrt(x)` for float64."""
    def rule(args, dts, out, params):
        return f"{_f(out, name)}({', '.join(args)})"
    return rule


def _bin(op):
    def rule(args, dts, out, params):
        return _wrap_int(f"{args[0]} {op} {args[1]}", out)
    return rule


def _cmp(op):
    def rule(args, dts, out, params):
        if dts[0].kind == "c" and op not in ("==", "!="):
            a, b = args
            return f"(({a}).real, ({a}).imag) {op} (({b}).real, ({b}).imag)"
        return f"{args[0]} {op} {args[1]}"
    return rule


def _neg(args, dts, out, params):
    if out.kind == "b":
        raise TypeError("neg of bool")
    return _wrap_int(f"-{args[0]}", out)


def _sign(args, dts, out, params):
    x = args[0]
    one, zero = literal(1, out), literal(0, out)
    if out.kind == "c":
        return f"{ctor(out)}({x} / abs({x}) if {x} != {zero} else {x})"
    if out.kind == "u":
        return f"({one} if {x} > {zero} else {zero})"
    last = x if out.kind == "f" else zero  # NaN and -0.0 stay
    return f"({one} if {x} > {zero} else ({literal(-1, out)} if {x} < {zero} else {last}))"


def _not(args, dts, out, params):
    return f"not {args[0]}" if out == np.bool_ else f"{ctor(out)}(~{args[0]})"


def _abs(args, dts, out, params):
    return f"{ctor(out)}(abs({args[0]}))" if dts[0].kind in "iu" else f"abs({args[0]})"


def _square(args, dts, out, params):
    return _wrap_int(f"{args[0]} * {args[0]}", out)


def _integer_pow(args, dts, out, params):
    y = int(params["y"])
    x = args[0]
    if y == 0:
        return literal(1, out)
    if out.kind in "iu":
        return f"{ctor(out)}({x} ** {abs(y)})"
    if y < 0:
        return f"{literal(1, out)} / ({x} ** {-y})"
    return f"{x} ** {y}"


def _div(args, dts, out, params):
    """Integer division toward zero, with XLA's results where C has none (as the
    interpreter): x / 0 is -1 (all bits set), INT_MIN / -1 wraps to INT_MIN."""
    x, y = args
    if out.kind in "iu":
        zero = literal(0, out)
        all_ones = literal(np.iinfo(out).max if out.kind == "u" else -1, out)
        if out.kind == "u":
            return f"({all_ones} if {y} == {zero} else {ctor(out)}({x} // {y}))"
        q = f"(abs({x}) // abs({y}))"
        quotient = f"{ctor(out)}(-{q} if ({x} < {zero}) != ({y} < {zero}) else {q})"
        negated = f"{ctor(out)}({zero} - {x})"  # -INT_MIN wraps to INT_MIN
        return (f"({all_ones} if {y} == {zero} else ({negated} if {y} == {all_ones} "
                f"else {quotient}))")
    return f"{x} / {y}"


def _rem(args, dts, out, params):
    """C's remainder (the dividend's sign); an integer x rem 0 is x, as XLA."""
    x, y = args
    if out.kind in "iu":
        zero = literal(0, out)
        if out.kind == "u":
            return f"({x} if {y} == {zero} else {ctor(out)}({x} % {y}))"
        r = f"(abs({x}) % abs({y}))"
        return f"({x} if {y} == {zero} else {ctor(out)}(-{r} if {x} < {zero} else {r}))"
    return f"fmod({x}, {y})"


def minmax(kind, a, b, dtype) -> str:
    """maximum/minimum as the interpreter computes them: NaN propagates, zeros are ordered as
    IEEE 754-2019 and XLA order them (max(-0.0, 0.0) is 0.0 whichever comes first),
    complex compares lexicographically."""
    dt = np.dtype(dtype)
    cmp = ">" if kind == "max" else "<"
    if dt.kind == "c":
        return (f"({a} if ({a}.real {cmp} {b}.real or ({a}.real == {b}.real and "
                f"{a}.imag {cmp}= {b}.imag) or {a} != {a}) else {b})")
    if dt.kind == "f":
        return (f"({a} if ({a} {cmp} {b} or {a} != {a} or ({a} == {b} and "
                f"copysign(1.0, {a}) {cmp} 0.0)) else {b})")
    return f"({a} if {a} {cmp} {b} else {b})"


def _minmax(kind):
    def rule(args, dts, out, params):
        return minmax(kind, args[0], args[1], out)
    return rule


def _shift(which):
    def rule(args, dts, out, params):
        x, y = args
        bits = np.dtype(out).itemsize * 8
        zero = literal(0, out)
        out_of_range = f"({y} < {zero} or {y} >= {bits})"
        if which == "shl":
            return f"({zero} if {out_of_range} else {ctor(out)}({x} << {y}))"
        edge = f"({literal(-1, out)} if {x} < {zero} else {zero})" if out.kind == "i" else zero
        return f"({edge} if {out_of_range} else {ctor(out)}({x} >> {y}))"
    return rule


def _convert(args, dts, out, params):
    return cast(args[0], dts[0], params["new_dtype"])


def _round(args, dts, out, params):
    x = args[0]
    if params.get("rounding_method", 1) == 0:  # half away from zero, as the interpreter
        half, one, zero = literal(0.5, out), literal(1, out), literal(0, out)
        t = f"(ceil({x}) if {x} < {zero} else floor({x}))"  # trunc, keeping -0.0
        return (f"({t} + {one} if {x} - {t} >= {half} else "
                f"({t} - {one} if {x} - {t} <= -{half} else {t}))")
    return f"{_f(out, 'rint')}({x})"


def _f(dt, name):
    """The libdevice function for float32 (`rintf`) or float64 (`rint`)."""
    return name + "f" if np.dtype(dt) == np.float32 else name


def _logistic(args, dts, out, params):
    one = literal(1, out)
    ex = "cexp" if out.kind == "c" else "exp"
    return f"{one} / ({one} + {ex}(-{args[0]}))"


def _rsqrt(args, dts, out, params):
    sq = "csqrt" if out.kind == "c" else "sqrt"
    return f"{literal(1, out)} / {sq}({args[0]})"


def _exp2(args, dts, out, params):
    if out.kind == "c":
        return f"cexp({args[0]} * {literal(math.log(2.0), out)})"
    return f"{_f(out, 'exp2')}({args[0]})"


def _clamp(args, dts, out, params):
    lo, x, hi = args
    return minmax("min", minmax("max", x, lo, out), hi, out)


# complex sin/cos/sinh/cosh/tan/tanh from real functions (Numba's CUDA cmath lacks them)
def _csin(z):
    return f"complex(sin({z}.real) * cosh({z}.imag), cos({z}.real) * sinh({z}.imag))"


def _ccos(z):
    return f"complex(cos({z}.real) * cosh({z}.imag), -sin({z}.real) * sinh({z}.imag))"


def _csinh(z):
    return f"complex(sinh({z}.real) * cos({z}.imag), cosh({z}.real) * sin({z}.imag))"


def _ccosh(z):
    return f"complex(cosh({z}.real) * cos({z}.imag), sinh({z}.real) * sin({z}.imag))"


def _complex(form):
    """A complex rule: `form(z, one)`, an expression of the operand `z` (and the literal 1 of
    the result's dtype), cast to the result's dtype."""
    def rule(args, dts, out, params):
        return f"{ctor(out)}({form(args[0], literal(1, out))})"
    return rule


def _complex_raw(form):
    """As `_complex`, without the cast (the cmath functions return the right dtype)."""
    def rule(args, dts, out, params):
        return form(args[0], literal(1, out))
    return rule


_COMPLEX_SIN = _complex(lambda z, one: _csin(z))
_COMPLEX_COS = _complex(lambda z, one: _ccos(z))
_COMPLEX_SINH = _complex(lambda z, one: _csinh(z))
_COMPLEX_COSH = _complex(lambda z, one: _ccosh(z))
_COMPLEX_TAN = _complex(lambda z, one: f"{_csin(z)} / {_ccos(z)}")
_COMPLEX_TANH = _complex(lambda z, one: f"{_csinh(z)} / {_ccosh(z)}")
# acosh/log1p/expm1 from cmath's log/sqrt/exp
_COMPLEX_ACOSH = _complex_raw(lambda z, one: f"clog({z} + csqrt({z} + {one}) * "
                                             f"csqrt({z} - {one}))")
_COMPLEX_LOG1P = _complex_raw(lambda z, one: f"clog({z} + {one})")
_COMPLEX_EXPM1 = _complex_raw(lambda z, one: f"cexp({z}) - {one}")


def _unary(name, cmath_name=None, complex_rule=None):
    def rule(args, dts, out, params):
        if dts[0].kind == "c":
            if complex_rule is not None:
                return complex_rule(args, dts, out, params)
            return f"{cmath_name}({args[0]})"
        return f"{name}({args[0]})"
    return rule


def _in_float32(rule):
    """`rule` with float16 operands computed in float32 and the result rounded back to
    float16 (NumPy's float16 loops do the same)."""
    def rule_in_float32(args, in_dtypes, out, params):
        if np.dtype(np.float16) not in in_dtypes:
            return rule(args, in_dtypes, out, params)
        f32 = np.dtype(np.float32)
        args = [f"np.float32({a})" if d == np.float16 else a for a, d in zip(args, in_dtypes)]
        in_dtypes = [f32 if d == np.float16 else d for d in in_dtypes]
        expr = rule(args, in_dtypes, f32 if out == np.float16 else out, params)
        return f"np.float16({expr})" if out == np.float16 else expr
    return rule_in_float32


declare_target(
    "cuda.expr",
    needs=lambda prim: prim.kind == "elementwise" and not has_lowering(prim, "cuda.pull"),
    doc="rule(args, in_dtypes, out_dtype, params) -> one Python expression of the operand "
        "expressions `args` (in_dtypes: NumPy dtypes)")

# computed in float32 for float16 operands
for _prim, _rule in {
    P.sign_p: _sign, P.floor_p: _unary("floor"), P.ceil_p: _unary("ceil"),
    P.exp_p: _unary("exp", "cexp"), P.exp2_p: _exp2, P.log_p: _unary("log", "clog"),
    P.log1p_p: _unary("log1p", complex_rule=_COMPLEX_LOG1P),
    P.expm1_p: _unary("expm1", complex_rule=_COMPLEX_EXPM1),
    P.tanh_p: _unary("tanh", complex_rule=_COMPLEX_TANH), P.logistic_p: _logistic,
    P.sin_p: _unary("sin", complex_rule=_COMPLEX_SIN),
    P.cos_p: _unary("cos", complex_rule=_COMPLEX_COS),
    P.tan_p: _unary("tan", complex_rule=_COMPLEX_TAN),
    P.asin_p: _unary("asin", "casin"), P.acos_p: _unary("acos", "cacos"),
    P.atan_p: _unary("atan", "catan"), P.sinh_p: _unary("sinh", complex_rule=_COMPLEX_SINH),
    P.cosh_p: _unary("cosh", complex_rule=_COMPLEX_COSH), P.asinh_p: _unary("asinh", "casinh"),
    P.acosh_p: _unary("acosh", complex_rule=_COMPLEX_ACOSH),
    P.atanh_p: _unary("atanh", "catanh"),
    P.sqrt_p: _unary("sqrt", "csqrt"), P.rsqrt_p: _rsqrt, P.cbrt_p: _libm("cbrt"),
    P.square_p: _square, P.not_p: _not, P.round_p: _round,
    P.integer_pow_p: _integer_pow, P.add_p: _bin("+"), P.sub_p: _bin("-"), P.mul_p: _bin("*"),
    P.div_p: _div, P.rem_p: _rem, P.pow_p: _tmpl("{0} ** {1}"),
    P.atan2_p: _tmpl("atan2({0}, {1})"), P.nextafter_p: _libm("nextafter"),
    P.and_p: _bin("&"), P.or_p: _bin("|"), P.xor_p: _bin("^"), P.shift_left_p: _shift("shl"),
    P.shift_right_arithmetic_p: _shift("sar"),
}.items():
    register_lowering(_prim, "cuda.expr", _in_float32(_rule))
# exact in float16 (conversions, sign flips, comparisons, selections, parts)
for _prim, _rule in {
    P.convert_element_type_p: _convert, P.neg_p: _neg, P.abs_p: _abs, P.eq_p: _cmp("=="),
    P.ne_p: _cmp("!="), P.lt_p: _cmp("<"), P.le_p: _cmp("<="), P.gt_p: _cmp(">"),
    P.ge_p: _cmp(">="), P.max_p: _minmax("max"), P.min_p: _minmax("min"), P.clamp_p: _clamp,
    P.is_finite_p: _tmpl("isfinite({0})"), P.real_p: _tmpl("({0}).real"),
    P.imag_p: _tmpl("({0}).imag"), P.conj_p: _tmpl("({0}).conjugate()"),
}.items():
    register_lowering(_prim, "cuda.expr", _rule)
# select_n is read through a conditional by the renderer (only the chosen case loads).


def elementwise_expr(prim, args, in_dtypes, out_dtype, params) -> str:
    """The expression of one elementwise primitive applied to operand expressions."""
    rule = lowering_rule(prim, "cuda.expr")
    return rule(args, [np.dtype(d) for d in in_dtypes], np.dtype(out_dtype), params)
