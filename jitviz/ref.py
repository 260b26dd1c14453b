"""`jax.ref`: mutable arrays (see jitviz/state.py for how they are traced)."""
from .state import RefAval as AbstractRef  # noqa: F401 (JAX's name for a Ref's type)
from .state import Ref, freeze, new_ref

__all__ = ["AbstractRef", "Ref", "freeze", "get", "new_ref", "set", "swap", "addupdate"]


def get(ref, idx=None):
    """`jax.ref.get(ref, idx)`: `ref[idx]` (the whole value when idx is None)."""
    return ref[... if idx is None else idx]


def set(ref, idx, value):  # noqa: A001 (JAX's name)
    """`jax.ref.set(ref, idx, value)`: `ref[idx] = value`."""
    ref[... if idx is None else idx] = value


def swap(ref, idx, value):
    """`jax.ref.swap(ref, idx, value)`: write `value` at `idx` and return what was there."""
    idx = ... if idx is None else idx
    old = ref[idx]
    ref[idx] = value
    return old


def addupdate(ref, idx, value):
    """`jax.ref.addupdate(ref, idx, value)`: `ref[idx] += value`."""
    idx = ... if idx is None else idx
    ref[idx] = ref[idx] + value
