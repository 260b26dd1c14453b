"""Promotion, broadcasting and shape helpers shared by the `jitviz.numpy` functions."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..array import Array, as_array
from ..core import explain
from ..core.trace import Tracer


def aval(x):
    return lax.aval_of(_scalarize(x))


def _scalarize(x):
    """Lists of Python numbers become arrays (as NumPy does); everything else is kept."""
    if isinstance(x, (list, tuple)):
        from .creation import asarray
        return asarray(x)
    return x


def is_traced(x) -> bool:
    return isinstance(x, Tracer)


def to_dtype(x, dtype, weak: bool = False):
    """`x` converted to (dtype, weak): an equation for tracers, NumPy for concrete values."""
    x = _scalarize(x)
    av = lax.aval_of(x)
    if av.dtype == dtype and av.weak_type == weak:
        return x
    if is_traced(x):
        return lax.convert_element_type(x, dtype, weak)
    return as_array(np.asarray(x).astype(dtype), weak)


def promote(*args, inexact: bool = False):
    """Convert arguments to their JAX-promoted common dtype."""
    args = [_scalarize(a) for a in args]
    avals = [lax.aval_of(a) for a in args]
    dt, weak = dtypes.result_type(*[(a.dtype, a.weak_type) for a in avals])
    if inexact and not dtypes.is_inexact(dt):
        dt = dtypes.float64 if (dt.itemsize >= 8 and not weak) else dtypes.default_float()
    return [to_dtype(a, dt, weak) for a in args]


def broadcast_to_shape(x, shape):
    shape = tuple(shape)
    av = lax.aval_of(x)
    if av.shape == shape:
        return x
    if len(av.shape) > len(shape):
        raise ValueError(f"cannot broadcast an array of shape {av.shape} to {shape}")
    lead = len(shape) - len(av.shape)
    for d, s in zip(av.shape, shape[lead:]):
        if d not in (1, s):
            raise ValueError(f"operands could not be broadcast together: shape {av.shape} "
                             f"cannot become {shape}")
    keep = [i for i, d in enumerate(av.shape) if d == shape[lead + i]]
    if len(keep) != len(av.shape):  # drop size-1 dimensions that get stretched
        x = lax.reshape(x, [av.shape[i] for i in keep])
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def broadcast_args(*args, keep_scalars: bool = True):
    """Broadcast to a common shape; rank-0 operands may stay scalars (lax allows them)."""
    shapes = [lax.aval_of(a).shape for a in args]
    try:
        target = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None
    return [a if (keep_scalars and s == ()) or s == target else broadcast_to_shape(a, target)
            for a, s in zip(args, shapes)]


def canonical_axis(axis, ndim, what="axis"):
    axis = operator.index(explain.concrete_or_error(axis, f"the {what} argument"))
    if not -ndim <= axis < max(ndim, 1):
        raise np.exceptions.AxisError(f"{what} {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return axis % max(ndim, 1)


def canonical_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonical_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in {axis}")
        return axes
    return (canonical_axis(axis, ndim),)


def concrete_shape(shape, context: str):
    """A shape made of concrete ints; a ConcretizationTypeError for traced sizes."""
    if isinstance(shape, (int, np.integer)) or is_traced(shape):
        shape = (shape,)
    out = []
    for d in shape:
        if is_traced(d):
            raise explain.concretization_error(d, "concrete", context=f"{context}: shapes "
                                               "must be concrete values")
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(f"{context}: shape entries must be integers, got {d!r}") from None
        if out[-1] < 0 and out[-1] != -1:
            raise ValueError(f"{context}: negative dimension {out[-1]} in shape")
    return tuple(out)


def wrap_result(x):
    """Concrete results are jitviz Arrays; tracers pass through."""
    if is_traced(x) or isinstance(x, Array):
        return x
    return as_array(x)
