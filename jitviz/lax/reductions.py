"""Reductions (monoids over axes), arg-reductions and cumulative scans."""
from __future__ import annotations

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from ..dtypes import highest, lowest
from .dtype_kinds import ANY, INTEGRAL, NUMERIC, ORDERED, _check_kind, _quiet
from .structural import _pp_with


def _reduce_rule(name, accepts, keeps_weak=True):
    """The reduced shape, in x's dtype; weakly typed if x is, except for the logical
    reductions (JAX types reduce_and/reduce_or results strongly)."""
    def rule(x, *, axes):
        _check_kind(name, x.dtype, accepts)
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            # JAX's classes: IndexError from the logical reductions' rule, else ValueError
            raise (ValueError if keeps_weak else IndexError)(
                f"{name} axes {axes} are invalid for shape {x.shape}")
        return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype,
                           x.weak_type and keeps_weak)
    return rule


def _identity_reduce(ufunc, identity_of):
    def impl(x, *, axes):
        x = np.asarray(x)
        return ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype, initial=identity_of(x.dtype))
    return impl


def _reduce_sum_impl(x, *, axes):
    """A float sum starts from -0.0, the additive identity (a sum of -0.0s is -0.0, as in
    XLA and in the compiled kernels); NumPy's pairwise sum starts from +0.0. An empty sum
    is +0.0 all the same."""
    x = np.asarray(x)
    empty = any(x.shape[a] == 0 for a in axes)
    initial = -0.0 if x.dtype.kind == "f" and not empty else None
    return np.add.reduce(x, axis=tuple(axes), dtype=x.dtype,
                         **({} if initial is None else {"initial": initial}))


def _reduce_prod_impl(x, *, axes):
    x = np.asarray(x)
    return np.multiply.reduce(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_max_impl(x, *, axes):
    x = np.asarray(x)
    if x.dtype.kind in "fc" and x.size:  # NaN propagates, as in XLA
        r = np.max(x, axis=tuple(axes), initial=lowest(x.dtype))
        return _zero_sign(r, x, axes, positive=True) if x.dtype.kind == "f" else r
    return np.maximum.reduce(x, axis=tuple(axes), initial=lowest(x.dtype))


def _reduce_min_impl(x, *, axes):
    x = np.asarray(x)
    if x.dtype.kind in "fc" and x.size:
        r = np.min(x, axis=tuple(axes), initial=highest(x.dtype))
        return _zero_sign(r, x, axes, positive=False) if x.dtype.kind == "f" else r
    return np.minimum.reduce(x, axis=tuple(axes), initial=highest(x.dtype))


def _zero_sign(r, x, axes, positive):
    """A zero max is +0.0 if the slice holds a +0.0 (IEEE 754-2019 maximum, XLA's: -0 < +0),
    a zero min -0.0 if it holds a -0.0; NumPy keeps whichever zero came first."""
    signed = np.signbit(x) if not positive else ~np.signbit(x)
    has = np.any((x == 0) & signed, axis=tuple(axes))
    zero = np.where(positive, 0.0, -0.0).astype(x.dtype)
    return np.where((r == 0) & has, zero, r).astype(x.dtype)




reduce_sum_p = primitive("reduce_sum", abstract_eval=_reduce_rule("reduce_sum", NUMERIC),
                         impl=_quiet(_reduce_sum_impl), pp_params=_pp_with("out_sharding"),
                         kind="reduction")
reduce_prod_p = primitive("reduce_prod", abstract_eval=_reduce_rule("reduce_prod", NUMERIC),
                          impl=_quiet(_reduce_prod_impl), kind="reduction")
reduce_max_p = primitive("reduce_max", abstract_eval=_reduce_rule("reduce_max", ANY),
                         impl=_quiet(_reduce_max_impl), kind="reduction")
reduce_min_p = primitive("reduce_min", abstract_eval=_reduce_rule("reduce_min", ANY),
                         impl=_quiet(_reduce_min_impl), kind="reduction")
reduce_and_p = primitive("reduce_and", abstract_eval=_reduce_rule("reduce_and", INTEGRAL, False),
                         impl=_identity_reduce(np.bitwise_and, lambda dt: highest(dt) if
                                               dt.kind != "i" else -1),
                         kind="reduction")
reduce_or_p = primitive("reduce_or", abstract_eval=_reduce_rule("reduce_or", INTEGRAL, False),
                        impl=_identity_reduce(np.bitwise_or, lambda dt: 0 if dt.kind != "b"
                                              else False),
                        kind="reduction")


def _arg_rule(name):
    def rule(x, *, axes, index_dtype):
        # (JAX's argmax compares with gt, which takes no complex: a TypeError at trace time,
        # where the CPU kernel had no order for complex numbers to compile)
        _check_kind(name, x.dtype, ORDERED)
        if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
            raise ValueError(f"Invalid axis {axes} for operand shape {x.shape}")  # JAX's
        if x.shape[axes[0]] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return ShapedArray([d for i, d in enumerate(x.shape) if i != axes[0]], index_dtype)
    return rule


argmax_p = primitive("argmax", abstract_eval=_arg_rule("argmax"),
                     impl=lambda x, *, axes, index_dtype:
                     np.argmax(x, axis=axes[0]).astype(index_dtype), kind="arg_reduction")
argmin_p = primitive("argmin", abstract_eval=_arg_rule("argmin"),
                     impl=lambda x, *, axes, index_dtype:
                     np.argmin(x, axis=axes[0]).astype(index_dtype), kind="arg_reduction")


def _check_cumulative_axis(x, axis):
    if not 0 <= axis < x.ndim:  # JAX's ValueError (a 0-d operand has no axis 0)
        raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")


def _cum_rule(name, accepts=NUMERIC):
    def rule(x, *, axis, reverse):
        _check_cumulative_axis(x, axis)  # before the dtype, as JAX checks them
        _check_kind(name, x.dtype, accepts)
        return x
    return rule


def _cum_impl(ufunc):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out
    return _quiet(impl)


cumsum_p = primitive("cumsum", abstract_eval=_cum_rule("cumsum"), impl=_cum_impl(np.add),
                     kind="scan_op")
cumprod_p = primitive("cumprod", abstract_eval=_cum_rule("cumprod"),
                      impl=_cum_impl(np.multiply), kind="scan_op")
def _cum_extremum_impl(ufunc, positive):
    """A running max/min with IEEE 754-2019's order of zeros, as `max`/`min` (and XLA):
    where the running value is a zero, it is +0.0 for max if a +0.0 came so far (else -0.0),
    and -0.0 for min if a -0.0 came (NumPy's accumulate keeps whichever zero it met first)."""
    plain = _cum_impl(ufunc)

    def impl(x, *, axis, reverse):
        out = plain(x, axis=axis, reverse=reverse)
        if out.dtype.kind != "f":
            return out
        x = np.asarray(x)
        deciding = (x == 0) & (np.signbit(x) != positive)  # +0.0 for max, -0.0 for min
        seen = _cum_impl(np.logical_or)(deciding, axis=axis, reverse=reverse)
        zero = np.where(seen != positive, -0.0, 0.0).astype(out.dtype)
        return np.where(out == 0, zero, out)
    return impl


cummax_p = primitive("cummax", abstract_eval=_cum_rule("cummax", ANY),
                     impl=_cum_extremum_impl(np.maximum, True), kind="scan_op")
cummin_p = primitive("cummin", abstract_eval=_cum_rule("cummin", ANY),
                     impl=_cum_extremum_impl(np.minimum, False), kind="scan_op")
