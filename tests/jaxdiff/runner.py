"""Run one generated program under `jax.jit` and `jitviz.jit`, compare, localise, minimise.

`check(program)` returns a `Result`: for each jitviz backend the first difference from JAX
(`Diff`: its kind, the output, a description), localised to the first statement whose value
differs (`culprit`), and a class key `kind | op | operand types` that groups mismatches with one
cause. Kinds, in the order they are looked for:

    jitviz-raises   JAX runs, jitviz raises            jitviz-runs  JAX raises, jitviz runs
    error-class     both raise, jitviz's exception is not (a subclass of) JAX's class
    arity / not-array / shape / dtype / weak_type      structure of the outputs
    nan / inf / value / zero-sign                      values (tolerance by dtype)

`minimize(program, backend, key)` drops statements, arguments and array elements while the
same kind of difference at the same operation remains.
"""
from __future__ import annotations

import dataclasses
import linecache
import math
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

from . import generator as G

BACKENDS = ("interpret", "cpu")
TIMEOUT_S = 120

# value tolerances: |a - b| <= atol + rtol * |b| (XLA's CPU math differs from NumPy's and
# Numba's in the last bits; a few ulps grow through a chain of operations)
RTOL = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-11}
ATOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}


@dataclasses.dataclass
class Leaf:
    value: np.ndarray | None
    dtype: str | None
    weak: bool | None
    shape: tuple | None
    pytype: str


@dataclasses.dataclass
class Outcome:
    leaves: list | None = None
    error: str | None = None          # exception class name
    error_mro: tuple = ()             # names of the class and its bases
    message: str = ""
    seconds: float = 0.0

    @property
    def ok(self):
        return self.error is None


@dataclasses.dataclass
class Diff:
    kind: str
    index: int | None          # which output (None: the program as a whole)
    detail: str
    jax: str = ""
    jitviz: str = ""


# --- running --------------------------------------------------------------------------------

class _Timeout(Exception):
    pass


def _alarm(seconds):
    """SIGALRM-based limit in the main thread (a hung compile must not stop a long run)."""
    if threading.current_thread() is not threading.main_thread() or not seconds:
        return None

    def handler(signum, frame):
        raise _Timeout(f"no result after {seconds} s")
    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(int(seconds))
    return old


def _clear_alarm(old):
    if old is not None:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


_COUNTER = [0]


def _function(program, jnp_mod, lax_mod, returns=None):
    src = program.source(returns)
    _COUNTER[0] += 1
    filename = f"<jaxdiff seed={program.seed} #{_COUNTER[0]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"jnp": jnp_mod, "lax": lax_mod, "np": np, "_weak": _WEAK[lax_mod.__name__]}
    exec(compile(src, filename, "exec"), ns)
    return ns["f"], filename


def _jax_weak(a):
    from jax._src.lax.lax import _convert_element_type
    return _convert_element_type(a, a.dtype, weak_type=True)


def _jitviz_weak(a):
    import jitviz.lax
    return jitviz.lax.convert_element_type(a, a.dtype, weak_type=True)


# `_weak(x)`: x as a weakly typed array (a materialised statement's weak array operand)
_WEAK = {"jax.lax": _jax_weak, "jitviz.lax": _jitviz_weak}


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _leaf_of_jax(x):
    import jax
    if isinstance(x, jax.Array):
        return Leaf(np.asarray(x), np.dtype(x.dtype).name, bool(x.aval.weak_type),
                    tuple(x.shape), "Array")
    arr = np.asarray(x)
    return Leaf(arr, arr.dtype.name, None, arr.shape, type(x).__name__)


def _leaf_of_jitviz(x):
    import jitviz
    if isinstance(x, jitviz.Array):
        arr = np.asarray(x)
        return Leaf(arr, arr.dtype.name, bool(x.weak_type), arr.shape, "Array")
    try:
        arr = np.asarray(x)
        return Leaf(arr, arr.dtype.name, getattr(x, "weak_type", None), arr.shape,
                    type(x).__name__)
    except Exception:
        return Leaf(None, None, None, None, type(x).__name__)


def _run(program, system, returns=None, timeout=TIMEOUT_S):
    import jax
    import jax.lax as jlax
    import jax.numpy as jjnp
    import jitviz
    import jitviz.lax as vlax
    import jitviz.numpy as vjnp
    t0 = time.perf_counter()
    old = None
    files = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with G.x64_mode(program.x64):
                old = _alarm(timeout)
                if system == "jax":
                    f, fn = _function(program, jjnp, jlax, returns)
                    files.append(fn)
                    out = jax.jit(f)(*program.arg_values())
                    leaves = [_leaf_of_jax(x) for x in jax.tree_util.tree_leaves(out)]
                elif system == "jax-eager":  # op by op: no whole-program XLA rewrites
                    f, fn = _function(program, jjnp, jlax, returns)
                    files.append(fn)
                    with jax.disable_jit():
                        out = f(*[jjnp.asarray(v) for v in program.arg_values()])
                    leaves = [_leaf_of_jax(x) for x in jax.tree_util.tree_leaves(out)]
                else:
                    f, fn = _function(program, vjnp, vlax, returns)
                    files.append(fn)
                    out = jitviz.jit(f, backend=system)(*program.arg_values())
                    leaves = [_leaf_of_jitviz(x) for x in _leaves(out)]
                _clear_alarm(old)
                old = None
        return Outcome(leaves=leaves, seconds=time.perf_counter() - t0)
    except BaseException as e:  # noqa: BLE001 - every exception is an outcome here
        _clear_alarm(old)
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = str(e)
        if isinstance(e, _Timeout):
            return Outcome(error="Timeout", error_mro=("Timeout",), message=msg,
                           seconds=time.perf_counter() - t0)
        if not msg.strip():
            msg = "".join(traceback.format_exception_only(type(e), e))
        return Outcome(error=type(e).__name__,
                       error_mro=tuple(c.__name__ for c in type(e).__mro__),
                       message=msg[:2000], seconds=time.perf_counter() - t0)
    finally:
        for fn in files:
            linecache.cache.pop(fn, None)


# --- comparing ------------------------------------------------------------------------------

def _short(a, n=200):
    if a is None:
        return "None"
    with np.printoptions(precision=8, threshold=24, edgeitems=3):
        s = np.array2string(np.asarray(a), separator=", ")
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n] + "..."


def _desc(leaf: Leaf):
    if leaf.value is None:
        return f"<{leaf.pytype}>"
    w = ", weak" if leaf.weak else ""
    return f"{leaf.dtype}{list(leaf.shape)}{w} {_short(leaf.value)}"


def compare_values(ref: np.ndarray, got: np.ndarray, dtype: str):
    """None if equal within tolerance, else (kind, detail)."""
    ref = np.asarray(ref)
    got = np.asarray(got)
    if ref.dtype.kind == "c" or got.dtype.kind == "c":
        ref_c, got_c = ref.astype(np.complex128), got.astype(np.complex128)
        part = "float64" if "128" in str(ref.dtype) else "float32"
        for f, name in ((np.real, "real"), (np.imag, "imag")):
            d = compare_values(f(ref_c), f(got_c), part)
            if d is not None:
                return d[0], f"{name} part {d[1]}"
        return None
    if ref.dtype.kind in "biu" or got.dtype.kind in "biu":
        if ref.dtype.kind in "biu" and got.dtype.kind in "biu":
            neq = ref.astype(object) != got.astype(object) if ref.size else np.zeros(0, bool)
            neq = np.asarray(neq, dtype=bool)
        else:
            a, b = ref.astype(np.float64), got.astype(np.float64)
            neq = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        if neq.any():
            i = tuple(int(k) for k in np.argwhere(neq)[0])
            return "value", f"at {list(i)}: JAX {ref[i]!r}, jitviz {got[i]!r}"
        return None
    with np.errstate(all="ignore"):
        return _compare_floats(ref.astype(np.float64), got.astype(np.float64), dtype)


def _compare_floats(a, b, dtype):
    na, nb = np.isnan(a), np.isnan(b)
    if (na != nb).any():
        i = tuple(int(k) for k in np.argwhere(na != nb)[0])
        return "nan", f"at {list(i)}: JAX {a[i]!r}, jitviz {b[i]!r}"
    ia, ib = np.isinf(a), np.isinf(b)
    bad_inf = (ia | ib) & ~(na | nb) & (a != b)
    if bad_inf.any():
        i = tuple(int(k) for k in np.argwhere(bad_inf)[0])
        return "inf", f"at {list(i)}: JAX {a[i]!r}, jitviz {b[i]!r}"
    fin = ~(na | nb | ia | ib)
    rtol = RTOL.get(dtype, 2e-5)
    atol = ATOL.get(dtype, 1e-6)
    err = np.abs(a - b)
    bad = fin & (err > atol + rtol * np.abs(a))
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        rel = err[i] / max(abs(a[i]), 1e-300)
        return "value", f"at {list(i)}: JAX {a[i]!r}, jitviz {b[i]!r} (rel. error {rel:.3g})"
    z = fin & (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    if z.any():
        i = tuple(int(k) for k in np.argwhere(z)[0])
        return "zero-sign", f"at {list(i)}: JAX {a[i]!r}, jitviz {b[i]!r}"
    return None


def compare(ref: Outcome, got: Outcome, tolerance_of: str | None = None) -> Diff | None:
    """The first difference (None: none). `tolerance_of` compares float values with another
    dtype's tolerance (float32's, for results computed from float32 operands)."""
    if ref.error:
        if ref.error == "Timeout":
            return None
        if got.ok:
            return Diff("jitviz-runs", None, f"JAX raises {ref.error}, jitviz runs",
                        f"{ref.error}: {ref.message[:300]}",
                        "; ".join(_desc(x) for x in got.leaves)[:400])
        if ref.error not in got.error_mro:
            return Diff("error-class", None, f"JAX raises {ref.error}, jitviz {got.error}",
                        f"{ref.error}: {ref.message[:300]}", f"{got.error}: {got.message[:300]}")
        return None
    if not got.ok:
        kind = "timeout" if got.error == "Timeout" else "jitviz-raises"
        return Diff(kind, None, f"jitviz raises {got.error}",
                    "; ".join(_desc(x) for x in ref.leaves)[:400],
                    f"{got.error}: {got.message[:600]}")
    if len(ref.leaves) != len(got.leaves):
        return Diff("arity", None, f"{len(ref.leaves)} outputs vs {len(got.leaves)}")
    for i, (r, g) in enumerate(zip(ref.leaves, got.leaves)):
        jd, vd = _desc(r), _desc(g)
        if g.pytype != "Array" or g.value is None:
            return Diff("not-array", i, f"output {i} is a {g.pytype}, not a jitviz.Array", jd, vd)
        if tuple(r.shape) != tuple(g.shape):
            return Diff("shape", i, f"output {i}: shape {r.shape} vs {g.shape}", jd, vd)
        if r.dtype != g.dtype:
            same = compare_values(r.value, g.value, r.dtype)
            return Diff("dtype", i, f"output {i}: {r.dtype} vs {g.dtype}" +
                        ("" if same is None else f"; values differ too ({same[1]})"), jd, vd)
        if bool(r.weak) != bool(g.weak):
            return Diff("weak_type", i, f"output {i}: weak_type {r.weak} vs {g.weak}", jd, vd)
        d = compare_values(r.value, g.value, tolerance_of or r.dtype)
        if d is not None:
            return Diff(d[0], i, f"output {i}: {d[1]}", jd, vd)
    return None


def _narrower_operand_float(operands: str | None) -> str | None:
    """The narrowest float type among the culprit's operands, if narrower than float64: a
    wider result of such an operand carries its rounding, and XLA's float32 math and
    NumPy's may differ in its last bit (compared with that type's tolerance, outputs of the
    narrow type itself are compared as before)."""
    for narrow in ("float16", "float32"):
        if operands and narrow in operands:
            return narrow
    return None


# --- checking, localising -------------------------------------------------------------------

@dataclasses.dataclass
class Mismatch:
    backend: str
    kind: str
    detail: str
    jax: str
    jitviz: str
    op: str | None = None          # the culprit statement's operation
    stmt: str | None = None        # its source line
    operands: str = ""             # its operands' types, JAX's view: "float32[2,3], weak f32[]"
    key: str = ""                  # kind | op | operand kinds
    localized: bool = False
    program: dict | None = None    # Program.to_json()
    minimized: dict | None = None
    known: str | None = None       # the name of a known.py entry that covers it
    nan_sign_only: bool = False    # the culprit agrees once its NaN operands are positive
    subnormal_only: bool = False   # ... once its subnormal operands are flushed to zero
    bool_product_only: bool = False  # ... once its boolean operands are float 0/1
    algsimp_only: bool = False     # JAX agrees with XLA's algebraic simplifier off
    unrounded_products_only: bool = False  # a dot: one side added its products unrounded
    sum_order_only: bool = False   # agrees once jitviz's interpreter adds its sums in sequence
    suffix_order_only: bool = False  # ... computes a reverse cumsum/cumprod by windows
    lane_order_only: bool = False  # the backend's sum/product: the interpreter's in vector lanes
    reference_quirk: str | None = None  # JAX disagrees with itself (jit vs op by op)
    amplified: str | None = None   # the culprit agrees when fed JAX's operands: upstream
    #                                rounding (within tolerance) grew through it

    def to_json(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Result:
    program: G.Program
    jax: Outcome
    outcomes: dict            # backend -> Outcome
    mismatches: list          # [Mismatch]
    seconds: float = 0.0


def _type_text(leaf: Leaf):
    if leaf is None or leaf.dtype is None:
        return "?"
    w = "weak " if leaf.weak else ""
    return f"{w}{leaf.dtype}[{','.join(map(str, leaf.shape))}]"


def _operand_text(program, stmt, avals):
    parts = []
    for name in stmt.uses:
        if name in avals:
            parts.append(_type_text(avals[name]))
        else:
            for n, v in program.args:
                if n == name:
                    parts.append(_arg_type(v))
    return ", ".join(parts)


def _arg_type(v):
    if isinstance(v, np.ndarray):
        return f"{v.dtype.name}[{','.join(map(str, v.shape))}]"
    return f"python {type(v).__name__}"


def _kind_of(t):
    """'weak float32[2,3]' -> 'weak float32', 'python float' stays."""
    return t.split("[")[0]


def class_key(kind, op, operands):
    ops = ", ".join(sorted(set(_kind_of(t) for t in operands.split(", ") if t))) \
        if operands else ""
    return f"{kind} | {op} | {ops}"


def localize(program, backend, diff, tolerance_of=None):
    """The first statement whose value differs (all statement results returned), or None."""
    if not program.stmts:
        return None
    names = program.all_vars()
    ref = _run(program, "jax", returns=names)
    got = _run(program, backend, returns=names)
    if not ref.ok or not got.ok or len(ref.leaves) != len(names) \
            or len(got.leaves) != len(names):
        if not ref.ok and not got.ok and ref.error == got.error:
            return None
        # an error: the statement that raises is the last one reached; take the last
        return len(program.stmts) - 1, None, {}
    avals = {}
    for n, leaf in zip(names, ref.leaves):
        avals[n] = leaf
    pos = {}
    for i, s in enumerate(program.stmts):
        for o in s.outs:
            pos[o] = i
    for k, (n, r, g) in enumerate(zip(names, ref.leaves, got.leaves)):
        d = compare(Outcome(leaves=[r]), Outcome(leaves=[g]), tolerance_of)
        if d is not None:
            d.detail = f"{n}: " + d.detail.replace("output 0: ", "")
            return pos[n], d, avals
    return None  # only the full program differs (fusion, dead code elimination...)


VALUE_KINDS = ("value", "nan", "inf", "zero-sign")

def tolerated(m) -> bool:
    """A value difference that upstream rounding explains (`amplified`)."""
    return bool(getattr(m, "amplified", None))


def check(program: G.Program, backends=BACKENDS, do_localize=True) -> Result:
    t0 = time.perf_counter()
    ref = _run(program, "jax")
    outcomes, mismatches = {}, []
    eager = None
    for b in backends:
        got = _run(program, b)
        outcomes[b] = got
        d = compare(ref, got)
        if d is None:
            continue
        m = Mismatch(b, d.kind, d.detail, d.jax, d.jitviz, program=program.to_json())
        if d.kind == "jitviz-runs" and ref.error == "JaxRuntimeError":
            # XLA failed to compile or run what JAX traced (seed 35008769: its simplifier
            # makes min(max(b, lo), hi) of booleans a Clamp, which its CPU backend lacks):
            # JAX op by op is the reference for what the program computes
            if eager is None:
                eager = _run(program, "jax-eager")
            if eager.ok and compare(eager, got) is None:
                m.reference_quirk = ("JAX's jit raises at run time (XLA could not compile "
                                     "its rewrite of the program) where JAX op by op "
                                     "computes what jitviz computes")
        if d.kind in VALUE_KINDS:
            if eager is None:
                eager = _run(program, "jax-eager")
            if eager.ok and (compare(eager, got) is None or
                             _jit_differences_only(ref, eager, got)):
                m.reference_quirk = ("JAX's jit result differs from JAX op by op, which "
                                     "jitviz matches: an XLA whole-program rewrite")
        if do_localize:
            _localize_into(program, m, d)
            if m.kind in VALUE_KINDS and not m.localized and not m.reference_quirk:
                # a difference no statement shows alone: XLA rewrote across statements
                # (seed 36003451: -inf * (a / broadcast(b)) as -inf * a * (1 / b), 1 / b
                # subnormal and flushed to zero)
                m.algsimp_only = jax_agrees_without_algsimp(program, got)
            if m.kind in VALUE_KINDS and m.localized and not m.reference_quirk:
                if statement_agrees_op_by_op(program, m):
                    m.reference_quirk = ("the statement alone: JAX's jit result differs from "
                                         "JAX op by op, which jitviz matches (an XLA rewrite, "
                                         "e.g. x * bool as a select)")
                elif confirm(program, m) is False:
                    m.amplified = ("the statement alone, fed JAX's values of its operands, "
                                   "agrees: rounding within tolerance upstream grew through it")
                elif (narrow := _narrower_operand_float(m.operands)) and \
                        (rest := compare(ref, got, tolerance_of=narrow)) is None:
                    m.amplified = (f"agrees within {narrow} tolerance: the wider result "
                                   f"carries its {narrow} operand's last-bit rounding")
                elif narrow and rest.kind != d.kind:
                    # the value difference was that rounding; classify what else differs
                    m = Mismatch(b, rest.kind, rest.detail, rest.jax, rest.jitviz,
                                 program=program.to_json())
                    _localize_into(program, m, rest, tolerance_of=narrow)
                else:
                    m.nan_sign_only = nan_sign_only(program, m)
                    m.subnormal_only = not m.nan_sign_only and subnormal_only(program, m)
                    m.bool_product_only = not (m.nan_sign_only or m.subnormal_only) and \
                        bool_product_only(program, m)
                    m.unrounded_products_only = not (
                        m.nan_sign_only or m.subnormal_only or m.bool_product_only) and \
                        unrounded_products_only(program, m)
                    m.sum_order_only = not (
                        m.nan_sign_only or m.subnormal_only or m.bool_product_only or
                        m.unrounded_products_only) and sum_order_only(program, m)
                    m.suffix_order_only = not (
                        m.nan_sign_only or m.subnormal_only or m.bool_product_only or
                        m.unrounded_products_only or m.sum_order_only) and \
                        suffix_order_only(program, m)
                    m.lane_order_only = not (
                        m.nan_sign_only or m.subnormal_only or m.bool_product_only or
                        m.unrounded_products_only or m.sum_order_only or
                        m.suffix_order_only) and lane_order_only(program, m)
                    m.algsimp_only = not (m.nan_sign_only or m.subnormal_only or
                                          m.bool_product_only or
                                          m.unrounded_products_only or
                                          m.sum_order_only or m.suffix_order_only or
                                          m.lane_order_only) and \
                        jax_agrees_without_algsimp(program, got)
            if tolerated(m):
                continue
        mismatches.append(m)
    return Result(program, ref, outcomes, mismatches, time.perf_counter() - t0)


def _jit_differences_only(ref, eager, got):
    """Does JAX op by op agree with jitviz on every output where JAX's jit result differs
    from jitviz's (the outputs differ where XLA's whole-program rewrites apply, and agree
    elsewhere, each within its tolerance)?"""
    if not (ref.ok and eager.ok and got.ok) or \
            not len(ref.leaves) == len(eager.leaves) == len(got.leaves):
        return False
    one = lambda leaf: Outcome(leaves=[leaf])  # noqa: E731
    return all(compare(one(r), one(g)) is None or compare(one(e), one(g)) is None
               for r, e, g in zip(ref.leaves, eager.leaves, got.leaves))


_RAISING = ("jitviz-runs", "error-class", "jitviz-raises", "timeout")
_STRUCTURE_KINDS = ("arity", "not-array", "shape", "dtype", "weak_type")


def _localize_into(program, m, d, tolerance_of=None):
    if d.kind in ("jitviz-raises", "timeout"):
        loc = _raising_statement(program, m.backend)
    elif d.kind in _RAISING:  # JAX raises: at the last statement (error programs end there)
        loc = (len(program.stmts) - 1, None, {})
    else:
        loc = localize(program, m.backend, d, tolerance_of)
    if loc is None:
        last = program.stmts[-1] if program.stmts else None
        m.op = (last.op if last else "?")
        m.stmt = last.line() if last else None
        m.key = f"{d.kind} | whole program only | {m.op}"
        return
    i, d2, avals = loc
    if d.kind in _RAISING and i > 0:
        # root cause: a type that already differs before the statement that raises (a value
        # difference, a zero's sign say, does not make a later statement raise)
        pre = program.replace(stmts=program.stmts[:i], returns_override=None)
        loc0 = localize(pre, m.backend, None)
        if loc0 is not None and loc0[1] is not None and loc0[1].kind in _STRUCTURE_KINDS:
            raising = program.stmts[i].line()
            i, d2, avals = loc0
            d2 = dataclasses.replace(d2, detail=f"{d2.detail}; later: {d.detail} at "
                                                f"`{raising}`")
    s = program.stmts[i]
    m.op, m.stmt, m.localized = s.op, s.line(), d2 is not None or d.kind in (
        "jitviz-runs", "error-class", "jitviz-raises")
    m.operands = _operand_text(program, s, avals)
    kind = d2.kind if d2 is not None else d.kind
    if d2 is not None:
        m.kind, m.detail, m.jax, m.jitviz = d2.kind, d2.detail, d2.jax, d2.jitviz
    if kind in ("jitviz-raises", "error-class"):
        err = m.jitviz.split(":")[0]
        m.key = f"{kind} | {s.op} | {err}"
    else:
        m.key = class_key(kind, s.op, m.operands)


def _culprit_alone(program, m):
    """The culprit statement as a program of its own, fed JAX's values of its operands (None
    where that cannot be set up: the statement is not there, or an operand is weak)."""
    lines = [s.line() for s in program.stmts]
    if m.stmt not in lines:
        return None
    return _materialize(program, lines.index(m.stmt))


def statement_agrees_op_by_op(program, m):
    """Does jitviz agree with JAX op by op (no jit: no XLA rewrites across operations) on
    the culprit statement alone, fed JAX's values of its operands?"""
    q = _culprit_alone(program, m)
    if q is None:
        return False
    eager = _run(q, "jax-eager")
    return eager.ok and compare(eager, _run(q, m.backend)) is None


def confirm(program, m):
    """Does the culprit statement alone, fed JAX's values of its operands, still differ?
    True / False, or None where that cannot be set up (a weak array operand)."""
    q = _culprit_alone(program, m)
    if q is None:
        return None
    ref = _run(q, "jax")
    if not ref.ok:
        return None
    return compare(ref, _run(q, m.backend)) is not None


def nan_sign_only(program, m):
    """Does the culprit statement alone agree once every NaN among its operands (JAX's
    values) is made positive? README: jitviz does not read the sign of a NaN."""
    return _agrees_with_operands(program, m, _positive_nans)


def subnormal_only(program, m):
    """Does the culprit statement alone agree once its subnormal operands are flushed to
    zero, as XLA's CPU code reads them? README: jitviz keeps subnormal numbers."""
    # a Python float operand is weak: float32 without x64, so 1e-45 is subnormal there
    python_float = np.float64 if program.x64 else np.float32
    return _agrees_with_operands(program, m, lambda v: _flushed_subnormals(v, python_float))


def bool_product_only(program, m):
    """Does the culprit statement alone agree once its boolean array operands are float32
    0/1 arrays? XLA rewrites a product with a converted boolean as a select, so x * False
    is 0 for x = inf (IEEE, JAX op by op and jitviz: NaN)."""
    return _agrees_with_operands(program, m, _bools_as_floats)


# XLA's algebraic simplifier rewrites a division by a constant or a broadcast operand,
# x / c, as x * (1 / c) (zero where 1 / c is subnormal: XLA's CPU code flushes it): not
# correctly rounded (jnp.array([10., 10.]) / 100 is 0.099999994, also op by op), where jitviz
# divides as NumPy does. The pass can only be switched off when XLA starts, so JAX runs the
# program again in a child process with it off; only programs that divide are tried.
NO_ALGSIMP_FLAGS = "--xla_disable_hlo_passes=algsimp"
_DIVIDES = re.compile(r" / |divide|percentile|quantile|median|mean|average|\bvar\b|\bstd\b")
_REPO = Path(__file__).resolve().parents[2]


def jax_agrees_without_algsimp(program, got: Outcome) -> bool:
    """Does JAX, with XLA's algebraic simplifier off, give jitviz's outcome `got`?"""
    if not got.ok or not _DIVIDES.search(program.source()):
        return False
    ref = _run_jax_in_child(program, NO_ALGSIMP_FLAGS)
    return ref is not None and ref.ok and compare(ref, got) is None


def _run_jax_in_child(program, xla_flags):
    """`_run(program, "jax")` in a fresh process with `xla_flags` added (None if it fails)."""
    env = dict(os.environ, XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {xla_flags}".strip(),
               PYTHONPATH=os.pathsep.join(filter(None, [str(_REPO), str(_REPO / "tests"),
                                                        os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="jaxdiff-") as d:
        inp, out = Path(d) / "program.pkl", Path(d) / "outcome.pkl"
        inp.write_bytes(pickle.dumps(program))
        try:
            # the child imports this module under this process's name for it, so that
            # the pickled classes are the same on both sides
            code = f"from {__package__} import runner; runner._child({str(inp)!r}, {str(out)!r})"
            proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=_REPO,
                                  capture_output=True, timeout=TIMEOUT_S + 60)
        except subprocess.TimeoutExpired:
            return None
        if proc.returncode != 0 or not out.exists():
            return None
        return pickle.loads(out.read_bytes())


DOT_OPS = {"jnp.dot", "jnp.matmul", "op.__matmul__", "method.dot", "jnp.inner", "jnp.vdot",
           "jnp.tensordot", "jnp.einsum", "lax.dot", "lax.dot_general"}


def unrounded_products_only(program, m):
    """Is a dot product's difference whether its products are rounded before they are
    added (an FMA adds one exactly)? The statement alone, computed by JAX from the same
    float32 operands in float64 (every product exact and finite) and rounded back, agrees
    with one side: with jitviz's where BLAS's FMAs add [inf, 1e30] . [inf, -1e30] to inf
    and XLA rounds 1e30 * -1e30 to -inf first (NaN), with JAX's where it is the other way
    round (both choose by shape)."""
    if m.op not in DOT_OPS:
        return False
    q = _culprit_alone(program, m)
    if q is None:
        return False
    got, ref = _run(q, m.backend), _run(q, "jax")
    wide = _run(q.replace(args=[(n, _as_float64(v)) for n, v in q.args], x64=True), "jax")
    if not (got.ok and ref.ok and wide.ok) or compare(ref, got) is None or \
            len(got.leaves) != len(wide.leaves):
        return False
    rounded = Outcome(leaves=[dataclasses.replace(w, value=np.asarray(w.value).astype(g.dtype),
                                                  dtype=g.dtype)
                              for w, g in zip(wide.leaves, got.leaves)])
    return compare(rounded, got) is None or compare(rounded, ref) is None or \
        within_dot_error_bound(q, ref, got)


def within_dot_error_bound(q, ref, got):
    """Do JAX's and jitviz's results of the dot (or cumulative sum) statement `q` differ by
    no more than the forward error bound of a float dot product or sum, 2 n u sum|a_i b_i|
    (any order of the additions, FMAs or not: with cancellation the results may differ far
    beyond a relative tolerance and both be right)? n is bounded by the smaller array
    operand's size, and sum|a_i b_i| is the statement computed by JAX on the operands'
    absolute values in float64. Where that exceeds the largest float, an infinite or NaN
    result on either side is one of the orders' results too."""
    arrays = [v for _, v in q.args if isinstance(v, np.ndarray)]
    if not arrays or any(v.dtype.kind == "c" for v in arrays):
        return False
    absolute = q.replace(args=[(n, np.abs(np.asarray(v, np.float64)) if isinstance(
        v, (np.ndarray, float)) else v) for n, v in q.args], x64=True)
    mag = _run(absolute, "jax")
    if not (mag.ok and len(mag.leaves) == len(ref.leaves) == len(got.leaves)):
        return False
    n = min(v.size for v in arrays)
    for m, r, g in zip(mag.leaves, ref.leaves, got.leaves):
        r, g = np.asarray(r.value), np.asarray(g.value)
        if r.dtype.kind != "f" or r.shape != g.shape:
            return False
        u, largest = np.finfo(r.dtype).eps / 2, np.finfo(r.dtype).max
        mag_value = np.asarray(m.value, np.float64)
        with np.errstate(all="ignore"):
            diff = np.abs(r.astype(np.float64) - g.astype(np.float64))
            # where sum|a_i b_i| exceeds the largest float, a product or a partial sum may
            # overflow in some order: +-inf or NaN (inf + -inf) is one of the sums (seed
            # 47000258: [-2, 6] . [-max, -max] is NaN with rounded products, inf with FMAs
            # in order, -inf exactly)
            may_overflow = (mag_value > largest) & ~(np.isfinite(r) & np.isfinite(g))
            ok = (np.isnan(r) & np.isnan(g)) | (r == g) | may_overflow | \
                (diff <= 2 * n * u * mag_value)
        if not ok.all():
            return False
    return True


def sum_order_only(program, m):
    """Is the difference the order of a float sum's additions? The statement alone, fed
    JAX's values of its operands, agrees with JAX once jitviz's interpreter adds each float
    sum in sequence (XLA's order for a short row) instead of NumPy's pairwise blocks: with
    cancellation, 1e30 + 0 + -1e30 + -144.71 is -144.71 in sequence and 0.0 pairwise."""
    q = _culprit_alone(program, m)
    if q is None:
        return False
    if m.backend != "interpret" and compare(_run(q, "interpret"), _run(q, m.backend)):
        return False  # the backend differs from the oracle itself: not this
    if m.op in CUMULATIVE_SUMS:
        # jitviz's cumulative sum adds in sequence (NumPy's cumsum); XLA's CPU code adds in
        # another order (seed 37009582: float32 cumsum of int32 values near 2**31 cancelling,
        # -262136 in sequence, -262144 by XLA): both within a sum's error bound
        return within_dot_error_bound(q, _run(q, "jax"), _run(q, m.backend))
    from jitviz.lax import reductions
    prim = reductions.reduce_sum_p
    pairwise = prim.impl
    prim.impl = _sequential_sum(pairwise)
    try:
        in_sequence = _run(q, "interpret")
    finally:
        prim.impl = pairwise
    ref = _run(q, "jax")
    return in_sequence.ok and ref.ok and compare(ref, in_sequence) is None


# lane counts a compiled float reduction may use: 4 to 16 values per vector, times LLVM's
# interleaving
LANE_COUNTS = (4, 8, 16, 32, 64)


def lane_order_only(program, m):
    """Is the difference the order of a compiled kernel's float sum or product? The CPU
    backend reduces a row in vector lanes (a partial result per lane, the lanes then combined
    by halving: lane j with lane j + L/2), where the interpreter (NumPy) and XLA, for a short
    row, go in sequence. The statement alone, fed JAX's values of its operands: the
    interpreter agrees with JAX in its own order, and with the backend once it reduces in L
    lanes for some L of LANE_COUNTS. Seed 62000374: a float32 product of 20 values, zeros
    among them and 2 and 3e38 in other lanes, is NaN in lanes (2 * 3e38 overflows, inf * 0)
    and 0.0 in sequence; seed 62000256: the mean of int32 [2**30, 1, -2**30, 0] as float32,
    0.25 in lanes ((x0 + x2) + (x1 + x3)) and 0.0 in sequence."""
    if m.backend == "interpret":
        return False
    q = _culprit_alone(program, m)
    if q is None:
        return False
    ref, own, got = _run(q, "jax"), _run(q, "interpret"), _run(q, m.backend)
    if not (ref.ok and own.ok and got.ok) or compare(ref, own) is not None:
        return False
    from jitviz.lax import reductions
    prims = (reductions.reduce_sum_p, reductions.reduce_prod_p)
    saved = [p.impl for p in prims]
    try:
        for lanes in LANE_COUNTS:
            for p, ufunc, plain in zip(prims, (np.add, np.multiply), saved):
                p.impl = _in_lanes(plain, ufunc, lanes)
            in_lanes = _run(q, "interpret")
            if in_lanes.ok and compare(got, in_lanes) is None:
                return True
    finally:
        for p, impl in zip(prims, saved):
            p.impl = impl
    return False


def _in_lanes(plain, ufunc, lanes):
    """A float reduction's impl that combines each row in `lanes` lanes: value i into lane
    i % lanes in sequence, then the lanes by halving."""
    def impl(x, *, axes, **params):
        out, rows = _reduced_rows(plain, x, axes, params)
        if rows is None:
            return out
        rows = rows.astype(out.dtype)
        start = -0.0 if ufunc is np.add else 1.0
        pad = np.full(rows.shape[:-1] + (-rows.shape[-1] % lanes,), start, out.dtype)
        cells = np.concatenate([rows, pad], -1)
        cells = cells.reshape(cells.shape[:-1] + (-1, lanes))
        with np.errstate(all="ignore"):
            acc = ufunc.accumulate(cells, axis=-2)[..., -1, :]  # each lane in sequence
            while acc.shape[-1] > 1:
                half = acc.shape[-1] // 2
                acc = ufunc(acc[..., :half], acc[..., half:])
        return acc[..., 0].reshape(out.shape).astype(out.dtype)
    return impl


_REVERSE_CUMULATIVE = re.compile(r"reverse=True")
CUMULATIVE_SUMS = ("jnp.cumsum", "method.cumsum", "lax.cumsum", "jnp.cumulative_sum",
                   "jnp.nancumsum")


def suffix_order_only(program, m):
    """Is the difference the order of a reverse cumulative sum's or product's operations?
    jitviz accumulates from the last element (one pass); XLA's CPU code computes each
    output as its own window, in array order. The statement alone, fed JAX's values of its
    operands, agrees with JAX once jitviz's interpreter does the same (seed 36008583:
    cumprod of [0, 3e38, -6] reversed is [NaN, -inf, -6] from the end, [-0, -inf, -6] by
    windows)."""
    if m.op not in ("lax.cumsum", "lax.cumprod") or \
            not _REVERSE_CUMULATIVE.search(m.stmt or ""):
        return False
    q = _culprit_alone(program, m)
    if q is None:
        return False
    from jitviz.lax import reductions
    prims = (reductions.cumsum_p, reductions.cumprod_p)
    saved = [p.impl for p in prims]
    for p, ufunc in zip(prims, (np.add, np.multiply)):
        p.impl = _windows_in_array_order(p.impl, ufunc)
    try:
        by_windows = _run(q, "interpret")
    finally:
        for p, impl in zip(prims, saved):
            p.impl = impl
    ref = _run(q, "jax")
    return by_windows.ok and ref.ok and compare(ref, by_windows) is None


def _windows_in_array_order(plain, ufunc):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if not reverse or x.dtype.kind not in "fc":
            return plain(x, axis=axis, reverse=reverse)
        rows = np.moveaxis(x, axis, -1)
        out = np.empty_like(rows)
        with np.errstate(all="ignore"):
            for i in range(rows.shape[-1]):  # out[i] = x[i] op x[i+1] op ... in order
                acc = rows[..., i].copy()
                for j in range(i + 1, rows.shape[-1]):
                    acc = ufunc(acc, rows[..., j]).astype(rows.dtype)
                out[..., i] = acc
        return np.moveaxis(out, -1, axis)
    return impl


def _reduced_rows(plain, x, axes, params):
    """(the plain impl's result, x's values as rows: its kept axes, then one axis of the
    values each result reduces), or (result, None) where an order cannot matter."""
    out = np.asarray(plain(x, axes=axes, **params))
    x = np.asarray(x)
    if x.dtype.kind not in "fc" or not axes or x.size == 0:
        return out, None
    rows = np.moveaxis(x, tuple(axes), tuple(range(-len(axes), 0)))
    return out, rows.reshape(rows.shape[:x.ndim - len(axes)] + (-1,))


def _sequential_sum(pairwise):
    def impl(x, *, axes, **params):
        out, rows = _reduced_rows(pairwise, x, axes, params)
        if rows is None:
            return out
        with np.errstate(all="ignore"):
            total = np.cumsum(rows, axis=-1, dtype=out.dtype)[..., -1]  # (in sequence)
        return total.reshape(out.shape).astype(out.dtype)
    return impl


def _as_float64(v):
    return v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v


def _bools_as_floats(v):
    if isinstance(v, bool):  # a weakly typed 0-d boolean: a Python float promotes alike
        return float(v)
    return v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.bool_ else v


def _agrees_with_operands(program, m, fix):
    """The culprit statement alone, its operands (JAX's values) passed through `fix`: does
    it then agree? False when `fix` changes nothing (something else differs)."""
    lines = [s.line() for s in program.stmts]
    if m.stmt not in lines:
        return False
    q = _materialize(program, lines.index(m.stmt))
    if q is None:
        return False
    args = [(n, fix(v)) for n, v in q.args]
    if all(a is b for (_, a), (_, b) in zip(args, q.args)):
        return False
    q = q.replace(args=args)
    ref = _run(q, "jax")
    if not ref.ok:
        return False
    rest = compare(ref, _run(q, m.backend))
    # what remains may be another known difference: the sign of a zero sum (seed 37001372:
    # an average of False * -inf is 0 under XLA, NaN in jitviz; with floats, -0 vs 0)
    return rest is None or (rest.kind == "zero-sign" and _sums(m))


def _sums(m) -> bool:
    from .known import SUMS
    return m.op in SUMS


def _fixed_floats(v, bad, fixed, python_float=np.float64):
    """`v` with the elements `bad` selects replaced by `fixed` of them; `v` itself when no
    element is bad (or it is not a float). A Python float is judged as `python_float`."""
    a = np.asarray(v, python_float) if type(v) is float else np.asarray(v)
    if a.dtype.kind != "f":
        return v
    with np.errstate(all="ignore"):
        mask = bad(a)
    if not mask.any():
        return v
    out = np.where(mask, fixed(a), a).astype(a.dtype)
    return out if isinstance(v, np.ndarray) else type(v)(out[()])


def _positive_nans(v):
    return _fixed_floats(v, lambda a: np.isnan(a) & np.signbit(a), np.abs)


def _flushed_subnormals(v, python_float=np.float64):
    return _fixed_floats(v, lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny),
                         lambda a: np.copysign(np.zeros_like(a), a), python_float)


def _raising_statement(program, backend):
    """For an exception in jitviz: the shortest prefix of the program that still raises."""
    lo, hi = 0, len(program.stmts) - 1
    # binary search on prefixes [0..k]: raises(k) is monotone for a trace-time error
    def raises(k):
        p = program.replace(stmts=program.stmts[:k + 1], returns_override=None)
        ref = _run(p, "jax")
        got = _run(p, backend)
        return ref.ok and not got.ok
    if not raises(hi):
        return hi, None, _avals_upto(program, hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if raises(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo, None, _avals_upto(program, lo)


def _avals_upto(program, k):
    names = tuple(o for s in program.stmts[:k] for o in s.outs)
    if not names:
        return {}
    ref = _run(program.replace(stmts=program.stmts[:k]), "jax", returns=names)
    if not ref.ok or len(ref.leaves) != len(names):
        return {}
    return dict(zip(names, ref.leaves))


# --- minimising -----------------------------------------------------------------------------

def still_fails(program, backend, kind, op, deadline):
    if time.perf_counter() > deadline:
        return False
    ref = _run(program, "jax")
    got = _run(program, backend)
    d = compare(ref, got)
    if d is None or d.kind != kind:
        return False
    return op is None or op in program.ops()


def minimize(program: G.Program, m: Mismatch, budget_s=60.0) -> G.Program:
    """Shrink `program` while `m.backend` still differs from JAX in the same way."""
    deadline = time.perf_counter() + budget_s
    kind, op, backend = m.kind, m.op, m.backend

    def fails(p):
        return still_fails(p, backend, kind, op, deadline)

    p = program
    # 1. cut after the culprit statement
    if m.stmt is not None:
        idx = [s.line() for s in p.stmts].index(m.stmt) if m.stmt in [s.line() for s in p.stmts] \
            else None
        if idx is not None and idx < len(p.stmts) - 1:
            q = p.replace(stmts=p.stmts[:idx + 1], returns_override=p.stmts[idx].outs)
            if fails(q):
                p = q
            elif fails(q.replace(returns_override=None)):
                p = q.replace(returns_override=None)
    # 1b. the culprit alone, its operands passed in as arguments (JAX's values)
    if p.stmts:
        q = _materialize(p, len(p.stmts) - 1)
        if q is not None and fails(q):
            p = q
    # 2. return only the culprit
    if p.stmts and p.returns_override is None:
        q = p.replace(returns_override=p.stmts[-1].outs)
        if fails(q):
            p = q
    # 3. drop statements (rewiring their uses to an earlier value of the same type)
    changed = True
    while changed and time.perf_counter() < deadline:
        changed = False
        for i in reversed(range(len(p.stmts) - 1)):
            for q in _drops(p, i):
                if fails(q):
                    p, changed = q, True
                    break
    # 4. drop unused arguments
    used = set(n for s in p.stmts for n in s.uses)
    q = p.replace(args=[(n, v) for n, v in p.args if n in used])
    if len(q.args) < len(p.args) and fails(q):
        p = q
    # 5. shrink array arguments: fewer elements along an axis, then simpler values
    for k in range(len(p.args)):
        changed = True
        while changed and time.perf_counter() < deadline:
            changed = False
            name, v = p.args[k]
            if not isinstance(v, np.ndarray):
                break
            for nv in _smaller_arrays(v):
                q = p.replace(args=p.args[:k] + [(name, nv)] + p.args[k + 1:])
                if fails(q):
                    p, changed = q, True
                    break
    for k in range(len(p.args)):
        name, v = p.args[k]
        if not isinstance(v, np.ndarray) or v.size == 0 or time.perf_counter() > deadline:
            continue
        for idx in np.ndindex(v.shape):
            if time.perf_counter() > deadline:
                break
            for simple in _simpler_values(v[idx], v.dtype):
                nv = v.copy()
                nv[idx] = simple
                q = p.replace(args=p.args[:k] + [(name, nv)] + p.args[k + 1:])
                if fails(q):
                    p = q
                    v = nv
                    break
    return p


def _drops(p, i):
    s = p.stmts[i]
    later = p.stmts[i + 1:]
    users = [t for t in later if set(t.uses) & set(s.outs)]
    rest = p.stmts[:i] + later
    if not users:
        yield p.replace(stmts=rest)
        return
    # rewire: each candidate replacement name (an argument or earlier output)
    cands = list(reversed([o for t in p.stmts[:i] for o in t.outs])) + [n for n, _ in p.args]
    cands = [c for c in cands if c in s.uses] + [c for c in cands if c not in s.uses]
    pat = re.compile(r"\b(" + "|".join(s.outs) + r")\b")
    for c in cands[:4]:
        new = [G.Stmt(t.outs, pat.sub(c, t.expr), t.op) for t in later]
        rov = None if p.returns_override is None else tuple(
            c if r in s.outs else r for r in p.returns_override)
        yield p.replace(stmts=p.stmts[:i] + new, returns_override=rov)


def _materialize(p, idx):
    """Statement idx alone, each value it reads passed in as an argument (JAX's value; a
    weakly typed 0-d value as a Python scalar). None where that cannot be done."""
    s = p.stmts[idx]
    arg_of = dict(p.args)
    need = [u for u in s.uses if u not in arg_of]
    vals = {}
    if need:
        ref = _run(p.replace(stmts=p.stmts[:idx], returns_override=None), "jax",
                   returns=tuple(need))
        if not ref.ok or len(ref.leaves) != len(need):
            return None
        vals = dict(zip(need, ref.leaves))
    args, weak = [], []
    for u in s.uses:
        if u in arg_of:
            args.append((u, arg_of[u]))
            continue
        leaf = vals[u]
        if leaf.value is None:
            return None
        if leaf.weak and leaf.shape == ():
            args.append((u, leaf.value[()].item()))
            continue
        args.append((u, np.array(leaf.value)))
        if leaf.weak:  # no argument is a weak array: the statement makes it one
            weak.append(u)
    if weak:
        pat = re.compile(r"\b(" + "|".join(weak) + r")\b")
        s = G.Stmt(s.outs, pat.sub(lambda k: f"_weak({k.group(1)})", s.expr), s.op)
    return p.replace(args=args, stmts=[s], returns_override=s.outs)


def _smaller_arrays(v):
    for ax, d in enumerate(v.shape):
        if d > 1:
            yield np.take(v, range(d // 2), axis=ax)
            yield np.take(v, range(d - 1), axis=ax)
            yield np.take(v, range(1, d), axis=ax)
            yield np.take(v, [0], axis=ax)


def _simpler_values(x, dtype):
    if dtype.kind == "b":
        return [False] if x else []
    if dtype.kind in "iu":
        return [c for c in (0, 1) if c != x]
    if isinstance(x, (float, np.floating)) and (math.isnan(x) or math.isinf(x)):
        return []
    return [c for c in (0.0, 1.0) if not (c == x and math.copysign(1, c) == math.copysign(1, x))]


def _outcome_text(o: Outcome):
    if not o.ok:
        return f"{o.error}: {o.message[:300]}"
    return "; ".join(_desc(x) for x in o.leaves)[:600]


def _child(program_file, outcome_file):
    """The child process of _run_jax_in_child: program.pkl -> outcome.pkl."""
    program = pickle.loads(Path(program_file).read_bytes())
    Path(outcome_file).write_bytes(pickle.dumps(_run(program, "jax")))
