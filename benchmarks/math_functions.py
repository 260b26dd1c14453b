"""The elementary functions the math benchmarks time (bench_math.py on the CPU,
bench_cuda_math.py on a GPU): for each, jitviz's function, NumPy's (x, out), JAX's (a
`jax.numpy` name, or a function of the `jax.numpy` module) and the input range.

Inputs lie in each function's usual domain (a few units around 0; (-1, 1) for arcsin/arccos/
arctanh, [1, 5) for arccosh); `pow`'s exponents are shifted by -2.5 (`inputs`).
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jitviz.numpy as jnp  # noqa: E402
from jitviz import lax  # noqa: E402


def _logistic_np(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


# name -> (jitviz function, NumPy function (x, out), jax function, input range)
UNARY = {
    "exp": (jnp.exp, np.exp, "exp", (-5, 5)),
    "log": (jnp.log, np.log, "log", (0, 10)),
    "tanh": (jnp.tanh, np.tanh, "tanh", (-5, 5)),
    "logistic": (lax.logistic, _logistic_np, None, (-5, 5)),
    "log1p": (jnp.log1p, np.log1p, "log1p", (0, 10)),
    "expm1": (jnp.expm1, np.expm1, "expm1", (-5, 5)),
    "sin": (jnp.sin, np.sin, "sin", (-10, 10)),
    "cos": (jnp.cos, np.cos, "cos", (-10, 10)),
    "tan": (jnp.tan, np.tan, "tan", (-10, 10)),
    "log2": (jnp.log2, np.log2, "log2", (0, 10)),
    "log10": (jnp.log10, np.log10, "log10", (0, 10)),
    "exp2": (jnp.exp2, np.exp2, "exp2", (-5, 5)),
    "sinh": (jnp.sinh, np.sinh, "sinh", (-5, 5)),
    "cosh": (jnp.cosh, np.cosh, "cosh", (-5, 5)),
    "arcsinh": (jnp.arcsinh, np.arcsinh, "arcsinh", (-5, 5)),
    "arccosh": (jnp.arccosh, np.arccosh, "arccosh", (1, 5)),
    "arctanh": (jnp.arctanh, np.arctanh, "arctanh", (-1, 1)),
    "arcsin": (jnp.arcsin, np.arcsin, "arcsin", (-1, 1)),
    "arccos": (jnp.arccos, np.arccos, "arccos", (-1, 1)),
    "arctan": (jnp.arctan, np.arctan, "arctan", (-5, 5)),
    "cbrt": (jnp.cbrt, np.cbrt, "cbrt", (-10, 10)),
    # x ** 2.5, the common form of pow: one exponent for the whole array (NumPy's SIMD pow
    # loop wants two contiguous arrays, so this is its slow path)
    "pow_y2.5": (lambda x: x ** 2.5, lambda x, out: np.power(x, x.dtype.type(2.5), out=out),
                 lambda xp: (lambda x: x ** 2.5), (0, 5)),
}
BINARY = {
    "arctan2": (jnp.arctan2, np.arctan2, "arctan2", (-5, 5)),
    "pow": (lax.pow, np.power, "power", (0, 5)),
}


def selected(only: str) -> list:
    """The function names of `--only` (comma-separated; empty: all of them), checked."""
    names = [s for s in only.split(",") if s] or list(UNARY) + list(BINARY)
    unknown = [n for n in names if n not in UNARY and n not in BINARY]
    if unknown:
        raise SystemExit(f"--only: no function {', '.join(unknown)}; the functions are "
                         f"{', '.join(list(UNARY) + list(BINARY))}")
    return names


def inputs(name, dtype, n, rng):
    """The operands of one row: n values of `dtype` in the function's range."""
    binary = name in BINARY
    lo, hi = (BINARY if binary else UNARY)[name][3]
    args = tuple((lo + (hi - lo) * rng.random(n)).astype(dtype) for _ in range(2 if binary else 1))
    if name == "pow":
        args = (args[0], (args[1] - 2.5).astype(dtype))
    return args
