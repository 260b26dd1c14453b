"""`jacfwd`, `jacrev`, `hessian`: Jacobians built, as JAX builds them, from `jvp` or `vjp`
vectorized with `vmap` over the standard basis — so they trace, jit and nest like the rest.

    jacfwd(f)(x)   one jvp per input element (cheap for few inputs, many outputs)
    jacrev(f)(x)   one vjp per output element (cheap for many inputs, few outputs)
    hessian(f)(x)  jacfwd(jacrev(f))(x)

For an output leaf of shape `o` and an input leaf of shape `i` the Jacobian block has shape
`o + i`; pytrees nest as in JAX: output structure outside, input structure inside.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..core.source import function_name
from ..tree import tree_flatten, tree_map, tree_unflatten
from ._util import aval_of


def _differentiated(fun, args, kwargs, argnums):
    """(the arguments at `argnums` — one or a tuple —, `fun` of them alone)."""
    multiple = isinstance(argnums, (tuple, list))
    nums = [i % len(args) for i in (argnums if multiple else (argnums,))]
    diff = tuple(args[i] for i in nums) if multiple else args[nums[0]]

    def partial(d):
        full = list(args)
        for i, x in zip(nums, d if multiple else (d,)):
            full[i] = x
        return fun(*full, **kwargs)
    return diff, partial


def _check_inexact(leaves, name):
    for x in leaves:
        dt = aval_of(x).dtype
        if dt.kind not in "fc":
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {dt.name}. If you "
                            "want to use Boolean- or integer-valued inputs, use vjp or jvp.")


def _basis(leaves):
    """The standard basis of the flattened leaves, one row per element (their common
    dtype), and each leaf's (offset, shape) in a row."""
    from .. import numpy as jnp
    from ..numpy._core import promote
    shapes = [aval_of(x).shape for x in leaves]
    sizes = [math.prod(s) for s in shapes]
    dtype = aval_of(promote(*leaves)[0]).dtype if len(leaves) > 1 else aval_of(leaves[0]).dtype
    offsets = np.cumsum([0] + sizes[:-1]).tolist()
    return jnp.eye(sum(sizes), dtype=dtype), list(zip(offsets, shapes))


def _split(vector, layout, like):
    """A basis row cut into arrays shaped (and typed) as the leaves `like`."""
    from .. import numpy as jnp
    return [jnp.reshape(vector[off:off + math.prod(shape)], shape).astype(aval_of(x).dtype)
            for (off, shape), x in zip(layout, like)]


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` with respect to `args[argnums]`, by forward mode."""
    from .function_transforms import jvp, vmap

    @functools.wraps(fun)
    def run(*args, **kwargs):
        from .. import numpy as jnp
        diff, partial = _differentiated(fun, args, kwargs, argnums)
        leaves, in_tree = tree_flatten(diff)
        _check_inexact(leaves, "jacfwd")
        basis, layout = _basis(leaves)

        def push(row):
            tangent = tree_unflatten(in_tree, _split(row, layout, leaves))
            res = jvp(partial, (diff,), (tangent,), has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]
        jac = vmap(push, out_axes=-1)(basis)
        jac, aux = jac if has_aux else (jac, None)

        def per_input(y):  # y: out shape + (n,) -> the input structure of out shape + in shape
            lead = aval_of(y).shape[:-1]
            return tree_unflatten(in_tree, [jnp.reshape(y[..., off:off + math.prod(s)],
                                                        lead + s) for off, s in layout])
        out = tree_map(per_input, jac)
        return (out, tree_map(lambda a: a[..., 0], aux)) if has_aux else out
    run.__name__ = f"jacfwd({function_name(fun)})"
    return run


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` with respect to `args[argnums]`, by reverse mode."""
    from .function_transforms import vjp, vmap

    @functools.wraps(fun)
    def run(*args, **kwargs):
        from .. import numpy as jnp
        diff, partial = _differentiated(fun, args, kwargs, argnums)
        _check_inexact(tree_flatten(diff)[0], "jacrev")
        res = vjp(partial, diff, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_leaves, y_tree = tree_flatten(y)
        basis, layout = _basis(y_leaves)

        def pull(row):
            return pullback(tree_unflatten(y_tree, _split(row, layout, y_leaves)))[0]
        jac = vmap(pull)(basis)  # the input structure, each leaf (m,) + in shape

        def block(off, shape):
            return tree_map(lambda g: jnp.reshape(g[off:off + math.prod(shape)],
                                                  shape + aval_of(g).shape[1:]), jac)
        out = tree_unflatten(y_tree, [block(off, s) for off, s in layout])
        return (out, res[2]) if has_aux else out
    run.__name__ = f"jacrev({function_name(fun)})"
    return run


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of a scalar `fun`: `jacfwd(jacrev(fun))`."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


__all__ = ["jacfwd", "jacrev", "hessian"]
