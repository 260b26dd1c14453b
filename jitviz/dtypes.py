"""dtypes, weak types and JAX's type-promotion lattice.

jitviz follows JAX's promotion rules (a lattice, not NumPy's value-based table) and JAX's
canonical dtypes: without x64, 64-bit inputs and requested dtypes become 32-bit
(`canonicalize`). `config.keep_float64` is the one switch that keeps them 64-bit instead;
then a weak result never narrows a strong 64-bit integer input.
"""
from __future__ import annotations

import functools

import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
             float16, float32, float64, complex64, complex128)
_SUPPORTED_SET = frozenset(SUPPORTED)
NATIVE_SUPPORTED = _SUPPORTED_SET  # in native byte order (a big-endian dtype is not in it)

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
          float16: "f16", float32: "f32", float64: "f64",
          complex64: "c64", complex128: "c128"}

# The weak kinds of the lattice: Python int, float and complex scalars.
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "int", "float", "complex"

_LATTICE = {
    bool_: [WEAK_INT],
    WEAK_INT: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [WEAK_FLOAT],
    WEAK_FLOAT: [float16, WEAK_COMPLEX],
    float16: [float32], float32: [float64, complex64], float64: [complex128],
    WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


# Without x64, JAX lets uint32 meet int32 in int32 (there is no int64 to go to).
_LATTICE_32 = {**_LATTICE, uint32: [int32, uint64]}


def _upper_set(lattice, node):
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(lattice[n])
    return frozenset(seen)


_UPPER_64 = {n: _upper_set(_LATTICE, n) for n in _LATTICE}
_UPPER_32 = {n: _upper_set(_LATTICE_32, n) for n in _LATTICE}


# What a 64-bit dtype becomes without x64 (JAX's canonicalize_dtype).
_NARROWED = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def keeps_64bit() -> bool:
    """Do 64-bit dtypes stay 64-bit: with x64, or with jitviz's `keep_float64` switch."""
    return bool(config.enable_x64 or config.keep_float64)


def canonicalize(dtype) -> np.dtype:
    """The dtype a value of `dtype` has inside jitviz: JAX's canonical dtype (32-bit without
    x64), or `dtype` itself when 64-bit types are kept."""
    dt = np.dtype(dtype)
    if config.enable_x64 or config.keep_float64:
        return dt
    return _NARROWED.get(dt, dt)


def narrowing_fix() -> str:
    """How to keep 64-bit values, for messages about a narrowed one."""
    return ('enable 64-bit types with jitviz.config.update("enable_x64", True) (as in JAX), '
            'or keep NumPy\'s 64-bit inputs with jitviz.config.update("keep_float64", True)')


def short_name(dtype) -> str:
    return _SHORT[np.dtype(dtype)]


def default_int():
    return int64 if config.enable_x64 else int32


def default_float():
    return float64 if config.enable_x64 else float32


def default_complex():
    return complex128 if config.enable_x64 else complex64


def default_for_kind(kind):
    return {WEAK_INT: default_int, WEAK_FLOAT: default_float, WEAK_COMPLEX: default_complex}[kind]()


def is_supported(dtype) -> bool:
    return np.dtype(dtype) in _SUPPORTED_SET


def check_supported(dtype, what: str):
    """The dtype, or a TypeError that names `what` (an argument, a constant)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what} has dtype {dtype!r}, which is not a NumPy dtype") from None
    if dt not in _SUPPORTED_SET:
        if dt.byteorder not in "=|" and dt.newbyteorder("=") in _SUPPORTED_SET:
            return dt.newbyteorder("=")
        raise TypeError(
            f"{what} has dtype {dt}, which jitviz cannot trace; supported dtypes are bool, "
            "(u)int8-64, float16/32/64 and complex64/128. Convert it first, e.g. "
            "`x.astype(np.float32)`, or mark it static with static_argnums/static_argnames.")
    return dt


def kind_of_weak(dtype) -> str:
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return WEAK_INT
    if dt.kind == "f":
        return WEAK_FLOAT
    if dt.kind == "c":
        return WEAK_COMPLEX
    return dt  # bool is never weak


def lattice_node(dtype, weak: bool):
    return kind_of_weak(dtype) if weak else np.dtype(dtype)


@functools.lru_cache(maxsize=4096)
def _join(nodes: tuple, x64: bool):
    """The least upper bound of lattice nodes: the common upper node whose own upper set is
    exactly the common set."""
    upper = _UPPER_64 if x64 else _UPPER_32
    common = frozenset.intersection(*(upper[n] for n in nodes))
    for cand in common:
        if upper[cand] == common:
            return cand
    raise TypeError(f"no common type for {nodes}")  # the lattice has a top for all pairs


def result_type(*typed) -> tuple[np.dtype, bool]:
    """Promote `(dtype, weak_type)` pairs as JAX does; returns `(dtype, weak_type)`."""
    nodes = tuple(lattice_node(dt, weak) for dt, weak in typed)
    joined = _join(nodes, bool(config.enable_x64))
    if isinstance(joined, str):
        dt = default_for_kind(joined)
        wide_strong = any(not weak and np.dtype(d).itemsize >= 8 for d, weak in typed)
        if wide_strong and dt.kind == "f" and dt.itemsize < 8:
            dt = float64  # an int64 argument met a Python float: keep its precision
        return dt, True
    return joined, False


# JAX's `to_inexact_dtype`: the float a function that needs one (sqrt, true_divide, mean)
# gives an integer or boolean. Integers of 32 bits or fewer become float32 even with x64.
_TO_INEXACT = {**{dt: float32 for dt in (bool_, int8, int16, int32, uint8, uint16, uint32)},
               int64: float64, uint64: float64}


def to_inexact(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    return _TO_INEXACT.get(dt, dt)


def to_numeric(dtype) -> np.dtype:
    """JAX's `to_numeric_dtype`: what arithmetic that has no boolean form (square,
    remainder, shifts) makes of a boolean: int32, with or without x64."""
    dt = np.dtype(dtype)
    return int32 if dt == bool_ else dt


def default_uint():
    return uint64 if config.enable_x64 else uint32


def sum_dtype(dtype) -> np.dtype:
    """The dtype `jnp.sum`/`jnp.prod` accumulate in (JAX's `_promote_integer_dtype`):
    booleans and integers narrower than the default integer widen to it, unsigned ones to
    the default unsigned integer, as NumPy does, so a sum of int8 does not wrap at 128."""
    dt = np.dtype(dtype)
    if dt == bool_:
        return default_int()
    if dt.kind in "iu":
        wide = default_uint() if dt.kind == "u" else default_int()
        return wide if dt.itemsize < wide.itemsize else dt
    return dt


def python_scalar_dtype(x):
    """dtype and weak flag of a Python scalar, as JAX types it."""
    if isinstance(x, bool):
        return bool_, False
    if isinstance(x, int):
        dt = default_int()
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt}")
        return dt, True
    if isinstance(x, float):
        return default_float(), True
    if isinstance(x, complex):
        return default_complex(), True
    raise TypeError(f"not a Python scalar: {type(x).__name__}")


def lowest(dtype):
    """The identity of max: below every value of `dtype` (complex values compare
    lexicographically, as NumPy and JAX order them, so both parts are -inf)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(-np.inf)
    if dt.kind == "c":
        return dt.type(complex(-np.inf, -np.inf))
    if dt.kind == "b":
        return np.bool_(False)
    return dt.type(np.iinfo(dt).min)


def highest(dtype):
    """The identity of min: above every value of `dtype`."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(np.inf)
    if dt.kind == "c":
        return dt.type(complex(np.inf, np.inf))
    if dt.kind == "b":
        return np.bool_(True)
    return dt.type(np.iinfo(dt).max)


def int_range_as_float(dtype):
    """(lo, hi): an integer dtype holds the truncation of every float in [lo, hi). Both are
    powers of two (or 0), so exact in every float type whose range reaches them."""
    info = np.iinfo(dtype)
    return float(info.min), float(info.max) + 1.0


def is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def canonical_creation_dtype(dtype, where: str | None = None):
    """A dtype requested from `jnp` (e.g. `float`, `int`, 'float64'), as JAX maps it: an
    explicit 64-bit dtype without x64 becomes 32-bit with JAX's warning (`where` names the
    function it was requested in)."""
    if dtype is None:
        return None
    if dtype is float:
        return default_float()
    if dtype is int:
        return default_int()
    if dtype is complex:
        return default_complex()
    if dtype is bool:
        return bool_
    return requested_dtype(check_supported(dtype, "requested dtype"), where)


def requested_dtype(dtype, where: str | None = None) -> np.dtype:
    """An explicitly requested dtype, canonicalized; narrowing it warns as JAX does."""
    dt = np.dtype(dtype)
    out = canonicalize(dt)
    if out != dt:
        import warnings
        in_where = f" requested in {where}" if where else ""
        warnings.warn(
            f"Explicitly requested dtype {dt.name}{in_where} is not available, and will be "
            f"truncated to dtype {out.name}. To keep {dt.name}, {narrowing_fix()}.",
            UserWarning, stacklevel=_user_stacklevel())
    return out


def _user_stacklevel() -> int:
    """The stacklevel of the first frame outside jitviz (warnings point at the user's line)."""
    import os
    import sys
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
