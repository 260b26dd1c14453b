"""Sorting: `jnp.sort` and `jnp.argsort` over `lax.sort` (NaN last, stable), as JAX builds
them."""
from __future__ import annotations

from .. import dtypes, lax
from ._core import aval, canonical_axis


def _prepared(a, axis):
    from ._core import promote
    from .shape import ravel
    (a,) = promote(a)
    if axis is None:
        return ravel(a), 0
    return a, canonical_axis(axis, aval(a).ndim)


def _no_numpy_options(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _no_numpy_options("sort", kind, order)
    a, dim = _prepared(a, axis)
    out = lax.sort(a, dimension=dim, is_stable=stable)
    return lax.rev(out, (dim,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    _no_numpy_options("argsort", kind, order)
    a, dim = _prepared(a, axis)
    index_dtype = dtypes.canonical_creation_dtype(dtype) or dtypes.default_int()
    iota = lax.broadcasted_iota(index_dtype, aval(a).shape, dim)
    if descending and stable:  # equal keys keep their order once the result is reversed
        a, iota = lax.rev(a, (dim,)), lax.rev(iota, (dim,))
    _, indices = lax.sort_key_val(a, iota, dimension=dim, is_stable=stable)
    return lax.rev(indices, (dim,)) if descending else indices


__all__ = ["sort", "argsort"]
