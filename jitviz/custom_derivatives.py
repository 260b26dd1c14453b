"""`jitviz.custom_vjp`: a function with a reverse-mode rule of its own, as `jax.custom_vjp`.

    @jitviz.custom_vjp
    def clip_gradient(x):
        return x
    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1, 1),))

A call becomes one `custom_vjp_call` equation holding the function's jaxpr (printed like a
`jit` call); everything about that primitive is here: its value is its jaxpr's (the interpreter
evaluates it, both Numba backends inline it — the shared `inline` pass does so before they
see it), its vjp runs the user's `fwd` and `bwd`, its batching rule vectorizes all three
functions, and forward mode is refused with JAX's error.

Like JAX, the function may not close over values being traced by an enclosing transformation
(pass them as arguments); closed-over constants are fine and get no cotangent.
"""
from __future__ import annotations

import functools

from .core.interpreter import eval_jaxpr, inline_jaxpr
from .core.ir import ClosedJaxpr
from .core.registry import lowering_rule, primitive, register_lowering
from .core.source import function_name
from .core.trace import Tracer
from .tree import tree_flatten, tree_unflatten


def _call_rule(*args, name, jaxpr, fwd, bwd, num_consts):
    ins = jaxpr.jaxpr.in_avals
    if len(ins) != len(args) or not all(a.same_type(b) for a, b in zip(ins, args)):
        raise TypeError(f"custom_vjp call of {name}: operands do not match its function")
    return jaxpr.jaxpr.out_avals


def _call_impl(*args, name, jaxpr, fwd, bwd, num_consts):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


custom_vjp_call_p = primitive(
    "custom_vjp_call", abstract_eval=_call_rule, impl=_call_impl, multiple_results=True,
    pp_params=lambda p: [("name", p["name"]), ("jaxpr", p["jaxpr"])], kind="control",
    call_param="jaxpr")

# compiled, it is the call of its function: each Numba backend inlines it as it inlines `jit`
register_lowering(custom_vjp_call_p, "cpu.statement",
                  lambda fb, eqn: _jit_rule("cpu.statement")(fb, eqn))
register_lowering(custom_vjp_call_p, "cuda.kernel", "inline")


def _jit_rule(target):
    from .lax.control_flow import jit_p
    return lowering_rule(jit_p, target)


class custom_vjp:
    """`jax.custom_vjp`: decorate `fun`, then `fun.defvjp(fwd, bwd)` with `fwd(*args) ->
    (out, residuals)` and `bwd(residuals, out_cotangent) -> a cotangent per argument`."""

    def __init__(self, fun, nondiff_argnums=()):
        if nondiff_argnums:
            raise NotImplementedError("custom_vjp's nondiff_argnums is not supported by jitviz "
                                      "yet: close over those values instead")
        functools.update_wrapper(self, fun)
        self.fun, self.fwd, self.bwd = fun, None, None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {function_name(self.fun)}"
                                 " using defvjp.")
        if kwargs:
            raise TypeError("custom_vjp functions take positional arguments only in jitviz")
        from .transforms._util import trace_flat
        leaves, in_tree = tree_flatten(args)
        store = {}

        def flat_fun(*xs):
            out, tree = tree_flatten(self.fun(*tree_unflatten(in_tree, list(xs))))
            store["out_tree"] = tree
            return out
        jaxpr, hoisted = trace_flat(flat_fun, leaves, name=function_name(self.fun), known=False)
        if any(isinstance(h, Tracer) for h in hoisted):
            raise TypeError(f"custom_vjp function {function_name(self.fun)} closes over a value "
                            "traced by an enclosing transformation; pass it as an argument")
        out_tree = store["out_tree"]
        outs = custom_vjp_call_p.bind(
            *hoisted, *leaves, name=function_name(self.fun), jaxpr=ClosedJaxpr(jaxpr, ()),
            fwd=_flat_fwd(self.fwd, in_tree, out_tree), bwd=_flat_bwd(self.bwd, in_tree, out_tree),
            num_consts=len(hoisted))
        return tree_unflatten(out_tree, list(outs))


def _flat_fwd(fwd, in_tree, out_tree):
    """fwd on flat leaves: (output leaves, residual leaves)."""
    def run(*leaves):
        out, res = fwd(*tree_unflatten(in_tree, list(leaves)))
        return tree_flatten(out)[0], res
    return run


def _flat_bwd(bwd, in_tree, out_tree):
    """bwd on flat cotangent leaves: one cotangent leaf per input leaf (None: zero)."""
    def run(res, *ct_leaves):
        cts = bwd(res, tree_unflatten(out_tree, list(ct_leaves)))
        if not isinstance(cts, (tuple, list)):
            raise TypeError("Custom VJP bwd rule must produce a tuple of cotangents, one per "
                            f"primal argument, got {type(cts).__name__}")
        return tree_flatten(tuple(cts), is_leaf=lambda x: x is None)[0]
    return run


# --- transformation rules ---------------------------------------------------------------------

def _vjp_rule(cts, primals, outs, *, name, jaxpr, fwd, bwd, num_consts):
    from .transforms._util import aval_of, instantiate
    args = primals[num_consts:]
    _, res = fwd(*args)
    cts = [instantiate(c, aval_of(o)) for c, o in zip(cts, outs)]
    in_cts = bwd(res, *cts)
    if len(in_cts) != len(args):
        raise TypeError(f"custom_vjp {name}: bwd gave {len(in_cts)} cotangent leaves for "
                        f"{len(args)} argument leaves")
    return [None] * num_consts + list(in_cts)


def _jvp_rule(primals, tangents, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _batch_rule(args, dims, *, name, jaxpr, fwd, bwd, num_consts):
    """The batched call of the batched function, with the batched fwd and bwd (the closed-over
    constants are concrete, so never batched)."""
    from .transforms import vmap
    from .transforms._util import trace_flat
    from .transforms.batching import batch_size, bdim_to_front
    size = batch_size(args, dims)
    consts = args[:num_consts]
    leaves = [bdim_to_front(x, d, size) for x, d in zip(args[num_consts:], dims[num_consts:])]
    batched = vmap(lambda *xs: inline_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *xs))
    body, hoisted = trace_flat(lambda *xs: list(batched(*xs)), leaves, name=name, known=False)
    outs = custom_vjp_call_p.bind(
        *hoisted, *leaves, name=name, jaxpr=ClosedJaxpr(body, ()),
        fwd=vmap(fwd), bwd=vmap(bwd), num_consts=len(hoisted))
    return list(outs), [0] * len(outs)


def _register_transformation_rules():
    from .transforms import register_batch, register_jvp, register_vjp
    register_vjp(custom_vjp_call_p, _vjp_rule)
    register_jvp(custom_vjp_call_p, _jvp_rule)
    register_batch(custom_vjp_call_p, _batch_rule)


_register_transformation_rules()
