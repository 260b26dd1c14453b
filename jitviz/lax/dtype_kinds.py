"""The dtype kinds a primitive accepts, the error for one it does not, and NumPy kernels run
without floating-point warnings: what every module of primitive definitions uses."""
from __future__ import annotations

import numpy as np


_KIND_NAMES = {"f": "floating", "c": "complexfloating", "i": "signedinteger",
               "u": "unsignedinteger", "b": "bool"}
FLOAT, COMPLEX, INT, UINT, BOOL = "f", "c", "i", "u", "b"
INEXACT = FLOAT + COMPLEX
NUMERIC = INEXACT + INT + UINT
ANY = NUMERIC + BOOL
INTEGRAL = INT + UINT + BOOL
ORDERED = FLOAT + INTEGRAL  # what JAX's gt/lt compare


def _check_kind(name, dtype, accepts):
    if dtype.kind not in accepts:
        names = ", ".join(dict.fromkeys(_KIND_NAMES[k] for k in accepts))
        raise TypeError(f"{name} does not accept dtype {dtype.name}. Accepted dtypes are "
                        f"subtypes of {names}.")


def _quiet(f):
    """Run a NumPy kernel without its floating-point warnings (NaN/inf are values here)."""
    def run(*args, **kw):
        with np.errstate(all="ignore"):
            return f(*args, **kw)
    run.__name__ = getattr(f, "__name__", "impl")
    return run
