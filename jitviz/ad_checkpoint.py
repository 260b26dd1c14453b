"""`jitviz.checkpoint` (also `jitviz.remat`; this module is `jax.ad_checkpoint`), as
`jax.checkpoint`: a function whose intermediate values are not kept for reverse mode but
recomputed when the gradient needs them.

    layer = jitviz.checkpoint(lambda w, x: jnp.tanh(x @ w))
    jitviz.make_jaxpr(jitviz.grad(lambda w, x: layer(w, x).sum()))(w, x)

A call is one `remat2` equation holding the function's jaxpr, printed as JAX 0.10 prints it
(`remat2[differentiated=False jaxpr={...} policy=None prevent_cse=True]`), drawn by the
explorer as a cluster. Everything about that primitive is here: its value is its jaxpr's (the
interpreter evaluates it, both Numba backends inline it as they inline `jit`); forward mode
and batching give another `remat2` call around the transformed jaxpr. In reverse mode (JAX's
own structure) the forward pass is the function's equations, inlined, keeping as residuals
only the values `policy` (one of `jitviz.checkpoint_policies`) lets it save, by default none
but the call's operands; the backward pass is a `remat2[differentiated=True]` call that
recomputes the other intermediates its rules read before running them. `checkpoint_name`
tags values for the name-based policies, and `print_saved_residuals` lists what a function's
forward pass keeps, in JAX's format.

Values never change under any policy. Once compiled, the shared passes see across the inlined
calls: common-subexpression elimination may merge a recomputation with the forward pass's
value (`prevent_cse` is recorded, not enforced), so the saving is visible in the jaxpr, not
promised in the kernels' memory.
"""
from __future__ import annotations

import functools
import inspect

from . import state
from .core.interpreter import eval_jaxpr, inline_jaxpr, results
from .core.ir import ClosedJaxpr, ShapedArray, Var
from .core.registry import lowering_rule, primitive, register_lowering
from .core.source import argument_positions, function_name
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
    return frozenset(argument_positions(fun, static_argnums, static_argnames,
                                        "checkpoint's static_argnames"))


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


def _forward(ins, act_in, *, eqn, jaxpr, policy, **params):
    """The forward pass computes the outputs and the values `policy` lets it save that the
    backward pass reads, inlined (JAX's partial evaluation of `remat2` inlines this known
    part too); everything else the backward pass reads is recomputed there."""
    split = _PolicySplit(jaxpr.jaxpr, act_in, policy)
    outs = _replay(split.known.eqns, dict(zip(_ids(split.known.invars), ins)),
                   split.known.outvars)
    n = len(jaxpr.jaxpr.outvars)
    return outs[:n], (split, outs[n:])


def _backward(res, cts, primals, act_in, *, eqn, jaxpr, differentiated, **params):
    """One `remat2[differentiated=True]` call: from the operands it reads and the saved
    values, the function's intermediates the backward rules need are recomputed, then those
    rules run."""
    from .transforms._util import aval_of, closed, instantiate, strong, trace_avals
    split, saved = res
    cts = [strong(instantiate(c, o.aval)) for c, o in zip(cts, jaxpr.jaxpr.outvars)]
    used = [primals[i] for i in split.used_inputs]
    n_used, n_saved = len(used), len(saved)

    def recompute_then_pull_back(*args):
        return split.pull_back(args[:n_used], args[n_used:n_used + n_saved],
                               args[n_used + n_saved:])
    body = trace_avals(recompute_then_pull_back,
                       [aval_of(x) for x in (*used, *saved, *cts)],
                       name="checkpointed backward")
    return remat_p.bind(*used, *saved, *cts, jaxpr=closed(body), differentiated=True,
                        **params)


def _saveable(policy, eqn) -> bool:
    """JAX's policy protocol: `policy(primitive, *operand avals, **params)`; no policy
    saves nothing."""
    if policy is None:
        return False
    return bool(policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params))


class _PolicySplit:
    """A checkpointed function's reverse-mode split under its policy.

    `vjp_jaxpr` splits the function into a forward jaxpr (outputs, then residuals: every
    forward value a backward rule reads) and a backward jaxpr. A residual whose equation the
    policy calls saveable is *saved* (computed by the inlined forward pass and passed to the
    backward call); any other is *recomputed* in the backward call from the operands and
    saved values, which may make further values (its operands' producers) residuals in turn,
    saved or recomputed by the same rule. Within a nested call (jit, scan, cond, remat2) the
    policy sees the call as one operation: saving it keeps all its residuals, else it is
    recomputed whole."""

    def __init__(self, inner, act_in, policy):
        from .passes.dce import dce_jaxpr
        from .transforms.vjp import vjp_jaxpr
        self.vjp = v = vjp_jaxpr(inner, act_in, "checkpoint")
        forward, n_out = v.forward, len(inner.outvars)
        self.residual_atoms = [forward.outvars[n_out + k] if kind == "out"
                               else forward.invars[k] for kind, k in v.res_spec]
        self.saved, self.recomputed = _choose(forward, self.residual_atoms, policy)
        read = {a.id for e in self.recomputed for a in e.invars if isinstance(a, Var)}
        read |= {a.id for a in self.residual_atoms if isinstance(a, Var)}
        self.used_inputs = [i for i, var in enumerate(forward.invars) if var.id in read]
        self.known = dce_jaxpr(forward.replace(outvars=forward.outvars[:n_out] +
                                               tuple(self.saved)))

    def pull_back(self, used_ins, saved, out_cts):
        """The input cotangents, traced in the backward pass: the recomputation, then the
        function's backward jaxpr."""
        forward = self.vjp.forward
        env = dict(zip(_ids([forward.invars[i] for i in self.used_inputs]), used_ins))
        env.update(zip(_ids(self.saved), saved))
        residuals = _replay(self.recomputed, env, self.residual_atoms)
        return inline_jaxpr(self.vjp.backward, (), *residuals, *out_cts)


def _choose(forward, residual_atoms, policy):
    """(the saved variables, the equations to recompute), each in `forward`'s order: walk
    back from the residuals, saving what the policy allows and recomputing the rest from
    its operands."""
    producer = {var.id: (i, e) for i, e in enumerate(forward.eqns) for var in e.outvars}
    saved, recomputed = {}, {}
    pending = [a for a in residual_atoms if isinstance(a, Var)]
    while pending:
        var = pending.pop()
        if var.id not in producer or var.id in saved:
            continue  # an operand of the call, or already decided
        i, e = producer[var.id]
        if i in recomputed:
            continue
        if _saveable(policy, e):
            saved[var.id] = (i, e.outvars.index(var), var)
        else:
            recomputed[i] = e
            pending += [a for a in e.invars if isinstance(a, Var)]
    return ([var for *_, var in sorted(saved.values(), key=lambda t: t[:2])],
            [recomputed[i] for i in sorted(recomputed)])


def _ids(variables):
    return [v.id for v in variables]


def _replay(eqns, env, outvars):
    """Bind `eqns` on the values in `env` (var id -> value), each keeping its user line;
    returns the values of `outvars`."""
    from .transforms._util import keep_source, read_literal

    def read(atom):
        return env[atom.id] if isinstance(atom, Var) else read_literal(atom)
    for e in eqns:
        with keep_source(e):
            outs = results(e, e.primitive.bind(*[read(a) for a in e.invars], **e.params))
        env.update(zip(_ids(e.outvars), outs))
    return [read(a) for a in outvars]


def _register_transformation_rules():
    from .transforms import register_batch, register_jvp
    from .transforms.vjp import VJP_CALL_RULES
    register_jvp(remat_p, _jvp_rule)
    register_batch(remat_p, _batch_rule)
    # a call primitive's reverse mode is a forward / backward pair (cond's, scan's, jit's)
    VJP_CALL_RULES[remat_p] = (_forward, _backward)


_register_transformation_rules()


# --- jax.checkpoint_policies ------------------------------------------------------------------

def _is_dot(prim):
    from .lax.contractions import dot_general_p
    return prim is dot_general_p


def _has_no_batch_dims(params):
    (_, (lhs_batch, _)) = params["dimension_numbers"]
    return not lhs_batch


class checkpoint_policies:
    """`jax.checkpoint_policies`: predicates `policy(prim, *avals, **params) -> bool` saying
    whether a checkpointed function's forward pass may save an equation's outputs for the
    backward pass (a value is saved only if the backward pass reads it; everything else it
    reads is recomputed). jitviz runs on one device: the offloading policies save the
    values they would offload to host memory."""

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
        return _is_dot(prim) and _has_no_batch_dims(params)

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names_which_can_be_saved):
        """The values tagged by `checkpoint_name` with one of these names."""
        names = _name_set("save_only_these_names", names_which_can_be_saved)

        def policy(prim, *_, **params):
            return prim is name_p and params["name"] in names
        return policy

    @staticmethod
    def save_any_names_but_these(*names_not_to_save):
        """Every value tagged by `checkpoint_name`, but those with these names."""
        names = _name_set("save_any_names_but_these", names_not_to_save)

        def policy(prim, *_, **params):
            return prim is name_p and params["name"] not in names
        return policy

    save_anything_except_these_names = save_any_names_but_these

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        def policy(prim, *args, **params):
            return policy_1(prim, *args, **params) or policy_2(prim, *args, **params)
        return policy

    @staticmethod
    def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                          names_which_can_be_offloaded, offload_src,
                                          offload_dst):
        """Saves the named values of both lists: jitviz has one memory space, so the
        offloaded ones are saved where they are (JAX moves them from `offload_src` to
        `offload_dst`, e.g. 'device' to 'pinned_host')."""
        names = _name_set("save_and_offload_only_these_names",
                          [*names_which_can_be_saved, *names_which_can_be_offloaded])

        def policy(prim, *_, **params):
            return prim is name_p and params["name"] in names
        return policy

    @staticmethod
    def offload_dot_with_no_batch_dims(offload_src, offload_dst):
        """Saves the dots with no batch dimensions (JAX offloads them from `offload_src` to
        `offload_dst`; jitviz has one memory space)."""
        return checkpoint_policies.dots_with_no_batch_dims_saveable


def _name_set(policy, names):
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"checkpoint_policies.{policy}: names are strings (as given to "
                        f"checkpoint_name), got {bad[0]!r}")
    return frozenset(names)


# --- checkpoint_name --------------------------------------------------------------------------

def _name_rule(x, *, name):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


# JAX's `name` primitive: the identity, whose equation carries the name a policy selects by
name_p = primitive("name", kind="elementwise", abstract_eval=_name_rule,
                   impl=lambda x, *, name: x)


def _identity(args, in_dtypes, out_dtype, params):
    return args[0]


register_lowering(name_p, "cpu.expr", _identity)
register_lowering(name_p, "cuda.expr", _identity)


def _register_name_rules():
    from .transforms import register_batch, register_jvp, register_vjp
    from .transforms.batching import elementwise_rule
    # the primal keeps its name; the tangent / cotangent passes through unnamed (JAX's rules)
    register_jvp(name_p, lambda primals, tangents, *, name: (
        name_p.bind(primals[0], name=name), tangents[0]))
    register_vjp(name_p, lambda ct, primals, out, *, name: [ct])
    register_batch(name_p, elementwise_rule(name_p))


_register_name_rules()


def checkpoint_name(x, name):
    """`jax.ad_checkpoint.checkpoint_name`: `x` (a pytree) unchanged, each leaf passed
    through a `name[name=...]` equation that the name-based policies
    (`save_only_these_names`, ...) select intermediates by."""
    from .lax import aval_of
    from .tree import tree_map
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")

    def tag(leaf):
        aval_of(leaf)  # a clear error for a leaf that is not an array
        return name_p.bind(leaf, name=name)
    return tree_map(tag, x)


# --- print_saved_residuals ----------------------------------------------------------------------

def saved_residuals(f, *args, **kwargs) -> list:
    """`jax.ad_checkpoint.saved_residuals`: `(aval, description)` for each value the forward
    pass of `vjp(f, *args, **kwargs)` keeps for the backward pass, in JAX's order: literals,
    constants, the arguments, then the intermediates in the order the forward pass computes
    them. Checkpointed calls and their policies decide which intermediates these are."""
    from .transforms._util import trace_flat
    from .transforms.vjp import vjp_jaxpr
    named, in_tree = _named_leaves(f, args, kwargs)
    leaves = [leaf for _, leaf in named]

    def flat_fun(*xs):
        a, k = tree_unflatten(in_tree, list(xs))
        return tree_flatten(f(*a, **k))[0]
    jaxpr, hoisted = trace_flat(flat_fun, leaves, name=function_name(f), known=False)
    inner = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    v = vjp_jaxpr(inner, [False] * len(hoisted) + [True] * len(leaves), function_name(f))
    forward, n_out = v.forward, len(inner.outvars)
    atoms = [forward.outvars[n_out + k] if kind == "out" else forward.invars[k]
             for kind, k in v.res_spec]
    return _describe(forward, atoms, len(hoisted), [name for name, _ in named])


def print_saved_residuals(f, *args, **kwargs) -> None:
    """`jax.ad_checkpoint.print_saved_residuals`: one line per saved residual, as JAX prints
    them (`f32[5,4] from the argument W1`, `f32[5] output of sin from file:line:column (g)`,
    `f32[5] named 'a' from ...`)."""
    for aval, description in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {description}")


def _named_leaves(f, args, kwargs):
    """[(JAX's name for the argument leaf: `W1`, `params[0]`, `args[1]['w']`, or "" where
    `f` has no signature), leaf] and the tree of (args, kwargs)."""
    from .tree import keystr, tree_flatten_with_path
    pairs, in_tree = tree_flatten_with_path((tuple(args), dict(kwargs)))
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = None
    named = []
    for path, leaf in pairs:
        top = _argument_name(params, path[0].idx == 0, path[1])
        named.append((top and top + keystr(path[2:]), leaf))
    return named, in_tree


def _argument_name(params, positional, key):
    """The name of one top-level argument: its parameter's, or the `*args` / `**kwargs`
    parameter's with the index / key (`args[2]`, `kwargs['lr']`)."""
    if params is None:
        return ""
    kinds = inspect.Parameter
    if positional:
        named = [p.name for p in params
                 if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
        if key.idx < len(named):
            return named[key.idx]
        rest = [p.name for p in params if p.kind is kinds.VAR_POSITIONAL]
        return f"{rest[0]}[{key.idx - len(named)}]" if rest else ""
    if any(p.name == key.key and p.kind is not kinds.VAR_KEYWORD for p in params):
        return key.key
    rest = [p.name for p in params if p.kind is kinds.VAR_KEYWORD]
    return f"{rest[0]}[{key.key!r}]" if rest else ""


def _describe(forward, atoms, n_consts, arg_names):
    """(aval, JAX's description) per distinct residual of `forward`, in JAX's order."""
    from .core.ir import Literal
    seen, found = set(), []
    for a in atoms:
        if isinstance(a, Var) and a.id in seen:
            continue
        seen.add(getattr(a, "id", id(a)))
        found.append(a)
    invar_pos = {v.id: i for i, v in enumerate(forward.invars)}
    lines = [(a.aval, "from a literal") for a in found if isinstance(a, Literal)]
    chosen = {a.id for a in found if isinstance(a, Var)}
    for i, v in enumerate(forward.invars):
        if v.id not in chosen:
            continue
        if i < n_consts:
            lines.append((v.aval, "from a constant"))
        else:
            name = arg_names[i - n_consts]
            lines.append((v.aval, f"from the argument {name}" if name else
                          f"from the argument at flattened index {i - n_consts}"))
    for e in forward.eqns:
        for v in e.outvars:
            if v.id in chosen and v.id not in invar_pos:
                lines.append((v.aval, f"{_made_by(e)} from {_summary(e.source)}"))
    return lines


def _made_by(eqn) -> str:
    if eqn.primitive is name_p:
        return f"named {eqn.params['name']!r}"
    from .lax.control_flow import jit_p
    if eqn.primitive is jit_p:  # reverse mode names a jitted f's forward `forward(f)`
        name = eqn.params["name"]
        name = name[len("forward("):-1] if name.startswith("forward(") else name
        return f"output of jitted function {name!r}"
    return f"output of {eqn.primitive.name}"


def _summary(source) -> str:
    """JAX's `file:line:column (function)` for the user's line that made an equation."""
    if source is None:
        return ""
    column = "" if source.column is None else f":{source.column}"
    return f"{source.file}:{source.line}{column} ({source.qualname or source.function})"
