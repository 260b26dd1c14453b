"""The CUDA kernel templates: kernels with a shape of their own, each rooted at one equation.

Elementwise values share grid-stride kernels the planner assembles; these kernels have their
own structure, and elementwise work on their result joins them as an epilogue where it can:

* `control_kernel`: `cond`, `while` and `scan` with elementwise bodies, one thread per element
  of the carry, the loop or branch in registers;
* `block_reduction`: a shared-memory tree per block (a second pass when one output is reduced
  by several blocks), or one thread per kept element when the fastest dimension is kept; a
  small reduction is a `Segment`, one block per output, that later reductions over the same
  axes (the variance after the mean, the sum of exponentials after the maximum) and values of
  the input's shape (the normalized result) join;
* `tiled_dot`: a register-tiled shared-memory `dot_general`;
* `cumulative_scan`: one thread per line; `ordered_scatter`: one thread per slice
  (deterministic, in NumPy's order).

Each is `template(planner, eqn)`: it renders the kernel with a `Renderer` and hands it to the
planner (`planner.finish`, or `planner.open_epilogue` to leave it open for an epilogue).
"""
from __future__ import annotations

import numpy as np

from ...core.ir import ShapedArray, Var
from ..numba_expr import MAX, MIN, PROD, SUM
from . import rules
from .groups import Group
from .render import (Conflict, Renderer, arg_better, carry_count, merge_into, size,
                     start_acc)


class HostControl(Exception):
    """This control-flow equation cannot run inside a kernel: it becomes a host step."""

    def __init__(self, eqn):
        self.eqn = eqn


def control_kernel(planner, e):
    """One thread per element of the carry, the branch or loop in registers; scan outputs
    stacked over the steps are stored as the steps run. Raises HostControl when the body
    cannot run in one kernel."""
    r = Renderer(planner, print_guard="i == 0")
    r.ind = 2
    try:
        space = r.control_space(e)
        idx = tuple(r.decompose("i", space))
        n = size(space)
        nc = carry_count(e)
        sinks = {}
        for k, v in enumerate(e.outvars):
            if k >= nc:
                per = size(v.aval.shape[1:])

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
        raise HostControl(e) from None
    r.members.update(e.outvars)
    planner.finish("control", r, e.outvars[0] if e.outvars else None, list(e.outvars), n,
                   ["for i in range(cuda.grid(1), %d, cuda.gridsize(1)):" % n],
                 planner.grid1(n), planner.block1(n), eqns=r.eqns)
    planner.available.update(e.outvars)


def block_reduction(planner, e):
    """A reduction over more than `serial_reduce_max` elements: a phase of the open segment
    it can join, or a new segment when it is small enough; else coalesced over the kept
    elements when the fastest dimension is kept, else a shared-memory tree per block (and a
    second pass when one output needs several blocks)."""
    x = e.invars[0]
    shape = x.aval.shape
    axes = tuple(e.params["axes"])
    kept_shape = [d for a, d in enumerate(shape) if a not in axes]
    rshape = [shape[a] for a in axes]
    K, R = size(kept_shape), size(rshape)
    if e.primitive.kind == "reduction":
        g = planner.open.get(tuple(kept_shape))
        if isinstance(g, Segment) and g.accepts(e):
            snap = g.r.snapshot()
            try:
                g.add_reduction(planner, e)
                return
            except Conflict:
                g.r.restore(snap)
                planner.flush(g)
        if Segment.fits(planner.target, shape, axes, K, R):
            g = planner.open_group(Segment(planner, x.aval, axes))
            g.add_reduction(planner, e)
            return
    nt = planner.target.reduce_threads
    per_block = nt * 4
    P = 1
    if K < planner.target.max_blocks and R > per_block:
        P = max(1, min(-(-planner.target.max_blocks // max(K, 1)), -(-R // per_block)))
    out = e.outvars[0]
    arg = e.primitive.kind == "arg_reduction"
    big = [a for a, d in enumerate(shape) if d != 1]
    if big and big[-1] not in axes and K > 0:
        # the fastest-varying dimension is kept: threads over the kept elements read
        # consecutive addresses ("column" reduction)
        _column_reduce(planner, e, x, shape, axes, K, R, arg)
        return
    if P == 1:
        _reduce_kernel(planner, e, x, shape, axes, K, R, 1, [out], arg)
        return
    pdt = x.aval.dtype
    partial = Var(ShapedArray((K * P,), pdt))
    outs = [partial]
    if arg:
        outs.append(Var(ShapedArray((K * P,), np.int64)))
    _reduce_kernel(planner, e, x, shape, axes, K, R, P, outs, arg)
    _reduce_pass2(planner, e, outs, K, P, out, arg)


class Segment(Group):
    """One block per output of a reduction, left open: the block's threads share the slice
    of the input that one output reduces, so later reductions over the same axes of an input
    of the same shape run as further *phases* of the block (each a loop over the slice, then
    the shared-memory tree, its result broadcast to every thread), and values of the input's
    shape are stored by a loop over the slice that can read every phase's result. The
    standardization `(x - mean) / std` and a softmax over rows are one kernel each, where
    the two-pass plan takes two kernels per reduction and one for the result.

    Values of the input's shape that several phases read are recomputed in each (they are
    read at one symbolic index, the slice's, so none of them is stored for the others): the
    kernel reads its inputs once per phase, from cache for the small slices a segment takes
    (`Target.segment_max_reduce`)."""

    @staticmethod
    def fits(target, shape, axes, K, R) -> bool:
        big = [a for a, d in enumerate(shape) if d != 1]
        column = bool(big) and big[-1] not in axes
        return K > 0 and R <= target.segment_max_reduce and (
            not column or K <= target.segment_max_columns)

    def __init__(self, planner, aval, axes):
        t = planner.target
        self.nt = t.reduce_threads
        self.full, self.axes, self.dtype = tuple(aval.shape), tuple(axes), aval.dtype
        kept_shape = [d for a, d in enumerate(self.full) if a not in axes]
        rshape = [self.full[a] for a in axes]
        K, self.R = size(kept_shape), size(rshape)
        r = Renderer(planner)
        r.ind = 1
        r.emit(f"sv = cuda.shared.array({self.nt}, {rules.ctor(self.dtype)})")
        r.emit("tid = cuda.threadIdx.x")
        r.emit(f"for blk in range(cuda.blockIdx.x, {K}, cuda.gridDim.x):")
        r.ind += 1
        r.push()
        kept = r.decompose("blk", kept_shape, "k")
        self.body_ind = r.ind
        # the slice's index, written the same way in every loop over the slice: a value that
        # several loops read is read at one symbolic index (not "materialized" for it)
        r.ind += 1
        n0 = len(r.lines)
        it = iter(kept)
        kept_map = {a: next(it) for a in range(len(self.full)) if a not in axes}
        self.full_idx = r.full_index(self.full, axes, kept_map,
                                     r.decompose("rr", rshape, "r"))
        self.slice_lines = [line.strip() for line in r.lines[n0:]]
        del r.lines[n0:]
        r.ind = self.body_ind
        super().__init__(planner, kept_shape, kind="reduce", r=r, idx=kept, flat="blk",
                         head=[], grid=(max(1, min(K, t.max_blocks)),), block=(self.nt,),
                         tail=[(self.body_ind, "cuda.syncthreads()")], n=K)
        self.keys = (self.shape, self.full)
        self.store_ind = self.body_ind
        self.store_guard = "tid == 0"  # the block's results: every thread holds them
        self.loop_end = None  # len(r.lines) where the last store loop ended
        self.loop_scope = None

    def accepts(self, e) -> bool:
        x = e.invars[0]
        return (e.primitive.kind == "reduction" and x.aval.shape == self.full and
                tuple(e.params["axes"]) == self.axes and x.aval.dtype == self.dtype)

    def _slice_loop(self):
        r = self.r
        r.emit(f"for rr in range(tid, {self.R}, {self.nt}):")
        r.ind += 1
        r.push()
        for line in self.slice_lines:
            r.emit(line)

    def add_reduction(self, planner, e):
        """A phase: the block reduces its slice of `e`'s input; every thread gets the result."""
        r = self.r
        op = rules.monoid(e.primitive)
        r.note_eqn(e)
        r.ind = self.body_ind
        start_acc(r, op, self.dtype, False)
        self._slice_loop()
        v = r.value(e.invars[0], self.full_idx)
        r.emit(f"acc = {rules.combine(op, 'acc', v, self.dtype)}")
        r.pop()
        r.ind = self.body_ind
        _tree(r, op, self.dtype, self.nt, False)
        rv = r.fresh("rv")
        r.emit(f"{rv} = sv[0]")
        r.emit("cuda.syncthreads()")  # every thread has read it before the next tree
        out = e.outvars[0]
        r.remember((out, self.idx), rv)
        r.members.add(out)
        self.outputs.append((out, rv))
        planner.owner[out] = self
        self.loop_end = None

    def join(self, planner, v):
        r = self.r
        if v.aval.shape != self.full:  # an output's shape: computed by every thread
            r.ind = self.body_ind
            super().join(planner, v)
            self.loop_end = None
            return
        if self.loop_end == len(r.lines):  # nothing since the last store loop: continue it
            r.ind = self.body_ind + 1
            r.scopes.append(self.loop_scope)
        else:
            r.ind = self.body_ind
            self._slice_loop()
        name = r.render_eqn(planner.producer[v], v, self.full_idx)
        r.remember((v, self.full_idx), name)
        r.emit(f"o{len(self.outputs)}[{r.linear(self.full_idx, self.full)}] = {name}")
        self.loop_scope = r.scopes.pop()
        r.ind = self.body_ind
        r.members.add(v)
        self.outputs.append((v, None))
        self.loop_end = len(r.lines)


def _column_reduce(planner, e, x, shape, axes, K, R, arg):
    """One thread per (kept element, chunk of rows): consecutive threads take consecutive
    kept elements, so every load of a warp is one contiguous segment. Chunks interleave
    rows (chunk c takes rows c, c + C, ...); with C > 1 the (K, C) partial results are
    combined by the block tree of `_reduce_pass2`."""
    t = planner.target
    op = rules.monoid(e.primitive)
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
    r = Renderer(planner)
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
    _accumulate(r, x, op, dt, shape, axes, kept_map, rshape, f"c, {R}, {C}", arg)
    n = K * C
    head = [f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):"]
    if C == 1:
        rv = r.fresh("rv")
        r.emit(f"{rv} = {rules.ctor(e.params['index_dtype'])}(acci)" if arg else
               f"{rv} = acc")
        planner.open_epilogue(e, r, kept, rv, flat="k", head=head, grid=planner.grid1(n),
                              block=planner.block1(n), n=K)
        return
    r.emit(f"o0[k * {C} + c] = acc")
    if arg:
        r.emit(f"o1[k * {C} + c] = acci")
    planner.finish("reduce", r, outs[0], outs, n, head, planner.grid1(n), planner.block1(n),
                   eqns=[e])
    planner.available.update(outs)
    _reduce_pass2(planner, e, outs, K, C, out, arg)


def _reduce_kernel(planner, e, x, shape, axes, K, R, P, outs, arg):
    """One block per (output, part): each thread accumulates a strided share, then the
    block's tree; with P == 1 the result stays open for an epilogue, else partials are stored."""
    t = planner.target
    nt = t.reduce_threads
    op = rules.monoid(e.primitive)
    dt = x.aval.dtype
    r = Renderer(planner)
    r.note_eqn(e)
    r.ind = 1
    kept_shape = [d for a, d in enumerate(shape) if a not in axes]
    rshape = [shape[a] for a in axes]
    r.emit(f"sv = cuda.shared.array({nt}, {rules.ctor(dt)})")
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
    _accumulate(r, x, op, dt, shape, axes, kept_map, rshape,
                f"{start}, {R}, {step}", arg)
    _tree(r, op, dt, nt, arg)
    grid = (max(1, min(K * P, t.max_blocks)),)
    r.emit("if tid == 0:")
    if P == 1:
        loop_ind = r.ind
        r.ind += 1
        rv = r.fresh("rv")
        r.emit(f"{rv} = {rules.ctor(e.params['index_dtype'])}(si[0])" if arg else
               f"{rv} = sv[0]")
        planner.open_epilogue(e, r, kept, rv, flat="o", head=[], grid=grid, block=(nt,),
                              tail=[(loop_ind, "cuda.syncthreads()")], n=K)
        return
    r.emit("    o0[blk] = sv[0]")
    if arg:
        r.emit("    o1[blk] = si[0]")
    r.emit("cuda.syncthreads()")
    r.pop()
    planner.finish("reduce", r, outs[0], outs, K, [], grid, (nt,), eqns=[e])
    planner.available.update(outs)


def _accumulate(r, x, op, dt, shape, axes, kept_map, rshape, bounds, arg):
    """Emit `acc` (and `acci` for argmax/argmin) over `for rr in range(bounds)`: one
    thread's share of a reduction, shared by the column and block reduction kernels."""
    start_acc(r, op, dt, arg)
    r.emit(f"for rr in range({bounds}):")
    r.ind += 1
    r.push()
    full = r.full_index(shape, axes, kept_map, r.decompose("rr", rshape, "r"))
    v = r.value(x, full)
    if arg:
        r.emit(f"if acci < 0 or {arg_better(op, v, 'acc', dt)}:")
        r.emit(f"    acc = {v}")
        r.emit("    acci = rr")
    else:
        r.emit(f"acc = {rules.combine(op, 'acc', v, dt)}")
    r.pop()
    r.ind -= 1


def _tree(r, op, dt, nt, arg):
    """Shared-memory tree: sv[0] (and si[0]) end up holding the block's result."""
    r.emit("sv[tid] = acc")
    if arg:
        r.emit("si[tid] = acci")
    r.emit("cuda.syncthreads()")
    r.emit(f"s = {nt // 2}")
    r.emit("while s > 0:")
    r.emit("    if tid < s:")
    r.ind += 2
    merge_into(r, op, dt, arg, "sv[tid + s]", "si[tid + s]", "sv[tid]", "si[tid]")
    r.ind -= 2
    r.emit("    cuda.syncthreads()")
    r.emit("    s //= 2")


def _reduce_pass2(planner, e, partials, K, P, out, arg):
    """Reduce the (K, P) partial results of the first pass: one block per output."""
    t = planner.target
    nt = t.reduce_threads
    op = rules.monoid(e.primitive)
    dt = partials[0].aval.dtype
    r = Renderer(planner)
    r.note_eqn(e)
    pv = r.arg(partials[0])
    pi = r.arg(partials[1]) if arg else None
    r.emit(f"sv = cuda.shared.array({nt}, {rules.ctor(dt)})")
    if arg:
        r.emit(f"si = cuda.shared.array({nt}, np.int64)")
    r.emit("tid = cuda.threadIdx.x")
    r.emit(f"for o in range(cuda.blockIdx.x, {K}, cuda.gridDim.x):")
    r.ind += 1
    start_acc(r, op, dt, arg)
    r.emit(f"for p in range(tid, {P}, {nt}):")
    r.ind += 1
    merge_into(r, op, dt, arg, f"{pv}[o * {P} + p]", f"{pi}[o * {P} + p]" if arg else None,
               "acc", "acci")
    r.ind -= 1
    _tree(r, op, dt, nt, arg)
    r.emit("if tid == 0:")
    loop_ind = r.ind
    r.ind += 1
    kept_shape = out.aval.shape
    kept = r.decompose("o", kept_shape, "k")
    rv = r.fresh("rv")
    r.emit(f"{rv} = {rules.ctor(e.params['index_dtype'])}(si[0])" if arg else
           f"{rv} = sv[0]")
    grid = (max(1, min(K, t.max_blocks)),)
    planner.open_epilogue(e, r, kept, rv, flat="o", head=[], grid=grid, block=(nt,),
                          tail=[(loop_ind, "cuda.syncthreads()")], n=K)



def tiled_dot(planner, e):
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
    B, M, N, Kc = size(bshape), size(mshape), size(nshape), size(kshape)
    t = planner.target
    T, R, BK = t.tile, t.reg, t.dot_depth
    BM = BN = T * R
    nthreads = T * T
    in_dt, out_dt = lhs.aval.dtype, out.aval.dtype
    c = rules.ctor(in_dt)
    zero = rules.literal(0, in_dt)
    r = Renderer(planner)
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
               + rules.combine(SUM, "acc[u, v]", "ra[u] * rb[v]", in_dt))
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
    r.emit(f"{rv} = {rules.cast('acc[u, v]', in_dt, out_dt)}")
    lim = 2 if t.simulator else t.max_grid
    grid = (max(1, min(NB, lim)), max(1, min(MB, lim)), max(1, min(B, lim)))
    # elementwise work on the product (ReLU, a bias) joins as the kernel's epilogue
    planner.open_epilogue(e, r, oidx, rv, kind="dot", flat="fo", head=[], grid=grid,
                          block=(T, T), n=B * M * N)



def cumulative_scan(planner, e):
    """One thread per line along the scanned axis, the running value in a register."""
    x = e.invars[0]
    out = e.outvars[0]
    axis, reverse = e.params["axis"], e.params["reverse"]
    shape = x.aval.shape
    op = rules.monoid(e.primitive)
    dt = x.aval.dtype
    D = shape[axis] if shape else 1
    others = [d for a, d in enumerate(shape) if a != axis]
    L = size(others)
    r = Renderer(planner)
    r.note_eqn(e)
    r.ind = 2
    oc = r.decompose("line", others, "l")
    r.emit(f"acc = {rules.identity(op, dt)}")
    r.emit(f"for s in range({D}):")
    r.ind += 1
    r.push()
    j = "s" if not reverse else r.index_local(f"{D - 1} - s")
    it = iter(oc)
    idx = tuple(j if a == axis else next(it) for a in range(len(shape)))
    v = r.value(x, idx)
    r.emit(f"acc = {rules.combine(op, 'acc', v, dt)}")
    r.emit(f"o0[{r.linear(idx, shape) if shape else '0'}] = acc")
    r.pop()
    planner.finish("cumulative", r, out, [out], size(shape),
                   [f"for line in range(cuda.grid(1), {L}, cuda.gridsize(1)):"],
                 planner.grid1(L), planner.block1(L), eqns=[e])
    planner.available.add(out)



def ordered_scatter(planner, e):
    """One thread per slice outside the indexed axes: copy the operand's slice, then apply
    the updates in order (deterministic, and NumPy's order for repeated indices)."""
    x, upd, *indices = e.invars
    out = e.outvars[0]
    axes, mode = e.params["axes"], e.params["mode"]
    shape = x.aval.shape
    dt = x.aval.dtype
    a0, na = axes[0], len(axes)
    pre, mid, post = shape[:a0], shape[a0:a0 + na], shape[a0 + na:]
    bshape = tuple(np.broadcast_shapes(*[i.aval.shape for i in indices]))
    nb = len(bshape)
    r = Renderer(planner)
    r.note_eqn(e)
    r.ind = 2
    sc = r.decompose("sl", list(pre) + list(post), "p")
    pc, qc = sc[:len(pre)], sc[len(pre):]
    r.emit(f"for jj in range({size(mid)}):")
    r.ind += 1
    r.push()
    mc = r.decompose("jj", mid, "m")
    full = tuple(pc) + tuple(mc) + tuple(qc)
    v = r.value(x, full)
    r.emit(f"o0[{r.linear(full, shape)}] = {v}")
    r.pop()
    r.ind -= 1
    target = tuple(pre) + bshape + tuple(post)
    r.emit(f"for bb in range({size(bshape)}):")
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
        op = {"add": SUM, "mul": PROD, "min": MIN, "max": MAX}[mode]  # the scatter's mode
        r.emit(f"o0[{dst}] = {rules.combine(op, f'o0[{dst}]', uv, dt)}")
    r.ind -= 1
    r.pop()
    NS = size(list(pre) + list(post))
    planner.finish("scatter", r, out, [out], size(shape),
                   [f"for sl in range(cuda.grid(1), {NS}, cuda.gridsize(1)):"],
                 planner.grid1(NS), planner.block1(NS), eqns=[e])
    planner.available.add(out)

