"""What a jit cache entry is keyed by, and how two keys differ, in words and in kinds.

A key is the pytree structure of the arguments, each leaf's abstract value (shape, dtype,
weak_type), the static argument values, and the 64-bit switches (`enable_x64`,
`keep_float64`: they decide what the body's Python scalars and named dtypes become, as JAX's
x64 setting is part of its trace context). A miss is explained against the nearest cached key
(`nearest`), which is also what `jitviz.diff_with_previous` and the explorer compare with.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .array import Array
from .config import config
from .core.source import function_name
from .core.trace import is_device_array
from .state import Ref


class Key(NamedTuple):
    """One cache entry's key (the function object and jit's options pick the cache)."""
    treedef: object
    avals: tuple
    statics: tuple
    dtype_mode: tuple = ()  # (config.enable_x64, config.keep_float64) when traced


def dtype_mode() -> tuple:
    return (bool(config.enable_x64), bool(config.keep_float64))


def _mode_text(mode) -> str:
    return ", ".join(f"{name}={on}" for name, on in zip(("enable_x64", "keep_float64"), mode))


def signature_text(paths, avals, statics) -> str:
    """`x:f32[3], n=2`: how events and specializations name a key (`~`: weakly typed)."""
    parts = [f"{p}:{a.str_short()}{'~' if a.weak_type else ''}" for p, a in zip(paths, avals)]
    parts += [f"{name}={value!r}" for name, value in statics]
    return ", ".join(parts)


def check_hashable(statics, fun):
    """Raise a ValueError naming the static argument whose value cannot be part of a key."""
    for name, value in statics:
        try:
            hash(value)
        except TypeError:
            raise ValueError(
                f"static argument {name!r} of {function_name(fun)} is a "
                f"{type(value).__name__} ({_short_repr(value)}), which is not hashable: jit "
                "keys its cache on static values, so they must be hashable. Pass a tuple "
                "instead of a list, or make the argument traced (not static).") from None


def _short_repr(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def describe_key_change(old: Key, new: Key, old_paths, new_paths) -> str:
    """Why `new` missed the cache, relative to the closest entry `old`, in words."""
    if old.treedef != new.treedef:
        return _tree_change(old, new)
    reasons = []
    if old.dtype_mode != new.dtype_mode:
        reasons.append(f"the 64-bit switches changed from {_mode_text(old.dtype_mode)} to "
                       f"{_mode_text(new.dtype_mode)}")
    for path, a, b in zip(new_paths, old.avals, new.avals):
        if a == b:
            continue
        if a.same_type(b):
            reasons.append(f"argument '{path}' changed from "
                           f"{'weakly typed ' if a.weak_type else ''}{a.str_short()} to "
                           f"{'weakly typed ' if b.weak_type else ''}{b.str_short()}")
        else:
            reasons.append(f"argument '{path}' changed from {a.str_short()} to {b.str_short()}")
    olds = dict(old.statics)
    for name, value in new.statics:
        if name not in olds:
            reasons.append(f"static argument '{name}' is new ({_short_repr(value)})")
        elif olds[name] != value or type(olds[name]) is not type(value):
            reasons.append(f"static argument '{name}' changed from {_short_repr(olds[name])} to "
                           f"{_short_repr(value)}")
    return "; ".join(reasons) or "the cache entry was evicted or cleared"


def key_change_kinds(old: Key, new: Key) -> tuple:
    """What kind of change made `new` miss the cache next to `old`: some of "pytree",
    "shape", "dtype", "weak_type", "static"; ("evicted",) when nothing differs."""
    if old.treedef != new.treedef:
        return ("pytree",)
    kinds = {"dtype_mode"} if old.dtype_mode != new.dtype_mode else set()
    for a, b in zip(old.avals, new.avals):
        if a.shape != b.shape:
            kinds.add("shape")
        if a.dtype != b.dtype:
            kinds.add("dtype")
        if a.shape == b.shape and a.dtype == b.dtype and a.weak_type != b.weak_type:
            kinds.add("weak_type")
    if dict(old.statics) != dict(new.statics) or \
            [type(v) for _, v in old.statics] != [type(v) for _, v in new.statics]:
        kinds.add("static")
    order = ("shape", "dtype", "weak_type", "static", "dtype_mode")
    return tuple(k for k in order if k in kinds) or ("evicted",)


def _tree_change(old: Key, new: Key) -> str:
    diff = old.treedef.describe_difference(new.treedef)
    return f"pytree structure of the arguments changed: {diff}"


def key_distance(a: Key, b: Key) -> int:
    """How many leaf properties and static values differ (another pytree: far away)."""
    if a.treedef != b.treedef:
        return 1 << 20
    d = sum((x.shape != y.shape) + (x.dtype != y.dtype) + (x.weak_type != y.weak_type)
            for x, y in zip(a.avals, b.avals)) + (a.dtype_mode != b.dtype_mode)
    return d + sum(x != y for x, y in zip(a.statics, b.statics))


def fast_key(args, static_pos=frozenset()):
    """A cheap cache key for plain positional arrays and scalars (None: take the slow path).

    It determines the full key: the pytree is a flat tuple, each leaf's (shape, dtype,
    weak_type) follows from the entries below, and static values are part of it. The dtype
    switches, which pick what a float or a float64 array becomes, come first. Written for
    the cache hit after a large kernel, when every step runs with the caches cold: arrays
    take one test each and no call.
    """
    key = [config.enable_x64, config.keep_float64]
    for i, a in enumerate(args):
        t = type(a)
        if static_pos and i in static_pos:
            try:
                hash(a)
            except TypeError:
                return None  # the slow path raises the error naming the argument
            key.append(("static", t, a))
        elif t is np.ndarray:
            key.append((a.shape, a.dtype))
        elif t is Array:
            key.append((a.shape, a.dtype, a.weak_type))
        else:
            leaf = _leaf_key(a, t)
            if leaf is None:
                return None
            key.append(leaf)
    return tuple(key)


def _leaf_key(a, t):
    """fast_key's entry for a leaf that is not a NumPy array or an Array (None: no key)."""
    if t is float or t is int or t is bool or t is complex:
        return t
    if isinstance(a, np.generic):
        return a.dtype
    if t is Ref:  # a mutable array: its type is the key (state.RefAval)
        return (Ref, a.shape, a.dtype, a.weak_type)
    if is_device_array(a):  # (marked: the same key as a host Array would send the call
        return ("device", tuple(a.shape), np.dtype(a.dtype),  # down the host path)
                bool(getattr(a, "weak_type", False)))
    return None


def nearest(candidates, key: Key, key_of=lambda c: c.key):
    """The candidate whose key is nearest `key` (see `key_distance`); among equally near ones,
    the last in `candidates` (the most recent, in a list kept oldest first)."""
    return min(reversed(candidates), key=lambda c: key_distance(key_of(c), key))
