"""IR -> CUDA kernels: the plan (which equations share a kernel, which loops run on the host)
and the generated Python source of each `numba.cuda` kernel. Pure Python: no numba import,
so plans, sources and their tests work without the CUDA toolkit.

How the optimized jaxpr becomes kernels:

* Calls (`jit`) and the optimizer's `fused` equations are inlined first: the GPU draws its own
  kernel boundaries, because a kernel cannot wait for a reduction it computes itself (that
  needs a grid-wide barrier), so a CPU fusion group with a reduction feeding elementwise work
  becomes two launches here.
* Elementwise and index-remapping equations (broadcasts, reshapes, transposes, slices, gathers,
  concatenations, iota, selects, and reductions over at most `serial_reduce_max` elements) are
  "pulled": a kernel that needs `v[i, j]` renders `v`'s equation at that index, recursively,
  down to arrays in device memory. Only values that something needs as an array are stored
  (*materialized*): program outputs, operands of host steps and of matmuls, and values a kernel
  would otherwise recompute at two different indices. Materialized values of one shape that do
  not read each other at shifted indices share one grid-stride kernel.
* Kernel roots with their own templates: block tree reductions in shared memory (a second pass
  when one output is reduced by several blocks), a tiled shared-memory `dot_general`,
  cumulative scans (one thread per line), scatters (one thread per slice: deterministic and in
  NumPy's order).
* `cond`, `while` and `scan` whose bodies are elementwise run inside one kernel: one thread per
  element of the carry, the loop or branch in registers. Any other control flow runs on the host,
  with its bodies compiled as programs of their own.
* `jitviz.debug.print` at the top level prints on the host (exact Python formatting, after the
  preceding kernels); inside an in-kernel loop it is CUDA's `print` from the first thread.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field

import numpy as np

from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var, literal_value
from ..passes._ir import Subst, rename_jaxpr_copy
from . import cuda_ops as ops

# --- options ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What the generated kernels and launch configurations are sized for."""
    simulator: bool = False
    sm_count: int = 132  # H100 SXM when no device is there to ask
    max_threads: int = 1024
    threads: int = 256  # elementwise block size
    reduce_threads: int = 256  # block size of tree reductions (a power of two)
    tile: int = 16  # dot_general: tile x tile threads per block
    reg: int = 4  # dot_general: each thread computes reg x reg outputs
    dot_depth: int = 16  # dot_general: depth of the shared-memory operand tiles
    blocks_per_sm: int = 8
    serial_reduce_max: int = 32  # reductions this small are a loop inside the consumer
    max_grid: int = 65535

    @property
    def max_blocks(self) -> int:
        return max(1, self.sm_count * self.blocks_per_sm)


SIMULATOR_TARGET = Target(simulator=True, sm_count=1, threads=4, reduce_threads=4, tile=2,
                          reg=2, dot_depth=2, blocks_per_sm=2, serial_reduce_max=4)


# --- categories ------------------------------------------------------------------------------

STRUCTURAL_PULL = {"broadcast_in_dim", "reshape", "squeeze", "transpose", "rev", "slice",
                   "dynamic_slice", "dynamic_update_slice", "concatenate", "stack", "iota",
                   "gather"}
REDUCTIONS = set(ops.REDUCE_OPS) | {"argmax", "argmin"}
CONTROL = {"cond", "while", "scan"}
INLINED = {"jit", "fused"}

#: how each primitive is lowered (tests check that every registered primitive has an entry)
LOWERINGS: dict[str, str] = {
    **{name: "elementwise" for name in ops.ELEMENTWISE}, "select_n": "elementwise",
    **{name: "index remap (fused into its consumers)" for name in STRUCTURAL_PULL},
    **{name: "block tree reduction, or a loop in the consumer when small"
       for name in REDUCTIONS},
    **{name: "one thread per line" for name in ops.CUMULATIVE_OPS},
    "scatter": "one thread per slice, updates in order",
    "dot_general": "tiled shared-memory matmul",
    "cond": "branch in a kernel, or on the host", "while": "loop in a kernel, or on the host",
    "scan": "loop in a kernel, or on the host", "jit": "inlined", "fused": "inlined",
    "debug_print": "host print, or CUDA print inside a kernel",
}

_CHEAP = STRUCTURAL_PULL | {"convert_element_type"}


class Conflict(Exception):
    """A kernel cannot compute this here (needs another kernel or the host)."""


class _Materialize(Exception):
    def __init__(self, var):
        self.var = var


class _HostControl(Exception):
    def __init__(self, eqn):
        self.eqn = eqn


# --- flattening ------------------------------------------------------------------------------

class Flat:
    """A jaxpr with calls and `fused` equations inlined (fresh variables for inlined bodies)."""

    def __init__(self, invars, outvars, eqns, consts):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.consts = consts  # Var -> value of every constvar reachable here


def flatten(jaxpr: Jaxpr, consts: dict) -> Flat:
    """Inline the `jit` and `fused` equations of `jaxpr`, recursively (with the optimizer's
    `rename_jaxpr_copy`: fresh variables for each inlined body); `consts` maps constvars to
    values and receives the constants of inlined bodies."""
    eqns, env = _inline(jaxpr.eqns, consts)
    return Flat(jaxpr.invars, env.atoms(jaxpr.outvars), eqns, consts)


def _inline(eqns, consts):
    out, env = [], Subst()
    for e in eqns:
        e = env.eqn(e)
        body = e.params.get("jaxpr") if e.primitive.name in INLINED else None
        if not isinstance(body, ClosedJaxpr):
            out.append(e)
            continue
        consts.update(zip(body.jaxpr.constvars, body.consts))
        new, outs = rename_jaxpr_copy(body.jaxpr, e.invars)
        new, inner = _inline(new, consts)
        out.extend(n if n.source is not None else n.replace(source=e.source) for n in new)
        for v, o in zip(e.outvars, inner.atoms(outs)):
            env[v] = o
    return out, env


def _has_print(eqn) -> bool:
    if eqn.primitive.effectful:
        return True
    for p in eqn.params.values():
        for j in (p if isinstance(p, tuple) else (p,)):
            jj = j.jaxpr if isinstance(j, ClosedJaxpr) else j
            if isinstance(jj, Jaxpr) and any(_has_print(e) for e in jj.eqns):
                return True
    return False


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _reduced_size(eqn) -> int:
    shape = eqn.invars[0].aval.shape
    return _size([shape[a] for a in eqn.params["axes"]])


# --- kernels and programs --------------------------------------------------------------------

@dataclass
class KernelSpec:
    """One generated kernel: its source, its arguments and how it is launched."""
    name: str
    kind: str  # elementwise | control | reduce | dot | cumulative | scatter
    source: str
    inputs: list  # Vars read (device arrays in the program's environment)
    outputs: list  # Vars written (allocated flat and contiguous before the launch)
    grid: tuple
    block: tuple
    eqns: list
    elements: int  # outputs computed (for the cost estimate)

    def arg_types(self):
        """(dtype, ndim) of each argument as the kernel receives it (0-d arrays as 1-d)."""
        return [(v.aval.dtype, max(v.aval.ndim, 1)) for v in self.inputs] + \
               [(v.aval.dtype, 1) for v in self.outputs]


@dataclass
class KernelStep:
    kernel: KernelSpec


@dataclass
class HostPrint:
    eqn: Eqn
    atoms: list


@dataclass
class HostCond:
    eqn: Eqn
    index: object
    operands: list
    branches: list  # Programs
    outvars: list


@dataclass
class HostWhile:
    eqn: Eqn
    cond_consts: list
    body_consts: list
    init: list
    cond: "Program"
    body: "Program"
    outvars: list


@dataclass
class HostScan:
    eqn: Eqn
    consts: list
    init: list
    xs: list
    body: "Program"
    outvars: list
    length: int
    reverse: bool
    num_carry: int


@dataclass
class Program:
    invars: list
    outvars: list  # atoms
    consts: dict  # Var -> value
    steps: list = field(default_factory=list)
    release: list = field(default_factory=list)  # per step: values dead after it

    def kernels(self):
        """Every kernel of this program and of the programs its host loops run."""
        out = []
        for s in self.steps:
            if isinstance(s, KernelStep):
                out.append(s.kernel)
            elif isinstance(s, HostCond):
                for b in s.branches:
                    out.extend(b.kernels())
            elif isinstance(s, HostWhile):
                out.extend(s.cond.kernels() + s.body.kernels())
            elif isinstance(s, HostScan):
                out.extend(s.body.kernels())
        return out


# --- the renderer ----------------------------------------------------------------------------

class Renderer:
    """Emits the statements of one kernel: values at symbolic indices, memoized per scope."""

    def __init__(self, planner: "Planner", print_guard=None):
        self.planner = planner
        self.lines: list[str] = []
        self.ind = 1
        self.scopes: list[dict] = [{}]
        self.args: dict = {}  # Var -> argument name (arrays read)
        self.counter = 0
        self.requests: dict = {}  # top-level var -> set of index keys rendered at
        self.bound: dict = {}  # sub-jaxpr invar -> ("alias", atom, fn) | ("local", name, idx)
        self.members: set = set()  # vars this kernel itself writes (group members)
        self.print_guard = print_guard
        self.eqns: list = []  # equations rendered (for Kernel.eqns)
        self._eqn_ids: set = set()

    # -- bookkeeping -------------------------------------------------------------------------
    def emit(self, line: str):
        self.lines.append("    " * self.ind + line)

    def fresh(self, prefix="t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def lookup(self, key):
        for s in reversed(self.scopes):
            if key in s:
                return s[key]
        return None

    def remember(self, key, name):
        self.scopes[-1][key] = name

    def snapshot(self):
        # the indent too: a Conflict can be raised inside a loop body a rule opened
        return (len(self.lines), self.ind, [dict(s) for s in self.scopes], dict(self.args),
                self.counter, {k: set(v) for k, v in self.requests.items()},
                set(self.members), list(self.eqns), set(self._eqn_ids))

    def restore(self, snap):
        (n, ind, scopes, args, counter, requests, members, eqns, eqn_ids) = snap
        del self.lines[n:]
        self.ind, self.scopes, self.args, self.counter = ind, scopes, args, counter
        self.requests, self.members, self.eqns, self._eqn_ids = requests, members, eqns, eqn_ids

    def note_eqn(self, eqn):
        if id(eqn) not in self._eqn_ids:
            self._eqn_ids.add(id(eqn))
            self.eqns.append(eqn)

    def arg(self, var) -> str:
        name = self.args.get(var)
        if name is None:
            self.planner.need(var)
            name = self.args[var] = f"a{len(self.args)}"
        return name

    # -- index helpers -------------------------------------------------------------------------
    def decompose(self, flat: str, shape, prefix="i") -> list:
        """Multi-index of flat position `flat` in C order (locals; "0" for unit dims)."""
        comps = ["0"] * len(shape)
        big = [k for k, d in enumerate(shape) if d != 1]
        rest = flat
        for pos, k in enumerate(reversed(big)):
            if pos == len(big) - 1:
                if rest == flat and not rest.isidentifier():
                    name = self.fresh(prefix)
                    self.emit(f"{name} = {rest}")
                    rest = name
                comps[k] = rest
            else:
                name = self.fresh(prefix)
                self.emit(f"{name} = {rest} % {shape[k]}")
                comps[k] = name
                q = self.fresh("q")
                self.emit(f"{q} = {rest} // {shape[k]}")
                rest = q
        return comps

    def linear(self, idx, shape) -> str:
        """The flat C-order position of multi-index `idx` in `shape` (an expression)."""
        expr = None
        for comp, d in zip(idx, shape):
            if expr is None:
                expr = comp
            elif d == 1:
                continue
            else:
                expr = f"({expr}) * {d} + {comp}" if expr != "0" else comp
        return expr if expr is not None else "0"

    def index_local(self, expr: str) -> str:
        if expr.isidentifier() or expr.lstrip("-").isdigit():
            return expr
        key = ("idx", expr)
        name = self.lookup(key)
        if name is None:
            name = self.fresh("j")
            self.emit(f"{name} = {expr}")
            self.remember(key, name)
        return name

    # -- values ----------------------------------------------------------------------------------
    def value(self, atom, idx) -> str:
        """An expression (a local or a literal) for `atom` at index `idx` (tuple of str)."""
        idx = tuple(idx)
        if isinstance(atom, Literal):
            return ops.literal(literal_value(atom)[()], atom.aval.dtype)
        b = self.bound.get(atom)
        if b is not None:
            if b[0] == "alias":
                return self.value(b[1], b[2](idx))
            if tuple(b[2]) != idx:
                raise Conflict(f"a loop carry is read at another element ({idx} vs {b[2]})")
            return b[1]
        key = (atom, idx)
        hit = self.lookup(key)
        if hit is not None:
            return hit
        if atom in self.members:
            raise Conflict("a value this kernel writes is read at another index")
        if self.planner.is_array(atom):
            a = self.arg(atom)
            name = self.fresh()
            where = ", ".join(idx) if idx else "0"
            self.emit(f"{name} = {a}[{where}]")
            self.remember(key, name)
            return name
        eqn = self.planner.producer.get(atom)
        if eqn is None:
            raise AssertionError(f"no producer for {atom!r}")
        if atom in self.planner.top_vars and eqn.primitive.name not in _CHEAP:
            seen = self.requests.setdefault(atom, set())
            seen.add(idx)
            if len(seen) > 1:
                raise _Materialize(atom)
        name = self.render_eqn(eqn, atom, idx)
        self.remember(key, name)
        return name

    # -- equations ---------------------------------------------------------------------------
    def render_eqn(self, eqn, out, idx) -> str:
        name = eqn.primitive.name
        self.note_eqn(eqn)
        av = out.aval
        if name in CONTROL:
            return self.render_control(eqn, out, idx)
        if name == "select_n":
            return self.render_select(eqn, idx)
        if name in ops.ELEMENTWISE:
            args = [self.value(a, self.operand_index(a, av.shape, idx)) for a in eqn.invars]
            expr = ops.elementwise_expr(name, args, [a.aval.dtype for a in eqn.invars],
                                        av.dtype, eqn.params)
            t = self.fresh()
            self.emit(f"{t} = {expr}")
            return t
        method = getattr(self, "pull_" + name, None)
        if method is None:
            if name in REDUCTIONS:
                return self.serial_reduce(eqn, idx)
            raise Conflict(f"{name} cannot be computed inside this kernel")
        return method(eqn, idx)

    @staticmethod
    def operand_index(a, out_shape, idx):
        shape = a.aval.shape
        if not shape:
            return ()
        return tuple("0" if d == 1 else i for d, i in zip(shape, idx))

    def _assign_branches(self, conds, renderers, dtype) -> str:
        """`t = <value of the first branch whose condition holds>` as if/elif/else."""
        t = self.fresh()
        for k, (cond, render) in enumerate(zip(conds, renderers)):
            head = "if" if k == 0 else "elif"
            self.emit(f"{head} {cond}:" if cond is not None else "else:")
            self.ind += 1
            self.push()
            v = render()
            self.emit(f"{t} = {v}")
            self.pop()
            self.ind -= 1
        return t

    def render_select(self, eqn, idx):
        which, *cases = eqn.invars
        av = eqn.outvars[0].aval
        w = self.value(which, self.operand_index(which, av.shape, idx))
        rend = [(lambda c=c: self.value(c, self.operand_index(c, av.shape, idx))) for c in cases]
        if which.aval.dtype == np.bool_:
            if len(cases) == 1:
                return rend[0]()
            return self._assign_branches([w, None], [rend[1], rend[0]], av.dtype)
        n = len(cases)
        if n == 1:
            return rend[0]()
        conds = [f"{w} <= 0"] + [f"{w} == {k}" for k in range(1, n - 1)] + [None]
        return self._assign_branches(conds, rend, av.dtype)

    # -- index remaps ------------------------------------------------------------------------
    def pull_broadcast_in_dim(self, eqn, idx):
        x = eqn.invars[0]
        dims = eqn.params["broadcast_dimensions"]
        j = tuple("0" if x.aval.shape[k] == 1 else idx[d] for k, d in enumerate(dims))
        return self.value(x, j)

    def pull_reshape(self, eqn, idx):
        x = eqn.invars[0]
        src, dst = x.aval.shape, eqn.outvars[0].aval.shape
        big_src = [d for d in src if d != 1]
        big_dst = [(d, i) for d, i in zip(dst, idx) if d != 1]
        if big_src == [d for d, _ in big_dst]:
            it = iter(i for _, i in big_dst)
            return self.value(x, tuple("0" if d == 1 else next(it) for d in src))
        flat = self.index_local(self.linear(idx, dst))
        return self.value(x, self.decompose(flat, src, "r"))

    def pull_squeeze(self, eqn, idx):
        x = eqn.invars[0]
        dims = set(eqn.params["dimensions"])
        it = iter(idx)
        return self.value(x, tuple("0" if k in dims else next(it)
                                   for k in range(x.aval.ndim)))

    def pull_transpose(self, eqn, idx):
        perm = eqn.params["permutation"]
        j = [None] * len(perm)
        for k, p in enumerate(perm):
            j[p] = idx[k]
        return self.value(eqn.invars[0], tuple(j))

    def pull_rev(self, eqn, idx):
        x = eqn.invars[0]
        dims = set(eqn.params["dimensions"])
        j = tuple(self.index_local(f"{x.aval.shape[k] - 1} - {i}") if k in dims and
                  x.aval.shape[k] != 1 else i for k, i in enumerate(idx))
        return self.value(x, j)

    def pull_slice(self, eqn, idx):
        p = eqn.params
        strides = p["strides"] or (1,) * len(idx)
        j = []
        for s, st, i in zip(p["start_indices"], strides, idx):
            e = i if st == 1 else f"{i} * {st}"
            e = e if s == 0 else f"{s} + {e}"
            j.append(self.index_local(e) if i != "0" or s else "0")
        return self.value(eqn.invars[0], tuple(j))

    def _starts(self, shape, starts, sizes):
        out = []
        for s, d, z in zip(starts, shape, sizes):
            v = self.value(s, ())
            out.append(self.index_local(f"min(max(np.int64({v}), 0), {d - z})"))
        return out

    def pull_dynamic_slice(self, eqn, idx):
        x, *starts = eqn.invars
        st = self._starts(x.aval.shape, starts, eqn.params["slice_sizes"])
        j = tuple(self.index_local(f"{s} + {i}") if s != "0" else i for s, i in zip(st, idx))
        return self.value(x, j)

    def pull_dynamic_update_slice(self, eqn, idx):
        x, u, *starts = eqn.invars
        ushape = u.aval.shape
        st = self._starts(x.aval.shape, starts, ushape)
        if not idx:
            return self.value(u, ())
        inside = " and ".join(f"{s} <= {i} < {s} + {z}" for s, i, z in zip(st, idx, ushape))

        def upd():
            return self.value(u, tuple(self.index_local(f"{i} - {s}") for s, i in zip(st, idx)))
        return self._assign_branches([inside, None], [upd, lambda: self.value(x, idx)],
                                     x.aval.dtype)

    def pull_concatenate(self, eqn, idx):
        dim = eqn.params["dimension"]
        conds, rends, off = [], [], 0
        for k, a in enumerate(eqn.invars):
            n = a.aval.shape[dim]
            if n == 0:
                continue
            j = list(idx)
            j[dim] = self.index_local(f"{idx[dim]} - {off}") if off else idx[dim]
            rends.append(lambda a=a, j=tuple(j): self.value(a, j))
            off += n
            conds.append(f"{idx[dim]} < {off}")
        conds[-1] = None
        if len(rends) == 1:
            return rends[0]()
        return self._assign_branches(conds, rends, eqn.outvars[0].aval.dtype)

    def pull_stack(self, eqn, idx):
        axis = eqn.params["axis"]
        rest = idx[:axis] + idx[axis + 1:]
        n = len(eqn.invars)
        if n == 1:
            return self.value(eqn.invars[0], rest)
        conds = [f"{idx[axis]} == {k}" for k in range(n - 1)] + [None]
        rends = [(lambda a=a: self.value(a, rest)) for a in eqn.invars]
        return self._assign_branches(conds, rends, eqn.outvars[0].aval.dtype)

    def pull_iota(self, eqn, idx):
        t = self.fresh()
        dt = eqn.params["dtype"]
        i = idx[eqn.params["dimension"]]
        self.emit(f"{t} = {ops.cast(i, np.int64, dt)}")
        return t

    def pull_gather(self, eqn, idx):
        x, *indices = eqn.invars
        axes = eqn.params["axes"]
        bshape = np.broadcast_shapes(*[i.aval.shape for i in indices])
        nb = len(bshape)
        a0 = axes[0]
        pre, b, post = idx[:a0], idx[a0:a0 + nb], idx[a0 + nb:]
        picked = []
        for ind, ax in zip(indices, axes):
            s = ind.aval.shape
            comps = b[nb - len(s):] if s else ()
            comps = tuple("0" if d == 1 else c for d, c in zip(s, comps))
            v = self.value(ind, comps)
            picked.append(self.index_local(
                f"min(max(np.int64({v}), 0), {x.aval.shape[ax] - 1})"))
        return self.value(x, tuple(pre) + tuple(picked) + tuple(post))

    # -- small reductions as loops -------------------------------------------------------------
    def serial_reduce(self, eqn, idx):
        x = eqn.invars[0]
        name = eqn.primitive.name
        shape = x.aval.shape
        axes = tuple(eqn.params["axes"])
        rshape = [shape[a] for a in axes]
        R = _size(rshape)
        dt = x.aval.dtype
        it = iter(idx)
        kept = {a: next(it) for a in range(len(shape)) if a not in axes}
        if name in ("argmax", "argmin"):
            bv, bi = self.fresh("bv"), self.fresh("bi")
            r = self.fresh("r")
            _start_acc(self, name, dt, True, bv, bi)
            self.emit(f"for {r} in range({R}):")
            self.ind += 1
            self.push()
            full = self._full_index(shape, axes, kept, self.decompose(r, rshape, "r"))
            v = self.value(x, full)
            self.emit(f"if {bi} < 0 or {arg_better(name, v, bv, dt)}:")
            self.emit(f"    {bv} = {v}")
            self.emit(f"    {bi} = {r}")
            self.pop()
            self.ind -= 1
            t = self.fresh()
            self.emit(f"{t} = {ops.ctor(eqn.params['index_dtype'])}({bi})")
            return t
        op = ops.REDUCE_OPS[name]
        acc = self.fresh("acc")
        _start_acc(self, name, dt, False, acc)
        if R:
            r = self.fresh("r")
            self.emit(f"for {r} in range({R}):")
            self.ind += 1
            self.push()
            full = self._full_index(shape, axes, kept, self.decompose(r, rshape, "r"))
            v = self.value(x, full)
            self.emit(f"{acc} = {ops.combine(op, acc, v, dt)}")
            self.pop()
            self.ind -= 1
        return acc

    @staticmethod
    def _full_index(shape, axes, kept, rcomps):
        rit = iter(rcomps)
        out = []
        for a in range(len(shape)):
            out.append(next(rit) if a in axes else kept[a])
        return tuple(out)

    # -- control flow inside a kernel --------------------------------------------------------
    def control_space(self, eqn):
        """The element shape one thread's loop/branch covers (all array outputs share it)."""
        outs = eqn.outvars
        nc = _carry_count(eqn)
        shapes = {v.aval.shape for v in outs[:nc] if v.aval.ndim} | \
                 {v.aval.shape[1:] for v in outs[nc:] if v.aval.ndim > 1}
        if len(shapes) > 1:
            raise Conflict("loop carries of different shapes")
        return shapes.pop() if shapes else ()

    def render_control(self, eqn, out, idx, sinks=None):
        """All outputs of a control-flow equation at element `idx` of its space; returns the
        local of `out` (or the list of locals when `out` is None)."""
        space = self.control_space(eqn)
        if out is not None:
            k = eqn.outvars.index(out)
            if k >= _carry_count(eqn):
                raise Conflict("scan outputs stacked over steps need their own kernel")
            if out.aval.ndim == 0 and space:
                raise Conflict("a scalar result of a loop over arrays")
        eidx = tuple(idx) if space else ()
        key = ("control", id(eqn), eidx)
        names = self.lookup(key)
        if names is None:
            method = {"cond": self._cond, "while": self._while, "scan": self._scan}
            names = method[eqn.primitive.name](eqn, eidx, sinks)
            self.remember(key, names)
        return names if out is None else names[eqn.outvars.index(out)]

    def _at(self, av, eidx):
        return eidx if av.ndim else ()

    def _body(self, closed: ClosedJaxpr, bindings, out_avals, eidx, extra_out=None):
        """Render a sub-jaxpr's outputs (and its prints) with its invars bound."""
        flat = self.planner.flat_of(closed)
        for v, b in zip(flat.invars, bindings):
            self.bound[v] = b
        outs = []
        for a in flat.outvars:
            outs.append(self.value(a, self._at(a.aval, eidx)))
        for e in flat.eqns:
            if _has_print(e):
                if e.primitive.effectful:
                    self.render_print(e)
                else:
                    self.render_control(e, None, eidx if self.control_space(e) else ())
        return outs

    def render_print(self, eqn):
        self.note_eqn(eqn)
        if self.print_guard is None:
            raise Conflict("a print inside this kind of kernel")
        vals = []
        for a in eqn.invars:
            if a.aval.ndim:
                raise Conflict("printing an array inside a kernel")
            vals.append(self.value(a, ()))
        pieces = cuda_print_args(eqn.params["fmt"], eqn.params["names"], vals)
        self.emit(f"if {self.print_guard}:")
        self.emit(f"    print({', '.join(pieces)})")

    def _alias(self, atom, prefix=None):
        if prefix is None:
            return ("alias", atom, lambda i: i)
        return ("alias", atom, lambda i, p=prefix: (p,) + tuple(i))

    def _cond(self, eqn, eidx, sinks):
        index, *ops_ = eqn.invars
        branches = eqn.params["branches"]
        b = self.value(index, ())
        outs = [self.fresh("c") for _ in eqn.outvars]
        n = len(branches)
        for k, br in enumerate(branches):
            if n == 1:
                head = None
            elif k == 0:
                head = f"if {b} <= 0:"
            elif k == n - 1:
                head = "else:"
            else:
                head = f"elif {b} == {k}:"
            if head:
                self.emit(head)
                self.ind += 1
            self.push()
            vals = self._body(br, [self._alias(a) for a in ops_],
                              [v.aval for v in eqn.outvars], eidx)
            for o, v in zip(outs, vals):
                self.emit(f"{o} = {v}")
            self.pop()
            if head:
                self.ind -= 1
        return outs

    def _while(self, eqn, eidx, sinks):
        p = eqn.params
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        cconsts, bconsts = eqn.invars[:nc], eqn.invars[nc:nc + nb]
        init = eqn.invars[nc + nb:]
        carries = []
        for a, v in zip(init, eqn.outvars):
            c = self.fresh("c")
            self.emit(f"{c} = {self.value(a, self._at(v.aval, eidx))}")
            carries.append(c)
        locals_ = [("local", c, self._at(v.aval, eidx)) for c, v in zip(carries, eqn.outvars)]
        self.emit("while True:")
        self.ind += 1
        self.push()
        (pred,) = self._body(p["cond_jaxpr"], [self._alias(a) for a in cconsts] + locals_,
                             None, eidx)
        self.emit(f"if not {pred}:")
        self.emit("    break")
        new = self._body(p["body_jaxpr"], [self._alias(a) for a in bconsts] + locals_,
                         None, eidx)
        if carries:
            self.emit(f"{', '.join(carries)} = {', '.join(new)}")
        self.pop()
        self.ind -= 1
        return carries

    def _scan(self, eqn, eidx, sinks):
        p = eqn.params
        ncst, nc, length = p["num_consts"], p["num_carry"], p["length"]
        consts = eqn.invars[:ncst]
        init = eqn.invars[ncst:ncst + nc]
        xs = eqn.invars[ncst + nc:]
        carries = []
        for a, v in zip(init, eqn.outvars[:nc]):
            c = self.fresh("c")
            self.emit(f"{c} = {self.value(a, self._at(v.aval, eidx))}")
            carries.append(c)
        locals_ = [("local", c, self._at(v.aval, eidx))
                   for c, v in zip(carries, eqn.outvars[:nc])]
        step, s = self.fresh("step"), self.fresh("s")
        self.emit(f"for {step} in range({length}):")
        self.ind += 1
        self.push()
        self.emit(f"{s} = {length - 1} - {step}" if p["reverse"] else f"{s} = {step}")
        new = self._body(p["jaxpr"], [self._alias(a) for a in consts] + locals_ +
                         [self._alias(x, s) for x in xs], None, eidx)
        if sinks is not None:
            for k, v in enumerate(eqn.outvars[nc:]):
                store = sinks.get(nc + k)
                if store is not None:
                    store(s, new[nc + k], v.aval)
        if carries:
            self.emit(f"{', '.join(carries)} = {', '.join(new[:nc])}")
        self.pop()
        self.ind -= 1
        return carries + [None] * (len(eqn.outvars) - nc)


def _carry_count(eqn) -> int:
    """How many leading outputs of a control-flow equation hold one final value each (its
    carries, or a cond's results): all of them, except for `scan`, whose outputs after its
    `num_carry` carries are stacked over the steps (a leading axis of `length`). Those are
    written as the steps run, so their element space is their shape without that axis and they
    cannot be read back as one value of the loop."""
    return eqn.params["num_carry"] if eqn.primitive.name == "scan" else len(eqn.outvars)


def _start_acc(r, name, dt, arg, acc="acc", acci="acci"):
    """Emit the start of a reduction's accumulator `acc`: the monoid's identity, or for
    argmax/argmin a placeholder value with position `acci = -1` (no candidate yet, so the
    first one wins)."""
    if arg:
        r.emit(f"{acc} = {ops.literal(0, dt)}")
        r.emit(f"{acci} = -1")
    else:
        r.emit(f"{acc} = {ops.identity(ops.REDUCE_OPS[name], dt)}")


def _merge_into(r, name, dt, arg, v, vi, acc, acci):
    """Emit the merge of a partial result (`v`, at position `vi` for argmax/argmin) into
    (`acc`, `acci`): take the other (value, index) pair if it is better (`arg_better_pair`),
    else combine the values with the reduction's monoid (`vi`, `acci` unused)."""
    if arg:
        r.emit(f"if {arg_better_pair(name, v, vi, acc, acci, dt)}:")
        r.emit(f"    {acc} = {v}")
        r.emit(f"    {acci} = {vi}")
    else:
        r.emit(f"{acc} = {ops.combine(ops.REDUCE_OPS[name], acc, v, dt)}")


def arg_better(name, v, best, dtype) -> str:
    """Does candidate `v` (at a later position) beat `best` for argmax/argmin? NumPy: the
    first NaN wins, else the first extreme value."""
    cmp = ">" if name == "argmax" else "<"
    if np.dtype(dtype).kind in "fc":
        return f"(({v} != {v}) and not ({best} != {best})) or " \
               f"(not ({best} != {best}) and {v} {cmp} {best})"
    return f"{v} {cmp} {best}"


def arg_better_pair(name, v, vi, best, bi, dtype) -> str:
    """As `arg_better`, for candidates from anywhere: ties go to the lower position."""
    cmp = ">" if name == "argmax" else "<"
    if np.dtype(dtype).kind in "fc":
        return (f"({bi} < 0) or ({vi} >= 0 and ((({v} != {v}) and not ({best} != {best})) or "
                f"(({v} != {v}) and ({best} != {best}) and {vi} < {bi}) or "
                f"(not ({v} != {v}) and not ({best} != {best}) and ({v} {cmp} {best} or "
                f"({v} == {best} and {vi} < {bi})))))")
    return (f"({bi} < 0) or ({vi} >= 0 and ({v} {cmp} {best} or "
            f"({v} == {best} and {vi} < {bi})))")


def cuda_print_args(fmt, names, vals) -> list:
    """`print(...)` arguments for `fmt.format(*vals)`: CUDA's print joins its arguments with
    spaces and formats numbers as printf does (`%f`, `%lld`); format specs are dropped."""
    n_pos = len(vals) - len(names)
    kw = dict(zip(names, vals[n_pos:]))
    out, auto = [], 0
    for text, field_name, spec, conv in string.Formatter().parse(fmt):
        if text:
            t = text
            if out:
                t = t[1:] if t.startswith(" ") else t
            t = t[:-1] if t.endswith(" ") and field_name is not None else t
            if t:
                out.append(repr(t))
        if field_name is None:
            continue
        if field_name == "":
            out.append(vals[auto])
            auto += 1
        elif field_name.isdigit():
            out.append(vals[int(field_name)])
        else:
            out.append(kw[field_name])
    return out or ["''"]


# --- the planner -----------------------------------------------------------------------------

class _Group:
    """An open kernel that more values of its shape can join: an elementwise grid-stride
    loop, or the end of a reduction kernel (its epilogue, at the reduction's output index)."""

    def __init__(self, planner, shape, kind="elementwise", r=None, idx=None, flat="i",
                 head=None, grid=None, block=None, tail=(), n=None):
        self.shape = tuple(shape)
        self.kind = kind
        self.n = _size(self.shape) if n is None else n
        if r is None:
            r = Renderer(planner, print_guard="i == 0")
            r.ind = 2
            idx = r.decompose("i", self.shape)
            head = ["for i in range(cuda.grid(1), %d, cuda.gridsize(1)):" % self.n]
            grid, block = planner._grid1(self.n), planner._block1(self.n)
        self.r = r
        self.idx = tuple(idx)
        self.flat = flat
        self.head = head
        self.grid, self.block = grid, block
        self.tail = list(tail)  # (indent, line) after the stores
        self.outputs: list = []  # (var, local)


class Planner:
    """Turns a jaxpr into a Program: kernel launches and host steps, in order."""

    def __init__(self, jaxpr: Jaxpr, consts: dict, target: Target, name: str = "k",
                 shared=None):
        self.target = target
        self.name = name
        self.shared = shared if shared is not None else {"count": 0, "flat": {}}
        self.flat = flatten(jaxpr, consts)
        self.consts = consts
        self.producer: dict = {}
        self.top_vars: set = set()
        for e in self.flat.eqns:
            for v in e.outvars:
                self.producer[v] = e
                self.top_vars.add(v)
        self.force: set = set()
        self.host: set = set()

    # -- sub-jaxprs (bodies rendered inside kernels) --------------------------------------------
    def flat_of(self, closed: ClosedJaxpr) -> Flat:
        memo = self.shared["flat"]
        f = memo.get(id(closed))
        if f is None:
            consts = dict(zip(closed.jaxpr.constvars, closed.consts))
            f = flatten(closed.jaxpr, consts)
            self.consts.update(consts)
            memo[id(closed)] = (f, closed)  # keep `closed` alive: the key is its id
        else:
            f = f[0]
        for e in f.eqns:
            for v in e.outvars:
                self.producer.setdefault(v, e)
        return f

    # -- classification --------------------------------------------------------------------
    def category(self, eqn) -> str:
        name = eqn.primitive.name
        if name in ops.ELEMENTWISE or name == "select_n" or name in STRUCTURAL_PULL:
            return "pull"
        if name in REDUCTIONS:
            r = _reduced_size(eqn)
            return "pull" if r <= self.target.serial_reduce_max else "reduce"
        if name in ops.CUMULATIVE_OPS:
            return "cumulative"
        if name == "scatter":
            return "scatter"
        if name == "dot_general":
            return "dot"
        if name in CONTROL:
            return "host" if eqn in self.host else "control"
        if name == "debug_print":
            return "print"
        raise NotImplementedError(f"the CUDA backend has no lowering for {name}")

    def is_array(self, var) -> bool:
        """Does `var` live in device memory when kernels read it?"""
        return var not in self.producer or var in self.mat

    def _cheap(self, var, seen=None) -> bool:
        if self.is_array(var):
            return True
        e = self.producer[var]
        if e.primitive.name not in _CHEAP:
            return False
        return all(self._cheap(a) for a in e.invars if isinstance(a, Var))

    # -- planning ----------------------------------------------------------------------------
    def plan(self) -> Program:
        for _ in range(10000):
            try:
                return self._plan()
            except _Materialize as m:
                if m.var in self.force:
                    raise AssertionError(f"{m.var} materialized twice") from None
                self.force.add(m.var)
            except _HostControl as h:
                if h.eqn in self.host:
                    raise AssertionError("control flow moved to the host twice") from None
                self.host.add(h.eqn)
        raise AssertionError("the CUDA planner did not converge")

    def _live(self):
        live = {a for a in self.flat.outvars if isinstance(a, Var)}
        keep = []
        for e in reversed(self.flat.eqns):
            if any(v in live for v in e.outvars) or _has_print(e):
                keep.append(e)
                live.update(a for a in e.invars if isinstance(a, Var))
        return list(reversed(keep))

    def _plan(self) -> Program:
        eqns = self._live()
        self.mat = set(self.force)
        for a in self.flat.outvars:
            if isinstance(a, Var) and a in self.producer:
                self.mat.add(a)
        for e in eqns:
            cat = self.category(e)
            if cat != "pull":
                self.mat.update(e.outvars)
            if cat in ("host", "print"):
                self.mat.update(a for a in e.invars if isinstance(a, Var) and
                                a in self.producer)
        for e in eqns:
            if self.category(e) == "dot":
                for a in e.invars:
                    if isinstance(a, Var) and not self._cheap(a):
                        self.mat.add(a)
        self.program = Program(self.flat.invars, self.flat.outvars, self.consts)
        self.available = set(self.flat.invars) | set(self.consts)
        self.open: dict = {}  # shape -> _Group
        self.owner: dict = {}  # var -> open _Group computing it
        for e in eqns:
            cat = self.category(e)
            if cat == "pull":
                for v in e.outvars:
                    if v in self.mat:
                        self._add_member(v)
            elif cat == "print":
                self.flush_all()
                for a in e.invars:
                    if isinstance(a, Var):
                        self.need(a)
                self.program.steps.append(HostPrint(e, list(e.invars)))
            elif cat == "host":
                for a in e.invars:
                    if isinstance(a, Var):
                        self.need(a)
                self.flush_all()  # effects inside the loop come after earlier kernels' prints
                self.program.steps.append(self._host_step(e))
                self.available.update(e.outvars)
            elif cat == "control":
                self._control_kernel(e)
            else:
                getattr(self, "_root_" + cat)(e)
        self.flush_all()
        _plan_release(self.program)
        return self.program

    # -- groups of materialized elementwise values ------------------------------------------------
    def need(self, var):
        """`var` is about to be read by a kernel or host step: make sure it is computed."""
        g = self.owner.get(var)
        if g is not None:
            self._flush(g)

    def _add_member(self, v):
        shape = v.aval.shape
        g = self.open.get(shape)
        if g is not None:
            snap = g.r.snapshot()
            try:
                self._render_member(g, v)
                return
            except Conflict:
                g.r.restore(snap)
                self._flush(g)
        g = self.open[shape] = _Group(self, shape)
        self._render_member(g, v)

    def _render_member(self, g, v):
        r = g.r
        name = r.render_eqn(self.producer[v], v, g.idx)
        r.remember((v, g.idx), name)
        r.members.add(v)
        g.outputs.append((v, name))
        self.owner[v] = g

    def flush_all(self):
        for g in list(self.open.values()):
            self._flush(g)

    def _flush(self, g):
        if self.open.get(g.shape) is g:
            del self.open[g.shape]
        else:
            return
        for v, _ in g.outputs:
            self.owner.pop(v, None)
        if not g.outputs:
            return
        r = g.r
        outs = []
        for k, (v, name) in enumerate(g.outputs):
            o = f"o{k}"
            outs.append(v)
            if v.aval.ndim == 0 and g.shape:
                r.emit(f"if {g.flat} == 0:")
                r.emit(f"    {o}[0] = {name}")
            else:
                r.emit(f"{o}[{g.flat if g.shape else '0'}] = {name}")
        for ind, line in g.tail:
            r.ind = ind
            r.emit(line)
        self._finish(g.kind, r, g.outputs[0][0], outs, g.n, g.head, g.grid, g.block)
        self.available.update(outs)

    def _open_epilogue(self, e, r, kept_idx, value, **group):
        """Leave a reduction kernel open: its result `value` (a local at the output index
        `kept_idx`) is the first member, and elementwise values of the output's shape that
        read it there join as the kernel's epilogue."""
        out = e.outvars[0]
        shape = out.aval.shape
        old = self.open.get(shape)
        if old is not None:
            self._flush(old)
        group.setdefault("kind", "reduce")
        g = _Group(self, shape, r=r, idx=kept_idx, **group)
        r.remember((out, g.idx), value)
        r.members.add(out)
        g.outputs.append((out, value))
        self.owner[out] = g
        self.open[shape] = g

    def _grid1(self, n):
        t = self._block1(n)[0]
        return (max(1, min(-(-n // t), self.target.max_blocks)),)

    def _block1(self, n):
        """Threads per block: the target's, or fewer (whole warps) for a small launch."""
        t = self.target.threads
        if n >= t:
            return (t,)
        return (max(1, n),) if self.target.simulator else (max(32, -(-n // 32) * 32),)

    def _finish(self, kind, r, first_var, outs, n, head, grid, block, eqns=None):
        """Assemble the kernel function around the renderer's body and add the launch."""
        self.shared["count"] += 1
        label = _label(eqns if eqns is not None else r.eqns)
        fn = f"{self.name}{self.shared['count']}_{label}"
        ins = list(r.args)
        params = [r.args[v] for v in ins] + [f"o{k}" for k in range(len(outs))]
        src = [f"def {fn}({', '.join(params)}):"]
        body_indent = 1
        for h in head:
            src.append("    " * body_indent + h)
            body_indent += 1
        src.extend(r.lines)
        spec = KernelSpec(fn, kind, "\n".join(src) + "\n", ins, outs, tuple(grid),
                          tuple(block), list(eqns if eqns is not None else r.eqns), n)
        # a kernel with nothing to compute still allocates its (empty) outputs when it runs
        self.program.steps.append(KernelStep(spec))
        return spec

    # -- control flow ------------------------------------------------------------------------
    def _control_kernel(self, e):
        r = Renderer(self, print_guard="i == 0")
        r.ind = 2
        try:
            space = r.control_space(e)
            idx = tuple(r.decompose("i", space))
            n = _size(space)
            nc = _carry_count(e)
            sinks = {}
            for k, v in enumerate(e.outvars):
                if k >= nc:
                    per = _size(v.aval.shape[1:])

                    def store(s, val, av, k=k, per=per):
                        if av.ndim > 1:
                            r.emit(f"o{k}[{s} * {per} + i] = {val}")
                        else:
                            r.emit("if i == 0:")
                            r.emit(f"    o{k}[{s}] = {val}")
                    sinks[k] = store
            names = r.render_control(e, None, idx, sinks)
            for k, (v, name) in enumerate(zip(e.outvars, names)):
                if k >= nc:
                    continue
                if v.aval.ndim == 0 and space:
                    r.emit("if i == 0:")
                    r.emit(f"    o{k}[0] = {name}")
                else:
                    r.emit(f"o{k}[{'i' if space else '0'}] = {name}")
        except Conflict:
            raise _HostControl(e) from None
        r.members.update(e.outvars)
        self._finish("control", r, e.outvars[0] if e.outvars else None, list(e.outvars), n,
                     ["for i in range(cuda.grid(1), %d, cuda.gridsize(1)):" % n],
                     self._grid1(n), self._block1(n), eqns=r.eqns)
        self.available.update(e.outvars)

    def _sub_program(self, closed: ClosedJaxpr, what: str) -> Program:
        consts = dict(zip(closed.jaxpr.constvars, closed.consts))
        p = Planner(closed.jaxpr, consts, self.target, name=self.name, shared=self.shared)
        prog = p.plan()
        self.consts.update(consts)
        return prog

    def _host_step(self, e):
        name = e.primitive.name
        p = e.params
        if name == "cond":
            branches = [self._sub_program(b, "branch") for b in p["branches"]]
            return HostCond(e, e.invars[0], list(e.invars[1:]), branches, list(e.outvars))
        if name == "while":
            nc, nb = p["cond_nconsts"], p["body_nconsts"]
            return HostWhile(e, list(e.invars[:nc]), list(e.invars[nc:nc + nb]),
                             list(e.invars[nc + nb:]),
                             self._sub_program(p["cond_jaxpr"], "cond"),
                             self._sub_program(p["body_jaxpr"], "body"), list(e.outvars))
        ncst, nc = p["num_consts"], p["num_carry"]
        return HostScan(e, list(e.invars[:ncst]), list(e.invars[ncst:ncst + nc]),
                        list(e.invars[ncst + nc:]), self._sub_program(p["jaxpr"], "body"),
                        list(e.outvars), p["length"], p["reverse"], nc)

    # -- block reductions ----------------------------------------------------------------------
    def _root_reduce(self, e):
        x = e.invars[0]
        name = e.primitive.name
        shape = x.aval.shape
        axes = tuple(e.params["axes"])
        kept_shape = [d for a, d in enumerate(shape) if a not in axes]
        rshape = [shape[a] for a in axes]
        K, R = _size(kept_shape), _size(rshape)
        nt = self.target.reduce_threads
        per_block = nt * 4
        P = 1
        if K < self.target.max_blocks and R > per_block:
            P = max(1, min(-(-self.target.max_blocks // max(K, 1)), -(-R // per_block)))
        out = e.outvars[0]
        arg = name in ("argmax", "argmin")
        big = [a for a, d in enumerate(shape) if d != 1]
        if big and big[-1] not in axes and K > 0:
            # the fastest-varying dimension is kept: threads over the kept elements read
            # consecutive addresses ("column" reduction)
            self._column_reduce(e, x, shape, axes, K, R, arg)
            return
        if P == 1:
            self._reduce_kernel(e, x, shape, axes, K, R, 1, [out], arg)
            return
        pdt = x.aval.dtype
        partial = Var(ShapedArray((K * P,), pdt))
        outs = [partial]
        if arg:
            outs.append(Var(ShapedArray((K * P,), np.int64)))
        self._reduce_kernel(e, x, shape, axes, K, R, P, outs, arg)
        self._reduce_pass2(e, outs, K, P, out, arg)

    def _column_reduce(self, e, x, shape, axes, K, R, arg):
        """One thread per (kept element, chunk of rows): consecutive threads take consecutive
        kept elements, so every load of a warp is one contiguous segment. Chunks interleave
        rows (chunk c takes rows c, c + C, ...); with C > 1 the (K, C) partial results are
        combined by the block tree of `_reduce_pass2`."""
        t = self.target
        name = e.primitive.name
        dt = x.aval.dtype
        out = e.outvars[0]
        C = max(1, min(-(-(t.max_blocks * t.threads) // K), -(-R // 8), 1024))
        if C == 1:
            outs = [out]
        else:
            outs = [Var(ShapedArray((K * C,), dt))]
            if arg:
                outs.append(Var(ShapedArray((K * C,), np.int64)))
        kept_shape = [d for a, d in enumerate(shape) if a not in axes]
        rshape = [shape[a] for a in axes]
        r = Renderer(self)
        r.note_eqn(e)
        r.ind = 2
        if C == 1:
            r.emit("k = t")
            r.emit("c = 0")
        else:
            r.emit(f"k = t % {K}")
            r.emit(f"c = t // {K}")
        kept = r.decompose("k", kept_shape, "k")
        it = iter(kept)
        kept_map = {a: next(it) for a in range(len(shape)) if a not in axes}
        self._accumulate(r, x, name, dt, shape, axes, kept_map, rshape, f"c, {R}, {C}", arg)
        n = K * C
        head = [f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):"]
        if C == 1:
            rv = r.fresh("rv")
            r.emit(f"{rv} = {ops.ctor(e.params['index_dtype'])}(acci)" if arg else
                   f"{rv} = acc")
            self._open_epilogue(e, r, kept, rv, flat="k", head=head, grid=self._grid1(n),
                                block=self._block1(n), n=K)
            return
        r.emit(f"o0[k * {C} + c] = acc")
        if arg:
            r.emit(f"o1[k * {C} + c] = acci")
        self._finish("reduce", r, outs[0], outs, n, head, self._grid1(n), self._block1(n),
                     eqns=[e])
        self.available.update(outs)
        self._reduce_pass2(e, outs, K, C, out, arg)

    def _reduce_kernel(self, e, x, shape, axes, K, R, P, outs, arg):
        t = self.target
        nt = t.reduce_threads
        name = e.primitive.name
        dt = x.aval.dtype
        r = Renderer(self)
        r.note_eqn(e)
        r.ind = 1
        kept_shape = [d for a, d in enumerate(shape) if a not in axes]
        rshape = [shape[a] for a in axes]
        r.emit(f"sv = cuda.shared.array({nt}, {ops.ctor(dt)})")
        if arg:
            r.emit(f"si = cuda.shared.array({nt}, np.int64)")
        r.emit("tid = cuda.threadIdx.x")
        r.emit(f"for blk in range(cuda.blockIdx.x, {K * P}, cuda.gridDim.x):")
        r.ind += 1
        r.push()
        if P > 1:
            r.emit(f"o = blk // {P}")
            r.emit(f"part = blk % {P}")
            start, step = f"part * {nt} + tid", P * nt
        else:
            r.emit("o = blk")
            start, step = "tid", nt
        kept = r.decompose("o", kept_shape, "k")
        it = iter(kept)
        kept_map = {a: next(it) for a in range(len(shape)) if a not in axes}
        self._accumulate(r, x, name, dt, shape, axes, kept_map, rshape,
                         f"{start}, {R}, {step}", arg)
        self._tree(r, name, dt, nt, arg)
        grid = (max(1, min(K * P, t.max_blocks)),)
        r.emit("if tid == 0:")
        if P == 1:
            loop_ind = r.ind
            r.ind += 1
            rv = r.fresh("rv")
            r.emit(f"{rv} = {ops.ctor(e.params['index_dtype'])}(si[0])" if arg else
                   f"{rv} = sv[0]")
            self._open_epilogue(e, r, kept, rv, flat="o", head=[], grid=grid, block=(nt,),
                                tail=[(loop_ind, "cuda.syncthreads()")], n=K)
            return
        r.emit("    o0[blk] = sv[0]")
        if arg:
            r.emit("    o1[blk] = si[0]")
        r.emit("cuda.syncthreads()")
        r.pop()
        self._finish("reduce", r, outs[0], outs, K, [], grid, (nt,), eqns=[e])
        self.available.update(outs)

    @staticmethod
    def _accumulate(r, x, name, dt, shape, axes, kept_map, rshape, bounds, arg):
        """Emit `acc` (and `acci` for argmax/argmin) over `for rr in range(bounds)`: one
        thread's share of a reduction, shared by the column and block reduction kernels."""
        _start_acc(r, name, dt, arg)
        r.emit(f"for rr in range({bounds}):")
        r.ind += 1
        r.push()
        full = Renderer._full_index(shape, axes, kept_map, r.decompose("rr", rshape, "r"))
        v = r.value(x, full)
        if arg:
            r.emit(f"if acci < 0 or {arg_better(name, v, 'acc', dt)}:")
            r.emit(f"    acc = {v}")
            r.emit("    acci = rr")
        else:
            r.emit(f"acc = {ops.combine(ops.REDUCE_OPS[name], 'acc', v, dt)}")
        r.pop()
        r.ind -= 1

    def _tree(self, r, name, dt, nt, arg):
        """Shared-memory tree: sv[0] (and si[0]) end up holding the block's result."""
        r.emit("sv[tid] = acc")
        if arg:
            r.emit("si[tid] = acci")
        r.emit("cuda.syncthreads()")
        r.emit(f"s = {nt // 2}")
        r.emit("while s > 0:")
        r.emit("    if tid < s:")
        r.ind += 2
        _merge_into(r, name, dt, arg, "sv[tid + s]", "si[tid + s]", "sv[tid]", "si[tid]")
        r.ind -= 2
        r.emit("    cuda.syncthreads()")
        r.emit("    s //= 2")

    def _reduce_pass2(self, e, partials, K, P, out, arg):
        """Reduce the (K, P) partial results of the first pass: one block per output."""
        t = self.target
        nt = t.reduce_threads
        name = e.primitive.name
        dt = partials[0].aval.dtype
        r = Renderer(self)
        r.note_eqn(e)
        pv = r.arg(partials[0])
        pi = r.arg(partials[1]) if arg else None
        r.emit(f"sv = cuda.shared.array({nt}, {ops.ctor(dt)})")
        if arg:
            r.emit(f"si = cuda.shared.array({nt}, np.int64)")
        r.emit("tid = cuda.threadIdx.x")
        r.emit(f"for o in range(cuda.blockIdx.x, {K}, cuda.gridDim.x):")
        r.ind += 1
        _start_acc(r, name, dt, arg)
        r.emit(f"for p in range(tid, {P}, {nt}):")
        r.ind += 1
        _merge_into(r, name, dt, arg, f"{pv}[o * {P} + p]", f"{pi}[o * {P} + p]" if arg else None,
                    "acc", "acci")
        r.ind -= 1
        self._tree(r, name, dt, nt, arg)
        r.emit("if tid == 0:")
        loop_ind = r.ind
        r.ind += 1
        kept_shape = out.aval.shape
        kept = r.decompose("o", kept_shape, "k")
        rv = r.fresh("rv")
        r.emit(f"{rv} = {ops.ctor(e.params['index_dtype'])}(si[0])" if arg else
               f"{rv} = sv[0]")
        grid = (max(1, min(K, t.max_blocks)),)
        self._open_epilogue(e, r, kept, rv, flat="o", head=[], grid=grid, block=(nt,),
                            tail=[(loop_ind, "cuda.syncthreads()")], n=K)

    # -- matmul ----------------------------------------------------------------------------------
    def _root_dot(self, e):
        """A register-tiled matmul: a block of tile x tile threads computes a (tile*reg)^2
        output tile, each thread a reg x reg sub-block kept in registers; operand tiles of
        depth `dot_depth` are staged in shared memory, loaded cooperatively and coalesced."""
        lhs, rhs = e.invars
        out = e.outvars[0]
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        ls, rs = lhs.aval.shape, rhs.aval.shape
        lfree = [a for a in range(len(ls)) if a not in lc and a not in lb]
        rfree = [a for a in range(len(rs)) if a not in rc and a not in rb]
        bshape = [ls[a] for a in lb]
        mshape = [ls[a] for a in lfree]
        nshape = [rs[a] for a in rfree]
        kshape = [ls[a] for a in lc]
        B, M, N, Kc = _size(bshape), _size(mshape), _size(nshape), _size(kshape)
        t = self.target
        T, R, BK = t.tile, t.reg, t.dot_depth
        BM = BN = T * R
        nthreads = T * T
        in_dt, out_dt = lhs.aval.dtype, out.aval.dtype
        c = ops.ctor(in_dt)
        zero = ops.literal(0, in_dt)
        r = Renderer(self)
        r.note_eqn(e)
        # the lhs tile is stored transposed; one column of padding avoids bank conflicts
        r.emit(f"sa = cuda.shared.array(({BK}, {BM + 1}), {c})")
        r.emit(f"sb = cuda.shared.array(({BK}, {BN}), {c})")
        r.emit(f"acc = cuda.local.array(({R}, {R}), {c})")
        r.emit(f"ra = cuda.local.array({R}, {c})")
        r.emit(f"rb = cuda.local.array({R}, {c})")
        r.emit("tx = cuda.threadIdx.x")
        r.emit("ty = cuda.threadIdx.y")
        r.emit(f"tid = ty * {T} + tx")
        MB, NB = -(-M // BM), -(-N // BN)
        loops = [("bz", "z", B), ("by", "y", MB), ("bx", "x", NB)]
        for var, axis, n in loops:
            r.emit(f"for {var} in range(cuda.blockIdx.{axis}, {n}, cuda.gridDim.{axis}):")
            r.ind += 1
            r.push()
            if var == "bz":
                bcomps = r.decompose("bz", bshape, "b")
        r.emit(f"m0 = by * {BM}")
        r.emit(f"n0 = bx * {BN}")
        r.emit(f"for u in range({R}):")
        r.emit(f"    for v in range({R}):")
        r.emit(f"        acc[u, v] = {zero}")
        r.emit(f"for k0 in range(0, {Kc}, {BK}):")
        r.ind += 1

        def load(operand, shape, free, contract, batch, sm, rows, cols, row_is_k, fshape,
                 fsize):
            # consecutive threads take consecutive elements of the operand's fast dimension
            r.emit(f"for el in range(tid, {rows * cols}, {nthreads}):")
            r.ind += 1
            r.push()
            r.emit(f"ii = el // {cols}")
            r.emit(f"jj = el % {cols}")
            if row_is_k:  # rhs tile: rows are k, columns are n
                r.emit("kk = k0 + ii")
                r.emit("ff = n0 + jj")
                dst = "sb[ii, jj]"
            else:  # lhs tile: rows are m, columns are k; stored transposed
                r.emit("ff = m0 + ii")
                r.emit("kk = k0 + jj")
                dst = "sa[jj, ii]"
            r.emit(f"if ff < {fsize} and kk < {Kc}:")
            r.ind += 1
            r.push()
            kc = r.decompose("kk", kshape, "c")
            fc = r.decompose("ff", fshape, "f")
            idx = [None] * len(shape)
            for a, cc in zip(batch, bcomps):
                idx[a] = cc
            for a, cc in zip(contract, kc):
                idx[a] = cc
            for a, cc in zip(free, fc):
                idx[a] = cc
            v = r.value(operand, tuple(idx))
            r.emit(f"{dst} = {v}")
            r.pop()
            r.ind -= 1
            r.emit("else:")
            r.emit(f"    {dst} = {zero}")
            r.pop()
            r.ind -= 1

        load(lhs, ls, lfree, lc, lb, "sa", BM, BK, False, mshape, M)
        load(rhs, rs, rfree, rc, rb, "sb", BK, BN, True, nshape, N)
        r.emit("cuda.syncthreads()")
        r.emit(f"for kt in range({BK}):")
        r.emit(f"    for u in range({R}):")
        r.emit(f"        ra[u] = sa[kt, ty + u * {T}]")
        r.emit(f"    for v in range({R}):")
        r.emit(f"        rb[v] = sb[kt, tx + v * {T}]")
        r.emit(f"    for u in range({R}):")
        r.emit(f"        for v in range({R}):")
        if in_dt == np.bool_:
            r.emit("            acc[u, v] = acc[u, v] | (ra[u] & rb[v])")
        else:
            r.emit("            acc[u, v] = "
                   + ops.combine("sum", "acc[u, v]", "ra[u] * rb[v]", in_dt))
        r.emit("cuda.syncthreads()")
        r.ind -= 1
        r.emit(f"for u in range({R}):")
        r.ind += 1
        r.emit(f"m = m0 + ty + u * {T}")
        r.emit(f"for v in range({R}):")
        r.ind += 1
        r.emit(f"n = n0 + tx + v * {T}")
        r.emit(f"if m < {M} and n < {N}:")
        r.ind += 1
        r.push()
        r.emit(f"fo = (bz * {M} + m) * {N} + n")
        oidx = list(bcomps) + r.decompose("m", mshape, "m") + r.decompose("n", nshape, "n")
        rv = r.fresh("rv")
        r.emit(f"{rv} = {ops.cast('acc[u, v]', in_dt, out_dt)}")
        lim = 2 if t.simulator else t.max_grid
        grid = (max(1, min(NB, lim)), max(1, min(MB, lim)), max(1, min(B, lim)))
        # elementwise work on the product (ReLU, a bias) joins as the kernel's epilogue
        self._open_epilogue(e, r, oidx, rv, kind="dot", flat="fo", head=[], grid=grid,
                            block=(T, T), n=B * M * N)

    # -- cumulative scans ------------------------------------------------------------------------
    def _root_cumulative(self, e):
        x = e.invars[0]
        out = e.outvars[0]
        axis, reverse = e.params["axis"], e.params["reverse"]
        shape = x.aval.shape
        op = ops.CUMULATIVE_OPS[e.primitive.name]
        dt = x.aval.dtype
        D = shape[axis] if shape else 1
        others = [d for a, d in enumerate(shape) if a != axis]
        L = _size(others)
        r = Renderer(self)
        r.note_eqn(e)
        r.ind = 2
        oc = r.decompose("line", others, "l")
        r.emit(f"acc = {ops.identity(op, dt)}")
        r.emit(f"for s in range({D}):")
        r.ind += 1
        r.push()
        j = "s" if not reverse else r.index_local(f"{D - 1} - s")
        it = iter(oc)
        idx = tuple(j if a == axis else next(it) for a in range(len(shape)))
        v = r.value(x, idx)
        r.emit(f"acc = {ops.combine(op, 'acc', v, dt)}")
        r.emit(f"o0[{r.linear(idx, shape) if shape else '0'}] = acc")
        r.pop()
        self._finish("cumulative", r, out, [out], _size(shape),
                     [f"for line in range(cuda.grid(1), {L}, cuda.gridsize(1)):"],
                     self._grid1(L), self._block1(L), eqns=[e])
        self.available.add(out)

    # -- scatter ---------------------------------------------------------------------------------
    def _root_scatter(self, e):
        x, upd, *indices = e.invars
        out = e.outvars[0]
        axes, mode = e.params["axes"], e.params["mode"]
        shape = x.aval.shape
        dt = x.aval.dtype
        a0, na = axes[0], len(axes)
        pre, mid, post = shape[:a0], shape[a0:a0 + na], shape[a0 + na:]
        bshape = tuple(np.broadcast_shapes(*[i.aval.shape for i in indices]))
        nb = len(bshape)
        r = Renderer(self)
        r.note_eqn(e)
        r.ind = 2
        sc = r.decompose("sl", list(pre) + list(post), "p")
        pc, qc = sc[:len(pre)], sc[len(pre):]
        r.emit(f"for jj in range({_size(mid)}):")
        r.ind += 1
        r.push()
        mc = r.decompose("jj", mid, "m")
        full = tuple(pc) + tuple(mc) + tuple(qc)
        v = r.value(x, full)
        r.emit(f"o0[{r.linear(full, shape)}] = {v}")
        r.pop()
        r.ind -= 1
        target = tuple(pre) + bshape + tuple(post)
        r.emit(f"for bb in range({_size(bshape)}):")
        r.ind += 1
        r.push()
        bc = r.decompose("bb", bshape, "u")
        picked, inside = [], []
        for ind, ax in zip(indices, axes):
            s = ind.aval.shape
            comps = bc[nb - len(s):] if s else ()
            comps = tuple("0" if d == 1 else c for d, c in zip(s, comps))
            iv = r.value(ind, comps)
            p = r.index_local(f"np.int64({iv})")
            picked.append(p)
            inside.append(f"0 <= {p} < {shape[ax]}")
        tidx = tuple(pc) + tuple(bc) + tuple(qc)
        us = upd.aval.shape
        uidx = tuple("0" if d == 1 else c
                     for d, c in zip(us, tidx[len(target) - len(us):])) if us else ()
        uv = r.value(upd, uidx)
        dst = r.linear(tuple(pc) + tuple(picked) + tuple(qc), shape)
        # an update at an out-of-bounds index (a negative one too) is dropped, as in JAX
        r.emit(f"if {' and '.join(inside)}:")
        r.ind += 1
        if mode == "set":
            r.emit(f"o0[{dst}] = {uv}")
        else:
            op = {"add": "sum", "mul": "prod", "min": "min", "max": "max"}[mode]
            r.emit(f"o0[{dst}] = {ops.combine(op, f'o0[{dst}]', uv, dt)}")
        r.ind -= 1
        r.pop()
        NS = _size(list(pre) + list(post))
        self._finish("scatter", r, out, [out], _size(shape),
                     [f"for sl in range(cuda.grid(1), {NS}, cuda.gridsize(1)):"],
                     self._grid1(NS), self._block1(NS), eqns=[e])
        self.available.add(out)


def _step_reads(step):
    if isinstance(step, KernelStep):
        return step.kernel.inputs
    if isinstance(step, HostPrint):
        return step.atoms
    if isinstance(step, HostCond):
        return [step.index] + step.operands
    if isinstance(step, HostWhile):
        return step.cond_consts + step.body_consts + step.init
    return step.consts + step.init + step.xs


def _step_writes(step):
    if isinstance(step, KernelStep):
        return step.kernel.outputs
    return getattr(step, "outvars", [])


def _plan_release(program: Program):
    """`program.release[i]`: values no step after step i reads (dropped from the run's
    environment then, so the device memory of intermediates is freed as early as possible)."""
    last = {}
    for i, step in enumerate(program.steps):
        for v in _step_writes(step):
            last.setdefault(v, i)
        for v in _step_reads(step):
            if isinstance(v, Var):
                last[v] = i
    keep = {a for a in program.outvars if isinstance(a, Var)} | set(program.consts)
    program.release = [[] for _ in program.steps]
    for v, i in last.items():
        if v not in keep:
            program.release[i].append(v)


def _label(eqns) -> str:
    names = []
    for e in eqns:
        n = e.primitive.name
        if n not in names and n not in ("broadcast_in_dim", "convert_element_type", "reshape",
                                        "squeeze"):
            names.append(n)
    if not names:
        names = [e.primitive.name for e in eqns[:1]] or ["copy"]
    label = "_".join(names[:3]) + (f"_{len(names) - 3}more" if len(names) > 3 else "")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in label)


def plan_program(closed: ClosedJaxpr, target: Target, name="k") -> Program:
    consts = dict(zip(closed.jaxpr.constvars, closed.consts))
    return Planner(closed.jaxpr, consts, target, name=name).plan()
