"""The CUDA backend's pool of device buffers (jitviz/backends/cuda/pool.py), without a GPU.

Numba's device arrays and memory pointers are real; only the context is a stand-in that hands
out fake addresses, so what is tested is exactly the bookkeeping a GPU run relies on: a buffer
comes back when its last view dies (and not before), is reused for the next request of its
size, idle bytes stay under the cap, and running out of memory empties the pool and retries.
"""
from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest

driver = pytest.importorskip("numba.cuda.cudadrv.driver")

from jitviz.backends.cuda.pool import GRANULE, DevicePool  # noqa: E402


class FakeContext:
    def __init__(self, capacity=1 << 40):
        self.addresses = itertools.count(1 << 20, 1 << 20)
        self.capacity, self.used, self.allocs = capacity, 0, 0
        self.deallocations = self
        self.allocations = {}  # as Numba's memory manager: holds each pointer until freed

    def memalloc(self, size):
        if self.used + size > self.capacity:
            raise driver.CudaAPIError(2, "CUDA_ERROR_OUT_OF_MEMORY")
        self.used += size
        self.allocs += 1

        key = next(self.addresses)

        def free():
            self.used -= size
            del self.allocations[key]
        mem = driver.AutoFreePointer(self, driver.binding.CUdeviceptr(key), size, finalizer=free)
        self.allocations[key] = mem
        return mem.own()

    def clear(self):  # Context.deallocations.clear(): pending frees run now
        gc.collect()


class FakeCuda:
    def __init__(self, ctx):
        self.ctx = ctx

    def current_context(self):
        return self.ctx

    def device_array(self, shape, dtype):  # only empty arrays come here
        assert np.prod(shape) == 0
        return "numba's empty array"


def addr(a):
    return a.device_ctypes_pointer.value


def pool_of(**kw):
    ctx = FakeContext(**kw)
    return DevicePool(FakeCuda(ctx), **({"max_cached": kw["capacity"]} if "capacity" in kw
                                        else {})), ctx


def test_a_dead_buffer_is_reused_for_the_same_size():
    pool, ctx = pool_of()
    a = pool.empty((1000,), np.float32)
    first = addr(a)
    assert a.shape == (1000,) and a.dtype == np.float32 and a.is_c_contiguous()
    del a
    gc.collect()
    b = pool.empty((10, 100), np.float32)  # same bytes, another shape
    assert addr(b) == first and (pool.hits, pool.misses) == (1, 1) and ctx.allocs == 1
    c = pool.empty((1000,), np.float32)  # b is alive: a new allocation
    assert addr(c) != first and ctx.allocs == 2


def test_a_view_keeps_the_buffer_out_of_the_pool():
    pool, _ = pool_of()
    a = pool.empty((4, 250), np.float32)
    first = addr(a)
    views = [a.reshape(1000), a.reshape(10, 100)]
    del a
    gc.collect()
    assert addr(pool.empty((1000,), np.float32)) != first  # still in use by the views
    del views
    gc.collect()
    assert addr(pool.empty((1000,), np.float32)) == first


def test_a_slice_keeps_the_buffer_out_of_the_pool():
    """A slice (a host loop's row) is a new pointer into the buffer, which holds its owner."""
    pool, _ = pool_of()
    a = pool.empty((4, 250), np.float32)
    first = addr(a)
    row = type(a)((250,), (4,), a.dtype, gpu_data=a.gpu_data.view(1000))
    assert addr(row) == first + 1000
    del a
    gc.collect()
    assert addr(pool.empty((1000,), np.float32)) != first
    del row
    gc.collect()
    assert addr(pool.empty((1000,), np.float32)) == first


def test_a_buffer_dying_in_a_reference_cycle_comes_back_usable():
    """An array in a reference cycle (a traceback's frame, a user's object graph) dies in the
    garbage collector, which runs weak-reference finalizers before `__del__`: the pooled
    allocation must still be alive when the pool hands it out again (found on an H200, where
    Numba freed it first and the next request read a dead pointer)."""
    pool, ctx = pool_of()
    a = pool.empty((1000,), np.float32)
    first = addr(a)
    cycle = [a]
    cycle.append(cycle)
    del a, cycle
    gc.collect()
    b = pool.empty((1000,), np.float32)
    assert addr(b) == first and ctx.allocs == 1 and ctx.used == _rounded_bytes(4000)


def _rounded_bytes(n):
    return -(-n // GRANULE) * GRANULE


def test_sizes_round_to_the_granule_and_scalars_get_a_buffer():
    pool, ctx = pool_of()
    a = pool.empty((1,), np.float64)
    del a
    gc.collect()
    b = pool.empty((GRANULE // 4,), np.int32)  # 8 bytes and GRANULE bytes share a granule
    assert pool.hits == 1 and ctx.allocs == 1 and b.size == GRANULE // 4
    assert pool.empty((0, 3), np.float32) == "numba's empty array" and ctx.allocs == 1


def test_idle_bytes_stay_under_the_cap():
    pool, ctx = pool_of()
    pool.max_cached = 3 * GRANULE
    arrays = [pool.empty((GRANULE // 4,), np.float32) for _ in range(5)]
    del arrays
    gc.collect()
    assert pool.idle_bytes == 3 * GRANULE
    assert ctx.used == 3 * GRANULE  # the other two went back to the device


def test_out_of_memory_releases_idle_buffers_and_retries():
    pool, ctx = pool_of(capacity=4 * GRANULE)
    a = pool.empty((2 * GRANULE,), np.uint8)
    del a
    gc.collect()
    assert pool.idle_bytes == 2 * GRANULE
    big = pool.empty((3 * GRANULE,), np.uint8)  # fits only once the idle buffer is freed
    assert big.size == 3 * GRANULE and pool.idle_bytes == 0
    with pytest.raises(driver.CudaAPIError):
        pool.empty((2 * GRANULE,), np.uint8)  # really out of memory: the error is the user's


def test_other_allocation_errors_are_not_taken_for_out_of_memory():
    pool, ctx = pool_of()
    a = pool.empty((GRANULE,), np.uint8)
    del a
    gc.collect()

    def broken(size):
        raise driver.CudaAPIError(1, "CUDA_ERROR_INVALID_VALUE")
    ctx.memalloc = broken
    with pytest.raises(driver.CudaAPIError, match="INVALID_VALUE"):
        pool.empty((4 * GRANULE,), np.uint8)
    assert pool.idle_bytes == GRANULE  # nothing was released for it


@pytest.mark.parametrize("shape, dtype", [((1000,), np.float32), ((7, 1, 3), np.float64),
                                          ((1,), np.int8), ((2, 5), np.complex64)])
def test_direct_launch_lays_out_arrays_as_numba_does(shape, dtype):
    """runtime.DirectLaunch skips Numba's argument preparation: the arguments it builds for a
    pooled array (and for a row of it, and for its flat view as an output) are the ones Numba's
    own `_Kernel._prepare_args` builds for the kernel's C-contiguous array type."""
    import types

    from numba.cuda import dispatcher

    from jitviz.backends.cuda.runtime import array_arguments, flat_array_arguments

    def numba_arguments(array, ndim):
        ty = dispatcher.types.Array(dispatcher.numpy_support.from_dtype(np.dtype(dtype)),
                                    ndim, "C")
        out = []
        dispatcher._Kernel._prepare_args(types.SimpleNamespace(extensions=[]), ty, array, 0,
                                         [], out)
        return tuple(out)

    pool = DevicePool(FakeCuda(FakeContext()))
    a = pool.empty(shape, dtype)
    assert array_arguments(a) == numba_arguments(a, len(shape))
    assert flat_array_arguments(a) == numba_arguments(a.reshape(a.size), 1)
    if len(shape) > 1:  # a view that starts inside the buffer, as a host loop's row
        row = type(a)(shape[1:], a.strides[1:], a.dtype,
                      gpu_data=a.gpu_data.view(a.strides[0]))
        assert array_arguments(row) == numba_arguments(row, row.ndim)
        assert array_arguments(row)[4] == addr(a) + a.strides[0]


def test_a_buffer_can_come_back_while_its_thread_holds_the_pool():
    """A garbage collection set off by an allocation inside the pool's lock can end a lease
    on the same thread: giving its buffer back must not wait for the lock that thread holds."""
    import threading
    pool, _ = pool_of()
    arrays = [pool.empty((1000,), np.float32)]
    done = []

    def work():
        with pool._lock:
            arrays.clear()  # the lease dies here, inside the lock
            done.append(pool.idle_bytes)
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(10)
    assert done == [_rounded_bytes(4000)]


def test_device_arrays_are_recognised_by_type_and_others_by_value():
    """trace.is_device_array: Numba's device arrays by their type (their
    `__cuda_array_interface__` builds a dict each time it is asked); any other object by asking
    it, since a type can have the property and a value not have it (a PyTorch CPU tensor's
    raises AttributeError)."""
    from jitviz.core import trace

    class CpuTensor:  # as torch.Tensor on the CPU
        @property
        def __cuda_array_interface__(self):
            raise AttributeError("not on a CUDA device")

    class Foreign:  # as a CuPy array
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (0, False),
                                    "version": 3}

    pool, _ = pool_of()
    a = pool.empty((10,), np.float32)
    assert trace.is_device_array(a) and type(a) in trace._DEVICE_ARRAY_TYPES
    assert not trace.is_device_array(CpuTensor()) and CpuTensor not in trace._DEVICE_ARRAY_TYPES
    assert trace.is_device_array(Foreign()) and not trace.is_device_array(np.ones(3))
