"""Python operators and ndarray methods on tracers, and NumPy dispatch (NEP 13/18): a NumPy
function or ufunc called on a traced value runs the `jitviz.numpy` function of that name."""
from __future__ import annotations

import sys

import numpy as np

from ..array import Array
from ..core.source import source_info_of_frame, user_frame
from ..core.trace import Tracer, current_trace
from ..errors import UnsupportedOperationError
from . import indexing, linalg, reductions, ufuncs, updates

jnp = sys.modules[__package__]
# `jnp.shape` is the function: reach the module through sys.modules
shape = sys.modules[__package__ + ".shape"]


def _swap(f):
    return lambda self, other: f(other, self)


def _defer(f):
    """Binary operators return NotImplemented for objects jitviz does not know (so their
    reflected operator can run), as ndarray does."""
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return f(self, other)
    return op


def _is_operand(x):
    return isinstance(x, (Tracer, np.ndarray, np.generic, int, float, complex, bool, list,
                          tuple))


_BINARY = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "pow": ufuncs.power, "matmul": linalg.matmul, "and": ufuncs.bitwise_and,
    "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor, "lshift": ufuncs.left_shift,
    "rshift": ufuncs.right_shift, "divmod": ufuncs.divmod_,
}
for _name, _f in _BINARY.items():
    setattr(Tracer, f"__{_name}__", _defer(_f))
    setattr(Tracer, f"__r{_name}__", _defer(_swap(_f)))
for _name, _f in {"lt": ufuncs.less, "le": ufuncs.less_equal, "gt": ufuncs.greater,
                  "ge": ufuncs.greater_equal, "eq": ufuncs.equal, "ne": ufuncs.not_equal}.items():
    setattr(Tracer, f"__{_name}__", _defer(_f))
Tracer.__neg__ = lambda self: ufuncs.negative(self)
Tracer.__pos__ = lambda self: ufuncs.positive(self)
Tracer.__abs__ = lambda self: ufuncs.absolute(self)
Tracer.__invert__ = lambda self: ufuncs.invert(self)


# A concrete Array's operators follow JAX's promotion and weak types, inside a trace and out,
# through the same jnp functions as a tracer's: `jnp.arange(3) + 1.5` is float32 eagerly as
# under jit (NumPy would make it float64).
for _name, _f in _BINARY.items():
    if _name != "divmod":
        setattr(Array, f"__{_name}__", _defer(_f))
        setattr(Array, f"__r{_name}__", _defer(_swap(_f)))
Array.__divmod__ = _defer(ufuncs.divmod_)
Array.__rdivmod__ = _defer(_swap(ufuncs.divmod_))
for _name, _f in {"lt": ufuncs.less, "le": ufuncs.less_equal, "gt": ufuncs.greater,
                  "ge": ufuncs.greater_equal, "eq": ufuncs.equal, "ne": ufuncs.not_equal}.items():
    setattr(Array, f"__{_name}__", _defer(_f))
Array.__neg__ = lambda self: ufuncs.negative(self)
Array.__pos__ = lambda self: ufuncs.positive(self)
Array.__abs__ = lambda self: ufuncs.absolute(self)
Array.__invert__ = lambda self: ufuncs.invert(self)


def _round(self, ndigits=None):
    """round(x): JAX's __round__ gives the default integer type without ndigits (as
    Python's round of a float gives an int), x's type with them."""
    out = ufuncs.round(self, ndigits or 0)
    if ndigits is None:
        from .. import dtypes
        from ._core import to_dtype
        return to_dtype(out, dtypes.default_int())
    return out


Tracer.__round__ = _round
Array.__round__ = _round
Tracer.__getitem__ = lambda self, idx: indexing.getitem(self, idx)


def _array_getitem(self, idx):
    """A concrete jitviz Array indexes as NumPy does, except where NumPy cannot: a traced
    index (`jit(lambda i: table[i])`) makes the Array a constant of the trace, and an
    out-of-bounds index is clamped by JAX (`x[10]` of 5 elements is `x[4]`), so jitviz's
    indexing takes over and follows JAX (also in its errors). Inside a trace it indexes as
    JAX's Array does (weak types kept), like the operators (`_jax_while_tracing`)."""
    if current_trace() is not None or _has_tracer(idx):
        return indexing.getitem(self, idx)
    try:
        return np.ndarray.__getitem__(self, idx)
    except IndexError:
        return indexing.getitem(self, idx)


def _has_tracer(idx):
    entries = idx if isinstance(idx, (tuple, list)) else (idx,)
    return any(isinstance(e, Tracer) or (isinstance(e, (tuple, list)) and _has_tracer(e))
               or (isinstance(e, slice) and _has_tracer((e.start, e.stop, e.step)))
               for e in entries)


def _array_iter(self):
    """Rows one at a time. ndarray iterates by indexing until IndexError, which a clamped
    index never raises: the row count bounds the loop instead."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (np.ndarray.__getitem__(self, i) for i in range(self.shape[0]))


Array.__getitem__ = _array_getitem
Array.__iter__ = _array_iter


def _setitem(self, idx, value):
    raise TypeError(f"'{type(self).__name__}' object does not support item assignment. jitviz "
                    "arrays are immutable, as JAX arrays are. Instead of `x[idx] = y`, use "
                    "`x = x.at[idx].set(y)` or another .at[] method (add, multiply, min, max, "
                    "divide, power, apply), or jnp.where(mask, y, x).")


def _rebinding(op):
    """`x += y` on an immutable array makes a new array and rebinds the name, as in JAX:
    `b = a; b += 1` leaves `a` alone."""
    return lambda self, other: op(self, other)


Tracer.__setitem__ = _setitem
Array.__setitem__ = _setitem
Tracer.at = Array.at = property(updates.IndexUpdateHelper,
                                doc="Functional index updates: `x.at[idx].set(y)` (see "
                                    "jitviz.numpy.updates).")
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
              "or", "xor", "lshift", "rshift"):
    setattr(Array, f"__i{_name}__", _rebinding(getattr(Array, f"__{_name}__")))

# ndarray-style methods
Tracer.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.sum(self, axis, dtype, out, keepdims, **kw)
Tracer.prod = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.prod(self, axis, dtype, out, keepdims, **kw)
Tracer.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: \
    reductions.mean(self, axis, dtype, out, keepdims, **kw)
Tracer.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
    reductions.var(self, axis, dtype, out, ddof, keepdims, **kw)
Tracer.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: \
    reductions.std(self, axis, dtype, out, ddof, keepdims, **kw)
Tracer.max = lambda self, axis=None, out=None, keepdims=False, **kw: \
    reductions.max(self, axis, out, keepdims, **kw)
Tracer.min = lambda self, axis=None, out=None, keepdims=False, **kw: \
    reductions.min(self, axis, out, keepdims, **kw)
Tracer.argmax = lambda self, axis=None, out=None, keepdims=False: \
    reductions.argmax(self, axis, out, keepdims)
Tracer.argmin = lambda self, axis=None, out=None, keepdims=False: \
    reductions.argmin(self, axis, out, keepdims)
Tracer.any = lambda self, axis=None, out=None, keepdims=False: \
    reductions.any(self, axis, out, keepdims)
Tracer.all = lambda self, axis=None, out=None, keepdims=False: \
    reductions.all(self, axis, out, keepdims)
Tracer.cumsum = lambda self, axis=None, dtype=None: reductions.cumsum(self, axis, dtype)
Tracer.cumprod = lambda self, axis=None, dtype=None: reductions.cumprod(self, axis, dtype)
Tracer.reshape = lambda self, *args, order="C", **kw: shape.reshape(self, *args, order=order,
                                                                     **kw)
Tracer.ravel = lambda self, order="C": shape.ravel(self, order)
Tracer.flatten = Tracer.ravel
Tracer.transpose = lambda self, *axes: shape.transpose(
    self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else (axes or None))
Tracer.swapaxes = lambda self, a, b: shape.swapaxes(self, a, b)
Tracer.squeeze = lambda self, axis=None: shape.squeeze(self, axis)
Tracer.T = property(lambda self: shape.transpose(self))
Tracer.mT = property(lambda self: shape.swapaxes(self, -1, -2))
Tracer.astype = lambda self, dtype, copy=False: jnp.astype(self, dtype)
Tracer.clip = lambda self, min=None, max=None: ufuncs.clip(self, min, max)
Tracer.round = lambda self, decimals=0: ufuncs.round(self, decimals)
Tracer.dot = lambda self, other: linalg.dot(self, other)
Tracer.conj = lambda self: ufuncs.conjugate(self)
Tracer.conjugate = Tracer.conj
Tracer.real = property(lambda self: ufuncs.real(self))
Tracer.imag = property(lambda self: ufuncs.imag(self))
Tracer.copy = lambda self: self
Tracer.take = lambda self, indices, axis=None, mode=None, fill_value=None: \
    indexing.take(self, indices, axis, mode, fill_value)
Tracer.nonzero = lambda self, *, size=None, fill_value=None: indexing.nonzero(
    self, size=size, fill_value=fill_value)


# --- NumPy dispatch -------------------------------------------------------------------------

_UFUNC_ALIASES = {"absolute": "absolute", "divide": "true_divide", "conjugate": "conjugate",
                  "bitwise_invert": "invert", "power": "power"}
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def _unsupported(what, fix):
    src = source_info_of_frame(user_frame(sys._getframe(2)))
    where = f"\n  at {src.file}:{src.line}: {src.code}" if src else ""
    return UnsupportedOperationError(f"{what} cannot be traced by jitviz.{where}\n{fix}")


def _jnp_function(name):
    f = getattr(jnp, name, None)
    return f if callable(f) and not isinstance(f, type) else None


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if kwargs.get("out") is not None:
        raise _unsupported(f"numpy.{ufunc.__name__}(..., out=...)",
                           "Traced arrays are immutable: drop out= and use the returned value.")
    kwargs.pop("out", None)
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method == "__call__":
        f = _jnp_function(name)
        if f is not None and not kwargs:
            return f(*inputs)
    elif method == "reduce" and ufunc.__name__ in _REDUCE:
        return getattr(jnp, _REDUCE[ufunc.__name__])(*inputs, **kwargs)
    elif method == "accumulate" and ufunc.__name__ in _ACCUMULATE:
        return getattr(jnp, _ACCUMULATE[ufunc.__name__])(*inputs, **kwargs)
    raise _unsupported(f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else
                                                      f".{method}") +
                       (f" with arguments {sorted(kwargs)}" if kwargs else ""),
                       "Use an equivalent jitviz.numpy function, or compute this outside "
                       "the jitted function.")


def _array_function(self, func, types, args, kwargs):
    f = _jnp_function(func.__name__)
    if f is None or getattr(np, func.__name__, None) is not func:
        module = getattr(func, "__module__", None) or "numpy"
        raise _unsupported(
            f"{module}.{func.__name__}",
            f"jitviz.numpy has no {func.__name__}: use supported functions (see "
            "dir(jitviz.numpy)), mark the argument static (static_argnums) if it is a "
            "configuration value, or compute this outside the jitted function.")
    return f(*args, **kwargs)


# the same for a concrete Array's methods (x.argmax() is JAX's int32, x.sum() of int32 is
# int32; `np.sum(x)` calls x.sum, so it is JAX's too, as with a JAX array)
for _name in ("sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any",
              "all", "cumsum", "cumprod", "astype", "clip", "round", "dot", "take", "squeeze",
              "ravel", "flatten", "swapaxes", "transpose"):
    setattr(Array, _name, getattr(Tracer, _name))
Tracer.__array_ufunc__ = _array_ufunc

# The ufunc behind each binary operator. A NumPy scalar's operator with an Array on its right
# (`np.float64(2) * x`, `np.sqrt(2.0) * x`) reaches the Array only as this ufunc call, which a
# JAX array answers with its reflected operator: JAX's promotion, float32 here.
_OPERATOR_UFUNCS = {
    np.add: ufuncs.add, np.subtract: ufuncs.subtract, np.multiply: ufuncs.multiply,
    np.true_divide: ufuncs.true_divide, np.floor_divide: ufuncs.floor_divide,
    np.remainder: ufuncs.remainder, np.power: ufuncs.power, np.matmul: linalg.matmul,
    np.bitwise_and: ufuncs.bitwise_and, np.bitwise_or: ufuncs.bitwise_or,
    np.bitwise_xor: ufuncs.bitwise_xor, np.left_shift: ufuncs.left_shift,
    np.right_shift: ufuncs.right_shift, np.divmod: ufuncs.divmod_, np.less: ufuncs.less,
    np.less_equal: ufuncs.less_equal, np.greater: ufuncs.greater,
    np.greater_equal: ufuncs.greater_equal, np.equal: ufuncs.equal,
    np.not_equal: ufuncs.not_equal,
}


def _concrete_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs on concrete Arrays. A NumPy scalar's operator computes as JAX's reflected
    operator (see _OPERATOR_UFUNCS); any other ufunc (`np.exp(x)`) computes with NumPy and
    returns a NumPy array, as it does on a JAX array (which NumPy converts with __array__)."""
    if any(isinstance(x, Tracer) for x in inputs):
        return NotImplemented  # the tracer's __array_ufunc__ traces it
    if (method == "__call__" and not kwargs and ufunc in _OPERATOR_UFUNCS
            and any(isinstance(x, np.generic) for x in inputs)
            and all(isinstance(x, (Array, np.generic)) for x in inputs)):
        return _OPERATOR_UFUNCS[ufunc](*inputs)
    outs = kwargs.get("out") or ()
    if any(isinstance(o, Array) for o in outs):
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=...) cannot write into a jitviz "
                        "Array: Arrays are immutable, as JAX arrays are. Drop out= and use "
                        "the returned value.")
    plain = [x.view(np.ndarray) if isinstance(x, Array) else x for x in inputs]
    return getattr(ufunc, method)(*plain, **kwargs)


Array.__array_ufunc__ = _concrete_array_ufunc
Tracer.__array_function__ = _array_function


def _iter(self):
    """Rows one at a time, as JAX's `lax.index_in_dim`: a slice with explicit unit strides,
    then a squeeze (a Python loop over a tracer unrolls into these equations)."""
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    from .. import lax
    n, rest = self.ndim, tuple(self.shape[1:])

    def rows():
        for i in range(self.shape[0]):
            row = lax.slice(self, (i,) + (0,) * (n - 1), (i + 1,) + rest, (1,) * n)
            yield lax.squeeze(row, (0,))
    return rows()


Tracer.__iter__ = _iter
