"""`x.at[idx]`: JAX's functional index updates, on traced and concrete arrays alike.

`x.at[idx].set(v)` (and `.add`, `.multiply`, `.divide`, `.power`, `.min`, `.max`, `.apply`,
`.get`) returns a new array; `x` is unchanged. Any index `x[idx]` accepts works (ints, slices,
None, Ellipsis, integer and static boolean arrays, traced integers).

How: the index is applied, with the ordinary indexing code, to an array holding each element's
flat position, which gives the positions the update touches in the shape the values broadcast
to; one `scatter` along the flattened operand then writes them. Out-of-bounds indices follow
JAX's `mode`:
  - updates default to "drop" (an update at an out-of-bounds index is skipped): the indexed axes
    of the position array get one extra slot holding -1, every out-of-bounds index is sent to
    that slot, and scatter drops negative positions;
  - "clip" clamps the index, as plain indexing does (`get`'s default); "promise_in_bounds"
    leaves out-of-bounds behaviour to the implementation: updates drop and reads clamp, as
    XLA's scatter and gather do (and so JAX on the CPU);
  - "fill" for `get` reads `fill_value` (NaN, the most negative int, the largest unsigned
    int, True) where the index is out of bounds, through the same extra slot.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from ..core import explain
from ..lax import primitives as P
from ..core.trace import Tracer
from ._core import aval, promote
from .indexing import _expand_index, _is_bool_array, _is_int_scalar, getitem

MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


class IndexUpdateHelper:
    """What `x.at` returns; `x.at[idx]` names the elements an update changes."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """`x.at[idx]`: each method returns the updated copy of `x`."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        _check_mode(mode)
        (x,) = promote(self.array)
        if mode != "fill":
            return getitem(x, self.index)
        fill = _default_fill(aval(x).dtype) if fill_value is None else fill_value
        return _select_padded(x, self.index, fill)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(self.array, self.index, values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(self.array, self.index, values, "add", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(self.array, self.index, values, "mul", mode)

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(self.array, self.index, values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _scatter(self.array, self.index, values, "max", mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        # as JAX: x / (ones with the values multiplied in at idx)
        from .ufuncs import true_divide
        return true_divide(self.array, self._factors(values, mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        from .ufuncs import power
        return power(self.array, self._factors(values, mode))

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`func` applied to the indexed elements (each selected position once)."""
        (x,) = promote(self.array)
        positions = _positions(aval(x).shape, self.index, mode)
        flat = lax.reshape(x, (aval(x).size,))
        current = lax.gather(flat, [lax.max(positions, _zeros_like(positions))], (0,))
        return _scatter_positions(x, positions, func(current), "set")

    def _factors(self, values, mode):
        from .creation import ones_like
        (x,) = promote(self.array)
        return _scatter(ones_like(x), self.index, values, "mul", mode)


def _check_mode(mode):
    mode = getattr(mode, "name", mode)  # an enum in the style of lax.GatherScatterMode
    if isinstance(mode, str):
        mode = mode.lower()
    if mode not in MODES:
        raise ValueError(f"Unknown gather/scatter mode {mode!r}: use one of "
                         f"{', '.join(repr(m) for m in MODES[1:])}")
    return mode


def _scatter(array, index, values, how, mode):
    mode = _check_mode(mode)
    (x,) = promote(array)
    positions = _positions(aval(x).shape, index, mode)
    return _scatter_positions(x, positions, values, how)


def _scatter_positions(x, positions, values, how):
    from .shape import broadcast_to
    ax = aval(x)
    (v,) = promote(values)
    if aval(v).dtype != ax.dtype:  # as JAX: the values take the operand's dtype
        v = lax.convert_element_type(v, ax.dtype)
    try:
        v = broadcast_to(v, aval(positions).shape)
    except ValueError as e:
        raise ValueError(f"x.at[...].{_VERB[how]}(values): values of shape {aval(v).shape} "
                         f"cannot be broadcast to the indexed shape "
                         f"{aval(positions).shape}") from e
    count = int(np.prod(aval(positions).shape, dtype=np.int64))
    flat = lax.scatter(lax.reshape(x, (ax.size,)), lax.reshape(v, (count,)),
                       [lax.reshape(positions, (count,))], (0,), how)
    return lax.reshape(flat, ax.shape)


_VERB = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def _positions(shape, index, mode):
    """Flat positions of the elements `x[index]` names, in the shape of `x[index]`; -1 where
    an update is to be dropped."""
    size = int(np.prod(shape, dtype=np.int64))
    dtype = np.int32 if size < 2 ** 31 else np.int64
    # an iota, not a constant: the program does not carry an array the size of x (the
    # primitive itself: lax.iota would narrow an int64 position without x64)
    flat = lax.reshape(P.iota_p.bind(dtype=np.dtype(dtype), shape=(size,), dimension=0),
                       tuple(shape))
    if mode == "clip":
        return getitem(flat, index)
    return _select_padded(flat, index, dtype(-1))


def _select_padded(x, index, pad_value):
    """`x[index]`, except that an out-of-bounds integer index reads `pad_value`."""
    entries = _integer_entries(_expand_index(index, len(aval(x).shape)))
    axis, redirected = 0, []
    for e in entries:
        if e is None or isinstance(e, (bool, np.bool_)):  # these index no axis of x
            redirected.append(e)
            continue
        if not isinstance(e, slice):
            n = aval(x).shape[axis]
            x = _pad_axis(x, axis, pad_value)
            e = _redirect(e, n)
        redirected.append(e)
        axis += 1
    return getitem(x, tuple(redirected))


def _integer_entries(entries):
    """Static boolean masks as the integer arrays of their True positions (a traced one is
    JAX's NonConcreteBooleanIndexError, a 0-d one included)."""
    out = []
    for e in entries:
        if _is_bool_array(e) and isinstance(e, Tracer):
            raise explain.boolean_index_error(e)
        if _is_bool_array(e):
            out.extend(np.nonzero(e))
        else:
            out.append(e)
    return out


def _pad_axis(x, axis, value):
    from .creation import full
    shape = list(aval(x).shape)
    shape[axis] = 1
    pad = full(tuple(shape), value, dtype=aval(x).dtype)
    return lax.concatenate([x, pad], axis)


def _redirect(e, n):
    """Index `e` into an axis of `n` elements: negative ones from the end; out-of-bounds ones
    to position n (the pad slot)."""
    if _is_int_scalar(e):
        e = int(e)
        return e + n if -n <= e < 0 else (e if 0 <= e < n else n)
    if not isinstance(e, Tracer):
        arr = np.asarray(e)
        if arr.dtype.kind not in "iu":
            return arr  # getitem names the bad index type
        return _static_redirect(arr.astype(np.int64), n)
    from .indexing import _normalize_traced, where
    from .ufuncs import greater_equal, less, logical_and
    normalized = _normalize_traced(e, n)
    inside = logical_and(greater_equal(normalized, 0), less(normalized, n))
    return where(inside, normalized, lax.convert_element_type(n, aval(e).dtype))


def _static_redirect(arr, n):
    normalized = np.where(arr < 0, arr + n, arr)
    inside = (normalized >= 0) & (normalized < n)
    return np.where(inside, normalized, n).astype(np.int32)


def _zeros_like(x):
    return lax.broadcast_in_dim(np.zeros((), aval(x).dtype), aval(x).shape, ())


def _default_fill(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True
