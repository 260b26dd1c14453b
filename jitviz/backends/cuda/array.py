"""`CudaArray`: a result that stays on the GPU, and moving arguments to the device."""
from __future__ import annotations

import numpy as np

from ...core.trace import is_device_array
from .runtime import runtime

class CudaArray:
    """A result that lives on the GPU. `np.asarray(a)` copies it to the host (waiting for the
    kernels that compute it); `a.block_until_ready()` waits; `a.device_array` is the Numba
    device array, and `__cuda_array_interface__` lets CuPy, PyTorch or another jit use it in
    place."""

    __jitviz_device_array__ = True
    __array_priority__ = 1000

    def __init__(self, dev, aval):
        self._dev = dev  # kernel layout: 0-d values are stored with shape (1,)
        self.shape = tuple(aval.shape)
        self.dtype = np.dtype(aval.dtype)
        self.weak_type = bool(aval.weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    @property
    def device_array(self):
        """The Numba device array (0-d values have shape (1,))."""
        return self._dev

    @property
    def __cuda_array_interface__(self):
        iface = dict(self._dev.__cuda_array_interface__)
        if tuple(iface.get("shape", ())) != self.shape:
            iface["shape"], iface["strides"] = self.shape, None
        return iface

    def copy_to_host(self) -> np.ndarray:
        host = self._dev.copy_to_host()
        return host.reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def block_until_ready(self):
        runtime().synchronize()
        return self

    def __repr__(self):
        body = np.array2string(self.copy_to_host(), separator=", ", prefix="CudaArray(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"CudaArray({body}, dtype={self.dtype.name}{weak})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return iter(self.copy_to_host())

    def __getitem__(self, item):
        return self.copy_to_host()[item]

    def item(self, *args):
        return self.copy_to_host().item(*args)

    def tolist(self):
        return self.copy_to_host().tolist()

    def __float__(self):
        return float(self.copy_to_host())

    def __int__(self):
        return int(self.copy_to_host())

    def __complex__(self):
        return complex(self.copy_to_host())

    def __bool__(self):
        return bool(self.copy_to_host())

    def __index__(self):
        return int(self.copy_to_host().__index__())

    def astype(self, dtype):
        return self.copy_to_host().astype(dtype)


def _host_op(name):
    def op(self, *args):
        args = [np.asarray(a) if isinstance(a, CudaArray) else a for a in args]
        return getattr(self.copy_to_host(), name)(*args)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lt", "le", "gt", "ge", "eq", "ne"):
    for _n in (f"__{_name}__", f"__r{_name}__"):
        if hasattr(np.ndarray, _n):
            setattr(CudaArray, _n, _host_op(_n))
for _n in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(CudaArray, _n, _host_op(_n))
CudaArray.__hash__ = None


def kernel_shape(aval):
    """The shape a value has on the device: 0-d values are stored with shape (1,)."""
    return aval.shape if aval.ndim else (1,)


def to_device(rt, x, aval):
    """`x` as a device array in kernel layout (no copy when it is already on the device)."""
    shape = kernel_shape(aval)
    if isinstance(x, CudaArray):
        dev = x._dev
    elif type(x).__name__ == "FakeCUDAArray" or (rt.mode == "gpu" and is_device_array(x)):
        dev = x if type(x).__name__ in ("FakeCUDAArray", "DeviceNDArray") else \
            rt.cuda.as_cuda_array(x)
        if dev.dtype != aval.dtype:
            raise TypeError(f"device array of dtype {dev.dtype} passed where {aval.dtype} was "
                            "traced")
    else:
        host = np.ascontiguousarray(np.asarray(x), dtype=aval.dtype).reshape(shape)
        return rt.to_device(host)
    if tuple(dev.shape) != shape:
        dev = dev.reshape(shape)
    return dev


