"""Python source text that both Numba backends generate (CPU kernels with `njit`, CUDA kernels
with `cuda.jit`): dtype constructors, typed constants, XLA's saturating float -> integer
conversion. The expression rules the two targets share are `numba_expr.py`'s.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import int_range_as_float


class ConstName(str):
    """A kernel constant's name in generated code that also carries its value (`.value`, a
    NumPy scalar): a rule that can use a constant operand better reads it there (division by
    a constant, rules.py `_div`); any other rule sees the name."""

    def __new__(cls, name: str, value):
        self = super().__new__(cls, name)
        self.value = value
        return self


def ctor(dtype) -> str:
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def is_half(dtype) -> bool:
    return np.dtype(dtype) == np.float16


def compute_dtype(dtype) -> np.dtype:
    """Numba has no float16: half values are computed (and passed as scalars) in float32,
    rounded to half after every operation, and stored in arrays as uint16 bits."""
    return np.dtype(np.float32) if is_half(dtype) else np.dtype(dtype)


def float_text(v, module: str = "np") -> str:
    """A float as Python source, NaN and infinities through `module`'s names (`np.nan`;
    CUDA kernels say `math.inf`)."""
    v = float(v)
    if v != v:
        return f"{module}.nan"
    if v in (np.inf, -np.inf):
        return f"{module}.inf" if v > 0 else f"-{module}.inf"
    return repr(v)


def typed_const(value, dtype) -> str:
    """A constant of exactly `dtype` in generated code (`np.float32(-np.inf)`)."""
    dtype = np.dtype(dtype)
    if is_half(dtype):
        return typed_const(np.float16(value).astype(np.float32), np.float32)
    if dtype == np.bool_:
        return repr(bool(value))
    v = np.asarray(value, dtype)[()]
    if dtype.kind == "f":
        text = float_text(v)
    elif dtype.kind == "c":
        text = f"complex({float_text(v.real)}, {float_text(v.imag)})"
    else:
        text = repr(int(v))
    return f"{ctor(dtype)}({text})"


def saturating_float_to_int(x, src, dst, const=typed_const, cast=ctor):
    """XLA's float -> integer conversion as a conditional expression: truncation inside
    [lo, hi), the dtype's bounds beyond (infinities too), 0 for NaN (which fails every
    comparison). Every branch has the destination type. `const`, `cast`: the target's texts
    for a typed constant and a conversion."""
    lo, hi = int_range_as_float(dst)
    info = np.iinfo(dst)
    lo_t, hi_t = const(lo, src), const(hi, src)
    return (f"({cast(dst)}({x}) if ({x} >= {lo_t}) & ({x} < {hi_t}) else "
            f"({const(info.max, dst)} if {x} >= {hi_t} else "
            f"({const(info.min, dst)} if {x} < {lo_t} else {const(0, dst)})))")
