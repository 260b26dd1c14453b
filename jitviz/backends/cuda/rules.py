"""The CUDA backend's registered rules for values: per-element expressions ("cuda.expr") and
the monoids of reductions and cumulative scans ("cuda.reduce"), with typed literals and casts.

    register_lowering(exp2_p, "cuda.expr", rule)   # rule(args, in_dtypes, out_dtype, params)
    register_lowering(reduce_sum_p, "cuda.reduce", SUM)

"cuda.expr" falls back to the rules both Numba targets share (`numba_expr.py`), written
against a dialect (`CudaDialect` here); this table holds only what CUDA writes its own way
(libdevice calls, integer division and shifts, complex forms Numba's CUDA cmath lacks).

Each expression rule turns operand expressions into one Python expression that Numba's CUDA
target compiles (`math.*`, casts with `np.<dtype>(...)`, and the names of `runtime.py`, which
the simulator replaces with NumPy scalar versions). Numba promotes small integers to int64 in
arithmetic, so integer results are cast back to the primitive's dtype: they wrap exactly as
NumPy's do. float16 is computed in float32 and rounded, as NumPy does, except by the rules
that are exact in half precision.

Elementary functions are libdevice's (`math.exp`, `cbrtf`, ...), not the CPU's vecmath: on an
H200 every libdevice kernel of benchmarks/bench_cuda_math.py moved 1.9-3.5 TB/s against a copy's
3.6, 1.1x-1.6x faster than CuPy's in float32 (README, CUDA), so the CPU's range reductions and
polynomials have little to gain here.

No import of numba here: rendering works without the toolkit.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.registry import declare_target, has_lowering, lowering_rule, register_lowering
from ...lax import primitives as P
from ..numba_expr import (AND, MAX, MIN, NUMBA_EXPR, OR, PROD, SUM, Dialect, Monoid,
                          expression_rule)
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


def identity(monoid: Monoid, dtype, empty=False) -> str:
    """The identity of a reduction monoid (numba_expr.py), as a typed literal; with `empty`,
    what reducing nothing gives (+0.0 for a float sum)."""
    dt = np.dtype(dtype)
    return literal(monoid.start(dt, empty), dt)


def combine(monoid: Monoid, a: str, b: str, dtype) -> str:
    """`a` and `b` combined by a reduction/cumulative monoid, in `dtype`."""
    return monoid.combine(CUDA, a, b, np.dtype(dtype))


def _wrap_int(expr, dt):
    return f"{ctor(dt)}({expr})" if dt.kind in "iub" or dt == np.float16 else expr


def minmax(monoid: Monoid, a, b, dtype) -> str:
    """maximum/minimum (`monoid` MAX or MIN) as the interpreter computes them: NaN propagates,
    zeros are ordered as IEEE 754-2019 and XLA order them (max(-0.0, 0.0) is 0.0 whichever
    comes first), complex compares lexicographically. The tests are combined with `|` and
    `&`, not `or` and `and`: every one is evaluated and the choice is one select, where
    short-circuits are branches. On an H200, `jnp.max(jnp.abs(x), axis=1)` of 4096x1024
    float32 took 66.6 us with `or`/`and` and 47.9 us so; a softmax's kernel 94.9 and 91.2 us
    (87.8 with a bare `max`, which gets NaN and zeros wrong)."""
    dt = np.dtype(dtype)
    cmp = monoid.order
    if dt.kind == "c":
        return (f"({a} if (({a}.real {cmp} {b}.real) | (({a}.real == {b}.real) & "
                f"({a}.imag {cmp}= {b}.imag)) | ({a} != {a})) else {b})")
    if dt.kind == "f":
        return (f"({a} if (({a} {cmp} {b}) | ({a} != {a}) | (({a} == {b}) & "
                f"(copysign(1.0, {a}) {cmp} 0.0))) else {b})")
    return f"({a} if {a} {cmp} {b} else {b})"


class CudaDialect(Dialect):
    """The shared rules (`numba_expr.py`) as CUDA kernels write them: the `math`/`cmath`
    names the kernels import, integer results wrapped by the rule, operands that may be
    expressions, and float16 computed in float32 by every rule not exact in half."""

    target = "cuda.expr"

    def call(self, name, args, in_dtype, out_dtype):
        """`name` from `math`, or for complex operands from `cmath` (`csqrt`) or, where
        Numba's CUDA cmath lacks it, its form in `COMPLEX_FORMS`."""
        if in_dtype.kind != "c":
            return f"{name}({', '.join(args)})"
        form = COMPLEX_FORMS.get(name)
        if form is not None:
            return form(args[0], literal(1, out_dtype), out_dtype)
        return f"c{name}({', '.join(args)})"

    def const(self, value, dtype):
        return literal(value, dtype)

    def wrap(self, text, dtype):
        return _wrap_int(text, np.dtype(dtype))

    def group(self, text):
        return f"({text})"

    def extremum(self, monoid, a, b, dtype):
        return minmax(monoid, a, b, dtype)

    def helper(self, name):
        return name  # a device function in the kernels' globals

    def bind(self, shared):
        rule = super().bind(shared)
        return rule if shared.exact_in_half else _in_float32(rule)


CUDA = CudaDialect()

declare_target(
    "cuda.reduce", needs=lambda prim: prim.kind in ("reduction", "arg_reduction", "scan_op"),
    doc="the Monoid (numba_expr.py) a reduction or cumulative scan combines with (argmax/"
        "argmin: MAX or MIN, the extreme they look for)")
for _prim, _monoid in [
        (P.reduce_sum_p, SUM), (P.reduce_prod_p, PROD), (P.reduce_max_p, MAX),
        (P.reduce_min_p, MIN), (P.reduce_and_p, AND), (P.reduce_or_p, OR), (P.argmax_p, MAX),
        (P.argmin_p, MIN), (P.cumsum_p, SUM), (P.cumprod_p, PROD), (P.cummax_p, MAX),
        (P.cummin_p, MIN)]:
    register_lowering(_prim, "cuda.reduce", _monoid)


def monoid(prim) -> Monoid:
    """The monoid `prim` (a reduction, arg-reduction or cumulative scan) combines with."""
    return lowering_rule(prim, "cuda.reduce")


# --- elementwise rules -----------------------------------------------------------------------
# rule(args, in_dtypes, out_dtype, params) -> expression; `args` are operand expressions.

def _tmpl(template):
    """A rule that fills a fixed template with the operand expressions, whatever the dtypes:
    `_tmpl("({0}).conjugate()")`."""
    def rule(args, dts, out, params):
        return template.format(*args)
    return rule


def _libm(name):
    """A rule calling the libdevice function `name` in the result's precision (`_f`):
    `_libm("cbrt")` gives `cbrtf(x)` for float32, `cbrt(x)` for float64."""
    def rule(args, dts, out, params):
        return f"{_f(out, name)}({', '.join(args)})"
    return rule


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


def _exp2(args, dts, out, params):
    if out.kind == "c":
        return f"cexp({args[0]} * {literal(math.log(2.0), out)})"
    return f"{_f(out, 'exp2')}({args[0]})"


# complex sin/cos/sinh/cosh/tan/tanh from real functions (Numba's CUDA cmath lacks them)
def _csin(z):
    return f"complex(sin({z}.real) * cosh({z}.imag), cos({z}.real) * sinh({z}.imag))"


def _ccos(z):
    return f"complex(cos({z}.real) * cosh({z}.imag), -sin({z}.real) * sinh({z}.imag))"


def _csinh(z):
    return f"complex(sinh({z}.real) * cos({z}.imag), cosh({z}.real) * sin({z}.imag))"


def _ccosh(z):
    return f"complex(cosh({z}.real) * cos({z}.imag), sinh({z}.real) * sin({z}.imag))"


def _cast_to_out(form):
    """`form(z, one)` cast to the result's dtype (Python's complex is complex128)."""
    return lambda z, one, out: f"{ctor(out)}({form(z, one)})"


def _as_is(form):
    """`form(z, one)` as it is (cmath's functions keep the operand's dtype)."""
    return lambda z, one, out: form(z, one)


# The complex math functions Numba's CUDA cmath lacks, as expressions of what it has, by the
# math function's name (`CudaDialect.call`): (z, the literal 1, result dtype) -> expression.
# sin/cos/sinh/cosh/tan/tanh from real functions; acosh/log1p/expm1 from cmath's log/sqrt/exp.
COMPLEX_FORMS = {
    "sin": _cast_to_out(lambda z, one: _csin(z)),
    "cos": _cast_to_out(lambda z, one: _ccos(z)),
    "sinh": _cast_to_out(lambda z, one: _csinh(z)),
    "cosh": _cast_to_out(lambda z, one: _ccosh(z)),
    "tan": _cast_to_out(lambda z, one: f"{_csin(z)} / {_ccos(z)}"),
    "tanh": _cast_to_out(lambda z, one: f"{_csinh(z)} / {_ccosh(z)}"),
    "acosh": _as_is(lambda z, one: f"clog({z} + csqrt({z} + {one}) * csqrt({z} - {one}))"),
    "log1p": _as_is(lambda z, one: f"clog({z} + {one})"),
    "expm1": _as_is(lambda z, one: f"cexp({z}) - {one}"),
}


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
    "cuda.expr", fallback=NUMBA_EXPR,
    needs=lambda prim: prim.kind == "elementwise" and not has_lowering(prim, "cuda.pull"),
    doc="rule(args, in_dtypes, out_dtype, params) -> one Python expression of the operand "
        "expressions `args` (in_dtypes: NumPy dtypes)")

# CUDA's own rules, over the shared ones of `numba_expr.py` (which it falls back to);
# computed in float32 for float16 operands
for _prim, _rule in {
    P.sign_p: _sign, P.exp2_p: _exp2, P.cbrt_p: _libm("cbrt"),
    P.not_p: _not, P.round_p: _round, P.integer_pow_p: _integer_pow, P.div_p: _div,
    P.rem_p: _rem, P.nextafter_p: _libm("nextafter"), P.shift_left_p: _shift("shl"),
    P.shift_right_arithmetic_p: _shift("sar"),
}.items():
    register_lowering(_prim, "cuda.expr", _in_float32(_rule))
# exact in float16 (conversions, absolute values, conjugates)
for _prim, _rule in {
    P.convert_element_type_p: _convert, P.abs_p: _abs, P.conj_p: _tmpl("({0}).conjugate()"),
}.items():
    register_lowering(_prim, "cuda.expr", _rule)
# select_n is read through a conditional by the renderer (only the chosen case loads).


def elementwise_expr(prim, args, in_dtypes, out_dtype, params) -> str:
    """The expression of one elementwise primitive applied to operand expressions."""
    rule = expression_rule(prim, CUDA)
    return rule(args, [np.dtype(d) for d in in_dtypes], np.dtype(out_dtype), params)
