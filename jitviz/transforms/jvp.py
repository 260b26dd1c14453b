"""Forward mode: JVP rules, one table keyed by the `Primitive` object, and the jaxpr
interpreter that applies them (`jvp_replay`).

A tangent is a value of the primal's type, or `None` for a symbolic zero (integer and boolean
values always have zero tangents). Rules take `(primals, tangents, **params)` and return
`(primal outputs, tangent outputs)` (lists for multiple-result primitives).

Elementwise primitives are described once by their partial derivatives (`DERIVATIVES`), which
the reverse mode (`vjp.py`) shares. Primitives whose output carries no derivative (integer or
boolean results, piecewise-constant functions) are declared in `NON_DIFFERENTIABLE`:
`tests/test_transform_rules.py` fails for a primitive that is in neither table. Primitives
defined outside `lax` register here through `jitviz.transforms.register_jvp` /
`declare_non_differentiable`.
"""
from __future__ import annotations

import numpy as np

from ..core.interpreter import results, run_jaxpr
from ..core.registry import Primitive
from ..debug import debug_print_p
from ..lax import primitives as P
from ..lax.control_flow import cond_p, scan_p, while_p
from ._util import (CALL_PRIMITIVES, TransformError, add_any, aval_of, broadcast_to, closed,
                    convert, instantiate, is_float, keep_source, mul, neg, read_literal,
                    scalar, select, take, take_where, trace_avals, where, zeros)

#: primitives with zero derivative everywhere it exists (or integer/boolean results)
NON_DIFFERENTIABLE: set[Primitive] = {
    P.sign_p, P.floor_p, P.ceil_p, P.round_p, P.is_finite_p, P.not_p, P.nextafter_p, P.and_p,
    P.or_p, P.xor_p, P.shift_left_p, P.shift_right_arithmetic_p, P.eq_p, P.ne_p, P.lt_p,
    P.le_p, P.gt_p, P.ge_p, P.iota_p, P.argmax_p, P.argmin_p, P.reduce_and_p, P.reduce_or_p,
}

JVP_RULES: dict[Primitive, object] = {}


def c(v, like):
    """A scalar constant of `like`'s dtype."""
    return scalar(v, aval_of(like).dtype)


# --- partial derivatives of the elementwise primitives ---------------------------------------
# primitive -> (operands..., out, **params) -> tuple of partials (None: zero), each
# broadcastable to the output. Used by JVP (t * d) and VJP (ct * d, summed down to the
# operand's shape).

def _sq(x):
    return mul(x, x)


DERIVATIVES: dict[Primitive, object] = {
    P.exp_p: lambda x, y: (y,),
    P.exp2_p: lambda x, y: (mul(y, c(np.log(2.0), x)),),
    P.log_p: lambda x, y: (P.div_p.bind(c(1, x), x),),
    P.log1p_p: lambda x, y: (P.div_p.bind(c(1, x), P.add_p.bind(c(1, x), x)),),
    P.expm1_p: lambda x, y: (P.add_p.bind(y, c(1, y)),),
    P.tanh_p: lambda x, y: (P.sub_p.bind(c(1, y), _sq(y)),),
    P.logistic_p: lambda x, y: (mul(y, P.sub_p.bind(c(1, y), y)),),
    P.sin_p: lambda x, y: (P.cos_p.bind(x),),
    P.cos_p: lambda x, y: (neg(P.sin_p.bind(x)),),
    P.tan_p: lambda x, y: (P.add_p.bind(c(1, y), _sq(y)),),
    P.asin_p: lambda x, y: (P.rsqrt_p.bind(P.sub_p.bind(c(1, x), _sq(x))),),
    P.acos_p: lambda x, y: (neg(P.rsqrt_p.bind(P.sub_p.bind(c(1, x), _sq(x)))),),
    P.atan_p: lambda x, y: (P.div_p.bind(c(1, x), P.add_p.bind(c(1, x), _sq(x))),),
    P.sinh_p: lambda x, y: (P.cosh_p.bind(x),),
    P.cosh_p: lambda x, y: (P.sinh_p.bind(x),),
    P.asinh_p: lambda x, y: (P.rsqrt_p.bind(P.add_p.bind(_sq(x), c(1, x))),),
    P.acosh_p: lambda x, y: (P.rsqrt_p.bind(mul(P.sub_p.bind(x, c(1, x)),
                                                 P.add_p.bind(x, c(1, x)))),),
    P.atanh_p: lambda x, y: (P.div_p.bind(c(1, x), P.sub_p.bind(c(1, x), _sq(x))),),
    P.sqrt_p: lambda x, y: (P.div_p.bind(c(0.5, y), y),),
    P.rsqrt_p: lambda x, y: (P.div_p.bind(mul(c(-0.5, y), y), x),),
    P.cbrt_p: lambda x, y: (P.div_p.bind(c(1 / 3, y), _sq(y)),),
    P.square_p: lambda x, y: (mul(c(2, x), x),),
    P.abs_p: lambda x, y: (P.sign_p.bind(x),),
    P.mul_p: lambda x, y, out: (y, x),
    P.div_p: lambda x, y, out: (P.div_p.bind(c(1, y), y), neg(P.div_p.bind(out, y))),
    P.rem_p: lambda x, y, out: (c(1, x),
                                neg(P.round_p.bind(P.div_p.bind(P.sub_p.bind(x, out), y),
                                                   rounding_method=0))),
    P.pow_p: lambda x, y, out: (
        mul(y, P.pow_p.bind(x, P.sub_p.bind(y, c(1, y)))),
        P.select_n_p.bind(P.eq_p.bind(x, c(0, x)), mul(P.log_p.bind(x), out), zeros(aval_of(out)))
        if aval_of(x).shape == aval_of(out).shape else mul(P.log_p.bind(x), out)),
    P.max_p: lambda x, y, out: _minmax_partials(x, y, P.gt_p),
    P.min_p: lambda x, y, out: _minmax_partials(x, y, P.lt_p),
    P.atan2_p: lambda x, y, out: _atan2_partials(x, y),
}


def _integer_pow_partial(x, out, *, y):
    """`y` is integer_pow's exponent param (the output is `out` here)."""
    if y == 0:
        return (None,)
    if y == 1:
        return (c(1, x),)
    return (mul(c(y, x), P.integer_pow_p.bind(x, y=y - 1)),)


def _minmax_partials(x, y, cmp):
    """JAX's rule: the larger (smaller) operand gets the tangent; ties split it in half."""
    shape = np.broadcast_shapes(aval_of(x).shape, aval_of(y).shape)
    xb, yb = broadcast_to(x, shape), broadcast_to(y, shape)
    one, half, zero = c(1, x), c(0.5, x), c(0, x)
    pick = P.select_n_p.bind(cmp.bind(xb, yb),
                             P.select_n_p.bind(P.eq_p.bind(xb, yb), broadcast_to(zero, shape),
                                               broadcast_to(half, shape)),
                             broadcast_to(one, shape))
    return pick, P.sub_p.bind(broadcast_to(one, shape), pick)


def _atan2_partials(x, y):
    denom = P.add_p.bind(_sq(x), _sq(y))
    return P.div_p.bind(y, denom), neg(P.div_p.bind(x, denom))


DERIVATIVES[P.integer_pow_p] = _integer_pow_partial


def partials(prim, primals, out, params):
    """The partial derivatives of an elementwise primitive at `primals`."""
    return DERIVATIVES[prim](*primals, out, **params)


def _elementwise_jvp(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        ds = partials(prim, primals, out, params)
        t_out = None
        for t, d in zip(tangents, ds):
            if t is not None and d is not None:
                t_out = add_any(t_out, mul(t, d))
        if t_out is not None:
            t_out = convert(broadcast_to(t_out, aval_of(out).shape), aval_of(out).dtype)
        return out, t_out
    return rule


for _p in DERIVATIVES:
    JVP_RULES[_p] = _elementwise_jvp(_p)


# --- linear primitives: the tangent goes through the same primitive -----------------------

def linear_jvp(prim, linear_args=None):
    """JVP of a primitive linear in the operands at `linear_args` (all by default); the other
    operands (indices) are passed as they are."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        idx = range(len(primals)) if linear_args is None else linear_args
        if all(tangents[i] is None for i in idx):
            return out, (None if not prim.multiple_results else [None] * len(out))
        args = list(primals)
        for i in idx:
            args[i] = instantiate(tangents[i], aval_of(primals[i]))
        return out, prim.bind(*args, **params)
    return rule


# primitive -> the operands it is linear in (None: all), for those whose JVP is linear_jvp:
# the one record of which primitives are linear (linear_transpose checks functions with it)
LINEAR_IN: dict[Primitive, tuple | None] = {}


def register_linear(prim, linear_args=None):
    """`prim` is linear in the operands at `linear_args` (all by default): its JVP applies it
    to the tangents."""
    JVP_RULES[prim] = linear_jvp(prim, linear_args)
    LINEAR_IN[prim] = None if linear_args is None else tuple(linear_args)


for _p in (P.neg_p, P.add_p, P.sub_p, P.real_p, P.imag_p, P.conj_p, P.complex_p,
           P.broadcast_in_dim_p, P.reshape_p, P.transpose_p, P.squeeze_p, P.rev_p,
           P.concatenate_p, P.stack_p, P.slice_p, P.reduce_sum_p, P.cumsum_p):
    register_linear(_p)
def _abs_jvp(primals, tangents):
    """|x|' for complex x is Re(conj(sign x) t), a real tangent (JAX's rule); real x: the
    elementwise rule (sign x times t)."""
    (x,), (t,) = primals, tangents
    if aval_of(x).dtype.kind != "c":
        return _elementwise_jvp(P.abs_p)(primals, tangents)
    out = P.abs_p.bind(x)
    if t is None:
        return out, None
    return out, P.real_p.bind(mul(P.conj_p.bind(P.sign_p.bind(x)), t))


JVP_RULES[P.abs_p] = _abs_jvp
register_linear(P.dynamic_slice_p, [0])
register_linear(P.dynamic_update_slice_p, [0, 1])
register_linear(P.gather_p, [0])
JVP_RULES[P.select_n_p] = lambda primals, tangents: (
    P.select_n_p.bind(*primals),
    None if all(t is None for t in tangents[1:]) else P.select_n_p.bind(
        primals[0], *[instantiate(t, aval_of(x)) for t, x in zip(tangents[1:], primals[1:])]))


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    out = P.convert_element_type_p.bind(*primals, new_dtype=new_dtype, weak_type=weak_type)
    t, = tangents
    if t is None or np.dtype(new_dtype).kind not in "fc":
        return out, None
    return out, P.convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


JVP_RULES[P.convert_element_type_p] = _convert_jvp


def _scatter_jvp(primals, tangents, *, axes, mode):
    out = P.scatter_p.bind(*primals, axes=axes, mode=mode)
    tx, tu = tangents[:2]
    if tx is None and tu is None:
        return out, None
    x, u, *idx = primals
    tx, tu = instantiate(tx, aval_of(x)), instantiate(tu, aval_of(u))
    if mode in ("set", "add"):
        return out, P.scatter_p.bind(tx, tu, *idx, axes=axes, mode=mode)
    raise TransformError(f"differentiation of scatter with mode={mode!r} is not implemented")


JVP_RULES[P.scatter_p] = _scatter_jvp


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    out = P.clamp_p.bind(lo, x, hi)
    shape = aval_of(out).shape
    t_out = None
    tl, tx, th = tangents
    if tx is not None:
        inside = P.and_p.bind(P.gt_p.bind(x, lo), P.lt_p.bind(x, hi))
        t_out = P.select_n_p.bind(inside, zeros(aval_of(x)), tx)
    if tl is not None:
        t_out = add_any(t_out, P.select_n_p.bind(P.lt_p.bind(x, lo), zeros(aval_of(out)),
                                                 broadcast_to(tl, shape)))
    if th is not None:
        t_out = add_any(t_out, P.select_n_p.bind(P.gt_p.bind(x, hi), zeros(aval_of(out)),
                                                 broadcast_to(th, shape)))
    return out, t_out


JVP_RULES[P.clamp_p] = _clamp_jvp


def _dot_jvp(primals, tangents, **params):
    lhs, rhs = primals
    out = P.dot_general_p.bind(lhs, rhs, **params)
    tl, tr = tangents
    t_out = None
    if tl is not None:
        t_out = P.dot_general_p.bind(tl, rhs, **params)
    if tr is not None:
        t_out = add_any(t_out, P.dot_general_p.bind(lhs, tr, **params))
    return out, t_out


JVP_RULES[P.dot_general_p] = _dot_jvp


# --- reductions and cumulative ops ----------------------------------------------------------

def keep_dims(x, y, axes):
    """`y` (x reduced over `axes`) broadcast back to x's shape."""
    shape = aval_of(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return P.broadcast_in_dim_p.bind(y, shape=shape, broadcast_dimensions=kept)


def extremum_weights(x, y, axes):
    """Where x attains its max/min over `axes`, 1/count (JAX's rule: ties share)."""
    hit = P.eq_p.bind(x, keep_dims(x, y, axes))
    w = convert(hit, aval_of(x).dtype)
    count = keep_dims(x, P.reduce_sum_p.bind(w, axes=axes), axes)
    return P.div_p.bind(w, count)


def _reduce_ext_jvp(prim):
    def rule(primals, tangents, *, axes):
        x, = primals
        y = prim.bind(x, axes=axes)
        w = extremum_weights(x, y, axes)
        return y, P.reduce_sum_p.bind(mul(tangents[0], w), axes=axes)
    return rule


JVP_RULES[P.reduce_max_p] = _reduce_ext_jvp(P.reduce_max_p)
JVP_RULES[P.reduce_min_p] = _reduce_ext_jvp(P.reduce_min_p)


def prod_of_others(x, axes):
    """For each element, the product of the other elements reduced with it over `axes`:
    exclusive prefix times exclusive suffix products (no division, so zeros are exact)."""
    from .. import numpy as jnp
    nd = len(aval_of(x).shape)
    rest = [i for i in range(nd) if i not in axes]
    perm = rest + list(axes)
    xt = jnp.transpose(x, perm)
    lead = tuple(aval_of(xt).shape[:len(rest)])
    flat = jnp.reshape(xt, lead + (-1,))
    if aval_of(flat).shape[-1] == 0:
        return jnp.zeros_like(x)
    ones = jnp.ones(lead + (1,), aval_of(x).dtype)
    last = len(lead)
    left = jnp.concatenate([ones, P.cumprod_p.bind(flat, axis=last, reverse=False)[..., :-1]],
                           axis=-1)
    right = jnp.concatenate([P.cumprod_p.bind(flat, axis=last, reverse=True)[..., 1:], ones],
                            axis=-1)
    others = jnp.reshape(jnp.multiply(left, right), aval_of(xt).shape)
    return jnp.transpose(others, tuple(int(i) for i in np.argsort(perm)))


def _reduce_prod_jvp(primals, tangents, *, axes):
    x, = primals
    y = P.reduce_prod_p.bind(x, axes=axes)
    # d prod = sum_i t_i * prod_{j != i} x_j
    return y, P.reduce_sum_p.bind(mul(tangents[0], prod_of_others(x, axes)), axes=axes)


JVP_RULES[P.reduce_prod_p] = _reduce_prod_jvp


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    """y_k = y_{k-1} x_k, so dy_k = dy_{k-1} x_k + y_{k-1} t_k: a scan (exact at zeros)."""
    from .. import lax
    from .. import numpy as jnp
    x, = primals
    y = P.cumprod_p.bind(x, axis=axis, reverse=reverse)
    xs, ts = jnp.moveaxis(x, axis, 0), jnp.moveaxis(tangents[0], axis, 0)
    dt = aval_of(x).dtype
    init = (jnp.ones(aval_of(xs).shape[1:], dt), jnp.zeros(aval_of(xs).shape[1:], dt))

    def step(carry, xt):
        p, dp = carry
        xi, ti = xt
        dp = jnp.add(jnp.multiply(dp, xi), jnp.multiply(p, ti))
        return (jnp.multiply(p, xi), dp), dp
    _, dys = lax.scan(step, init, (xs, ts), reverse=reverse)
    return y, jnp.moveaxis(dys, 0, axis)


JVP_RULES[P.cumprod_p] = _cumprod_jvp


def cum_source_index(x, y, axis, reverse):
    """For cummax/cummin: the index along `axis` of the element each output came from."""
    shape = aval_of(x).shape
    pos = P.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=axis)
    if reverse:  # the running extremum comes from the right: take the smallest index
        pos = P.sub_p.bind(scalar(shape[axis] - 1, np.int32), pos)
    hit = P.select_n_p.bind(P.eq_p.bind(x, y), zeros(aval_of(pos)), pos)
    last = P.cummax_p.bind(hit, axis=axis, reverse=reverse)
    if reverse:
        last = P.sub_p.bind(scalar(shape[axis] - 1, np.int32), last)
    return last


def along_axis_indices(shape, axis, idx):
    """Index arrays (one per dimension) that read `x[..., idx, ...]` along `axis`."""
    return [idx if d == axis else P.iota_p.bind(dtype=np.dtype(np.int32), shape=shape,
                                                dimension=d) for d in range(len(shape))]


def _cumext_jvp(prim):
    def rule(primals, tangents, *, axis, reverse):
        x, = primals
        y = prim.bind(x, axis=axis, reverse=reverse)
        shape = aval_of(x).shape
        src = cum_source_index(x, y, axis, reverse)
        idx = along_axis_indices(shape, axis, src)
        return y, P.gather_p.bind(tangents[0], *idx, axes=tuple(range(len(shape))))
    return rule


JVP_RULES[P.cummax_p] = _cumext_jvp(P.cummax_p)
JVP_RULES[P.cummin_p] = _cumext_jvp(P.cummin_p)


# --- the interpreter --------------------------------------------------------------------

def jvp_replay(jaxpr, primals, tangents):
    """Apply `jaxpr` to primals and tangents (None: zero); returns (outs, out tangents).
    Values are (primal, tangent) pairs; only floating-point values carry a tangent."""
    def pair(v, x, t):
        return x, t if is_float(v.aval) else None

    def apply_eqn(eqn, vals):
        prim = eqn.primitive
        ins, tins = [x for x, _ in vals], [t for _, t in vals]
        with keep_source(eqn):
            if all(t is None for t in tins) or prim in NON_DIFFERENTIABLE:
                outs = results(eqn, prim.bind(*ins, **eqn.params))
                touts = [None] * len(outs)
            else:
                rule = JVP_RULES.get(prim)
                if rule is None:
                    raise TransformError(f"no differentiation rule for the primitive "
                                         f"{prim.name!r}{where(eqn)}")
                try:
                    outs, touts = rule(ins, tins, **eqn.params)
                except TransformError as e:
                    if "(from " in str(e):
                        raise
                    raise TransformError(f"{e}{where(eqn)}") from None
                if not prim.multiple_results:
                    outs, touts = [outs], [touts]
        return [pair(v, o, t) for v, o, t in zip(eqn.outvars, outs, touts)]

    args = [pair(v, x, t) for v, x, t in zip(jaxpr.invars, primals, tangents)]
    outs, _ = run_jaxpr(jaxpr, args, apply_eqn, literal=lambda a: (read_literal(a), None))
    return [x for x, _ in outs], [t for _, t in outs]


def jvp_jaxpr(jaxpr, nonzero, instantiate_out=True):
    """A jaxpr `(primals..., nonzero tangents...) -> (outs..., tangents of float outs...)`."""
    n = len(jaxpr.invars)
    t_avals = [v.aval for v, nz in zip(jaxpr.invars, nonzero) if nz]

    def fun(*args):
        primals, ts = list(args[:n]), iter(args[n:])
        tangents = [next(ts) if nz else None for nz in nonzero]
        outs, touts = jvp_replay(jaxpr, primals, tangents)
        touts = [instantiate(t, aval_of(o)) for o, t, v in zip(outs, touts, jaxpr.outvars)
                 if is_float(v.aval)]
        return outs + touts
    return trace_avals(fun, [v.aval for v in jaxpr.invars] + t_avals, name="jvp body")


# --- control flow -----------------------------------------------------------------------------

def _float_mask(avals):
    return [is_float(a) for a in avals]


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    nonzero = [t is not None for t in tangents[1:]]
    new = [closed(jvp_jaxpr(b.jaxpr, nonzero)) for b in branches]
    ts = [t for t in tangents[1:] if t is not None]
    outs = cond_p.bind(index, *ops, *ts, branches=tuple(new))
    n = len(branches[0].jaxpr.outvars)
    prim_outs, t_iter = outs[:n], iter(outs[n:])
    return prim_outs, [next(t_iter) if is_float(aval_of(o)) else None for o in prim_outs]


JVP_RULES[cond_p] = _cond_jvp


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    body = jaxpr.jaxpr
    nc, nk = num_consts, num_carry
    consts, carry, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    tc, tk, tx = tangents[:nc], tangents[nc:nc + nk], tangents[nc + nk:]
    nz_c = [t is not None for t in tc]
    nz_x = [t is not None for t in tx]
    nz_k = [is_float(aval_of(k)) for k in carry]  # every float carry gets a tangent
    b_in = body.invars
    in_avals = [v.aval for v in b_in]
    nx = len(xs)
    y_float = [is_float(v.aval) for v in body.outvars[nk:]]

    def fun(*args):
        it = iter(args)
        c = take(it, nc)
        ct = take_where(it, nz_c)
        k = take(it, nk)
        kt = take_where(it, nz_k)
        x = take(it, nx)
        xt = take_where(it, nz_x)
        outs, touts = jvp_replay(body, c + k + x, ct + kt + xt)
        k_out, y_out = outs[:nk], outs[nk:]
        kt_out = [instantiate(t, aval_of(o)) for t, o, z in zip(touts[:nk], k_out, nz_k) if z]
        yt_out = [instantiate(t, aval_of(o)) for t, o, z in zip(touts[nk:], y_out, y_float)
                  if z]
        return k_out + kt_out + y_out + yt_out
    avals = (in_avals[:nc] + select(in_avals[:nc], nz_c) + in_avals[nc:nc + nk]
             + select(in_avals[nc:nc + nk], nz_k) + in_avals[nc + nk:]
             + select(in_avals[nc + nk:], nz_x))
    new_body = trace_avals(fun, avals, name="jvp scan body")
    ops = (list(consts) + [t for t in tc if t is not None] + list(carry)
           + [instantiate(t, aval_of(k)) for t, k, z in zip(tk, carry, nz_k) if z]
           + list(xs) + [t for t in tx if t is not None])
    outs = scan_p.bind(*ops, jaxpr=closed(new_body), length=length, reverse=reverse,
                       num_consts=nc + sum(nz_c), num_carry=nk + sum(nz_k), unroll=unroll)
    it = iter(outs)
    k_out = take(it, nk)
    kt_out = take_where(it, nz_k)
    y_out = take(it, len(y_float))
    yt_out = take_where(it, y_float)
    return k_out + y_out, kt_out + yt_out


JVP_RULES[scan_p] = _scan_jvp


def _while_jvp(primals, tangents, *, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    cconsts, bconsts, carry = primals[:ncc], primals[ncc:ncc + nbc], primals[ncc + nbc:]
    tb, tk = tangents[ncc:ncc + nbc], tangents[ncc + nbc:]
    nz_b = [t is not None for t in tb]
    nz_k = [is_float(aval_of(k)) for k in carry]
    nk = len(carry)
    body = body_jaxpr.jaxpr
    cj = cond_jaxpr.jaxpr
    b_avals = [v.aval for v in body.invars]

    def body_fun(*args):
        it = iter(args)
        b = take(it, nbc)
        bt = take_where(it, nz_b)
        k = take(it, nk)
        kt = take_where(it, nz_k)
        outs, touts = jvp_replay(body, b + k, bt + kt)
        return outs + [instantiate(t, aval_of(o)) for t, o, z in zip(touts, outs, nz_k) if z]
    new_body = trace_avals(body_fun, b_avals[:nbc] + select(b_avals[:nbc], nz_b)
                           + b_avals[nbc:] + select(b_avals[nbc:], nz_k), name="jvp while body")
    c_avals = [v.aval for v in cj.invars]

    def cond_fun(*args):
        from ..core.interpreter import inline_jaxpr
        return inline_jaxpr(cj, (), *args[:ncc + nk])
    new_cond = trace_avals(cond_fun, c_avals + select(c_avals[ncc:], nz_k), name="while cond")
    kts = [instantiate(t, aval_of(k)) for t, k, z in zip(tk, carry, nz_k) if z]
    outs = while_p.bind(*cconsts, *bconsts, *[t for t in tb if t is not None], *carry, *kts,
                        cond_jaxpr=closed(new_cond), cond_nconsts=ncc,
                        body_jaxpr=closed(new_body), body_nconsts=nbc + sum(nz_b))
    it = iter(outs[nk:])
    return outs[:nk], take_where(it, nz_k)


JVP_RULES[while_p] = _while_jvp


def _call_jvp(prim):
    def rule(primals, tangents, *, name, jaxpr):
        nonzero = [t is not None for t in tangents]
        inner = jvp_jaxpr(jaxpr.jaxpr, nonzero) if not jaxpr.consts else None
        if inner is None:  # a call with constants: replay it inline
            return jvp_replay_closed(jaxpr, primals, tangents)
        outs = prim.bind(*primals, *[t for t in tangents if t is not None],
                         name=f"jvp({name})", jaxpr=closed(inner))
        n = len(jaxpr.jaxpr.outvars)
        it = iter(outs[n:])
        return outs[:n], take_where(it, [is_float(aval_of(o)) for o in outs[:n]])
    return rule


def jvp_replay_closed(cj, primals, tangents):
    jaxpr = cj.jaxpr.replace(constvars=(), invars=tuple(cj.jaxpr.constvars) + cj.jaxpr.invars)
    return jvp_replay(jaxpr, list(cj.consts) + list(primals),
                      [None] * len(cj.consts) + list(tangents))


def _debug_print_jvp(primals, tangents, **params):
    return debug_print_p.bind(*primals, **params), []


JVP_RULES[debug_print_p] = _debug_print_jvp
for _p in CALL_PRIMITIVES:
    JVP_RULES[_p] = _call_jvp(_p)
