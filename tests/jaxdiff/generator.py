"""A seeded generator of random `jnp`/`lax` programs, typed by JAX itself.

`generate(seed, x64)` returns a `Program`: a few arguments (NumPy arrays of float32, float64,
int32, int64 or bool, or Python scalars, with 0- and 1-size dimensions and special values) and
3-25 statements `v7 = jnp.cumsum(v3 * 2.5, axis=-1)`, one operation each, written as Python
source. `program.source()` is `def f(x0, x1): ...; return (v5, v7)`, executed with `jnp`/`lax`
bound to `jax.numpy`/`jax.lax` or to `jitviz.numpy`/`jitviz.lax`.

The statements are produced inside one `jax.eval_shape` trace of the program being built: each
candidate runs on JAX's tracers at once, so the generator knows every value's shape, dtype and
weak type (as `jax.jit` will see them) without a type system of its own. A candidate JAX rejects
is dropped, except in an "error program" (about 1 in 12), whose first rejected candidate is kept
as its last statement: JAX's exception class is then the expected outcome.

`CATALOG` maps each operation name ("jnp.cumsum", "lax.scan", "op.__matmul__", "getitem",
"method.sum", ...) to a weight and a maker; `public_functions()` lists every public function
of `jitviz.numpy` and `jitviz.lax`, and the test suite checks that each has an entry or a
named reason in `SKIPPED`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import re
import warnings

import numpy as np

MAX_ELEMENTS = 256       # a statement whose result is larger is dropped
MAX_RANK = 4
MAX_OUTPUTS = 8

_NAME = re.compile(r"\b([xv]\d+)\b")


# --- programs -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Stmt:
    outs: tuple            # names assigned: ("v3",) or ("v3", "v4")
    expr: str              # the right-hand side, Python source
    op: str                # the CATALOG entry that made it

    @property
    def uses(self):
        return tuple(dict.fromkeys(_NAME.findall(self.expr)))

    def line(self):
        return f"{', '.join(self.outs)} = {self.expr}"


@dataclasses.dataclass
class Program:
    seed: int
    x64: bool
    args: list                 # [(name, value)]: value a NumPy array or a Python scalar
    stmts: list                # [Stmt]
    jax_error: str | None = None   # JAX's exception class when generated as an error program
    returns_override: tuple | None = None

    # -- structure --
    @property
    def returns(self):
        if self.returns_override is not None:
            return tuple(self.returns_override)
        used = set()
        for s in self.stmts:
            used.update(s.uses)
        outs = [o for s in self.stmts for o in s.outs if o not in used]
        if not outs and self.stmts:
            outs = list(self.stmts[-1].outs)
        return tuple(outs[-MAX_OUTPUTS:])

    def all_vars(self):
        return tuple(o for s in self.stmts for o in s.outs)

    def ops(self):
        return [s.op for s in self.stmts]

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)

    # -- text --
    def source(self, returns=None):
        names = [n for n, _ in self.args]
        lines = [f"def f({', '.join(names)}):"]
        lines += [f"    {s.line()}" for s in self.stmts]
        rets = self.returns if returns is None else returns
        lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
        return "\n".join(lines) + "\n"

    def args_source(self):
        return "args = (" + "".join(f"{value_source(v)}, " for _, v in self.args).rstrip(", ") + \
            ("," if len(self.args) == 1 else "") + ")"

    def arg_values(self):
        """Fresh copies of the arguments (a run may not see another run's arrays)."""
        return [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for _, v in self.args]

    def reproducer(self, backend="cpu"):
        return (f"# jaxdiff seed={self.seed} x64={self.x64}\n"
                "import numpy as np\n"
                "import jax, jax.numpy as jnp, jax.lax as lax          # or, for jitviz:\n"
                "# import jitviz, jitviz.numpy as jnp, jitviz.lax as lax\n"
                f"jax.config.update('jax_enable_x64', {self.x64})      "
                f"# jitviz.config.update('enable_x64', {self.x64})\n"
                f"{self.source()}{self.args_source()}\n"
                f"print(jax.jit(f)(*args))   # jitviz.jit(f, backend={backend!r})(*args)\n")

    def to_json(self):
        return {"seed": self.seed, "x64": self.x64, "source": self.source(),
                "args": self.args_source(), "ops": self.ops(), "jax_error": self.jax_error}


# --- values ---------------------------------------------------------------------------------

def _float_text(v, dtype):
    v = float(v)
    if math.isnan(v):
        return "-np.nan" if math.copysign(1, v) < 0 else "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    if dtype == np.float32:
        s = str(np.float32(v))
        if np.float32(float(s)) == np.float32(v):
            return s
    return repr(v)


def value_source(v):
    if isinstance(v, (bool, np.bool_)) and not isinstance(v, np.ndarray):
        return repr(bool(v))
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "-float('nan')" if math.copysign(1, v) < 0 else "float('nan')"
        if math.isinf(v):
            return f"float({str(v)!r})"
        return repr(v)
    arr = np.asarray(v)
    dt = f"np.{arr.dtype.name}"
    if arr.size == 0:
        return f"np.zeros({arr.shape}, dtype={dt})"

    def lst(a):
        if a.ndim == 0:
            x = a[()]
            if arr.dtype.kind == "f":
                return _float_text(x, arr.dtype)
            if arr.dtype.kind == "b":
                return repr(bool(x))
            return repr(int(x))
        return "[" + ", ".join(lst(r) for r in a) + "]"
    return f"np.array({lst(arr)}, dtype={dt})"


_SPECIAL_F = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 0.5, -0.5, 1.0, -1.0, 3e38]
_LARGE_I32 = [2**31 - 1, -2**31, 2**30, -2**30, 65536, -65537]


def make_array(rng: random.Random, dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    special = 0.0 if rng.random() < 0.5 else rng.choice([0.1, 0.25, 0.5])
    flat = []
    for _ in range(n):
        if dt.kind == "b":
            flat.append(rng.random() < 0.5)
        elif dt.kind == "i":
            if rng.random() < special * 0.6:
                big = list(_LARGE_I32)
                if dt.itemsize == 8:
                    big += [2**62, -2**63, 2**40]
                flat.append(rng.choice(big))
            else:
                flat.append(rng.randint(-9, 9))
        else:
            if rng.random() < special:
                x = rng.choice(_SPECIAL_F)
                if x == 3e38 and dt.itemsize == 8:
                    x = 1e300
                flat.append(x)
            else:
                r = rng.random()
                if r < 0.35:
                    flat.append(float(rng.randint(-6, 6)))
                elif r < 0.55:
                    flat.append(rng.randint(-12, 12) / 4)
                elif r < 0.9:
                    flat.append(round(rng.gauss(0, 2.5), 3))
                else:
                    flat.append(round(rng.uniform(-300, 300), 2))
    return np.array(flat, dtype=dt).reshape(shape)


def make_python_scalar(rng: random.Random):
    r = rng.random()
    if r < 0.5:
        return rng.choice([0.5, 2.0, -1.5, 3.25, 0.1, 1e-3, 1e10, -0.0, 0.0, float("nan"),
                           float("inf"), 7.0, -2.75, 1.0 / 3.0])
    if r < 0.85:
        return rng.choice([0, 1, 2, 3, -1, -4, 7, 100, 2**31 - 1])
    return rng.choice([True, False])


# --- shapes ---------------------------------------------------------------------------------

def bcast(a, b):
    """NumPy's broadcast of two shapes, or None."""
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + tuple(a)),
                    reversed((1,) * (len(a) - len(b)) + tuple(b))):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def fits_into(small, big):
    """`small` broadcasts to exactly `big`."""
    return len(small) <= len(big) and bcast(small, big) == tuple(big)


@dataclasses.dataclass
class Var:
    name: str
    shape: tuple
    dtype: np.dtype
    weak: bool
    is_arg: bool = False
    py_scalar: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def kind(self):  # "f", "i", "b", "u", "c"
        return self.dtype.kind


# --- the generation context -----------------------------------------------------------------

class Gen:
    """What a maker sees: the random source, the values so far (with JAX's avals) and helpers
    that write operands, literals, axes and loop bodies as source text."""

    def __init__(self, rng: random.Random, x64: bool, vars_):
        self.rng = rng
        self.x64 = x64
        self.vars = list(vars_)

    # -- choosing values --
    def pick(self, pred=None, recent=True):
        cands = [v for v in self.vars if pred is None or pred(v)]
        if not cands:
            return None
        if recent and self.rng.random() < 0.7:
            # favour recent values: programs become chains rather than fans
            weights = [1.0 + 3.0 * i / max(1, len(cands)) for i in range(len(cands))]
            return self.rng.choices(cands, weights)[0]
        return self.rng.choice(cands)

    def pick_nd(self, lo=1, hi=MAX_RANK, kinds=None):
        return self.pick(lambda v: lo <= v.ndim <= hi and (kinds is None or v.kind in kinds))

    def chance(self, p):
        return self.rng.random() < p

    def choice(self, xs):
        return self.rng.choice(xs)

    # -- literals --
    def lit(self, kind=None):
        kind = kind or self.rng.choices("fib", [5, 4, 1])[0]
        r = self.rng
        if kind == "f":
            return r.choice(["0.5", "2.0", "-1.5", "3.0", "0.1", "1e-3", "1e10", "-0.0", "0.0",
                             "jnp.nan", "jnp.inf", "-jnp.inf", "1.5", "-2.25", "10.0", "0.3"])
        if kind == "i":
            return r.choice(["0", "1", "2", "3", "-1", "-3", "5", "7", "100", "-8"] +
                            (["2147483647", "-2147483648"] if r.random() < 0.1 else []))
        return r.choice(["True", "False"])

    def strong_scalar(self, kind=None):
        kind = kind or self.rng.choices("fib", [5, 4, 1])[0]
        if kind == "f":
            t = "np.float64" if self.x64 and self.chance(0.4) else "np.float32"
            return f"{t}({self.choice(['1.5', '-2.0', '0.25', '3.0', '0.1'])})"
        if kind == "i":
            t = "np.int64" if self.x64 and self.chance(0.4) else "np.int32"
            return f"{t}({self.choice(['2', '-3', '1', '0', '4'])})"
        return f"np.bool_({self.choice(['True', 'False'])})"

    def scalar(self, kind=None):
        return self.strong_scalar(kind) if self.chance(0.2) else self.lit(kind)

    def dtype(self, kinds="fib", allow64=None):
        allow64 = self.x64 if allow64 is None else allow64
        opts = []
        if "f" in kinds:
            opts += ["jnp.float32"] * 3 + (["jnp.float64"] * 2 if allow64 else [])
        if "i" in kinds:
            opts += ["jnp.int32"] * 3 + (["jnp.int64"] if allow64 else [])
        if "b" in kinds:
            opts += ["jnp.bool_"]
        if not self.x64 and self.chance(0.02) and ("f" in kinds):
            opts = ["jnp.float64"]  # 64-bit requested without x64 (JAX: float32 + a warning)
        return self.choice(opts)

    # -- operands --
    def partner(self, v: Var, kinds=None):
        """An operand for a binary operation with v: a broadcast-compatible value, v itself,
        a Python literal (weakly typed) or a NumPy scalar (strongly typed)."""
        r = self.rng.random()
        if r < 0.42:
            w = self.pick(lambda w: bcast(v.shape, w.shape) is not None
                          and _size(bcast(v.shape, w.shape)) <= MAX_ELEMENTS
                          and (kinds is None or w.kind in kinds))
            if w is not None:
                return w.name
        if r < 0.72:
            return self.lit(self.choice(kinds) if kinds else None)
        if r < 0.8:
            return self.strong_scalar(self.choice(kinds) if kinds else None)
        if r < 0.92:
            return v.name
        w = self.pick()
        return w.name if w is not None else v.name

    def axis(self, v: Var, none=True, tuple_=True, oob=0.03):
        """An `axis=` value as source: None, an int (negative too) or a tuple."""
        r = self.rng.random()
        if (none and r < 0.25) or v.ndim == 0:
            if v.ndim == 0 and self.chance(0.15):
                return self.choice(["0", "-1", "()"])
            return "None"
        if self.chance(oob):
            return self.choice([str(v.ndim), str(-v.ndim - 1)])
        if tuple_ and r > 0.8 and v.ndim >= 2:
            k = self.rng.randint(1, v.ndim)
            axes = self.rng.sample(range(v.ndim), k)
            axes = [a - v.ndim if self.chance(0.3) else a for a in axes]
            return "(" + ", ".join(map(str, axes)) + ("," if len(axes) == 1 else "") + ")"
        a = self.rng.randrange(v.ndim)
        return str(a - v.ndim if self.chance(0.35) else a)

    def int_axis(self, v: Var, oob=0.03):
        if v.ndim == 0:
            return self.choice(["0", "-1"])
        if self.chance(oob):
            return str(v.ndim)
        a = self.rng.randrange(v.ndim)
        return str(a - v.ndim if self.chance(0.35) else a)

    def shape_text(self, max_rank=3, like: Var | None = None):
        if like is not None and self.chance(0.5):
            return repr(tuple(like.shape))
        rank = self.rng.choices(range(max_rank + 1), [1, 3, 3, 1][:max_rank + 1])[0]
        dims = [self.rng.choices([0, 1, 2, 3, 4], [0.4, 2, 3, 3, 1.5])[0] for _ in range(rank)]
        if rank == 1 and self.chance(0.3):
            return str(dims[0])
        return repr(tuple(dims))

    def closure(self, shape):
        """A value from the enclosing scope that broadcasts into `shape` (for loop bodies)."""
        w = self.pick(lambda w: fits_into(w.shape, shape))
        return w.name if w is not None else None

    # -- bodies of cond / loops / scan --
    def body(self, x: str, aval: Var, extra=(), depth=None):
        """An expression of `x` (a value like `aval`) that keeps its shape and, mostly, its
        dtype; `extra` are further names usable elementwise (loop index, scanned slice)."""
        depth = depth or self.rng.randint(1, 3)
        e = x
        for _ in range(depth):
            e = self._body_step(e, aval, extra)
        return e

    def _body_step(self, e, aval, extra):
        k = aval.kind
        cl = self.closure(aval.shape) if self.chance(0.35) else None
        if extra and self.chance(0.35):
            t = self.choice(list(extra))
            return self.choice([f"({e}) + {t}", f"({e}) * {t}", f"jnp.maximum({e}, {t})",
                                f"jnp.where({t} > 0, {e}, -({e}))"]) if k != "b" else \
                f"jnp.logical_xor({e}, {t} > 0)"
        if cl is not None:
            return self.choice([f"({e}) + {cl}", f"({e}) * {cl}", f"jnp.minimum({e}, {cl})",
                                f"jnp.where({cl} > 0, {e}, {cl})"]) if k != "b" else \
                f"({e}) | ({cl} > 0)"
        if k == "f":
            opts = [f"({e}) * 0.5", f"({e}) + 1.0", f"jnp.sin({e})", f"jnp.tanh({e})",
                    f"-({e})", f"jnp.abs({e})", f"({e}) * ({e})", f"jnp.maximum({e}, 0.25)",
                    f"jnp.where(({e}) > 0, {e}, 0.5 * ({e}))", f"jnp.floor({e})",
                    f"jnp.exp(-jnp.abs({e}))", f"({e}) / 3", f"jnp.sqrt(jnp.abs({e}))",
                    f"({e}) - jnp.mean({e})"]
        elif k in "iu":
            opts = [f"({e}) + 1", f"({e}) * 2", f"({e}) // 2", f"({e}) % 3", f"-({e})",
                    f"jnp.abs({e})", f"jnp.maximum({e}, -2)", f"({e}) - jnp.sum({e})"]
        else:
            opts = [f"~({e})", f"({e}) ^ True", f"jnp.logical_not({e})"]
        if aval.ndim >= 1:
            opts += [f"({e})[::-1]", f"lax.rev({e}, (0,))"]
            if k != "b":
                opts.append(f"jnp.cumsum({e}, axis=0)")
        if k != "b" and self.chance(0.1):
            opts.append(f"({e}) + 1.5")  # changes an int carry's type: JAX rejects it
        return self.choice(opts)


def _size(shape):
    return int(np.prod(shape)) if shape else 1


# --- the catalog ----------------------------------------------------------------------------
# Each maker takes a Gen and returns (expr, n_outputs) or just expr, or None (cannot apply).

CATALOG: dict = {}


def op(name, weight=1.0):
    def deco(fn):
        CATALOG[name] = (weight, fn)
        return fn
    return deco


def _unary_jnp(name, kinds=None):
    def make(g):
        v = g.pick(lambda v: kinds is None or v.kind in kinds) if not g.chance(0.1) else g.pick()
        if v is None:
            return None
        arg = v.name if not g.chance(0.05) else g.scalar()  # a bare Python scalar sometimes
        return f"jnp.{name}({arg})"
    return make


UNARY_JNP = {  # name: preferred operand kinds (others still occur, for dtype rules and errors)
    "abs": None, "absolute": None, "acos": "f", "acosh": "f", "arccos": "f", "arccosh": "f",
    "arcsin": "f", "arcsinh": "f", "arctan": "f", "arctanh": "f", "asin": "f", "asinh": "f",
    "atan": "f", "atanh": "f", "bitwise_not": "ib", "invert": "ib", "cbrt": "fi",
    "ceil": None, "conj": None, "conjugate": None, "cos": "f", "cosh": "f", "deg2rad": "fi",
    "degrees": "f", "exp": "f", "exp2": "fi", "expm1": "f", "floor": None, "imag": None,
    "real": None, "isfinite": None, "isinf": None, "isnan": None, "isneginf": None,
    "isposinf": None, "log": "f", "log1p": "f", "log2": "fi", "log10": "f",
    "logical_not": None, "negative": "fi", "positive": "fi", "rad2deg": "f", "radians": "fi",
    "reciprocal": "f", "rint": None, "sign": None, "signbit": None, "sin": "f", "sinc": "f",
    "sinh": "f", "sqrt": "f", "square": None, "tan": "f", "tanh": "f", "trunc": None,
}
for _n, _k in UNARY_JNP.items():
    op(f"jnp.{_n}", 1.0)(_unary_jnp(_n, _k))


def _binary_jnp(name, kinds=None, nout=1):
    def make(g):
        v = g.pick(lambda v: kinds is None or v.kind in kinds) if not g.chance(0.1) else g.pick()
        if v is None:
            return None
        other = g.partner(v, kinds=list(kinds) if kinds and g.chance(0.7) else None)
        a, b = (v.name, other) if g.chance(0.75) else (other, v.name)
        expr = f"jnp.{name}({a}, {b})"
        return (expr, nout) if nout > 1 else expr
    return make


BINARY_JNP = {
    "add": None, "arctan2": "f", "atan2": "f", "bitwise_and": "ib", "bitwise_or": "ib",
    "bitwise_xor": "ib", "copysign": "f", "divide": None, "equal": None, "float_power": "fi",
    "floor_divide": "fi", "fmax": "f", "fmin": "f", "fmod": "fi", "greater": None,
    "greater_equal": None, "heaviside": "fi", "hypot": "f", "left_shift": "i", "less": None,
    "less_equal": None, "logaddexp": "f", "logical_and": None, "logical_or": None,
    "logical_xor": None, "maximum": None, "minimum": None, "mod": "fi", "multiply": None,
    "nextafter": "f", "not_equal": None, "pow": "fi", "power": "fi", "remainder": "fi",
    "right_shift": "i", "subtract": None, "true_divide": None,
}
for _n, _k in BINARY_JNP.items():
    op(f"jnp.{_n}", 1.2)(_binary_jnp(_n, _k))
op("jnp.divmod", 1.2)(_binary_jnp("divmod", "fi", nout=2))

_OPERATORS = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/",
              "__floordiv__": "//", "__mod__": "%", "__pow__": "**", "__and__": "&",
              "__or__": "|", "__xor__": "^", "__lshift__": "<<", "__rshift__": ">>",
              "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__eq__": "==",
              "__ne__": "!="}
_OP_KINDS = {"&": "ib", "|": "ib", "^": "ib", "<<": "i", ">>": "i"}


def _operator(sym):
    def make(g):
        kinds = _OP_KINDS.get(sym)
        v = g.pick(lambda v: kinds is None or v.kind in kinds) if not g.chance(0.1) else g.pick()
        if v is None:
            return None
        other = g.partner(v, kinds=list(kinds) if kinds else None)
        if sym == "**" and g.chance(0.5):
            other = g.choice(["2", "3", "0", "-1", "0.5", "2.0", "-2"])
        a, b = (v.name, other) if g.chance(0.7) else (other, v.name)
        return f"{a} {sym} {b}"
    return make


for _n, _s in _OPERATORS.items():
    op(f"op.{_n}", 1.5)(_operator(_s))


@op("op.__neg__", 1.0)
def _neg(g):
    v = g.pick()
    return f"-{v.name}"


@op("op.__invert__", 1.0)
def _inv(g):
    v = g.pick(lambda v: v.kind in "ib") or g.pick()
    return f"~{v.name}"


@op("op.__pos__", 0.3)
def _pos(g):
    return f"+{g.pick().name}"


@op("op.__abs__", 0.5)
def _absb(g):
    return f"abs({g.pick().name})"


@op("op.__matmul__", 2.0)
def _matmul_op(g):
    a, b = _matmul_pair(g)
    return None if a is None else f"{a} @ {b}"


def _matmul_pair(g):
    v = g.pick_nd(1, 3)
    if v is None:
        return None, None
    r = g.rng.random()
    if v.ndim >= 2 and r < 0.35:
        return v.name, f"{v.name}.mT" if v.ndim > 2 else f"{v.name}.T"
    if r < 0.5 and v.ndim >= 2:
        return f"{v.name}.T" if v.ndim == 2 else f"{v.name}.mT", v.name
    need = v.shape[-1]
    w = g.pick(lambda w: w.ndim >= 1 and (w.shape[0] if w.ndim <= 2 else w.shape[-2]) == need)
    if w is not None and r < 0.9:
        return v.name, w.name
    w = g.pick_nd(1, 3)
    return v.name, w.name


# reductions ------------------------------------------------------------------------------

def _reduction(name, dtype_arg=False, keepdims=True, ddof=False, initial=False, where=False,
               method=False, int_axis=False):
    def make(g):
        v = g.pick()
        if v is None:
            return None
        kw = []
        ax = g.int_axis(v) if int_axis and v.ndim and g.chance(0.75) else \
            ("None" if int_axis else g.axis(v))
        if ax != "None" or g.chance(0.3):
            kw.append(f"axis={ax}")
        if keepdims and g.chance(0.35):
            kw.append("keepdims=True")
        if dtype_arg and g.chance(0.2):
            kw.append(f"dtype={g.dtype('fi')}")
        if ddof and g.chance(0.3):
            kw.append(f"ddof={g.choice(['1', '0', '2'])}")
        if initial and g.chance(0.12):
            kw.append(f"initial={g.lit(v.kind if v.kind in 'fi' else 'i')}")
        if where and g.chance(0.1):
            m = g.pick(lambda w: w.kind == "b" and fits_into(w.shape, v.shape))
            if m is not None:
                kw.append(f"where={m.name}")
        if method:
            return f"{v.name}.{name}({', '.join(kw)})"
        return f"jnp.{name}({', '.join([v.name] + kw)})"
    return make


REDUCTIONS = {
    "sum": dict(dtype_arg=True, initial=True, where=True),
    "prod": dict(dtype_arg=True, initial=True, where=True),
    "mean": dict(dtype_arg=True, where=True),
    "max": dict(initial=True, where=True), "min": dict(initial=True, where=True),
    "amax": dict(initial=True), "amin": dict(initial=True),
    "all": dict(where=True), "any": dict(where=True),
    "std": dict(ddof=True, dtype_arg=True), "var": dict(ddof=True, dtype_arg=True),
    "ptp": dict(), "count_nonzero": dict(),
    "argmax": dict(int_axis=True), "argmin": dict(int_axis=True),
    "cumsum": dict(int_axis=True, keepdims=False, dtype_arg=True),
    "cumprod": dict(int_axis=True, keepdims=False, dtype_arg=True),
}
for _n, _kw in REDUCTIONS.items():
    op(f"jnp.{_n}", 2.0)(_reduction(_n, **_kw))
for _n in ("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin", "std", "var",
           "cumsum", "cumprod"):
    _kw = dict(REDUCTIONS[_n])
    _kw.pop("initial", None)
    _kw.pop("where", None)
    op(f"method.{_n}", 0.6)(_reduction(_n, method=True, **_kw))


@op("jnp.average", 1.0)
def _average(g):
    v = g.pick_nd(0, 3)
    if v is None:
        return None
    if g.chance(0.5) or v.ndim == 0:
        return f"jnp.average({v.name}, axis={g.axis(v, tuple_=False)})"
    ax = g.int_axis(v)
    w = g.pick(lambda w: w.shape == v.shape or (w.ndim == 1 and w.shape[0] ==
                                                v.shape[int(ax) % v.ndim]))
    if w is None:
        return f"jnp.average({v.name}, axis={ax})"
    return f"jnp.average({v.name}, axis={ax}, weights={w.name})"


# shape -----------------------------------------------------------------------------------

def _perm(g, n):
    p = list(range(n))
    g.rng.shuffle(p)
    return p


def _reshape_target(g, v):
    n = v.size
    opts = [(n,), (-1,), (1, n), (n, 1)]
    for d in range(2, n + 1):
        if n % d == 0:
            opts += [(d, n // d), (d, -1), (n // d, 1, d)]
    if n == 0:
        opts += [(0, 3), (2, 0, 2), (0,)]
    if n == 1:
        opts += [(), (1, 1, 1)]
    if g.chance(0.04):
        opts = [(n + 1,), (-1, -1)]  # an impossible size: TypeError in JAX
    return g.choice(opts)


@op("jnp.reshape", 1.5)
def _reshape(g):
    v = g.pick()
    return f"jnp.reshape({v.name}, {_reshape_target(g, v)!r})"


@op("method.reshape", 1.0)
def _mreshape(g):
    v = g.pick()
    t = _reshape_target(g, v)
    if len(t) >= 1 and g.chance(0.4):
        return f"{v.name}.reshape({', '.join(map(str, t))})"
    return f"{v.name}.reshape({t!r})"


@op("jnp.transpose", 1.0)
def _transpose(g):
    v = g.pick()
    if g.chance(0.4) or v.ndim < 2:
        return f"jnp.transpose({v.name})"
    return f"jnp.transpose({v.name}, {tuple(_perm(g, v.ndim))!r})"


@op("method.transpose", 0.5)
def _mtranspose(g):
    v = g.pick_nd(2) or g.pick()
    if v.ndim < 2 or g.chance(0.3):
        return f"{v.name}.transpose()"
    return f"{v.name}.transpose({', '.join(map(str, _perm(g, v.ndim)))})"


@op("jnp.permute_dims", 0.5)
def _permute_dims(g):
    v = g.pick()
    return f"jnp.permute_dims({v.name}, {tuple(_perm(g, v.ndim))!r})"


@op("method.T", 0.7)
def _T(g):
    return f"{g.pick().name}.T"


@op("method.mT", 0.4)
def _mT(g):
    v = g.pick_nd(2) or g.pick()
    return f"{v.name}.mT"


@op("jnp.swapaxes", 0.8)
def _swapaxes(g):
    v = g.pick_nd(1) or g.pick()
    return f"jnp.swapaxes({v.name}, {g.int_axis(v)}, {g.int_axis(v)})"


@op("method.swapaxes", 0.4)
def _mswapaxes(g):
    v = g.pick_nd(1) or g.pick()
    return f"{v.name}.swapaxes({g.int_axis(v)}, {g.int_axis(v)})"


@op("jnp.moveaxis", 0.8)
def _moveaxis(g):
    v = g.pick_nd(1) or g.pick()
    return f"jnp.moveaxis({v.name}, {g.int_axis(v)}, {g.int_axis(v)})"


@op("jnp.expand_dims", 1.0)
def _expand_dims(g):
    v = g.pick(lambda v: v.ndim < MAX_RANK)
    if v is None:
        return None
    if g.chance(0.2):
        return f"jnp.expand_dims({v.name}, (0, {-1 if g.chance(0.5) else v.ndim + 1}))"
    hi = v.ndim + (1 if g.chance(0.05) else 0)  # one past the end, sometimes: an error
    return f"jnp.expand_dims({v.name}, {g.rng.randint(-v.ndim - 1, hi)})"


def _squeeze_axis(g, v):
    ones = [i for i, d in enumerate(v.shape) if d == 1]
    if ones and g.chance(0.7):
        a = g.choice(ones)
        return str(a - v.ndim if g.chance(0.3) else a)
    if g.chance(0.5):
        return "None"
    return str(g.rng.randrange(max(1, v.ndim)))  # not a 1-size axis: an error in JAX


@op("jnp.squeeze", 1.0)
def _squeeze(g):
    v = g.pick(lambda v: 1 in v.shape) or g.pick()
    ax = _squeeze_axis(g, v)
    return f"jnp.squeeze({v.name})" if ax == "None" else f"jnp.squeeze({v.name}, {ax})"


@op("method.squeeze", 0.4)
def _msqueeze(g):
    v = g.pick(lambda v: 1 in v.shape) or g.pick()
    ax = _squeeze_axis(g, v)
    return f"{v.name}.squeeze()" if ax == "None" else f"{v.name}.squeeze({ax})"


@op("jnp.ravel", 0.8)
def _ravel(g):
    return f"jnp.ravel({g.pick().name})"


@op("method.ravel", 0.3)
def _mravel(g):
    return f"{g.pick().name}.ravel()"


@op("method.flatten", 0.3)
def _mflatten(g):
    return f"{g.pick().name}.flatten()"


@op("jnp.flip", 0.8)
def _flip(g):
    v = g.pick()
    ax = g.axis(v, tuple_=True)
    return f"jnp.flip({v.name})" if ax == "None" else f"jnp.flip({v.name}, {ax})"


@op("jnp.fliplr", 0.4)
def _fliplr(g):
    return f"jnp.fliplr({(g.pick_nd(2) or g.pick()).name})"


@op("jnp.flipud", 0.4)
def _flipud(g):
    return f"jnp.flipud({(g.pick_nd(1) or g.pick()).name})"


@op("jnp.broadcast_to", 1.0)
def _broadcast_to(g):
    v = g.pick(lambda v: v.ndim < MAX_RANK)
    shape = list(v.shape)
    shape = [g.choice([d, 2, 3]) if d == 1 else d for d in shape]
    if g.chance(0.6):
        shape = [g.choice([1, 2, 3, 0])] + shape
    if g.chance(0.05):
        shape = shape[1:]  # fewer dimensions: an error
    return f"jnp.broadcast_to({v.name}, {tuple(shape)!r})"


@op("jnp.broadcast_arrays", 0.6)
def _broadcast_arrays(g):
    v = g.pick()
    w = g.partner(v)
    return f"jnp.broadcast_arrays({v.name}, {w})", 2


def _joinable(g, n_min=1, same_ndim=True):
    v = g.pick()
    k = g.rng.randint(n_min, 3)
    ws = [v.name]
    for _ in range(k):
        w = g.pick(lambda w: (w.ndim == v.ndim if same_ndim else True))
        ws.append(w.name if w is not None and g.chance(0.6) else v.name)
    return v, ws


@op("jnp.concatenate", 1.0)
def _concatenate(g):
    v, ws = _joinable(g)
    ax = g.int_axis(v) if v.ndim else "0"
    if g.chance(0.1):
        ax = "None"
    return f"jnp.concatenate([{', '.join(ws)}], axis={ax})"


@op("jnp.concat", 0.5)
def _concat(g):
    v, ws = _joinable(g)
    return f"jnp.concat([{', '.join(ws)}], axis={g.int_axis(v) if v.ndim else '0'})"


@op("jnp.stack", 1.0)
def _stack(g):
    v, ws = _joinable(g, n_min=0)
    ax = g.rng.randint(-v.ndim - 1, v.ndim)
    return f"jnp.stack([{', '.join(ws)}], axis={ax})"


@op("jnp.hstack", 0.5)
def _hstack(g):
    v, ws = _joinable(g, same_ndim=False)
    return f"jnp.hstack([{', '.join(ws)}])"


@op("jnp.vstack", 0.5)
def _vstack(g):
    v, ws = _joinable(g, same_ndim=False)
    return f"jnp.vstack([{', '.join(ws)}])"


@op("jnp.column_stack", 0.5)
def _column_stack(g):
    v, ws = _joinable(g, same_ndim=False)
    return f"jnp.column_stack([{', '.join(ws)}])"


@op("jnp.tile", 0.7)
def _tile(g):
    v = g.pick(lambda v: v.size <= 40)
    if v is None:
        return None
    reps = g.choice(["2", "(2, 1)", "(1, 2)", "0", "(3,)", "(1, 1, 2)", "1"])
    return f"jnp.tile({v.name}, {reps})"


@op("jnp.repeat", 0.7)
def _repeat(g):
    v = g.pick(lambda v: v.size <= 40)
    if v is None:
        return None
    if g.chance(0.3):
        return f"jnp.repeat({v.name}, {g.choice(['2', '0', '3'])})"
    ax = g.int_axis(v)
    reps = g.choice(["2", "1", "0"])
    if v.ndim and g.chance(0.3):
        n = v.shape[int(ax) % v.ndim] if ax.lstrip("-").isdigit() and v.ndim else 1
        reps = repr([g.rng.randint(0, 2) for _ in range(n)])
    return f"jnp.repeat({v.name}, {reps}, axis={ax})"


@op("jnp.atleast_1d", 0.4)
def _atleast_1d(g):
    return f"jnp.atleast_1d({g.pick().name})"


@op("jnp.atleast_2d", 0.4)
def _atleast_2d(g):
    return f"jnp.atleast_2d({g.pick().name})"


@op("jnp.ndim", 0.4)
def _ndim(g):
    v = g.pick()
    w = g.pick()
    return g.choice([f"{w.name} * jnp.ndim({v.name})", f"jnp.asarray(jnp.ndim({v.name}))"])


@op("jnp.shape", 0.4)
def _shape(g):
    v = g.pick()
    return g.choice([f"jnp.zeros(jnp.shape({v.name}))",
                     f"jnp.ones_like({v.name}, shape=jnp.shape({v.name})[::-1])",
                     f"jnp.asarray(jnp.shape({v.name}))"])


@op("jnp.size", 0.4)
def _size_op(g):
    v = g.pick()
    if v.ndim and g.chance(0.3):
        return f"{v.name} + jnp.size({v.name}, {g.int_axis(v)})"
    return g.choice([f"jnp.asarray(jnp.size({v.name}))", f"{v.name} / jnp.size({v.name})"])


# indexing --------------------------------------------------------------------------------

def _index_entry(g, d, traced_ints, array_ok=True):
    r = g.rng.random()
    if r < 0.3:  # an int
        if g.chance(0.05) or d == 0:
            return str(g.choice([d, -d - 1, d + 3]))  # out of bounds (static)
        return str(g.rng.randint(-d, d - 1))
    if r < 0.62:  # a slice
        def bound():
            return "" if g.chance(0.4) else str(g.rng.randint(-d - 2, d + 2))
        step = "" if g.chance(0.6) else ":" + str(g.choice([1, 2, -1, -2, 3]))
        return f"{bound()}:{bound()}{step}"
    if r < 0.7:
        return "None"
    if r < 0.84 and array_ok:  # an integer array (out-of-bounds values are clamped by JAX)
        k = g.rng.randint(0, 4)
        vals = [g.rng.randint(-d - 2, d + 2) if d else g.rng.randint(-1, 1) for _ in range(k)]
        wrap = g.choice(["jnp.array", "np.array"])
        if g.chance(0.2) and k >= 2:
            return f"{wrap}({[vals[:k // 2 * 0 + 1], vals[1:2]]!r})"
        return f"{wrap}({vals!r}, dtype=np.int32)" if k == 0 else f"{wrap}({vals!r})"
    if r < 0.93 and traced_ints:
        return g.choice(traced_ints)
    if r < 0.96 and d:  # a concrete boolean mask
        return f"np.array({[g.chance(0.5) for _ in range(d)]!r})"
    return ":"


@op("getitem", 22.0)
def _getitem(g):
    v = g.pick(lambda v: v.ndim >= 1) if not g.chance(0.08) else g.pick()
    if v is None:
        return None
    traced = [w.name for w in g.vars if w.kind in "iu" and w.size <= 6 and w.ndim <= 2
              and w.name != v.name]
    if g.chance(0.04):  # traced boolean mask: not allowed under jit
        m = g.pick(lambda w: w.kind == "b")
        if m is not None:
            return f"{v.name}[{m.name}]"
    if g.chance(0.04):
        f = g.pick(lambda w: w.kind == "f")
        if f is not None:
            return f"{v.name}[{f.name}]"  # a float index: TypeError / IndexError
    parts = []
    dims = list(v.shape)
    n = g.rng.randint(1, max(1, len(dims))) if dims else 1
    ell = g.chance(0.15)
    if ell:
        parts.append("...")
        dims = dims[len(dims) - n:] if dims else []
    for i in range(n):
        d = dims[i] if i < len(dims) else 1
        parts.append(_index_entry(g, d, traced))
    if ell and g.chance(0.5):
        parts = parts[1:] + ["..."]
    if len(parts) == 1 and g.chance(0.5):
        return f"{v.name}[{parts[0]}]"
    return f"{v.name}[{', '.join(parts)}]"


@op("jnp.take", 2.0)
def _take(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    ax = g.int_axis(v) if v.ndim and g.chance(0.7) else "None"
    d = v.size if ax == "None" else (v.shape[int(ax) % v.ndim] if v.ndim else 1)
    idx = g.pick(lambda w: w.kind in "iu" and w.size <= 8 and w.ndim <= 2)
    if idx is None or g.chance(0.5):
        vals = [g.rng.randint(-d - 2, d + 2) for _ in range(g.rng.randint(0, 4))]
        idx_s = f"jnp.array({vals!r}, dtype=jnp.int32)" if g.chance(0.7) else \
            str(g.rng.randint(-d - 1, d + 1))
    else:
        idx_s = idx.name
    mode = ""
    if g.chance(0.3):
        mode = f", mode={g.choice(['clip', 'wrap', 'fill'])!r}"
    return f"jnp.take({v.name}, {idx_s}, axis={ax}{mode})"


@op("method.take", 0.4)
def _mtake(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    ax = g.int_axis(v) if v.ndim else "None"
    return f"{v.name}.take(jnp.array({[g.rng.randint(-3, 3) for _ in range(2)]}), axis={ax})"


@op("jnp.where", 2.0)
def _where(g):
    if g.chance(0.05):
        return f"jnp.where({g.pick().name})"  # one argument: nonzero, fails under jit
    c = g.pick(lambda w: w.kind == "b")
    v = g.pick()
    cond = c.name if c is not None and g.chance(0.6) else f"{v.name} > {g.lit('i')}"
    return f"jnp.where({cond}, {g.partner(v)}, {g.partner(v)})"


@op("jnp.nonzero", 0.5)
def _nonzero(g):
    v = g.pick(lambda v: v.ndim == 1) or g.pick()
    if g.chance(0.3):
        return f"jnp.nonzero({v.name})[0]"  # no size: fails under jit
    fill = f", fill_value={g.lit('i')}" if g.chance(0.4) else ""
    return f"jnp.nonzero({v.name}, size={g.rng.randint(0, 5)}{fill})[0]"


@op("method.nonzero", 0.2)
def _mnonzero(g):
    return f"{g.pick().name}.nonzero()[0]"


@op("jnp.argwhere", 0.4)
def _argwhere(g):
    v = g.pick()
    if g.chance(0.4):
        return f"jnp.argwhere({v.name}, size={g.rng.randint(0, 4)})"
    return f"jnp.argwhere({v.name})"


# linear algebra --------------------------------------------------------------------------

@op("jnp.dot", 2.0)
def _dot(g):
    a, b = _matmul_pair(g)
    if a is None:
        return None
    if g.chance(0.1):
        w = g.pick_nd(0, 0)
        if w is not None:
            b = w.name
    return f"jnp.dot({a}, {b})"


@op("method.dot", 0.5)
def _mdot(g):
    a, b = _matmul_pair(g)
    return None if a is None else f"({a}).dot({b})"


@op("jnp.matmul", 2.0)
def _matmul(g):
    a, b = _matmul_pair(g)
    return None if a is None else f"jnp.matmul({a}, {b})"


@op("jnp.inner", 0.8)
def _inner(g):
    v = g.pick_nd(1, 2)
    if v is None:
        return None
    w = g.pick(lambda w: w.ndim >= 1 and w.shape[-1] == v.shape[-1]) or v
    return f"jnp.inner({v.name}, {w.name})"


@op("jnp.outer", 0.8)
def _outer(g):
    v = g.pick(lambda v: v.size <= 16)
    w = g.pick(lambda v: v.size <= 16)
    if v is None or w is None:
        return None
    return f"jnp.outer({v.name}, {w.name})"


@op("jnp.vdot", 0.6)
def _vdot(g):
    v = g.pick()
    w = g.pick(lambda w: w.size == v.size) or v
    return f"jnp.vdot({v.name}, {w.name})"


@op("jnp.tensordot", 0.8)
def _tensordot(g):
    v = g.pick_nd(1, 3)
    if v is None:
        return None
    w = g.pick(lambda w: w.ndim >= 1 and w.shape[0] == v.shape[-1])
    if w is not None and g.chance(0.6):
        return f"jnp.tensordot({v.name}, {w.name}, axes=1)"
    if g.chance(0.5):
        return f"jnp.tensordot({v.name}, {v.name}, axes={v.ndim})"
    u = g.pick(lambda w: w.size <= 12)
    return f"jnp.tensordot({v.name}, {u.name}, axes=0)" if v.size <= 12 and u else None


@op("jnp.trace", 0.6)
def _trace(g):
    v = g.pick_nd(2) or g.pick()
    off = g.choice(["0", "1", "-1", "5"])
    extra = ""
    if v.ndim >= 3 and g.chance(0.5):
        extra = f", axis1={g.int_axis(v)}, axis2={g.int_axis(v)}"
    return f"jnp.trace({v.name}, offset={off}{extra})"


# creation --------------------------------------------------------------------------------

@op("jnp.arange", 0.8)
def _arange(g):
    r = g.rng.random()
    dt = f", dtype={g.dtype('fi')}" if g.chance(0.3) else ""
    if r < 0.05:
        v = g.pick(lambda v: v.ndim == 0 and v.kind in "i")
        if v is not None:
            return f"jnp.arange({v.name})"  # a traced bound: concretization error
    if r < 0.4:
        return f"jnp.arange({g.rng.randint(0, 6)}{dt})"
    if r < 0.75:
        a, b = g.rng.randint(-4, 3), g.rng.randint(-2, 6)
        return f"jnp.arange({a}, {b}, {g.choice([1, 2, -1, 3])}{dt})"
    return f"jnp.arange({g.choice(['0.5', '-1.0', '0.0'])}, {g.choice(['2.0', '3.5', '1'])}, " \
           f"{g.choice(['0.5', '1.0', '0.75'])}{dt})"


@op("jnp.linspace", 0.7)
def _linspace(g):
    a = g.choice(["0.0", "-1.0", "2", "0"])
    b = g.choice(["1.0", "5", "-3.0", "10.0"])
    s = g.pick(lambda v: v.ndim == 0 and v.kind in "fi")
    if s is not None and g.chance(0.3):
        a = s.name
    extra = ""
    if g.chance(0.3):
        extra += ", endpoint=False"
    if g.chance(0.3):
        extra += f", dtype={g.dtype('fi')}"
    return f"jnp.linspace({a}, {b}, {g.choice([0, 1, 2, 5])}{extra})"


def _creation(name):
    def make(g):
        shape = g.shape_text(like=g.pick())
        dt = f", dtype={g.dtype()}" if g.chance(0.5) else ""
        return f"jnp.{name}({shape}{dt})"
    return make


for _n in ("zeros", "ones", "empty"):
    op(f"jnp.{_n}", 0.5)(_creation(_n))


@op("jnp.full", 0.7)
def _full(g):
    v = g.pick()
    fill = g.scalar() if g.chance(0.6) else (g.pick(lambda w: w.ndim == 0) or v).name
    dt = f", dtype={g.dtype()}" if g.chance(0.4) else ""
    return f"jnp.full({g.shape_text(like=v)}, {fill}{dt})"


def _like(name):
    def make(g):
        v = g.pick()
        extra = ""
        if name == "full_like":
            extra += f", {g.scalar() if g.chance(0.7) else v.name}"
        if g.chance(0.4):
            extra += f", dtype={g.dtype()}"
        if g.chance(0.15):
            extra += f", shape={g.shape_text()}"
        return f"jnp.{name}({v.name}{extra})"
    return make


for _n in ("zeros_like", "ones_like", "empty_like", "full_like"):
    op(f"jnp.{_n}", 0.5)(_like(_n))


@op("jnp.eye", 0.5)
def _eye(g):
    n = g.rng.randint(0, 4)
    extra = ""
    if g.chance(0.5):
        extra += f", {g.rng.randint(0, 4)}"
    if g.chance(0.5):
        extra += f", k={g.rng.randint(-2, 2)}"
    if g.chance(0.4):
        extra += f", dtype={g.dtype()}"
    return f"jnp.eye({n}{extra})"


@op("jnp.identity", 0.4)
def _identity(g):
    dt = f", dtype={g.dtype()}" if g.chance(0.5) else ""
    return f"jnp.identity({g.rng.randint(0, 4)}{dt})"


@op("jnp.array", 1.0)
def _array(g):
    r = g.rng.random()
    if r < 0.4:
        v = g.pick()
        dt = f", dtype={g.dtype()}" if g.chance(0.5) else ""
        return f"jnp.array({v.name}{dt})"
    if r < 0.7:
        k = g.choice("fib")
        vals = [g.lit(k) for _ in range(g.rng.randint(0, 4))]
        dt = f", dtype={g.dtype()}" if g.chance(0.3) else ""
        return f"jnp.array([{', '.join(vals)}]{dt})"
    if r < 0.85:
        return f"jnp.array({g.scalar()})"
    s = [w.name for w in g.vars if w.ndim == 0][-3:]
    if not s:
        return None
    return f"jnp.array([{', '.join(s + [g.lit()])}])"


@op("jnp.asarray", 0.8)
def _asarray(g):
    if g.chance(0.3):
        return f"jnp.asarray({g.scalar()})"
    v = g.pick()
    dt = f", dtype={g.dtype()}" if g.chance(0.5) else ""
    return f"jnp.asarray({v.name}{dt})"


@op("jnp.copy", 0.3)
def _copy(g):
    return f"jnp.copy({g.pick().name})"


@op("method.copy", 0.2)
def _mcopy(g):
    return f"{g.pick().name}.copy()"


@op("jnp.astype", 0.8)
def _astype(g):
    return f"jnp.astype({g.pick().name}, {g.dtype()})"


@op("method.astype", 1.0)
def _mastype(g):
    return f"{g.pick().name}.astype({g.dtype()})"


def _cast(name):
    def make(g):
        v = g.pick()
        arg = v.name if g.chance(0.85) else g.scalar()
        return f"jnp.{name}({arg})"
    return make


for _n, _w in (("float32", 1.0), ("float64", 0.4), ("int32", 1.0), ("int64", 0.3),
               ("bool_", 0.6), ("float16", 0.15), ("int8", 0.15), ("int16", 0.1),
               ("uint8", 0.15), ("uint16", 0.1), ("uint32", 0.15), ("uint64", 0.1)):
    op(f"jnp.{_n}", _w)(_cast(_n))


@op("jnp.result_type", 0.4)
def _result_type(g):
    v, w = g.pick(), g.pick()
    return f"{v.name}.astype(jnp.result_type({v.name}, {g.partner(w)}))"


@op("jnp.issubdtype", 0.2)
def _issubdtype(g):
    v = g.pick()
    cat = g.choice(["jnp.floating", "jnp.integer", "jnp.inexact", "jnp.number",
                    "jnp.signedinteger", "jnp.unsignedinteger", "jnp.complexfloating"])
    return f"{v.name} * jnp.issubdtype({v.name}.dtype, {cat})"


@op("jnp.isscalar", 0.1)
def _isscalar(g):
    v = g.pick()
    return f"{v.name} + jnp.isscalar({v.name})"


@op("jnp.iinfo", 0.3)
def _iinfo(g):
    v = g.pick(lambda v: v.kind in "iu")
    if v is None or g.chance(0.3):
        v = v or g.pick()
        return f"jnp.clip({v.name}, jnp.iinfo(jnp.int32).min, jnp.iinfo(jnp.int8).max)"
    return f"jnp.clip({v.name}, jnp.iinfo({v.name}.dtype).min + 1, " \
           f"jnp.iinfo({v.name}.dtype).max - {g.choice(['0', '1', '2147483647'])})"


@op("jnp.finfo", 0.3)
def _finfo(g):
    v = g.pick(lambda v: v.kind == "f")
    if v is None or g.chance(0.3):
        v = v or g.pick()
        return f"{v.name} + jnp.finfo(jnp.float32).eps"
    return g.choice([f"{v.name} * jnp.finfo({v.name}.dtype).eps",
                     f"jnp.minimum({v.name}, jnp.finfo({v.name}.dtype).max)",
                     f"{v.name} + jnp.finfo({v.name}.dtype).tiny"])


@op("jnp.isclose", 0.6)
def _isclose(g):
    v = g.pick()
    en = ", equal_nan=True" if g.chance(0.3) else ""
    return f"jnp.isclose({v.name}, {g.partner(v)}{en})"


@op("jnp.allclose", 0.4)
def _allclose(g):
    v = g.pick()
    return f"jnp.allclose({v.name}, {g.partner(v)})"


@op("jnp.array_equal", 0.4)
def _array_equal(g):
    v = g.pick()
    return f"jnp.array_equal({v.name}, {g.partner(v)})"


@op("jnp.clip", 1.2)
def _clip(g):
    v = g.pick()
    lo = g.partner(v) if g.chance(0.3) else g.scalar(v.kind if v.kind in "fi" else None)
    hi = g.partner(v) if g.chance(0.3) else g.scalar(v.kind if v.kind in "fi" else None)
    r = g.rng.random()
    if r < 0.15:
        return f"jnp.clip({v.name}, max={hi})"
    if r < 0.3:
        return f"jnp.clip({v.name}, min={lo})"
    return f"jnp.clip({v.name}, {lo}, {hi})" if g.chance(0.5) else \
        f"jnp.clip({v.name}, min={lo}, max={hi})"


@op("method.clip", 0.4)
def _mclip(g):
    v = g.pick()
    return f"{v.name}.clip({g.scalar()}, {g.scalar()})"


def _round(name):
    def make(g):
        v = g.pick()
        dec = g.choice(["", "", ", 1", ", 2", ", -1", ", decimals=1"])
        return f"jnp.{name}({v.name}{dec})"
    return make


op("jnp.round", 1.0)(_round("round"))
op("jnp.around", 0.5)(_round("around"))


@op("method.round", 0.3)
def _mround(g):
    return f"{g.pick().name}.round({g.choice(['', '1', '0'])})"


@op("builtin.round", 0.2)
def _bround(g):
    return f"round({g.pick().name})"


@op("method.real", 0.2)
def _mreal(g):
    return f"{g.pick().name}.real"


@op("method.imag", 0.2)
def _mimag(g):
    return f"{g.pick().name}.imag"


@op("method.conj", 0.2)
def _mconj(g):
    return f"{g.pick().name}.{g.choice(['conj', 'conjugate'])}()"


@op("iter", 0.4)
def _iter(g):
    v = g.pick(lambda v: v.ndim >= 1 and v.shape[0] <= 4 and v.shape[0] > 0)
    if v is None:
        return None
    return f"jnp.stack([r * {g.lit('i')} for r in {v.name}])"


# error probes: Python control flow / conversions on traced values ------------------------

@op("error.bool", 0.25)
def _err_bool(g):
    v = g.pick()
    return f"({v.name} if {v.name}.sum() > 0 else -{v.name})"


@op("error.int", 0.15)
def _err_int(g):
    v = g.pick()
    return g.choice([f"jnp.zeros(int({v.name}.sum()))", f"{v.name} * float({v.name}.max())"])


@op("error.np_array", 0.1)
def _err_np(g):
    v = g.pick()
    return f"jnp.asarray(np.asarray({v.name}) + 1)"


# lax ---------------------------------------------------------------------------------------

LAX_UNARY = {
    "abs": "fi", "acos": "f", "acosh": "f", "asin": "f", "asinh": "f", "atan": "f",
    "atanh": "f", "bitwise_not": "ib", "cbrt": "f", "ceil": "f", "conj": "f", "cos": "f",
    "cosh": "f", "exp": "f", "exp2": "f", "expm1": "f", "floor": "f", "imag": "f",
    "is_finite": "f", "log": "f", "log1p": "f", "logistic": "f", "neg": "fi", "real": "f",
    "rsqrt": "f", "sign": "fi", "sin": "f", "sinh": "f", "sqrt": "f", "square": "fi",
    "tan": "f", "tanh": "f",
}


def _lax_unary(name, kinds):
    def make(g):
        v = g.pick(lambda v: v.kind in kinds) if not g.chance(0.1) else g.pick()
        return None if v is None else f"lax.{name}({v.name})"
    return make


for _n, _k in LAX_UNARY.items():
    op(f"lax.{_n}", 0.5)(_lax_unary(_n, _k))

LAX_BINARY = {
    "add": "fi", "atan2": "f", "bitwise_and": "ib", "bitwise_or": "ib", "bitwise_xor": "ib",
    "div": "fi", "eq": "fib", "ge": "fi", "gt": "fi", "le": "fi", "lt": "fi", "max": "fib",
    "min": "fib", "mul": "fi", "ne": "fib", "nextafter": "f", "pow": "f", "rem": "fi",
    "shift_left": "i", "shift_right_arithmetic": "i", "sub": "fi",
}


def _lax_binary(name, kinds):
    def make(g):
        v = g.pick(lambda v: v.kind in kinds) if not g.chance(0.08) else g.pick()
        if v is None:
            return None
        r = g.rng.random()
        if r < 0.45:
            w = g.pick(lambda w: w.shape == v.shape and w.dtype == v.dtype)
            other = w.name if w is not None else v.name
        elif r < 0.75:
            other = g.lit(v.kind if v.kind in "fib" else None)  # weak scalar: allowed by lax
        elif r < 0.85:
            other = f"{v.name}[::-1]" if v.ndim else v.name
        else:
            other = g.partner(v)  # usually a dtype or shape mismatch: lax refuses
        a, b = (v.name, other) if g.chance(0.7) else (other, v.name)
        return f"lax.{name}({a}, {b})"
    return make


for _n, _k in LAX_BINARY.items():
    op(f"lax.{_n}", 0.6)(_lax_binary(_n, _k))


def _lax_reduce(name, kinds):
    def make(g):
        v = g.pick(lambda v: v.kind in kinds) or g.pick()
        k = g.rng.randint(0, v.ndim)
        axes = tuple(sorted(g.rng.sample(range(v.ndim), k))) if v.ndim else ()
        if g.chance(0.03):
            axes = (v.ndim,)
        return f"lax.{name}({v.name}, {axes!r})"
    return make


for _n, _k in (("reduce_sum", "fi"), ("reduce_prod", "fi"), ("reduce_max", "fib"),
               ("reduce_min", "fib"), ("reduce_and", "bi"), ("reduce_or", "bi")):
    op(f"lax.{_n}", 0.8)(_lax_reduce(_n, _k))


def _lax_arg(name):
    def make(g):
        v = g.pick(lambda v: v.ndim >= 1) or g.pick()
        return f"lax.{name}({v.name}, {g.rng.randrange(max(1, v.ndim))}, " \
               f"{g.choice(['jnp.int32', 'np.int32'] + (['jnp.int64'] if g.x64 else []))})"
    return make


op("lax.argmax", 0.6)(_lax_arg("argmax"))
op("lax.argmin", 0.6)(_lax_arg("argmin"))


def _lax_cum(name):
    def make(g):
        v = g.pick(lambda v: v.ndim >= 1) or g.pick()
        ax = g.rng.randrange(max(1, v.ndim))
        rev = ", reverse=True" if g.chance(0.4) else ""
        return f"lax.{name}({v.name}, axis={ax}{rev})"
    return make


for _n in ("cumsum", "cumprod", "cummax", "cummin"):
    op(f"lax.{_n}", 0.8)(_lax_cum(_n))


def _sortable(g, nd=0):
    """A value to sort, of at least `nd` dimensions. Not a complex one: jitviz sorts those
    (tests/test_sort.py -k complex checks them against JAX), but letting the generator pick
    them would change every seed's programs, which the known-difference tests replay."""
    return g.pick(lambda v: v.kind != "c" and v.ndim >= nd)


@op("jnp.sort", 0.6)
def _jsort(g):
    v = _sortable(g) or g.pick()
    desc = ", descending=True" if g.chance(0.3) else ""
    return f"jnp.sort({v.name}, axis={g.axis(v, tuple_=False)}{desc})"


@op("jnp.argsort", 0.6)
def _jargsort(g):  # always stable: an unstable sort may order ties either way
    v = _sortable(g) or g.pick()
    desc = ", descending=True" if g.chance(0.3) else ""
    return f"jnp.argsort({v.name}, axis={g.axis(v, tuple_=False)}{desc})"


def _quantile_maker(name, scale=1.0, median=False):
    def make(g):
        v = g.pick(lambda v: v.kind != "c") or g.pick()
        kw = f", axis={g.axis(v)}" + (", keepdims=True" if g.chance(0.3) else "")
        if median:
            return f"jnp.{name}({v.name}{kw})"
        q = g.choice(["0.5", "0.0", "1.0", "0.25", "np.array([0.1, 0.9], np.float32)"])
        if scale != 1.0:
            q = f"{q} * {scale}"
        if g.chance(0.4):
            kw += f", method={g.choice(['lower', 'higher', 'nearest', 'midpoint'])!r}"
        return f"jnp.{name}({v.name}, {q}{kw})"
    return make


for _n, _scale, _median in (("quantile", 1.0, False), ("nanquantile", 1.0, False),
                            ("percentile", 100.0, False), ("nanpercentile", 100.0, False),
                            ("median", 1.0, True), ("nanmedian", 1.0, True)):
    op(f"jnp.{_n}", 0.3)(_quantile_maker(_n, _scale, _median))


@op("lax.stop_gradient", 0.4)
def _lstop_gradient(g):
    return f"lax.stop_gradient({g.pick().name})"


@op("lax.erf", 0.3)
def _lerf(g):
    return f"lax.erf({(g.pick(lambda v: v.kind == 'f') or g.pick()).name})"


@op("lax.erfc", 0.3)
def _lerfc(g):
    return f"lax.erfc({(g.pick(lambda v: v.kind == 'f') or g.pick()).name})"


@op("lax.sort", 0.4)
def _lsort(g):
    v = _sortable(g, 1) or g.pick()
    dim = g.rng.randrange(max(1, v.ndim)) - (v.ndim if g.chance(0.3) else 0)
    w = g.pick(lambda w: w.shape == v.shape and w is not v) if g.chance(0.4) else None
    if w is None:
        return f"lax.sort({v.name}, dimension={dim})"
    return f"lax.sort(({v.name}, {w.name}), dimension={dim})", 2


@op("lax.sort_key_val", 0.3)
def _lsort_key_val(g):
    v = _sortable(g, 1) or g.pick()
    w = g.pick(lambda w: w.shape == v.shape) or v
    dim = g.rng.randrange(max(1, v.ndim))
    return f"lax.sort_key_val({v.name}, {w.name}, dimension={dim})", 2


@op("lax.broadcast", 0.5)
def _lbroadcast(g):
    v = g.pick(lambda v: v.ndim < 3) or g.pick()
    sizes = tuple(g.rng.randint(0, 3) for _ in range(g.rng.randint(0, 2)))
    return f"lax.broadcast({v.name}, {sizes!r})"


@op("lax.broadcast_in_dim", 0.6)
def _lbid(g):
    v = g.pick(lambda v: v.ndim < 3) or g.pick()
    out = [g.rng.randint(1, 3)] + [d if d != 1 or g.chance(0.5) else 2 for d in v.shape]
    dims = tuple(range(1, v.ndim + 1))
    return f"lax.broadcast_in_dim({v.name}, {tuple(out)!r}, {dims!r})"


@op("lax.iota", 0.4)
def _liota(g):
    return f"lax.iota({g.dtype('fi')}, {g.rng.randint(0, 5)})"


@op("lax.broadcasted_iota", 0.4)
def _lbiota(g):
    shape = tuple(g.rng.randint(0, 4) for _ in range(g.rng.randint(1, 3)))
    return f"lax.broadcasted_iota({g.dtype('fi')}, {shape!r}, {g.rng.randrange(len(shape))})"


@op("lax.clamp", 0.6)
def _lclamp(g):
    v = g.pick(lambda v: v.kind in "fi") or g.pick()
    k = v.kind if v.kind in "fi" else "f"
    lo, hi = sorted([g.lit(k), g.lit(k)], key=lambda s: 0)
    if g.chance(0.3):
        w = g.pick(lambda w: w.shape == v.shape and w.dtype == v.dtype)
        if w is not None:
            lo = w.name
    return f"lax.clamp({lo}, {v.name}, {hi})"


@op("lax.concatenate", 0.6)
def _lconcat(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    ws = [w.name for w in g.vars if w.ndim == v.ndim and w.dtype == v.dtype][-2:]
    return f"lax.concatenate([{', '.join(ws + [v.name])}], {g.rng.randrange(max(1, v.ndim))})"


@op("lax.stack", 0.3)
def _lstack(g):
    v = g.pick()
    ws = [w.name for w in g.vars if w.shape == v.shape and w.dtype == v.dtype][-2:]
    return f"lax.stack([{', '.join(ws + [v.name])}], {g.rng.randint(0, v.ndim)})"


@op("lax.convert_element_type", 0.8)
def _lconvert(g):
    return f"lax.convert_element_type({g.pick().name}, {g.dtype()})"


@op("lax.dot", 0.6)
def _ldot(g):
    v = g.pick(lambda v: 1 <= v.ndim <= 2 and v.kind in "fi") or g.pick_nd(1, 2)
    if v is None:
        return None
    other = f"{v.name}.T" if v.ndim == 2 else v.name
    w = g.pick(lambda w: 1 <= w.ndim <= 2 and w.shape[0] == v.shape[-1] and w.dtype == v.dtype)
    if w is not None and g.chance(0.5):
        other = w.name
    pet = f", preferred_element_type={g.dtype('fi')}" if g.chance(0.2) else ""
    return f"lax.dot({v.name}, {other}{pet})"


@op("lax.dot_general", 0.6)
def _ldot_general(g):
    v = g.pick(lambda v: 1 <= v.ndim <= 3 and v.kind in "fi") or g.pick_nd(1, 3)
    if v is None:
        return None
    n = v.ndim
    if n >= 3 and g.chance(0.5):  # batch on 0, contract the last with itself
        dn = (((n - 1,), (n - 1,)), ((0,), (0,)))
    else:
        c = g.rng.randrange(n)
        dn = (((c,), (c,)), ((), ()))
    return f"lax.dot_general({v.name}, {v.name}, {dn!r})"


@op("lax.dynamic_slice", 0.8)
def _ldslice(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    ints = [w.name for w in g.vars if w.ndim == 0 and w.kind in "iu"]
    starts, sizes = [], []
    for d in v.shape:
        if ints and g.chance(0.3):
            starts.append(g.choice(ints))
        else:
            starts.append(str(g.rng.randint(-d - 2, d + 2)))
        sizes.append(g.rng.randint(0, d) if d else 0)
    if g.chance(0.03) and sizes:
        sizes[0] += 1  # larger than the operand: an error
    return f"lax.dynamic_slice({v.name}, ({', '.join(starts)}{',' if len(starts) == 1 else ''}), " \
           f"{tuple(sizes)!r})"


@op("lax.dynamic_update_slice", 0.8)
def _ldus(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    u = g.pick(lambda w: w.ndim == v.ndim and w.dtype == v.dtype and
               all(a <= b for a, b in zip(w.shape, v.shape)))
    upd = u.name if u is not None else f"{v.name}[{', '.join(':1' for _ in v.shape)}]"
    ints = [w.name for w in g.vars if w.ndim == 0 and w.kind in "iu"]
    starts = [g.choice(ints) if ints and g.chance(0.3) else str(g.rng.randint(-d - 1, d + 1))
              for d in v.shape]
    return f"lax.dynamic_update_slice({v.name}, {upd}, ({', '.join(starts)}" \
           f"{',' if len(starts) == 1 else ''}))"


@op("lax.expand_dims", 0.4)
def _lexpand(g):
    v = g.pick(lambda v: v.ndim < MAX_RANK) or g.pick()
    return f"lax.expand_dims({v.name}, ({g.rng.randint(-v.ndim - 1, v.ndim)},))"


@op("lax.full", 0.4)
def _lfull(g):
    dt = f", {g.dtype()}" if g.chance(0.5) else ""
    return f"lax.full({g.shape_text()}, {g.scalar()}{dt})"


@op("lax.integer_pow", 0.8)
def _lipow(g):
    v = g.pick(lambda v: v.kind in "fi") or g.pick()
    return f"lax.integer_pow({v.name}, {g.choice([-2, -1, 0, 1, 2, 3, 5])})"


@op("lax.reshape", 0.5)
def _lreshape(g):
    v = g.pick()
    t = tuple(d for d in _reshape_target(g, v) if d != -1) or ((v.size,) if v.ndim else ())
    if int(np.prod(t)) != v.size:
        t = (v.size,)
    dims = f", {tuple(_perm(g, v.ndim))!r}" if v.ndim >= 2 and g.chance(0.3) else ""
    return f"lax.reshape({v.name}, {t!r}{dims})"


@op("lax.rev", 0.5)
def _lrev(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    dims = tuple(sorted(g.rng.sample(range(v.ndim), g.rng.randint(0, v.ndim)))) if v.ndim else ()
    return f"lax.rev({v.name}, {dims!r})"


@op("lax.round", 0.5)
def _lround(g):
    v = g.pick(lambda v: v.kind == "f") or g.pick()
    m = g.choice(["", ", 0", ", 1", ", lax.RoundingMethod.TO_NEAREST_EVEN"])
    return f"lax.round({v.name}{m})"


@op("lax.select", 0.6)
def _lselect(g):
    v = g.pick()
    c = g.pick(lambda w: w.kind == "b" and (w.shape == v.shape or w.ndim == 0))
    cond = c.name if c is not None else f"{v.name} > 0"
    w = g.pick(lambda w: w.shape == v.shape and w.dtype == v.dtype) or v
    return f"lax.select({cond}, {v.name}, {w.name if g.chance(0.7) else g.lit()})"


@op("lax.select_n", 0.5)
def _lselect_n(g):
    v = g.pick()
    cs = [w.name for w in g.vars if w.shape == v.shape and w.dtype == v.dtype][-3:]
    which = g.pick(lambda w: (w.kind == "b" or w.dtype == np.int32) and
                   (w.shape == v.shape or w.ndim == 0))
    wn = which.name if which is not None else f"{v.name} > 0"
    if which is not None and which.kind == "i":
        wn = f"jnp.clip({which.name}, 0, {len(cs) - 1})"
    if len(cs) > 2 and not (which is not None and which.kind == "i"):
        cs = cs[:2]
    return f"lax.select_n({wn}, {', '.join(cs)})"


@op("lax.slice", 0.6)
def _lslice(g):
    v = g.pick(lambda v: v.ndim >= 1) or g.pick()
    st, li, sd = [], [], []
    for d in v.shape:
        a = g.rng.randint(0, d)
        b = g.rng.randint(a, d)
        st.append(a)
        li.append(b)
        sd.append(g.choice([1, 1, 2, 3]))
    strides = f", {tuple(sd)!r}" if g.chance(0.4) else ""
    if g.chance(0.03) and li:
        li[0] += 1  # past the end: an error
    return f"lax.slice({v.name}, {tuple(st)!r}, {tuple(li)!r}{strides})"


@op("lax.squeeze", 0.4)
def _lsqueeze(g):
    v = g.pick(lambda v: 1 in v.shape) or g.pick()
    dims = tuple(i for i, d in enumerate(v.shape) if d == 1 and g.chance(0.7))
    return f"lax.squeeze({v.name}, {dims!r})"


@op("lax.transpose", 0.5)
def _ltranspose(g):
    v = g.pick()
    return f"lax.transpose({v.name}, {tuple(_perm(g, v.ndim))!r})"


# control flow ------------------------------------------------------------------------------

def _pred(g):
    r = g.rng.random()
    b = g.pick(lambda w: w.ndim == 0 and w.kind == "b")
    if r < 0.3 and b is not None:
        return b.name
    if r < 0.8:
        v = g.pick()
        return f"jnp.sum({v.name}) > {g.lit('i')}"
    if r < 0.9:
        i = g.pick(lambda w: w.ndim == 0 and w.kind == "i")
        return i.name if i is not None else "True"
    return g.choice(["True", "False", "1", "jnp.float32(1.0)"])


@op("lax.cond", 4.0)
def _lcond(g):
    v = g.pick()
    t = g.body("a", v)
    f = g.body("a", v) if g.chance(0.8) else "a"
    if g.chance(0.25):
        w = g.pick(lambda w: w.name != v.name)
        if w is not None:
            t2 = g.body("b", w)
            return (f"lax.cond({_pred(g)}, lambda a, b: ({t}, {t2}), lambda a, b: ({f}, b), "
                    f"{v.name}, {w.name})", 2)
    return f"lax.cond({_pred(g)}, lambda a: {t}, lambda a: {f}, {v.name})"


@op("lax.switch", 2.0)
def _lswitch(g):
    v = g.pick()
    bodies = [g.body("a", v) for _ in range(g.rng.randint(1, 3))]
    i = g.pick(lambda w: w.ndim == 0 and w.kind == "i")
    idx = i.name if i is not None and g.chance(0.5) else g.choice(["0", "1", "2", "-1", "7"])
    return f"lax.switch({idx}, [{', '.join('lambda a: ' + b for b in bodies)}], {v.name})"


@op("lax.fori_loop", 4.0)
def _lfori(g):
    v = g.pick()
    lo, hi = g.rng.randint(0, 2), g.rng.randint(0, 5)
    i = g.pick(lambda w: w.ndim == 0 and w.kind == "i")
    if i is not None and g.chance(0.2):
        hi = f"jnp.clip({i.name}, 0, 5)"  # a traced bound: a while loop
    extra = ["i"] if v.kind != "b" else []
    init = v.name
    if g.chance(0.12):
        init = g.lit("f")  # a weak carry
        v = Var("", (), np.dtype("float32"), True)
    return f"lax.fori_loop({lo}, {hi}, lambda i, c: {g.body('c', v, extra)}, {init})"


@op("lax.while_loop", 3.0)
def _lwhile(g):
    v = g.pick()
    n = g.rng.randint(0, 4)
    body = g.body("c[1]", v)
    cond = f"c[0] < {n}"
    if v.kind in "fi" and g.chance(0.3):
        cond = f"(c[0] < {n + 2}) & (jnp.sum(c[1]) < 50)"
    return f"lax.while_loop(lambda c: {cond}, lambda c: (c[0] + 1, {body}), (0, {v.name}))[1]"


@op("lax.scan", 4.0)
def _lscan(g):
    xs = g.pick(lambda v: v.ndim >= 1)
    rev = ", reverse=True" if g.chance(0.3) else ""
    if xs is None or g.chance(0.15):
        v = g.pick()
        n = g.rng.randint(0, 3)
        return (f"lax.scan(lambda c, _: ({g.body('c', v)}, c), {v.name}, None, length={n}{rev})",
                2)
    t = Var("t", xs.shape[1:], xs.dtype, xs.weak)
    r = g.rng.random()
    if r < 0.5:
        init, c = f"{xs.name}[0]", t
    elif r < 0.7:
        init, c = f"jnp.zeros_like({xs.name}[0])", t
    elif r < 0.85:
        init, c = g.lit("f"), Var("c", (), np.dtype("float32"), True)
    else:
        w = g.pick(lambda w: fits_into(xs.shape[1:], w.shape)) or g.pick()
        init, c = w.name, w
    extra = ["t"] if fits_into(t.shape, c.shape) and t.kind != "b" else []
    carry = g.body("c", c, extra)
    ys = g.choice(["c", "t", "c * 2", "jnp.sum(c)", "(c, t)"] if c.kind != "b" else ["c", "t"])
    return f"lax.scan(lambda c, t: ({carry}, {ys}), {init}, {xs.name}{rev})", 2


@op("lax.map", 1.5)
def _lmap(g):
    xs = g.pick(lambda v: v.ndim >= 1)
    if xs is None:
        return None
    t = Var("r", xs.shape[1:], xs.dtype, xs.weak)
    return f"lax.map(lambda r: {g.body('r', t)}, {xs.name})"


# --- functions deliberately not generated (checked by the coverage test) ---------------------

# compositions of generated operations, each compared with JAX case by case (values, dtypes,
# weak types, errors, grad) in tests/test_jnp_extra.py; no generator maker yet
_COMPOSED = "composed from generated operations; compared with JAX in tests/test_jnp_extra.py"

# compositions of generated primitives with function or layout arguments (windows, scans)
_LAX_WINDOWS = ("composed from generated primitives; compared with JAX (values, grad, vmap, "
                "errors) in tests/test_lax_windows.py; no generator maker yet")

_LAX_IN_DIM = ("composed from generated primitives (slice, dynamic_slice, reduce_*, ...); "
               "compared with JAX in tests/test_lax_in_dim.py; no generator maker yet")

# issue 14's names, each compared with JAX case by case (values, dtypes, weak types, errors,
# grad, vmap) in tests/test_jnp_more.py; no generator maker yet
_COMPOSED_MORE = ("composed from generated operations; compared with JAX in "
                  "tests/test_jnp_more.py")
_UTILITY = ("a dtype or printing utility, not an array operation; compared with JAX in "
            "tests/test_jnp_more.py::test_dtype_utilities")

# the special functions: compared with JAX on grids of special values in tests/test_special.py
# (random programs would meet JAX's own inaccuracies: its zeta below q = -9, float32 polygamma)
_SPECIAL = "a special function; compared with JAX (grids, special values) in tests/test_special.py"
_LAX_COMPOSED = ("composed from generated lax operations; compared with JAX in "
                 "tests/test_special.py::test_lax_composites_match_jax")

# collectives exist only inside vmap(..., axis_name=): compared with JAX's values in
# tests/test_collectives.py
_COLLECTIVE = "a collective over a named vmap axis; compared with JAX in tests/test_collectives.py"

SKIPPED = {
    **{f"lax.{n}": _COLLECTIVE for n in ("all_gather", "axis_index", "pmax", "pmean", "pmin",
                                         "psum")},
    **{f"lax.{n}": _SPECIAL for n in (
        "bessel_i0e", "bessel_i1e", "betainc", "digamma", "igamma", "igamma_grad_a", "igammac",
        "lgamma", "polygamma", "random_gamma_grad", "zeta")},
    **{f"lax.{n}": _LAX_COMPOSED for n in (
        "batch_matmul", "broadcast_to_rank", "collapse", "dynamic_index_in_dim",
        "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice_in_dim",
        "full_like", "index_in_dim", "reciprocal", "slice_in_dim", "split", "tile")},
    "jnp.append": _COMPOSED_MORE,
    "jnp.apply_over_axes": _COMPOSED_MORE,
    "jnp.argpartition": _COMPOSED_MORE,
    "jnp.array_equiv": _COMPOSED_MORE,
    "jnp.bartlett": _COMPOSED_MORE,
    "jnp.bincount": _COMPOSED_MORE,
    "jnp.bitwise_count": _COMPOSED_MORE,
    "jnp.bitwise_invert": _COMPOSED_MORE,
    "jnp.bitwise_left_shift": _COMPOSED_MORE,
    "jnp.bitwise_right_shift": _COMPOSED_MORE,
    "jnp.blackman": _COMPOSED_MORE,
    "jnp.choose": _COMPOSED_MORE,
    "jnp.compress": _COMPOSED_MORE,
    "jnp.cumulative_prod": _COMPOSED_MORE,
    "jnp.cumulative_sum": _COMPOSED_MORE,
    "jnp.delete": _COMPOSED_MORE,
    "jnp.diagflat": _COMPOSED_MORE,
    "jnp.digitize": _COMPOSED_MORE,
    "jnp.dstack": _COMPOSED_MORE,
    "jnp.extract": _COMPOSED_MORE,
    "jnp.fabs": _COMPOSED_MORE,
    "jnp.flatnonzero": _COMPOSED_MORE,
    "jnp.frexp": _COMPOSED_MORE,
    "jnp.fromfunction": _COMPOSED_MORE,
    "jnp.gradient": _COMPOSED_MORE,
    "jnp.hamming": _COMPOSED_MORE,
    "jnp.hanning": _COMPOSED_MORE,
    "jnp.histogram": _COMPOSED_MORE,
    "jnp.histogram2d": _COMPOSED_MORE,
    "jnp.histogram_bin_edges": _COMPOSED_MORE,
    "jnp.histogramdd": _COMPOSED_MORE,
    "jnp.i0": _COMPOSED_MORE,
    "jnp.insert": _COMPOSED_MORE,
    "jnp.interp": _COMPOSED_MORE,
    "jnp.intersect1d": _COMPOSED_MORE,
    "jnp.iscomplex": _COMPOSED_MORE,
    "jnp.isreal": _COMPOSED_MORE,
    "jnp.ix_": _COMPOSED_MORE,
    "jnp.kaiser": _COMPOSED_MORE,
    "jnp.lexsort": _COMPOSED_MORE,
    "jnp.logaddexp2": _COMPOSED_MORE,
    "jnp.mask_indices": _COMPOSED_MORE,
    "jnp.matrix_transpose": _COMPOSED_MORE,
    "jnp.matvec": _COMPOSED_MORE,
    "jnp.nancumprod": _COMPOSED_MORE,
    "jnp.nancumsum": _COMPOSED_MORE,
    "jnp.packbits": _COMPOSED_MORE,
    "jnp.partition": _COMPOSED_MORE,
    "jnp.place": _COMPOSED_MORE,
    "lax.complex": ("a new primitive: its cases run on every backend (tests/test_primitives.py) "
                    "and JAX's answers are pinned in tests/test_jax_fidelity.py; a maker here "
                    "would change every seed's programs, which the known-difference tests "
                    "replay"),
    "jnp.poly": _COMPOSED_MORE,
    "jnp.roots": ("the eigenvalues of a companion matrix (LAPACK's geev); compared with JAX "
                  "in tests/test_linalg.py::test_roots_match_jax"),
    "jnp.polyadd": _COMPOSED_MORE,
    "jnp.polyder": _COMPOSED_MORE,
    "jnp.polydiv": _COMPOSED_MORE,
    "jnp.polyfit": _COMPOSED_MORE,
    "jnp.polyint": _COMPOSED_MORE,
    "jnp.polymul": _COMPOSED_MORE,
    "jnp.polysub": _COMPOSED_MORE,
    "jnp.put": _COMPOSED_MORE,
    "jnp.ravel_multi_index": _COMPOSED_MORE,
    "jnp.resize": _COMPOSED_MORE,
    "jnp.rollaxis": _COMPOSED_MORE,
    "jnp.searchsorted": _COMPOSED_MORE,
    "jnp.setdiff1d": _COMPOSED_MORE,
    "jnp.setxor1d": _COMPOSED_MORE,
    "jnp.sort_complex": _COMPOSED_MORE,
    "jnp.spacing": _COMPOSED_MORE,
    "jnp.trapezoid": _COMPOSED_MORE,
    "jnp.tri": _COMPOSED_MORE,
    "jnp.trim_zeros": _COMPOSED_MORE,
    "jnp.union1d": _COMPOSED_MORE,
    "jnp.unique": _COMPOSED_MORE,
    "jnp.unique_all": _COMPOSED_MORE,
    "jnp.unique_counts": _COMPOSED_MORE,
    "jnp.unique_inverse": _COMPOSED_MORE,
    "jnp.unique_values": _COMPOSED_MORE,
    "jnp.unpackbits": _COMPOSED_MORE,
    "jnp.unravel_index": _COMPOSED_MORE,
    "jnp.unstack": _COMPOSED_MORE,
    "jnp.unwrap": _COMPOSED_MORE,
    "jnp.vecdot": _COMPOSED_MORE,
    "jnp.vecmat": _COMPOSED_MORE,
    "jnp.array_repr": _UTILITY,
    "jnp.array_str": _UTILITY,
    "jnp.can_cast": _UTILITY,
    "jnp.get_printoptions": _UTILITY,
    "jnp.isdtype": _UTILITY,
    "jnp.iscomplexobj": _UTILITY,
    "jnp.isrealobj": _UTILITY,
    "jnp.iterable": _UTILITY,
    "jnp.printoptions": _UTILITY,
    "jnp.promote_types": _UTILITY,
    "jnp.set_printoptions": _UTILITY,
    "jnp.angle": _COMPOSED,
    "jnp.apply_along_axis": _COMPOSED,
    "jnp.array_split": _COMPOSED,
    "jnp.atleast_3d": _COMPOSED,
    "jnp.block": _COMPOSED,
    "jnp.broadcast_shapes": _COMPOSED,
    "jnp.convolve": _COMPOSED,
    "jnp.corrcoef": _COMPOSED,
    "jnp.correlate": _COMPOSED,
    "jnp.cov": _COMPOSED,
    "jnp.cross": _COMPOSED,
    "jnp.diag": _COMPOSED,
    "jnp.diag_indices": _COMPOSED,
    "jnp.diag_indices_from": _COMPOSED,
    "jnp.diagonal": _COMPOSED,
    "jnp.diff": _COMPOSED,
    "jnp.dsplit": _COMPOSED,
    "jnp.ediff1d": _COMPOSED,
    "jnp.einsum": _COMPOSED,
    "jnp.fill_diagonal": _COMPOSED,
    "jnp.gcd": _COMPOSED,
    "jnp.geomspace": _COMPOSED,
    "jnp.hsplit": _COMPOSED,
    "jnp.indices": _COMPOSED,
    "jnp.isin": _COMPOSED,
    "jnp.kron": _COMPOSED,
    "jnp.lcm": _COMPOSED,
    "jnp.ldexp": _COMPOSED,
    "jnp.logspace": _COMPOSED,
    "jnp.meshgrid": _COMPOSED,
    "jnp.modf": _COMPOSED,
    "jnp.nan_to_num": _COMPOSED,
    "jnp.nanargmax": _COMPOSED,
    "jnp.nanargmin": _COMPOSED,
    "jnp.nanmax": _COMPOSED,
    "jnp.nanmean": _COMPOSED,
    "jnp.nanmin": _COMPOSED,
    "jnp.nanprod": _COMPOSED,
    "jnp.nanstd": _COMPOSED,
    "jnp.nansum": _COMPOSED,
    "jnp.nanvar": _COMPOSED,
    "jnp.pad": _COMPOSED,
    "jnp.piecewise": _COMPOSED,
    "jnp.polyval": _COMPOSED,
    "jnp.put_along_axis": _COMPOSED,
    "jnp.roll": _COMPOSED,
    "jnp.rot90": _COMPOSED,
    "jnp.select": _COMPOSED,
    "jnp.split": _COMPOSED,
    "jnp.take_along_axis": _COMPOSED,
    "jnp.tril": _COMPOSED,
    "jnp.tril_indices": _COMPOSED,
    "jnp.tril_indices_from": _COMPOSED,
    "jnp.triu": _COMPOSED,
    "jnp.triu_indices": _COMPOSED,
    "jnp.triu_indices_from": _COMPOSED,
    "jnp.vander": _COMPOSED,
    "jnp.vectorize": _COMPOSED,
    "jnp.vsplit": _COMPOSED,
    "jnp.fix": "not in jax.numpy 0.10 (removed upstream): nothing to compare with",
    "jnp.complex64": "complex dtypes are outside issue 17's dtype set",
    "jnp.complex128": "complex dtypes are outside issue 17's dtype set",
    "jnp.result_type_np": "jitviz-only alias of numpy.result_type",
    "jnp.dtype": "numpy.dtype itself (used by the generator's dtype arguments)",
    "lax.gather": "jitviz's simpler gather API differs from XLA's by design (README); "
                  "covered through indexing and jnp.take",
    "lax.scatter": "jitviz's scatter API differs from XLA's (README's simpler gather); "
                   "x.at[] is compared with JAX in tests/test_at_updates.py",
    "lax.aval_of": "jitviz-only helper, not in jax.lax",
    "lax.normalize_index": "jitviz-only helper, not in jax.lax",
    "lax.ShapedArray": "a class, not an operation",
    "lax.RoundingMethod": "an enum, not an operation: the lax.round maker passes its members",
    "lax.Tracer": "a class, not an operation",
    "lax.associative_scan": _LAX_WINDOWS,
    "lax.cumlogsumexp": _LAX_WINDOWS,
    "lax.top_k": _LAX_WINDOWS,
    "lax.pad": _LAX_WINDOWS,
    "lax.reduce_window": _LAX_WINDOWS,
    "lax.conv": _LAX_WINDOWS,
    "lax.conv_general_dilated": _LAX_WINDOWS,
    "lax.conv_with_general_padding": _LAX_WINDOWS,
    "lax.conv_transpose": _LAX_WINDOWS,
    "lax.collapse": _LAX_IN_DIM,
    "lax.population_count": "compared with JAX for every integer width in tests/test_lax_bits.py",
    "lax.clz": "compared with JAX for every integer width in tests/test_lax_bits.py",
    "lax.shift_right_logical": "compared with JAX for every integer width in "
                               "tests/test_lax_bits.py",
    "lax.dynamic_index_in_dim": _LAX_IN_DIM,
    "lax.dynamic_slice_in_dim": _LAX_IN_DIM,
    "lax.dynamic_update_index_in_dim": _LAX_IN_DIM,
    "lax.dynamic_update_slice_in_dim": _LAX_IN_DIM,
    "lax.full_like": _LAX_IN_DIM,
    "lax.index_in_dim": _LAX_IN_DIM,
    "lax.reciprocal": _LAX_IN_DIM,
    "lax.reduce": _LAX_IN_DIM,
    "lax.slice_in_dim": _LAX_IN_DIM,
    "lax.conv_dimension_numbers": "a helper computing layout specs, not an operation; "
                                  "compared with JAX in tests/test_lax_windows.py",
    "lax.padtype_to_pads": "a helper computing padding widths, not an operation",
    "lax.ConvDimensionNumbers": "a class, not an operation",
    "lax.Precision": "an enum, not an operation; `precision=` values are checked against "
                     "JAX's printing in tests/test_jax_fidelity.py",
    "lax.canonicalize_precision": "a helper normalizing `precision=`, not an operation",
    "lax.lgamma": "compared with JAX (float32, float64, poles) in tests/test_gamma.py",
    "lax.digamma": "compared with JAX (float32, float64, poles) in tests/test_gamma.py",
    "lax.erf_inv": "compared with JAX and libm in tests/test_erf_special.py: JAX's float32 "
                   "erf_inv (XLA's polynomial) is up to 62 ulps off near +-1, jitviz's within "
                   "an ulp, so random operands would report XLA's error",
    "lax.fft": "complex results are outside issue 17's dtype set; lax.fft and jnp.fft are "
               "compared with JAX in tests/test_fft.py",
    "lax.FftType": "an enum, not an operation: tests/test_fft.py passes its members",
}
# makers whose statements JAX always rejects under jit: they only make error programs (the
# exception class must match)
ERROR_ONLY = {
    "method.nonzero": "x.nonzero() has no size=: a concretization error under jit",
    "lax.real": "lax.real needs a complex operand; the generator makes no complex values",
    "lax.imag": "lax.imag needs a complex operand; the generator makes no complex values",
}
# dtype categories, scalar types used as dtypes and module constants are values, not functions
NOT_FUNCTIONS = {"bool_", "floating", "integer", "inexact", "number", "signedinteger",
                 "unsignedinteger", "complexfloating", "ndarray", "Array", "pi", "e", "inf",
                 "nan", "euler_gamma", "newaxis",
                 # JAX's other names of scalar types, and NumPy's classes jnp re-exports
                 "bool", "int_", "uint", "float_", "complex_", "double", "single", "cdouble",
                 "csingle", "generic", "character", "flexible", "object_", "ComplexWarning"}


def public_functions():
    """Every public callable of jitviz.numpy and jitviz.lax, as 'jnp.name' / 'lax.name'."""
    import inspect
    import jitviz.lax as vlax
    import jitviz.numpy as vjnp
    out = []
    for prefix, mod in (("jnp", vjnp), ("lax", vlax)):
        for k in dir(mod):
            if k.startswith("_") or inspect.ismodule(getattr(mod, k)):
                continue
            obj = getattr(mod, k)
            if not callable(obj) or (prefix == "jnp" and k in NOT_FUNCTIONS and k != "bool_"):
                continue
            out.append(f"{prefix}.{k}")
    return sorted(out)


# --- generation -----------------------------------------------------------------------------

@contextlib.contextmanager
def x64_mode(on: bool):
    """JAX's and jitviz's 64-bit switches together, restored afterwards."""
    import jax
    import jitviz
    before = jitviz.config.enable_x64
    jitviz.config.update("enable_x64", bool(on))
    try:
        with jax.enable_x64(bool(on)):
            yield
    finally:
        jitviz.config.update("enable_x64", before)


def _make_args(rng: random.Random, x64: bool):
    n = rng.choices([1, 2, 3, 4], [2, 4, 3, 1])[0]
    rank = rng.choices([0, 1, 2, 3], [1, 3, 4, 2])[0]
    base = [rng.choices([0, 1, 2, 3, 4, 5], [0.5, 2, 3, 3, 2, 1])[0] for _ in range(rank)]
    args = []
    for i in range(n):
        if rng.random() < 0.15:
            args.append((f"x{i}", make_python_scalar(rng)))
            continue
        w = {"float32": 5, "int32": 3, "bool": 1.2, "float64": 2.5 if x64 else 0.12,
             "int64": 1.2 if x64 else 0.05}
        dt = rng.choices(list(w), list(w.values()))[0]
        k = rng.randint(0, len(base)) if rng.random() < 0.4 else len(base)
        shape = [d if rng.random() > 0.15 else 1 for d in base[len(base) - k:]]
        if rng.random() < 0.08:
            shape = [rng.choice([0, 1, 2, 6])] + shape  # sometimes a different shape
        args.append((f"x{i}", make_array(rng, dt, tuple(shape[:MAX_RANK]))))
    return args


def _aval_of(obj):
    import jax
    if isinstance(obj, jax.Array):
        a = obj.aval
        return tuple(a.shape), np.dtype(a.dtype), bool(a.weak_type)
    return None


def _flat_outs(val, n):
    if n == 1:
        return [val]
    if not isinstance(val, (tuple, list)) or len(val) != n:
        return None
    return list(val)


def generate(seed: int, x64: bool = False, *, n_ops: int | None = None,
             error_rate: float = 1 / 12, weights: dict | None = None) -> Program:
    """The program of `seed`: the same text on every machine with the same JAX."""
    import jax
    import jax.lax as jlax
    import jax.numpy as jjnp
    rng = random.Random(f"jaxdiff-{seed}-{int(x64)}")
    n_ops = n_ops or rng.randint(3, 25)
    want_error = rng.random() < error_rate
    args = _make_args(rng, x64)
    names = list(CATALOG)
    scale = dict(weights or {})
    if not x64:  # 64-bit requests without x64 are a known difference (known.py): keep them rare
        for n in ("jnp.float64", "jnp.int64", "jnp.uint64"):
            scale[n] = scale.get(n, 1.0) * 0.25
    w = [CATALOG[n][0] * scale.get(n, 1.0) for n in names]
    stmts, jax_error = [], None
    counter = [0]

    def body(*vals):
        nonlocal jax_error
        ns = {"jnp": jjnp, "lax": jlax, "np": np}
        vars_ = []
        for (name, v0), val in zip(args, vals):
            ns[name] = val
            shape, dt, weak = _aval_of(val)
            vars_.append(Var(name, shape, dt, weak, True, not isinstance(v0, np.ndarray)))
        g = Gen(rng, x64, vars_)
        tries = 0
        while len(stmts) < n_ops and tries < n_ops * 8:
            tries += 1
            name = rng.choices(names, w)[0]
            try:
                made = CATALOG[name][1](g)
            except (ValueError, IndexError, TypeError, ZeroDivisionError, AttributeError):
                # (AttributeError: `g.pick` found no variable that fits, None; seed 35000062,
                # where every value had the largest rank and broadcast_to wanted a smaller one)
                made = None
            if made is None:
                continue
            expr, nout = made if isinstance(made, tuple) else (made, 1)
            outs = tuple(f"v{counter[0] + k}" for k in range(nout))
            stmt = Stmt(outs, expr, name)
            try:
                code = compile(f"__r = {expr}", "<stmt>", "exec")
                local = dict(ns)
                exec(code, local)
                flat = _flat_outs(local["__r"], nout)
                if flat is None:
                    continue
                avals = [_aval_of(o) for o in flat]
            except Exception as e:  # JAX rejects it
                if want_error and not isinstance(e, (SyntaxError, NameError, AttributeError)):
                    stmts.append(stmt)
                    jax_error = type(e).__name__
                    return 0
                continue
            if any(a is None for a in avals) or any(
                    _size(a[0]) > MAX_ELEMENTS or len(a[0]) > MAX_RANK for a in avals):
                continue
            for o, val, a in zip(outs, flat, avals):
                ns[o] = val
                if a[1].kind != "c":  # complex results (lax.conj of a real) are compared,
                    g.vars.append(Var(o, *a))  # not used: complex is outside the dtype set
            counter[0] += nout
            stmts.append(stmt)
        return 0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with x64_mode(x64):
            jax.eval_shape(body, *[v for _, v in args])
    return Program(seed, x64, args, stmts, jax_error)
