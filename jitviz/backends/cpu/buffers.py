"""Recycled output buffers for large results.

A fresh 100 MB NumPy array costs more than computing into it: the kernel zeroes every page
on first touch (page faults), then the loop writes it again. XLA avoids this with its buffer
allocator; so do we. Outputs of at least `MIN_BYTES` are carved from raw buffers kept in a
small pool: when the last view of a result dies, its buffer goes back to the pool (a
`weakref.finalize` on a ctypes object that every view keeps alive), and the next call of the
same size writes into memory that is already mapped.

Results are ordinary writable NumPy arrays; a buffer is handed out again only after nothing
can reach it. The pool is bounded (`MAX_POOLED_BYTES`), thread-safe, and can be disabled with
`JITVIZ_BUFFER_POOL=0`.
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref

import numpy as np

MIN_BYTES = 1 << 20
MAX_POOLED_BYTES = 1 << 30
MAX_PER_SIZE = 4
ALIGN = 64

_lock = threading.Lock()
_free: dict[int, list[np.ndarray]] = {}
_pooled_bytes = 0
_ctypes_types: dict[int, type] = {}
enabled = os.environ.get("JITVIZ_BUFFER_POOL", "1") != "0"


def empty(shape, dtype) -> np.ndarray:
    """Like `np.empty`, from the pool when the array is large."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if not enabled or nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    raw = _take(nbytes)
    if raw is None:
        raw = np.empty(nbytes + ALIGN, np.uint8)
    start = (-raw.ctypes.data) % ALIGN
    holder = _ctype(nbytes).from_address(raw.ctypes.data + start)
    weakref.finalize(holder, _give_back, raw, nbytes)  # keeps `raw` alive until then
    return np.frombuffer(holder, dtype).reshape(shape)


def _ctype(nbytes):
    t = _ctypes_types.get(nbytes)
    if t is None:
        t = _ctypes_types[nbytes] = ctypes.c_char * nbytes
    return t


def _take(nbytes):
    global _pooled_bytes
    with _lock:
        bucket = _free.get(nbytes)
        if not bucket:
            return None
        _pooled_bytes -= nbytes
        return bucket.pop()


def _give_back(raw, nbytes):
    global _pooled_bytes
    with _lock:
        bucket = _free.setdefault(nbytes, [])
        if len(bucket) < MAX_PER_SIZE and _pooled_bytes + nbytes <= MAX_POOLED_BYTES:
            bucket.append(raw)
            _pooled_bytes += nbytes


def clear():
    """Drop every pooled buffer (returns the memory to the system)."""
    global _pooled_bytes
    with _lock:
        _free.clear()
        _pooled_bytes = 0


def pooled_bytes() -> int:
    return _pooled_bytes
