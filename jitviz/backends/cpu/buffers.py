"""Recycled output buffers for large results.

A fresh 100 MB NumPy array costs more than computing into it: the kernel zeroes every page
on first touch (page faults), then the loop writes it again. XLA avoids this with its buffer
allocator; so do we. Outputs of at least `MIN_BYTES` are carved from raw buffers kept in a
small pool: when the last view of a result dies, its buffer goes back to the pool (the
views' base is a `_Lease`, which gives the buffer back as it dies), and the next call of the
same size writes into memory that is already mapped. (Until 2026-11-27 that base was a ctypes
array with a `weakref.finalize`: handing one out and taking it back made a 1M-float32 `x * 2`
14-19 us slower, 304-306 against 285-287 us on an Intel Xeon.)

Results are ordinary writable NumPy arrays; a buffer is handed out again only after nothing
can reach it. The pool is bounded (`MAX_POOLED_BYTES`), thread-safe, and can be disabled with
`JITVIZ_BUFFER_POOL=0`.

Smaller outputs are NumPy's own (`np.empty`), and where the C library is glibc "smaller" is
below 32 MiB: glibc maps a request above its mmap threshold afresh (page faults on every call)
but, when such a block is freed, raises the threshold to its size, up to 32 MiB on 64-bit. So
in a loop a fresh array under 32 MiB comes from heap memory that is already mapped, as the pool
would give, and costs less to hand out: the pool's Python bookkeeping runs with the caches
cold after a large kernel (measured after a 16 MB stream: `buffers.empty` 30-43 us, `np.empty`
14 us). 1M float32 `x * 2` through `jitviz.jit`, the pool and `np.empty` alternately (Intel
Xeon VM, 2026-11-27): 353 -> 334 us (20th percentile); 4M values: 1.28 ms both; 8M values
(32 MiB): 4.09 ms pooled, 6.15 ms from `np.empty`.
"""
from __future__ import annotations

import os
import threading

import numpy as np


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):  # not a GNU system
        return False


# outputs of at least this many bytes come from the pool (the module's docstring says why)
MIN_BYTES = 32 << 20 if _glibc() else 1 << 20
MAX_POOLED_BYTES = 1 << 30
MAX_PER_SIZE = 4
ALIGN = 64

# reentrant: a lease can die, and give its buffer back, in a garbage collection that an
# allocation inside the lock sets off on the same thread
_lock = threading.RLock()
_free: dict[int, list[np.ndarray]] = {}
_pooled_bytes = 0
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
        buffer = np.empty(nbytes + ALIGN, np.uint8)
        address = buffer.__array_interface__["data"][0]
        raw = (buffer, address + (-address) % ALIGN)
    return np.asarray(_Lease(raw, nbytes, tuple(shape), dtype))


class _Lease:
    """A result's memory, lent from `raw` (a buffer and its aligned address): NumPy makes the
    result from this object's `__array_interface__` and keeps the object as the base of the
    result and of every view of it, so it dies with the last one and gives `raw` back."""

    __slots__ = ("__array_interface__", "raw", "nbytes")

    def __init__(self, raw, nbytes, shape, dtype):
        self.raw, self.nbytes = raw, nbytes
        self.__array_interface__ = {"data": (raw[1], False), "shape": shape,
                                    "typestr": dtype.str, "version": 3}

    def __del__(self):
        try:
            _give_back(self.raw, self.nbytes)
        except (AttributeError, TypeError):  # interpreter shutdown: the module's globals
            pass  # may be None already


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
