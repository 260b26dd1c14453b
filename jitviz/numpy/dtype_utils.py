"""Dtype questions and printing, as `jax.numpy` answers them: `promote_types` (JAX's
promotion lattice, not NumPy's), `can_cast`, `isdtype`, `iterable`, `array_repr`,
`array_str` and NumPy's print options (jitviz Arrays print with NumPy)."""
from __future__ import annotations

import numpy as np

from .. import dtypes

printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
ComplexWarning = np.exceptions.ComplexWarning
# the abstract scalar classes JAX re-exports from NumPy
generic, character, flexible, object_ = np.generic, np.character, np.flexible, np.object_


def _as_dtype(d, name):
    try:
        return np.dtype(getattr(d, "dtype", d) if not isinstance(d, type) else d)
    except TypeError:
        raise TypeError(f"{name}: {d!r} is not a dtype") from None


def promote_types(a, b):
    """The dtype JAX promotes two (strongly typed) dtypes to: int8 and uint8 give int16,
    an integer and a float the float (float32 stays float32 with int64)."""
    return dtypes.result_type((_as_dtype(a, "promote_types"), False),
                              (_as_dtype(b, "promote_types"), False))[0]


def can_cast(from_, to, casting="safe"):
    """Whether NumPy's casting rule allows from_ -> to (arrays: their dtype)."""
    return np.can_cast(_as_dtype(from_, "can_cast"), _as_dtype(to, "can_cast"), casting)


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind):
    """Whether dtype is of `kind`: a dtype, one of the Array API's kind names ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric'), or a tuple of those."""
    d = _as_dtype(dtype, "isdtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=}; expected one of {list(_KINDS)}, or a "
                                 "dtype")
            if _KINDS[k](d):
                return True
        elif d == _as_dtype(k, "isdtype"):
            return True
    return False


def iterable(y):
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


__all__ = ["promote_types", "can_cast", "isdtype", "iterable", "array_repr", "array_str",
           "printoptions", "get_printoptions", "set_printoptions", "ComplexWarning",
           "generic", "character", "flexible", "object_"]
