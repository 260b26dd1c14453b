"""`jax.linearize`: a function's value at a point and its derivative there as a function of
tangents."""
from __future__ import annotations

from ..core.source import function_name
from ..tree import tree_flatten, tree_map
from .function_transforms import jvp


def linearize(fun, *primals, has_aux=False):
    """`(fun(*primals), f_jvp)` (and `aux` with `has_aux`): `f_jvp(*tangents)` is the
    directional derivative of `fun` at `primals` along `tangents`, as `jvp` computes it.

    The primal output is computed once, here; each call of `f_jvp` evaluates the JVP at the
    fixed primals (under an outer `jit` both are traced into one program)."""
    import numpy as np
    zeros = tree_map(lambda x: np.zeros(np.shape(x), np.result_type(x)), primals)
    result = jvp(fun, primals, zeros, has_aux=has_aux)
    primal_treedef = tree_flatten(primals)[1]
    name = function_name(fun)

    def f_jvp(*tangents):
        if tree_flatten(tangents)[1] != primal_treedef:
            raise TypeError(f"linearized {name}: the tangents have structure "
                            f"{tree_flatten(tangents)[1]}, the primals {primal_treedef}")
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]

    f_jvp.__name__ = f"linearized({name})"
    if has_aux:
        return result[0], f_jvp, result[2]
    return result[0], f_jvp
