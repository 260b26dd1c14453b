"""`jitviz.custom_vjp` and `jitviz.custom_jvp`: functions with derivative rules of their own,
as `jax.custom_vjp` and `jax.custom_jvp`.

    @jitviz.custom_vjp
    def clip_gradient(x):
        return x
    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1, 1),))

A call becomes one `custom_vjp_call` equation holding the function's jaxpr (printed like a
`jit` call); everything about that primitive is here: its value is its jaxpr's (the interpreter
evaluates it, both Numba backends inline it — the shared `inline` pass does so before they
see it), its vjp runs the user's `fwd` and `bwd`, its batching rule vectorizes all three
functions, and forward mode is refused with JAX's error.

A `custom_jvp` call is a `custom_jvp_call` equation the same way; its jvp is the user's rule,
its reverse mode the transpose of that rule (the rule is linear in the tangents: its vjp with
respect to them, as JAX transposes the linearized rule), and it batches the function and the
rule together.

When the user's functions run follows JAX (users see it through `print`s and Python control
flow): an eager call just runs the function; under `jit`, `make_jaxpr` or a control-flow body
the function is traced and the rules wait; a call that `jvp`/`grad`/`vjp` differentiate as they
trace (`transforms._util.custom_rule_depth`) runs only the rule (`jvp`, or `fwd`) once per level
of differentiation, and its equation keeps the traced rule, the call's jaxpr being the rule's
primal part. A custom_vjp's `bwd` runs when the pullback is called (`_PendingBwd`).

Like JAX, the functions may not close over values being traced by an enclosing transformation
(pass them as arguments); closed-over constants are fine and get no cotangent.
"""
from __future__ import annotations

import functools
import inspect
import operator

from .core.interpreter import eval_jaxpr, inline_jaxpr
from .core.ir import ClosedJaxpr
from .core.registry import lowering_rule, primitive, register_lowering
from .core.source import argument_positions, function_name
from .core.trace import JaxprTrace, Tracer, current_trace, push_trace
from .errors import UnexpectedTracerError
from .tree import tree_flatten, tree_map, tree_unflatten


def _call_rule(*args, name, jaxpr, num_consts, **rules):
    ins = jaxpr.jaxpr.in_avals
    if len(ins) != len(args) or not all(a.same_type(b) for a, b in zip(ins, args)):
        raise TypeError(f"custom derivative call of {name}: operands do not match its function")
    return jaxpr.jaxpr.out_avals


def _call_impl(*args, name, jaxpr, num_consts, **rules):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _call_primitive(name):
    """A call of a function with rules of its own (`rules`: params holding the user's rules on
    flat leaves): printed like a `jit` call, valued as its jaxpr, and compiled as the call of
    its function — each Numba backend inlines it as it inlines `jit`."""
    prim = primitive(name, abstract_eval=_call_rule, impl=_call_impl, multiple_results=True,
                     pp_params=lambda p: [("name", p["name"]), ("jaxpr", p["jaxpr"])],
                     kind="control", call_param="jaxpr")
    register_lowering(prim, "cpu.statement", lambda fb, eqn: _jit_rule("cpu.statement")(fb, eqn))
    register_lowering(prim, "cuda.kernel", "inline")
    return prim


custom_vjp_call_p = _call_primitive("custom_vjp_call")
custom_jvp_call_p = _call_primitive("custom_jvp_call")


def _jit_rule(target):
    from .lax.control_flow import jit_p
    return lowering_rule(jit_p, target)


class custom_vjp:
    """`jax.custom_vjp`: decorate `fun`, then `fun.defvjp(fwd, bwd)` with `fwd(*args) ->
    (out, residuals)` and `bwd(residuals, out_cotangent) -> a cotangent per argument`."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun, self.fwd, self.bwd = fun, None, None
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """`optimize_remat` only changes what JAX stores, so it is accepted and has no
        effect; `symbolic_zeros=True` changes what the rules receive, and is refused."""
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp's defvjp(symbolic_zeros=True) is not "
                                      "supported by jitviz: write the rules for ordinary "
                                      "(possibly zero) cotangents and leave it False")
        self.fwd, self.bwd = fwd, bwd  # returns None, as JAX's (a notebook cell shows nothing)

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {function_name(self.fun)}"
                                 " using defvjp.")
        args = _positional(self.fun, args, kwargs, "custom_vjp")
        nd = _NondiffSplit(args, self.nondiff_argnums, self.fun)
        if current_trace() is None:
            return self.fun(*args)  # an eager call just runs the function, as in JAX
        for value in nd.static:
            _check_for_tracers(value)
        fwd, bwd = nd.with_static(self.fwd), nd.prepend_static(self.bwd)
        if _differentiated_here(nd.diff):
            return _bind_fwd_rule_call(self.fun, fwd, bwd, nd.diff)
        return _bind_call(
            custom_vjp_call_p, "custom_vjp", self.fun, nd.with_static(self.fun), nd.diff,
            lambda i, o: dict(fwd=_flat_fwd(fwd, i, o), bwd=_flat_bwd(bwd, i, o)))


def _positional(fun, args, kwargs, kind):
    """Keyword arguments moved to their positions (as JAX resolves them), defaults filled."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function "
                        f"{function_name(fun)} could not be resolved to positional-only "
                        f"arguments. Binding failed with the error:\n{e}") from e
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"The input arguments to the {kind}-decorated function "
                        f"{function_name(fun)} could not be resolved to positional-only "
                        f"arguments: {sorted(bound.kwargs)} are keyword-only")
    return tuple(bound.args)


def _nondiff_positions(fun, nondiff_argnums, nondiff_argnames):
    """The sorted positions of the non-differentiable arguments (names looked up in `fun`'s
    signature, as JAX's `nondiff_argnames`)."""
    nums = argument_positions(fun, nondiff_argnums, nondiff_argnames, "nondiff_argnames")
    for i in nums:
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise TypeError(f"nondiff_argnums must be non-negative integer positions, got {i!r}")
    return tuple(sorted(nums))


class _NondiffSplit:
    """A call's arguments split into the differentiable ones (`diff`, the operands) and those
    at `nondiff_argnums` (`static`, passed to the rules as they are, as JAX does)."""

    def __init__(self, args, positions, fun):
        if positions and positions[-1] >= len(args):
            raise TypeError(f"nondiff_argnums {positions} of {function_name(fun)}: the call "
                            f"passes only {len(args)} arguments")
        self.positions = positions
        self.static = [args[i] for i in positions]
        self.diff = tuple(a for i, a in enumerate(args) if i not in positions)

    def merge(self, diff, static=None):
        """The full argument list: `diff` with the static arguments put back in place."""
        static = self.static if static is None else static
        it, fixed = iter(diff), dict(zip(self.positions, static))
        n = len(static) + len(diff)
        return [fixed[i] if i in fixed else next(it) for i in range(n)]

    def with_static(self, fun):
        """`fun` called on the differentiable arguments only."""
        if not self.positions:
            return fun
        return functools.wraps(fun)(lambda *diff: fun(*self.merge(diff)))

    def prepend_static(self, rule):
        """`rule` with the static arguments passed first (JAX's bwd / jvp convention)."""
        if not self.positions:
            return rule
        return functools.wraps(rule)(lambda *rest: rule(*self.static, *rest))


def _check_for_tracers(value):
    for leaf in tree_flatten(value)[0]:
        if isinstance(leaf, Tracer):
            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in "
                "a position indicated by nondiff_argnums as non-differentiable. Tracers cannot "
                "be passed as non-differentiable arguments to custom_vjp functions; instead, "
                "nondiff_argnums should only be used for arguments that can't be or contain "
                "JAX tracers, e.g. function-valued arguments. In particular, array-valued "
                "arguments should typically not be indicated as nondiff_argnums.")


def _bind_call(prim, kind, fun, flat_source, args, rules_of_trees):
    """Trace `flat_source` (the user's `fun` on the operands `args`) and bind `prim` on the
    leaves, with the params `rules_of_trees` makes from the input and output trees (the
    user's rules on flat leaves)."""
    from .transforms._util import trace_flat
    leaves, in_tree = tree_flatten(args)
    store = {}

    def flat_fun(*xs):
        out, tree = tree_flatten(flat_source(*tree_unflatten(in_tree, list(xs))))
        store["out_tree"] = tree
        return out
    # values known now stay known (under an eager grad, `if x > 0:` works in the function)
    jaxpr, hoisted = trace_flat(flat_fun, leaves, name=function_name(fun), known=True)
    _check_no_traced_closure(hoisted, kind, fun)
    out_tree = store["out_tree"]
    outs = prim.bind(*hoisted, *leaves, name=function_name(fun), jaxpr=ClosedJaxpr(jaxpr, ()),
                     num_consts=len(hoisted), **rules_of_trees(in_tree, out_tree))
    return tree_unflatten(out_tree, list(outs))


def _check_no_traced_closure(hoisted, kind, fun):
    if any(isinstance(h, Tracer) for h in hoisted):
        raise TypeError(f"{kind} function {function_name(fun)} closes over a value traced by "
                        "an enclosing transformation; pass it as an argument")


def _differentiated_here(operands):
    """Whether the current trace is being differentiated as it is traced (grad, jvp, vjp,
    or vmap inside them) and the call has traced operands: then JAX calls only the rule
    (`jvp`, or `fwd`), never the function itself."""
    from .transforms._util import custom_rule_depth
    trace = current_trace()
    return custom_rule_depth(trace) > 0 and \
        any(_may_carry_a_tangent(x, trace) for x in tree_flatten(operands)[0])


def _may_carry_a_tangent(x, trace) -> bool:
    """Whether `x` may depend on what `trace` differentiates: a traced value computed from
    the trace's inputs other than through `stop_gradient` (JAX calls no rule when every
    tangent is a symbolic zero: `f(stop_gradient(x))` just runs `f`). A value of an
    enclosing trace counts as one that may."""
    from .lax.stop_gradient import stop_gradient_p
    if not isinstance(x, Tracer):
        return False
    if x._trace is not trace:
        return True
    inputs = {v.id for v in trace.invars}
    todo, seen = [x._var], set()
    while todo:
        var = todo.pop()
        if not hasattr(var, "id") or var.id in seen:
            continue
        seen.add(var.id)
        if var.id in inputs:
            return True
        eqn = trace.producer.get(var.id)
        if eqn is not None and eqn.primitive is not stop_gradient_p:
            todo.extend(eqn.invars)
    return False


def _trace_rule(flat_rule, leaves, free_avals, kind, fun):
    """Trace `flat_rule(primals, free)` once: `primals` stand for `leaves` (their values kept
    when the enclosing trace knows them, so the rule may use Python control flow on them),
    `free` are fresh inputs of `free_avals` (tangents). Inside, custom functions count one
    differentiation fewer: the function the rule calls is traced (or runs its own rule
    again under grad of grad), as JAX calls it one level down.

    Returns (jaxpr, consts): the jaxpr's leading inputs stand for `consts`."""
    from .transforms._util import KnownTrace, aval_of, custom_rule_depth, known_value
    parent = current_trace()
    values = [known_value(x) for x in leaves]
    known = isinstance(parent, KnownTrace) and all(v is not None for v in values)
    trace = (KnownTrace if known else JaxprTrace)(
        parent, fun_name=function_name(fun), fun_location="", purpose=f"{kind} rule")
    trace.custom_rule_depth = custom_rule_depth(parent) - 1
    with push_trace(trace):
        primals = [trace.new_known_arg(v, aval_of(x)) if known else trace.new_arg(aval_of(x))
                   for x, v in zip(leaves, values)]
        free = [trace.new_arg(aval) for aval in free_avals]
        outs = flat_rule(primals, free)
        jaxpr, consts = trace.finish_hoisted(list(outs))
    _check_no_traced_closure(consts, kind, fun)
    return jaxpr, consts


def _primal_part(rule_jaxpr, consts, leaves, free_avals, n_out, fun):
    """The call's own jaxpr taken from its traced rule: the rule's first `n_out` outputs with
    zero tangents, dead code dropped (the function itself is never traced)."""
    from .passes.dce import dce_jaxpr
    from .transforms._util import trace_flat, zeros

    def primal(*xs):
        ins = [*consts, *xs, *[zeros(aval) for aval in free_avals]]
        return inline_jaxpr(rule_jaxpr, (), *ins)[:n_out]
    jaxpr, hoisted = trace_flat(primal, leaves, name=function_name(fun), known=False)
    return dce_jaxpr(jaxpr), hoisted


def _bind_jvp_rule_call(fun, rule, operands):
    """A custom_jvp call being differentiated: only the rule runs (once), and the equation
    keeps its jaxpr, for this and later differentiations (jvp: inlined; grad: transposed)."""
    from .transforms._util import aval_of
    leaves, in_tree = tree_flatten(operands)
    avals = [aval_of(x) for x in leaves]
    trees = {}

    def flat_rule(primals, tangents):
        ps, ts = (tuple(tree_unflatten(in_tree, list(x))) for x in (primals, tangents))
        out, t_out = rule(ps, ts)
        trees["out"], t_tree = tree_flatten(out)[1], tree_flatten(t_out)[1]
        if t_tree != trees["out"]:
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                            f"equal container (pytree) structures, but got {trees['out']} "
                            f"and {t_tree} respectively.")
        return tree_flatten(out)[0] + tree_flatten(t_out)[0]
    jaxpr, consts = _trace_rule(flat_rule, leaves, avals, "custom_jvp", fun)
    n_out = trees["out"].num_leaves

    def jvp(primals, tangents):
        outs = inline_jaxpr(jaxpr, (), *consts, *primals, *tangents)
        return outs[:n_out], outs[n_out:]
    return _bind_from_rule(custom_jvp_call_p, fun, jaxpr, consts, leaves, avals, n_out,
                           trees["out"], dict(jvp=jvp))


def _bind_fwd_rule_call(fun, fwd, bwd, operands):
    """A custom_vjp call being differentiated: only `fwd` runs now (once); `bwd` runs when
    the backward pass is built, as under JAX's grad."""
    leaves, in_tree = tree_flatten(operands)
    trees = {}

    def flat_fwd(primals, _):
        out, res = fwd(*tree_unflatten(in_tree, list(primals)))
        out_leaves, trees["out"] = tree_flatten(out)
        res_leaves, trees["res"] = tree_flatten(res)
        # traced residuals are outputs of the traced fwd; Python values stay as they are
        trees["traced"] = [i for i, r in enumerate(res_leaves) if isinstance(r, Tracer)]
        trees["res_leaves"] = [None if isinstance(r, Tracer) else r for r in res_leaves]
        return out_leaves + [res_leaves[i] for i in trees["traced"]]
    jaxpr, consts = _trace_rule(flat_fwd, leaves, [], "custom_vjp", fun)
    n_out, out_tree = trees["out"].num_leaves, trees["out"]

    def traced_fwd(*xs):
        outs = inline_jaxpr(jaxpr, (), *consts, *xs)
        res_leaves = list(trees["res_leaves"])
        for i, r in zip(trees["traced"], outs[n_out:]):
            res_leaves[i] = r
        return outs[:n_out], tree_unflatten(trees["res"], res_leaves)
    return _bind_from_rule(custom_vjp_call_p, fun, jaxpr, consts, leaves, [], n_out, out_tree,
                           dict(fwd=traced_fwd, bwd=_flat_bwd(bwd, in_tree, out_tree)))


def _bind_from_rule(prim, fun, rule_jaxpr, consts, leaves, free_avals, n_out, out_tree, rules):
    primal, hoisted = _primal_part(rule_jaxpr, consts, leaves, free_avals, n_out, fun)
    outs = prim.bind(*hoisted, *leaves, name=function_name(fun), jaxpr=ClosedJaxpr(primal, ()),
                     num_consts=len(hoisted), **rules)
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
    from .transforms.vjp import defer_to_pullback
    args = primals[num_consts:]
    _, res = fwd(*args)
    cts = [instantiate(c, aval_of(o)) for c, o in zip(cts, outs)]
    if defer_to_pullback():
        return [None] * num_consts + _pending_bwd_call(name, bwd, res, cts, args)
    return [None] * num_consts + _checked_cts(name, bwd(res, *cts), args)


def _checked_cts(name, in_cts, args):
    if len(in_cts) != len(args):
        raise TypeError(f"custom_vjp {name}: bwd gave {len(in_cts)} cotangent leaves for "
                        f"{len(args)} argument leaves")
    return list(in_cts)


class _PendingBwd:
    """A custom_vjp's `bwd` left to the pullback: JAX runs `bwd` when the pullback is called
    (each time), not when `vjp` returns. The backward jaxpr `vjp` traces holds a placeholder
    call (zeros of the cotangents' types, on the residuals and cotangents, so the forward
    pass keeps exactly what `bwd` reads); the pullback replays that jaxpr calling `bwd`
    instead (`replay_with_pending_bwd`)."""

    def __init__(self, name, bwd, res, n_cts, arg_avals):
        leaves, self.res_tree = tree_flatten(res)
        self.traced = [i for i, r in enumerate(leaves) if isinstance(r, Tracer)]
        self.static = [None if isinstance(r, Tracer) else r for r in leaves]
        self.operands = [leaves[i] for i in self.traced]
        self.name, self.bwd, self.n_cts, self.arg_avals = name, bwd, n_cts, arg_avals

    def __call__(self, *ops):
        from .transforms._util import aval_of, convert, zeros
        leaves = list(self.static)
        for i, r in zip(self.traced, ops[:len(self.traced)]):
            leaves[i] = r
        res = tree_unflatten(self.res_tree, leaves)
        in_cts = _checked_cts(self.name, self.bwd(res, *ops[len(self.traced):]),
                              self.arg_avals)
        out = []
        for ct, aval in zip(in_cts, self.arg_avals):
            if ct is None:
                out.append(zeros(aval))
                continue
            if aval_of(ct).shape != aval.shape:
                raise ValueError(f"Custom VJP bwd rule of {self.name} must produce an output "
                                 "with the same shape as the args tuple of the primal "
                                 f"function: got {aval_of(ct).shape} for an argument of "
                                 f"shape {aval.shape}")
            out.append(convert(ct, aval.dtype))
        return out


def _pending_bwd_call(name, bwd, res, cts, args):
    from .transforms._util import aval_of, trace_avals, zeros
    arg_avals = [aval_of(a).strong() for a in args]
    pending = _PendingBwd(name, bwd, res, len(cts), arg_avals)
    ops = pending.operands + list(cts)
    zero = trace_avals(lambda *_: [zeros(a) for a in arg_avals], [aval_of(o) for o in ops],
                       name=f"bwd of {name}")
    return list(custom_vjp_call_p.bind(*ops, name=f"bwd of {name}", jaxpr=ClosedJaxpr(zero, ()),
                                       num_consts=0, fwd=None, bwd=pending))


def replay_with_pending_bwd(jaxpr, args):
    """`jaxpr` (a backward pass) re-emitted on `args` with each pending `bwd` called now."""
    from .core.interpreter import results, run_jaxpr
    from .transforms._util import keep_source, read_literal

    def apply_eqn(eqn, ins):
        pending = eqn.params.get("bwd") if eqn.primitive is custom_vjp_call_p else None
        if isinstance(pending, _PendingBwd):
            return pending(*ins)
        with keep_source(eqn):
            return results(eqn, eqn.primitive.bind(*ins, **eqn.params))
    return run_jaxpr(jaxpr, list(args), apply_eqn, literal=read_literal)[0]


def _jvp_rule(primals, tangents, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _batch_rule(prim):
    """The batched call of the batched function, with each of its rules batched too (the
    closed-over constants are concrete, so never batched)."""
    def rule(args, dims, *, name, jaxpr, num_consts, **rules):
        from .transforms import vmap
        from .transforms._util import trace_flat
        from .transforms.batching import batch_size, bdim_to_front
        size = batch_size(args, dims)
        consts = args[:num_consts]
        leaves = [bdim_to_front(x, d, size)
                  for x, d in zip(args[num_consts:], dims[num_consts:])]
        batched = vmap(lambda *xs: inline_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *xs))
        body, hoisted = trace_flat(lambda *xs: list(batched(*xs)), leaves, name=name,
                                   known=False)
        outs = prim.bind(*hoisted, *leaves, name=name, jaxpr=ClosedJaxpr(body, ()),
                         num_consts=len(hoisted), **{k: vmap(r) for k, r in rules.items()})
        return list(outs), [0] * len(outs)
    return rule


def _register_transformation_rules():
    from .transforms import register_batch, register_jvp, register_vjp
    register_vjp(custom_vjp_call_p, _vjp_rule)
    register_jvp(custom_vjp_call_p, _jvp_rule)
    register_batch(custom_vjp_call_p, _batch_rule(custom_vjp_call_p))


_register_transformation_rules()


# --- custom_jvp -------------------------------------------------------------------------------

class custom_jvp:
    """`jax.custom_jvp`: decorate `fun`, then `@fun.defjvp` a rule `jvp(primals, tangents) ->
    (primal_out, tangent_out)`, or `fun.defjvps(*per_argument_rules)`."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun, self.jvp = fun, None
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)

    def defjvp(self, jvp, symbolic_zeros=False):
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp's defjvp(symbolic_zeros=True) is not "
                                      "supported by jitviz: the rule gets instantiated zero "
                                      "tangents; leave it False")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, `rule(tangent, primal_out, *primals) -> its contribution`."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")
        def jvp(primals, tangents):
            # the call of the function itself, as JAX's: a derivative of `out` at a higher
            # order comes from these rules too
            out = self(*primals)
            parts = [rule(t, out, *primals) for rule, t in zip(jvps, tangents)
                     if rule is not None]
            if not parts:
                from .numpy import zeros_like
                return out, tree_map(zeros_like, out)
            return out, functools.reduce(lambda a, b: tree_map(operator.add, a, b), parts)
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {function_name(self.fun)}"
                                 " using defjvp.")
        args = _positional(self.fun, args, kwargs, "custom_jvp")
        nd = _NondiffSplit(args, self.nondiff_argnums, self.fun)
        if current_trace() is None:
            return self.fun(*args)  # an eager call just runs the function, as in JAX
        if not self.nondiff_argnums:
            if _differentiated_here(args):
                return _bind_jvp_rule_call(self.fun, self.jvp, args)
            return _bind_call(custom_jvp_call_p, "custom_jvp", self.fun, self.fun, args,
                              lambda i, o: dict(jvp=_flat_jvp(self.jvp, i, o)))
        # JAX lets traced values be non-differentiable arguments of a custom_jvp function:
        # those leaves travel as operands (with no tangent), the rest stay Python values
        static = _TracedLeaves(nd.static)
        fun, rule = self.fun, self.jvp

        def primal(*ops):
            return fun(*nd.merge(ops[:-1], static.rebuild(ops[-1])))

        def jvp(primals, tangents):
            return rule(*static.rebuild(primals[-1]), tuple(primals[:-1]), tuple(tangents[:-1]))
        operands = nd.diff + (static.traced,)
        if _differentiated_here(operands):
            return _bind_jvp_rule_call(fun, jvp, operands)
        return _bind_call(custom_jvp_call_p, "custom_jvp", fun, primal,
                          nd.diff + (static.traced,),
                          lambda i, o: dict(jvp=_flat_jvp(jvp, i, o)))


class _TracedLeaves:
    """The tracer leaves of a pytree of Python values, taken out so they can be operands;
    `rebuild` puts (transformed) values back in their places."""

    def __init__(self, tree):
        self.leaves, self.tree = tree_flatten(tree)
        self.where = [i for i, leaf in enumerate(self.leaves) if isinstance(leaf, Tracer)]
        self.traced = tuple(self.leaves[i] for i in self.where)

    def rebuild(self, values):
        leaves = list(self.leaves)
        for i, v in zip(self.where, values):
            leaves[i] = v
        return tree_unflatten(self.tree, leaves)


def _flat_jvp(jvp, in_tree, out_tree):
    """The rule on flat leaves: (primal leaves, tangent leaves) -> (outputs, tangents)."""
    def run(primals, tangents):
        ps, ts = (tuple(tree_unflatten(in_tree, list(x))) for x in (primals, tangents))
        out, t_out = jvp(ps, ts)
        return tree_flatten(out)[0], tree_flatten(t_out)[0]
    return run


def _custom_jvp_rule(primals, tangents, *, name, jaxpr, jvp, num_consts):
    from .transforms._util import aval_of, instantiate
    args = primals[num_consts:]
    ts = [instantiate(t, aval_of(x)) for t, x in zip(tangents[num_consts:], args)]
    outs, touts = jvp(list(args), ts)
    return list(outs), list(touts)


def _custom_jvp_vjp_rule(cts, primals, outs, *, name, jaxpr, jvp, num_consts):
    """The transpose of the rule: it is linear in the tangents, so its vjp with respect to
    them at any point (zero tangents) maps output cotangents to input cotangents."""
    from .transforms import vjp as vjp_of
    from .transforms._util import aval_of, instantiate, is_float, zeros
    args = list(primals[num_consts:])
    diff = [i for i, x in enumerate(args) if is_float(aval_of(x))]

    def tangent_out(*ts):
        full = [zeros(aval_of(x)) for x in args]
        for i, t in zip(diff, ts):
            full[i] = t
        return jvp(args, full)[1]
    _, pullback = vjp_of(tangent_out, *[zeros(aval_of(args[i])) for i in diff],
                         _tangents_only=True)
    in_cts = pullback([instantiate(c, aval_of(o)) for c, o in zip(cts, outs)])
    result = [None] * len(args)
    for i, c in zip(diff, in_cts):
        result[i] = c
    return [None] * num_consts + result


def _register_custom_jvp_rules():
    from .transforms import register_batch, register_jvp, register_vjp
    register_jvp(custom_jvp_call_p, _custom_jvp_rule)
    register_vjp(custom_jvp_call_p, _custom_jvp_vjp_rule)
    register_batch(custom_jvp_call_p, _batch_rule(custom_jvp_call_p))


_register_custom_jvp_rules()
