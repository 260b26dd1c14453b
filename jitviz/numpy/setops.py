"""Set operations over a stable sort, as JAX defines them: `lexsort`, `unique` (and the
Array API's `unique_all`/`unique_counts`/`unique_inverse`/`unique_values`), `union1d`,
`intersect1d`, `setdiff1d`, `setxor1d`.

Their results' lengths depend on the values, so under a trace they need a static `size=`
(the result is truncated or padded, with `fill_value` or as JAX pads); without it, a traced
input is JAX's ConcretizationTypeError. Eagerly, without `size=`, the exact result is returned.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, canonical_axis, is_traced, promote, to_dtype
from .creation import arange, asarray, full, zeros
from .indexing import nonzero, where
from .shape import concatenate, moveaxis, ravel, reshape


def _size_hint(name):
    return (f"To make jnp.{name}() compatible with JIT and other transforms, you can specify "
            "a concrete value for the size argument, which will determine the output size.")


def _static_size(size, name):
    if size is None:
        return None
    return operator.index(explain.concrete_or_error(
        size, f"The error arose for the size argument of jnp.{name}(). " + _size_hint(name)))


def _concrete_input(arr, name, what="first argument"):
    """Without size=, the result's length needs the values: a traced input is an error."""
    return explain.concrete_or_error(
        arr, f"The error arose for the {what} of jnp.{name}(). " + _size_hint(name))


def _array_operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


# --- lexsort --------------------------------------------------------------------------------

def lexsort(keys, axis=-1):
    """The indices that sort by the last key, then the one before it, ...: one stable
    argsort per key, from the least significant, each refining the order of the last."""
    from .extra import take_along_axis
    from .sorting import argsort
    if isinstance(keys, (tuple, list)):
        keys = [_array_operand(k) for k in keys]
    else:
        keys = list(_array_operand(keys))  # a stacked array: its first axis lists the keys
    if not keys:
        raise TypeError("jnp.lexsort: need sequence of keys with len > 0 in lexsort")
    shapes = {aval(k).shape for k in keys}
    if len(shapes) != 1:
        raise ValueError("all keys need to be the same shape")
    shape = shapes.pop()
    if len(shape) == 0:
        return zeros((), dtypes.default_int())
    axis = canonical_axis(axis, len(shape))
    order = argsort(keys[0], axis=axis)
    for key in keys[1:]:
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis=axis),
                                axis)
    return order


# --- unique -----------------------------------------------------------------------------------

def _rows_sorted(aux, equal_nan):
    """aux (n, ...) with its rows sorted lexicographically (stable), the permutation, and
    the mask of rows that differ from the row before (the first occurrences)."""
    from .reductions import any as any_
    from .ufuncs import isnan, logical_and, logical_not, not_equal
    n, rest = aval(aux).shape[0], aval(aux).shape[1:]
    int_ = dtypes.default_int()
    if n == 0:
        return aux, zeros(0, int_), zeros(0, np.bool_)
    width = int(np.prod(rest))
    if width == 0:  # every row is empty, so all rows are equal: the first one is kept
        perm = arange(n, dtype=int_)
        mask = (arange(n) == 0)
        return aux, perm, mask
    rows = reshape(aux, (n, width))
    perm = lexsort([rows[:, j] for j in reversed(range(width))], axis=0)
    aux = aux[perm]
    later, earlier = aux[1:], aux[:-1]
    differs = not_equal(later, earlier)
    if equal_nan and dtypes.is_inexact(aval(aux).dtype):
        differs = logical_and(differs, logical_not(logical_and(isnan(later), isnan(earlier))))
    if len(rest):
        differs = any_(differs, axis=tuple(range(1, len(rest) + 1)))
    mask = concatenate([asarray([True]), differs])
    return aux, perm, mask


def _first_positions(mask, size):
    """Positions of the True entries of a 1-D mask: all of them (a concrete mask), or the
    first `size` padded with 0."""
    if size is None:
        return nonzero(mask)[0]
    return nonzero(mask, size=size)[0]


def _unique_along_axis0(arr, return_index, return_inverse, return_counts, equal_nan, size,
                        fill_value):
    from .reductions import cumsum, sum as sum_
    from .extra import diff
    n = aval(arr).shape[0]
    int_ = dtypes.default_int()
    if n == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, perm, mask = _rows_sorted(arr, equal_nan)
    ind = _first_positions(mask, size)
    values = aux[ind] if n else aux
    if size is not None and fill_value is not None:
        fill = to_dtype(asarray(fill_value), aval(values).dtype)
        if n:
            valid = arange(size) < sum_(mask)
            valid = reshape(valid, (size,) + (1,) * (aval(values).ndim - 1))
            values = where(valid, values, fill)
        else:
            values = full((size,) + aval(arr).shape[1:], fill, aval(values).dtype)
    out = [values]
    if return_index:
        out.append(perm[ind] if n else perm)
    if return_inverse:
        rank = cumsum(mask, dtype=int_) - 1 if n else zeros(0, int_)
        out.append(zeros(n, int_).at[perm].set(rank) if n else rank)
    if return_counts:
        if size is None:
            starts = concatenate([ind, asarray([n], dtype=int_)])
        else:  # padding positions (0 after the first) become n, so their counts are 0
            starts = nonzero(mask, size=size + 1)[0] if n else zeros(size + 1, int_)
            starts = concatenate([starts[:1], where(starts[1:] > 0, starts[1:], n)])
        out.append(diff(starts).astype(int_) if n or size else zeros(0, int_))
    return out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique values (rows along `axis`), with optional first indices, the
    inverse (the position of each input's value in the result) and the counts."""
    arr = _array_operand(ar)
    size = _static_size(size, "unique")
    if size is None:
        arr = _concrete_input(arr, "unique")
    shape = aval(arr).shape
    if axis is None:
        arr, axis_ = ravel(arr), 0
    else:
        axis_ = canonical_axis(axis, len(shape))
    out = _unique_along_axis0(moveaxis(arr, axis_, 0), return_index, return_inverse,
                              return_counts, equal_nan, size, fill_value)
    out[0] = moveaxis(out[0], 0, axis_)
    if return_inverse and axis is None:
        at = 2 if return_index else 1
        out[at] = reshape(out[at], shape)
    return out[0] if len(out) == 1 else tuple(out)


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
    return _UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size,
                                    fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --- set operations on 1-D arrays ---------------------------------------------------------------

def _unique_padded(a):
    """The sorted unique values of the flattened `a`, padded to a's size with its smallest
    value, and the mask of the real (not padding) ones."""
    from .reductions import sum as sum_
    a = ravel(a)
    n = aval(a).shape[0]
    if n == 0:
        return a, zeros(0, np.bool_), zeros(0, dtypes.default_int())
    values, first, counts = unique(a, return_index=True, return_counts=True, size=n)
    return values, counts > 0, first


def _kept(values, keep, size, fill_value, name):
    """values[keep] in order: all of them (eagerly), or the first `size` padded with
    fill_value (None: the first kept value, as JAX pads)."""
    from .reductions import sum as sum_
    if size is None:
        keep = _concrete_input(keep, name, "arguments")
        return values[nonzero(keep)[0]]
    if aval(values).shape[0] == 0:
        fill = 0 if fill_value is None else fill_value
        return full(size, to_dtype(asarray(fill), aval(values).dtype), aval(values).dtype)
    picked = values[nonzero(keep, size=size)[0]]
    fill = picked[0] if fill_value is None else to_dtype(asarray(fill_value),
                                                          aval(values).dtype)
    return where(arange(size) < sum_(keep), picked, fill)


def _in_valid(values, others, others_valid):
    """For each of `values`: whether it equals one of the valid `others`."""
    from .reductions import any as any_
    from .ufuncs import equal, logical_and
    if aval(others).shape[0] == 0:
        return zeros(aval(values).shape, np.bool_)
    hits = logical_and(equal(values[:, None], others[None, :]), others_valid[None, :])
    return any_(hits, axis=1)


def _two_operands(name, ar1, ar2, size):
    size = _static_size(size, name)
    a, b = promote(ar1, ar2)
    if size is None:
        a, b = _concrete_input(a, name), _concrete_input(b, name, "second argument")
    return ravel(_array_operand(a)), ravel(_array_operand(b)), size


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values found in either array."""
    a, b, size = _two_operands("union1d", ar1, ar2, size)
    return unique(concatenate([a, b]), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 not in ar2 (padding: fill_value, else 0)."""
    from .ufuncs import logical_and, logical_not
    size = _static_size(size, "setdiff1d")
    a = ravel(_array_operand(ar1))
    b = ravel(_array_operand(ar2))
    if size is None:
        a, b = _concrete_input(a, "setdiff1d"), _concrete_input(b, "setdiff1d",
                                                                "second argument")
    u1, valid1, _ = _unique_padded(a)
    u2, valid2, _ = _unique_padded(b)
    keep = logical_and(valid1, logical_not(_in_valid(u1, u2, valid2)))
    return _kept(u1, keep, size, 0 if fill_value is None else fill_value, "setdiff1d")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values found in both arrays; with return_indices, the index of
    each one's first occurrence in ar1 and in ar2."""
    from .reductions import argmax
    from .ufuncs import equal, logical_and
    a, b, size = _two_operands("intersect1d", ar1, ar2, size)
    u1, valid1, first1 = _unique_padded(a)
    u2, valid2, first2 = _unique_padded(b)
    keep = logical_and(valid1, _in_valid(u1, u2, valid2))
    values = _kept(u1, keep, size, fill_value, "intersect1d")
    if not return_indices:
        return values
    int_ = dtypes.default_int()
    if aval(u2).shape[0] == 0 or aval(u1).shape[0] == 0:
        empty = zeros(aval(values).shape, int_)
        return values, empty, empty
    in_b = argmax(logical_and(equal(u1[:, None], u2[None, :]), valid2[None, :]), axis=1)
    # padding indices are the arrays' sizes (one past the end), as JAX pads them
    idx1 = _kept(first1, keep, size, aval(a).shape[0], "intersect1d")
    idx2 = _kept(first2[in_b], keep, size, aval(b).shape[0], "intersect1d")
    return values, idx1, idx2


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values found in exactly one of the arrays."""
    from .ufuncs import logical_and, logical_not
    a, b, size = _two_operands("setxor1d", ar1, ar2, size)
    u1, valid1, _ = _unique_padded(a)
    u2, valid2, _ = _unique_padded(b)
    only1 = logical_and(valid1, logical_not(_in_valid(u1, u2, valid2)))
    only2 = logical_and(valid2, logical_not(_in_valid(u2, u1, valid1)))
    values = concatenate([u1, u2])
    keep = concatenate([only1, only2])
    # the kept values first, each group sorted: order by (dropped, value)
    order = lexsort([values, logical_not(keep)]) if aval(values).shape[0] else \
        zeros(0, dtypes.default_int())
    return _kept(values[order], keep[order], size, fill_value, "setxor1d")


__all__ = ["lexsort", "unique", "unique_all", "unique_counts", "unique_inverse",
           "unique_values", "union1d", "setdiff1d", "intersect1d", "setxor1d"]
