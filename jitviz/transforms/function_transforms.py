"""`grad`, `value_and_grad`, `vjp`, `jvp`, `vmap`: each traces the function to a jaxpr and
replays it through a transformation (see `jvp.py`, `vjp.py`, `batching.py`).

Outside any trace the function is traced with values known (so `if x > 0:` works under
`grad`, as in JAX) and the transformed program runs at once. Inside a trace (`jit`,
`make_jaxpr`, another transformation) the transformed program is emitted into it: so
`jit(grad(f))`, `grad(grad(f))`, `vmap(grad(f))` and `grad(jit(f))` compose.

Reverse mode emits two `jit` calls, `forward(f)` (outputs and residuals) and `backward(f)`
(residuals and output cotangents to input cotangents): `make_jaxpr(grad(f))` prints them and
the explorer draws them as two clusters.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core.source import function_name
from ..core.trace import Tracer
from ..state import Ref, vmap_ref_arguments
from ..tree import tree_flatten, tree_unflatten
from ._util import (TransformError, aval_of, closed, convert, full, instantiate, is_float, moveaxis,
                    trace_flat, with_weak_type_of)
from .batching import batch_replay, bdim_to_front
from .collectives import bound_axis, replaying
from .jvp import jvp_replay
from .vjp import assemble_residuals, vjp_jaxpr


def _jit_p():
    from ..lax.control_flow import jit_p
    return jit_p


def _flatten_fun(fun, in_tree, store):
    def flat(*leaves):
        out = fun(*tree_unflatten(in_tree, list(leaves)))
        leaves_out, tree = tree_flatten(out)
        store["out_tree"] = tree
        return leaves_out
    return flat


def _as_value(x):
    if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
        return x
    from .. import numpy as jnp
    return jnp.asarray(x)


# --- reverse mode ------------------------------------------------------------------------------

def vjp(fun, *primals, has_aux=False, _name=None, _tangents_only=False):
    """`(out, vjp_fn)` (and `aux` with `has_aux`): `vjp_fn(ct)` is the cotangent of each
    primal, for the cotangent `ct` of the output. (`_tangents_only`: the primals are the
    tangents of a custom_jvp rule being transposed, so the custom functions the rule calls
    are not differentiated by this vjp.)"""
    name = _name or function_name(fun)
    leaves, in_tree = tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    store = {}
    jaxpr, hoisted = trace_flat(_flatten_fun(fun, in_tree, store), leaves, name=name,
                                differentiates=not _tangents_only)
    out_tree = store["out_tree"]
    aux_n = 0
    if has_aux:
        if out_tree.kind is None or len(out_tree.children) != 2:
            raise TypeError("a function with has_aux=True must return a pair (out, aux), got "
                            f"{out_tree}")
        aux_n = out_tree.children[1].num_leaves
    nh = len(hoisted)
    args = list(hoisted) + leaves
    active = [False] * nh + [is_float(aval_of(x)) for x in leaves]
    v = vjp_jaxpr(jaxpr, active, name, defer=True)
    jit_p = _jit_p()
    outs = jit_p.bind(*args, name=f"forward({name})", jaxpr=closed(v.forward))
    n_out = len(jaxpr.outvars)
    res = assemble_residuals(v.res_spec, args, outs[n_out:])
    outs = list(outs[:n_out])
    if has_aux:
        main_tree, aux_tree = out_tree.children
        main, aux = outs[:n_out - aux_n], outs[n_out - aux_n:]
    else:
        main_tree, main = out_tree, outs

    def vjp_fn(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != main_tree:
            raise TypeError(f"vjp_fn: the cotangent has structure {ct_tree}, but the output "
                            f"of {name} has structure {main_tree}")
        cts = [_cast_ct(c, o.aval) for c, o in zip(ct_leaves, jaxpr.outvars)]
        cts += [full(o.aval.shape, 0, o.aval.dtype) for o in jaxpr.outvars[len(cts):]]
        cts = [convert(c, o.aval.dtype) for c, o in zip(cts, jaxpr.outvars)]
        in_cts = _pull_back(v, name, res, cts)
        # JAX's cotangent of a weak primal is weak, except a complex primal's when every
        # output is real (the cotangent then comes from the transpose of `real`)
        real_out = all(o.aval.dtype.kind != "c" for o in jaxpr.outvars)
        return tree_unflatten(in_tree, [
            c if real_out and aval_of(x).dtype.kind == "c" else with_weak_type_of(c, x)
            for c, x in zip(in_cts[nh:], leaves)])

    main_out = tree_unflatten(main_tree, main)
    if has_aux:
        return main_out, vjp_fn, tree_unflatten(aux_tree, aux)
    return main_out, vjp_fn


def _pull_back(v, name, res, cts):
    """The `backward(f)` call. Work its rules left to the pullback (a custom_vjp's `bwd`,
    which JAX runs at each call of the pullback) runs now: the backward jaxpr is replayed with
    it done, on values known when they are (so `bwd` may branch on its residuals)."""
    jit_p = _jit_p()
    if not v.deferred:
        return jit_p.bind(*res, *cts, name=f"backward({name})", jaxpr=closed(v.backward))
    from ..custom_derivatives import replay_with_pending_bwd
    body, hoisted = trace_flat(lambda *xs: replay_with_pending_bwd(v.backward, xs),
                               [*res, *cts], name=name)
    return jit_p.bind(*hoisted, *res, *cts, name=f"backward({name})", jaxpr=closed(body))


def _cast_ct(c, aval):
    from ._util import convert, strong
    c = strong(_as_value(c))
    a = aval_of(c)
    if a.shape != aval.shape:
        raise TypeError(f"vjp_fn: a cotangent of shape {a.shape} for an output of shape "
                        f"{aval.shape}")
    if a.dtype != aval.dtype:
        c = convert(c, aval.dtype)
    return c


def _check_grad_inputs(leaves, allow_int, holomorphic=False):
    for x in leaves:
        dt = aval_of(x).dtype
        if holomorphic and dt.kind != "c":
            raise TypeError(f"grad with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dt.name}.")
        if dt.kind not in "fc" and not allow_int:
            raise TypeError("grad requires real- or complex-valued inputs (input dtype that is "
                            "a sub-dtype of np.inexact), but got "
                            f"{dt.name}. If you want to use Boolean- or integer-valued inputs, "
                            "use vjp or set allow_int to True.")


def _check_grad_output(ov, holomorphic):
    """JAX's rules: a real scalar, or a complex one with holomorphic=True."""
    if holomorphic:
        if ov.dtype.kind != "c":
            raise TypeError(f"grad with holomorphic=True requires outputs with complex dtype, "
                            f"but got {ov.dtype.name}.")
        return
    if not is_float(ov) or ov.dtype.kind == "c":
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {ov.dtype.name}. For holomorphic "
                        f"differentiation, pass holomorphic=True. For differentiation of "
                        f"non-holomorphic functions involving complex outputs, use jax.vjp "
                        f"directly.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """`(f(*args), grad of f with respect to args[argnums])` (a scalar output). Complex
    inputs follow JAX's convention (the transpose of the JVP, without conjugation: for a real
    f of z, `grad(f)(z)` is the conjugate of 2 df/dz-bar... as JAX gives it);
    `holomorphic=True` differentiates a complex-valued holomorphic f."""
    multiple = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if multiple else (argnums,)

    @functools.wraps(fun)
    def run(*args, **kwargs):
        for i in nums:
            if not -len(args) <= i < len(args):
                raise TypeError(f"differentiating with respect to argnums={argnums} requires "
                                f"at least {max(nums) + 1} positional arguments, got "
                                f"{len(args)}")
        nums_ = [i % len(args) for i in nums]
        diff = [args[i] for i in nums_]
        _check_grad_inputs(tree_flatten(diff)[0], allow_int, holomorphic)

        def partial(*d):
            full_args = list(args)
            for i, x in zip(nums_, d):
                full_args[i] = x
            return fun(*full_args, **kwargs)
        res = vjp(partial, *diff, has_aux=has_aux, _name=function_name(fun))
        out, fn = res[0], res[1]
        ov = aval_of(out) if not isinstance(out, (tuple, list, dict)) else None
        if ov is None or ov.shape != ():
            raise TypeError("Gradient only defined for scalar-output functions. Output "
                            + (f"had shape: {ov.shape}." if ov is not None else
                               f"was a {type(out).__name__}."))
        _check_grad_output(ov, holomorphic)
        g = fn(full((), 1, ov.dtype))
        g = tuple(g) if multiple else g[0]
        if has_aux:
            return (out, res[2]), g
        return out, g
    run.__name__ = f"value_and_grad({function_name(fun)})"
    return run


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of a scalar function with respect to `args[argnums]` (complex inputs and
    `holomorphic=True` as in `value_and_grad`)."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def run(*args, **kwargs):
        (out, g) = vg(*args, **kwargs)
        if has_aux:
            return g, out[1]
        return g
    run.__name__ = f"grad({function_name(fun)})"
    return run


# --- forward mode -------------------------------------------------------------------------------

def jvp(fun, primals, tangents, has_aux=False):
    """`(fun(*primals), directional derivative along tangents)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    name = function_name(fun)
    leaves, in_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if t_tree != in_tree:
        raise TypeError(f"jvp: primal and tangent structures differ: {in_tree} vs {t_tree}")
    leaves = [_as_value(x) for x in leaves]
    t_leaves = [_as_value(t) for t in t_leaves]
    for x, t in zip(leaves, t_leaves):
        if aval_of(x).shape != aval_of(t).shape:
            raise TypeError(f"jvp: a tangent of shape {aval_of(t).shape} for a primal of "
                            f"shape {aval_of(x).shape}")
    store = {}
    jaxpr, hoisted = trace_flat(_flatten_fun(fun, in_tree, store), leaves, name=name,
                                differentiates=True)
    from ._util import convert
    ts = [None] * len(hoisted) + [convert(t, aval_of(x).dtype) if is_float(aval_of(x)) else None
                                  for x, t in zip(leaves, t_leaves)]
    outs, touts = jvp_replay(jaxpr, list(hoisted) + leaves, ts)
    touts = [instantiate(t, aval_of(o)) for t, o in zip(touts, outs)]
    out_tree = store["out_tree"]
    if has_aux:
        main_tree, aux_tree = out_tree.children
        n = main_tree.num_leaves
        return (tree_unflatten(main_tree, outs[:n]), tree_unflatten(main_tree, touts[:n]),
                tree_unflatten(aux_tree, outs[n:]))
    return tree_unflatten(out_tree, outs), tree_unflatten(out_tree, touts)


# --- vmap ----------------------------------------------------------------------------------------

def _broadcast_axes(axes, tree, what):
    """`in_axes`/`out_axes` as one entry per leaf of `tree` (a prefix tree of axes)."""
    if axes is None or isinstance(axes, int):
        return [axes] * tree.num_leaves
    if isinstance(axes, (tuple, list)) and tree.kind is not None and \
            len(tree.children) == len(axes):
        out = []
        for a, child in zip(axes, tree.children):
            out += _broadcast_axes(a, child, what)
        return out
    if isinstance(axes, dict) and tree.kind is not None:
        keys = getattr(tree, "keys", None) or sorted(axes)
        out = []
        for k, child in zip(keys, tree.children):
            out += _broadcast_axes(axes[k], child, what)
        return out
    raise ValueError(f"vmap {what} specification {axes!r} does not match the structure "
                     f"{tree}")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Vectorize `fun` over the axes `in_axes` of its arguments (None: not mapped).
    `axis_name` names the mapped axis for collectives inside `fun` (`lax.psum(x, name)`,
    `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`); `axis_size` gives the size when no
    argument is mapped."""
    name = function_name(fun)

    @functools.wraps(fun)
    def run(*args):
        leaves, in_tree = tree_flatten(tuple(args))
        ia = in_axes
        if isinstance(ia, list):
            ia = tuple(ia)
        if isinstance(ia, tuple) and len(ia) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(ia)}, len(args)={len(args)}")
        axes = _broadcast_axes(ia if isinstance(ia, tuple) else ia, in_tree
                               if not isinstance(ia, tuple) else in_tree, "in_axes")
        if any(isinstance(x, Ref) for x in leaves):  # mutable arrays: see jitviz/state.py
            return vmap_ref_arguments(vmap, fun, leaves, in_tree, axes, out_axes, axis_name,
                                      axis_size)
        leaves = [_as_value(x) for x in leaves]
        sizes = set()
        dims = []
        for x, a in zip(leaves, axes):
            if a is None:
                dims.append(None)
                continue
            nd = aval_of(x).ndim
            if not -nd <= a < max(nd, 1) or nd == 0:
                raise ValueError(f"vmap was requested to map its argument along axis {a}, "
                                 f"which implies that its rank should be at least {a + 1}, "
                                 f"but is only {nd} (its shape is {aval_of(x).shape})")
            a = a % nd
            dims.append(a)
            sizes.add(aval_of(x).shape[a])
        if not sizes and axis_size is not None:
            sizes.add(int(axis_size))
        if len(sizes) != 1:
            raise ValueError("vmap got inconsistent sizes for the array axes to be mapped: "
                             + (", ".join(map(str, sorted(sizes))) if sizes else
                                "no argument is mapped (every in_axes is None)"))
        size = sizes.pop()
        # trace one example: the arguments without their mapped axis
        from ..core.ir import ShapedArray
        ex = []
        for x, d in zip(leaves, dims):
            av = aval_of(x)
            if d is None:
                ex.append(x)
            else:
                shape = av.shape[:d] + av.shape[d + 1:]
                ex.append(_Abstract(ShapedArray(shape, av.dtype, av.weak_type)))
        store = {}
        with bound_axis(axis_name, size):
            jaxpr, hoisted = trace_flat(_flatten_fun(fun, in_tree, store), ex, name=name,
                                        known=False, differentiates=False,
                                        purpose="vmap")
            with replaying(axis_name, size):
                outs, odims = batch_replay(jaxpr, list(hoisted) + leaves,
                                           [None] * len(hoisted) + dims)
        out_tree = store["out_tree"]
        oaxes = _broadcast_axes(out_axes, out_tree, "out_axes")
        final = []
        for o, d, a in zip(outs, odims, oaxes):
            if a is None:
                if d is not None:
                    raise ValueError(f"vmap has mapped output but out_axes is None (in {name})")
                final.append(o)
                continue
            o = bdim_to_front(o, d, size)
            nd = aval_of(o).ndim
            final.append(moveaxis(o, 0, a % nd))
        return tree_unflatten(out_tree, final)
    run.__name__ = f"vmap({name})"
    return run


class _Abstract:
    """An argument known only by its type (vmap traces one example)."""

    def __init__(self, aval):
        self.aval = aval


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "vmap", "TransformError"]
