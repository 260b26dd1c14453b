"""Structured control flow: each body is traced once into a sub-jaxpr (never unrolled).

Values a body closes over (tracers of the enclosing trace, NumPy arrays) are hoisted into
explicit leading operands of the equation, so every sub-jaxpr is closed, as in JAX.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import dtypes, state
from ..core.interpreter import eval_jaxpr
from ..core.ir import ClosedJaxpr, Jaxpr, ShapedArray, Var
from ..core.registry import primitive
from ..core.source import function_location
from ..core.trace import Tracer, concrete_aval, trace_body
from ..tree import LEAF as LEAF_TREE, tree_flatten, tree_unflatten


def _aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    return concrete_aval(x, "a control-flow operand")[1]


def trace_subfun(fun, in_tree, in_avals, *, purpose, user_fun=None, arg_names=None):
    """Trace `fun(*in_tree.unflatten(args))`; returns (jaxpr, hoisted, out_tree).

    `user_fun` is the function the user wrote (when `fun` wraps it): errors name it, its
    location, and its parameters with pytree paths (`c`, `c[1]`), as JAX does.
    """
    user_fun = user_fun or fun
    if arg_names is None:
        arg_names = leaf_names(user_fun, in_tree.children)

    def flat(*leaves):
        return fun(*tree_unflatten(in_tree, leaves))
    trace, out = trace_body(flat, in_avals, name=_name(user_fun), purpose=purpose,
                            arg_names=arg_names, location=function_location(user_fun))
    out_leaves, out_tree = tree_flatten(out)
    jaxpr, hoisted = trace.finish_hoisted(out_leaves)
    return jaxpr, hoisted, out_tree


def leaf_names(fun, arg_trees):
    """Readable names of the leaves a function receives: its parameter names with pytree
    paths (`c`, `c[0]`, `xs['a']`), one per leaf."""
    params = _param_names(fun, len(arg_trees))
    return [p for name, t in zip(params, arg_trees) for p in t.leaf_paths(name)]


def _param_names(fun, n):
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return [f"args[{i}]" for i in range(n)]
    names = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += [f"{p.name}[{i}]" for i in range(n - len(names))]
            break
    return (names + [f"args[{i}]" for i in range(len(names), n)])[:n]


def _scalar(value, dtype, weak=False):
    from ..array import as_array
    return as_array(np.asarray(value, dtype), weak)


def _name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _with_common_hoisted(traced):
    """Give every body the same leading hoisted invars (the union of what they capture)."""
    order, seen = [], {}
    for _, hoisted, _ in traced:
        for h in hoisted:
            if id(h) not in seen:
                seen[id(h)] = len(order)
                order.append(h)
    out = []
    for jaxpr, hoisted, out_tree in traced:
        mine = {id(h): v for h, v in zip(hoisted, jaxpr.invars[:len(hoisted)])}
        lead = [mine.get(id(h)) or Var(_aval(h)) for h in order]
        out.append((jaxpr.replace(invars=lead + list(jaxpr.invars[len(hoisted):])), out_tree))
    return out, order


def _long(aval):
    """`float32[3]`: the long form JAX's messages use."""
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


def _types_text(avals):
    return ", ".join(a.str_short() for a in avals)


def _check_same_outputs(trees, jaxprs, funs, labels):
    """Every branch returns the same structure and types (weakness aside), or a TypeError
    in JAX's words naming the branches and the first differing output."""
    first_tree, first = trees[0], jaxprs[0].out_avals
    for tree, j, fun, label in zip(trees[1:], jaxprs[1:], funs[1:], labels[1:]):
        where = (f"{labels[0]} is {_name(funs[0])} at {function_location(funs[0])}\n"
                 f"{label} is {_name(fun)} at {function_location(fun)}")
        if tree != first_tree:
            raise TypeError(f"{labels[0]} and {label} must have the same pytree structure, "
                            f"but they differ: {first_tree.describe_difference(tree)} (output "
                            f"of {labels[0]}: {first_tree}, output of {label}: {tree}).\n\n"
                            f"{where}")
        for path, a, b in zip(first_tree.leaf_paths("output"), first, j.out_avals):
            if not a.same_type(b):
                why = "dtypes" if a.dtype != b.dtype else "shapes"
                raise TypeError(
                    f"{_branches_word(labels)} must have equal output types but they differ."
                    f"\n\n{where}\n\nThe {path} of {labels[0]} has type {_long(a)} "
                    f"but the corresponding {path} of {label} has type {_long(b)}, so "
                    f"the {why} do not match.\n\nRevise {labels[0]} and/or {label} so that "
                    "all output types match.")


def _branches_word(labels):
    return "cond branches" if labels[0] == "true_fun" else "switch branches"


# --- cond / switch -------------------------------------------------------------------------

def _cond_rule(index, *operands, branches):
    if index.dtype != np.int32 or index.shape != ():
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for br in branches:
        ins = br.jaxpr.in_avals
        if len(ins) != len(operands) or not all(a.same_type(b) for a, b in zip(ins, operands)):
            raise TypeError("cond branch inputs do not match its operands: "
                            f"({_types_text(ins)}) vs ({_types_text(operands)})")
    # JAX's cond_p types its results as branch 0 does (the false branch of lax.cond, the
    # first of lax.switch): the other branches may differ in weak typing only
    return list(branches[0].jaxpr.out_avals)


def _cond_impl(index, *operands, branches):
    br = branches[int(np.clip(index, 0, len(branches) - 1))]
    return eval_jaxpr(br.jaxpr, br.consts, *operands)


def _cond_io(params, invars, outvars, key):
    return list(invars[1:]), list(outvars)  # the branch index feeds no branch


cond_p = primitive("cond", abstract_eval=_cond_rule, impl=_cond_impl, multiple_results=True,
                   kind="control", sub_io=_cond_io)


def _to_index(pred, what):
    a = _aval(pred)
    if a.shape != ():
        raise TypeError(f"{what} must be a scalar, got {a.str_short()}")
    from . import convert_element_type
    return convert_element_type(pred, np.int32)


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`; both are traced."""
    a = _aval(pred)
    if a.shape != () or a.dtype.kind not in "biuf":
        raise TypeError(f"Pred type must be a boolean or number scalar, got {a.str_short()}")
    if a.dtype != np.bool_:
        from . import ne
        pred = ne(pred, _scalar(0, a.dtype, a.weak_type))
    index = _to_index(pred, "cond pred")
    return _bind_cond(index, [false_fun, true_fun], operands, ["false_fun", "true_fun"], "cond")


def switch(index, branches, *operands):
    """`branches[index](*operands)`, with `index` clamped to the valid range."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch needs at least one branch")
    if len(branches) == 1:
        return branches[0](*operands)  # nothing to choose: JAX calls it directly
    from . import clamp
    idx = _to_index(index, "switch index")
    if len(branches) > 1 and isinstance(idx, Tracer):
        idx = clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    elif not isinstance(idx, Tracer):
        idx = np.int32(np.clip(int(idx), 0, len(branches) - 1))
    labels = [f"branches[{i}]" for i in range(len(branches))]
    return _bind_cond(idx, branches, operands, labels, "switch")


def _bind_cond(index, funs, operands, labels, purpose):
    def threaded(refs):  # branches write Refs of an enclosing trace: extra operands/results
        def with_refs(f):
            @functools.wraps(f)
            def branch(*ops):
                return state.redirected(refs, ops[-1], f, *ops[:-1])
            return branch
        out, finals = _bind_cond_traced(index, [with_refs(f) for f in funs],
                                        (*operands, state.read_refs(refs)), labels, purpose)
        state.write_refs(refs, finals)
        return out
    return state.thread_ref_writes(
        lambda: _bind_cond_traced(index, funs, operands, labels, purpose), threaded)


def _bind_cond_traced(index, funs, operands, labels, purpose):
    leaves, in_tree = tree_flatten(operands)
    in_avals = [_aval(x) for x in leaves]
    traced = [trace_subfun(f, in_tree, in_avals, purpose=purpose) for f in funs]
    common, hoisted = _with_common_hoisted(traced)
    jaxprs = [j for j, _ in common]
    # report in the user's order (true_fun first for cond)
    order = list(reversed(range(len(funs)))) if purpose == "cond" else list(range(len(funs)))
    _check_same_outputs([common[i][1] for i in order], [jaxprs[i] for i in order],
                        [funs[i] for i in order], [labels[i] for i in order])
    # branches may differ in weak typing (JAX allows it): the result is typed as branch 0's
    outs = cond_p.bind(index, *hoisted, *leaves,
                       branches=tuple(ClosedJaxpr(j, ()) for j in jaxprs))
    return tree_unflatten(common[0][1], outs)


# --- while ---------------------------------------------------------------------------------

def _while_rule(*args, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    outs = body_jaxpr.jaxpr.out_avals
    if len(outs) != len(carry) or not all(a.same_type(b) for a, b in zip(outs, carry)):
        raise TypeError(f"while body output ({_types_text(outs)}) does not match its carry "
                        f"({_types_text(carry)})")
    c_out = cond_jaxpr.jaxpr.out_avals
    if len(c_out) != 1 or c_out[0].shape != () or c_out[0].dtype != np.bool_:
        raise TypeError(f"while cond must return a bool scalar, got ({_types_text(c_out)})")
    return list(outs)  # the body's types: a weak initial carry may come out strong


def _while_impl(*args, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while eval_jaxpr(cond_jaxpr.jaxpr, (), *cconsts, *carry)[0]:
        carry = eval_jaxpr(body_jaxpr.jaxpr, (), *bconsts, *carry)
    return carry


def _while_io(params, invars, outvars, key):
    n_cond, n_body = params["cond_nconsts"], params["body_nconsts"]
    carry = list(invars[n_cond + n_body:])
    if key == "cond_jaxpr":  # cond consts + carry in, a predicate out (no outer result)
        return list(invars[:n_cond]) + carry, [None]
    return list(invars[n_cond:n_cond + n_body]) + carry, list(outvars)


while_p = primitive("while", abstract_eval=_while_rule, impl=_while_impl,
                    multiple_results=True, kind="control", sub_io=_while_io)


def _carry_mismatch(what, in_tree, in_avals, out_tree, out_avals, names):
    """None, or JAX's message for a body whose output carry differs from its input carry;
    `names` name the carry leaves as the user's body sees them (`c[1]`, `acc['m']`)."""
    if out_tree != in_tree:
        return (f"{what} function carry input and carry output must have the same pytree "
                f"structure, but they differ: {in_tree.describe_difference(out_tree)} "
                f"(input {in_tree}, output {out_tree})")
    bad = []
    for name, a, b in zip(names, in_avals, out_avals):
        if not a.same_type(b):
            why = "dtypes" if a.dtype != b.dtype else "shapes"
            bad.append(f"the input carry component {name} has type {_long(a)} but the "
                       f"corresponding output carry component has type {_long(b)}, so "
                       f"the {why} do not match")
    if not bad:
        return None
    listed = (bad[0][0].upper() + bad[0][1:] + ".") if len(bad) == 1 else \
        "\n".join(f"  * {b};" for b in bad)
    return (f"{what} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{listed}\n\nRevise the function so that all output types match "
            "the corresponding input types. (For a Python number as the initial carry, give "
            "it the body's type, e.g. jnp.float32(0) instead of 0.)")


def _weak_mismatch(in_avals, out_avals):
    """Carries JAX promotes before tracing again: weakly typed initial values (Python
    scalars) whose type differs from what the body returns. A weak carry that only becomes
    strong keeps its type (JAX compares types ignoring weakness): the body converts it."""
    return [i for i, (a, b) in enumerate(zip(in_avals, out_avals))
            if a.weak_type and not a.same_type(b)]


def _strengthen(leaves, idxs, out_avals):
    """Convert those weak initial values to the promoted dtype, strongly typed (as JAX)."""
    from . import convert_element_type
    leaves = list(leaves)
    for i in idxs:
        a, b = _aval(leaves[i]), out_avals[i]
        dt, _ = dtypes.result_type((a.dtype, True), (b.dtype, b.weak_type))
        leaves[i] = convert_element_type(leaves[i], dt, False)
    return leaves


def while_loop(cond_fun, body_fun, init_val, *, _user_funs=None, _arg_names=None):
    """`while cond_fun(val): val = body_fun(val)`; both functions are traced once.
    (`_user_funs`/`_arg_names`: what errors name when fori_loop wraps the user's body.)"""
    user_funs = _user_funs or (cond_fun, body_fun)

    def threaded(refs):  # the body writes Refs of an enclosing trace: they join the carry
        out, finals = _while_loop(
            lambda c: state.redirected_reading(refs, c[1], cond_fun, c[0]),
            lambda c: state.redirected(refs, c[1], body_fun, c[0]),
            (init_val, state.read_refs(refs)), _user_funs=user_funs, _arg_names=None)
        state.write_refs(refs, finals)
        return out
    return state.thread_ref_writes(
        lambda: _while_loop(cond_fun, body_fun, init_val, _user_funs=user_funs,
                            _arg_names=_arg_names), threaded)


def _while_loop(cond_fun, body_fun, init_val, *, _user_funs, _arg_names):
    user_funs = _user_funs or (cond_fun, body_fun)
    arg_names = _arg_names
    leaves, tree = tree_flatten(init_val)
    args_tree = tree_flatten((init_val,))[1]  # both functions take the carry as one argument
    for _ in range(2):  # a second pass when the body strengthens weakly typed carries
        avals = [_aval(x) for x in leaves]
        cj, ch, ctree = trace_subfun(cond_fun, args_tree, avals, purpose="while_cond",
                                     user_fun=user_funs[0], arg_names=arg_names)
        bj, bh, btree = trace_subfun(body_fun, args_tree, avals, purpose="while_body",
                                     user_fun=user_funs[1], arg_names=arg_names)
        weak = _weak_mismatch(avals, bj.out_avals) if btree == tree else []
        if not weak:
            break
        leaves = _strengthen(leaves, weak, bj.out_avals)
    names = arg_names or leaf_names(user_funs[1], [tree])
    err = _carry_mismatch("while_loop body", tree, avals, btree, bj.out_avals, names)
    if err:
        raise TypeError(err)
    c_out = cj.out_avals
    if len(c_out) != 1 or c_out[0].shape != () or c_out[0].dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{_types_text(c_out)}]")
    cj, bj, move = _move_forwarded_carries(cj, len(ch), bj, len(bh))
    moved = [x for x, m in zip(leaves, move) if m]
    outs = iter(while_p.bind(*ch, *moved, *bh, *[x for x, m in zip(leaves, move) if not m],
                             cond_jaxpr=ClosedJaxpr(cj, ()), cond_nconsts=len(ch),
                             body_jaxpr=ClosedJaxpr(bj, ()), body_nconsts=len(moved) + len(bh)))
    return tree_unflatten(tree, [x if m else next(outs) for x, m in zip(leaves, move)])


def _forwarding(jaxpr):
    """For each output, the index of the input it returns unchanged (None if computed)."""
    pos = {v.id: i for i, v in enumerate(jaxpr.invars)}
    return [pos.get(v.id) if isinstance(v, Var) else None for v in jaxpr.outvars]


def _used_ids(jaxpr):
    return {a.id for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)} | \
        {v.id for v in jaxpr.outvars if isinstance(v, Var)}


def _move_forwarded_carries(cj, nc, bj, nb):
    """JAX's while_loop optimization: a carry the body returns unchanged and the cond never
    reads is a loop constant, so it moves to the front of the body's consts (and out of the
    carry). Returns the new jaxprs and, per carry, whether it moved."""
    fwd, used = _forwarding(bj), _used_ids(cj)
    carry_in = bj.invars[nb:]
    move = [fwd[i] == nb + i and cj.invars[nc + i].id not in used
            for i in range(len(carry_in))]
    if not any(move):
        return cj, bj, move
    pick = lambda xs, want: [x for x, m in zip(xs, move) if m == want]  # noqa: E731
    cj = cj.replace(invars=list(cj.invars[:nc]) + pick(cj.invars[nc:], False))
    bj = bj.replace(invars=pick(carry_in, True) + list(bj.invars[:nb]) + pick(carry_in, False),
                    outvars=pick(bj.outvars, False))
    return cj, bj, move


# --- scan ----------------------------------------------------------------------------------

def _scan_rule(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    carry = args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    ins = jaxpr.jaxpr.in_avals
    x_avals = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan xs leading dimension must be {length}, got {x.str_short()}")
    expect = list(args[:num_consts]) + list(carry) + x_avals
    if len(ins) != len(expect) or not all(a.same_type(b) for a, b in zip(ins, expect)):
        raise TypeError(f"scan body inputs ({_types_text(ins)}) do not match operands "
                        f"({_types_text(expect)})")
    outs = jaxpr.jaxpr.out_avals
    ys = [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in outs[num_carry:]]
    return list(outs[:num_carry]) + ys


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    for step in range(length):
        i = length - 1 - step if reverse else step
        out = eval_jaxpr(jaxpr.jaxpr, (), *consts, *carry, *[x[i] for x in xs])
        carry = out[:num_carry]
        for y, v in zip(ys, out[num_carry:]):
            y[i] = v
    return carry + ys


scan_p = primitive("scan", abstract_eval=_scan_rule, impl=_scan_impl, multiple_results=True,
                   kind="control")


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, *, _user_fun=None,
         _arg_names=None, _purpose="scan"):
    """`carry, y = f(carry, x)` over the leading axis of `xs`; returns (carry, stacked ys).
    (`_user_fun`/`_arg_names`/`_purpose`: what errors name when fori_loop or map wrap it.)"""
    def threaded(refs):  # the body writes Refs of an enclosing trace: they join the carry
        def body(carry, x):
            out, finals = state.redirected(refs, carry[1], f, carry[0], x)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"scan body must return a pair (carry, y), got {out!r}")
            return (out[0], finals), out[1]
        (carry, finals), ys = _scan(body, (init, state.read_refs(refs)), xs, length, reverse,
                                    unroll, _user_fun=_user_fun or f, _purpose=_purpose)
        state.write_refs(refs, finals)
        return carry, ys
    return state.thread_ref_writes(
        lambda: _scan(f, init, xs, length, reverse, unroll, _user_fun=_user_fun,
                      _arg_names=_arg_names, _purpose=_purpose), threaded)


def _scan(f, init, xs, length, reverse, unroll, *, _user_fun=None, _arg_names=None,
          _purpose="scan"):
    c_leaves, c_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {int(_aval(x).shape[0]) for x in x_leaves if _aval(x).shape}
    if any(_aval(x).shape == () for x in x_leaves):
        raise ValueError("scan got a scalar in xs: every leaf of xs needs a leading axis")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError("scan got inconsistent lengths: " + (
            ", ".join(str(n) for n in sorted(lengths)) if lengths else
            "no xs and no length; pass length=N"))
    n = lengths.pop()
    x_avals = [ShapedArray(_aval(x).shape[1:], _aval(x).dtype, _aval(x).weak_type)
               for x in x_leaves]
    pair_tree = tree_flatten((init, xs))[1]

    def body(carry, x):
        return f(carry, x)

    for _ in range(2):
        c_avals = [_aval(c) for c in c_leaves]
        jaxpr, hoisted, out_tree = trace_subfun(body, pair_tree, c_avals + x_avals,
                                                purpose=_purpose, user_fun=_user_fun or f,
                                                arg_names=_arg_names)
        if out_tree.kind is None or len(out_tree.children) != 2 or \
                getattr(out_tree.kind, "name", "") not in ("tuple", "list"):
            raise TypeError(f"scan body must return a pair (carry, y), got {out_tree}")
        carry_tree, y_tree = out_tree.children
        out_avals = jaxpr.out_avals
        weak = _weak_mismatch(c_avals, out_avals[:len(c_avals)]) if carry_tree == c_tree else []
        if not weak:
            break
        c_leaves = _strengthen(c_leaves, weak, out_avals)
    names = (_arg_names or leaf_names(_user_fun or f, [c_tree, x_tree]))[:len(c_leaves)]
    err = _carry_mismatch("scan body", c_tree, c_avals, carry_tree,
                          out_avals[:carry_tree.num_leaves], names)
    if err:
        raise TypeError(err)
    jaxpr, move, y_src = _scan_forwarding(jaxpr, len(hoisted), len(c_leaves))
    consts = [c for c, m in zip(c_leaves, move) if m] + list(hoisted)
    carry = [c for c, m in zip(c_leaves, move) if not m]
    outs = scan_p.bind(*consts, *carry, *x_leaves, jaxpr=ClosedJaxpr(jaxpr, ()), length=n,
                       reverse=bool(reverse), num_consts=len(consts), num_carry=len(carry),
                       unroll=(n if unroll is True else 1) if isinstance(unroll, bool)
                       else int(unroll))
    carry_out, ys_out = iter(outs[:len(carry)]), iter(outs[len(carry):])
    carry = [c if m else next(carry_out) for c, m in zip(c_leaves, move)]
    ys = [x_leaves[s] if s is not None else next(ys_out) for s in y_src]
    return tree_unflatten(c_tree, carry), tree_unflatten(y_tree, ys)


def _scan_forwarding(jaxpr, nconst, ncarry):
    """JAX's scan optimizations: a carry the body returns unchanged becomes a const (moved to
    the front), and a y that is just the current x is not stacked again (the caller reuses
    the xs operand). Returns (jaxpr, moved per carry, per y the xs index it forwards)."""
    fwd = _forwarding(jaxpr)
    move = [fwd[i] == nconst + i for i in range(ncarry)]
    first_x = nconst + ncarry
    y_src = [f - first_x if f is not None and f >= first_x else None for f in fwd[ncarry:]]
    pick = lambda xs, want: [x for x, m in zip(xs, move) if m == want]  # noqa: E731
    ins, outs = list(jaxpr.invars), list(jaxpr.outvars)
    carry_in = ins[nconst:first_x]
    ins = pick(carry_in, True) + ins[:nconst] + pick(carry_in, False) + ins[first_x:]
    outs = pick(outs[:ncarry], False) + [v for v, s in zip(outs[ncarry:], y_src) if s is None]
    return jaxpr.replace(invars=ins, outvars=outs), move, y_src


def map(f, xs):
    """`[f(x) for x in xs]` over the leading axis, as one traced body (`lax.map`)."""
    names = leaf_names(f, [tree_flatten(xs)[1]])
    _, ys = scan(lambda c, x: (c, f(x)), (), xs, _user_fun=f, _arg_names=names,
                 _purpose="map")
    return ys


def _fori_index_dtype(lo_a, hi_a):
    """The loop's integer dtype, by JAX's rule: the bounds' common dtype; of a weakly typed
    (Python int) and a strongly typed signed bound, the strong one's; else a TypeError."""
    if lo_a.dtype == hi_a.dtype:
        return lo_a.dtype
    signed = lo_a.dtype.kind == hi_a.dtype.kind == "i"
    if signed and lo_a.weak_type != hi_a.weak_type:
        return hi_a.dtype if lo_a.weak_type else lo_a.dtype
    raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got "
                    f"{lo_a.dtype.name} and {hi_a.dtype.name}")


def fori_loop(lower, upper, body_fun, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`.

    With concrete bounds this is a `scan` of known length; with a traced bound, a `while`.
    """
    from . import add, convert_element_type, lt
    lo_a, hi_a = _aval(lower), _aval(upper)
    if lo_a.dtype.kind not in "iu" or hi_a.dtype.kind not in "iu":
        raise TypeError(f"fori_loop bounds must be integers, got {lo_a.str_short()} and "
                        f"{hi_a.str_short()}")
    dt = _fori_index_dtype(lo_a, hi_a)
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        # as JAX: a loop of known length is a scan whose index starts as the Python int
        # `int(lower)`, so the body sees a weakly typed default int, whatever the bounds' dtype
        n = max(int(upper) - int(lower), 0)
        idt = dtypes.default_int()

        def step(carry, _):
            i, val = carry
            return (add(i, _scalar(1, idt, True)), body_fun(i, val)), None
        names = leaf_names(body_fun, [LEAF_TREE, tree_flatten(init_val)[1]])
        (_, val), _ = scan(step, (_scalar(int(lower), idt, True), init_val), None, length=n,
                           _user_fun=body_fun, _arg_names=names, _purpose="fori_loop")
        return val
    # a traced bound: a while loop whose index is `lower`, converted only if its dtype is not
    # the loop's (so a Python int lower bound gives a weakly typed index, as in JAX)
    if lo_a.dtype != dt:
        lower = convert_element_type(lower, dt)
    if hi_a.dtype != dt:
        upper = convert_element_type(upper, dt)
    weak = _aval(lower).weak_type

    def cond_fun(carry):
        return lt(carry[0], carry[1])

    def body(carry):
        i, hi, val = carry
        return add(i, _scalar(1, dt, weak)), hi, body_fun(i, val)
    i_name, *val_names = leaf_names(body_fun, [LEAF_TREE, tree_flatten(init_val)[1]])
    return while_loop(cond_fun, body, (lower, upper, init_val), _user_funs=(body_fun, body_fun),
                      _arg_names=[i_name, "upper"] + val_names)[2]


# --- jit as a call primitive ---------------------------------------------------------------

def _jit_rule(*args, name, jaxpr):
    ins = jaxpr.jaxpr.in_avals
    if len(ins) != len(args) or not all(a.same_type(b) for a, b in zip(ins, args)):
        raise TypeError(f"jit call of {name}: operands ({_types_text(args)}) do not match "
                        f"({_types_text(ins)})")
    return jaxpr.jaxpr.out_avals


def _jit_impl(*args, name, jaxpr):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _jit_pp(params):
    return [("name", params["name"]), ("jaxpr", params["jaxpr"])]


jit_p = primitive("jit", abstract_eval=_jit_rule, impl=_jit_impl, multiple_results=True,
                  pp_params=_jit_pp, kind="control", call_param="jaxpr")


def bind_jit_call(name, jaxpr: Jaxpr, hoisted, leaves):
    """Record a call of a jitted function inside a trace (`jit[name=f jaxpr={...}]`)."""
    return jit_p.bind(*hoisted, *leaves, name=name, jaxpr=ClosedJaxpr(jaxpr, ()))
