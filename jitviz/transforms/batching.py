"""Vectorization: batching rules, one table keyed by the `Primitive` object (`BATCH_RULES`),
and the jaxpr interpreter that applies them (`batch_replay`).

A batched value is an array with one extra dimension, the batch dimension `bdim` (None: the
value is the same for every example). Rules take `(args, dims, **params)` and return
`(outputs, output dims)`; most move the batch dimension to the front first.
"""
from __future__ import annotations

import numpy as np

from ..core.interpreter import results, run_jaxpr
from ..core.registry import Primitive
from ..debug import debug_print_p
from ..lax import primitives as P
from ..lax.control_flow import cond_p, scan_p, while_p
from ._util import (CALL_PRIMITIVES, TransformError, aval_of, broadcast_to, closed, convert,
                    iota, keep_source, moveaxis, read_literal, scalar, trace_avals, where)

BATCH_RULES: dict[Primitive, object] = {}
# primitives whose rule runs even when no operand is batched (collectives over a named vmap
# axis: a psum of an unbatched value is still a sum over the examples)
ALWAYS_BATCHED: set[Primitive] = set()


def bdim_to_front(x, d, size=None):
    """`x` with its batch dimension first (an unbatched `x` is broadcast when `size`)."""
    if d is None:
        if size is None:
            return x
        av = aval_of(x)
        return P.broadcast_in_dim_p.bind(x, shape=(size,) + av.shape,
                                         broadcast_dimensions=tuple(range(1, av.ndim + 1)))
    return moveaxis(x, d, 0)


def batch_size(args, dims):
    for a, d in zip(args, dims):
        if d is not None:
            return aval_of(a).shape[d]
    return None


# --- elementwise ------------------------------------------------------------------------------

def elementwise_rule(prim, full=False):
    """The batching rule of an elementwise primitive. Batched operands get the batch
    dimension first; unbatched ones of the example's rank get a leading 1 (lax broadcasts 1s
    and rank-0 operands); with `full` every operand is broadcast to the whole batched shape
    (select_n, clamp need exact shapes)."""
    def rule(args, dims, **params):
        size = batch_size(args, dims)
        ex_ranks = [aval_of(a).ndim - (d is not None) for a, d in zip(args, dims)]
        rank = max(ex_ranks)
        ex_shape = ()
        for a, d in zip(args, dims):
            s = list(aval_of(a).shape)
            if d is not None:
                del s[d]
            if len(s) == rank:
                ex_shape = tuple(np.broadcast_shapes(tuple(s), ex_shape)) if ex_shape else tuple(s)
        new = []
        for a, d, r in zip(args, dims, ex_ranks):
            if full:
                x = bdim_to_front(a, d, size)
                x = P.broadcast_in_dim_p.bind(x, shape=(size,) + ex_shape,
                                              broadcast_dimensions=(0,) + tuple(
                                                  range(1 + rank - r, 1 + rank))) \
                    if aval_of(x).shape != (size,) + ex_shape else x
                new.append(x)
                continue
            if d is None:
                if r == 0:
                    new.append(a)
                else:
                    new.append(P.reshape_p.bind(a, new_sizes=(1,) + aval_of(a).shape,
                                                dimensions=None))
            else:
                x = moveaxis(a, d, 0)
                if r < rank:
                    x = P.reshape_p.bind(x, new_sizes=(size,) + (1,) * rank, dimensions=None)
                new.append(x)
        return prim.bind(*new, **params), 0
    return rule


def _select_n_rule(args, dims):
    which, *cases = args
    wd, *cd = dims
    if wd is None and aval_of(which).ndim == 0:
        size = batch_size(args, dims)
        cs = [bdim_to_front(c, d, size) for c, d in zip(cases, cd)]
        return P.select_n_p.bind(which, *cs), 0
    return elementwise_rule(P.select_n_p, full=True)(args, dims)


def _clamp_rule(args, dims):
    lo, x, hi = args
    if dims[0] is None and dims[2] is None and aval_of(lo).ndim == 0 and aval_of(hi).ndim == 0:
        return P.clamp_p.bind(lo, x, hi), dims[1]
    return elementwise_rule(P.clamp_p, full=True)(args, dims)


def _unary_rule(prim):
    def rule(args, dims, **params):
        return prim.bind(*args, **params), dims[0]
    return rule


# --- structural --------------------------------------------------------------------------------

def _bid_rule(args, dims, *, shape, broadcast_dimensions):
    x = bdim_to_front(args[0], dims[0])
    size = aval_of(x).shape[0]
    return P.broadcast_in_dim_p.bind(x, shape=(size,) + tuple(shape),
                                     broadcast_dimensions=(0,) + tuple(
                                         d + 1 for d in broadcast_dimensions)), 0


def _reshape_rule(args, dims, *, new_sizes, dimensions):
    x = bdim_to_front(args[0], dims[0])
    return P.reshape_p.bind(x, new_sizes=(aval_of(x).shape[0],) + tuple(new_sizes),
                            dimensions=None), 0


def _transpose_rule(args, dims, *, permutation):
    x = bdim_to_front(args[0], dims[0])
    return P.transpose_p.bind(x, permutation=(0,) + tuple(p + 1 for p in permutation)), 0


def _shift_dims(prim, key):
    def rule(args, dims, **params):
        x = bdim_to_front(args[0], dims[0])
        params = dict(params)
        params[key] = tuple(d + 1 for d in params[key])
        return prim.bind(x, **params), 0
    return rule


def _shift_axis(prim, key):
    def rule(args, dims, **params):
        x = bdim_to_front(args[0], dims[0])
        params = dict(params)
        params[key] = params[key] + 1
        return prim.bind(x, **params), 0
    return rule


def _all_front(prim, key):
    def rule(args, dims, **params):
        size = batch_size(args, dims)
        xs = [bdim_to_front(a, d, size) for a, d in zip(args, dims)]
        params = dict(params)
        params[key] = params[key] + 1
        return prim.bind(*xs, **params), 0
    return rule


def _slice_rule(args, dims, *, start_indices, limit_indices, strides):
    x = bdim_to_front(args[0], dims[0])
    n = aval_of(x).shape[0]
    return P.slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                          limit_indices=(n,) + tuple(limit_indices),
                          strides=None if strides is None else (1,) + tuple(strides)), 0


def _batched_window_indices(x_shape, starts, sizes, size):
    """Index arrays reading, per example b, the window `x[b, s_b : s_b + size]` (starts are
    clamped as dynamic_slice clamps them)."""
    rank = len(sizes)
    out_shape = (size,) + tuple(sizes)
    idx = [iota(np.int32, out_shape, 0)]
    for d, (s, z) in enumerate(zip(starts, sizes)):
        s = convert(s, np.int32)
        s = P.clamp_p.bind(scalar(0, np.int32), s, scalar(x_shape[d + 1] - z, np.int32))
        if aval_of(s).ndim:  # batched start, shape (size,)
            s = P.broadcast_in_dim_p.bind(s, shape=out_shape, broadcast_dimensions=(0,))
        idx.append(P.add_p.bind(iota(np.int32, out_shape, d + 1), s))
    return idx, tuple(range(rank + 1))


def _zero_start(starts):
    """The start index of the batch axis put in front: 0, typed like the other starts."""
    return scalar(0, aval_of(starts[0]).dtype if starts else np.int32)


def _dyn_slice_rule(args, dims, *, slice_sizes):
    x, *starts = args
    xd, *sd = dims
    size = batch_size(args, dims)
    if all(d is None for d in sd):
        x = bdim_to_front(x, xd)
        return P.dynamic_slice_p.bind(x, _zero_start(starts), *starts,
                                      slice_sizes=(size,) + tuple(slice_sizes)), 0
    x = bdim_to_front(x, xd, size)
    starts = [bdim_to_front(s, d) for s, d in zip(starts, sd)]
    idx, axes = _batched_window_indices(aval_of(x).shape, starts, slice_sizes, size)
    return P.gather_p.bind(x, *idx, axes=axes), 0


def _dus_rule(args, dims):
    x, u, *starts = args
    xd, ud, *sd = dims
    size = batch_size(args, dims)
    x = bdim_to_front(x, xd, size)
    u = bdim_to_front(u, ud, size)
    if all(d is None for d in sd):
        return P.dynamic_update_slice_p.bind(x, u, _zero_start(starts), *starts), 0
    starts = [bdim_to_front(s, d) for s, d in zip(starts, sd)]
    idx, axes = _batched_window_indices(aval_of(x).shape, starts, aval_of(u).shape[1:], size)
    return P.scatter_p.bind(x, u, *idx, axes=axes, mode="set"), 0


def _gather_rule(args, dims, *, axes):
    x, *idx = args
    xd, *idd = dims
    size = batch_size(args, dims)
    if all(d is None for d in idd):
        x = bdim_to_front(x, xd)
        return P.gather_p.bind(x, *idx, axes=tuple(a + 1 for a in axes)), 0
    a0 = axes[0]
    if xd is None:
        # x[pre, idx...]: the batch dimension of the broadcast indices lands at a0
        idx = [bdim_to_front(i, d, size) for i, d in zip(idx, idd)]
        return P.gather_p.bind(x, *idx, axes=axes), a0
    x = moveaxis(x, xd, a0)  # batch just before the indexed axes
    ishape = np.broadcast_shapes(*[_ex_shape(i, d) for i, d in zip(idx, idd)])
    full_shape = (size,) + tuple(ishape)
    b = iota(np.int32, full_shape, 0)
    idx = [_to_full(i, d, size, ishape) for i, d in zip(idx, idd)]
    return P.gather_p.bind(x, b, *idx, axes=(a0,) + tuple(a + 1 for a in axes)), a0


def _ex_shape(x, d):
    s = list(aval_of(x).shape)
    if d is not None:
        del s[d]
    return tuple(s)


def _to_full(x, d, size, shape):
    """`x` (batched along `d`, or not) with the batch in front, broadcast to (size, *shape)."""
    x = bdim_to_front(x, d, size)
    r = aval_of(x).ndim - 1
    full = (size,) + tuple(shape)
    if aval_of(x).shape == full:
        return x
    return P.broadcast_in_dim_p.bind(x, shape=full, broadcast_dimensions=(0,) + tuple(
        range(1 + len(shape) - r, 1 + len(shape))))


def _scatter_rule(args, dims, *, axes, mode):
    x, u, *idx = args
    xd, ud, *idd = dims
    size = batch_size(args, dims)
    if all(d is None for d in idd):
        x = bdim_to_front(x, xd, size)
        # the update must broadcast against x[:, pre, idx, post]: give it every dimension
        ex_x = aval_of(x).shape[1:]
        target = _gather_target(ex_x, [aval_of(i).shape for i in idx], axes)
        u = _to_full(u, ud, size, target)
        return P.scatter_p.bind(x, u, *idx, axes=tuple(a + 1 for a in axes), mode=mode), 0
    a0 = axes[0]
    x = bdim_to_front(x, xd, size)
    ex_x = aval_of(x).shape[1:]
    ishape = np.broadcast_shapes(*[_ex_shape(i, d) for i, d in zip(idx, idd)])
    target = _gather_target(ex_x, [ishape], axes)
    u = _to_full(u, ud, size, target)  # (size, *target)
    # x: batch before the indexed axes; u: batch at a0 too (where the index dims start)
    x = moveaxis(x, 0, a0)
    u = moveaxis(u, 0, a0)
    b = iota(np.int32, (size,) + tuple(ishape), 0)
    idx = [_to_full(i, d, size, ishape) for i, d in zip(idx, idd)]
    out = P.scatter_p.bind(x, u, b, *idx, axes=(a0,) + tuple(a + 1 for a in axes), mode=mode)
    return out, a0


def _gather_target(ex_x, idx_shapes, axes):
    b = np.broadcast_shapes(*idx_shapes)
    return tuple(ex_x[:axes[0]]) + tuple(b) + tuple(ex_x[axes[-1] + 1:])


# --- reductions, cumulative, dot -----------------------------------------------------------

def _reduce_rule(prim):
    def rule(args, dims, **params):
        x = bdim_to_front(args[0], dims[0])
        params = dict(params)
        params["axes"] = tuple(a + 1 for a in params["axes"])
        return prim.bind(x, **params), 0
    return rule


def _dot_rule(args, dims, *, dimension_numbers, precision, preferred_element_type):
    lhs, rhs = args
    ld, rd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    sh = lambda t: tuple(i + 1 for i in t)  # noqa: E731
    if ld is not None and rd is not None:
        lhs, rhs = moveaxis(lhs, ld, 0), moveaxis(rhs, rd, 0)
        dn = ((sh(lc), sh(rc)), ((0,) + sh(lb), (0,) + sh(rb)))
        return P.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **kw), 0
    if ld is not None:
        lhs = moveaxis(lhs, ld, 0)
        dn = ((sh(lc), tuple(rc)), (sh(lb), tuple(rb)))
        return P.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **kw), len(lb)
    rhs = moveaxis(rhs, rd, 0)
    dn = ((tuple(lc), sh(rc)), (tuple(lb), sh(rb)))
    l_free = aval_of(lhs).ndim - len(lc) - len(lb)
    return P.dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **kw), len(lb) + l_free


# --- the table ------------------------------------------------------------------------------

for _p in vars(P).values():
    if isinstance(_p, Primitive) and _p.kind == "elementwise":
        BATCH_RULES[_p] = elementwise_rule(_p)
BATCH_RULES[P.select_n_p] = _select_n_rule
BATCH_RULES[P.clamp_p] = _clamp_rule
for _p in (P.convert_element_type_p, P.round_p, P.integer_pow_p):
    BATCH_RULES[_p] = _unary_rule(_p)
for _p in (P.neg_p, P.sign_p, P.floor_p, P.ceil_p, P.is_finite_p, P.exp_p, P.exp2_p, P.log_p,
           P.log1p_p, P.expm1_p, P.tanh_p, P.logistic_p, P.sin_p, P.cos_p, P.tan_p, P.asin_p,
           P.acos_p, P.atan_p, P.sinh_p, P.cosh_p, P.asinh_p, P.acosh_p, P.atanh_p, P.sqrt_p,
           P.rsqrt_p, P.cbrt_p, P.square_p, P.not_p, P.abs_p, P.real_p, P.imag_p, P.conj_p):
    BATCH_RULES[_p] = _unary_rule(_p)
BATCH_RULES[P.broadcast_in_dim_p] = _bid_rule
BATCH_RULES[P.reshape_p] = _reshape_rule
BATCH_RULES[P.transpose_p] = _transpose_rule
BATCH_RULES[P.squeeze_p] = _shift_dims(P.squeeze_p, "dimensions")
BATCH_RULES[P.rev_p] = _shift_dims(P.rev_p, "dimensions")
BATCH_RULES[P.concatenate_p] = _all_front(P.concatenate_p, "dimension")
BATCH_RULES[P.stack_p] = _all_front(P.stack_p, "axis")
BATCH_RULES[P.slice_p] = _slice_rule
BATCH_RULES[P.dynamic_slice_p] = _dyn_slice_rule
BATCH_RULES[P.dynamic_update_slice_p] = _dus_rule
BATCH_RULES[P.gather_p] = _gather_rule
BATCH_RULES[P.scatter_p] = _scatter_rule
BATCH_RULES[P.iota_p] = lambda args, dims, **params: (P.iota_p.bind(**params), None)
for _p in (P.reduce_sum_p, P.reduce_prod_p, P.reduce_max_p, P.reduce_min_p, P.reduce_and_p,
           P.reduce_or_p, P.argmax_p, P.argmin_p):
    BATCH_RULES[_p] = _reduce_rule(_p)
for _p in (P.cumsum_p, P.cumprod_p, P.cummax_p, P.cummin_p):
    BATCH_RULES[_p] = _shift_axis(_p, "axis")
BATCH_RULES[P.dot_general_p] = _dot_rule


# --- the interpreter -------------------------------------------------------------------------

def batch_replay(jaxpr, args, dims):
    """Apply `jaxpr` to batched values; returns (outputs, their batch dims). Values are
    (value, batch dimension or None) pairs."""
    def apply_eqn(eqn, vals):
        prim = eqn.primitive
        ins, ds = [x for x, _ in vals], [d for _, d in vals]
        with keep_source(eqn):
            if all(d is None for d in ds) and prim not in ALWAYS_BATCHED:
                outs = results(eqn, prim.bind(*ins, **eqn.params))
                odims = [None] * len(outs)
            else:
                rule = BATCH_RULES.get(prim)
                if rule is None:
                    raise TransformError(f"no batching rule for the primitive "
                                         f"{prim.name!r}{where(eqn)}")
                outs, odims = rule(ins, ds, **eqn.params)
                if not prim.multiple_results:
                    outs, odims = [outs], [odims]
                elif not isinstance(odims, (list, tuple)):
                    odims = [odims] * len(outs)
        return list(zip(outs, odims))

    outs, _ = run_jaxpr(jaxpr, list(zip(args, dims)), apply_eqn,
                        literal=lambda a: (read_literal(a), None))
    return [o for o, _ in outs], [d for _, d in outs]


def batch_jaxpr(jaxpr, batched, size, force_out=None):
    """A jaxpr on batched inputs (batch dimension 0 where `batched`); outputs batched at 0
    where they depend on a batched input (or `force_out[i]`). Returns (jaxpr, out batched)."""
    in_avals = [v.aval.update(shape=(size,) + v.aval.shape) if b else v.aval
                for v, b in zip(jaxpr.invars, batched)]
    result = {}

    def fun(*args):
        outs, dims = batch_replay(jaxpr, list(args), [0 if b else None for b in batched])
        new, flags = [], []
        for i, (o, d) in enumerate(zip(outs, dims)):
            want = d is not None or (force_out is not None and force_out[i])
            new.append(bdim_to_front(o, d, size) if want else o)
            flags.append(want)
        result["flags"] = flags
        return new
    j = trace_avals(fun, in_avals, name="batched body")
    return j, result["flags"]


# --- control flow --------------------------------------------------------------------------

def _cond_rule(args, dims, *, branches):
    index, *ops = args
    idim, *odims = dims
    size = batch_size(args, dims)
    ops = [bdim_to_front(o, d) for o, d in zip(ops, odims)]
    batched = [d is not None for d in odims]
    n_out = len(branches[0].jaxpr.outvars)
    if idim is None:
        force = [True] * n_out
        new = [closed(batch_jaxpr(b.jaxpr, batched, size, force)[0]) for b in branches]
        return cond_p.bind(index, *ops, branches=tuple(new)), [0] * n_out
    # a batched predicate: run every branch, then select per example
    from ..core.interpreter import inline_jaxpr
    index = bdim_to_front(index, idim)
    results = []
    for b in branches:
        j, _ = batch_jaxpr(b.jaxpr, batched, size, [True] * n_out)
        results.append(inline_jaxpr(j, (), *ops))
    outs = []
    for k in range(n_out):
        cases = [r[k] for r in results]
        shape = aval_of(cases[0]).shape
        which = P.clamp_p.bind(scalar(0, np.int32), index, scalar(len(branches) - 1, np.int32))
        which = P.broadcast_in_dim_p.bind(which, shape=shape, broadcast_dimensions=(0,)) \
            if len(shape) > 1 else which
        if len(cases) == 2:
            which = P.ne_p.bind(which, broadcast_to(scalar(0, np.int32), aval_of(which).shape))
        outs.append(P.select_n_p.bind(which, *cases))
    return outs, [0] * n_out


BATCH_RULES[cond_p] = _cond_rule


def _scan_rule(args, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    body = jaxpr.jaxpr
    nc, nk = num_consts, num_carry
    size = batch_size(args, dims)
    const_b = [d is not None for d in dims[:nc]]
    carry_b = [d is not None for d in dims[nc:nc + nk]]
    xs_b = [d is not None for d in dims[nc + nk:]]
    for _ in range(nk + 1):  # carries batched by the body become batched: a fixpoint
        j, out_b = batch_jaxpr(body, const_b + carry_b + xs_b, size, carry_b + [False] * (
            len(body.outvars) - nk))
        new_carry = [a or b for a, b in zip(carry_b, out_b[:nk])]
        if new_carry == carry_b:
            break
        carry_b = new_carry
    y_b = out_b[nk:]
    # the body sees examples with batch first; xs and ys keep the scan axis first
    j, _ = batch_jaxpr(body, const_b + carry_b + xs_b, size,
                       carry_b + [True if b else False for b in y_b])
    consts = [bdim_to_front(a, d) for a, d in zip(args[:nc], dims[:nc])]
    carry = [bdim_to_front(a, d, size) if b else a for a, d, b in
             zip(args[nc:nc + nk], dims[nc:nc + nk], carry_b)]
    xs = [moveaxis(a, d, 1) if d is not None else a for a, d in zip(args[nc + nk:],
                                                                     dims[nc + nk:])]
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=closed(j), length=length, reverse=reverse,
                       num_consts=nc, num_carry=nk, unroll=unroll)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in y_b]


BATCH_RULES[scan_p] = _scan_rule


def _while_rule(args, dims, *, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    from ..core.interpreter import inline_jaxpr
    ncc, nbc = cond_nconsts, body_nconsts
    size = batch_size(args, dims)
    cc_b = [d is not None for d in dims[:ncc]]
    bc_b = [d is not None for d in dims[ncc:ncc + nbc]]
    k_b = [d is not None for d in dims[ncc + nbc:]]
    body, cj = body_jaxpr.jaxpr, cond_jaxpr.jaxpr
    nk = len(k_b)
    for _ in range(nk + 1):
        _, out_b = batch_jaxpr(body, bc_b + k_b, size, k_b)
        new = [a or b for a, b in zip(k_b, out_b)]
        if new == k_b:
            break
        k_b = new
    _, pred_b = batch_jaxpr(cj, cc_b + k_b, size)
    if pred_b[0]:
        k_b = [True] * nk  # a per-example predicate: every carry is per example
    cconsts = [bdim_to_front(a, d) for a, d in zip(args[:ncc], dims[:ncc])]
    bconsts = [bdim_to_front(a, d) for a, d in zip(args[ncc:ncc + nbc], dims[ncc:ncc + nbc])]
    carry = [bdim_to_front(a, d, size) if b else a for a, d, b in
             zip(args[ncc + nbc:], dims[ncc + nbc:], k_b)]
    bj, _ = batch_jaxpr(body, bc_b + k_b, size, k_b)
    cjb, _ = batch_jaxpr(cj, cc_b + k_b, size, [pred_b[0]])
    if not pred_b[0]:
        outs = while_p.bind(*cconsts, *bconsts, *carry, cond_jaxpr=closed(cjb),
                            cond_nconsts=ncc, body_jaxpr=closed(bj), body_nconsts=nbc)
        return outs, [0 if b else None for b in k_b]
    # run while any example continues; finished examples keep their carry
    c_avals = [v.aval for v in cjb.invars]

    def cond_fun(*a):
        p, = inline_jaxpr(cjb, (), *a)
        return [P.reduce_or_p.bind(p, axes=(0,))]
    new_cond = trace_avals(cond_fun, c_avals, name="while cond")
    b_avals = [v.aval for v in bj.invars]

    def body_fun(*a):
        cc, rest = a[:ncc], a[ncc:]
        bc, k = rest[:nbc], rest[nbc:]
        p, = inline_jaxpr(cjb, (), *cc, *k)
        new = inline_jaxpr(bj, (), *bc, *k)
        out = []
        for old, nw in zip(k, new):
            sh = aval_of(old).shape
            w = P.broadcast_in_dim_p.bind(p, shape=sh, broadcast_dimensions=(0,)) \
                if len(sh) > 1 else p
            out.append(P.select_n_p.bind(w, old, nw))
        return out
    new_body = trace_avals(body_fun, c_avals[:ncc] + b_avals, name="while body")
    outs = while_p.bind(*cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=closed(new_cond),
                        cond_nconsts=ncc, body_jaxpr=closed(new_body), body_nconsts=ncc + nbc)
    return outs, [0] * nk


BATCH_RULES[while_p] = _while_rule


def _call_rule(prim):
    def rule(args, dims, *, name, jaxpr):
        size = batch_size(args, dims)
        batched = [d is not None for d in dims]
        args = [bdim_to_front(a, d) for a, d in zip(args, dims)]
        j, flags = batch_jaxpr(jaxpr.jaxpr, batched, size)
        if jaxpr.consts:
            raise TransformError("batching a call whose jaxpr has constants")
        outs = prim.bind(*args, name=f"vmap({name})", jaxpr=closed(j))
        return outs, [0 if f else None for f in flags]
    return rule


def _debug_print_rule(args, dims, *, batch_rank=0, **params):
    """One line per example, as JAX's batched debug print: every value gets this vmap's axis
    after the batch axes it already has (unbatched values broadcast), and the print iterates
    the leading batch axes in order, so the first vmap applied varies slowest (as JAX)."""
    size = batch_size(args, dims)
    placed = [moveaxis(bdim_to_front(a, d, size), 0, batch_rank) for a, d in zip(args, dims)]
    return debug_print_p.bind(*placed, batch_rank=batch_rank + 1, **params), []


BATCH_RULES[debug_print_p] = _debug_print_rule
for _p in CALL_PRIMITIVES:
    BATCH_RULES[_p] = _call_rule(_p)
