"""IR -> CUDA kernels: the plan (which equations share a kernel, which loops run on the host).
Pure Python: no numba import, so plans, sources and their tests work without the CUDA toolkit.

The input is the output of CUDA's pipeline (the shared passes, no fusion): the GPU draws its
own kernel boundaries, because a kernel cannot wait for a reduction it computes itself (that
needs a grid-wide barrier). Each equation's *kernel template* comes from its kind, or from the
"cuda.kernel" table where the kind does not say (`kernel_template`):

* "pull": elementwise and index-remapping equations (broadcasts, reshapes, transposes, slices,
  gathers, concatenations, iota, selects, and reductions over at most `serial_reduce_max`
  elements) are read by the kernels that need them (`render.py`): a kernel that needs
  `v[i, j]` renders `v`'s equation at that index, recursively, down to arrays in device
  memory. Only values that something needs as an array are stored (*materialized*): program
  outputs, operands of host steps and of matmuls, and values a kernel would otherwise recompute
  at two different indices. Materialized values of one shape that do not read each other at
  shifted indices share one grid-stride kernel.
* "reduce", "dot", "cumulative", "scatter", "control": kernel roots with their own templates
  (`templates.py`). `cond`, `while` and `scan` whose bodies are elementwise run inside one
  kernel; any other control flow runs on the host ("cuda.host": its step), with its bodies
  compiled as programs of their own.
* "print": `jitviz.debug.print` at the top level prints on the host (exact Python formatting,
  after the preceding kernels); inside an in-kernel loop it is CUDA's `print` from the first
  thread.
* "inline": a call (`jit`, whose callee has constants, so the shared `inline` pass kept it; a
  `fused` equation in a jaxpr that did not come through CUDA's pipeline) is lowered by splicing
  its body into the caller, with fresh variables.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...core.fused import fused_p
from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ...core.jaxpr_util import Subst, rename_jaxpr_copy
from ...core.registry import declare_target, lowering_rule, register_lowering
from ...debug import debug_print_p
from ...lax import primitives as P
from ...lax.control_flow import cond_p, jit_p, scan_p, while_p
from . import templates
from .groups import Group
from .render import Conflict, Materialize, Renderer, is_cheap, size
from .templates import HostControl

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
    # a reduction over at most this many elements per output runs as one block per output
    # that stays open (templates.Segment): later reductions over the same axes and values of
    # the input's shape join it, where the two-pass plan takes two kernels per reduction
    segment_max_reduce: int = 16384
    # ... and, when the fastest dimension is kept (each block reads a column with a stride),
    # only for this many outputs: more columns are read coalesced by the column template
    segment_max_columns: int = 64
    max_grid: int = 65535

    @property
    def max_blocks(self) -> int:
        return max(1, self.sm_count * self.blocks_per_sm)


SIMULATOR_TARGET = Target(simulator=True, sm_count=1, threads=4, reduce_threads=4, tile=2,
                          reg=2, dot_depth=2, blocks_per_sm=2, serial_reduce_max=4,
                          segment_max_reduce=24, segment_max_columns=2)


# --- kernel templates ------------------------------------------------------------------------

# the template an equation's kind implies; "cuda.kernel" names it for the others
_TEMPLATE_OF_KIND = {"elementwise": "pull", "structural": "pull", "reduction": "reduce",
                     "arg_reduction": "reduce", "scan_op": "cumulative", "dot": "dot",
                     "control": "control"}
declare_target(
    "cuda.kernel", needs=lambda prim: prim.kind not in _TEMPLATE_OF_KIND,
    doc="the kernel template an equation becomes where its kind does not say: 'pull', "
        "'reduce', 'cumulative', 'scatter', 'dot', 'control', 'print' or 'inline', or a "
        "template function of its own, template(planner, eqn) (lax.sort's)")
register_lowering(P.scatter_p, "cuda.kernel", "scatter")  # structural, with its own kernel
register_lowering(debug_print_p, "cuda.kernel", "print")
register_lowering(jit_p, "cuda.kernel", "inline")
register_lowering(fused_p, "cuda.kernel", "inline")


def kernel_template(prim) -> str | None:
    """Which kernel template equations of `prim` become (None: CUDA cannot lower it)."""
    return lowering_rule(prim, "cuda.kernel") or _TEMPLATE_OF_KIND.get(prim.kind)


# --- inlining calls --------------------------------------------------------------------------

class Flat:
    """A jaxpr with its calls inlined (fresh variables for inlined bodies)."""

    def __init__(self, invars, outvars, eqns, consts):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.consts = consts  # Var -> value of every constvar reachable here


def inline_calls(jaxpr: Jaxpr, consts: dict) -> Flat:
    """Splice the body of every call equation of `jaxpr` (template "inline") into it,
    recursively (with the optimizer's `rename_jaxpr_copy`: fresh variables for each inlined
    body); `consts` maps constvars to values and receives the constants of inlined bodies."""
    eqns, env = _inline(jaxpr.eqns, consts)
    return Flat(jaxpr.invars, env.atoms(jaxpr.outvars), eqns, consts)


def _inline(eqns, consts):
    out, env = [], Subst()
    for e in eqns:
        e = env.eqn(e)
        if kernel_template(e.primitive) != "inline":
            out.append(e)
            continue
        body = e.params["jaxpr"]
        consts.update(zip(body.jaxpr.constvars, body.consts))
        new, outs = rename_jaxpr_copy(body.jaxpr, e.invars)
        new, inner = _inline(new, consts)
        out.extend(n if n.source is not None else n.replace(source=e.source) for n in new)
        for v, o in zip(e.outvars, inner.atoms(outs)):
            env[v] = o
    return out, env


def _reduced_size(eqn) -> int:
    """How many elements each output of a reduction combines."""
    shape = eqn.invars[0].aval.shape
    return size([shape[a] for a in eqn.params["axes"]])


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

# --- the planner -----------------------------------------------------------------------------

class Planner:
    """Turns a jaxpr into a Program: kernel launches and host steps, in order."""

    def __init__(self, jaxpr: Jaxpr, consts: dict, target: Target, name: str = "k",
                 shared=None):
        self.target = target
        self.name = name
        self.shared = shared if shared is not None else {"count": 0, "flat": {}}
        self.flat = inline_calls(jaxpr, consts)
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
            f = inline_calls(closed.jaxpr, consts)
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
        """The kernel template `eqn` gets here: its own, except that a small reduction is
        read by its consumers ("pull") and control flow that cannot run in a kernel runs on
        the host ("host")."""
        template = kernel_template(eqn.primitive)
        if template is None:
            raise NotImplementedError(f"the CUDA backend has no lowering for {eqn.primitive}")
        if template == "reduce" and _reduced_size(eqn) <= self.target.serial_reduce_max:
            return "pull"
        if template == "control" and eqn in self.host:
            return "host"
        return template

    def is_array(self, var) -> bool:
        """Does `var` live in device memory when kernels read it?"""
        return var not in self.producer or var in self.mat

    def _cheap(self, var) -> bool:
        if self.is_array(var):
            return True
        e = self.producer[var]
        if not is_cheap(e.primitive):
            return False
        return all(self._cheap(a) for a in e.invars if isinstance(a, Var))

    # -- planning ----------------------------------------------------------------------------
    def plan(self) -> Program:
        for _ in range(10000):
            try:
                return self._plan()
            except Materialize as m:
                if m.var in self.force:
                    raise AssertionError(f"{m.var} materialized twice") from None
                self.force.add(m.var)
            except HostControl as h:
                if h.eqn in self.host:
                    raise AssertionError("control flow moved to the host twice") from None
                self.host.add(h.eqn)
        raise AssertionError("the CUDA planner did not converge")

    def _plan(self) -> Program:
        eqns = self.flat.eqns
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
        self.open: dict = {}  # shape -> open Group (a group may be under several)
        self.owner: dict = {}  # var -> open Group computing it
        for e in eqns:
            template = self.category(e)
            # a primitive defined outside the backend may bring its own template function
            (template if callable(template) else _LOWER[template])(self, e)
        self.flush_all()
        _plan_release(self.program)
        return self.program

    def _pulled(self, e):
        """A pulled equation: its materialized outputs join the open kernel of their shape."""
        for v in e.outvars:
            if v in self.mat:
                self._add_member(v)

    def _host_print(self, e):
        self.flush_all()
        for a in e.invars:
            if isinstance(a, Var):
                self.need(a)
        self.program.steps.append(HostPrint(e, list(e.invars)))

    def _host_control(self, e):
        for a in e.invars:
            if isinstance(a, Var):
                self.need(a)
        self.flush_all()  # effects inside the loop come after earlier kernels' prints
        self.program.steps.append(lowering_rule(e.primitive, "cuda.host")(self, e))
        self.available.update(e.outvars)

    # -- groups of materialized elementwise values ------------------------------------------------
    def need(self, var):
        """`var` is about to be read by a kernel or host step: make sure it is computed."""
        g = self.owner.get(var)
        if g is not None:
            self.flush(g)

    def _add_member(self, v):
        g = self.open.get(v.aval.shape)
        if g is not None:
            snap = g.r.snapshot()
            try:
                g.join(self, v)
                self.owner[v] = g
                return
            except Conflict:
                g.r.restore(snap)
                self.flush(g)
        g = self.open_group(Group(self, v.aval.shape))
        g.join(self, v)
        self.owner[v] = g

    def flush_all(self):
        for g in list(self.open.values()):
            self.flush(g)

    def open_group(self, g):
        """Register the open kernel `g` under its shapes (closing the kernels open there)."""
        for key in g.keys:
            old = self.open.get(key)
            if old is not None:
                self.flush(old)
        for key in g.keys:
            self.open[key] = g
        return g

    def flush(self, g):
        """Close the open kernel `g`: store its outputs and add its launch."""
        keys = [k for k in g.keys if self.open.get(k) is g]
        if not keys:
            return  # closed already
        for k in keys:
            del self.open[k]
        for v, _ in g.outputs:
            self.owner.pop(v, None)
        if not g.outputs:
            return
        r = g.r
        if g.store_ind is not None:
            r.ind = g.store_ind
        outs, stores = [], []
        for k, (v, name) in enumerate(g.outputs):
            outs.append(v)
            if name is None:
                continue  # stored where it was computed
            if v.aval.ndim == 0 and g.shape:
                stores += [f"if {g.flat} == 0:", f"    o{k}[0] = {name}"]
            else:
                stores.append(f"o{k}[{g.flat if g.shape else '0'}] = {name}")
        if stores and g.store_guard is not None:
            stores = [f"if {g.store_guard}:"] + ["    " + line for line in stores]
        for line in stores:
            r.emit(line)
        for ind, line in g.tail:
            r.ind = ind
            r.emit(line)
        self.finish(g.kind, r, g.outputs[0][0], outs, g.n, g.head, g.grid, g.block)
        self.available.update(outs)

    def open_epilogue(self, e, r, kept_idx, value, **group):
        """Leave a reduction kernel open: its result `value` (a local at the output index
        `kept_idx`) is the first member, and elementwise values of the output's shape that
        read it there join as the kernel's epilogue."""
        out = e.outvars[0]
        group.setdefault("kind", "reduce")
        g = self.open_group(Group(self, out.aval.shape, r=r, idx=kept_idx, **group))
        r.remember((out, g.idx), value)
        r.members.add(out)
        g.outputs.append((out, value))
        self.owner[out] = g

    def grid1(self, n):
        t = self.block1(n)[0]
        return (max(1, min(-(-n // t), self.target.max_blocks)),)

    def block1(self, n):
        """Threads per block: the target's, or fewer (whole warps) for a small launch."""
        t = self.target.threads
        if n >= t:
            return (t,)
        return (max(1, n),) if self.target.simulator else (max(32, -(-n // 32) * 32),)

    def finish(self, kind, r, first_var, outs, n, head, grid, block, eqns=None):
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

    # -- host steps --------------------------------------------------------------------------
    def sub_program(self, closed: ClosedJaxpr) -> Program:
        """The program of a body a host step runs (kernel names continue this plan's)."""
        consts = dict(zip(closed.jaxpr.constvars, closed.consts))
        p = Planner(closed.jaxpr, consts, self.target, name=self.name, shared=self.shared)
        prog = p.plan()
        self.consts.update(consts)
        return prog


_LOWER = {"pull": Planner._pulled, "print": Planner._host_print, "host": Planner._host_control,
          "control": templates.control_kernel, "reduce": templates.block_reduction,
          "dot": templates.tiled_dot, "cumulative": templates.cumulative_scan,
          "scatter": templates.ordered_scatter}


# --- control flow on the host: the host step table --------------------------------------------

declare_target(
    "cuda.host", needs=lambda prim: kernel_template(prim) == "control",
    doc="rule(planner, eqn) -> the host step running a control-flow equation whose bodies "
        "cannot run inside one kernel (its bodies planned as programs of their own)")


def host_cond(planner, e):
    branches = [planner.sub_program(b) for b in e.params["branches"]]
    return HostCond(e, e.invars[0], list(e.invars[1:]), branches, list(e.outvars))


def host_while(planner, e):
    p = e.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    return HostWhile(e, list(e.invars[:nc]), list(e.invars[nc:nc + nb]),
                     list(e.invars[nc + nb:]), planner.sub_program(p["cond_jaxpr"]),
                     planner.sub_program(p["body_jaxpr"]), list(e.outvars))


def host_scan(planner, e):
    p = e.params
    ncst, nc = p["num_consts"], p["num_carry"]
    return HostScan(e, list(e.invars[:ncst]), list(e.invars[ncst:ncst + nc]),
                    list(e.invars[ncst + nc:]), planner.sub_program(p["jaxpr"]),
                    list(e.outvars), p["length"], p["reverse"], nc)


register_lowering(cond_p, "cuda.host", host_cond)
register_lowering(while_p, "cuda.host", host_while)
register_lowering(scan_p, "cuda.host", host_scan)


def _step_reads(step):
    if isinstance(step, KernelStep):
        return step.kernel.inputs
    if isinstance(step, HostPrint):
        return step.atoms
    if hasattr(step, "reads"):  # a step a primitive's module defines (jitviz/callbacks.py)
        return step.reads
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


# ops that say nothing about what a kernel computes, left out of its name
_UNNAMED = {P.broadcast_in_dim_p, P.convert_element_type_p, P.reshape_p, P.squeeze_p}


def _label(eqns) -> str:
    names = []
    for e in eqns:
        n = e.primitive.name
        if n not in names and e.primitive not in _UNNAMED:
            names.append(n)
    if not names:
        names = [e.primitive.name for e in eqns[:1]] or ["copy"]
    label = "_".join(names[:3]) + (f"_{len(names) - 3}more" if len(names) > 3 else "")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in label)


def plan_program(closed: ClosedJaxpr, target: Target, name="k") -> Program:
    """The kernels and host steps of `closed`, the output of CUDA's pipeline."""
    consts = dict(zip(closed.jaxpr.constvars, closed.consts))
    return Planner(closed.jaxpr, consts, target, name=name).plan()
