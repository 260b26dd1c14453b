"""`jitviz.linear_transpose`, as `jax.linear_transpose`: the transpose of a linear function.

    f_t = jitviz.linear_transpose(lambda x: 2 * x + x.sum(), jnp.ones(3))
    (x_ct,) = f_t(jnp.ones(3))          # f's transpose applied to a cotangent

`primals` (arrays or `ShapeDtypeStruct`s) give only the types. The function is traced once
and checked to be linear in its inputs: every equation on a path from an input must be one
that is linear in the operands the path reaches (`add`, `reshape`, `mul` by a value not
computed from the inputs, ...); a nonlinear one is JAX's `NotImplementedError` naming it. As in
JAX, constant offsets are dropped (`x + 1` transposes as `x`). The transpose itself is reverse
mode at zero (for a linear function the pullback is the same at every point).
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Var
from ..lax import primitives as P
from ..tree import tree_flatten, tree_unflatten

# operands (by position; None: all) through which a value may flow linearly: the primitives
# whose JVP is jvp.linear_jvp (jvp.LINEAR_IN), and these, linear too though their JVP rules
# are written by hand
_ALSO_LINEAR_IN = {
    P.convert_element_type_p: None, P.div_p: (0,), P.select_n_p: "cases",
    P.scatter_p: (0, 1),
}
# bilinear: linear in any one operand as long as the others are not computed from the inputs
_BILINEAR = (P.mul_p, P.dot_general_p)


def _extra_linear():
    """Primitives defined outside lax.primitives (imported late: they import this package)."""
    from ..ad_checkpoint import name_p
    from ..lax.linalg import fft_p
    return {fft_p: None, name_p: None}


def _linear_outputs(jaxpr, linear_in: list[bool]) -> list[bool]:
    """Which outputs of `jaxpr` depend (linearly) on the inputs flagged in `linear_in`;
    raises JAX's NotImplementedError at the first equation that is not linear in them."""
    from ..lax.stop_gradient import stop_gradient_p
    from .jvp import LINEAR_IN
    table = {**LINEAR_IN, **_ALSO_LINEAR_IN, **_extra_linear()}
    linear = {v.id for v, flag in zip(jaxpr.invars, linear_in) if flag}
    for eqn in jaxpr.eqns:
        flags = [isinstance(a, Var) and a.id in linear for a in eqn.invars]
        if not any(flags) or eqn.primitive is stop_gradient_p:
            continue
        outs = _eqn_linear_outputs(eqn, flags, table)
        linear.update(v.id for v, flag in zip(eqn.outvars, outs) if flag)
    return [isinstance(v, Var) and v.id in linear for v in jaxpr.outvars]


def _eqn_linear_outputs(eqn, flags, table) -> list[bool]:
    prim = eqn.primitive
    call = getattr(prim, "call_param", None)
    if call is not None:  # jit, checkpoint, custom derivatives: look inside
        return _linear_outputs(eqn.params[call].jaxpr, flags)
    if prim in _BILINEAR and sum(flags) == 1:
        return [True] * len(eqn.outvars)
    allowed = table.get(prim, ())
    if allowed == "cases":  # select_n: the predicate picks, the cases flow
        allowed = tuple(range(1, len(eqn.invars)))
    if allowed is None or (allowed and not any(f for i, f in enumerate(flags)
                                               if i not in allowed)):
        return [True] * len(eqn.outvars)
    raise NotImplementedError(
        f"Transpose rule (for reverse-mode differentiation) for '{prim.name}' not "
        f"implemented: linear_transpose takes a function linear in its inputs, and "
        f"'{prim.name}' is not linear in the operands computed from them"
        + (f" (line {eqn.source.line}: {eqn.source.code})" if getattr(eqn, "source", None)
           else ""))


def _aval(x):
    """The abstract value of a primal or cotangent (a ShapeDtypeStruct's too), typed as
    jitviz types it (a Python float is a weak float32 without x64)."""
    from ..lax import aval_of
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        from ..core.ir import ShapedArray
        from ..dtypes import canonicalize
        return ShapedArray(tuple(x.shape), canonicalize(x.dtype),
                           bool(getattr(x, "weak_type", False)))
    return aval_of(x)


def linear_transpose(fun, *primals, reduce_axes=()):
    """`jax.linear_transpose`: `fun`'s transpose, a function from output cotangents to a
    tuple of input cotangents (one per primal). `primals` give the input types."""
    from .. import ShapeDtypeStruct, make_jaxpr
    from .function_transforms import vjp
    if reduce_axes:
        raise NotImplementedError("linear_transpose(reduce_axes=...) is gone from JAX too")
    from .. import lax
    leaves, in_tree = tree_flatten(primals)
    avals = [_aval(x) for x in leaves]
    structs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    closed = make_jaxpr(lambda *xs: fun(*tree_unflatten(in_tree, list(xs))))(*structs)
    _linear_outputs(closed.jaxpr, [True] * len(structs))
    out_avals = closed.jaxpr.out_avals
    zeros = [lax.convert_element_type(np.zeros(a.shape, a.dtype), a.dtype, a.weak_type)
             for a in avals]

    def transposed(*cotangents):
        ct_leaves, ct_tree = tree_flatten(cotangents[0] if len(cotangents) == 1 else
                                          cotangents)
        got = [(a.shape, a.dtype) for a in map(_aval, ct_leaves)]
        want = [(a.shape, a.dtype) for a in out_avals]
        if ct_tree != closed.out_tree or got != want:
            raise TypeError(f"cotangent type does not match function output, expected "
                            f"{tuple(out_avals)} but got {list(cotangents)}")
        _, pullback = vjp(fun, *tree_unflatten(in_tree, zeros))
        return tuple(pullback(tree_unflatten(closed.out_tree, ct_leaves)))
    return transposed
