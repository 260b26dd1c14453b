"""Per-element CUDA expressions of the elementwise primitives (the CUDA twin of `scalar`).

Each rule turns operand expressions into one Python expression that Numba's CUDA target
compiles (`math.*`, casts with `np.<dtype>(...)`, and the helpers of `cuda_device.py`, which
the simulator replaces with NumPy scalar versions). Numba promotes small integers to int64 in
arithmetic, so integer results are cast back to the primitive's dtype: they wrap exactly as
NumPy's do. float16 is computed in float32 and rounded, as NumPy does.

No import of numba here: rendering works without the toolkit.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import highest, lowest
from .numba_text import ctor, float_text, saturating_float_to_int

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


REDUCE_OPS = {"reduce_sum": "sum", "reduce_prod": "prod", "reduce_max": "max",
              "reduce_min": "min", "reduce_and": "and", "reduce_or": "or"}
CUMULATIVE_OPS = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min"}


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


def _complex_fn(name):
    """sin/cos/sinh/cosh/tan/tanh of a complex value from real functions (Numba's CUDA cmath
    lacks them), acosh/log1p/expm1 from cmath's log/sqrt/exp."""
    def rule(args, dts, out, params):
        z = args[0]
        a, b = f"{z}.real", f"{z}.imag"
        c = ctor(out)
        one = literal(1, out)
        forms = {
            "sin": f"complex(sin({a}) * cosh({b}), cos({a}) * sinh({b}))",
            "cos": f"complex(cos({a}) * cosh({b}), -sin({a}) * sinh({b}))",
            "sinh": f"complex(sinh({a}) * cos({b}), cosh({a}) * sin({b}))",
            "cosh": f"complex(cosh({a}) * cos({b}), sinh({a}) * sin({b}))",
        }
        if name in forms:
            return f"{c}({forms[name]})"
        if name == "tan":
            return f"{c}({forms['sin']} / {forms['cos']})"
        if name == "tanh":
            return f"{c}({forms['sinh']} / {forms['cosh']})"
        if name == "acosh":
            return f"clog({z} + csqrt({z} + {one}) * csqrt({z} - {one}))"
        if name == "log1p":
            return f"clog({z} + {one})"
        if name == "expm1":
            return f"cexp({z}) - {one}"
        raise KeyError(name)
    return rule


def _unary(name, cmath_name=None, complex_rule=None):
    def rule(args, dts, out, params):
        if dts[0].kind == "c":
            if complex_rule is not None:
                return complex_rule(args, dts, out, params)
            return f"{cmath_name}({args[0]})"
        return f"{name}({args[0]})"
    return rule


_C = _complex_fn
ELEMENTWISE = {
    "neg": _neg, "sign": _sign, "floor": _unary("floor"), "ceil": _unary("ceil"),
    "is_finite": _tmpl("isfinite({0})"), "exp": _unary("exp", "cexp"), "exp2": _exp2,
    "log": _unary("log", "clog"), "log1p": _unary("log1p", None, _C("log1p")),
    "expm1": _unary("expm1", None, _C("expm1")), "tanh": _unary("tanh", None, _C("tanh")),
    "logistic": _logistic, "sin": _unary("sin", None, _C("sin")),
    "cos": _unary("cos", None, _C("cos")), "tan": _unary("tan", None, _C("tan")),
    "asin": _unary("asin", "casin"), "acos": _unary("acos", "cacos"),
    "atan": _unary("atan", "catan"), "sinh": _unary("sinh", None, _C("sinh")),
    "cosh": _unary("cosh", None, _C("cosh")), "asinh": _unary("asinh", "casinh"),
    "acosh": _unary("acosh", None, _C("acosh")), "atanh": _unary("atanh", "catanh"),
    "sqrt": _unary("sqrt", "csqrt"), "rsqrt": _rsqrt, "cbrt": _libm("cbrt"),
    "square": _square, "not": _not, "abs": _abs, "real": _tmpl("({0}).real"),
    "imag": _tmpl("({0}).imag"), "conj": _tmpl("({0}).conjugate()"), "round": _round,
    "integer_pow": _integer_pow, "add": _bin("+"), "sub": _bin("-"), "mul": _bin("*"),
    "div": _div, "rem": _rem, "pow": _tmpl("{0} ** {1}"), "max": _minmax("max"),
    "min": _minmax("min"), "atan2": _tmpl("atan2({0}, {1})"), "nextafter": _libm("nextafter"),
    "and": _bin("&"), "or": _bin("|"), "xor": _bin("^"), "shift_left": _shift("shl"),
    "shift_right_arithmetic": _shift("sar"), "eq": _cmp("=="), "ne": _cmp("!="),
    "lt": _cmp("<"), "le": _cmp("<="), "gt": _cmp(">"), "ge": _cmp(">="),
    "convert_element_type": _convert, "clamp": _clamp,
}
# select_n is rendered as a conditional by the code generator (only the chosen case loads).

# ops whose float16 form is computed in float32 (NumPy's float16 loops do the same)
_NO_F16_UPCAST = {"convert_element_type", "neg", "abs", "eq", "ne", "lt", "le", "gt", "ge",
                  "max", "min", "clamp", "is_finite", "real", "imag", "conj"}


def elementwise_expr(name, args, in_dtypes, out_dtype, params) -> str:
    """The expression of one elementwise primitive applied to operand expressions."""
    in_dtypes = [np.dtype(d) for d in in_dtypes]
    out = np.dtype(out_dtype)
    rule = ELEMENTWISE[name]
    if np.dtype(np.float16) in in_dtypes and name not in _NO_F16_UPCAST:
        f32 = np.dtype(np.float32)
        args = [f"np.float32({a})" if d == np.float16 else a for a, d in zip(args, in_dtypes)]
        in_dtypes = [f32 if d == np.float16 else d for d in in_dtypes]
        res_dt = f32 if out == np.float16 else out
        expr = rule(args, in_dtypes, res_dt, params)
        return f"np.float16({expr})" if out == np.float16 else expr
    return rule(args, in_dtypes, out, params)
