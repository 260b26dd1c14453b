"""Device buffers for the CUDA backend, recycled instead of allocated on every call.

Measured on an H100 with numba-cuda 0.30: `cuda.device_array` costs 35 us for 4 bytes and
80-100 us for 4-100 MB (cuMemAlloc plus Numba's deferred cuMemFree of the buffers that died),
while the kernel that fills 1M float32 values runs in 35 us. Every jitted call allocates its
outputs and intermediates, so without reuse a SELU call spent three quarters of its time in
the allocator. XLA keeps a caching allocator for the same reason; Numba leaves that to an
external memory-manager plugin (CuPy's), which jitviz does not depend on, and a plugin would
change allocation for the user's whole process. This pool serves only jitviz's own buffers.

How a buffer comes back: each array gets a fresh `AutoFreePointer` over a pooled allocation,
handed out through `own()` like Numba's own allocations, so reshapes and slices of it share
one reference count; when the last view dies, Numba calls the pointer's finalizer, which
files the allocation under its size for the next request of that size. Reuse is safe without
synchronizing because every jitviz launch and copy runs on the default stream, in order: a
kernel queued after the buffer was freed cannot start before the kernels that used it.

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
        self.live: dict[int, object] = {}  # key -> MemoryPointer handed out, until it dies
        self._keys = itertools.count()
        self.hits = self.misses = 0
        self._lock = threading.Lock()

    def empty(self, shape, dtype):
        """A C-contiguous device array of `shape` and `dtype` from the pool."""
        dtype = np.dtype(dtype)
        shape = tuple(map(int, shape))
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes == 0:  # Numba gives an empty array a null pointer of its own
            return self.cuda.device_array(shape, dtype)
        size = _rounded(nbytes)
        raw = self._take(size)
        ctx = self.cuda.current_context()
        key = next(self._keys)
        handle = _numba().AutoFreePointer(
            weakref.proxy(ctx), raw.device_pointer, size,
            finalizer=functools.partial(self._give_back, key, size, raw))
        with self._lock:
            self.live[key] = handle  # what Numba's `allocations` dict is for its own buffers
        strides = _c_strides(shape, dtype.itemsize)
        return _numba().DeviceNDArray(shape, strides, dtype, gpu_data=handle.own())

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
    def _take(self, size):
        with self._lock:
            bucket = self.idle.get(size)
            if bucket:
                self.hits += 1
                self.idle_bytes -= size
                return bucket.pop()
            self.misses += 1
        ctx = self.cuda.current_context()
        try:
            return ctx.memalloc(size)
        except Exception as e:
            if not _out_of_memory(e):
                raise
            self.release()
            return ctx.memalloc(size)

    def _give_back(self, key, size, raw):
        """The last view of a handed-out buffer died (Numba calls this when its count is 0)."""
        with self._lock:
            self.live.pop(key, None)
            if self.idle_bytes + size <= self.max_cached:
                self.idle.setdefault(size, []).append(raw)
                self.idle_bytes += size


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
    from numba.cuda.cudadrv.driver import AutoFreePointer
    return types.SimpleNamespace(DeviceNDArray=DeviceNDArray, AutoFreePointer=AutoFreePointer)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))
