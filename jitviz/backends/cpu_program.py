"""Render a whole optimized program: a Python *driver* for the top level and Numba *region*
functions for control flow, one statement rule per primitive (`STATEMENTS`).

The driver allocates outputs with NumPy, calls the compiled kernels and does the free things
itself (reshapes, transposes and slices are NumPy views; `dot_general` is NumPy's BLAS).
A `cond`, `while` or `scan` becomes one Numba function whose body holds real `if`/`while`/
`for` statements (never unrolled) calling the fused kernels of its body; nested control flow
nests inside it. Rank-0 values are plain scalars everywhere, so a scalar `fori_loop` body is
a few register operations per iteration.

The same statement rules serve both contexts (`fb.host` tells them apart where it matters):
their text is valid NumPy and valid Numba.
"""
from __future__ import annotations

import math
import re
from contextlib import contextmanager

import numpy as np

from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..passes._ir import literal_key
from .cpu_kernels import ctor, is_half


class ModuleText:
    """A generated module: the header, then functions (each with its line -> eqn map)."""

    HEADER = ("# jitviz generated kernels. The file name is a hash of this text: do not edit.\n"
              "import numpy as np\n"
              "from numba import njit, prange, objmode\n"
              "from jitviz.backends import cpu_runtime as rt\n")

    def __init__(self, options: str):
        self.options = options  # the njit(...) arguments
        self.functions: list[tuple[str, str, dict, str]] = []  # name, text, lines, options
        self.extra_imports: set[str] = set()

    def add(self, name, text, line_eqns, *, parallel=False):
        opts = self.options + (", parallel=True" if parallel else "")
        self.functions.append((name, text, line_eqns, opts))

    def render(self):
        lines = self.HEADER.splitlines() + sorted(self.extra_imports)
        lines += _external_helpers("\n".join(f[1] for f in self.functions))
        line_eqns = {}
        for name, text, eqns, opts in self.functions:
            if "objmode" in text:  # object-mode blocks hold the GIL anyway
                opts = opts.replace(", nogil=True", "")
            lines += ["", "", f"@njit({opts})"]
            base = len(lines)
            lines += text.rstrip("\n").split("\n")
            line_eqns.update({base + k: e for k, e in eqns.items()})
        return "\n".join(lines) + "\n", line_eqns


def _external_helpers(text) -> list[str]:
    """Helpers other modules add to `cpu_runtime` (a primitive's own Numba function, e.g.
    jitviz.random's Threefry) are compiled into the kernels that call them, but live outside
    cpu_runtime.py and so outside the cache tag: name each with a hash of its source, which
    puts it in the module text, hence in the cache key."""
    import hashlib
    import inspect
    from . import cpu_runtime
    out = []
    for name in sorted(set(re.findall(r"\brt\.(\w+)", text))):
        fn = getattr(cpu_runtime, name, None)
        py = getattr(fn, "py_func", None)
        if py is None or py.__module__ == cpu_runtime.__name__:
            continue
        try:
            src = inspect.getsource(py)
        except (OSError, TypeError):
            src = repr(py.__code__.co_code)
        digest = hashlib.sha256(src.encode()).hexdigest()[:12]
        out.append(f"# rt.{name} is {py.__module__}.{py.__qualname__} (source {digest})")
    return out


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
        from .cpu_kernels import kernel_rule_names
        for eqn in eqns:
            rule = STATEMENTS.get(eqn.primitive.name)
            if rule is None and eqn.primitive.name in kernel_rule_names():
                rule = _unfused
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


def _alloc_text(fb, shape, dtype) -> str:
    """A new output array: large ones on the host come from the buffer pool."""
    from . import cpu_buffers
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    fn = "_empty" if fb.host and nbytes >= cpu_buffers.MIN_BYTES else "np.empty"
    return f"{fn}({fb.shape(shape)}, {ctor(dtype)})"


# --- fused kernels ---------------------------------------------------------------------------

def _fused(fb: FunctionBuilder, eqn: Eqn):
    body = eqn.params["jaxpr"].jaxpr
    callee, code = fb.program.kernel_for(fb, body, eqn.params["name"], eqn.invars)
    args = [fb.kernel_arg(a) for a in eqn.invars]
    for i in code.array_outs:
        v = eqn.outvars[i]
        name = fb.define(v, "C", prefix="o")
        fb.emit(f"{name} = {_alloc_text(fb, v.aval.shape, v.aval.dtype)}", eqn)
        args.append(fb.kernel_arg(v))
    args += [fb.kernel_arg(lit) for lit in code.consts]
    call = f"{callee}({', '.join(args)})"
    if not code.scalar_outs:
        fb.emit(call, eqn)
        return
    r = fb.fresh("r")
    fb.emit(f"{r} = {call}", eqn)
    for k, i in enumerate(code.scalar_outs):
        v = eqn.outvars[i]
        name = fb.define(v, "S")
        fb.emit(f"{name} = {ctor(v.aval.dtype)}({r}[{k}])", eqn)


# --- control flow ----------------------------------------------------------------------------

def _region_or(inline_rule):
    """At the top level a control-flow equation becomes its own Numba function (a region);
    inside one, it is rendered inline."""
    def rule(fb: FunctionBuilder, eqn: Eqn):
        if fb.host:
            fb.program.region_call(fb, eqn, inline_rule)
        else:
            inline_rule(fb, eqn)
    return rule


def _cond_inline(fb: FunctionBuilder, eqn: Eqn):
    branches = eqn.params["branches"]
    idx, ops = eqn.invars[0], eqn.invars[1:]
    outs = [fb.fresh("b") for _ in eqn.outvars]
    if len(branches) == 1:
        _branch(fb, branches[0], ops, outs, eqn)
    else:
        i = fb.atom(idx)
        for k, br in enumerate(branches):
            head = (f"if {i} <= 0:" if k == 0 else
                    "else:" if k == len(branches) - 1 else f"elif {i} == {k}:")
            fb.emit(head, eqn)
            with fb.indent():
                _branch(fb, br, ops, outs, eqn)
    for v, name in zip(eqn.outvars, outs):
        fb.bind(v, name, "C")


def _branch(fb, br: ClosedJaxpr, ops, outs, eqn):
    res = fb.inline_jaxpr(br.jaxpr, ops)
    for name, r, o in zip(outs, res, br.jaxpr.outvars):
        fb.emit(f"{name} = {fb.contiguous(o) if isinstance(o, Var) else r}", eqn)
    if not outs:
        fb.emit("pass", eqn)


def _while_inline(fb: FunctionBuilder, eqn: Eqn):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts = eqn.invars[:nc], eqn.invars[nc:nc + nb]
    init = eqn.invars[nc + nb:]
    carry = _start_carry(fb, eqn, init)
    fb.emit("while True:", eqn)
    with fb.indent():
        (pred,) = fb.inline_jaxpr(p["cond_jaxpr"].jaxpr, list(cconsts) + carry)
        fb.emit(f"if not {pred}:", eqn)
        with fb.indent():
            fb.emit("break", eqn)
        fb.inline_jaxpr(p["body_jaxpr"].jaxpr, list(bconsts) + carry)
        _update_carry(fb, eqn, carry, p["body_jaxpr"].jaxpr.outvars)
    for v, c in zip(eqn.outvars, carry):
        fb.bind(v, fb.names[c.id], "C")


def _start_carry(fb, eqn, init) -> list[Var]:
    """Loop-carried variables: fresh vars named in this scope, C-contiguous (one type)."""
    carry = []
    for a in init:
        v = Var(a.aval)
        name = fb.define(v, "C", prefix="w")
        fb.emit(f"{name} = {fb.contiguous(a)}", eqn)
        carry.append(v)
    return carry


def _update_carry(fb, eqn, carry, new):
    if not carry:
        return
    lhs = ", ".join(fb.names[c.id] for c in carry)
    rhs = ", ".join(fb.contiguous(o) for o in new)
    fb.emit(f"{lhs} = {rhs}", eqn)


def _scan_inline(fb: FunctionBuilder, eqn: Eqn):
    p = eqn.params
    n_c, n_k, length = p["num_consts"], p["num_carry"], p["length"]
    consts = eqn.invars[:n_c]
    xs = eqn.invars[n_c + n_k:]
    body = p["jaxpr"].jaxpr
    carry = _start_carry(fb, eqn, eqn.invars[n_c:n_c + n_k])
    ys = []
    for y in body.outvars[n_k:]:
        v = Var(y.aval.update(shape=(length,) + y.aval.shape))
        name = fb.define(v, "C", prefix="ys")
        fb.emit(f"{name} = np.empty({fb.shape(v.aval.shape)}, {ctor(v.aval.dtype)})", eqn)
        ys.append(v)
    step, i = fb.fresh("step"), fb.fresh("i")
    bound = (f"{fb.atom(xs[0])}.shape[0]" if xs and not isinstance(xs[0], Literal)
             else fb.dim(length))
    fb.emit(f"for {step} in range({bound}):", eqn)
    with fb.indent():
        fb.emit(f"{i} = {bound} - 1 - {step}" if p["reverse"] else f"{i} = {step}", eqn)
        x_slices = []
        for x in xs:
            v = Var(x.aval.update(shape=x.aval.shape[1:]))
            name = fb.define(v, fb.layout(x), prefix="x")
            fb.emit(f"{name} = {fb.atom(x)}[{i}]", eqn)
            x_slices.append(v)
        fb.inline_jaxpr(body, list(consts) + carry + x_slices)
        for yv, out in zip(ys, body.outvars[n_k:]):
            fb.emit(f"{fb.names[yv.id]}[{i}] = {fb.atom(out)}", eqn)
        _update_carry(fb, eqn, carry, body.outvars[:n_k])
    for v, c in zip(eqn.outvars, carry + ys):
        fb.bind(v, fb.names[c.id], "C")


def _jit_inline(fb: FunctionBuilder, eqn: Eqn):
    outs = fb.inline_jaxpr(eqn.params["jaxpr"].jaxpr, eqn.invars)
    for v, o, src in zip(eqn.outvars, outs, eqn.params["jaxpr"].jaxpr.outvars):
        fb.bind(v, o, fb.layout(src))


# --- structural operations -----------------------------------------------------------------

def _index_tuple(parts) -> str:
    return "[" + ", ".join(parts) + "]"


def _reshape_to(fb, x, out_shape, eqn, v):
    """Reshape (also squeeze): a view on the host; contiguous then reshaped in Numba."""
    src = fb.atom(x)
    if x.aval.ndim == 0:
        return fb.assign(v, f"np.full({fb.shape(out_shape)}, {src})" if out_shape else src,
                         eqn)
    if not out_shape:
        return fb.assign(v, f"np.ascontiguousarray({src}).reshape(1)[0]", eqn)
    if fb.host:
        return fb.assign(v, f"np.reshape({src}, {fb.shape(out_shape)})", eqn, "A")
    return fb.assign(v, f"{fb.contiguous(x)}.reshape({fb.shape(out_shape)})", eqn)


def _reshape(fb, eqn):
    _reshape_to(fb, eqn.invars[0], eqn.outvars[0].aval.shape, eqn, eqn.outvars[0])


def _transpose(fb, eqn):
    x, v = eqn.invars[0], eqn.outvars[0]
    if x.aval.ndim <= 1:
        return fb.assign(v, fb.atom(x), eqn, fb.layout(x))
    fb.assign(v, f"np.transpose({fb.atom(x)}, {tuple(eqn.params['permutation'])})", eqn, "A")


def _rev(fb, eqn):
    x, v = eqn.invars[0], eqn.outvars[0]
    dims = set(eqn.params["dimensions"])
    if x.aval.ndim == 0 or not dims:
        return fb.assign(v, fb.atom(x), eqn, fb.layout(x))
    parts = ["::-1" if d in dims else ":" for d in range(x.aval.ndim)]
    fb.assign(v, fb.atom(x) + _index_tuple(parts), eqn, "A")


def _slice(fb, eqn):
    x, v = eqn.invars[0], eqn.outvars[0]
    p = eqn.params
    strides = p["strides"] or (1,) * x.aval.ndim
    parts = [f"{fb.dim(s)}:{fb.dim(l)}:{st}" if st != 1 else f"{fb.dim(s)}:{fb.dim(l)}"
             for s, l, st in zip(p["start_indices"], p["limit_indices"], strides)]
    fb.assign(v, fb.atom(x) + _index_tuple(parts), eqn, "A")


def _clamped_starts(fb, x, starts, sizes, eqn):
    names = []
    for k, (s, z) in enumerate(zip(starts, sizes)):
        name = fb.fresh("s")
        fb.emit(f"{name} = min(max(int({fb.atom(s)}), 0), {fb.dim(x.aval.shape[k] - z)})", eqn)
        names.append(name)
    return names


def _dynamic_slice(fb, eqn):
    x, v = eqn.invars[0], eqn.outvars[0]
    sizes = eqn.params["slice_sizes"]
    if x.aval.ndim == 0:
        return fb.assign(v, fb.atom(x), eqn, "S")
    st = _clamped_starts(fb, x, eqn.invars[1:], sizes, eqn)
    parts = [f"{s}:{s} + {fb.dim(z)}" for s, z in zip(st, sizes)]
    fb.assign(v, fb.atom(x) + _index_tuple(parts), eqn, "A")


def _dynamic_update_slice(fb, eqn):
    x, upd, v = eqn.invars[0], eqn.invars[1], eqn.outvars[0]
    if x.aval.ndim == 0:
        return fb.assign(v, fb.atom(upd), eqn, "S")
    st = _clamped_starts(fb, x, eqn.invars[2:], upd.aval.shape, eqn)
    name = fb.assign(v, f"np.ascontiguousarray({fb.atom(x)}).copy()", eqn)
    parts = [f"{s}:{s} + {fb.dim(z)}" for s, z in zip(st, upd.aval.shape)]
    fb.emit(f"{name}{_index_tuple(parts)} = {fb.atom(upd)}", eqn)


def _concatenate(fb, eqn):
    parts = ", ".join(fb.contiguous(a) for a in eqn.invars)
    fb.assign(eqn.outvars[0], f"np.concatenate(({parts},), axis={eqn.params['dimension']})",
              eqn)


def _stack(fb, eqn):
    v = eqn.outvars[0]
    if eqn.invars[0].aval.ndim == 0:
        parts = ", ".join(fb.atom(a) for a in eqn.invars)
        return fb.assign(v, f"np.array([{parts}], dtype={ctor(v.aval.dtype)})", eqn)
    parts = ", ".join(fb.contiguous(a) for a in eqn.invars)
    fb.assign(v, f"np.stack(({parts},), axis={eqn.params['axis']})", eqn)


def _pre_mid_post(shape, lo, hi):
    return (math.prod(shape[:lo]), math.prod(shape[lo:hi]), math.prod(shape[hi:]))


def _flat_indices(fb, x, indices, axes, eqn, drop=False):
    """The rows of `x` viewed as (pre, prod(indexed dims), post) that a gather reads or a
    scatter writes, as one int64 vector (indices broadcast together). A gather clamps each
    index into range; a scatter (`drop`) marks a row with any index out of range -1, for
    the runtime to skip: the NumPy impl's semantics, and no access out of bounds."""
    bshape = np.broadcast_shapes(*[i.aval.shape for i in indices])
    full = bshape if bshape else (1,)
    lin = fb.fresh("lin")
    inside = fb.fresh("inside") if drop else None
    for k, (ind, ax) in enumerate(zip(indices, axes)):
        src, n = fb.atom(ind), fb.dim(x.aval.shape[ax])
        spread = (f"np.full({fb.shape(full)}, {src})" if ind.aval.ndim == 0
                  else f"np.broadcast_to({src}, {fb.shape(full)})")
        if drop:
            raw = fb.fresh("ix")
            fb.emit(f"{raw} = {spread}.astype(np.int64)", eqn)
            fits = f"({raw} >= 0) & ({raw} < {n})"
            fb.emit(f"{inside} = {fits}" if k == 0 else f"{inside} = {inside} & {fits}", eqn)
            part = raw
        else:
            part = f"np.clip({spread}, 0, {fb.dim(x.aval.shape[ax] - 1)}).astype(np.int64)"
        fb.emit(f"{lin} = {part}" if k == 0 else f"{lin} = {lin} * {n} + {part}", eqn)
    if drop:
        fb.emit(f"{lin} = np.where({inside}, {lin}, -1)", eqn)
    flat = fb.fresh("flat")
    fb.emit(f"{flat} = np.ascontiguousarray({lin}).reshape(-1)", eqn)
    return flat, bshape


def _gather(fb, eqn):
    x, indices, v = eqn.invars[0], eqn.invars[1:], eqn.outvars[0]
    axes = tuple(eqn.params["axes"])
    flat, _ = _flat_indices(fb, x, indices, axes, eqn)
    pre, mid, post = _pre_mid_post(x.aval.shape, axes[0], axes[-1] + 1)
    x3, o3 = fb.fresh("x3_"), fb.fresh("o3_")
    fb.emit(f"{x3} = {fb.contiguous(x)}.reshape({fb.shape((pre, mid, post))})", eqn)
    fb.emit(f"{o3} = np.empty(({fb.dim(pre)}, {flat}.shape[0], {fb.dim(post)}), "
            f"{ctor(v.aval.dtype)})", eqn)
    fb.emit(f"rt.gather3({x3}, {flat}, {o3})", eqn)
    _from_nd(fb, v, o3, 3, eqn)


def _from_nd(fb, v, arr, nd, eqn):
    """The result `v` read from a helper's (pre, ..., post) array `arr` of rank `nd`."""
    if v.aval.ndim == 0:
        fb.assign(v, f"{arr}[{', '.join(['0'] * nd)}]", eqn, "S")
    else:
        fb.assign(v, f"{arr}.reshape({fb.shape(v.aval.shape)})", eqn)


_SCATTER = {"set": "set", "add": "add", "mul": "mul", "max": "max", "min": "min"}
_SCATTER_BOOL = {"set": "set", "add": "or", "mul": "and", "max": "or", "min": "and"}


def _scatter(fb, eqn):
    x, upd, indices, v = eqn.invars[0], eqn.invars[1], eqn.invars[2:], eqn.outvars[0]
    axes, mode = tuple(eqn.params["axes"]), eqn.params["mode"]
    flat, bshape = _flat_indices(fb, x, indices, axes, eqn, drop=True)
    pre, mid, post = _pre_mid_post(x.aval.shape, axes[0], axes[-1] + 1)
    target = x.aval.shape[:axes[0]] + tuple(bshape) + x.aval.shape[axes[-1] + 1:]
    out = fb.assign(v, f"np.ascontiguousarray({fb.atom(x)}).copy()", eqn)
    u3 = fb.fresh("u3_")
    spread = (f"np.full({fb.shape(target)}, {fb.atom(upd)})" if upd.aval.ndim == 0 else
              f"np.ascontiguousarray(np.broadcast_to({fb.atom(upd)}, {fb.shape(target)}))")
    fb.emit(f"{u3} = {spread}.reshape(({fb.dim(pre)}, {flat}.shape[0], {fb.dim(post)}))", eqn)
    table = _SCATTER_BOOL if v.aval.dtype == np.bool_ else _SCATTER
    fb.emit(f"rt.scatter_{table[mode]}3({out}.reshape({fb.shape((pre, mid, post))}), {flat}, "
            f"{u3})", eqn)


def _arg_reduce(helper):
    def rule(fb, eqn):
        x, v = eqn.invars[0], eqn.outvars[0]
        (axis,) = eqn.params["axes"]
        pre, n, post = _pre_mid_post(x.aval.shape, axis, axis + 1)
        x3, o2 = fb.fresh("x3_"), fb.fresh("o2_")
        fb.emit(f"{x3} = {fb.contiguous(x)}.reshape({fb.shape((pre, n, post))})", eqn)
        fb.emit(f"{o2} = np.empty({fb.shape((pre, post))}, {ctor(v.aval.dtype)})", eqn)
        fb.emit(f"rt.{helper}({x3}, {o2})", eqn)
        _from_nd(fb, v, o2, 2, eqn)
    return rule


_CUMULATIVE = {"cumsum": "cumsum3", "cumprod": "cumprod3", "cummax": "cummax3",
               "cummin": "cummin3"}
_CUMULATIVE_BOOL = {"cummax": "cumor3", "cummin": "cumand3", "cumsum": "cumor3",
                    "cumprod": "cumand3"}


def _cumulative(fb, eqn):
    x, v = eqn.invars[0], eqn.outvars[0]
    if x.aval.ndim == 0:
        return fb.assign(v, fb.atom(x), eqn, "S")
    axis = eqn.params["axis"]
    pre, n, post = _pre_mid_post(x.aval.shape, axis, axis + 1)
    name = fb.assign(v, f"np.ascontiguousarray({fb.atom(x)}).copy()", eqn)
    table = _CUMULATIVE_BOOL if x.aval.dtype == np.bool_ else _CUMULATIVE
    fb.emit(f"rt.{table[eqn.primitive.name]}({name}.reshape({fb.shape((pre, n, post))}), "
            f"{bool(eqn.params['reverse'])})", eqn)


def _dot_general(fb, eqn):
    """Batched matrix product: operands permuted to (B, M, K) x (B, K, N) and multiplied by
    BLAS (NumPy's on the host, Numba's np.dot in a region; loops for integers)."""
    a, b, v = eqn.invars[0], eqn.invars[1], eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    sa, sb = a.aval.shape, b.aval.shape
    lf = [d for d in range(len(sa)) if d not in lc and d not in lb]
    rf = [d for d in range(len(sb)) if d not in rc and d not in rb]
    B = math.prod(sa[d] for d in lb)
    M, K = math.prod(sa[d] for d in lf), math.prod(sa[d] for d in lc)
    N = math.prod(sb[d] for d in rf)
    in_dt, out_dt = a.aval.dtype, v.aval.dtype
    a3 = _as_3d(fb, a, list(lb) + lf + list(lc), (B, M, K), eqn)
    b3 = _as_3d(fb, b, list(rb) + list(rc) + rf, (B, K, N), eqn)
    o3 = fb.fresh("o3_")
    if fb.host and B == 1:  # one product: exactly NumPy's np.dot (BLAS gemm)
        a2, b2 = f"{a3}.reshape({fb.shape((M, K))})", f"{b3}.reshape({fb.shape((K, N))})"
        fb.emit("with np.errstate(all='ignore'):", eqn)  # NaN/inf are values, not warnings
        with fb.indent():
            fb.emit(f"{o3} = np.dot({a2}, {b2}, out={_alloc_text(fb, (M, N), in_dt)})", eqn)
    elif fb.host:
        fb.emit("with np.errstate(all='ignore'):", eqn)
        with fb.indent():
            fb.emit(f"{o3} = np.matmul({a3}, {b3}, out={_alloc_text(fb, (B, M, N), in_dt)})",
                    eqn)
    else:
        helper = "matmul3_blas" if in_dt.kind in "fc" else "matmul3_loops"
        fb.emit(f"{o3} = np.empty({fb.shape((B, M, N))}, {ctor(in_dt)})", eqn)
        fb.emit(f"rt.{helper}({a3}, {b3}, {o3})", eqn)
    cast = f".astype({ctor(out_dt)})" if out_dt != in_dt else ""
    if v.aval.ndim == 0:
        fb.assign(v, f"{o3}.reshape(-1)[0]", eqn, "S")
    else:
        fb.assign(v, f"{o3}.reshape({fb.shape(v.aval.shape)}){cast}", eqn)


def _as_3d(fb, x, perm, shape3, eqn) -> str:
    name = fb.fresh("m")
    src = fb.atom(x)
    if x.aval.ndim == 0:
        fb.emit(f"{name} = np.full({fb.shape(shape3)}, {src})", eqn)
        return name
    if list(perm) != list(range(x.aval.ndim)):
        src = f"np.transpose({src}, {tuple(perm)})"
    fb.emit(f"{name} = np.ascontiguousarray({src}).reshape({fb.shape(shape3)})", eqn)
    return name


def _debug_print(fb, eqn):
    args = ", ".join(fb.atom(a) for a in eqn.invars)
    call = (f"_debug_emit({eqn.params['fmt']!r}, {tuple(eqn.params.get('names', ()))!r}, "
            f"({args}{',' if eqn.invars else ''}))")
    if fb.host:
        from ..debug import emit
        fb.program.namespace["_debug_emit"] = emit
        fb.emit(call, eqn)
        return
    # Numba: leave nopython for the print only, with the values typed as NumPy scalars
    fb.module.extra_imports.add("from jitviz.debug import emit as _debug_emit")
    fb.emit("with objmode():", eqn)
    with fb.indent():
        fb.emit(call, eqn)


def _unfused(fb, eqn):
    """An elementwise/reduction equation outside any `fused` (the fusion pass wraps them all;
    this serves pipelines that skip it): compiled as a one-equation kernel."""
    from ..core.fused import fused_p
    body = Jaxpr((), [Var(a.aval) for a in eqn.invars if isinstance(a, Var)], [], [])
    env = {a.id: v for a, v in zip([a for a in eqn.invars if isinstance(a, Var)],
                                   body.invars)}
    outs = [Var(v.aval) for v in eqn.outvars]
    inner = eqn.replace(invars=[env.get(a.id, a) if isinstance(a, Var) else a
                                for a in eqn.invars], outvars=outs)
    body = body.replace(eqns=[inner], outvars=outs)
    wrapped = Eqn(fused_p, [a for a in eqn.invars if isinstance(a, Var)], eqn.outvars,
                  {"name": eqn.primitive.name, "jaxpr": ClosedJaxpr(body, ())}, eqn.source)
    _fused(fb, wrapped)


STATEMENTS = {
    "fused": _fused,
    "cond": _region_or(_cond_inline), "while": _region_or(_while_inline),
    "scan": _region_or(_scan_inline), "jit": _jit_inline,
    "reshape": _reshape, "squeeze": _reshape, "transpose": _transpose, "rev": _rev,
    "slice": _slice, "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "concatenate": _concatenate,
    "stack": _stack, "gather": _gather, "scatter": _scatter,
    "argmax": _arg_reduce("argmax3"), "argmin": _arg_reduce("argmin3"),
    "cumsum": _cumulative, "cumprod": _cumulative, "cummax": _cumulative,
    "cummin": _cumulative, "dot_general": _dot_general, "debug_print": _debug_print,
}


def statement_rule_names() -> set[str]:
    return set(STATEMENTS)

