"""The CPU backend's program-level rules (target "cpu.statement"): the statements of the
driver and of control-flow regions, one rule `rule(fb, eqn)` per primitive that is not
computed inside a fused kernel (`rules.py` has those), `fb` the `FunctionBuilder` of
`render_program.py`.

The same rules serve both contexts (`fb.host` tells them apart where it matters): their text
is valid NumPy and valid Numba. Structural operations are NumPy views on the host,
`dot_general` is BLAS, gathers, scatters, arg-reductions and cumulative ops call runtime
helpers on a (pre, axis, post) view, control flow becomes a Numba region.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...core.fused import fused_p
from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ...core.registry import lowering_rule
from ...debug import debug_print_p, emit
from ...lax import control_flow as cf
from ...lax import primitives as lax
from ..numba_text import ctor, is_half
from . import buffers
from .rules import STATEMENT, in_kernels, operations_per_element, register_rules

if TYPE_CHECKING:
    from .render_program import FunctionBuilder


def _alloc_text(fb, shape, dtype) -> str:
    """A new output array: large ones on the host come from the buffer pool."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    fn = "_empty" if fb.host and nbytes >= buffers.MIN_BYTES else "np.empty"
    return f"{fn}({fb.shape(shape)}, {ctor(dtype)})"


# --- fused kernels ---------------------------------------------------------------------------

def _flat_body(body: Jaxpr):
    """A kernel body of elementwise equations, and reductions over every axis, whose arrays
    all have one shape, as the same program over a vector of that many values, with a map
    from its equations to the body's; or None. Its loops then run over every value at
    once: a loop over the last axis alone ran `jnp.sin` of a (333334, 3) array 16x slower
    than of a 1-D one (three values per row: no block, no vector), and its `x.sum()` 30x."""
    values = [*body.invars, *body.outvars] + [a for e in body.eqns
                                              for a in (*e.invars, *e.outvars)]
    shapes = {a.aval.shape for a in values if a.aval.ndim}
    if len(shapes) != 1 or body.constvars:
        return None
    (shape,) = shapes
    if len(shape) < 2 or not all(_flattens(e, len(shape)) for e in body.eqns):
        return None
    size, new = math.prod(shape), {}

    def flat(a):
        if isinstance(a, Literal) or not a.aval.ndim:
            return a
        if a.id not in new:
            aval = a.aval
            new[a.id] = Var(type(aval)((size,), aval.dtype, aval.weak_type), a.origin)
        return new[a.id]
    eqns = [e.replace(invars=[flat(a) for a in e.invars], outvars=[flat(a) for a in e.outvars],
                      params={**e.params, "axes": (0,)} if "axes" in e.params else e.params)
            for e in body.eqns]
    back = {id(f): e for f, e in zip(eqns, body.eqns)}
    return Jaxpr((), [flat(a) for a in body.invars], [flat(a) for a in body.outvars],
                 eqns), back


def _flattens(e: Eqn, rank: int) -> bool:
    """An elementwise equation, or a reduction over every axis (to a scalar), whose other
    parameters say nothing of shapes."""
    params = dict(e.params)
    if e.primitive.kind == "reduction":
        axes = params.pop("axes", ())
        if sorted(a % rank for a in axes) != list(range(rank)):
            return False
    elif e.primitive.kind != "elementwise":
        return False
    return not any(isinstance(p, (tuple, list, Jaxpr, ClosedJaxpr)) for p in params.values())


#: short rows: a body over (..., N, w) with w below SHORT_ROW whose other operands are rows
#: of w values (`x * b`, b of shape (w,)) or columns (`x * c`, c of shape (..., N, 1)) runs
#: over (C, L) views, L = TILE_MIN or more values a multiple of w and of 16 (a vector of
#: float32), the rows tiled to L values once per call, each column's values repeated w times
#: (a copy the size of the body's arrays: worth it only where the body calls an elementary
#: function, rules.COST; (349525, 3) float32 `jnp.tanh(x) * c` 12.6 ms in the nest, 0.95 ms
#: so, `jnp.exp(x) * c` 2.41 -> 0.96 ms, but `x * c` 726 -> 966 us). From TILE_MIN_SIZE
#: values: below, the tiling and a second call for the rows left over cost more than they
#: save (1000x8 float32 `exp(c - cb)`: 9 us as it was, 12-16 us tiled)
SHORT_ROW, TILE_MIN, TILE_MIN_SIZE = 16, 48, 1 << 14


def _tiled_body(body: Jaxpr):
    """A kernel body over short rows (see SHORT_ROW) as the same program over (C, L) views:
    (body over (C, L), map to the body's equations, k rows per view row, the ids of the row
    inputs, which the call tiles k times into (1, L), and of the column inputs, whose values
    it repeats w times into (C, L)), or None. A loop over rows of 3 values runs scalar code
    (no vector fits a row): `jnp.tanh(x) * b` of a (349525, 3) float32 array took 11.8 ms in
    a bare Numba loop of that shape, 0.61 ms over (C, 48) views (tanh of the same values as
    one vector: 0.34 ms; NumPy 1.95 ms)."""
    if body.constvars or not body.outvars:
        return None
    shape = body.outvars[0].aval.shape
    w = shape[-1] if shape else 0
    if len(shape) < 2 or not 2 <= w < SHORT_ROW or any(
            not isinstance(o, Var) or o.aval.shape != shape for o in body.outvars):
        return None
    rank = len(shape)

    def is_row(a):  # (..., 1, w): one row of w values, broadcast over the others
        sh = a.aval.shape
        return 1 <= len(sh) <= rank and sh[-1] == w and all(d == 1 for d in sh[:-1])

    def is_col(a):  # (..., N, 1): one value per row, broadcast along it
        return a.aval.shape == shape[:-1] + (1,)

    def fits(a):  # a value of the body's shape, a row, a column, or a scalar
        return not isinstance(a, Var) or not a.aval.ndim or a.aval.shape == shape or \
            is_row(a) or is_col(a)
    for e in body.eqns:
        out = e.outvars[0]
        if e.primitive is lax.broadcast_in_dim_p:
            (u,) = e.invars
            dims = e.params["broadcast_dimensions"]
            if not (isinstance(u, Var) and fits(out) and out.aval.ndim and (
                    (is_row(u) and dims[-1] == out.aval.ndim - 1)
                    or (is_col(u) and dims == tuple(range(rank))))):
                return None
        elif e.primitive.kind != "elementwise" or any(
                isinstance(p, (tuple, list, Jaxpr, ClosedJaxpr)) for p in e.params.values()) \
                or not all(fits(a) for a in (*e.invars, *e.outvars)):
            return None
    others = [v for v in body.invars if v.aval.ndim and v.aval.shape != shape]
    if not others or not all(is_row(v) or is_col(v) for v in others):
        return None
    rows = {v.id for v in others if is_row(v)}
    cols = {v.id for v in others if v.id not in rows}
    if cols and not any(operations_per_element(e.primitive) > 1 for e in body.eqns):
        return None  # (arithmetic alone: the nest costs less than the columns' copy)
    size = math.prod(shape)
    if size < TILE_MIN_SIZE:
        return None
    tile = math.lcm(w, 16) * -(-TILE_MIN // math.lcm(w, 16))
    k, chunks = tile // w, size // tile
    new = {}

    def view(a):
        if isinstance(a, Literal) or not a.aval.ndim:
            return a
        if a.id not in new:
            aval = a.aval
            # a column, repeated, is a whole view; a row is tiled into one
            dims = (1, tile) if is_row(a) and aval.shape != shape else (chunks, tile)
            new[a.id] = Var(type(aval)(dims, aval.dtype, aval.weak_type), a.origin)
        return new[a.id]
    eqns = []
    for e in body.eqns:
        params = e.params
        if e.primitive is lax.broadcast_in_dim_p:
            params = {**params, "shape": view(e.outvars[0]).aval.shape,
                      "broadcast_dimensions": (0, 1)}
        eqns.append(e.replace(invars=[view(a) for a in e.invars],
                              outvars=[view(a) for a in e.outvars], params=params))
    back = {id(f): e for f, e in zip(eqns, body.eqns)}
    tiled = Jaxpr((), [view(a) for a in body.invars], [view(a) for a in body.outvars], eqns)
    return tiled, back, k, rows, cols


def _fused(fb: FunctionBuilder, eqn: Eqn):
    body = eqn.params["jaxpr"].jaxpr
    contiguous = all(fb.layout(a) in ("C", "S") for a in eqn.invars)
    tiled = _tiled_body(body) if contiguous and fb.host and not any(
        is_half(a.aval.dtype) for a in (*eqn.invars, *eqn.outvars)) else None
    if tiled is not None:
        return _fused_tiled(fb, eqn, body, *tiled)
    # C-contiguous arrays of one shape: the kernel sees them as vectors (reshape: a view)
    flat = _flat_body(body) if contiguous else None
    callee, code = fb.program.kernel_for(fb, body, eqn.params["name"], eqn.invars, flat)
    as_vector = ".reshape(-1)" if flat else ""
    args = [fb.kernel_arg(a) + (as_vector if a.aval.ndim else "") for a in eqn.invars]
    for i in code.array_outs:
        v = eqn.outvars[i]
        name = fb.define(v, "C", prefix="o")
        fb.emit(f"{name} = {_alloc_text(fb, v.aval.shape, v.aval.dtype)}", eqn)
        args.append(fb.kernel_arg(v) + as_vector)
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


def _fused_tiled(fb: FunctionBuilder, eqn: Eqn, body, tiled, back, k, rows, cols):
    """A short-row body (`_tiled_body`) on the host: the kernel over (C, L) views of the
    first C k rows, its row inputs tiled k times, its column inputs' values for those rows
    repeated w times; the rows left over (fewer than k) by the body's own kernel on views
    of them."""
    shape = body.outvars[0].aval.shape
    w = shape[-1]
    chunks, tile = tiled.outvars[0].aval.shape
    head = chunks * tile
    left = math.prod(shape) - head
    callee, code = fb.program.kernel_for(fb, body, eqn.params["name"], eqn.invars,
                                         (tiled, back))
    assert not code.scalar_outs  # (_tiled_body: every output is an array of the body's shape)
    outs = []
    for v in eqn.outvars:
        name = fb.define(v, "C", prefix="o")
        fb.emit(f"{name} = {_alloc_text(fb, v.aval.shape, v.aval.dtype)}", eqn)
        outs.append(name)

    def part(name, lo, hi, dims):
        return f"{name}.reshape(-1)[{lo}:{hi}].reshape({', '.join(map(str, dims))},)"
    args = []
    for v, a in zip(body.invars, eqn.invars):
        name = fb.kernel_arg(a)
        if v.id in rows:
            args.append(f"np.tile({name}.reshape(-1), {k}).reshape(1, {tile})")
        elif v.id in cols:
            args.append(f"np.repeat({name}.reshape(-1)[:{head // w}], {w})"
                        f".reshape({chunks}, {tile})")
        else:
            args.append(part(name, 0, head, (chunks, tile)) if a.aval.ndim else name)
    args += [part(o, 0, head, (chunks, tile)) for o in outs]
    args += [fb.kernel_arg(lit) for lit in code.consts]
    fb.emit(f"{callee}({', '.join(args)})", eqn)
    if not left:
        return
    # the rows left over: the body's kernel, on views that keep its rank
    callee, code = fb.program.kernel_for(fb, body, eqn.params["name"] + "_rest", eqn.invars)
    dims = (1,) * (len(shape) - 2) + (left // w, w)
    args = []
    for v, a in zip(body.invars, eqn.invars):
        name = fb.kernel_arg(a)
        if v.id in cols:
            args.append(part(name, head // w, "", dims[:-1] + (1,)))
        elif v.id not in rows and a.aval.ndim:
            args.append(part(name, head, "", dims))
        else:
            args.append(name)
    args += [part(o, head, "", dims) for o in outs]
    args += [fb.kernel_arg(lit) for lit in code.consts]
    fb.emit(f"{callee}({', '.join(args)})", eqn)


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
    """argmax/argmin along one axis of (pre, n, post) (numbers: the primitives take no
    complex) by vectorized helpers: `rt.<helper>_rows` along the last axis (post 1: a
    reduction, then a blockwise search), `rt.<helper>_cols` along another (vectorized over
    the post columns, counting in int32); `rt.<helper>3`, a scalar loop, for an axis of
    2**31 values or more."""
    def rule(fb, eqn):
        x, v = eqn.invars[0], eqn.outvars[0]
        (axis,) = eqn.params["axes"]
        pre, n, post = _pre_mid_post(x.aval.shape, axis, axis + 1)
        form = ("_rows" if post == 1 else "_cols") if n < 2 ** 31 else "3"
        x3, o2 = fb.fresh("x3_"), fb.fresh("o2_")
        fb.emit(f"{x3} = {fb.contiguous(x)}.reshape({fb.shape((pre, n, post))})", eqn)
        fb.emit(f"{o2} = np.empty({fb.shape((pre, post))}, {ctor(v.aval.dtype)})", eqn)
        fb.emit(f"rt.{helper}{form}({x3}, {o2})", eqn)
        _from_nd(fb, v, o2, 2, eqn)
    return rule


def _cumulative(helper, bool_helper):
    """A scan along one axis, in place on a copy, by `rt.<helper>`; by `rt.<bool_helper>` on
    booleans (where a sum or max is an or, a product or min an and)."""
    def rule(fb, eqn):
        x, v = eqn.invars[0], eqn.outvars[0]
        if x.aval.ndim == 0:
            return fb.assign(v, fb.atom(x), eqn, "S")
        axis = eqn.params["axis"]
        pre, n, post = _pre_mid_post(x.aval.shape, axis, axis + 1)
        name = fb.assign(v, f"np.ascontiguousarray({fb.atom(x)}).copy()", eqn)
        scan = bool_helper if x.aval.dtype == np.bool_ else helper
        fb.emit(f"rt.{scan}({name}.reshape({fb.shape((pre, n, post))}), "
                f"{bool(eqn.params['reverse'])})", eqn)
    return rule


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
            f"({args}{',' if eqn.invars else ''}), {eqn.params.get('batch_rank', 0)})")
    if fb.host:
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


register_rules(STATEMENT, {
    fused_p: _fused,
    cf.cond_p: _region_or(_cond_inline), cf.while_p: _region_or(_while_inline),
    cf.scan_p: _region_or(_scan_inline), cf.jit_p: _jit_inline,
    lax.reshape_p: _reshape, lax.squeeze_p: _reshape, lax.transpose_p: _transpose,
    lax.rev_p: _rev, lax.slice_p: _slice, lax.dynamic_slice_p: _dynamic_slice,
    lax.dynamic_update_slice_p: _dynamic_update_slice, lax.concatenate_p: _concatenate,
    lax.stack_p: _stack, lax.gather_p: _gather, lax.scatter_p: _scatter,
    lax.argmax_p: _arg_reduce("argmax"), lax.argmin_p: _arg_reduce("argmin"),
    lax.cumsum_p: _cumulative("cumsum3", "cumor3"),
    lax.cumprod_p: _cumulative("cumprod3", "cumand3"),
    lax.cummax_p: _cumulative("cummax3", "cumor3"),
    lax.cummin_p: _cumulative("cummin3", "cumand3"),
    lax.dot_general_p: _dot_general, debug_print_p: _debug_print,
})


def statement_rule(prim):
    """The rule that renders an equation of `prim` in the driver or a region: its own, else
    (a kernel primitive outside any `fused`) a one-equation kernel; None if neither."""
    rule = lowering_rule(prim, STATEMENT)
    if rule is None and in_kernels(prim):
        return _unfused
    return rule
