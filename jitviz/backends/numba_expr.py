"""The Python-expression rules both Numba targets share: one base table, "numba.expr", that the
CPU kernels' table ("cpu.expr") and the CUDA kernels' table ("cuda.expr") fall back to, and the
monoids (identity and combine) of reductions and cumulative scans.

A shared rule is written once against a `Dialect`, the few things the two targets spell
differently:

    register_shared(add_p, lambda d, args, in_dtypes, out, params:
                    d.wrap(f"{args[0]} + {args[1]}", out))

    d.call("sqrt", args, in_dtype, out)  # np.sqrt(x) on the CPU; sqrt(x) / csqrt(x) on CUDA
    d.const(1, out)                      # a typed literal (np.float32(1.0))
    d.wrap(text, out)                    # an integer result wrapped to its dtype (CUDA's rules
                                         # do it; the CPU renderer casts every result)
    d.group(x)                           # an operand as one unit (CUDA's may be expressions)
    d.extremum(MAX, a, b, out)           # NaN-propagating maximum/minimum
    d.helper("softsign_scalar")          # a helper registered with the rule, as the target's
                                         # text calls it (rt.softsign_scalar on the CPU)

A target registers only what differs (the CPU's vectorized `rt.*_f32` math, CUDA's libdevice
calls and integer division), with the target's own signature `rule(args, in_dtypes, out_dtype,
params)`; `expression_rule(prim, dialect)` gives that rule, or the shared one bound to the
dialect. `tests/test_lowering_registry.py` checks that every elementwise primitive has a rule on
each target, here or there.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, NamedTuple

import numpy as np

from ..core.registry import declare_target, lowering, register_lowering
from ..dtypes import highest, lowest
from ..lax import primitives as P
from .numba_text import ctor

NUMBA_EXPR = "numba.expr"

declare_target(NUMBA_EXPR, doc="a SharedRule: render(d, args, in_dtypes, out_dtype, params) -> "
                               "one Numba expression, `d` the target's Dialect")


class Dialect(ABC):
    """How one Numba target writes what the shared rules say (see the module's docstring)."""

    target: str  # the target's own expression table, whose fallback is NUMBA_EXPR

    @abstractmethod
    def call(self, name: str, args, in_dtype, out_dtype) -> str:
        raise NotImplementedError

    @abstractmethod
    def const(self, value, dtype) -> str:
        raise NotImplementedError

    @abstractmethod
    def wrap(self, text: str, dtype) -> str:
        raise NotImplementedError

    @abstractmethod
    def group(self, text: str) -> str:
        raise NotImplementedError

    @abstractmethod
    def extremum(self, monoid: "Monoid", a: str, b: str, dtype) -> str:
        raise NotImplementedError

    @abstractmethod
    def helper(self, name: str) -> str:
        raise NotImplementedError

    def bind(self, shared: "SharedRule") -> Callable:
        """`shared` as a rule of this target's signature (args, in_dtypes, out_dtype, params)."""
        def rule(args, in_dtypes, out_dtype, params):
            return shared.render(self, args, in_dtypes, out_dtype, params)
        return rule


class SharedRule(NamedTuple):
    render: Callable  # (dialect, args, in_dtypes, out_dtype, params) -> str
    # exact on float16 operands (comparisons, selections, sign flips): a target that computes
    # half precision in float32 and rounds (CUDA) need not for this one
    exact_in_half: bool = False


def register_shared(prim, render, *, exact_in_half=False, helpers=()) -> None:
    """`render(d, args, in_dtypes, out_dtype, params)` lowers `prim` on both Numba targets;
    `helpers` (as in `register_lowering`): functions its text calls through `d.helper`, which
    each target compiles for itself."""
    register_lowering(prim, NUMBA_EXPR, SharedRule(render, exact_in_half), helpers)


def expression_rule(prim, dialect: Dialect):
    """`prim`'s expression rule on `dialect`'s target: its own, else the shared one bound to
    the dialect; None when neither has one."""
    found = lowering(prim, dialect.target)
    if found is None:
        return None
    # the registry's fallback returns the shared table's own entry: that one is written
    # against a dialect, the target's own rules are not
    if found is lowering(prim, NUMBA_EXPR):
        return dialect.bind(_checked(prim, found.rule))
    return found.rule


def shared_rule(prim, dialect: Dialect):
    """The shared rule of `prim` bound to `dialect`, for a target's own rule that uses it for
    some dtypes only."""
    return dialect.bind(_checked(prim, lowering(prim, NUMBA_EXPR).rule))


def _checked(prim, rule) -> SharedRule:
    if not isinstance(rule, SharedRule):
        raise TypeError(f"the {NUMBA_EXPR!r} rule of {prim.name} is {rule!r}: register a shared "
                        f"rule with numba_expr.register_shared(prim, render), render(d, args, "
                        f"in_dtypes, out_dtype, params) with d the target's Dialect")
    return rule


# --- monoids: reductions and cumulative scans -------------------------------------------------

def _all_ones(dt):
    return True if dt.kind == "b" else (-1 if dt.kind == "i" else np.iinfo(dt).max)


class Monoid(NamedTuple):
    name: str  # "sum", "prod", "max", "min", "and", "or"
    identity: Callable  # dtype -> its identity value
    operator: str | None  # the binary operator combining two values; None: an extremum
    order: str | None = None  # ">" for max, "<" for min (which value an extremum keeps)
    empty: Callable | None = None  # dtype -> what reducing nothing gives, if not the identity

    def start(self, dt, empty=False):
        """An accumulator's start: the identity, or for a reduction over no elements what
        reducing nothing gives."""
        return self.empty(dt) if empty and self.empty is not None else self.identity(dt)

    def combine(self, d: Dialect, a: str, b: str, dtype) -> str:
        """`a` and `b` combined, in `dtype`, as `d`'s target writes it."""
        if self.operator is None:
            return d.extremum(self, a, b, dtype)
        return d.wrap(f"{a} {self.operator} {b}", dtype)


# -0.0 is the exact identity of a float sum: a sum of -0.0 stays -0.0, as in NumPy; a sum of
# nothing is +0.0, as NumPy's and XLA's (and the interpreter's)
SUM = Monoid("sum", lambda dt: -0.0 if dt.kind in "fc" else 0, "+", empty=lambda dt: 0)
PROD = Monoid("prod", lambda dt: 1, "*")
MAX = Monoid("max", lowest, None, ">")
MIN = Monoid("min", highest, None, "<")
AND = Monoid("and", _all_ones, "&")
OR = Monoid("or", lambda dt: False if dt.kind == "b" else 0, "|")


# --- shared elementwise rules ----------------------------------------------------------------
# rule(d, args, in_dtypes, out_dtype, params); `args` are the operands' expressions.

def _math(name):
    """The math library's `name` of the operands (`np.log`, `log`, `clog` for complex)."""
    def render(d, args, ins, out, params):
        return d.call(name, args, ins[0], out)
    return render


def _binary(op):
    def render(d, args, ins, out, params):
        return d.wrap(f"{args[0]} {op} {args[1]}", out)
    return render


def _compare(op):
    def render(d, args, ins, out, params):  # (lt/le/gt/ge take no complex numbers, as JAX's)
        return f"{args[0]} {op} {args[1]}"
    return render


def _part(attribute):
    def render(d, args, ins, out, params):
        return f"{d.group(args[0])}.{attribute}"
    return render


def _extremum(monoid):
    def render(d, args, ins, out, params):
        return d.extremum(monoid, args[0], args[1], out)
    return render


def _neg(d, args, ins, out, params):
    if out.kind == "b":
        raise TypeError("neg of bool")
    return d.wrap(f"-{args[0]}", out)


def _square(d, args, ins, out, params):
    return d.wrap(f"{args[0]} * {args[0]}", out)


def _rsqrt(d, args, ins, out, params):
    return f"{d.const(1, out)} / {d.call('sqrt', args, ins[0], out)}"


def _logistic(d, args, ins, out, params):
    """1 / (1 + e), times e below 0, with e = e^-|x|: 1 / (1 + e^-x) alone overflows e^-x from
    x = -88.7 (float32) on and gives 0 down to -103.9, where the result is still a normal or
    subnormal number. e is written twice and computed once (LLVM merges the calls of the pure
    function: tests/test_cuda_ptx.py counts the exponentials). Complex: the plain form."""
    one, x = d.const(1, out), args[0]
    if ins[0].kind == "c":
        return f"{one} / ({one} + {d.call('exp', [f'-{x}'], ins[0], out)})"
    e = d.call("exp", [f"-abs({x})"], ins[0], out)
    return f"({one} / ({one} + {e}) * ({one} if ({x}) >= {d.const(0, out)} else {e}))"


def _clamp(d, args, ins, out, params):
    lo, x, hi = args
    return d.extremum(MIN, d.extremum(MAX, x, lo, out), hi, out)


def _complex(d, args, ins, out, params):
    """x + iy from its parts (Numba's `complex` gives complex128: cast to the result's)."""
    return f"{ctor(out)}(complex({args[0]}, {args[1]}))"


def _pow(d, args, ins, out, params):
    return f"{args[0]} ** {args[1]}"


for _prim, _name in [
        (P.floor_p, "floor"), (P.ceil_p, "ceil"), (P.exp_p, "exp"), (P.log_p, "log"),
        (P.log1p_p, "log1p"), (P.expm1_p, "expm1"), (P.tanh_p, "tanh"), (P.sin_p, "sin"),
        (P.cos_p, "cos"), (P.tan_p, "tan"), (P.asin_p, "asin"), (P.acos_p, "acos"),
        (P.atan_p, "atan"), (P.sinh_p, "sinh"), (P.cosh_p, "cosh"), (P.asinh_p, "asinh"),
        (P.acosh_p, "acosh"), (P.atanh_p, "atanh"), (P.sqrt_p, "sqrt"), (P.atan2_p, "atan2"),
        (P.nextafter_p, "nextafter")]:
    register_shared(_prim, _math(_name))
for _prim, _render in {
        P.rsqrt_p: _rsqrt, P.logistic_p: _logistic, P.square_p: _square, P.pow_p: _pow,
        P.add_p: _binary("+"), P.sub_p: _binary("-"), P.mul_p: _binary("*"),
        P.and_p: _binary("&"), P.or_p: _binary("|"), P.xor_p: _binary("^")}.items():
    register_shared(_prim, _render)
# exact in float16: comparisons, sign flips, selections and parts
for _prim, _render in {
        P.neg_p: _neg, P.is_finite_p: _math("isfinite"), P.real_p: _part("real"),
        P.imag_p: _part("imag"), P.eq_p: _compare("=="), P.ne_p: _compare("!="),
        P.lt_p: _compare("<"), P.le_p: _compare("<="), P.gt_p: _compare(">"),
        P.ge_p: _compare(">="), P.max_p: _extremum(MAX), P.min_p: _extremum(MIN),
        P.clamp_p: _clamp, P.complex_p: _complex}.items():
    register_shared(_prim, _render, exact_in_half=True)
