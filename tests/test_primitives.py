"""The primitive registry: every primitive has its rules, and each rule is tested.

`CASES` holds, per primitive, representative operands and params with a NumPy reference.
For each case the shape/dtype rule (`abstract_eval`) must predict the reference's shape and
dtype exactly, `impl` must compute the reference's values in that dtype, eager `bind` must
return a jitviz Array of the predicted type, and a trace of the primitive must typecheck and
evaluate to the same values. `test_every_primitive_has_a_case` fails as soon as a primitive
is added to the registry without a case here.
"""
from __future__ import annotations

import math
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import jitviz
import jitviz.debug  # noqa: F401  (registers debug_print)
from jitviz import lax
from jitviz.core.ir import ClosedJaxpr, ShapedArray
from jitviz.core.registry import PRIMITIVES
from jitviz.core.trace import concrete_aval
from jitviz.lax import primitives as P

from helpers import assert_close, float64_kept, trace_and_check

@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests compute at the dtypes they name, float64 included: jitviz's keep_float64
    switch keeps NumPy float64 operands float64 without x64 (JAX would need x64)."""
    with float64_kept():
        yield



def _erf_inv_reference(x):
    """erf's inverse by bisection on math.erf (a reference independent of jitviz's)."""
    if abs(x) >= 1:
        return math.copysign(math.inf, x)
    lo, hi = -7.0, 7.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < x else (lo, mid)
    return (lo + hi) / 2

def _import_all_of_jitviz():
    """Every module that may register a primitive, so the registry test sees them all
    whichever other tests run (a module that fails to import here fails its own tests)."""
    import importlib
    import pkgutil
    for mod in pkgutil.walk_packages(jitviz.__path__, "jitviz."):
        try:
            importlib.import_module(mod.name)
        except Exception:  # noqa: BLE001
            pass


_import_all_of_jitviz()

f32, f64, f16, i32, i8, u8, c64 = (np.float32, np.float64, np.float16, np.int32, np.int8,
                                   np.uint8, np.complex64)
rng = np.random.default_rng(0)


def F(*shape, dtype=f32, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def I(*shape, dtype=i32, lo=-5, hi=6):
    return rng.integers(lo, hi, shape).astype(dtype)


def B(*shape):
    return rng.integers(0, 2, shape).astype(bool)


def C(*shape):
    return (F(*shape) + 1j * F(*shape)).astype(c64)


POS = F(2, 3, lo=0.5, hi=3.0)  # positive operands for log, sqrt, ...
UNIT = F(2, 3, lo=-0.9, hi=0.9)  # inside (-1, 1) for asin, atanh, ...
X23, Y23 = F(2, 3), F(2, 3)


def closed(f, *args):
    """A ClosedJaxpr for a control-flow param (no consts)."""
    c = jitviz.make_jaxpr(f)(*args)
    assert not c.consts
    return ClosedJaxpr(c.jaxpr, ())


class Case(NamedTuple):
    prim: str
    args: tuple
    params: dict
    ref: Callable  # NumPy reference: ref(*args) -> array or list of arrays
    id: str = ""


def _complex_ref(x, y):
    """x + iy part by part (x + 1j * y turns an infinite y's real part into NaN)."""
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)),
                   np.result_type(x, y, np.complex64))
    out.real, out.imag = x, y
    return out


def _round_away(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype)


def _trunc_div(a, b):
    return np.trunc(a.astype(f64) / b).astype(a.dtype)


def _iota(dtype, shape, dimension):
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(
        [-1 if i == dimension else 1 for i in range(len(shape))]), shape)


def _unary_cases():
    inexact = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p,
               "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
               "tan": np.tan, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
               "asinh": np.arcsinh, "sqrt": np.sqrt}
    out = []
    for name, fn in inexact.items():
        arg = POS if name in ("log", "sqrt", "log1p") else X23
        out.append(Case(name, (arg,), {}, fn))
    out += [
        Case("exp", (F(3, dtype=f64),), {}, np.exp, "f64"),
        Case("erf", (X23,), {}, np.vectorize(math.erf, otypes=[f32])),
        Case("erfc", (F(4, dtype=f64, lo=-3, hi=6),), {}, np.vectorize(math.erfc), "f64"),
        Case("erf_inv", (np.array([-0.99, -0.3, 0.0, 1e-30, 0.5, 0.9], f32),), {},
             lambda x: np.vectorize(_erf_inv_reference, otypes=[f32])(x)),
        Case("sin", (C(3),), {}, np.sin, "c64"),
        Case("log", (F(3, dtype=f16, lo=0.5),), {}, np.log, "f16"),
        Case("asin", (UNIT,), {}, np.arcsin), Case("acos", (UNIT,), {}, np.arccos),
        Case("atanh", (UNIT,), {}, np.arctanh),
        Case("acosh", (F(2, 3, lo=1.1, hi=4.0),), {}, np.arccosh),
        Case("rsqrt", (POS,), {}, lambda x: (1 / np.sqrt(x)).astype(x.dtype)),
        Case("cbrt", (X23,), {}, np.cbrt),
        Case("logistic", (X23,), {}, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype)),
        Case("neg", (X23,), {}, np.negative), Case("neg", (I(4),), {}, np.negative, "int"),
        Case("sign", (np.array([-2.0, 0.0, 3.0], f32),), {}, np.sign),
        Case("sign", (I(5),), {}, np.sign, "int"),
        Case("floor", (X23,), {}, np.floor), Case("ceil", (X23,), {}, np.ceil),
        Case("round", (np.array([-2.5, -0.5, 0.5, 1.5, 2.4], f32),), {"rounding_method": 0},
             _round_away, "away"),
        Case("round", (np.array([-2.5, -0.5, 0.5, 1.5, 2.4], f32),), {"rounding_method": 1},
             np.round, "even"),
        Case("is_finite", (np.array([1.0, np.inf, -np.inf, np.nan], f32),), {}, np.isfinite),
        Case("square", (X23,), {}, np.square), Case("square", (I(3),), {}, np.square, "int"),
        Case("abs", (X23,), {}, np.abs), Case("abs", (I(4),), {}, np.abs, "int"),
        Case("abs", (C(3),), {}, np.abs, "complex->real"),
        Case("not", (B(4),), {}, np.invert, "bool"), Case("not", (I(4),), {}, np.invert, "int"),
        Case("real", (C(3),), {}, np.real), Case("imag", (C(3),), {}, np.imag),
        Case("conj", (C(3),), {}, np.conj),
        Case("integer_pow", (X23,), {"y": 3}, lambda x: x ** 3),
        Case("integer_pow", (POS,), {"y": -2}, lambda x: (x ** -2).astype(x.dtype), "neg"),
        Case("integer_pow", (I(4),), {"y": 2}, lambda x: x ** 2, "int"),
        Case("integer_pow", (X23,), {"y": 0}, np.ones_like, "zero"),
    ]
    return out


def _binary_cases():
    a, b = X23, Y23
    ia, ib = I(2, 3), I(2, 3, lo=1, hi=4)
    return [
        Case("add", (a, b), {}, np.add), Case("add", (ia, ib), {}, np.add, "int"),
        Case("add", (a, np.float32(2.0)), {}, np.add, "scalar"),
        Case("add", (F(2, 1), F(1, 3)), {}, np.add, "size-1 dims"),
        Case("sub", (a, b), {}, np.subtract), Case("mul", (a, b), {}, np.multiply),
        Case("mul", (C(3), C(3)), {}, np.multiply, "complex"),
        Case("div", (a, POS), {}, np.divide),
        Case("div", (np.array([7, -7, 7, -7], i32), np.array([2, 2, -2, -2], i32)), {},
             _trunc_div, "int truncates"),
        Case("rem", (a, POS), {}, np.fmod), Case("rem", (ia, ib), {}, np.fmod, "int"),
        Case("pow", (POS, b), {}, np.power), Case("max", (a, b), {}, np.maximum),
        Case("max", (np.array([1.0, np.nan], f32), np.array([np.nan, 0.0], f32)), {},
             np.maximum, "nan"),
        Case("min", (a, b), {}, np.minimum), Case("min", (B(4), B(4)), {}, np.minimum, "bool"),
        Case("atan2", (a, b), {}, np.arctan2), Case("nextafter", (a, b), {}, np.nextafter),
        Case("complex", (a, b), {}, _complex_ref),
        Case("complex", (np.array([np.inf, 1.0, np.nan, -0.0], f32),
                         np.array([np.nan, -np.inf, 2.0, -0.0], f32)), {}, _complex_ref,
             "inf and nan parts stay apart"),
        Case("complex", (np.array([1.5, -2.0]), np.float64(3.0)), {}, _complex_ref, "float64"),
        Case("and", (B(5), B(5)), {}, np.bitwise_and), Case("and", (ia, ib), {}, np.bitwise_and),
        Case("or", (B(5), B(5)), {}, np.bitwise_or), Case("xor", (ia, ib), {}, np.bitwise_xor),
        Case("shift_left", (ia, ib), {}, np.left_shift),
        Case("shift_right_arithmetic", (ia, ib), {}, np.right_shift),
        Case("eq", (ia, ib), {}, np.equal), Case("ne", (a, b), {}, np.not_equal),
        Case("lt", (a, b), {}, np.less), Case("le", (ia, ib), {}, np.less_equal),
        Case("gt", (a, b), {}, np.greater), Case("ge", (B(4), B(4)), {}, np.greater_equal),
        Case("eq", (np.array([np.nan], f32), np.array([np.nan], f32)), {}, np.equal, "nan"),
        # where C leaves integer division undefined, XLA's CPU/GPU results (JAX 0.10.2):
        # x / 0 is -1 (all bits set), INT_MIN / -1 is INT_MIN, x rem 0 is x
        Case("div", (np.array([5, -5, 0, -128, 7], i8), np.array([0, 0, 0, -1, -2], i8)), {},
             lambda x, y: np.array([-1, -1, -1, -128, -3], i8), "int by zero, XLA"),
        Case("div", (np.array([5, 0, 7], u8), np.array([0, 0, 2], u8)), {},
             lambda x, y: np.array([255, 255, 3], u8), "uint by zero, XLA"),
        Case("rem", (np.array([5, -5, -128, 7], i8), np.array([0, 0, -1, -2], i8)), {},
             lambda x, y: np.array([5, -5, 0, 1], i8), "int by zero, XLA"),
        # C's pow, as XLA: pow(-inf, 0.5) is inf and pow(-0.0, 0.5) is +0.0 (sqrt would
        # give nan and -0.0; NumPy's power takes sqrt for a scalar 0.5)
        Case("pow", (np.array([-np.inf, -0.0, np.nan, 4.0, -1.0], f32), np.float32(0.5)), {},
             lambda x, y: np.array([np.inf, 0.0, np.nan, 2.0, np.nan], f32), "nan"),
    ]


def _select_n_3(which, *cases):
    return np.choose(which, cases)



def _lu_reference(a):
    """Doolittle's LU with partial pivoting, one matrix, plain loops (the primitive's is
    vectorized over a batch)."""
    a = np.array(a, np.float64)
    m, n = a.shape
    perm, pivots = list(range(m)), []
    for k in range(min(m, n)):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        pivots.append(p)
        a[[k, p]] = a[[p, k]]
        perm[k], perm[p] = perm[p], perm[k]
        if a[k, k] != 0:
            for i in range(k + 1, m):
                a[i, k] /= a[k, k]
                for j in range(k + 1, n):
                    a[i, j] -= a[i, k] * a[k, j]
    return [a.astype(f32), np.array(pivots, i32), np.array(perm, i32)]


def _linalg_cases():
    """jitviz.lax.linalg's primitives (values against NumPy's LAPACK and pocketfft)."""
    spd = F(3, 3)
    spd = (spd @ spd.T + 3 * np.eye(3)).astype(f32)
    tri = (np.tril(F(3, 3)) + 3 * np.eye(3)).astype(f32)
    b32 = F(3, 2)
    eig = dict(lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None)
    svd = dict(subset_by_index=None, algorithm=None)
    general = dict(compute_right_eigenvectors=True, use_magma=None)
    solve = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                 unit_diagonal=False)
    return [
        Case("cholesky", (spd,), {}, lambda x: np.linalg.cholesky(x)),
        Case("triangular_solve", (tri, b32), solve,
             lambda a, b: np.linalg.solve(np.tril(a), b).astype(f32)),
        Case("triangular_solve", (tri.T.copy(), b32.T.copy()),
             dict(solve, left_side=False, lower=False, transpose_a=True),
             lambda a, b: np.linalg.solve(np.triu(a), b.T).T.astype(f32), "right transposed"),
        Case("lu", (F(3, 4),), {}, _lu_reference),
        Case("qr", (F(4, 3),), dict(full_matrices=False, pivoting=False, use_magma=None),
             lambda x: list(np.linalg.qr(x))),
        Case("eigh", (spd,), eig, lambda x: list(np.linalg.eigh(x))[::-1]),
        Case("eig", (F(3, 3),), dict(general, compute_left_eigenvectors=False),
             lambda x: [v.astype(c64) for v in np.linalg.eig(x)]),
        Case("eig", (F(2, 3, 3),), dict(general, compute_left_eigenvectors=False,
                                        compute_right_eigenvectors=False),
             lambda x: [np.linalg.eigvals(x).astype(c64)], "values"),
        Case("svd", (F(3, 2),), dict(svd, full_matrices=False, compute_uv=True),
             lambda x: (lambda u, s, vt: [s, u, vt])(*np.linalg.svd(x, full_matrices=False))),
        Case("svd", (F(2, 3),), dict(svd, full_matrices=True, compute_uv=False),
             lambda x: [np.linalg.svd(x, compute_uv=False)], "values"),
        Case("lu_pivots_to_permutation", (np.array([[2, 2, 2], [0, 1, 2]], i32),),
             {"permutation_size": 4}, lambda p: np.array([[2, 0, 1, 3], [0, 1, 2, 3]], i32)),
        Case("fft", (C(2, 4),), {"fft_type": 0, "fft_lengths": (4,)},
             lambda x: np.fft.fft(x).astype(c64)),
        Case("fft", (F(2, 4),), {"fft_type": 2, "fft_lengths": (2, 4)},
             lambda x: np.fft.rfft2(x).astype(c64), "rfft2"),
        Case("fft", (C(3, 3),), {"fft_type": 3, "fft_lengths": (4,)},
             lambda x: np.fft.irfft(x, 4).astype(f32), "irfft"),
    ]

def _other_cases():
    x234 = F(2, 3, 4)
    pred = B(2, 3)
    u32 = np.uint32
    return [
        # jitviz.random's hash: JAX's split(PRNGKey(0)) words (threefry of counters 0 and 1)
        Case("threefry2x32", (u32(0), u32(0), np.zeros(2, u32), np.arange(2, dtype=u32)),
             {"word": 0}, lambda *a: np.array([1797259609, 928981903], u32), "word 0"),
        Case("threefry2x32", (u32(0), u32(0), np.zeros(2, u32), np.arange(2, dtype=u32)),
             {"word": 2}, lambda *a: np.array([1797259609 ^ 2579123966,
                                               928981903 ^ 3453687069], u32), "xor"),
        Case("convert_element_type", (np.array([1.7, -1.7, np.nan], f32),),
             {"new_dtype": np.dtype(i32), "weak_type": False},
             lambda x: np.array([1, -1, 0], i32), "float->int truncates, nan->0"),
        # XLA saturates (JAX 0.10.2): infinities and out-of-range values clamp to the bounds
        Case("convert_element_type", (np.array([np.inf, -np.inf, 3e9, -3e9, 2.5], f32),),
             {"new_dtype": np.dtype(i32), "weak_type": False},
             lambda x: np.array([2**31 - 1, -2**31, 2**31 - 1, -2**31, 2], i32), "saturates"),
        Case("convert_element_type", (np.array([np.inf, -1.5, 300.7, np.nan, 254.9]),),
             {"new_dtype": np.dtype(u8), "weak_type": False},
             lambda x: np.array([255, 0, 255, 0, 254], u8), "f64->u8 saturates"),
        Case("convert_element_type", (np.array([np.inf, -np.inf, 9e18, -1e19], f32),),
             {"new_dtype": np.dtype(np.int64), "weak_type": False},
             lambda x: np.array([2**63 - 1, -2**63, 9000000202358128640, -2**63], np.int64),
             "f32->i64 saturates"),
        Case("convert_element_type", (np.array([np.inf, -np.inf, 1000.0, np.nan], f16),),
             {"new_dtype": np.dtype(i8), "weak_type": False},
             lambda x: np.array([127, -128, 127, 0], i8), "f16->i8 saturates"),
        Case("convert_element_type", (I(3),), {"new_dtype": np.dtype(f32), "weak_type": False},
             lambda x: x.astype(f32), "int->float"),
        Case("convert_element_type", (X23,), {"new_dtype": np.dtype(f16), "weak_type": False},
             lambda x: x.astype(f16), "f32->f16"),
        Case("convert_element_type", (C(2),), {"new_dtype": np.dtype(f32), "weak_type": False},
             lambda x: x.real.astype(f32), "complex->real"),
        Case("select_n", (pred, X23, Y23), {}, lambda p, a, b: np.where(p, b, a)),
        Case("select_n", (np.True_, X23, Y23), {}, lambda p, a, b: b, "scalar pred"),
        Case("select_n", (I(2, 3, lo=0, hi=3), X23, Y23, POS), {}, _select_n_3, "int32 3-way"),
        Case("clamp", (np.float32(-0.5), X23, np.float32(0.5)), {},
             lambda lo, x, hi: np.clip(x, lo, hi)),
        Case("broadcast_in_dim", (F(3),), {"shape": (2, 3), "broadcast_dimensions": (1,)},
             lambda x: np.broadcast_to(x, (2, 3))),
        Case("broadcast_in_dim", (F(1, 3),), {"shape": (2, 3), "broadcast_dimensions": (0, 1)},
             lambda x: np.broadcast_to(x, (2, 3)), "size-1"),
        Case("broadcast_in_dim", (np.float32(2.5),), {"shape": (2, 2), "broadcast_dimensions": ()},
             lambda x: np.full((2, 2), x, f32), "scalar"),
        Case("broadcast_in_dim", (F(3),), {"shape": (3, 2), "broadcast_dimensions": (0,)},
             lambda x: np.broadcast_to(x[:, None], (3, 2)), "column"),
        Case("reshape", (x234,), {"new_sizes": (6, 4), "dimensions": None},
             lambda x: x.reshape(6, 4)),
        Case("transpose", (x234,), {"permutation": (2, 0, 1)},
             lambda x: np.transpose(x, (2, 0, 1))),
        Case("squeeze", (F(1, 3, 1),), {"dimensions": (0, 2)}, lambda x: x.reshape(3)),
        Case("rev", (x234,), {"dimensions": (0, 2)}, lambda x: x[::-1, :, ::-1]),
        Case("concatenate", (X23, F(2, 2)), {"dimension": 1},
             lambda a, b: np.concatenate([a, b], 1)),
        Case("stack", (X23, Y23, POS), {"axis": 1}, lambda *xs: np.stack(xs, 1)),
        Case("stack", (np.float32(1), np.float32(2)), {"axis": 0},
             lambda *xs: np.stack(xs), "scalars"),
        Case("slice", (x234,), {"start_indices": (1, 0, 1), "limit_indices": (2, 3, 4),
                                "strides": None}, lambda x: x[1:2, 0:3, 1:4]),
        Case("slice", (F(7),), {"start_indices": (1,), "limit_indices": (7,), "strides": (3,)},
             lambda x: x[1:7:3], "strided"),
        Case("dynamic_slice", (x234, np.int32(1), np.int32(1), np.int32(2)),
             {"slice_sizes": (1, 2, 2)}, lambda x, i, j, k: x[1:2, 1:3, 2:4]),
        Case("dynamic_slice", (F(5), np.int32(4)), {"slice_sizes": (3,)},
             lambda x, i: x[2:5], "start clamped"),
        Case("dynamic_update_slice", (X23, F(1, 2), np.int32(1), np.int32(1)), {},
             lambda x, u, i, j: _dus(x, u, (1, 1))),
        Case("gather", (F(5, 3), np.array([4, 0, 4], i32)), {"axes": (0,)},
             lambda x, i: x[i]),
        Case("gather", (x234, np.array([0, 2], i32), np.array([1, 3], i32)), {"axes": (1, 2)},
             lambda x, i, j: x[:, i, j], "two axes"),
        Case("scatter", (F(5), np.float32(9.0), np.array([1, 3], i32)),
             {"axes": (0,), "mode": "set"}, lambda x, u, i: _scatter_set(x, u, i)),
        Case("scatter", (F(5), F(3), np.array([1, 1, 3], i32)), {"axes": (0,), "mode": "add"},
             lambda x, u, i: _scatter_add(x, u, i), "add repeats"),
        # out of bounds, as JAX: a gather clamps each index, a scatter drops the update
        Case("gather", (F(5, 3), np.array([9, -4, 2, -1, 5], i32)), {"axes": (0,)},
             lambda x, i: x[np.clip(i, 0, 4)], "clamped"),
        Case("gather", (F(0, 0), np.array([1, 0], i32)), {"axes": (1,)},
             lambda x, i: np.empty((0, 2), f32), "nothing from an empty axis"),
        Case("scatter", (F(2, 5), F(2, 5), np.array([9, -4, 2, -1, 5], i32)),
             {"axes": (1,), "mode": "add"},
             lambda x, u, i: _scatter_add(x, u[:, 2:3], (slice(None), np.array([2]))),
             "out of bounds dropped"),
        Case("scatter", (F(0, 3), np.float32(1.0), np.array([0, 1], i32)),
             {"axes": (0,), "mode": "set"}, lambda x, u, i: x, "into an empty axis"),
        Case("dynamic_update_slice", (F(5), F(3), np.int32(-2)), {},
             lambda x, u, i: _dus(x, u, (0,)), "negative start clamped"),
        Case("iota", (), {"dtype": np.dtype(i32), "shape": (4,), "dimension": 0},
             lambda: np.arange(4, dtype=i32)),
        Case("iota", (), {"dtype": np.dtype(f32), "shape": (2, 3), "dimension": 1},
             lambda: _iota(f32, (2, 3), 1), "2d"),
        Case("reduce_sum", (x234,), {"axes": (0, 2)}, lambda x: x.sum((0, 2))),
        Case("reduce_sum", (I(3, 4),), {"axes": (1,)}, lambda x: x.sum(1, dtype=i32), "int"),
        Case("reduce_sum", (X23,), {"axes": ()}, lambda x: x, "no axes"),
        Case("reduce_prod", (X23,), {"axes": (1,)}, lambda x: x.prod(1)),
        Case("reduce_max", (x234,), {"axes": (1,)}, lambda x: x.max(1)),
        Case("reduce_max", (np.array([1.0, np.nan, 3.0], f32),), {"axes": (0,)},
             lambda x: np.float32(np.nan), "nan"),
        Case("reduce_max", (F(0, 2),), {"axes": (0,)}, lambda x: np.full(2, -np.inf, f32),
             "empty"),
        Case("reduce_min", (I(3, 4),), {"axes": (0, 1)}, lambda x: x.min()),
        # complex values order lexicographically (real part, then imaginary), as in NumPy
        Case("reduce_max", (np.array([[1 + 2j, 1 + 3j, 0 + 9j], [-np.inf - 5j, -np.inf - 7j,
                                       2 - 1j]], c64),), {"axes": (1,)}, lambda x: x.max(1),
             "complex"),
        Case("reduce_min", (np.array([[1 + 2j, 1 + 3j], [np.inf + 5j, np.inf + 7j]], c64),),
             {"axes": (1,)}, lambda x: x.min(1), "complex"),
        Case("reduce_max", (np.zeros((0, 2), c64),), {"axes": (0,)},
             lambda x: np.full(2, complex(-np.inf, -np.inf), c64), "complex empty"),
        Case("reduce_and", (B(3, 4),), {"axes": (1,)}, lambda x: x.all(1)),
        Case("reduce_or", (B(3, 4),), {"axes": (0,)}, lambda x: x.any(0)),
        Case("reduce_or", (I(3),), {"axes": (0,)},
             lambda x: np.bitwise_or.reduce(x), "int"),
        Case("argmax", (X23,), {"axes": (1,), "index_dtype": np.dtype(i32)},
             lambda x: x.argmax(1).astype(i32)),
        Case("argmin", (X23,), {"axes": (0,), "index_dtype": np.dtype(i32)},
             lambda x: x.argmin(0).astype(i32)),
        Case("cumsum", (X23,), {"axis": 1, "reverse": False}, lambda x: np.cumsum(x, 1)),
        Case("cumsum", (I(5),), {"axis": 0, "reverse": True},
             lambda x: np.cumsum(x[::-1])[::-1].astype(i32), "reverse"),
        Case("cumprod", (X23,), {"axis": 0, "reverse": False}, lambda x: np.cumprod(x, 0)),
        Case("cummax", (X23,), {"axis": 1, "reverse": False},
             lambda x: np.maximum.accumulate(x, 1)),
        Case("cummin", (I(6),), {"axis": 0, "reverse": False},
             lambda x: np.minimum.accumulate(x)),
        Case("stop_gradient", (X23,), {}, lambda x: x),
        Case("name", (X23,), {"name": "a"}, lambda x: x),  # ad_checkpoint.checkpoint_name
        *_linalg_cases(),
        Case("sort", (np.array([[3, -0.0, np.nan, 0, -1, 3], [1, 1, 0, -np.inf, 5, 0.5]], f32),),
             {"dimension": 1, "is_stable": True, "num_keys": 1},
             lambda x: [np.sort(x, 1, kind="stable")], "nan zeros ties"),
        Case("sort", (np.array([[2, 1], [1, 1], [2, 0]], f32),
                      np.arange(6, dtype=i32).reshape(3, 2)),
             {"dimension": 0, "is_stable": True, "num_keys": 1},
             lambda k, v: [np.sort(k, 0, kind="stable"),
                           np.take_along_axis(v, np.argsort(k, 0, kind="stable"), 0)],
             "key and value"),
        Case("sort", (np.array([3, 1, 2, 1, 3], i32), np.array([True, False, True, True, False])),
             {"dimension": 0, "is_stable": False, "num_keys": 1},
             lambda k, v: [np.sort(k, kind="stable"), v[np.argsort(k, kind="stable")]], "int"),
        Case("sort", (np.array([True, False, True, False]),),
             {"dimension": 0, "is_stable": True, "num_keys": 1}, lambda x: [np.sort(x)], "bool"),
        Case("dot_general", (F(3, 4), F(4, 5)),
             {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
              "preferred_element_type": np.dtype(f32)}, lambda a, b: a @ b),
        Case("dot_general", (F(2, 3, 4), F(2, 4, 5)),
             {"dimension_numbers": (((2,), (1,)), ((0,), (0,))), "precision": None,
              "preferred_element_type": np.dtype(f32)}, lambda a, b: a @ b, "batch"),
        Case("dot_general", (F(4), F(4)),
             {"dimension_numbers": (((0,), (0,)), ((), ())), "precision": None,
              "preferred_element_type": np.dtype(f32)}, lambda a, b: np.dot(a, b), "vectors"),
        Case("dot_general", (I(3, 4), I(4)),
             {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
              "preferred_element_type": np.dtype(i32)}, lambda a, b: a @ b, "int"),
        Case("dot_general", (F(4), np.float32(2.0)),
             {"dimension_numbers": (((), ()), ((), ())), "precision": None,
              "preferred_element_type": np.dtype(f32)}, lambda a, b: a * b, "scalar"),
    ]


def _dus(x, u, starts):
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return out


def _scatter_set(x, u, i):
    out = x.copy()
    out[i] = u
    return out


def _scatter_add(x, u, i):
    out = x.copy()
    np.add.at(out, i, u)
    return out


def _custom_sin_params(s):
    """The params of a `custom_vjp` call of sin (its bwd the true derivative)."""
    sin = jitviz.custom_vjp(lambda x: lax.sin(x))
    sin.defvjp(lambda x: (lax.sin(x), x), lambda x, g: (g * lax.cos(x),))
    return jitviz.make_jaxpr(sin)(s).jaxpr.eqns[0].params


def _custom_mul_sin_params(s):
    """The params of a `custom_jvp` call of sin(x) * y (its rule the true derivative, so the
    transformation tests check the rule's transpose too)."""
    f = jitviz.custom_jvp(lambda x, y: lax.sin(x) * y)
    f.defjvp(lambda p, t: (f(*p), lax.cos(p[0]) * t[0] * p[1] + lax.sin(p[0]) * t[1]))
    return jitviz.make_jaxpr(f)(s, s).jaxpr.eqns[0].params


def _checkpoint_params(s):
    """The params of a `jitviz.checkpoint` call of sin(x) * y."""
    f = jitviz.checkpoint(lambda x, y: lax.sin(x) * y)
    return jitviz.make_jaxpr(f)(s, s).jaxpr.eqns[0].params


def _control_cases():
    s = np.float32(1.5)
    neg = closed(lambda x: -x, s)
    ident = closed(lambda x: x, s)
    double = closed(lambda x: x * 2, s)
    cond_j = closed(lambda x: x < 10, s)
    body_j = closed(lambda x: x * 2, s)
    scan_j = closed(lambda c, x: (c + x, c * x), s, s)
    scan_const = closed(lambda k, c, x: (c + k * x, c), s, s, s)
    sin_j = closed(lambda x, y: (np.sin(x) + y,), s, s)

    def py_scan(c, xs):
        ys = []
        for x in xs:
            c, y = c + x, c * x
            ys.append(y)
        return [np.float32(c), np.array(ys, f32)]

    def py_scan_const(k, c, xs):
        ys = []
        for x in xs:
            c, y = c + k * x, c
            ys.append(y)
        return [np.float32(c), np.array(ys, f32)]

    def py_while(x):
        while x < 10:
            x = x * 2
        return [np.float32(x)]

    xs = np.arange(1, 5, dtype=f32)
    return [
        Case("cond", (np.int32(0), s), {"branches": (neg, ident)}, lambda i, x: [-x]),
        Case("cond", (np.int32(2), s), {"branches": (neg, ident, double)},
             lambda i, x: [x * 2], "3 branches"),
        Case("while", (s,), {"cond_jaxpr": cond_j, "cond_nconsts": 0, "body_jaxpr": body_j,
                             "body_nconsts": 0}, py_while),
        Case("scan", (s, xs), {"jaxpr": scan_j, "length": 4, "reverse": False,
                               "num_consts": 0, "num_carry": 1, "unroll": 1}, py_scan),
        Case("scan", (np.float32(2), s, xs),
             {"jaxpr": scan_const, "length": 4, "reverse": True, "num_consts": 1,
              "num_carry": 1, "unroll": 1},
             lambda k, c, xs: py_scan_const(k, c, xs[::-1])[:1]
             + [py_scan_const(k, c, xs[::-1])[1][::-1]], "const, reverse"),
        Case("jit", (s, s), {"name": "f", "jaxpr": sin_j},
             lambda x, y: [np.sin(x) + y]),
        Case("debug_print", (X23, np.float32(3)), {"fmt": "{} and {y}", "names": ("y",)},
             lambda *a: []),
        Case("custom_vjp_call", (s,), _custom_sin_params(s), lambda x: [np.sin(x)]),
        Case("custom_jvp_call", (s, s), _custom_mul_sin_params(s), lambda x, y: [np.sin(x) * y]),
        Case("remat2", (s, s), _checkpoint_params(s), lambda x, y: [np.sin(x) * y]),
    ] + ([  # the fusion pass's kernel primitive (jitviz.passes.fuse)
        Case("fused", (s, s), {"name": "mul_add", "jaxpr": closed(lambda x, y: (x * y + x,), s, s)},
             lambda x, y: [x * y + x]),
    ] if "fused" in PRIMITIVES else [])


def _callback_cases():
    """The host-callback primitives (jitviz/callbacks.py): a NumPy function called on the
    host with the operands; tests/test_callbacks.py tests them through their API."""
    from jitviz.callbacks import host_callback
    from jitviz.tree import tree_flatten

    def params(fn, api, out_avals, n_args, **extra):
        _, in_tree = tree_flatten(((0,) * n_args, {}))
        out_tree = tree_flatten(tuple(out_avals))[1] if api != "debug.callback" else None
        if api != "debug.callback" and len(out_avals) == 1:
            out_tree = tree_flatten(out_avals[0])[1]
        cb = host_callback(fn, api, in_tree, out_tree, out_avals)
        return {"callback": cb, **({"result_avals": tuple(out_avals)} if out_avals else {}),
                **extra}

    sa = ShapedArray((2, 3), np.dtype(f32), False)
    return [
        Case("pure_callback", (X23,), params(np.sin, "pure_callback", (sa,), 1, sharding=None,
                                             vmap_method="sequential"), lambda x: [np.sin(x)]),
        Case("pure_callback", (X23,), params(np.sin, "pure_callback", (sa,), 1, sharding=None,
                                             vmap_method="expand_dims"), lambda x: [np.sin(x)],
             "expand_dims"),
        Case("io_callback", (X23, X23), params(np.add, "io_callback", (sa,), 2, ordered=False,
                                               sharding=None), lambda x, y: [x + y]),
        Case("debug_callback", (X23,), params(lambda x: None, "debug.callback", (), 1,
                                              effect="Debug", partitioned=False),
             lambda x: []),
    ]


# --- the special functions (jitviz/lax/special.py): references from independent formulas ----

def _ref(fn, dtype=f32):
    return lambda *args: np.vectorize(fn, otypes=[np.float64])(*args).astype(dtype)


def _digamma_ref(x):  # the derivative of libm's lgamma, by a central difference
    return (math.lgamma(x + 1e-6) - math.lgamma(x - 1e-6)) / 2e-6


def _igamma_int_ref(a, x):  # P(n, x) = 1 - e^-x sum_{k < n} x^k / k!
    return 1 - math.exp(-x) * sum(x ** k / math.factorial(k) for k in range(int(a)))


def _betainc_int_ref(a, b, x):  # I_x(a, b) = sum_{j >= a} C(n, j) x^j (1 - x)^(n - j)
    n = int(a + b - 1)
    return sum(math.comb(n, j) * x ** j * (1 - x) ** (n - j) for j in range(int(a), n + 1))


def _bessel_ie_ref(order):  # (1/pi) int_0^pi e^(x cos t - |x|) cos(order t) dt, spectrally
    t = (np.arange(4096) + 0.5) * np.pi / 4096
    return lambda x: float(np.mean(np.exp(x * np.cos(t) - abs(x)) * np.cos(order * t)))


def _zeta_ref(s, q):  # the sum to N, the integral and half a term beyond it
    n = 20000
    return float(np.sum((q + np.arange(n)) ** -s) + (q + n) ** (1 - s) / (s - 1)
                 + 0.5 * (q + n) ** -s)


def _igamma_series(a, x):  # P(a, x) = sum_n x^(a + n) e^-x / Gamma(a + n + 1)
    return sum(math.exp((a + n) * math.log(x) - x - math.lgamma(a + n + 1)) for n in range(200))


def _igamma_grad_a_ref(a, x):  # its central difference in a
    return (_igamma_series(a + 1e-6, x) - _igamma_series(a - 1e-6, x)) / 2e-6


def _special_cases():
    pos = F(2, 3, lo=0.3, hi=6.0)
    a_int = np.array([[1, 2, 3], [4, 2, 1]], f32)
    return [
        Case("lgamma", (F(2, 3, lo=-4.0, hi=8.0),), {}, _ref(math.lgamma)),
        Case("lgamma", (F(4, dtype=f64, lo=0.1, hi=30.0),), {}, _ref(math.lgamma, f64), "f64"),
        Case("digamma", (pos,), {}, _ref(_digamma_ref)),
        Case("igamma", (a_int, pos), {}, _ref(_igamma_int_ref)),
        Case("igammac", (a_int, pos), {}, _ref(lambda a, x: 1 - _igamma_int_ref(a, x))),
        Case("regularized_incomplete_beta", (a_int, a_int.T.reshape(2, 3), F(2, 3, lo=0.05,
                                                                           hi=0.95)),
             {}, _ref(_betainc_int_ref)),
        Case("bessel_i0e", (F(2, 3, lo=-40.0, hi=40.0),), {}, _ref(_bessel_ie_ref(0))),
        Case("bessel_i1e", (F(2, 3, lo=-40.0, hi=40.0),), {}, _ref(_bessel_ie_ref(1))),
        Case("zeta", (F(2, 3, lo=1.5, hi=5.0), pos), {}, _ref(_zeta_ref)),
        Case("igamma_grad_a", (F(2, 3, lo=0.5, hi=4.0), pos), {}, _ref(_igamma_grad_a_ref)),
        Case("random_gamma_grad", (a_int, pos), {}, _ref(  # -(dP/da) / (dP/dx)
            lambda a, x: -_igamma_grad_a_ref(a, x) * math.gamma(a) / (x ** (a - 1) * math.exp(-x)))),
        Case("polygamma", (np.ones((2, 3), f32), pos), {},
             _ref(lambda n, x: _zeta_ref(2.0, x))),
    ]


CASES = (_unary_cases() + _binary_cases() + _other_cases() + _control_cases()
         + _callback_cases() + _special_cases())


def _case_id(c):
    return f"{c.prim}-{c.id}" if c.id else c.prim


def _as_list(out, prim):
    return list(out) if prim.multiple_results else [out]


# --- the registry ----------------------------------------------------------------------------

def test_every_primitive_has_rules():
    for name, prim in PRIMITIVES.items():
        assert prim.name == name
        assert callable(prim.abstract_eval), name
        assert callable(prim.impl), name


def primitives_needing_cases() -> set:
    """Every registered primitive's name but the collectives', which exist only inside a
    vmap with an axis name (tests/test_collectives.py tests them there)."""
    from jitviz.transforms.collectives import COLLECTIVES
    return set(PRIMITIVES) - {p.name for p in COLLECTIVES}


def test_every_primitive_has_a_case():
    """Adding a primitive without adding a case here fails this test."""
    covered = {c.prim for c in CASES}
    missing = sorted(primitives_needing_cases() - covered)
    assert not missing, f"primitives without a test case in CASES: {missing}"
    unknown = sorted(covered - set(PRIMITIVES))
    assert not unknown, f"cases for primitives that do not exist: {unknown}"


def test_primitive_defined_twice_is_an_error():
    from jitviz.core.registry import primitive
    with pytest.raises(ValueError, match="defined twice"):
        primitive("add", abstract_eval=lambda x: x, impl=lambda x: x)


# --- each case ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_abstract_eval_matches_numpy(case):
    prim = PRIMITIVES[case.prim]
    avals = [concrete_aval(a, "operand")[1] for a in case.args]
    out = _as_list(prim.abstract_eval(*avals, **case.params), prim)
    ref = case.ref(*case.args)
    ref = [np.asarray(r) for r in (ref if isinstance(ref, list) else [ref])]
    assert len(out) == len(ref)
    for av, r in zip(out, ref):
        assert isinstance(av, ShapedArray)
        assert av.shape == r.shape, (av, r.shape)
        assert av.dtype == r.dtype, (av, r.dtype)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_impl_matches_numpy(case, capsys):
    prim = PRIMITIVES[case.prim]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # impls must not leak NumPy warnings
        out = _as_list(prim.impl(*[np.asarray(a) for a in case.args], **case.params), prim)
    ref = case.ref(*case.args)
    ref = ref if isinstance(ref, list) else [ref]
    for o, r in zip(out, ref):
        assert_close(np.asarray(o).astype(np.asarray(r).dtype), r, rtol=2e-6)
        assert np.asarray(o).dtype == np.asarray(r).dtype or prim.name == "debug_print"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_eager_bind_returns_arrays_of_the_rule_type(case, capsys):
    prim = PRIMITIVES[case.prim]
    avals = [concrete_aval(a, "operand")[1] for a in case.args]
    expect = _as_list(prim.abstract_eval(*avals, **case.params), prim)
    out = _as_list(prim.bind(*case.args, **case.params), prim)
    for o, av in zip(out, expect):
        assert isinstance(o, jitviz.Array)
        assert o.shape == av.shape and o.dtype == av.dtype and o.weak_type == av.weak_type


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_traced_primitive_typechecks_and_evaluates(case, capsys):
    prim = PRIMITIVES[case.prim]
    params = case.params

    def f(*xs):
        return prim.bind(*xs, **params)

    ref = case.ref(*case.args)
    closed_jaxpr = trace_and_check(f, *case.args, expected=ref, rtol=2e-6)
    assert [e.primitive.name for e in closed_jaxpr.jaxpr.eqns] == [case.prim]


def test_debug_print_prints_at_eval(capsys):
    c = jitviz.make_jaxpr(lambda x: jitviz.debug.print("x={}", x))(np.float32(2))
    assert capsys.readouterr().out == ""
    jitviz.eval_jaxpr(c.jaxpr, c.consts, np.float32(2))
    assert capsys.readouterr().out == "x=2.0\n"


# --- weak types ------------------------------------------------------------------------------

def _sa(shape=(), dtype=f32, weak=False):
    return ShapedArray(shape, dtype, weak)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "max", "min", "pow", "atan2"])
def test_binary_weak_type_only_when_both_weak(name):
    rule = PRIMITIVES[name].abstract_eval
    assert rule(_sa(weak=True), _sa(weak=True)).weak_type
    assert not rule(_sa(weak=True), _sa()).weak_type
    assert not rule(_sa(), _sa(weak=True)).weak_type
    assert not rule(_sa(), _sa()).weak_type


@pytest.mark.parametrize("name", ["neg", "sin", "exp", "log", "sqrt", "tanh", "abs", "floor",
                                  "square", "sign", "logistic"])
def test_unary_keeps_weak_type(name):
    rule = PRIMITIVES[name].abstract_eval
    assert rule(_sa((3,), weak=True)) == _sa((3,), weak=True)
    assert rule(_sa((3,))) == _sa((3,))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_are_bool_weak_only_when_both_operands_are(name):
    # as jax.lax 0.10: lax.eq(weak, weak).weak_type is True, lax.eq(weak, strong) False
    rule = PRIMITIVES[name].abstract_eval
    assert rule(_sa((2,), weak=True), _sa((2,), weak=True)) == ShapedArray((2,), np.bool_, True)
    assert rule(_sa((2,), weak=True), _sa((2,))) == ShapedArray((2,), np.bool_, False)


def test_weak_type_through_structural_and_reduction_rules():
    w = _sa((2, 3), weak=True)
    assert P.broadcast_in_dim_p.abstract_eval(_sa(weak=True), shape=(2,),
                                              broadcast_dimensions=()).weak_type
    assert P.reshape_p.abstract_eval(w, new_sizes=(6,), dimensions=None).weak_type
    assert P.transpose_p.abstract_eval(w, permutation=(1, 0)).weak_type
    # lax-level reductions keep weakness (as jax.lax); jnp makes the operand strong first
    assert P.reduce_sum_p.abstract_eval(w, axes=(0,)).weak_type
    assert not P.argmax_p.abstract_eval(w, axes=(0,), index_dtype=np.dtype(i32)).weak_type
    # a unary rule keeps the operand's weak type even for a new dtype (jax.lax.is_finite of
    # a weak float is a weak bool, lax.abs of a weak complex a weak float)
    assert P.is_finite_p.abstract_eval(w).weak_type
    assert P.abs_p.abstract_eval(_sa((2,), c64, weak=True)) == _sa((2,), f32, weak=True)
    out = P.convert_element_type_p.abstract_eval(w, new_dtype=np.dtype(f32), weak_type=False)
    assert out == _sa((2, 3))


def test_python_scalars_bind_weakly_and_keep_their_value():
    out = lax.mul(2.0, 3.0)
    assert out.dtype == f32 and out.weak_type and float(out) == 6.0
    out = lax.add(np.float32(1), 2.0)  # strong f32 + weak f32 -> strong
    assert out.dtype == f32 and not out.weak_type


# --- errors ----------------------------------------------------------------------------------

def test_lax_add_requires_same_dtypes():
    with pytest.raises(TypeError) as e:
        lax.add(1, 1.0)
    assert str(e.value).startswith(
        "add requires arguments to have the same dtypes, got int32, float32")


def test_lax_rule_error_inside_a_trace_names_the_user_line():
    def f(x):
        return lax.mul(x, np.int32(2))  # the offending line
    with pytest.raises(TypeError) as e:
        jitviz.make_jaxpr(f)(np.float32(1))
    msg = str(e.value)
    assert msg.startswith("mul requires arguments to have the same dtypes, got float32, int32")
    assert f"{__file__}:" in msg and "the offending line" in msg


ERRORS = [
    ("sin", [_sa((3,), i32)], {}, "sin does not accept dtype int32"),
    ("add", [_sa((2, 3)), _sa((2, 4))], {}, "incompatible shapes"),
    ("add", [_sa((2, 3)), _sa((3,))], {}, "same number of dimensions"),
    ("and", [_sa((2,)), _sa((2,))], {}, "and does not accept dtype float32"),
    ("conj", [_sa((2,))], {}, "does not accept dtype float32"),
    ("integer_pow", [_sa((2,), i32)], {"y": -1}, "negative exponent"),
    ("select_n", [_sa((2,), np.bool_), _sa((2,)), _sa((2,), i32)], {}, "same shapes and dtypes"),
    ("select_n", [_sa((), f32), _sa((2,)), _sa((2,))], {}, "bool or int32"),
    ("clamp", [_sa((), i32), _sa((2,)), _sa(())], {}, "same dtypes"),
    ("broadcast_in_dim", [_sa((3,))], {"shape": (2, 4), "broadcast_dimensions": (1,)},
     "cannot broadcast"),
    ("reshape", [_sa((2, 3))], {"new_sizes": (4,), "dimensions": None}, "size must be unchanged"),
    ("transpose", [_sa((2, 3))], {"permutation": (0, 0)}, "not a permutation"),
    ("squeeze", [_sa((2, 3))], {"dimensions": (0,)}, "not 1"),
    ("concatenate", [_sa((2,)), _sa((2,), i32)], {"dimension": 0}, "same dtypes"),
    ("stack", [_sa((2,)), _sa((3,))], {"axis": 0}, "same shape and dtype"),
    ("slice", [_sa((3,))], {"start_indices": (2,), "limit_indices": (5,), "strides": None},
     "out of bounds"),
    ("dynamic_slice", [_sa((3,)), _sa((), f32)], {"slice_sizes": (1,)}, "integer scalars"),
    ("dynamic_slice", [_sa((3,)), _sa((), i32)], {"slice_sizes": (4,)}, "do not fit"),
    ("dynamic_update_slice", [_sa((3,)), _sa((4,)), _sa((), i32)], {}, "larger"),
    ("gather", [_sa((3,)), _sa((2,), f32)], {"axes": (0,)}, "indices must be integers"),
    ("gather", [_sa((0, 3)), _sa((2,), i32)], {"axes": (0,)}, "axis 0 .* is empty"),
    ("scatter", [_sa((3,)), _sa((), i32), _sa((2,), i32)], {"axes": (0,), "mode": "set"},
     "differs from operand"),
    ("reduce_and", [_sa((2,))], {"axes": (0,)}, "does not accept dtype float32"),
    ("dot_general", [_sa((3, 4)), _sa((5, 6))],
     {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
      "preferred_element_type": None}, "contracting dimensions"),
    ("dot_general", [_sa((3, 4)), _sa((4,), i32)],
     {"dimension_numbers": (((1,), (0,)), ((), ())), "precision": None,
      "preferred_element_type": None}, "same dtype"),
]


@pytest.mark.parametrize("name,avals,params,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_rule_rejects_bad_operands(name, avals, params, match):
    with pytest.raises(TypeError, match=match):
        PRIMITIVES[name].abstract_eval(*avals, **params)


@pytest.mark.parametrize("name,avals,params,match", [
    ("reduce_sum", [_sa((2, 3))], {"axes": (2,)}, "invalid"),
    ("cumsum", [_sa((2,))], {"axis": 3, "reverse": False}, "out of bounds"),
    ("cumsum", [_sa(())], {"axis": 0, "reverse": False}, "out of bounds"),
])
def test_bad_axes_are_value_errors(name, avals, params, match):
    """JAX's class for an axis out of bounds in lax's reductions and cumulative ops."""
    with pytest.raises(ValueError, match=match):
        PRIMITIVES[name].abstract_eval(*avals, **params)


def test_argmax_of_an_empty_axis_is_a_value_error():
    with pytest.raises(ValueError, match="empty sequence"):
        P.argmax_p.abstract_eval(_sa((0,)), axes=(0,), index_dtype=np.dtype(i32))


def test_control_flow_rules_reject_mismatched_operands():
    s = np.float32(1)
    neg = closed(lambda x: -x, s)
    with pytest.raises(TypeError, match="index must be an int32 scalar"):
        PRIMITIVES["cond"].abstract_eval(_sa((), f32), _sa(), branches=(neg, neg))
    with pytest.raises(TypeError, match="branch inputs do not match"):
        PRIMITIVES["cond"].abstract_eval(_sa((), i32), _sa((), i32), branches=(neg, neg))
    body = closed(lambda x: x.astype(np.int32), s)
    with pytest.raises(TypeError, match="does not match its carry"):
        PRIMITIVES["while"].abstract_eval(_sa(), cond_jaxpr=closed(lambda x: x < 1, s),
                                          cond_nconsts=0, body_jaxpr=body, body_nconsts=0)
    scan_j = closed(lambda c, x: (c + x, c), s, s)
    with pytest.raises(TypeError, match="leading dimension must be 4"):
        PRIMITIVES["scan"].abstract_eval(_sa(), _sa((3,)), jaxpr=scan_j, length=4,
                                         reverse=False, num_consts=0, num_carry=1, unroll=1)
    with pytest.raises(TypeError, match="do not match"):
        PRIMITIVES["jit"].abstract_eval(_sa((), i32), name="f", jaxpr=neg)
