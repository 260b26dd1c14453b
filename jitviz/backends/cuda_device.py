"""The names generated CUDA kernels call, bound twice: for the GPU and for the simulator.

Kernels are self-contained Python: arithmetic, conditional expressions, typed literals
(`np.float32(0.5)`) and a few math names. On a GPU those names are `math`/`cmath` functions and
libdevice intrinsics (`rintf`, `cbrtf`, `exp2f`, `nextafterf`), which Numba's CUDA target
compiles without asking a device (so PTX can be produced on a machine without a GPU). In Numba's
CUDA simulator kernels run as Python threads on NumPy scalars, where `math.log(-1.0)` raises and
`math.nextafter` works in double precision: there the same names are NumPy's ufuncs, with the
interpreter's semantics. The generated source is identical in both.
"""
from __future__ import annotations

import cmath
import math

import numpy as np

# name in kernels -> (GPU: attribute of `math`, simulator: NumPy function)
_MATH = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "floor": np.floor,
    "ceil": np.ceil, "fmod": np.fmod, "atan2": np.arctan2, "isfinite": np.isfinite,
    "copysign": np.copysign,
}
# complex forms -> cmath on the GPU
_CMATH = {"cexp": np.exp, "clog": np.log, "csqrt": np.sqrt, "casin": np.arcsin,
          "cacos": np.arccos, "catan": np.arctan, "casinh": np.arcsinh, "catanh": np.arctanh}
# libdevice intrinsics (float32 names end in f)
_LIBDEVICE = {"rint": np.rint, "cbrt": np.cbrt, "exp2": np.exp2, "nextafter": np.nextafter}


HELPERS: dict = {}  # name -> plain Python function (see register_helper)


def register_helper(name: str, fn) -> None:
    """Make `fn` (plain Python that Numba's CUDA target compiles) callable as `name(...)` from
    generated kernels: a `cuda.jit(device=True)` function on the GPU (PTX without a GPU works
    too), the function itself in the simulator. For primitives defined outside jitviz's core,
    with an elementwise CUDA rule in `cuda_ops.ELEMENTWISE` that calls `name`."""
    HELPERS[name] = fn


def base_names() -> set:
    return {"np", "math", "cmath", "cuda", *_MATH, *_CMATH, *_LIBDEVICE,
            *(n + "f" for n in _LIBDEVICE)}


def namespace(cuda, simulator: bool) -> dict:
    """The globals generated kernels are executed in."""
    ns = {"np": np, "math": math, "cmath": cmath, "cuda": cuda}
    for name, fn in HELPERS.items():
        ns[name] = fn if simulator else cuda.jit(device=True)(fn)
    if simulator:
        ns.update(_MATH)
        ns.update(_CMATH)
        for name, fn in _LIBDEVICE.items():
            ns[name] = ns[name + "f"] = fn
        return ns
    for name in _MATH:
        ns[name] = getattr(math, name)
    for name in _CMATH:
        ns[name] = getattr(cmath, name[1:])
    from numba.cuda import libdevice
    for name in _LIBDEVICE:
        ns[name] = getattr(libdevice, name)
        ns[name + "f"] = getattr(libdevice, name + "f")
    return ns
