"""Reverse mode by VJP rules: one table keyed by the `Primitive` object (`VJP_RULES`), plus
forward / backward pairs for the primitives that hold sub-jaxprs (`VJP_CALL_RULES`: cond, scan,
jit, fused, and while, which refuses).

`vjp_jaxpr(jaxpr)` splits a jaxpr into two jaxprs, as JAX's linearize + transpose does:

    forward:  inputs -> outputs, residuals        (the primal program, keeping what is needed)
    backward: residuals, output cotangents -> input cotangents

The backward jaxpr is traced as a child of the forward one, so the residuals are exactly the
forward values the backward rules read (the tracer machinery's closure hoisting finds them).
`grad`/`vjp` emit the two as `jit` calls named `forward(f)` and `backward(f)`: they print and
draw as two clusters, and every backend compiles them (calls are inlined).

Rules take `(cts, primals, outs, **params)` — `cts` the output cotangent (a list for
multiple-result primitives, None entries for zeros) — and return a cotangent per operand.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.interpreter import results, run_jaxpr
from ..core.ir import ShapedArray, Var
from ..core.registry import Primitive
from ..core.trace import JaxprTrace, current_trace, push_trace
from ..debug import debug_print_p
from ..lax import primitives as P
from ..lax.control_flow import cond_p, scan_p, while_p
from ._util import (CALL_PRIMITIVES, TransformError, add_any, aval_of, closed, convert,
                    instantiate, is_float, keep_source, mul, neg, read_literal, strong,
                    trace_avals, unbroadcast, where, zeros)
from .jvp import (DERIVATIVES, NON_DIFFERENTIABLE, along_axis_indices, cum_source_index,
                  extremum_weights, keep_dims, partials, prod_of_others)

VJP_RULES: dict[Primitive, object] = {}
# primitive -> (forward(primals, **params) -> (outs, res), backward)
VJP_CALL_RULES: dict[Primitive, tuple] = {}


# --- elementwise ------------------------------------------------------------------------------

def _elementwise_vjp(prim):
    def rule(ct, primals, out, **params):
        return _through_partials(ct, primals, partials(prim, primals, out, params))
    # reverse mode computes these partials in the forward pass (`forward_replay`), as JAX
    # does: the residual is the derivative (cos x for sin x), not the operand
    rule.partials_in_forward = True
    return rule


def _through_partials(ct, primals, ds):
    return [None if d is None else unbroadcast(mul(ct, d), aval_of(x))
            for x, d in zip(primals, ds)]


for _p in DERIVATIVES:
    VJP_RULES[_p] = _elementwise_vjp(_p)

def _abs_vjp(ct, primals, out):
    """The transpose of |x|'s complex JVP t -> Re(conj(s) t): ct -> ct conj(s), s = sign x
    (as JAX transposes: no conjugation in the pairing)."""
    (x,) = primals
    dt = aval_of(x).dtype
    if dt.kind != "c":
        return _elementwise_vjp(P.abs_p)(ct, primals, out)
    return [mul(convert(ct, dt), P.conj_p.bind(P.sign_p.bind(x)))]


VJP_RULES[P.abs_p] = _abs_vjp
VJP_RULES[P.neg_p] = lambda ct, primals, out: [neg(ct)]
VJP_RULES[P.add_p] = lambda ct, primals, out: [unbroadcast(ct, aval_of(x)) for x in primals]
VJP_RULES[P.sub_p] = lambda ct, primals, out: [unbroadcast(ct, aval_of(primals[0])),
                                             unbroadcast(neg(ct), aval_of(primals[1]))]
VJP_RULES[P.real_p] = lambda ct, primals, out: [convert(ct, aval_of(primals[0]).dtype)]
VJP_RULES[P.imag_p] = lambda ct, primals, out: [
    mul(convert(neg(ct), aval_of(primals[0]).dtype), _imag_unit(primals[0]))]
VJP_RULES[P.conj_p] = lambda ct, primals, out: [P.conj_p.bind(ct)]
# complex(x, y) = x + iy transposes to (Re ct, -Im ct), JAX's pairing (no conjugation)
VJP_RULES[P.complex_p] = lambda ct, primals, out: [
    unbroadcast(P.real_p.bind(ct), aval_of(primals[0])),
    unbroadcast(neg(P.imag_p.bind(ct)), aval_of(primals[1]))]


def _imag_unit(like):
    from ._util import scalar
    return scalar(1j, aval_of(like).dtype)


def _convert_vjp(ct, primals, out, *, new_dtype, weak_type):
    x, = primals
    if not is_float(aval_of(x)):
        return [None]
    return [convert(ct, aval_of(x).dtype)]


VJP_RULES[P.convert_element_type_p] = _convert_vjp


def _select_vjp(ct, primals, out):
    which, *cases = primals
    z = zeros(aval_of(ct))
    outs = [None]
    for i in range(len(cases)):
        picks = [z] * len(cases)
        picks[i] = ct
        outs.append(P.select_n_p.bind(which, *picks))
    return outs


VJP_RULES[P.select_n_p] = _select_vjp


def _clamp_vjp(ct, primals, out):
    lo, x, hi = primals
    z = zeros(aval_of(ct))
    inside = P.and_p.bind(P.gt_p.bind(x, lo), P.lt_p.bind(x, hi))
    return [unbroadcast(P.select_n_p.bind(P.lt_p.bind(x, lo), z, ct), aval_of(lo)),
            P.select_n_p.bind(inside, z, ct),
            unbroadcast(P.select_n_p.bind(P.gt_p.bind(x, hi), z, ct), aval_of(hi))]


VJP_RULES[P.clamp_p] = _clamp_vjp


# --- structural (linear) --------------------------------------------------------------------

def _bid_vjp(ct, primals, out, *, shape, broadcast_dimensions):
    x, = primals
    xs = aval_of(x).shape
    sum_dims = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    sum_dims += [d for i, d in enumerate(broadcast_dimensions) if xs[i] == 1 and shape[d] != 1]
    r = P.reduce_sum_p.bind(ct, axes=tuple(sorted(sum_dims))) if sum_dims else ct
    return [P.reshape_p.bind(r, new_sizes=tuple(xs), dimensions=None)
            if aval_of(r).shape != xs else r]


VJP_RULES[P.broadcast_in_dim_p] = _bid_vjp
VJP_RULES[P.reshape_p] = lambda ct, primals, out, **_: [
    P.reshape_p.bind(ct, new_sizes=aval_of(primals[0]).shape, dimensions=None)]
VJP_RULES[P.squeeze_p] = VJP_RULES[P.reshape_p]
VJP_RULES[P.transpose_p] = lambda ct, primals, out, *, permutation: [
    P.transpose_p.bind(ct, permutation=tuple(int(i) for i in np.argsort(permutation)))]
VJP_RULES[P.rev_p] = lambda ct, primals, out, *, dimensions: [
    P.rev_p.bind(ct, dimensions=dimensions)]
VJP_RULES[P.reduce_sum_p] = lambda ct, primals, out, *, axes: [keep_dims(primals[0], ct, axes)]
VJP_RULES[P.cumsum_p] = lambda ct, primals, out, *, axis, reverse: [
    P.cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


def _concat_vjp(ct, primals, out, *, dimension):
    outs, start = [], 0
    shape = aval_of(ct).shape
    for x in primals:
        n = aval_of(x).shape[dimension]
        lo = [0] * len(shape)
        hi = list(shape)
        lo[dimension], hi[dimension] = start, start + n
        outs.append(P.slice_p.bind(ct, start_indices=tuple(lo), limit_indices=tuple(hi),
                                   strides=None))
        start += n
    return outs


VJP_RULES[P.concatenate_p] = _concat_vjp


def _stack_vjp(ct, primals, out, *, axis):
    shape = aval_of(ct).shape
    outs = []
    for i, x in enumerate(primals):
        lo, hi = [0] * len(shape), list(shape)
        lo[axis], hi[axis] = i, i + 1
        s = P.slice_p.bind(ct, start_indices=tuple(lo), limit_indices=tuple(hi), strides=None)
        outs.append(P.reshape_p.bind(s, new_sizes=aval_of(x).shape, dimensions=None))
    return outs


VJP_RULES[P.stack_p] = _stack_vjp


def _i32(v):
    from ._util import scalar
    return scalar(v, np.int32)


def _slice_vjp(ct, primals, out, *, start_indices, limit_indices, strides):
    x, = primals
    xs = aval_of(x).shape
    strides = strides or (1,) * len(xs)
    g = ct
    for d, st in enumerate(strides):
        if st == 1:
            continue
        gs = aval_of(g).shape
        # interleave zeros: (.., m, ..) -> (.., m, st, ..) -> (.., m*st, ..), then trim
        z = zeros(aval_of(g))
        g = P.stack_p.bind(g, *([z] * (st - 1)), axis=d + 1)
        new = list(gs)
        new[d] = gs[d] * st
        g = P.reshape_p.bind(g, new_sizes=tuple(new), dimensions=None)
        want = limit_indices[d] - start_indices[d]
        if new[d] > want:
            lo, hi = [0] * len(new), list(new)
            hi[d] = want
            g = P.slice_p.bind(g, start_indices=tuple(lo), limit_indices=tuple(hi),
                               strides=None)
        elif new[d] < want:
            pad = list(new)
            pad[d] = want - new[d]
            g = P.concatenate_p.bind(g, zeros(aval_of(g).update(shape=pad)), dimension=d)
    base = zeros(aval_of(x).strong())
    return [P.dynamic_update_slice_p.bind(base, convert(g, aval_of(x).dtype),
                                          *[_i32(s) for s in start_indices])]


VJP_RULES[P.slice_p] = _slice_vjp


def _dyn_slice_vjp(ct, primals, out, *, slice_sizes):
    x, *starts = primals
    return [P.dynamic_update_slice_p.bind(zeros(aval_of(x)), ct, *starts)] + [None] * len(starts)


VJP_RULES[P.dynamic_slice_p] = _dyn_slice_vjp


def _dus_vjp(ct, primals, out):
    x, u, *starts = primals
    ct_x = P.dynamic_update_slice_p.bind(ct, zeros(aval_of(u)), *starts)
    ct_u = P.dynamic_slice_p.bind(ct, *starts, slice_sizes=aval_of(u).shape)
    return [ct_x, ct_u] + [None] * len(starts)


VJP_RULES[P.dynamic_update_slice_p] = _dus_vjp


def _gather_vjp(ct, primals, out, *, axes):
    x, *idx = primals
    return [P.scatter_p.bind(zeros(aval_of(x)), ct, *idx, axes=axes, mode="add")] + \
        [None] * len(idx)


VJP_RULES[P.gather_p] = _gather_vjp


def _scatter_vjp(ct, primals, out, *, axes, mode):
    x, u, *idx = primals
    if mode not in ("set", "add"):
        raise TransformError(f"reverse-mode differentiation of scatter with mode={mode!r} is "
                             "not implemented")
    picked = _gather_in_bounds(ct, idx, axes)
    ct_u = unbroadcast(picked, aval_of(u)) if aval_of(picked).shape != aval_of(u).shape \
        else picked
    if aval_of(u).ndim and aval_of(ct_u).shape != aval_of(u).shape:
        ct_u = P.reshape_p.bind(ct_u, new_sizes=aval_of(u).shape, dimensions=None)
    if mode == "add":
        return [ct, ct_u] + [None] * len(idx)
    target = aval_of(picked)
    ct_x = P.scatter_p.bind(ct, zeros(target), *idx, axes=axes, mode="set")
    return [ct_x, ct_u] + [None] * len(idx)


VJP_RULES[P.scatter_p] = _scatter_vjp


def _gather_in_bounds(ct, idx, axes):
    """The transpose of a scatter's updates: `ct` gathered at `idx`, zero where the scatter
    dropped the update (an index out of bounds; every index, on an empty axis)."""
    shape, dt = aval_of(ct).shape, aval_of(ct).dtype
    bshape = np.broadcast_shapes(*[aval_of(i).shape for i in idx])
    target = shape[:axes[0]] + tuple(bshape) + shape[axes[-1] + 1:]
    if any(shape[a] == 0 for a in axes):
        return zeros(ShapedArray(target, dt))
    inside = None
    for i, a in zip(idx, axes):
        it = aval_of(i).dtype
        ok = P.and_p.bind(P.ge_p.bind(i, np.array(0, it)[()]),
                          P.lt_p.bind(i, np.array(shape[a], it)[()]))
        ok = _broadcast_right(ok, bshape)
        inside = ok if inside is None else P.and_p.bind(inside, ok)
    mask = P.broadcast_in_dim_p.bind(inside, shape=target, broadcast_dimensions=tuple(
        range(axes[0], axes[0] + len(bshape))))
    picked = P.gather_p.bind(ct, *idx, axes=axes)
    return P.select_n_p.bind(mask, zeros(ShapedArray(target, dt)), picked)


def _broadcast_right(x, shape):
    """NumPy broadcasting of `x` to `shape` (dimensions aligned on the right)."""
    xs = aval_of(x).shape
    if xs == tuple(shape):
        return x
    lead = len(shape) - len(xs)  # size-1 dimensions stretch in broadcast_in_dim
    return P.broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                     broadcast_dimensions=tuple(range(lead, len(shape))))


# --- reductions, cumulative, dot -----------------------------------------------------------

def _reduce_ext_vjp(ct, primals, out, *, axes):
    x, = primals
    return [mul(keep_dims(x, ct, axes), extremum_weights(x, out, axes))]


VJP_RULES[P.reduce_max_p] = _reduce_ext_vjp
VJP_RULES[P.reduce_min_p] = _reduce_ext_vjp
VJP_RULES[P.reduce_prod_p] = lambda ct, primals, out, *, axes: [
    mul(keep_dims(primals[0], ct, axes), prod_of_others(primals[0], axes))]


def _cumprod_vjp(ct, primals, out, *, axis, reverse):
    """ct_x_i = (prefix product before i) * S_i with S_i = ct_i + x_{i+1} S_{i+1}: a reverse
    scan, exact at zeros. `reverse=True` is the same along the flipped axis."""
    from .. import lax
    from .. import numpy as jnp
    x, = primals
    if reverse:
        flip = lambda a: jnp.flip(a, axis)  # noqa: E731
        return [flip(_cumprod_vjp(flip(ct), [flip(x)], flip(out), axis=axis,
                                  reverse=False)[0])]
    xs, cts, ys = (jnp.moveaxis(a, axis, 0) for a in (x, ct, out))
    dt = aval_of(x).dtype
    one = jnp.ones((1,) + tuple(aval_of(xs).shape[1:]), dt)
    x_next = jnp.concatenate([xs[1:], one], axis=0)

    def step(s, inp):
        c, xn = inp
        s = jnp.add(c, jnp.multiply(xn, s))
        return s, s
    _, sums = lax.scan(step, jnp.zeros(aval_of(xs).shape[1:], dt), (cts, x_next), reverse=True)
    before = jnp.concatenate([one, ys[:-1]], axis=0)
    return [jnp.moveaxis(jnp.multiply(before, sums), 0, axis)]


VJP_RULES[P.cumprod_p] = _cumprod_vjp


def _cumext_vjp(ct, primals, out, *, axis, reverse):
    x, = primals
    shape = aval_of(x).shape
    idx = along_axis_indices(shape, axis, cum_source_index(x, out, axis, reverse))
    return [P.scatter_p.bind(zeros(aval_of(x)), ct, *idx, axes=tuple(range(len(shape))),
                             mode="add")]


VJP_RULES[P.cummax_p] = _cumext_vjp
VJP_RULES[P.cummin_p] = _cumext_vjp


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _remaining(n, *removed):
    gone = {i for r in removed for i in r}
    return [i for i in range(n) if i not in gone]


def _dot_transpose_lhs(g, x_aval, y, dimension_numbers, swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _remaining(x_aval.ndim, x_contract, x_batch)
    y_kept = _remaining(aval_of(y).ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(y_batch)))
    x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract))) \
        if len(x_contract) else []
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)
    r = P.dot_general_p.bind(g, y, dimension_numbers=dims, precision=None,
                             preferred_element_type=None)
    return convert(P.transpose_p.bind(r, permutation=tuple(int(i) for i in out_axes)),
                   x_aval.dtype)


def _dot_vjp(ct, primals, out, *, dimension_numbers, precision, preferred_element_type):
    x, y = primals
    (xc, yc), (xb, yb) = dimension_numbers
    ct = convert(ct, aval_of(x).dtype)
    ct_x = _dot_transpose_lhs(ct, aval_of(x), y, dimension_numbers)
    ct_y = _dot_transpose_lhs(ct, aval_of(y), x, ((yc, xc), (yb, xb)), swap_ans=True)
    return [ct_x, ct_y]


VJP_RULES[P.dot_general_p] = _dot_vjp


# --- the interpreters ------------------------------------------------------------------------

def forward_replay(jaxpr, args, active_in):
    """Run `jaxpr` on `args` through bind, keeping every value; equations with sub-jaxprs and
    an active (differentiated) input run their forward rule, which keeps residuals (by
    equation). Returns (the environment of values, active var ids, residuals, outputs)."""
    active = {v.id for v, act in zip(jaxpr.invars, active_in) if act and is_float(v.aval)}
    res = {}

    def apply_eqn(eqn, ins):
        act = any(isinstance(a, Var) and a.id in active for a in eqn.invars)
        prim = eqn.primitive
        with keep_source(eqn):
            if act and prim in VJP_CALL_RULES:
                act_in = [isinstance(a, Var) and a.id in active for a in eqn.invars]
                outs, res[eqn] = VJP_CALL_RULES[prim][0](ins, act_in, eqn=eqn, **eqn.params)
            else:
                outs = results(eqn, prim.bind(*ins, **eqn.params))
                if act and getattr(VJP_RULES.get(prim), "partials_in_forward", False):
                    res[eqn] = _forward_partials(eqn, ins, outs[0], active)
        if act and prim not in NON_DIFFERENTIABLE:
            active.update(v.id for v in eqn.outvars if is_float(v.aval))
        return outs

    outs, env = run_jaxpr(jaxpr, args, apply_eqn, literal=read_literal)
    return env, active, res, outs


def _forward_partials(eqn, ins, out, active):
    """An elementwise equation's partial derivatives in its active operands, computed in the
    forward trace (the equations computing the others' are dropped again)."""
    trace = current_trace()
    start = len(trace.eqns) if isinstance(trace, JaxprTrace) else None
    ds = partials(eqn.primitive, ins, out, eqn.params)
    kept = [d if isinstance(a, Var) and a.id in active else None
            for a, d in zip(eqn.invars, ds)]
    if start is not None:
        _drop_unused(trace, start, kept)
    return kept


def _drop_unused(trace, start, kept):
    """Remove the equations emitted since `start` that no value in `kept` depends on."""
    live = {t._var.id for t in kept if getattr(t, "_var", None) is not None}
    emitted = trace.eqns[start:]
    needed = []
    for e in reversed(emitted):
        if any(v.id in live for v in e.outvars):
            needed.append(e)
            live.update(a.id for a in e.invars if isinstance(a, Var))
    if len(needed) != len(emitted):
        trace.eqns[start:] = needed[::-1]


def backward_pass(jaxpr, env, active, res, out_cts):
    """Cotangents of the invars given those of the outvars (None: zero)."""
    cts: dict = {}

    def put(v, ct):
        if ct is None or not isinstance(v, Var) or v.id not in active:
            return
        cts[v.id] = add_any(cts.get(v.id), ct)

    for v, ct in zip(jaxpr.outvars, out_cts):
        put(v, ct)
    for eqn in reversed(jaxpr.eqns):
        outs_ct = [cts.pop(v.id, None) for v in eqn.outvars]
        if all(ct is None for ct in outs_ct):
            continue
        prim = eqn.primitive
        if prim in NON_DIFFERENTIABLE:
            continue
        primals = [env.read(a) for a in eqn.invars]
        with keep_source(eqn):
            if prim in VJP_CALL_RULES:
                if eqn not in res:  # no active input: nothing to send back
                    continue
                act_in = [isinstance(a, Var) and a.id in active for a in eqn.invars]
                in_cts = VJP_CALL_RULES[prim][1](res[eqn], outs_ct, primals, act_in, eqn=eqn,
                                                 **eqn.params)
            elif eqn in res:  # an elementwise equation whose partials the forward pass kept
                in_cts = _through_partials(outs_ct[0], primals, res[eqn])
            else:
                rule = VJP_RULES.get(prim)
                if rule is None:
                    raise TransformError(f"no reverse-mode differentiation rule for the "
                                         f"primitive {prim.name!r}{where(eqn)}")
                outs = [env.read(v) for v in eqn.outvars]
                if prim.multiple_results:
                    ct_arg = [instantiate(c, v.aval) for c, v in zip(outs_ct, eqn.outvars)]
                    out_arg = outs
                else:
                    ct_arg, out_arg = outs_ct[0], outs[0]
                try:
                    in_cts = rule(ct_arg, primals, out_arg, **eqn.params)
                except TransformError as e:
                    if "(from " in str(e):
                        raise
                    raise TransformError(f"{e}{where(eqn)}") from None
        for a, ct in zip(eqn.invars, in_cts):
            if ct is not None and isinstance(a, Var) and is_float(a.aval):
                if aval_of(ct).dtype != a.aval.dtype:
                    ct = convert(ct, a.aval.dtype)
                put(a, ct)
    return [cts.get(v.id) if isinstance(v, Var) else None for v in jaxpr.invars]


class _Deferral(threading.local):
    # while a backward pass whose pullback replays it is traced: the work rules left to it
    pending = None


_DEFERRAL = _Deferral()


def defer_to_pullback() -> bool:
    """Whether the backward pass being traced is the top level of a `vjp` whose pullback
    replays it (so a rule may emit a placeholder that the pullback's replay carries out: a
    custom_vjp's `bwd`, which JAX runs when the pullback is called). Records that it did."""
    if _DEFERRAL.pending is None:
        return False
    _DEFERRAL.pending.append(True)
    return True


class VJPJaxprs:
    """`forward`: invars -> outvars + residuals (those of kind "out"); `backward`:
    residuals (in `res_spec` order) + output cotangents -> a cotangent per invar.
    `res_spec[i]` is ("in", invar index) for a residual that is an input of the forward
    jaxpr (not recomputed or stored), or ("out", k) for the k-th extra forward output.
    `deferred`: the backward jaxpr holds work left to the pullback (`defer_to_pullback`)."""

    def __init__(self, forward, backward, res_spec, deferred=False):
        self.forward, self.backward, self.res_spec = forward, backward, res_spec
        self.n_res_out = sum(1 for kind, _ in res_spec if kind == "out")
        self.deferred = deferred


def vjp_jaxpr(jaxpr, active_in=None, name="f", defer=False) -> VJPJaxprs:
    """`defer`: the caller replays the backward jaxpr at its pullback's call (see
    `defer_to_pullback`); nested calls (bodies of jit, cond, scan, checkpoint) do not."""
    active_in = active_in if active_in is not None else [True] * len(jaxpr.invars)
    fwd = JaxprTrace(current_trace(), fun_name=name, fun_location="", purpose="forward")
    with push_trace(fwd):
        args = [fwd.new_arg(v.aval) for v in jaxpr.invars]
        env, active, res, outs = forward_replay(jaxpr, args, active_in)
        bwd = JaxprTrace(fwd, fun_name=name, fun_location="", purpose="backward")
        with push_trace(bwd):
            cts = [bwd.new_arg(v.aval.strong()) for v in jaxpr.outvars]
            outer, _DEFERRAL.pending = _DEFERRAL.pending, ([] if defer else None)
            try:
                in_cts = backward_pass(jaxpr, env, active, res, cts)
            finally:
                deferred, _DEFERRAL.pending = bool(_DEFERRAL.pending), outer
            in_cts = [instantiate(ct, v.aval) for ct, v in zip(in_cts, jaxpr.invars)]
            bwd_jaxpr, residuals = _without_unread_residuals(*bwd.finish_hoisted(in_cts))
        arg_pos = {a._var.id: i for i, a in enumerate(args)}
        spec, extra = [], []
        for r in residuals:
            var = getattr(r, "_var", None)
            if var is not None and var.id in arg_pos:
                spec.append(("in", arg_pos[var.id]))
            else:
                spec.append(("out", len(extra)))
                extra.append(r)
        fwd_jaxpr, fwd_hoisted = fwd.finish_hoisted(list(outs) + extra)
    if fwd_hoisted:
        raise AssertionError("internal: the forward jaxpr captured values")
    return VJPJaxprs(fwd_jaxpr, bwd_jaxpr, spec, deferred)


def _without_unread_residuals(backward, residuals):
    """The backward jaxpr without its dead equations, and only the residuals it still
    reads: a rule may compute a cotangent nobody takes (the partial of `x * 2.0` in its
    constant), and the forward value that computation read is not worth keeping."""
    from ..passes.dce import dce_jaxpr
    backward = dce_jaxpr(backward)
    read = {a.id for e in backward.eqns for a in e.invars if isinstance(a, Var)}
    read |= {a.id for a in backward.outvars if isinstance(a, Var)}
    n = len(residuals)
    kept = [i for i in range(n) if backward.invars[i].id in read]
    if len(kept) == n:
        return backward, residuals
    invars = [backward.invars[i] for i in kept] + list(backward.invars[n:])
    return backward.replace(invars=invars), [residuals[i] for i in kept]


def assemble_residuals(spec, ins, res_out):
    return [ins[i] if kind == "in" else res_out[i] for kind, i in spec]


# --- calls: jit and fused ----------------------------------------------------------------------

def _call_fwd(prim):
    def fwd(ins, act_in, *, eqn, name, jaxpr):
        v = vjp_jaxpr(_open(jaxpr), act_in, name)
        outs = prim.bind(*ins, name=f"forward({name})", jaxpr=closed(v.forward))
        n = len(jaxpr.jaxpr.outvars)
        return outs[:n], (v, outs[n:])
    return fwd


def _call_bwd(prim):
    def bwd(res, cts, primals, act_in, *, eqn, name, jaxpr):
        v, res_out = res
        cts = [strong(instantiate(c, o.aval)) for c, o in zip(cts, jaxpr.jaxpr.outvars)]
        r = assemble_residuals(v.res_spec, primals, res_out)
        return prim.bind(*r, *cts, name=f"backward({name})", jaxpr=closed(v.backward))
    return bwd


def _open(cj):
    """A call's jaxpr with its constants (if any) made leading inputs is not supported."""
    if cj.consts:
        raise TransformError("differentiating a call whose jaxpr has constants")
    return cj.jaxpr


# --- cond ------------------------------------------------------------------------------------

def _cond_fwd(ins, act_in, *, eqn, branches):
    index, *ops = ins
    vs = [vjp_jaxpr(b.jaxpr, act_in[1:], "branch") for b in branches]
    res_avals = [[a for a in v.forward.out_avals[len(b.jaxpr.outvars):]]
                 for v, b in zip(vs, branches)]
    n = len(branches[0].jaxpr.outvars)

    def make(i):
        def fun(*args):
            from ..core.interpreter import inline_jaxpr
            out = inline_jaxpr(vs[i].forward, (), *args)
            extra = []
            for j, avs in enumerate(res_avals):
                extra += out[n:] if j == i else [zeros(a) for a in avs]
            return out[:n] + extra
        return closed(trace_avals(fun, [v.aval for v in branches[i].jaxpr.invars],
                                  name="forward branch"))
    outs = cond_p.bind(index, *ops, branches=tuple(make(i) for i in range(len(branches))))
    return outs[:n], (vs, res_avals, outs[n:])


def _cond_bwd(res, cts, primals, act_in, *, eqn, branches):
    from ..core.interpreter import inline_jaxpr
    vs, res_avals, res_vals = res
    index, *ops = primals
    n_all = len(res_vals)
    cts = [strong(instantiate(c, o.aval)) for c, o in zip(cts, branches[0].jaxpr.outvars)]
    starts = np.cumsum([0] + [len(a) for a in res_avals])

    def make(i):
        def fun(*args):
            allres, o, c = args[:n_all], args[n_all:n_all + len(ops)], args[n_all + len(ops):]
            mine = allres[starts[i]:starts[i + 1]]
            r = assemble_residuals(vs[i].res_spec, list(o), list(mine))
            return inline_jaxpr(vs[i].backward, (), *r, *c)
        avals = [aval_of(r) for r in res_vals] + [aval_of(o) for o in ops] + \
            [aval_of(c) for c in cts]
        return closed(trace_avals(fun, avals, name="backward branch"))
    in_cts = cond_p.bind(index, *res_vals, *ops, *cts,
                         branches=tuple(make(i) for i in range(len(branches))))
    return [None] + list(in_cts)


# --- scan ------------------------------------------------------------------------------------

def _scan_fwd(ins, act_in, *, eqn, jaxpr, length, reverse, num_consts, num_carry, unroll):
    from ..core.interpreter import inline_jaxpr
    body = jaxpr.jaxpr
    nc, nk = num_consts, num_carry
    # carries may become active inside the loop: treat every float carry as active
    act = list(act_in[:nc]) + [is_float(v.aval) or a for v, a in
                               zip(body.invars[nc:nc + nk], act_in[nc:nc + nk])] + \
        list(act_in[nc + nk:])
    v = vjp_jaxpr(body, act, "scan body")
    n_out = len(body.outvars)
    carry_res = sorted({i for kind, i in v.res_spec if kind == "in" and nc <= i < nc + nk})

    def fun(*args):
        out = inline_jaxpr(v.forward, (), *args)
        return out[:n_out] + out[n_out:] + [args[i] for i in carry_res]
    fbody = trace_avals(fun, [x.aval for x in body.invars], name="forward scan body")
    outs = scan_p.bind(*ins, jaxpr=closed(fbody), length=length, reverse=reverse,
                       num_consts=nc, num_carry=nk, unroll=unroll)
    stacked = outs[n_out:]
    return outs[:n_out], (v, carry_res, stacked)


def _scan_bwd(res, cts, primals, act_in, *, eqn, jaxpr, length, reverse, num_consts,
              num_carry, unroll):
    from ..core.interpreter import inline_jaxpr
    v, carry_res, stacked = res
    body = jaxpr.jaxpr
    nc, nk = num_consts, num_carry
    nx = len(body.invars) - nc - nk
    consts, xs = primals[:nc], primals[nc + nk:]
    n_res_out = v.n_res_out
    res_out, cres = stacked[:n_res_out], stacked[n_res_out:]
    cts = [strong(instantiate(c, a)) for c, a in zip(cts, _scan_out_avals(body, nk, length))]
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    inv_idx = sorted({i for kind, i in v.res_spec if kind == "in" and i < nc})
    x_idx = sorted({i for kind, i in v.res_spec if kind == "in" and i >= nc + nk})
    inv_vals = [consts[i] for i in inv_idx]
    x_vals = [xs[i - nc - nk] for i in x_idx]
    c_avals = [x.aval for x in body.invars[:nc]]

    def fun(*args):
        it = iter(args)
        inv = [next(it) for _ in inv_idx]
        acc = [next(it) for _ in range(nc)]
        ck = [next(it) for _ in range(nk)]
        r_out = [next(it) for _ in range(n_res_out)]
        cr = [next(it) for _ in carry_res]
        xr = [next(it) for _ in x_idx]
        cy = [next(it) for _ in range(len(ct_ys))]
        lookup = dict(zip(inv_idx, inv)) | dict(zip(carry_res, cr)) | dict(zip(x_idx, xr))
        r = [lookup[i] if kind == "in" else r_out[i] for kind, i in v.res_spec]
        in_cts = inline_jaxpr(v.backward, (), *r, *ck, *cy)
        new_acc = [P.add_p.bind(a, c) for a, c in zip(acc, in_cts[:nc])]
        return new_acc + list(in_cts[nc:nc + nk]) + list(in_cts[nc + nk:])
    sl = lambda a: a.update(shape=a.shape[1:])  # noqa: E731
    avals = ([aval_of(x) for x in inv_vals] + c_avals + [aval_of(c) for c in ct_carry]
             + [sl(aval_of(r)) for r in res_out] + [sl(aval_of(r)) for r in cres]
             + [sl(aval_of(x)) for x in x_vals] + [sl(aval_of(c)) for c in ct_ys])
    bbody = trace_avals(fun, avals, name="backward scan body")
    init_acc = [zeros(a) for a in c_avals]
    outs = scan_p.bind(*inv_vals, *init_acc, *ct_carry, *res_out, *cres, *x_vals, *ct_ys,
                       jaxpr=closed(bbody), length=length, reverse=not reverse,
                       num_consts=len(inv_vals), num_carry=nc + nk, unroll=unroll)
    return list(outs[:nc]) + list(outs[nc:nc + nk]) + list(outs[nc + nk:nc + nk + nx])


def _scan_out_avals(body, nk, length):
    return [o.aval for o in body.outvars[:nk]] + \
        [o.aval.update(shape=(length,) + o.aval.shape) for o in body.outvars[nk:]]


# --- while -----------------------------------------------------------------------------------

def _while_fwd(ins, act_in, *, eqn, **params):
    return while_p.bind(*ins, **params), None


def _while_bwd(res, cts, primals, act_in, *, eqn, **params):
    src = eqn.source
    line = f"\n  the loop is at {src.file}:{src.line}: {src.code}" if src else ""
    raise TransformError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        f"start/stop. (primitive 'while'){line}")


VJP_CALL_RULES[cond_p] = (_cond_fwd, _cond_bwd)
VJP_CALL_RULES[scan_p] = (_scan_fwd, _scan_bwd)
VJP_CALL_RULES[while_p] = (_while_fwd, _while_bwd)
for _p in CALL_PRIMITIVES:
    VJP_CALL_RULES[_p] = (_call_fwd(_p), _call_bwd(_p))
VJP_RULES[debug_print_p] = lambda cts, primals, outs, **params: [None] * len(primals)
