"""Promotion, broadcasting and shape helpers shared by the `jitviz.numpy` functions."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..array import Array, as_array
from ..core import explain
from ..core.ir import PYTHON_SCALARS, Literal
from ..core.trace import Tracer, stage


def aval(x):
    return lax.aval_of(_scalarize(x))


def _scalarize(x):
    """An operand of a `jnp` function as it is; a list or tuple is JAX's TypeError (only
    `jnp.array`/`asarray` and the functions taking a sequence of arrays accept one: JAX
    refuses to convert it silently, element by element, in every other function)."""
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{_public_function()} requires ndarray or scalar arguments, got "
                        f"{type(x)}. Convert it first: jnp.asarray({_short(x)}) (JAX does not "
                        "convert lists and tuples passed to its functions)")
    return x


def _public_function() -> str:
    """The name of the `jitviz.numpy` function the user called (the outermost jitviz frame
    below the caller's), for messages."""
    import os
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, name = sys._getframe(2), "this jnp function"
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        name = frame.f_code.co_name
        frame = frame.f_back
    return name.strip("_") or "this jnp function"


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


def is_traced(x) -> bool:
    return isinstance(x, Tracer)


def to_dtype(x, dtype, weak: bool = False):
    """`x` converted to (dtype, weak): an equation for tracers, NumPy for concrete values."""
    x = _scalarize(x)
    av = lax.aval_of(x)
    if av.dtype == dtype and av.weak_type == weak:
        return x
    # a Python scalar typed by default (`jnp.array(0.001)` is float32) widens from its own
    # value: it keeps its full precision until promotion picks its dtype (float64 here)
    widens = np.dtype(dtype).itemsize > av.dtype.itemsize
    literal = _python_literal(x) if widens else None
    if literal is not None:
        return stage(as_array(_converted(literal, dtype), weak))
    if is_traced(x):
        return lax.convert_element_type(x, dtype, weak)
    source = _python_value(x) if widens else x
    # a converted constant remembers its source, so the jaxpr can say "global 'W'"
    return as_array(_converted(source, dtype), weak, derived_from=x)


def _converted(value, dtype):
    """A concrete value converted as the primitive converts it (float -> int saturates,
    NaN -> 0), not as NumPy's astype does."""
    return lax.primitives.convert_element_type_p.impl(
        np.asarray(value), new_dtype=np.dtype(dtype), weak_type=False)


def _python_value(x):
    """The Python scalar a weakly typed jitviz Array was made from, else `x`."""
    py = getattr(x, "py_value", None) if isinstance(x, Array) else None
    return x if py is None else py


def _python_literal(x):
    """The Python scalar of a staged literal (`jnp.array(0.1)` inside a trace), else None."""
    if is_traced(x) and isinstance(x._var, Literal) and type(x._var.val) in PYTHON_SCALARS:
        return x._var.val
    return None


def promote(*args, inexact: bool = False, numeric: bool = False):
    """Convert arguments to their JAX-promoted common dtype; `inexact` then makes integers
    and booleans floating (JAX's promote_args_inexact), `numeric` makes booleans int32
    (promote_args_numeric: arithmetic that has no boolean form)."""
    args = [_scalarize(a) for a in args]
    if len(args) == 1 and not (inexact or numeric):
        return args  # JAX's promote_dtypes leaves a lone operand's type (a weak bool) alone
    avals = [lax.aval_of(a) for a in args]
    dt, weak = dtypes.result_type(*[(a.dtype, a.weak_type) for a in avals])
    if inexact:
        dt = dtypes.to_inexact(dt)
    elif numeric:
        dt = dtypes.to_numeric(dt)
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
    # size-1 dimensions stay in broadcast_dimensions: broadcast_in_dim stretches them
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote_rank(x, ndim):
    """Add leading size-1 dimensions (JAX's rank promotion before an elementwise op)."""
    shape = lax.aval_of(x).shape
    if len(shape) in (0, ndim):
        return x
    lead = ndim - len(shape)
    return lax.broadcast_in_dim(x, (1,) * lead + shape, tuple(range(lead, ndim)))


def broadcast_args(*args, keep_scalars: bool = True):
    """Make operands fit an elementwise primitive. With `keep_scalars` (what jnp's binary
    functions do, as in JAX) only the rank is promoted: scalars stay scalars and size-1
    dimensions are left for the primitive to stretch. Otherwise broadcast fully."""
    shapes = [lax.aval_of(a).shape for a in args]
    if keep_scalars:
        # operands of one rank: the primitive's rule checks the sizes (JAX's TypeError, "add
        # got incompatible shapes for broadcasting"); of several ranks, JAX's rank promotion
        # checks them first (its ValueError). Both name the line and the arguments.
        if len({len(s) for s in shapes if s}) > 1:
            _broadcast_shape(shapes, args)
        return [promote_rank(a, max(map(len, shapes))) for a in args]
    target = _broadcast_shape(shapes, args)
    return [a if s == target else broadcast_to_shape(a, target) for a, s in zip(args, shapes)]


def _broadcast_shape(shapes, args):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise explain.operand_error(ValueError(
            f"Incompatible shapes for broadcasting: shapes={shapes}"), args) from None


def canonical_axis(axis, ndim, what="axis"):
    axis = operator.index(explain.concrete_or_error(
        axis, f"It arose in the {what} argument, which must be a static integer."))
    if not -ndim <= axis < ndim:  # a 0-d array has no axis 0 either (JAX's ValueError)
        raise np.exceptions.AxisError(f"{what} {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return axis % ndim


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
            raise explain.concretization_error(
                d, "concrete", context="Shapes must be 1D sequences of concrete values of "
                f"integer type; {context} got a traced value in its shape.")
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(f"{context}: shape entries must be integers, got {d!r}") from None
        if out[-1] < 0 and out[-1] != -1:
            raise ValueError(f"{context}: negative dimension {out[-1]} in shape")
    return tuple(out)


def wrap_result(x):
    """Concrete results are jitviz Arrays (a Python scalar typed as JAX types it, weakly);
    tracers pass through. For functions that may return their operand unchanged."""
    if is_traced(x) or isinstance(x, Array):
        return x
    if type(x) in PYTHON_SCALARS:
        dt, weak = dtypes.python_scalar_dtype(x)
        return as_array(np.asarray(x, dt), weak, py_value=x if weak else None)
    return as_array(x)


def unchanged(x):
    """The operand `x` returned unchanged by a function that JAX wraps in `jit` (`jnp.ceil`
    of an integer, `real` of a real, `squeeze` with nothing to squeeze, `clip` without
    bounds...): inside a trace JAX's result is a tracer whatever the operand, a constant
    included, so inside jit `jnp.ceil(-2**31)` is not a concrete exponent for `jnp.power`
    (seed 33007720: jitviz raised integer_pow's error where JAX computes `pow`), nor is
    `jnp.real(W)` of a global a static value. Outside a trace, an Array (a Python scalar or
    NumPy array becomes one)."""
    return stage(wrap_result(x))


def converted(x, original):
    """`x`, the result of converting `original`: JAX binds `convert_element_type` even for
    a constant, so inside a trace it is a tracer, unless nothing changed and `original` is
    an Array (JAX returns that operand itself)."""
    if x is original and isinstance(original, Array):
        return x
    return stage(wrap_result(x))
