"""Rendering one CUDA kernel: the values it computes, at symbolic indices.

A kernel that needs `v[i, j]` renders `v`'s equation at that index, recursively, down to arrays
in device memory (`Renderer.value`): an elementwise equation is its registered expression
("cuda.expr") of its operands at the same index; the others are read through the *pull table*
("cuda.pull": how a kernel reads an operand through a structural op, a selection or a small
reduction, by mapping the index or looping); `cond`, `while` and `scan` become a branch or a
loop in registers ("cuda.loop"). Values are memoized per scope, so a value read twice at one
index is computed once.

    register_lowering(transpose_p, "cuda.pull", pull_transpose)  # rule(r, eqn, idx) -> local
"""
from __future__ import annotations

import string

import numpy as np

from ...core.ir import ClosedJaxpr, Literal, literal_value
from ...core.jaxpr_util import is_effectful
from ...core.registry import declare_target, lowering_rule, register_lowering
from ...lax import primitives as P
from ...lax.control_flow import cond_p, scan_p, while_p
from . import rules


class Conflict(Exception):
    """A kernel cannot compute this here (needs another kernel or the host)."""


class Materialize(Exception):
    """`var` is read at two indices of one kernel: it must be stored in device memory."""

    def __init__(self, var):
        self.var = var


def size(shape) -> int:
    """The number of elements of `shape`."""
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def is_cheap(prim) -> bool:
    """Recomputing it at another index costs no more than loading it: an index remap or a
    conversion."""
    return prim.kind == "structural" or prim is P.convert_element_type_p


declare_target(
    "cuda.pull",
    needs=lambda prim: prim.kind in ("reduction", "arg_reduction") or
    (prim.kind == "structural" and prim is not P.scatter_p),
    doc="rule(renderer, eqn, idx) -> a local holding eqn's output at index idx (a tuple of "
        "index expressions): index remaps, selections, small reductions as loops")
declare_target(
    "cuda.loop", needs=lambda prim: prim.kind == "control" and prim.call_param is None,
    doc="rule(renderer, eqn, eidx, sinks) -> locals of all outputs of a control-flow equation "
        "at element eidx, run as a branch or loop inside a kernel")


class Renderer:
    """Emits the statements of one kernel: values at symbolic indices, memoized per scope."""

    def __init__(self, planner, print_guard=None):
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
            return rules.literal(literal_value(atom)[()], atom.aval.dtype)
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
        if atom in self.planner.top_vars and not is_cheap(eqn.primitive):
            seen = self.requests.setdefault(atom, set())
            seen.add(idx)
            if len(seen) > 1:
                raise Materialize(atom)
        name = self.render_eqn(eqn, atom, idx)
        self.remember(key, name)
        return name

    # -- equations ---------------------------------------------------------------------------
    def render_eqn(self, eqn, out, idx) -> str:
        """A local holding `out` (an output of `eqn`) at `idx`: by the equation's loop rule
        (control flow), pull rule (index remaps, selections, small reductions) or expression
        rule (elementwise); anything else needs a kernel of its own."""
        self.note_eqn(eqn)
        prim = eqn.primitive
        if lowering_rule(prim, "cuda.loop") is not None:
            return self.render_control(eqn, out, idx)
        pull = lowering_rule(prim, "cuda.pull")
        if pull is not None:
            return pull(self, eqn, idx)
        if lowering_rule(prim, "cuda.expr") is None:
            raise Conflict(f"{prim} cannot be computed inside this kernel")
        shape = out.aval.shape
        args = [self.value(a, self.operand_index(a, shape, idx)) for a in eqn.invars]
        expr = rules.elementwise_expr(prim, args, [a.aval.dtype for a in eqn.invars],
                                      out.aval.dtype, eqn.params)
        t = self.fresh()
        self.emit(f"{t} = {expr}")
        return t

    @staticmethod
    def operand_index(a, out_shape, idx):
        shape = a.aval.shape
        if not shape:
            return ()
        return tuple("0" if d == 1 else i for d, i in zip(shape, idx))

    def assign_branches(self, conds, renderers, dtype) -> str:
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

    @staticmethod
    def full_index(shape, axes, kept, rcomps):
        rit = iter(rcomps)
        out = []
        for a in range(len(shape)):
            out.append(next(rit) if a in axes else kept[a])
        return tuple(out)

    # -- control flow inside a kernel --------------------------------------------------------
    def control_space(self, eqn):
        """The element shape one thread's loop/branch covers (all array outputs share it)."""
        outs = eqn.outvars
        nc = carry_count(eqn)
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
            if k >= carry_count(eqn):
                raise Conflict("scan outputs stacked over steps need their own kernel")
            if out.aval.ndim == 0 and space:
                raise Conflict("a scalar result of a loop over arrays")
        eidx = tuple(idx) if space else ()
        key = ("control", id(eqn), eidx)
        names = self.lookup(key)
        if names is None:
            names = lowering_rule(eqn.primitive, "cuda.loop")(self, eqn, eidx, sinks)
            self.remember(key, names)
        return names if out is None else names[eqn.outvars.index(out)]

    def at(self, av, eidx):
        return eidx if av.ndim else ()

    def body(self, closed: ClosedJaxpr, bindings, eidx):
        """Render a sub-jaxpr's outputs (and its prints) with its invars bound."""
        flat = self.planner.flat_of(closed)
        for v, b in zip(flat.invars, bindings):
            self.bound[v] = b
        outs = []
        for a in flat.outvars:
            outs.append(self.value(a, self.at(a.aval, eidx)))
        for e in flat.eqns:
            if is_effectful(e):
                if e.primitive.effectful:
                    self.render_print(e)
                else:
                    self.render_control(e, None, eidx if self.control_space(e) else ())
        return outs

    def render_print(self, eqn):
        self.note_eqn(eqn)
        if self.print_guard is None:
            raise Conflict("a print inside this kind of kernel")
        if lowering_rule(eqn.primitive, "cuda.kernel") != "print":  # a host callback
            raise Conflict(f"{eqn.primitive} runs on the host")
        vals = []
        for a in eqn.invars:
            if a.aval.ndim:
                raise Conflict("printing an array inside a kernel")
            vals.append(self.value(a, ()))
        pieces = cuda_print_args(eqn.params["fmt"], eqn.params["names"], vals)
        self.emit(f"if {self.print_guard}:")
        self.emit(f"    print({', '.join(pieces)})")

    def alias(self, atom, prefix=None):
        if prefix is None:
            return ("alias", atom, lambda i: i)
        return ("alias", atom, lambda i, p=prefix: (p,) + tuple(i))


# --- the pull table: operands read through index remaps ------------------------------------------

def pull_select_n(r, eqn, idx):
    """The case `which` picks, as if/elif/else: only the chosen case loads."""
    which, *cases = eqn.invars
    av = eqn.outvars[0].aval
    w = r.value(which, r.operand_index(which, av.shape, idx))
    rend = [(lambda c=c: r.value(c, r.operand_index(c, av.shape, idx))) for c in cases]
    if which.aval.dtype == np.bool_:
        if len(cases) == 1:
            return rend[0]()
        return r.assign_branches([w, None], [rend[1], rend[0]], av.dtype)
    n = len(cases)
    if n == 1:
        return rend[0]()
    conds = [f"{w} <= 0"] + [f"{w} == {k}" for k in range(1, n - 1)] + [None]
    return r.assign_branches(conds, rend, av.dtype)



def pull_broadcast_in_dim(r, eqn, idx):
    """The operand at the output index's broadcast dimensions (0 where it has size 1)."""
    x = eqn.invars[0]
    dims = eqn.params["broadcast_dimensions"]
    j = tuple("0" if x.aval.shape[k] == 1 else idx[d] for k, d in enumerate(dims))
    return r.value(x, j)


def pull_reshape(r, eqn, idx):
    """Same index when only unit dimensions differ, else through the flat position."""
    x = eqn.invars[0]
    src, dst = x.aval.shape, eqn.outvars[0].aval.shape
    big_src = [d for d in src if d != 1]
    big_dst = [(d, i) for d, i in zip(dst, idx) if d != 1]
    if big_src == [d for d, _ in big_dst]:
        it = iter(i for _, i in big_dst)
        return r.value(x, tuple("0" if d == 1 else next(it) for d in src))
    flat = r.index_local(r.linear(idx, dst))
    return r.value(x, r.decompose(flat, src, "r"))


def pull_squeeze(r, eqn, idx):
    """The output index with 0 at the squeezed dimensions."""
    x = eqn.invars[0]
    dims = set(eqn.params["dimensions"])
    it = iter(idx)
    return r.value(x, tuple("0" if k in dims else next(it)
                            for k in range(x.aval.ndim)))


def pull_transpose(r, eqn, idx):
    """The output index permuted back."""
    perm = eqn.params["permutation"]
    j = [None] * len(perm)
    for k, p in enumerate(perm):
        j[p] = idx[k]
    return r.value(eqn.invars[0], tuple(j))


def pull_rev(r, eqn, idx):
    """The index mirrored along the reversed dimensions."""
    x = eqn.invars[0]
    dims = set(eqn.params["dimensions"])
    j = tuple(r.index_local(f"{x.aval.shape[k] - 1} - {i}") if k in dims and
              x.aval.shape[k] != 1 else i for k, i in enumerate(idx))
    return r.value(x, j)


def pull_slice(r, eqn, idx):
    """The index scaled by the strides and shifted by the starts."""
    p = eqn.params
    strides = p["strides"] or (1,) * len(idx)
    j = []
    for s, st, i in zip(p["start_indices"], strides, idx):
        e = i if st == 1 else f"{i} * {st}"
        e = e if s == 0 else f"{s} + {e}"
        j.append(r.index_local(e) if i != "0" or s else "0")
    return r.value(eqn.invars[0], tuple(j))


def _clamped_starts(r, shape, starts, sizes):
    """Dynamic start indices clamped so the slice stays inside the operand (as XLA)."""
    out = []
    for s, d, z in zip(starts, shape, sizes):
        v = r.value(s, ())
        out.append(r.index_local(f"min(max(np.int64({v}), 0), {d - z})"))
    return out


def pull_dynamic_slice(r, eqn, idx):
    """The index shifted by the clamped starts."""
    x, *starts = eqn.invars
    st = _clamped_starts(r, x.aval.shape, starts, eqn.params["slice_sizes"])
    j = tuple(r.index_local(f"{s} + {i}") if s != "0" else i for s, i in zip(st, idx))
    return r.value(x, j)


def pull_dynamic_update_slice(r, eqn, idx):
    """The update inside the window it is written to, the operand elsewhere."""
    x, u, *starts = eqn.invars
    ushape = u.aval.shape
    st = _clamped_starts(r, x.aval.shape, starts, ushape)
    if not idx:
        return r.value(u, ())
    inside = " and ".join(f"{s} <= {i} < {s} + {z}" for s, i, z in zip(st, idx, ushape))

    def upd():
        return r.value(u, tuple(r.index_local(f"{i} - {s}") for s, i in zip(st, idx)))
    return r.assign_branches([inside, None], [upd, lambda: r.value(x, idx)],
                             x.aval.dtype)


def pull_concatenate(r, eqn, idx):
    """The operand whose range along the axis holds the index, as if/elif/else."""
    dim = eqn.params["dimension"]
    conds, rends, off = [], [], 0
    for k, a in enumerate(eqn.invars):
        n = a.aval.shape[dim]
        if n == 0:
            continue
        j = list(idx)
        j[dim] = r.index_local(f"{idx[dim]} - {off}") if off else idx[dim]
        rends.append(lambda a=a, j=tuple(j): r.value(a, j))
        off += n
        conds.append(f"{idx[dim]} < {off}")
    conds[-1] = None
    if len(rends) == 1:
        return rends[0]()
    return r.assign_branches(conds, rends, eqn.outvars[0].aval.dtype)


def pull_stack(r, eqn, idx):
    """The operand the index along the new axis picks."""
    axis = eqn.params["axis"]
    rest = idx[:axis] + idx[axis + 1:]
    n = len(eqn.invars)
    if n == 1:
        return r.value(eqn.invars[0], rest)
    conds = [f"{idx[axis]} == {k}" for k in range(n - 1)] + [None]
    rends = [(lambda a=a: r.value(a, rest)) for a in eqn.invars]
    return r.assign_branches(conds, rends, eqn.outvars[0].aval.dtype)


def pull_iota(r, eqn, idx):
    """The index along the iota's dimension, cast to its dtype."""
    t = r.fresh()
    dt = eqn.params["dtype"]
    i = idx[eqn.params["dimension"]]
    r.emit(f"{t} = {rules.cast(i, np.int64, dt)}")
    return t


def pull_gather(r, eqn, idx):
    """The operand at the (clamped) indices read from the index arrays."""
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
        v = r.value(ind, comps)
        picked.append(r.index_local(
            f"min(max(np.int64({v}), 0), {x.aval.shape[ax] - 1})"))
    return r.value(x, tuple(pre) + tuple(picked) + tuple(post))


def pull_small_reduction(r, eqn, idx):
    """A reduction over few elements (at most the target's `serial_reduce_max`): a loop in
    the kernel that reads its result."""
    x = eqn.invars[0]
    op = rules.monoid(eqn.primitive)
    arg = eqn.primitive.kind == "arg_reduction"
    shape = x.aval.shape
    axes = tuple(eqn.params["axes"])
    rshape = [shape[a] for a in axes]
    R = size(rshape)
    dt = x.aval.dtype
    it = iter(idx)
    kept = {a: next(it) for a in range(len(shape)) if a not in axes}
    if arg:
        bv, bi = r.fresh("bv"), r.fresh("bi")
        loop = r.fresh("r")
        start_acc(r, op, dt, True, bv, bi)
        r.emit(f"for {loop} in range({R}):")
        r.ind += 1
        r.push()
        full = r.full_index(shape, axes, kept, r.decompose(loop, rshape, "r"))
        v = r.value(x, full)
        r.emit(f"if {bi} < 0 or {arg_better(op, v, bv, dt)}:")
        r.emit(f"    {bv} = {v}")
        r.emit(f"    {bi} = {loop}")
        r.pop()
        r.ind -= 1
        t = r.fresh()
        r.emit(f"{t} = {rules.ctor(eqn.params['index_dtype'])}({bi})")
        return t
    acc = r.fresh("acc")
    start_acc(r, op, dt, False, acc, empty=R == 0)
    if R:
        loop = r.fresh("r")
        r.emit(f"for {loop} in range({R}):")
        r.ind += 1
        r.push()
        full = r.full_index(shape, axes, kept, r.decompose(loop, rshape, "r"))
        v = r.value(x, full)
        r.emit(f"{acc} = {rules.combine(op, acc, v, dt)}")
        r.pop()
        r.ind -= 1
    return acc


for _prim, _pull in [
        (P.select_n_p, pull_select_n), (P.broadcast_in_dim_p, pull_broadcast_in_dim),
        (P.reshape_p, pull_reshape), (P.squeeze_p, pull_squeeze),
        (P.transpose_p, pull_transpose), (P.rev_p, pull_rev), (P.slice_p, pull_slice),
        (P.dynamic_slice_p, pull_dynamic_slice),
        (P.dynamic_update_slice_p, pull_dynamic_update_slice),
        (P.concatenate_p, pull_concatenate), (P.stack_p, pull_stack), (P.iota_p, pull_iota),
        (P.gather_p, pull_gather),
        *[(p, pull_small_reduction) for p in (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p,
                                              P.reduce_min_p, P.reduce_and_p, P.reduce_or_p,
                                              P.argmax_p, P.argmin_p)]]:
    register_lowering(_prim, "cuda.pull", _pull)


# --- control flow inside a kernel: the loop table ---------------------------------------------

def loop_cond(r, eqn, eidx, sinks):
    """The branches as if/elif/else, each assigning the results."""
    index, *ops_ = eqn.invars
    branches = eqn.params["branches"]
    b = r.value(index, ())
    outs = [r.fresh("c") for _ in eqn.outvars]
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
            r.emit(head)
            r.ind += 1
        r.push()
        vals = r.body(br, [r.alias(a) for a in ops_], eidx)
        for o, v in zip(outs, vals):
            r.emit(f"{o} = {v}")
        r.pop()
        if head:
            r.ind -= 1
    return outs


def loop_while(r, eqn, eidx, sinks):
    """`while True:` over the carries in registers, breaking when the condition fails."""
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts = eqn.invars[:nc], eqn.invars[nc:nc + nb]
    init = eqn.invars[nc + nb:]
    carries = []
    for a, v in zip(init, eqn.outvars):
        c = r.fresh("c")
        r.emit(f"{c} = {r.value(a, r.at(v.aval, eidx))}")
        carries.append(c)
    locals_ = [("local", c, r.at(v.aval, eidx)) for c, v in zip(carries, eqn.outvars)]
    r.emit("while True:")
    r.ind += 1
    r.push()
    (pred,) = r.body(p["cond_jaxpr"], [r.alias(a) for a in cconsts] + locals_, eidx)
    r.emit(f"if not {pred}:")
    r.emit("    break")
    new = r.body(p["body_jaxpr"], [r.alias(a) for a in bconsts] + locals_, eidx)
    if carries:
        r.emit(f"{', '.join(carries)} = {', '.join(new)}")
    r.pop()
    r.ind -= 1
    return carries


def loop_scan(r, eqn, eidx, sinks):
    """A `for` over the steps; stacked outputs are written each step through `sinks` (output
    position -> store function), when the caller keeps them."""
    p = eqn.params
    ncst, nc, length = p["num_consts"], p["num_carry"], p["length"]
    consts = eqn.invars[:ncst]
    init = eqn.invars[ncst:ncst + nc]
    xs = eqn.invars[ncst + nc:]
    carries = []
    for a, v in zip(init, eqn.outvars[:nc]):
        c = r.fresh("c")
        r.emit(f"{c} = {r.value(a, r.at(v.aval, eidx))}")
        carries.append(c)
    locals_ = [("local", c, r.at(v.aval, eidx))
               for c, v in zip(carries, eqn.outvars[:nc])]
    step, s = r.fresh("step"), r.fresh("s")
    r.emit(f"for {step} in range({length}):")
    r.ind += 1
    r.push()
    r.emit(f"{s} = {length - 1} - {step}" if p["reverse"] else f"{s} = {step}")
    new = r.body(p["jaxpr"], [r.alias(a) for a in consts] + locals_ +
                 [r.alias(x, s) for x in xs], eidx)
    if sinks is not None:
        for k, v in enumerate(eqn.outvars[nc:]):
            store = sinks.get(nc + k)
            if store is not None:
                store(s, new[nc + k], v.aval)
    if carries:
        r.emit(f"{', '.join(carries)} = {', '.join(new[:nc])}")
    r.pop()
    r.ind -= 1
    return carries + [None] * (len(eqn.outvars) - nc)



register_lowering(cond_p, "cuda.loop", loop_cond)
register_lowering(while_p, "cuda.loop", loop_while)
register_lowering(scan_p, "cuda.loop", loop_scan)


def carry_count(eqn) -> int:
    """How many leading outputs of a control-flow equation hold one final value each (its
    carries, or a cond's results): all of them, except for `scan`, whose outputs after its
    `num_carry` carries are stacked over the steps (a leading axis of `length`). Those are
    written as the steps run, so their element space is their shape without that axis and they
    cannot be read back as one value of the loop."""
    return eqn.params.get("num_carry", len(eqn.outvars))


def start_acc(r, op, dt, arg, acc="acc", acci="acci", empty=False):
    """Emit the start of a reduction's accumulator `acc`: the monoid's identity, or for
    argmax/argmin a placeholder value with position `acci = -1` (no candidate yet, so the
    first one wins)."""
    if arg:
        r.emit(f"{acc} = {rules.literal(0, dt)}")
        r.emit(f"{acci} = -1")
    else:
        r.emit(f"{acc} = {rules.identity(op, dt, empty)}")


def merge_into(r, op, dt, arg, v, vi, acc, acci):
    """Emit the merge of a partial result (`v`, at position `vi` for argmax/argmin) into
    (`acc`, `acci`): take the other (value, index) pair if it is better (`arg_better_pair`),
    else combine the values with the reduction's monoid (`vi`, `acci` unused)."""
    if arg:
        r.emit(f"if {arg_better_pair(op, v, vi, acc, acci, dt)}:")
        r.emit(f"    {acc} = {v}")
        r.emit(f"    {acci} = {vi}")
    else:
        r.emit(f"{acc} = {rules.combine(op, acc, v, dt)}")


def arg_better(op, v, best, dtype) -> str:
    """Does candidate `v` (at a later position) beat `best` for argmax (`op` the MAX monoid)
    or argmin (MIN)? NumPy: the first NaN wins, else the first extreme value."""
    cmp = op.order
    if np.dtype(dtype).kind in "fc":
        return f"(({v} != {v}) and not ({best} != {best})) or " \
               f"(not ({best} != {best}) and {v} {cmp} {best})"
    return f"{v} {cmp} {best}"


def arg_better_pair(op, v, vi, best, bi, dtype) -> str:
    """As `arg_better`, for candidates from anywhere: ties go to the lower position."""
    cmp = op.order
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

