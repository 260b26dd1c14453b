"""Render a whole optimized program: a Python *driver* for the top level and Numba *region*
functions for control flow, one statement rule per primitive (`statements.py`, registered
on the target "cpu.statement").

The driver allocates outputs with NumPy, calls the compiled kernels and does the free things
itself (reshapes, transposes and slices are NumPy views; `dot_general` is NumPy's BLAS).
A `cond`, `while` or `scan` becomes one Numba function whose body holds real `if`/`while`/
`for` statements (never unrolled) calling the fused kernels of its body; nested control flow
nests inside it. Rank-0 values are plain scalars everywhere, so a scalar `fori_loop` body is
a few register operations per iteration.
"""
from __future__ import annotations

import hashlib
import inspect
import re
from contextlib import contextmanager

from ...core.ir import Eqn, Jaxpr, Literal, Var
from ...core.ir import literal_key
from ..numba_text import ctor, is_half
from . import runtime
from .rules import registered_helpers
from .statements import statement_rule


class ModuleText:
    """A generated module: the header, then functions (each with its line -> eqn map)."""

    HEADER = ("# jitviz generated kernels. The file name is a hash of this text: do not edit.\n"
              "import numpy as np\n"
              "from numba import njit, prange, objmode\n"
              "from jitviz.backends.cpu import runtime as rt\n")

    def __init__(self, options: str):
        self.options = options  # the njit(...) arguments
        self.functions: list[tuple[str, str, dict, str]] = []  # name, text, lines, options
        self.extra_imports: set[str] = set()

    def add(self, name, text, line_eqns, *, parallel=False, combined=None):
        """`combined`: line -> the producer that line also computes (KernelCode)."""
        opts = self.options + (", parallel=True" if parallel else "")
        self.functions.append((name, text, (line_eqns, combined or {}), opts))

    def render(self):
        lines = self.HEADER.splitlines() + sorted(self.extra_imports)
        lines += provide_helpers("\n".join(f[1] for f in self.functions))
        line_eqns, combined = {}, {}
        for name, text, (eqns, producers), opts in self.functions:
            if "objmode" in text:  # object-mode blocks hold the GIL anyway
                opts = opts.replace(", nogil=True", "")
            lines += ["", "", f"@njit({opts})"]
            base = len(lines)
            lines += text.rstrip("\n").split("\n")
            line_eqns.update({base + k: e for k, e in eqns.items()})
            combined.update({base + k: e for k, e in producers.items()})
        return "\n".join(lines) + "\n", line_eqns, combined


def provide_helpers(text) -> list[str]:
    """The helpers registered with lowerings that `text` calls (a primitive's own Numba
    function, e.g. jitviz.random's Threefry) become `rt.<name>` (compiled on first use).
    Returns a comment line for each: they live outside runtime.py and so outside the cache
    tag, so a module names each with a hash of its source, which puts it in the module text,
    hence in the cache key."""
    helpers = registered_helpers()
    lines = []
    for name in sorted(set(re.findall(r"\brt\.(\w+)", text)) & set(helpers)):
        fn = helpers[name]
        runtime.provide(name, fn)
        lines.append(f"# rt.{name} is {fn.__module__}.{fn.__qualname__} "
                     f"(source {_source_digest(fn)})")
    return lines


def _source_digest(fn) -> str:
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        src = repr(fn.__code__.co_code)
    return hashlib.sha256(src.encode()).hexdigest()[:12]


# --- function builder ----------------------------------------------------------------------

class FunctionBuilder:
    """Statements of one function (the driver, or a Numba region), with names for vars."""

    def __init__(self, program, *, host: bool, module: ModuleText | None = None):
        self.program = program
        self.host = host
        self.module = module  # the Numba module this function lives in (regions)
        self.lines: list[tuple[int, str, Eqn | None]] = []
        self.names: dict[int, str] = {}
        self.layouts: dict[int, str] = {}  # "C", "A", or "S" (a scalar)
        self.consts: dict = {}  # literal key -> (name, Literal): region parameters
        self.depth = 1
        self.counter = 0
        self.used_kernels: dict[str, tuple] = {}
        self.dims: list[int] = []  # a region's sizes, passed in as z0, z1, ... (see `dim`)

    # -- naming ----------------------------------------------------------------------------
    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter - 1}"

    def bind(self, var: Var, name: str, layout: str):
        self.names[var.id] = name
        self.layouts[var.id] = "S" if var.aval.ndim == 0 else layout

    def define(self, var: Var, layout="C", prefix="v") -> str:
        name = self.fresh(prefix)
        self.bind(var, name, layout)
        return name

    def atom(self, a) -> str:
        if isinstance(a, Literal):
            return self.const(a)
        return self.names[a.id]

    def layout(self, a) -> str:
        return "S" if isinstance(a, Literal) or a.aval.ndim == 0 else self.layouts[a.id]

    def const(self, lit: Literal) -> str:
        if self.host:
            return self.program.host_const(lit)
        k = literal_key(lit)
        if k not in self.consts:
            self.consts[k] = (f"c{len(self.consts)}", lit)
        return self.consts[k][0]

    def dim(self, n) -> str:
        """A size that comes from a shape. The driver writes it as a number; a region takes
        it as a parameter, one per use (never merged by value: (3, 3) and (3, 4) must give
        the same text), so a new shape of the same rank reuses the compiled region."""
        if self.host:
            return str(int(n))
        self.dims.append(int(n))
        return f"z{len(self.dims) - 1}"

    def shape(self, shape) -> str:
        """A shape tuple, its sizes through `dim`."""
        return _shape_text([self.dim(d) for d in shape])

    def kernel_arg(self, a) -> str:
        """How a value is passed to a fused kernel: float16 as uint16 bits (arrays) or
        float32 (scalars), since Numba has no half type."""
        name = self.atom(a)
        if not is_half(a.aval.dtype):
            return name
        if not self.host:
            raise NotImplementedError("float16 values inside control flow")
        return f"{name}.view(np.uint16)" if a.aval.ndim else f"np.float32({name})"

    def contiguous(self, a) -> str:
        """`a` as a C-contiguous array (loop carries and branch results must have one type)."""
        name = self.atom(a)
        return name if self.layout(a) in ("C", "S") else f"np.ascontiguousarray({name})"

    # -- emission --------------------------------------------------------------------------
    def emit(self, text, eqn=None):
        self.lines.append((self.depth, text, eqn))

    @contextmanager
    def indent(self):
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def assign(self, var: Var, text: str, eqn, layout="C"):
        """`name = text` for one output var (rank-0 results cast to their exact dtype)."""
        if var.aval.ndim == 0 and self.host:
            text = f"{ctor(var.aval.dtype)}({text})"
        name = self.define(var, layout)
        self.emit(f"{name} = {text}", eqn)
        return name

    def render_eqns(self, eqns):
        for eqn in eqns:
            rule = statement_rule(eqn.primitive)
            if rule is None:
                raise NotImplementedError(
                    f"the CPU backend has no rule for primitive {eqn.primitive.name!r}")
            if self.host and self.program.timings is not None:
                self._timed_statements(rule, eqn)
            else:
                rule(self, eqn)

    def _timed_statements(self, rule, eqn):
        """profile=True: an equation the driver runs itself (a BLAS call, a copy; not a
        kernel call, which is timed where it is called) is bracketed by clock reads."""
        first, kernels = len(self.lines), len(self.program.kernels)
        rule(self, eqn)
        if len(self.program.kernels) != kernels or len(self.lines) == first:
            return
        depth = self.lines[first][0]
        key = f"host_{len(self.program.namespace)}"
        self.program.namespace[key] = (eqn,)
        self.lines.insert(first, (depth, "_t0 = _clock()", None))
        self.lines.append((depth, f"_timings.add({key!r}, {key}, _clock() - _t0)", None))

    def inline_jaxpr(self, jaxpr: Jaxpr, args) -> list[str]:
        """Render `jaxpr`'s equations here with its invars bound to `args` (atoms of the
        enclosing scope); returns the names of its outputs."""
        for v, a in zip(jaxpr.invars, args):
            if isinstance(a, Literal):
                self.bind(v, self.const(a), "S")
            else:
                self.bind(v, self.names[a.id], self.layout(a))
        self.render_eqns(jaxpr.eqns)
        return [self.atom(o) for o in jaxpr.outvars]

    def text(self, header: str, footer: str = "") -> tuple[str, dict]:
        lines = [header]
        line_eqns = {}
        for depth, text, eqn in self.lines:
            lines.append("    " * depth + text)
            if eqn is not None:
                line_eqns[len(lines)] = eqn
        if footer:
            lines.append(footer)
        if len(lines) == 1:
            lines.append("    pass")
        return "\n".join(lines) + "\n", line_eqns


def _shape_text(shape) -> str:
    return "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
