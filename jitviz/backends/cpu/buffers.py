"""Recycled output arrays for large results.

A fresh 100 MB NumPy array costs more than computing into it: the kernel zeroes every page on
first touch (page faults), then the loop writes it again. XLA avoids this with its buffer
allocator; so do we. Outputs of at least `MIN_BYTES` are arrays kept in a small pool, one list
per (shape, dtype): a kernel's driver takes one that nothing else references and writes into
it, and the user's result is a view of it (`jit._wrap`), as is every view of that result; so
while any of them lives, the pooled array's reference count says so, and when the last dies
the array is free again, its pages still mapped. No finalizer and no object per call: taking an
array is a dictionary lookup and a reference count, which matters because every call after a
large kernel runs with the caches cold (the kernel's data has evicted the code and objects a
call touches), where each step costs several times its warm time.

Until 2026-11-27 the pool lent raw buffers through an object whose death gave them back
(`__array_interface__` and `__del__`; before that a ctypes array and a `weakref.finalize`). After
a 16 MB copy, handing out one of those cost 30-43 us, and `np.empty` 14 us; so from that day
outputs below 32 MiB were `np.empty`'s (glibc's heap reuses freed blocks below its mmap
threshold, which rises to 32 MiB). Taking a pooled array costs less than either.

Results are ordinary writable arrays; an array is handed out again only when nothing but the
pool references it. The pool is bounded (`MAX_PER_SIZE` arrays per shape and dtype,
`MAX_POOLED_BYTES` in all: the least recently used shapes go first), thread-safe, and can be
disabled with `JITVIZ_BUFFER_POOL=0`. It relies on CPython's reference counts, so it is off
where they are not exact (a free-threaded build runs without the GIL).
"""
from __future__ import annotations

import collections
import os
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 18
MAX_POOLED_BYTES = 1 << 30
MAX_PER_SIZE = 4
# references to a free pooled array while `empty` looks at it: its list's, the loop
# variable's and sys.getrefcount's argument
_FREE_REFS = 3

_lock = threading.Lock()
_pool: "collections.OrderedDict[tuple, list[np.ndarray]]" = collections.OrderedDict()
_pooled_bytes = 0
enabled = os.environ.get("JITVIZ_BUFFER_POOL", "1") != "0" and \
    getattr(sys, "_is_gil_enabled", lambda: True)()


def empty(shape, dtype) -> np.ndarray:
    """Like `np.empty`: an array from the pool that nothing else references, when the array
    is large (a new one, pooled, if every pooled one of its shape is in use)."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if not enabled or nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    key = (tuple(shape), dtype)
    with _lock:  # (checked and handed out under it: two threads never share an array)
        arrays = _pool.get(key)
        if arrays is not None:
            _pool.move_to_end(key)
            for a in arrays:
                if sys.getrefcount(a) == _FREE_REFS:
                    return a
        a = np.empty(key[0], dtype)
        _keep(key, a, nbytes)
        return a


def _keep(key, a, nbytes):
    """Pool `a` if its shape has room, evicting the least recently used shapes for space."""
    global _pooled_bytes
    arrays = _pool.setdefault(key, [])
    if len(arrays) >= MAX_PER_SIZE or nbytes > MAX_POOLED_BYTES:
        return
    while _pooled_bytes + nbytes > MAX_POOLED_BYTES:
        _, old = _pool.popitem(last=False)
        _pooled_bytes -= sum(x.nbytes for x in old)
        if old is arrays:  # (its own list was the oldest: start it again)
            arrays = _pool[key] = []
    arrays.append(a)
    _pooled_bytes += nbytes


def clear():
    """Drop every pooled array (arrays still in use stay with their users)."""
    global _pooled_bytes
    with _lock:
        _pool.clear()
        _pooled_bytes = 0


def pooled_bytes() -> int:
    return _pooled_bytes
