"""Devices, as JAX names them: jitviz runs on one CPU device (`CpuDevice(id=0)`), so
`jax.devices()`, `device_put`, `device_get`, `x.device`, `x.sharding` and friends work in
code written for JAX. (The CUDA backend is chosen per function, `jit(f, backend="cuda")`, not
by placing arrays; `devices("gpu")` says so.)"""
from __future__ import annotations

import numpy as np

from .tree import tree_map


class Device:
    """A device, as `jax.Device`: `id`, `platform`, `device_kind`, `process_index`."""

    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    host_id = 0

    def __init__(self, id: int = 0):  # noqa: A002  (JAX's name)
        self.id = id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"{self.platform}:{self.id}"

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("jitviz-device", self.id))


CPU = Device(0)


class SingleDeviceSharding:
    """`jax.sharding.SingleDeviceSharding`: the whole array on one device."""

    def __init__(self, device, *, memory_kind="device"):
        self._device, self.memory_kind = device, memory_kind

    device_set = property(lambda self: {self._device})
    num_devices = 1
    is_fully_replicated = True

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("single", self._device))


def default_backend() -> str:
    """`jax.default_backend()`: "cpu"."""
    return "cpu"


def devices(backend=None):
    """`jax.devices()`: `[CpuDevice(id=0)]`."""
    if backend not in (None, "cpu"):
        raise RuntimeError(
            f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
            f"{backend} are present. Platforms present are: cpu (jitviz compiles a function "
            "for CUDA with jit(f, backend='cuda') instead of placing arrays on a GPU)")
    return [CPU]


def local_devices(process_index=None, backend=None):
    """`jax.local_devices()`."""
    return devices(backend)


def device_count(backend=None) -> int:
    """`jax.device_count()`: 1 (the CPU)."""
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    """`jax.local_device_count()`: 1 (the CPU)."""
    return len(devices(backend))


def process_index() -> int:
    """`jax.process_index()`: 0 (one process)."""
    return 0


def process_count() -> int:
    """`jax.process_count()`: 1 (one process)."""
    return 1


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """`jax.device_put`: each leaf of `x` as a `jitviz.Array` on the CPU (Python scalars
    keep their weak type, as JAX's)."""
    if device is not None and not isinstance(device, (Device, SingleDeviceSharding)):
        raise TypeError(f"device_put: device must be a jitviz Device, got {device!r}")
    from . import numpy as jnp
    return tree_map(jnp.asarray, x)


def device_get(x):
    """`jax.device_get`: each array leaf of `x` as a NumPy array (other leaves as they are)."""
    def get(leaf):
        if isinstance(leaf, np.ndarray):
            return np.asarray(leaf)
        to_host = getattr(leaf, "copy_to_host", None)  # a Numba CUDA device array
        return to_host() if to_host is not None else leaf
    return tree_map(get, x)


def _install_array_methods():
    """`Array.devices()`, `.device`, `.sharding`, as a jax.Array has them."""
    from .array import Array
    Array.devices = lambda self: {CPU}
    Array.device = property(lambda self: CPU)
    Array.sharding = property(lambda self: SingleDeviceSharding(CPU))
    Array.is_fully_addressable = True
    Array.committed = False


_install_array_methods()

__all__ = ["Device", "SingleDeviceSharding", "default_backend", "device_count", "device_get",
           "device_put", "devices", "local_device_count", "local_devices", "process_count",
           "process_index"]
