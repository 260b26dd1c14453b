"""The primitives that move, index or make data rather than compute on it (kind
"structural"): broadcasts, reshapes, transposes, slices, concatenation, gathers, scatters,
iota."""
from __future__ import annotations

import math

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from .dtype_kinds import NUMERIC, _check_kind


def _bid_rule(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions {broadcast_dimensions} must "
                        f"have one entry per operand dimension ({x.ndim})")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim cannot broadcast operand of shape {x.shape} to "
                            f"{shape} with broadcast_dimensions={broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _bid_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = np.shape(x)[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _bid_pp(params):
    # today's JAX shows only non-empty broadcast_dimensions (the type shows the shape)
    dims = params["broadcast_dimensions"]
    return [("broadcast_dimensions", dims)] if dims else []


broadcast_in_dim_p = primitive("broadcast_in_dim", abstract_eval=_bid_rule, impl=_bid_impl,
                               pp_params=_bid_pp, kind="structural")


def _reshape_rule(x, *, new_sizes, dimensions):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {x.shape}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _pp_with(key):
    """Today's JAX prints a sharding param that jitviz does not model (always None)."""
    return lambda params: sorted([*params.items(), (key, None)])


reshape_p = primitive("reshape", abstract_eval=_reshape_rule,
                      impl=lambda x, *, new_sizes, dimensions: np.reshape(x, new_sizes),
                      pp_params=_pp_with("sharding"), kind="structural")


def _transpose_rule(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation {permutation} is not a permutation of the "
                        f"operand's {x.ndim} dimensions")
    return ShapedArray([x.shape[p] for p in permutation], x.dtype, x.weak_type)


transpose_p = primitive("transpose", abstract_eval=_transpose_rule,
                        impl=lambda x, *, permutation: np.transpose(x, permutation),
                        kind="structural")


def _squeeze_rule(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise TypeError(f"squeeze dimension {d} has size {x.shape[d]}, not 1")
    return ShapedArray([s for i, s in enumerate(x.shape) if i not in dimensions],
                       x.dtype, x.weak_type)


squeeze_p = primitive("squeeze", abstract_eval=_squeeze_rule,
                      impl=lambda x, *, dimensions: np.squeeze(x, tuple(dimensions)),
                      kind="structural")


def _rev_rule(x, *, dimensions):
    return x


rev_p = primitive("rev", abstract_eval=_rev_rule,
                  impl=lambda x, *, dimensions: np.flip(x, tuple(dimensions)) if dimensions
                  else np.asarray(x), kind="structural")


def _concat_rule(*xs, dimension):
    if not xs:
        raise TypeError("concatenate needs at least one operand")
    first = xs[0]
    for x in xs:
        if x.dtype != first.dtype:
            raise TypeError("concatenate requires operands to have the same dtypes, got "
                            + ", ".join(x.dtype.name for x in xs) + ".")
        if x.ndim != first.ndim or any(a != b for i, (a, b) in
                                       enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("concatenate operands must have equal shapes except along "
                            f"dimension {dimension}, got " + ", ".join(str(x.shape) for x in xs))
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {', '.join(str(x.shape) for x in xs)}.")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


concatenate_p = primitive("concatenate", abstract_eval=_concat_rule,
                          impl=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                          kind="structural")


def _stack_rule(*xs, axis):
    """JAX 0.10's `stack`: operands of one type, joined along a new axis."""
    if not xs:
        raise TypeError("stack needs at least one operand")
    first = xs[0]
    if any(not x.same_type(first) for x in xs):
        raise TypeError("stack requires operands of the same shape and dtype, got "
                        + ", ".join(x.str_short() for x in xs) + ".")
    if not 0 <= axis <= first.ndim:
        raise TypeError(f"stack axis {axis} is out of range for operands of rank {first.ndim}")
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


stack_p = primitive("stack", abstract_eval=_stack_rule,
                    impl=lambda *xs, axis: np.stack(xs, axis=axis), kind="structural")


def _slice_rule(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise TypeError("slice indices must have one entry per dimension")
    shape = []
    for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape):
        if not (0 <= s <= l <= d) or st < 1:
            raise TypeError(f"slice start {start_indices}, limit {limit_indices}, strides "
                            f"{strides} are out of bounds for shape {x.shape}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(slice(s, l, st) for s, l, st in
                               zip(start_indices, limit_indices, strides))]


slice_p = primitive("slice", abstract_eval=_slice_rule, impl=_slice_impl, kind="structural")


def _dyn_slice_rule(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError("dynamic_slice needs one start index and one size per dimension")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError("dynamic_slice start indices must be integer scalars")
    if any(not 0 <= z <= d for z, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice sizes {slice_sizes} do not fit shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _clamped_starts(shape, starts, sizes):
    return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, shape, sizes)]


def _dyn_slice_impl(x, *starts, slice_sizes):
    st = _clamped_starts(np.shape(x), starts, slice_sizes)
    return np.asarray(x)[tuple(slice(s, s + z) for s, z in zip(st, slice_sizes))]


dynamic_slice_p = primitive("dynamic_slice", abstract_eval=_dyn_slice_rule,
                            impl=_dyn_slice_impl, kind="structural")


def _dus_rule(x, update, *starts):
    if update.dtype != x.dtype or update.ndim != x.ndim or len(starts) != x.ndim:
        raise TypeError("dynamic_update_slice update must have the operand's dtype and rank, "
                        "with one start index per dimension")
    if any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update {update.shape} larger than {x.shape}")
    # JAX's standard rule: weak only if every operand is, the start indices included
    weak = all(a.weak_type for a in (x, update) + starts)
    return ShapedArray(x.shape, x.dtype, weak)


def _dus_impl(x, update, *starts):
    out = np.array(x, copy=True)
    st = _clamped_starts(out.shape, starts, np.shape(update))
    out[tuple(slice(s, s + z) for s, z in zip(st, np.shape(update)))] = update
    return out


dynamic_update_slice_p = primitive("dynamic_update_slice", abstract_eval=_dus_rule,
                                   impl=_dus_impl, kind="structural")


def _gather_shape(x, idx_shapes, axes, name="gather"):
    if not axes or list(axes) != list(range(axes[0], axes[0] + len(axes))):
        raise TypeError(f"{name} axes must be consecutive, got {axes}")
    if len(idx_shapes) != len(axes) or axes[-1] >= x.ndim:
        raise TypeError(f"{name} needs one index array per indexed axis")
    bshape = np.broadcast_shapes(*idx_shapes)
    return x.shape[:axes[0]] + tuple(bshape) + x.shape[axes[-1] + 1:]


def _gather_rule(x, *indices, axes):
    for i in indices:
        if i.dtype.kind not in "iu":
            raise TypeError(f"gather indices must be integers, got {i.dtype.name}")
    shape = _gather_shape(x, [i.shape for i in indices], axes)
    _check_gather_source(x.shape, shape, axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _check_gather_source(x_shape, out_shape, axes):
    """As in JAX, a gather that reads anything needs every indexed axis non-empty: clamping
    an index into an empty axis leaves no element to read (a kernel would read out of
    bounds). A gather of nothing (an empty result) is fine."""
    empty = [a for a in axes if x_shape[a] == 0]
    if empty and math.prod(out_shape):
        raise TypeError(f"Slice size at index {empty[0]} in gather op is out of range, must be "
                        f"within [0, 0 + 1), got 1: axis {empty[0]} of the operand "
                        f"{tuple(x_shape)} is empty, so there is no element to gather")


def _gather_index(shape, indices, axes):
    """Indices clamped into range, as JAX's gather does (`x[10]` of 5 elements is x[4])."""
    clipped = [np.clip(i, 0, shape[a] - 1) for i, a in zip(indices, axes)]
    return (slice(None),) * axes[0] + tuple(clipped)


def _gather_impl(x, *indices, axes):
    x = np.asarray(x)
    shape = _gather_shape(x, [np.shape(i) for i in indices], axes)
    if not math.prod(shape):  # nothing to read (the indexed axes may be empty)
        return np.empty(shape, x.dtype)
    return x[_gather_index(x.shape, indices, axes)]


gather_p = primitive("gather", abstract_eval=_gather_rule, impl=_gather_impl,
                     kind="structural")


def _scatter_rule(x, updates, *indices, axes, mode):
    for i in indices:
        if i.dtype.kind not in "iu":
            raise TypeError(f"scatter indices must be integers, got {i.dtype.name}")
    _gather_shape(x, [i.shape for i in indices], axes, "scatter")
    if updates.dtype != x.dtype:
        raise TypeError(f"scatter updates dtype {updates.dtype.name} differs from operand "
                        f"{x.dtype.name}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_impl(x, updates, *indices, axes, mode):
    """Updates at out-of-bounds indices (negative ones too) are dropped, as in JAX."""
    out = np.array(x, copy=True)
    idx = np.broadcast_arrays(*[np.asarray(i, np.int64) for i in indices])
    target = _gather_shape(out, [i.shape for i in idx], axes, "scatter")
    upd = np.broadcast_to(updates, target)
    inside = np.ones(idx[0].shape, bool) if idx else np.ones((), bool)
    for i, a in zip(idx, axes):
        inside &= (i >= 0) & (i < out.shape[a])
    kept = tuple(i[inside] for i in idx)
    # the broadcast index dimensions of `upd` start at axes[0]: keep the in-bounds ones
    upd = np.moveaxis(upd, range(axes[0], axes[0] + inside.ndim), range(inside.ndim))[inside]
    upd = np.moveaxis(upd, 0, axes[0])
    where = (slice(None),) * axes[0] + kept
    if mode == "set":
        out[where] = upd
    else:
        _SCATTER_UFUNCS[mode].at(out, where, upd)
    return out


scatter_p = primitive("scatter", abstract_eval=_scatter_rule, impl=_scatter_impl,
                      kind="structural")


def _iota_rule(*, dtype, shape, dimension):
    _check_kind("iota", np.dtype(dtype), NUMERIC)  # JAX's TypeError for bool (arange(True))
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension):
    ar = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(ar.reshape([-1 if i == dimension else 1 for i in range(len(shape))]),
                           shape)


iota_p = primitive("iota", abstract_eval=_iota_rule, impl=_iota_impl,
                   pp_params=_pp_with("sharding"), kind="structural")
