"""`jitviz.checkpoint` (also `jitviz.remat`; this module is `jax.ad_checkpoint`), as
`jax.checkpoint`: a function whose intermediate values are not kept for reverse mode but
recomputed when the gradient needs them.

    layer = jitviz.checkpoint(lambda w, x: jnp.tanh(x @ w))
    jitviz.make_jaxpr(jitviz.grad(lambda w, x: layer(w, x).sum()))(w, x)

A call is one `remat2` equation holding the function's jaxpr, printed as JAX 0.10 prints it
(`remat2[differentiated=False jaxpr={...} policy=None prevent_cse=True]`), drawn by the
explorer as a cluster. Everything about that primitive is here: its value is its jaxpr's (the
interpreter evaluates it, both Numba backends inline it as they inline `jit`); forward mode
and batching give another `remat2` call around the transformed jaxpr; in reverse mode the
forward pass saves only the call's *inputs*, and the backward pass is a
`remat2[differentiated=True]` call that recomputes the function's intermediates from them
before running their backward rules — JAX's own structure.

`policy` (one of `jitviz.checkpoint_policies`) is accepted and printed; jitviz saves no
intermediate under any policy (every policy behaves as `nothing_saveable`), which changes what
is recomputed, never a value. Once compiled, the shared passes see across the inlined calls:
common-subexpression elimination may merge a recomputation with the forward pass's value
(`prevent_cse` is recorded, not enforced), so the saving is visible in the jaxpr, not promised
in the kernels' memory.
"""
from __future__ import annotations

import functools
import inspect

from .core.interpreter import eval_jaxpr, inline_jaxpr
from . import state
from .core.ir import ClosedJaxpr
from .core.registry import lowering_rule, primitive, register_lowering
from .core.source import function_name
from .tree import tree_flatten, tree_unflatten


def _remat_rule(*args, jaxpr, prevent_cse, differentiated, policy):
    ins = jaxpr.jaxpr.in_avals
    if len(ins) != len(args) or not all(a.same_type(b) for a, b in zip(ins, args)):
        raise TypeError("checkpoint call: operands do not match its function")
    return jaxpr.jaxpr.out_avals


def _remat_impl(*args, jaxpr, prevent_cse, differentiated, policy):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _printed(params):
    return [(k, params[k]) for k in ("differentiated", "jaxpr", "policy", "prevent_cse")]


remat_p = primitive("remat2", abstract_eval=_remat_rule, impl=_remat_impl,
                    multiple_results=True, pp_params=_printed, kind="control",
                    call_param="jaxpr")


def _cpu_statement(fb, eqn):
    from .lax.control_flow import jit_p
    return lowering_rule(jit_p, "cpu.statement")(fb, eqn)


register_lowering(remat_p, "cpu.statement", _cpu_statement)
register_lowering(remat_p, "cuda.kernel", "inline")


# --- the user's API ---------------------------------------------------------------------------

def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=(),
               static_argnames=(), concrete=False):
    """`jax.checkpoint` / `jax.remat`: `fun` with its intermediates recomputed, not stored,
    for reverse mode. Usable as `checkpoint(f, ...)`, `@checkpoint` and
    `@functools.partial(checkpoint, static_argnums=...)`. Arguments at `static_argnums` /
    `static_argnames` are Python values the function is traced for (as `jit`'s)."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums, static_argnames=static_argnames,
                                 concrete=concrete)
    if not callable(fun):
        raise TypeError(f"checkpoint: fun must be callable, got {type(fun).__name__}")
    if concrete:
        raise NotImplementedError("checkpoint(concrete=True) was removed from JAX; mark the "
                                  "arguments Python control flow reads as static_argnums")
    if policy is not None and not callable(policy):
        raise TypeError("checkpoint: policy must be one of jitviz.checkpoint_policies (a "
                        f"function of a primitive and its operands), got {policy!r}")
    statics = _static_positions(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        args = _positional(fun, args, kwargs)
        return _bind(fun, args, statics, prevent_cse=bool(prevent_cse), policy=policy)
    return remat_fun


remat = checkpoint


def _positional(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"checkpoint of {function_name(fun)}: keyword-only arguments "
                        f"{sorted(bound.kwargs)} are not supported; pass them positionally")
    return tuple(bound.args)


def _static_positions(fun, static_argnums, static_argnames):
    nums = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if names:
        params = list(inspect.signature(fun).parameters)
        for name in names:
            if name not in params:
                raise ValueError(f"checkpoint: static_argnames names {name!r}, which is not a "
                                 f"parameter of {function_name(fun)} ({', '.join(params)})")
            nums.add(params.index(name))
    return frozenset(nums)


def _bind(fun, args, statics, *, prevent_cse, policy):
    """Trace `fun` on the leaves of its non-static arguments and bind one `remat2` call;
    values it closes over (constants, tracers of an enclosing trace) become leading
    operands, as `jit` does."""
    n = len(args)
    bad = [i for i in statics if not -n <= i < n]
    if bad:
        raise ValueError(f"checkpoint: static_argnums {sorted(bad)} out of range for "
                         f"{function_name(fun)} called with {n} arguments")
    statics = {i % n for i in statics}

    def threaded(refs):  # `fun` writes Refs of an enclosing trace: extra operands/results
        def with_refs(*a):
            return state.redirected(refs, a[-1], fun, *a[:-1])
        out, finals = _bind_traced(with_refs, (*args, state.read_refs(refs)), statics,
                                   name=function_name(fun), prevent_cse=prevent_cse,
                                   policy=policy)
        state.write_refs(refs, finals)
        return out
    return state.thread_ref_writes(
        lambda: _bind_traced(fun, args, statics, name=function_name(fun),
                             prevent_cse=prevent_cse, policy=policy), threaded)


def _bind_traced(fun, args, statics, *, name, prevent_cse, policy):
    from .transforms._util import trace_flat
    dyn = [a for i, a in enumerate(args) if i not in statics]
    leaves, in_tree = tree_flatten(dyn)
    store = {}

    def flat_fun(*xs):
        it = iter(tree_unflatten(in_tree, list(xs)))
        full = [a if i in statics else next(it) for i, a in enumerate(args)]
        out, store["tree"] = tree_flatten(fun(*full))
        return out
    jaxpr, hoisted = trace_flat(flat_fun, leaves, name=name, known=False)
    outs = remat_p.bind(*hoisted, *leaves, jaxpr=ClosedJaxpr(jaxpr, ()),
                        prevent_cse=prevent_cse, differentiated=False, policy=policy)
    return tree_unflatten(store["tree"], list(outs))


# --- transformation rules ---------------------------------------------------------------------

def _jvp_rule(primals, tangents, *, jaxpr, **params):
    """The jvp of the function, itself checkpointed (JAX's rule)."""
    from .transforms._util import aval_of, closed, is_float, take_where
    from .transforms.jvp import jvp_jaxpr
    nonzero = [t is not None for t in tangents]
    inner = jvp_jaxpr(jaxpr.jaxpr, nonzero)
    outs = remat_p.bind(*primals, *[t for t in tangents if t is not None],
                        jaxpr=closed(inner), **params)
    n = len(jaxpr.jaxpr.outvars)
    return outs[:n], take_where(iter(outs[n:]), [is_float(aval_of(o)) for o in outs[:n]])


def _batch_rule(args, dims, *, jaxpr, **params):
    from .transforms._util import closed
    from .transforms.batching import batch_jaxpr, batch_size, bdim_to_front
    size = batch_size(args, dims)
    args = [bdim_to_front(a, d) for a, d in zip(args, dims)]
    body, flags = batch_jaxpr(jaxpr.jaxpr, [d is not None for d in dims], size)
    outs = remat_p.bind(*args, jaxpr=closed(body), **params)
    return outs, [0 if f else None for f in flags]


def _forward(ins, act_in, *, eqn, jaxpr, **params):
    """The forward pass keeps no intermediate: the call's operands are its only residuals
    (the backward pass reads them, so they are the values it closes over)."""
    return remat_p.bind(*ins, jaxpr=jaxpr, **params), None


def _backward(res, cts, primals, act_in, *, eqn, jaxpr, differentiated, **params):
    """One `remat2[differentiated=True]` call: the function's forward pass run again from
    its operands, for the residuals its backward rules read, then those rules."""
    from .transforms._util import aval_of, closed, instantiate, strong, trace_avals
    from .transforms.vjp import assemble_residuals, vjp_jaxpr
    inner = jaxpr.jaxpr
    cts = [strong(instantiate(c, o.aval)) for c, o in zip(cts, inner.outvars)]
    n_in, n_out = len(primals), len(inner.outvars)

    def recompute_then_pull_back(*args):
        ins, out_cts = args[:n_in], args[n_in:]
        v = vjp_jaxpr(inner, act_in, "checkpoint")
        res_out = inline_jaxpr(v.forward, (), *ins)[n_out:]
        r = assemble_residuals(v.res_spec, list(ins), list(res_out))
        return inline_jaxpr(v.backward, (), *r, *out_cts)
    body = trace_avals(recompute_then_pull_back,
                       [aval_of(p) for p in primals] + [aval_of(c) for c in cts],
                       name="checkpointed backward")
    return remat_p.bind(*primals, *cts, jaxpr=closed(body), differentiated=True, **params)


def _register_transformation_rules():
    from .transforms import register_batch, register_jvp
    from .transforms.vjp import VJP_CALL_RULES
    register_jvp(remat_p, _jvp_rule)
    register_batch(remat_p, _batch_rule)
    # a call primitive's reverse mode is a forward / backward pair (cond's, scan's, jit's)
    VJP_CALL_RULES[remat_p] = (_forward, _backward)


_register_transformation_rules()


def checkpoint_name(x, name):
    """`jax.ad_checkpoint.checkpoint_name`: tags `x` for the name-based policies. jitviz's
    policies save nothing (see the module's note), so the tag changes nothing and `x` is
    returned as it is (JAX records a `name` equation; jitviz records none)."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")
    return x


# --- jax.checkpoint_policies ------------------------------------------------------------------

def _is_dot(prim):
    return getattr(prim, "name", prim) == "dot_general"


class checkpoint_policies:
    """`jax.checkpoint_policies`: predicates `policy(prim, *avals, **params) -> bool` saying
    whether an intermediate may be saved. jitviz accepts them and applies none (it recomputes
    everything, as `nothing_saveable`); the predicates themselves answer as JAX's."""

    @staticmethod
    def everything_saveable(*_, **__):
        return True

    @staticmethod
    def nothing_saveable(*_, **__):
        return False

    @staticmethod
    def dots_saveable(prim, *_, **__):
        return _is_dot(prim)

    checkpoint_dots = dots_saveable

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim, *_, **params):
        if not _is_dot(prim):
            return False
        (_, (lhs_batch, _)) = params["dimension_numbers"]
        return not lhs_batch

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names):
        """Saves the values named with `checkpoint_name`; jitviz has no names, so none."""
        return checkpoint_policies.nothing_saveable

    @staticmethod
    def save_any_names_but_these(*names):
        return checkpoint_policies.nothing_saveable

    save_anything_except_these_names = save_any_names_but_these

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        def policy(prim, *args, **params):
            return policy_1(prim, *args, **params) or policy_2(prim, *args, **params)
        return policy
