"""`jax.ops`: segment reductions, `out[segment_ids[i]] op= data[i]` over the leading axis.

    jitviz.ops.segment_sum(data, segment_ids, num_segments=3)

Each is a scatter (`out.at[segment_ids].add(data)`, `.max`, `.min`, `.multiply`) into an
array of `num_segments` rows filled with the operation's identity, as JAX builds them: an
empty segment holds that identity (0, 1, -inf or +inf; the dtype's smallest or largest
integer; False or True), and an id outside [0, num_segments), negative ones included, is
dropped (JAX's FILL_OR_DROP mode). `num_segments` must be given under `jit` (the number of
rows is a shape); without it, it is `max(segment_ids) + 1`, read from concrete ids.
`bucket_size` (JAX's way of splitting the scatter for speed) changes nothing here, and
`indices_are_sorted`/`unique_indices` are accepted as promises jitviz does not need.
"""
from __future__ import annotations

import numpy as np

from . import numpy as jnp
from .core.explain import concrete_or_error
from .dtypes import highest, lowest
from .numpy._core import aval


# what an empty segment holds, by the scatter method that fills the others
_IDENTITY = {"add": lambda dt: 0, "multiply": lambda dt: 1, "max": lowest, "min": highest}


def _identity(op: str, dtype):
    """The operation's identity in `dtype` (a complex one as JAX's: -inf + 0j for max)."""
    return np.real(_IDENTITY[op](np.dtype(dtype)))


def _segment(name: str, op: str, data, segment_ids, num_segments, mode):
    data, ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if aval(ids).dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must be integers, got {aval(ids).dtype.name}")
    if aval(ids).ndim != 1 or aval(ids).shape[0] != aval(data).shape[0]:
        raise ValueError(f"{name}: segment_ids must be one id per row of data: got shape "
                         f"{aval(ids).shape} for data of shape {aval(data).shape}")
    if num_segments is None:
        concrete_or_error(ids, f"{name}() without num_segments (the number of rows of its "
                               "result is a shape): pass num_segments=")
        num_segments = int(np.max(np.asarray(ids), initial=-1)) + 1
    num_segments = int(concrete_or_error(num_segments, f"{name}() `num_segments` argument"))
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    if mode not in (None, "drop", "fill"):
        raise NotImplementedError(f"{name}: mode={mode!r}; jitviz drops out-of-range ids "
                                  "(mode=None, JAX's default FILL_OR_DROP)")
    dtype = aval(data).dtype
    if dtype == np.bool_ and op in ("add", "multiply"):  # JAX's scatter_add/mul refuse them
        lax_name = "add" if op == "add" else "mul"
        raise TypeError(f"{lax_name} does not accept dtype bool at position 0. Accepted dtypes "
                        "at position 0 are subtypes of integer, floating, complexfloating.")
    out = jnp.full((num_segments,) + tuple(aval(data).shape[1:]), _identity(op, dtype), dtype)
    # a negative id is out of range here, not counted from the end
    ids = jnp.where(ids < 0, num_segments, ids)
    return getattr(out.at[ids], op)(data, mode="drop")


def _segment_reduction(name: str, op: str, doc: str):
    """A `jax.ops` segment function with JAX's signature (the promises `indices_are_sorted`,
    `unique_indices` and `bucket_size` accepted, and unneeded)."""
    def segment(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
        return _segment(name, op, data, segment_ids, num_segments, mode)
    segment.__name__ = segment.__qualname__ = name
    segment.__doc__ = doc
    return segment


segment_sum = _segment_reduction(
    "segment_sum", "add",
    "Sums of `data`'s rows by segment: `out[k] = sum(data[i] for segment_ids[i] == k)`.")
segment_prod = _segment_reduction(
    "segment_prod", "multiply", "Products of `data`'s rows by segment (1 for an empty segment).")
segment_max = _segment_reduction(
    "segment_max", "max",
    "Maxima of `data`'s rows by segment (-inf, or the smallest integer, when empty).")
segment_min = _segment_reduction(
    "segment_min", "min",
    "Minima of `data`'s rows by segment (+inf, or the largest integer, when empty).")


__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
