"""`lax.associative_scan`, `lax.cumlogsumexp` and `lax.top_k`, as `jax.lax`'s, composed from
existing primitives (so they trace, jit, differentiate and vmap on every backend).

`associative_scan` is the parallel prefix scan of Blelloch / Ladner-Fischer that JAX also uses:
combine neighbouring pairs, scan the half-length result recursively, then fill in the other
positions — O(log n) levels of strided `slice`s and one `fn` call per level, instead of n
sequential steps. `cumlogsumexp` is that scan of `logaddexp`. `top_k` is a stable `sort` of the
reversed operand with its positions, whose last k entries, reversed again, are the k largest
values in descending order, ties in increasing index order (XLA's TopK order; NaN counts as
larger than every number, as in `lax.sort`).
"""
from __future__ import annotations

import operator

import numpy as np


def _aval(x):
    from . import aval_of
    return aval_of(x)


def _slice_axis(x, axis, start, limit, stride=1):
    from .windows import _slice_axis as slice_axis
    return slice_axis(x, axis, start, limit, stride)


def associative_scan(fn, elems, reverse=False, axis=0):
    """`jax.lax.associative_scan`: the inclusive scan of the associative `fn` over `axis` of
    every array of the pytree `elems` (all the same length along it). `fn(a, b)` takes and
    returns pytrees like `elems` and must work elementwise on stacked slices."""
    from ..tree import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise TypeError("associative_scan: elems has no arrays")
    ndim = _aval(leaves[0]).ndim
    if ndim == 0:
        raise ValueError("associative_scan: elems must have at least one dimension to scan")
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for arrays of "
                         f"{ndim} dimensions")
    axis %= ndim
    lengths = {_aval(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {sorted(lengths)})")
    from . import rev
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn returned {out_tree}, expected the structure "
                            f"of elems {tree}")
        return out
    out = _prefix_scan(combine, leaves, axis)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _prefix_scan(combine, xs, axis):
    n = _aval(xs[0]).shape[axis]
    if n < 2:
        return xs
    # pairs (0,1), (2,3), ...: the scan's values at the odd positions, once scanned
    pairs = combine([_slice_axis(x, axis, 0, n - 1, 2) for x in xs],
                    [_slice_axis(x, axis, 1, n, 2) for x in xs])
    odd = _prefix_scan(combine, pairs, axis)
    # even positions 2, 4, ...: the odd prefix before them combined with the element
    n_odd = _aval(odd[0]).shape[axis]
    if n % 2 == 0:
        prev = [_slice_axis(o, axis, 0, n_odd - 1) for o in odd]
    else:
        prev = odd
    even = combine(prev, [_slice_axis(x, axis, 2, n, 2) for x in xs]) if n > 2 else \
        [_slice_axis(x, axis, 2, 2) for x in xs]
    from . import concatenate
    even = [concatenate([_slice_axis(x, axis, 0, 1), e], axis) for x, e in zip(xs, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def _interleave(even, odd, axis):
    """even[0], odd[0], even[1], odd[1], ... along `axis` (even has as many or one more)."""
    from . import concatenate, reshape, stack
    ne, no = _aval(even).shape[axis], _aval(odd).shape[axis]
    if ne > no:  # pad odd with a copy of even's last so the two stack, then trim
        odd = concatenate([odd, _slice_axis(even, axis, ne - 1, ne)], axis)
    both = stack([even, odd], axis + 1)
    shape = list(_aval(even).shape)
    shape[axis] = 2 * ne
    return _slice_axis(reshape(both, shape), axis, 0, ne + no)


def cumlogsumexp(operand, axis=0, reverse=False):
    """`jax.lax.cumlogsumexp`: log(cumsum(exp(x))) along `axis`, without overflow (a scan of
    logaddexp)."""
    from . import primitives as P
    from .. import numpy as jnp
    av = _aval(operand)
    P._check_kind("cumlogsumexp", av.dtype, P.FLOAT)
    P._check_cumulative_axis(av, int(axis))  # (JAX too refuses a negative axis here)
    return associative_scan(jnp.logaddexp, operand, reverse=reverse, axis=int(axis))


def top_k(operand, k, *, axis=-1):
    """`jax.lax.top_k`: the `k` largest entries along `axis` (the last by default) in
    descending order, and their int32 indices; equal values in increasing index order."""
    from . import broadcasted_iota, rev, sort
    av = _aval(operand)
    if av.ndim == 0:
        raise ValueError("top_k operand must have >= 1 dimension, got ()")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"top_k: k must be a concrete integer (mark it static under jit), "
                        f"got {k!r}") from None
    axis = operator.index(axis)
    if not -av.ndim <= axis < av.ndim:
        raise ValueError(f"top_k: axis {axis} is out of bounds for an operand of "
                         f"{av.ndim} dimensions")
    axis %= av.ndim
    n = av.shape[axis]
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > n:
        raise TypeError(f"k argument to top_k must be no larger than size of the operand "
                        f"along axis {axis} ({n}), got {k}")
    flipped = rev(operand, (axis,))
    positions = broadcasted_iota(np.int32, av.shape, axis)
    keys, where = sort((flipped, positions), dimension=axis, is_stable=True, num_keys=1)
    values = rev(_slice_axis(keys, axis, n - k, n), (axis,))
    from . import primitives as P
    picked = rev(_slice_axis(where, axis, n - k, n), (axis,))
    # (a list, as jax.lax.top_k returns)
    return [values, P.sub_p.bind(np.int32(n - 1), picked)]  # positions in the reversed operand
