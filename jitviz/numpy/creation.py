"""Array creation: `array`, `asarray`, `zeros`, `ones`, `full`, `arange`, `linspace`, `eye`."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..array import Array, as_array
from ..core import explain
from ..core.trace import Tracer, stage
from ._core import aval, broadcast_to_shape, concrete_shape, to_dtype


def _has_tracer(obj) -> bool:
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_tracer(o) for o in obj)
    return False


def _from_python(obj, dtype):
    """Nested lists of numbers -> a NumPy array with JAX's default dtypes."""
    try:
        arr = np.array(obj)
    except ValueError as e:
        raise ValueError(f"jnp.array got a ragged nested sequence ({e}); every row must have "
                         "the same length") from None
    if arr.dtype == object:
        raise TypeError("jnp.array got a ragged nested sequence or objects that are not "
                        f"numbers: {_preview(obj)}")
    if arr.dtype.kind in "USV":
        raise TypeError(f"jnp.array cannot hold {arr.dtype.kind == 'U' and 'strings' or arr.dtype}"
                        f": {_preview(obj)}. jitviz arrays hold numbers only.")
    if dtype is None:  # JAX's promotion over the elements: Python numbers are weak
        dtypes.check_supported(arr.dtype, "jnp.array's input")
        dt, _ = dtypes.result_type(*[_element_type(v) for v in _flat_items(obj)] or
                                   [(dtypes.default_float(), False)])
        arr = arr.astype(dt)
    return arr


def _element_type(v):
    if type(v) in (bool, int, float, complex):
        return dtypes.python_scalar_dtype(v)
    return dtypes.canonicalize(np.asarray(v).dtype), False


def _preview(obj):
    r = repr(obj)
    return r if len(r) < 80 else r[:77] + "..."


def array(object, dtype=None, copy=True, order=None, ndmin=0):
    """Like `np.array`, with JAX's 32-bit defaults for Python numbers. Inside a trace the
    result is a tracer even for a constant (as in JAX), so computing with it is traced too:
    `jnp.array(x.shape).prod()` is a traced value, not a Python number."""
    return stage(_array(object, dtype, copy, ndmin))


def asarray(a, dtype=None, order=None, copy=None):
    """Like `array`, without copying concrete jitviz arrays of the right dtype: as in JAX,
    such an Array is returned itself, concrete even inside a trace."""
    out = _asarray(a, dtype)
    return out if out is a else stage(out)


def _array(object, dtype=None, copy=True, ndmin=0):
    """`jnp.array` without staging: what jitviz itself uses for constants."""
    dtype = dtypes.canonical_creation_dtype(dtype, "array")
    if _holds_none(object):  # JAX's class: a ValueError (other non-numbers are TypeErrors)
        where = "" if object is None else f" inside {_preview(object)}"
        raise ValueError(f"None is not a valid value for jnp.array (got None{where}): pass "
                         "numbers or arrays. A pytree class whose __init__ converts its "
                         "fields with jnp.asarray may be given None or object() by "
                         "transformations: leave those as they are")
    if isinstance(object, Tracer):
        out = object if dtype is None else to_dtype(object, dtype)
    elif isinstance(object, (list, tuple)) and _has_tracer(object):
        out = _stack_nested(object, dtype)
    elif isinstance(object, (bool, int, float, complex)) and not isinstance(object, np.generic):
        dt, weak = dtypes.python_scalar_dtype(object)
        if dtype is not None:
            dt, weak = dtype, False
        out = as_array(np.asarray(object, dt), weak, py_value=object if weak else None)
    elif isinstance(object, np.ma.MaskedArray):
        raise explain.masked_array_error("the input of jnp.array")
    elif isinstance(object, np.ndarray):
        # a NumPy float64 array is float32 without x64, as in JAX (silently, as JAX does;
        # jit's diagnostics say so for an argument)
        dt = dtypes.canonicalize(dtypes.check_supported(object.dtype, "jnp.array's input"))
        arr = np.array(object, dtype=dtype or dt, copy=True)
        out = as_array(arr, bool(getattr(object, "weak_type", False)) and dtype is None)
    elif isinstance(object, np.generic):
        dt = dtypes.canonicalize(dtypes.check_supported(object.dtype, "jnp.array's input"))
        out = as_array(np.asarray(object, dtype=dtype or dt))
    elif hasattr(object, "__array__") or hasattr(object, "__cuda_array_interface__"):
        return _array(np.asarray(object), dtype, copy, ndmin)
    elif isinstance(object, (list, tuple)):
        arr = _from_python(object, dtype)
        if dtype is not None and np.dtype(dtype).kind in "iu":
            # NumPy's (and JAX's) conversion of the numbers themselves: a NaN is a
            # ValueError, an infinity or a number out of range an OverflowError (a cast of
            # the float array would give INT_MIN silently)
            np.array(object, dtype=dtype)
        out = as_array(arr if dtype is None else arr.astype(dtype))
    elif isinstance(object, str):
        raise TypeError(f"jnp.array cannot hold strings: {object!r}. jitviz arrays hold numbers.")
    else:
        raise TypeError(f"jnp.array got an object of type {type(object).__name__}, which is "
                        "not an array, a number or a nested list of numbers")
    if ndmin and _ndim(out) < ndmin:
        from .shape import reshape
        out = reshape(out, (1,) * (ndmin - _ndim(out)) + tuple(_shape(out)))
    return out


def _holds_none(obj):
    """None itself, or None anywhere in nested lists/tuples."""
    if obj is None:
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_none(o) for o in obj)


def _ndim(x):
    return x.ndim


def _shape(x):
    return x.shape


def _asarray(a, dtype=None):
    if isinstance(a, Array) and (dtype is None or np.dtype(
            dtypes.canonical_creation_dtype(dtype, "asarray")) == a.dtype):
        return a
    return _array(a, dtype=dtype, copy=False)


def _stack_nested(obj, dtype):
    """A (nested) list holding traced values, built as JAX does: every element converted to
    the common dtype (strongly typed), given a leading axis, and concatenated."""
    from ._core import aval
    if dtype is None:
        dtype = dtypes.result_type(*[(aval(v).dtype, aval(v).weak_type)
                                     for v in _flat_items(obj)])[0]
    parts = [lax.expand_dims(_array(o, dtype), (0,)) for o in obj]
    if len({aval(p).shape for p in parts}) > 1:
        raise ValueError("jnp.array got a ragged nested sequence: the elements have shapes "
                         + ", ".join(str(aval(p).shape[1:]) for p in parts))
    return lax.concatenate(parts, 0)


def _flat_items(obj):
    if isinstance(obj, (list, tuple)):
        return [v for o in obj for v in _flat_items(o)]
    return [obj]


def full(shape, fill_value, dtype=None):
    shape = concrete_shape(shape, "jnp.full")
    dtype = dtypes.canonical_creation_dtype(dtype, "full")
    if dtype is None and not isinstance(fill_value, Tracer):
        fill_value = _array(fill_value)
    elif dtype is not None:
        fill_value = to_dtype(_array(fill_value) if not isinstance(fill_value, Tracer)
                              else fill_value, dtype)
    if np.ndim(fill_value) if not isinstance(fill_value, Tracer) else fill_value.ndim:
        return stage(broadcast_to_shape(fill_value, shape))
    # staged: inside a trace a filled array is a traced value, as in JAX (a 0-d one would
    # otherwise stay a concrete Array that, say, `jnp.power` takes as a static exponent)
    return stage(lax.broadcast_in_dim(fill_value, shape, ()))


def zeros(shape, dtype=None):
    return full(shape, 0, dtype or dtypes.default_float())


def ones(shape, dtype=None):
    return full(shape, 1, dtype or dtypes.default_float())


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, fill_value, dtype, shape):
    """full(shape of a, fill_value) in a's dtype; weakly typed when a is and no dtype is
    given (JAX's lax.full_like keeps the weak type)."""
    from ._core import aval, to_dtype
    av = aval(a)
    out = full(av.shape if shape is None else shape, fill_value, dtype or av.dtype)
    weak = dtype is None and av.weak_type and aval(fill_value).ndim == 0  # an array fill: strong
    return to_dtype(out, aval(out).dtype, True) if weak else out


def full_like(a, fill_value, dtype=None, shape=None):
    return _like(a, fill_value, dtype, shape)


def zeros_like(a, dtype=None, shape=None):
    return _like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like(a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """Like `np.arange`; the bounds must be concrete (they decide the shape). Built from
    `iota` as JAX does: `start + step * iota`."""
    start_name = "stop" if stop is None and step is None else "start"
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        explain.concrete_or_error(v, f"It arose in the jnp.arange argument '{name}'.")
    dtype = dtypes.canonical_creation_dtype(dtype, "arange")
    if dtype is None:
        bounds = [v for v in (start, stop, step) if v is not None]
        dtype = dtypes.result_type(*[_bound_type(v) for v in bounds])[0]
    if stop is None:
        start, stop = 0, start
    if step is not None:
        size = max(0, int(np.ceil((stop - start) / step)))
        steps = lax.mul(lax.convert_element_type(step, dtype), lax.iota(dtype, size))
        return lax.add(lax.convert_element_type(start, dtype), steps)
    if start == 0:
        return lax.iota(dtype, max(0, int(np.ceil(stop))))
    size = max(0, int(np.ceil(stop - start)))
    return lax.add(lax.convert_element_type(start, dtype), lax.iota(dtype, size))


def _bound_type(v):
    from ._core import aval
    av = aval(v)
    return av.dtype, av.weak_type


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """Evenly spaced numbers; `num` must be concrete, `start`/`stop` may be traced arrays.
    Computed as JAX does (`start * (1 - t) + stop * t`, which recovers both ends exactly;
    an integer dtype takes the floor), so integer results match JAX's."""
    num = int(explain.concrete_or_error(num, "It arose in the jnp.linspace argument 'num'."))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    from .ufuncs import add, floor, multiply, subtract, true_divide
    from .shape import concatenate, expand_dims
    start, stop = (v if isinstance(v, Tracer) else _array(v) for v in (start, stop))
    # JAX's default: the inexact form of start's and stop's promoted type (an int32 start
    # gives float32 with x64 too; Python numbers the default float)
    dtype = dtypes.canonical_creation_dtype(dtype, "linspace") or dtypes.to_inexact(
        dtypes.result_type(*[(aval(v).dtype, aval(v).weak_type) for v in (start, stop)])[0])
    computation = dtypes.to_inexact(dtype)
    start, stop = to_dtype(start, computation), to_dtype(stop, computation)
    bounds = np.broadcast_shapes(aval(start).shape, aval(stop).shape)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = bounds[:axis] + (1,) + bounds[axis:]
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = true_divide(subtract(stop, start), to_dtype(div, computation))
        real = np.dtype(np.finfo(computation).dtype)
        t = lax.reshape(lax.iota(real, div), (1,) * axis + (div,) + (1,) * len(bounds[axis:]))
        t = to_dtype(true_divide(t, to_dtype(div, real)), computation)
        out = add(multiply(_bounds_at(start, bounds, shape), subtract(1, t)),
                  multiply(_bounds_at(stop, bounds, shape), t))
        if endpoint:
            out = concatenate([out, expand_dims(broadcast_to_shape(stop, bounds), axis)], axis)
    elif num == 1:
        delta = to_dtype(np.nan, computation) if endpoint else subtract(stop, start)
        out = _bounds_at(start, bounds, shape)
    else:
        delta = to_dtype(np.nan, computation)
        out = zeros(shape[:axis] + (0,) + shape[axis + 1:], dtype)
    if np.dtype(dtype).kind in "iu" and aval(out).dtype.kind not in "iu":
        out = floor(out)
    out = to_dtype(out, dtype)
    return (out, delta) if retstep else out


def _bounds_at(x, bounds, shape):
    """start or stop, broadcast to the common bounds shape with the new axis inserted."""
    return lax.reshape(broadcast_to_shape(x, bounds), shape)


def _eye_size(v, name):
    """A size of jnp.eye: a concrete integer (JAX's TypeError for 2.5)."""
    v = explain.concrete_or_error(v, f"It arose in the jnp.eye argument '{name}'.")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got "
                        f"({v!r},). argument '{name}' of jnp.eye()") from None


def eye(N, M=None, k=0, dtype=None):
    N = _eye_size(N, "N")
    M = N if M is None else _eye_size(M, "M")
    k = explain.concrete_or_error(k, "It arose in the jnp.eye argument 'k'.")
    try:
        k = operator.index(k)
    except TypeError:
        raise ValueError(f"k must be a scalar integer; got {k!r}") from None
    dtype = dtypes.canonical_creation_dtype(dtype, "eye") or dtypes.default_float()
    rows = lax.broadcasted_iota(np.int32, (N, M), 0)
    cols = lax.broadcasted_iota(np.int32, (N, M), 1)
    rows = lax.add(rows, np.int32(k))  # JAX adds k even when it is 0
    return lax.convert_element_type(lax.eq(rows, cols), dtype)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)
