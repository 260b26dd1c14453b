"""Device buffers for the CUDA backend, recycled instead of allocated on every call.

Measured on an H100 with numba-cuda 0.30: `cuda.device_array` costs 35 us for 4 bytes and
80-100 us for 4-100 MB (cuMemAlloc plus Numba's deferred cuMemFree of the buffers that died),
while the kernel that fills 1M float32 values runs in 35 us. Every jitted call allocates its
outputs and intermediates, so without reuse a SELU call spent three quarters of its time in
the allocator. XLA keeps a caching allocator for the same reason; Numba leaves that to an
external memory-manager plugin (CuPy's), which jitviz does not depend on, and a plugin would
change allocation for the user's whole process. This pool serves only jitviz's own buffers.

How a buffer comes back: each array's memory is a Numba `MemoryPointer` over a pooled
allocation whose owner is a `_Lease`. Numba's views of a pointer with such an owner (not one of
its own pointers) hold the owner, and reshapes share the pointer, so the lease lives exactly as
long as some view of the array; when the last one dies, the lease files the allocation under
its size for the next request of that size. (The pool first used Numba's own protocol, an
`AutoFreePointer` handed out by `own()`: four weak references and two finalizers per array;
with the context lookup it replaced, 21 us of a SELU call's 96 on an H200's host, 11-22 us
after, in benchmarks/bench_cuda_dispatch.py.) Reuse is safe without synchronizing
because every jitviz launch and copy runs on the default stream, in order: a kernel queued
after the buffer was freed cannot start before the kernels that used it.

At most `max_cached` bytes sit idle in the pool (beyond that a returned buffer is released to
Numba); when the device runs out of memory, the idle buffers are released and the allocation
is tried once more. `release()` empties the pool.
"""
from __future__ import annotations

import functools
import itertools
import math
import threading
import types
import weakref

import numpy as np

#: allocations are rounded up to this many bytes, so nearby sizes share buffers
GRANULE = 512


def _rounded(nbytes: int) -> int:
    return max(GRANULE, -(-nbytes // GRANULE) * GRANULE)


class DevicePool:
    def __init__(self, cuda, max_cached: int = 2 << 30):
        self.cuda = cuda
        self.max_cached = max_cached
        self.idle: dict[int, list] = {}  # rounded size -> allocations (Numba OwnedPointers)
        self.idle_bytes = 0
        self.hits = self.misses = 0
        #: allocations handed out, by lease: held here, not by the lease, so that an
        #: allocation is never garbage (Numba frees an unreachable one in the collector's
        #: weak-reference pass, before the lease's `__del__` could file it as idle)
        self.leased: dict[int, object] = {}
        self._keys = itertools.count()
        # reentrant: a lease can die, and give its buffer back, in a garbage collection that
        # an allocation inside the lock sets off on this thread
        self._lock = threading.RLock()
        self._ctx_ref = self._ctx_proxy = None

    def empty(self, shape, dtype):
        """A C-contiguous device array of `shape` and `dtype` from the pool."""
        dtype = np.dtype(dtype)
        shape = tuple(map(int, shape))
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes == 0:  # Numba gives an empty array a null pointer of its own
            return self.cuda.device_array(shape, dtype)
        size = _rounded(nbytes)
        key, raw = self._take(size)
        numba = _numba()
        memory = numba.MemoryPointer(self._context(), raw.device_pointer, size,
                                     owner=_Lease(self, key, size))
        return numba.DeviceNDArray(shape, _c_strides(shape, dtype.itemsize), dtype,
                                   gpu_data=memory)

    def to_device(self, host: np.ndarray):
        dev = self.empty(host.shape, host.dtype)
        dev.copy_to_device(host)
        return dev

    def release(self):
        """Give every idle buffer back to the device."""
        with self._lock:
            self.idle.clear()
            self.idle_bytes = 0
        self.cuda.current_context().deallocations.clear()

    # -- internals ---------------------------------------------------------------------------
    def _context(self):
        """A weak proxy of Numba's current context, as its own pointers hold: looked up once
        (asking Numba costs a driver query per call: a third of `empty`'s time on an H200's
        host), and again once that context is gone."""
        if self._ctx_ref is None or self._ctx_ref() is None:
            ctx = self.cuda.current_context()
            self._ctx_ref, self._ctx_proxy = weakref.ref(ctx), weakref.proxy(ctx)
        return self._ctx_proxy

    def _take(self, size):
        """(key, allocation): an idle allocation of `size` bytes or a new one, filed under
        `key` in `leased` until its lease ends."""
        key = next(self._keys)
        with self._lock:
            bucket = self.idle.get(size)
            if bucket:
                self.hits += 1
                self.idle_bytes -= size
                raw = self.leased[key] = bucket.pop()
                return key, raw
            self.misses += 1
        ctx = self.cuda.current_context()
        try:
            raw = ctx.memalloc(size)
        except Exception as e:
            if not _out_of_memory(e):
                raise
            self.release()
            raw = ctx.memalloc(size)
        with self._lock:
            self.leased[key] = raw
        return key, raw

    def _give_back(self, key, size):
        """The last view of a handed-out buffer died."""
        with self._lock:
            raw = self.leased.pop(key)
            if self.idle_bytes + size <= self.max_cached:
                self.idle.setdefault(size, []).append(raw)
                self.idle_bytes += size


class _Lease:
    """The owner of a handed-out buffer's pointer and of every view of it: when the last view
    dies, so does the lease, and the allocation goes back to the pool (or to the device, past
    the pool's cap)."""

    __slots__ = ("pool", "key", "size")

    def __init__(self, pool, key, size):
        self.pool, self.key, self.size = pool, key, size

    def __del__(self):
        try:
            self.pool._give_back(self.key, self.size)
        except (AttributeError, TypeError):  # interpreter shutdown: modules half torn down
            pass


#: CUresult CUDA_ERROR_OUT_OF_MEMORY, what numba's CudaAPIError carries as `.code`
CUDA_ERROR_OUT_OF_MEMORY = 2


def _out_of_memory(error) -> bool:
    code = getattr(error, "code", None)  # an int, or a CUresult enum
    if code is not None:
        return int(code) == CUDA_ERROR_OUT_OF_MEMORY
    return "OUT_OF_MEMORY" in str(error).upper()


@functools.cache
def _numba():
    """The two Numba classes a pooled array is made of (imported once: numba.cuda is imported
    lazily, and `empty` runs for every kernel output)."""
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.cudadrv.driver import MemoryPointer
    return types.SimpleNamespace(DeviceNDArray=DeviceNDArray, MemoryPointer=MemoryPointer)


@functools.lru_cache(maxsize=1024)
def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))
