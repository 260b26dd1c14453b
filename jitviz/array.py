"""`jitviz.Array`: the concrete arrays jitviz returns — NumPy arrays that also know their
weak type and have `block_until_ready()`, so code written for JAX runs unchanged."""
from __future__ import annotations

import numpy as np


class Array(np.ndarray):
    """A NumPy array returned by jitviz (eager `jitviz.numpy` and jitted functions)."""

    weak_type = False

    def __array_finalize__(self, obj):
        # Results of NumPy operations on Arrays are strongly typed, like any NumPy array.
        self.weak_type = False

    def block_until_ready(self):
        """CPU results are ready when returned; kept for code written for JAX."""
        return self

    def __repr__(self):
        base = np.ndarray.__repr__(self.view(np.ndarray))
        body = base[len("array"):]
        if "dtype=" not in body:
            body = body[:-1] + f", dtype={self.dtype.name})"
        if self.weak_type:
            body = body[:-1] + ", weak_type=True)"
        return "Array" + body

    def __reduce__(self):  # pickle as a plain ndarray plus the flag
        return (_rebuild, (np.asarray(self), self.weak_type))


def _rebuild(arr, weak):
    out = arr.view(Array)
    out.weak_type = weak
    return out


def as_array(value, weak_type: bool = False) -> Array:
    out = np.asarray(value).view(Array)
    out.weak_type = weak_type
    return out
