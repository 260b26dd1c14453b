"""`jitviz.Array`: the concrete arrays jitviz returns — NumPy arrays that also know their
weak type and have `block_until_ready()`, so code written for JAX runs unchanged."""
from __future__ import annotations

import numpy as np


class Array(np.ndarray):
    """A NumPy array returned by jitviz (eager `jitviz.numpy` and jitted functions)."""

    weak_type = False
    # Made by jitviz.numpy while a trace was running (a 0-d one is then inlined as a literal,
    # as JAX does; a 0-d Array made before the trace and closed over is a constvar).
    in_trace = False
    py_value = None  # the Python scalar `jnp.array(0.1)` was made from (printed `0.1`)
    derived_from = None  # the user's value this one was converted from (for const origins)
    # A new Array (a view, a NumPy result) starts with an empty instance dict, so it has the
    # defaults above: strongly typed, like any NumPy array. No `__array_finalize__` to reset
    # them: NumPy would call it, in Python, for every view, and every jitted call makes one.

    def copy(self, order="C"):
        """A copy that keeps the weak type (`x.copy()` of a weak value is weak in JAX)."""
        out = np.ndarray.copy(self, order)
        out.weak_type, out.in_trace = self.weak_type, self.in_trace
        return out

    def block_until_ready(self):
        """CPU results are ready when returned; kept for code written for JAX."""
        return self

    def __repr__(self):
        return array_repr(self, self.weak_type, "Array(")

    def __reduce__(self):  # pickle as a plain ndarray plus the flag
        return (_rebuild, (np.asarray(self), self.weak_type))

    @property
    def T(self):  # noqa: N802  (NumPy's and JAX's name)
        return _keeping_weak_type(np.ndarray.transpose)(self)


def _keeping_weak_type(method):
    """An ndarray method that only rearranges elements, keeping the weak type (JAX's reshape
    or transpose of a weakly typed value is weak; NumPy's view of an Array would be strong)."""
    def rearrange(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        if isinstance(out, Array):
            out.weak_type = self.weak_type
        return out
    rearrange.__name__ = rearrange.__qualname__ = method.__name__
    rearrange.__doc__ = method.__doc__
    return rearrange


for _name in ("reshape", "ravel", "flatten", "transpose", "swapaxes", "squeeze"):
    setattr(Array, _name, _keeping_weak_type(getattr(np.ndarray, _name)))


def array_repr(value, weak_type: bool, prefix: str) -> str:
    """JAX's repr: NumPy's text of the values, then the dtype (always) and the weak type; an
    empty array names its shape (NumPy 2 would also add `shape=` to every summarized array,
    which JAX does not). `prefix` is `Array(` or, for a mutable array, `Ref(` (whose rows JAX
    still aligns under `Array(`)."""
    arr = np.asarray(value).view(np.ndarray)
    if arr.size == 0:
        body = f"[], shape={arr.shape}"
    else:
        body = np.array2string(arr, separator=", ", prefix="Array(")
    weak = ", weak_type=True" if weak_type else ""
    return f"{prefix}{body}, dtype={arr.dtype.name}{weak})"


def _rebuild(arr, weak):
    out = arr.view(Array)
    out.weak_type = weak
    return out


def as_array(value, weak_type: bool = False, py_value=None, derived_from=None) -> Array:
    from .core.trace import current_trace
    out = np.asarray(value).view(Array)
    out.weak_type = weak_type
    out.in_trace = current_trace() is not None
    out.py_value = py_value
    out.derived_from = derived_from
    return out
