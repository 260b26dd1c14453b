"""Numerical fidelity with JAX (issue 17): dtypes, weak types and values of jnp and lax
functions at the edges (NaN, infinities, signed zeros, overflow, booleans, Python scalars).

Every case runs eagerly, through `jit` on the interpreter (the oracle) and on the CPU
backend, and, in a child process with Numba's CUDA simulator, on the CUDA backend (as in
test_cuda_backend.py). The expected values were printed by JAX 0.10.2 on the CPU;
`test_expected_values_are_jaxs` recomputes them with JAX when it is installed.

Where JAX's value is an XLA implementation detail, jitviz takes XLA's CPU result:
integer `lax.div(x, 0)` is -1 (all bits set; the largest value of an unsigned type),
`lax.rem(x, 0)` is x, INT_MIN / -1 is INT_MIN, and float -> integer conversion saturates
(NaN -> 0). jnp's `x // 0` and `x % 0` follow from them as in JAX.
"""
from __future__ import annotations

import functools
import os
from typing import Callable, NamedTuple

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from helpers import run_in_simulator

pytestmark = pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")

CHILD = os.environ.get("JITVIZ_CUDA_SIM_CHILD") == "1"
sim = pytest.mark.skipif(not CHILD, reason="runs in the CUDA simulator child process "
                                           "(test_cuda_simulator_agrees)")
main_only = pytest.mark.skipif(CHILD, reason="runs in the main test process")

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
u8, u16, u32, u64 = np.uint8, np.uint16, np.uint32, np.uint64
inf, nan = np.inf, np.nan
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


class Case(NamedTuple):
    id: str
    fn: Callable  # fn(numpy_module, lax_module, *args): jitviz's or JAX's
    args: tuple  # NumPy operands (traced under jit)
    want: object  # NumPy array(s) of exactly JAX's dtype and values
    weak: bool = False  # JAX's weak_type of the result(s)
    x64: bool = False  # run with 64-bit defaults (JAX with jax_enable_x64)
    eager_gap: str = ""  # why the eager run still differs (an expected failure)


def A(values, dtype):
    return np.array(values, dtype)


# --- the cases, by class of fix ------------------------------------------------------------

REDUCTIONS = [
    # sum/prod widen small integers and booleans to the default (unsigned) integer
    Case("sum int8 widens", lambda np_, lax_, x: np_.sum(x), (np.ones(200, i8),), A(200, i32)),
    Case("sum uint8 widens", lambda np_, lax_, x: np_.sum(x), (np.ones(300, u8),), A(300, u32)),
    Case("sum bool counts", lambda np_, lax_, x: np_.sum(x), (A([1, 1, 0], bool),), A(2, i32)),
    Case("prod int16 widens", lambda np_, lax_, x: np_.prod(x), (A([200, 200, 200], i16),),
         A(8000000, i32)),
    # `initial` is converted to the accumulator's dtype, not promoted with it
    Case("sum int8 with a float initial", lambda np_, lax_, x: np_.sum(x, initial=2.5),
         (np.ones(3, i8),), A(5, i32)),
    Case("prod uint8 keepdims", lambda np_, lax_, x: np_.prod(x, axis=1, keepdims=True),
         (A([[20, 30]], u8),), A([[600]], u32)),
    Case("sum int32 under x64", lambda np_, lax_, x: np_.sum(x), (A([2**30] * 3, i32),),
         A(3 * 2**30, i64), x64=True),
    Case("sum int32 under x64, minus 1", lambda np_, lax_, x: np_.sum(x) - 1,
         (A([2**30] * 3, i32),), A(3 * 2**30 - 1, i64), x64=True),
    Case("sum uint16 under x64", lambda np_, lax_, x: np_.sum(x), (A([60000] * 2, u16),),
         A(120000, u64), x64=True),
    # float16 accumulates in float32 (in float16, 2048 + 1 rounds back to 2048)
    Case("sum float16 in float32", lambda np_, lax_, x: np_.sum(x), (np.ones(3000, f16),),
         A(3000, f16)),
    # cumsum/cumprod widen booleans only: an int8 cumsum wraps, as in JAX
    Case("cumsum int8 stays int8", lambda np_, lax_, x: np_.cumsum(x), (A([100] * 3, i8),),
         A([100, -56, 44], i8)),
    Case("cumsum bool", lambda np_, lax_, x: np_.cumsum(x), (A([1, 1, 0], bool),),
         A([1, 2, 2], i32)),
    Case("cumprod bool under x64", lambda np_, lax_, x: np_.cumprod(x), (A([1, 1, 0], bool),),
         A([1, 1, 0], i64), x64=True),
    # a float sum starts from -0.0 (a sum of -0.0s stays -0.0), but a sum of nothing is +0.0
    Case("sum of nothing is +0.0", lambda np_, lax_, x: np_.sum(x), (np.zeros((0, 3), f32),),
         A(0.0, f32)),
    Case("sum over an empty axis is +0.0", lambda np_, lax_, x: np_.sum(x, axis=0),
         (np.zeros((0, 3), f32),), A([0.0, 0.0, 0.0], f32)),
    Case("complex sum of nothing is +0.0", lambda np_, lax_, x: np_.sum(x, axis=(0, 2)),
         (np.zeros((2, 3, 0), np.complex64),), A([0j, 0j, 0j], np.complex64)),
]

NAN_X = A([nan, 1.0, nan, -0.0, 0.0, 2.0], f32)
NAN_Y = A([2.0, nan, nan, 0.0, -0.0, 1.0], f32)
SPECIAL = A([-inf, -0.0, 0.0, 4.0, -1.0, inf, nan], f32)
TO_INT = A([nan, inf, -inf, 3e9, -3e9, 1e20, -300.7, -1.5, 2.5], f32)
# lax.convert_element_type of a concrete value converts with NumPy's astype (wraps to
# INT_MIN) in jitviz/lax/__init__.py, outside this change; traced, it saturates

SPECIAL_VALUES = [
    # fmax/fmin ignore a NaN unless both are NaN; on ties they take x2
    Case("fmax ignores nan", lambda np_, lax_, x, y: np_.fmax(x, y), (NAN_X, NAN_Y),
         A([2.0, 1.0, nan, 0.0, -0.0, 2.0], f32)),
    Case("fmin ignores nan", lambda np_, lax_, x, y: np_.fmin(x, y), (NAN_X, NAN_Y),
         A([2.0, 1.0, nan, 0.0, -0.0, 1.0], f32)),
    Case("logaddexp infinities", lambda np_, lax_, x, y: np_.logaddexp(x, y),
         (A([inf, -inf, inf, nan, 1.0], f32), A([inf, -inf, -inf, 1.0, 2.0], f32)),
         A([inf, -inf, inf, nan, 2.3132617], f32)),
    Case("signbit of -0.0", lambda np_, lax_, x: np_.signbit(x),
         (A([-0.0, 0.0, -1.0, 1.0, nan, -inf, 1e-45], f32),),
         A([True, False, True, False, False, True, False], bool)),
    Case("copysign from -0.0", lambda np_, lax_, x: np_.copysign(1.0, x),
         (A([-0.0, 0.0, -2.0, inf], f32),), A([-1.0, 1.0, -1.0, 1.0], f32)),
    # float -> integer saturates at the bounds, NaN -> 0 (XLA's conversion)
    Case("float32 -> int32 saturates", lambda np_, lax_, x: x.astype(np_.int32), (TO_INT,),
         A([0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, -300, -1, 2], i32)),
    Case("jnp.astype saturates", lambda np_, lax_, x: np_.astype(x, np_.int32), (TO_INT,),
         A([0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, -300, -1, 2], i32)),
    Case("float32 -> uint8 saturates", lambda np_, lax_, x: lax_.convert_element_type(x, u8),
         (TO_INT,), A([0, 255, 0, 255, 0, 255, 0, 0, 2], u8)),
    Case("float64 -> int16 saturates", lambda np_, lax_, x: lax_.convert_element_type(x, i16),
         (TO_INT.astype(f64),), A([0, 32767, -32768, 32767, -32768, 32767, -300, -1, 2], i16),
         x64=True),
    Case("float32 -> int64 saturates", lambda np_, lax_, x: lax_.convert_element_type(x, i64),
         (TO_INT,), A([0, 2**63 - 1, -2**63, 3000000000, -3000000000, 2**63 - 1, -300, -1, 2],
                      i64), x64=True),
    Case("float64 -> uint32 saturates", lambda np_, lax_, x: lax_.convert_element_type(x, u32),
         (TO_INT.astype(f64),), A([0, 2**32 - 1, 0, 3000000000, 0, 2**32 - 1, 0, 0, 2], u32),
         x64=True),
    Case("float16 -> int32 saturates", lambda np_, lax_, x: lax_.convert_element_type(x, i32),
         (A([nan, inf, -inf, 65504.0, -2.5], f16),), A([0, INT32_MAX, INT32_MIN, 65504, -2], i32)),
    # hypot scales by the larger magnitude (no overflow) and is inf where either is
    Case("hypot without overflow", lambda np_, lax_, x, y: np_.hypot(x, y),
         (A([3e38, inf, nan, 0.0, 3.0], f32), A([1e10, nan, inf, 0.0, -4.0], f32)),
         A([3e38, inf, inf, 0.0, 5.0], f32)),
    # pow is C's pow (XLA's): not sqrt, which differs at -inf and -0.0
    Case("x ** 0.5", lambda np_, lax_, x: x ** 0.5, (SPECIAL,),
         A([inf, 0.0, 0.0, 2.0, nan, inf, nan], f32)),
    Case("power(x, 0.5) float64", lambda np_, lax_, x: np_.power(x, 0.5),
         (SPECIAL.astype(f64),), A([inf, 0.0, 0.0, 2.0, nan, inf, nan], f64), x64=True),
]

BOOLEANS = [  # arithmetic with no boolean form computes in int32, as in JAX
    Case("square of bool", lambda np_, lax_, x: np_.square(x), (A([1, 0], bool),), A([1, 0], i32)),
    Case("remainder of bool", lambda np_, lax_, x, y: np_.remainder(x, y),
         (A([1, 0], bool), A([1, 1], bool)), A([0, 0], i32)),
    Case("floor_divide of bool", lambda np_, lax_, x, y: np_.floor_divide(x, y),
         (A([1, 0], bool), A([1, 1], bool)), A([1, 0], i32)),
    Case("fmod of bool", lambda np_, lax_, x, y: np_.fmod(x, y),
         (A([1, 0], bool), A([1, 1], bool)), A([0, 0], i32)),
    Case("divmod of bool", lambda np_, lax_, x, y: np_.divmod(x, y),
         (A([1, 0], bool), A([1, 1], bool)), (A([1, 0], i32), A([0, 0], i32))),
    Case("left_shift of bool", lambda np_, lax_, x, y: np_.left_shift(x, y),
         (A([1, 0], bool), A([1, 1], bool)), A([2, 0], i32)),
    Case("right_shift of bool", lambda np_, lax_, x, y: np_.right_shift(x, y),
         (A([1, 0], bool), A([1, 1], bool)), A([0, 0], i32)),
    Case("power of bool", lambda np_, lax_, x: np_.power(x, 3), (A([1, 0], bool),),
         A([1, 0], i32)),
    Case("imag of bool", lambda np_, lax_, x: np_.imag(x), (A([1, 0], bool),), A([0, 0], bool)),
    Case("imag of nan is 0", lambda np_, lax_, x: np_.imag(x), (A([nan, 2.0], f32),),
         A([0.0, 0.0], f32)),
]

ROUNDING = [
    # lax.round's default, half away from zero, is C's round: exact (not floor(x + 0.5),
    # which rounds 0.49999997 up) and keeping the sign of zero
    Case("lax.round half away from zero", lambda np_, lax_, x: lax_.round(x),
         (A([0.49999997, -0.49999997, -0.0, -0.5, 2.5, -2.5, -0.7, inf, nan], f32),),
         A([0.0, -0.0, -0.0, -1.0, 3.0, -3.0, -1.0, inf, nan], f32)),
    # integers and booleans are whole: floor/ceil/trunc/round keep them as they are
    Case("floor of int8", lambda np_, lax_, x: np_.floor(x), (A([-3, 4], i8),), A([-3, 4], i8)),
    Case("ceil of bool", lambda np_, lax_, x: np_.ceil(x), (A([1, 0], bool),), A([1, 0], bool)),
    Case("trunc of uint8", lambda np_, lax_, x: np_.trunc(x), (A([7, 0], u8),), A([7, 0], u8)),
    Case("round of int32", lambda np_, lax_, x: np_.round(x), (A([-7, 9], i32),), A([-7, 9], i32)),
    Case("floor of a Python int", lambda np_, lax_: np_.floor(3), (), A(3, i32), weak=True),
    Case("ceil of True", lambda np_, lax_: np_.ceil(True), (), A(True, bool)),
    # rint converts integers to the default float (strongly typed)
    Case("rint of int32", lambda np_, lax_, x: np_.rint(x), (A([-7, 9], i32),),
         A([-7.0, 9.0], f32)),
    Case("rint of a Python int", lambda np_, lax_: np_.rint(3), (), A(3.0, f32)),
    # heaviside is floating, whatever its operands
    Case("heaviside of int32", lambda np_, lax_, x, y: np_.heaviside(x, y),
         (A([-2, 0, 3], i32), A([5, 5, 5], i32)), A([0.0, 5.0, 1.0], f32)),
    Case("heaviside of bool and nan", lambda np_, lax_, x, y: np_.heaviside(x, y),
         (A([nan, 0.0, -1.0], f32), A([0.5, 0.5, 0.5], f32)), A([nan, 0.5, 0.0], f32)),
]

WEAK_TYPES = [
    # log2 divides by a strongly typed log(2): not weak (log10 likewise)
    Case("log2 of a Python float", lambda np_, lax_: np_.log2(8.0), (), A(3.0, f32)),
    Case("log2 of a Python int", lambda np_, lax_: np_.log2(8), (), A(3.0, f32)),
    # comparisons of two weak values are weak (lax.eq's rule), against constants strong
    Case("less of Python floats", lambda np_, lax_: np_.less(1.0, 2.0), (), A(True, bool),
         weak=True),
    Case("isnan of a Python float", lambda np_, lax_: np_.isnan(2.0), (), A(False, bool),
         weak=True),
    Case("isnan of a Python int", lambda np_, lax_: np_.isnan(2), (), A(False, bool),
         weak=True),
    Case("isinf of a Python float", lambda np_, lax_: np_.isinf(2.0), (), A(False, bool)),
    Case("isposinf of a Python int", lambda np_, lax_: np_.isposinf(2), (), A(False, bool)),
    # a weak array's constants are strong (JAX's lax._const): `x != 0` of it is strong
    Case("logical_and of bool and a Python int", lambda np_, lax_, x: np_.logical_and(x, 2),
         (A([1, 0], bool),), A([True, False], bool)),
    Case("logical_and of Python ints", lambda np_, lax_: np_.logical_and(2, 3), (),
         A(True, bool), weak=True),
    Case("any of a Python float", lambda np_, lax_: np_.any(2.5), (), A(True, bool)),
    Case("positive of a Python float", lambda np_, lax_: np_.positive(2.5), (), A(2.5, f32),
         weak=True),
    Case("real of a Python int", lambda np_, lax_: np_.real(2), (), A(2, i32), weak=True),
    # the float an integer becomes: float32 for 32-bit integers even with x64
    Case("exp of int32 under x64", lambda np_, lax_, x: np_.exp(x), (A([0], i32),),
         A([1.0], f32), x64=True),
    Case("mean of int32 under x64", lambda np_, lax_, x: np_.mean(x), (A([1, 2], i32),),
         A(1.5, f32), x64=True),
    Case("float_power of float32", lambda np_, lax_, x: np_.float_power(x, 2.0),
         (A([3.0], f32),), A([9.0], f32)),
]

PYTHON_SCALARS = [  # a Python scalar meeting float64 (with x64) keeps its double value
    Case("remainder with jnp.asarray(0.001)",
         lambda np_, lax_, x: np_.remainder(x, np_.asarray(0.001)), (A(0.7, f64),),
         A(0.000999999999999941, f64), x64=True),
    Case("full float64 of a Python float", lambda np_, lax_: np_.full(2, 0.001, np_.float64),
         (), A([0.001, 0.001], f64), x64=True),
    Case("linspace float64", lambda np_, lax_: np_.linspace(0.001, 0.002, 2, dtype=np_.float64),
         (), A([0.001, 0.002], f64), x64=True),
]

DIVISION = [
    # floats: (x - x % y) / y, rounded: an infinite dividend gives NaN
    Case("floor_divide with infinities",
         lambda np_, lax_, x, y: np_.floor_divide(x, y),
         (A([inf, -inf, 1.0, -1.0, 5.0, -5.0, 0.0, nan, 3.0], f32),
          A([2.0, 2.0, inf, inf, 0.0, 0.0, 0.0, 1.0, -inf], f32)),
         A([nan, nan, 0.0, -1.0, inf, -inf, nan, nan, -1.0], f32)),
    Case("floor_divide signed zeros", lambda np_, lax_, x, y: np_.floor_divide(x, y),
         (A([0.0, -0.0, 1.0, -1.0], f32), A([-3.0, 2.0, -3.0, 3.0], f32)),
         A([-0.0, 0.0, -1.0, -1.0], f32)),
    # the int32 operand meets a Python float: a weak float32, kept through the rounding
    Case("floor_divide of int32 by a Python float",
         lambda np_, lax_, x: np_.floor_divide(x, 0.5), (A([1, -3, 4], i32),),
         A([2.0, -6.0, 8.0], f32), weak=True),
    Case("remainder of a weak array by zero",
         lambda np_, lax_: np_.remainder(np_.full((2,), 3), 0), (), A([0, 0], i32), weak=True),
    Case("remainder with infinities", lambda np_, lax_, x, y: np_.remainder(x, y),
         (A([inf, 1.0, -1.0, 3.0, -0.0], f32), A([2.0, inf, inf, -inf, 2.0], f32)),
         A([nan, 1.0, inf, -inf, -0.0], f32)),
    Case("divmod of floats", lambda np_, lax_, x, y: np_.divmod(x, y),
         (A([7.5, -7.5, inf], f32), A([2.0, 2.0, 2.0], f32)),
         (A([3.0, -4.0, nan], f32), A([1.5, 0.5, nan], f32))),
    # integers by zero: lax.div gives -1, lax.rem the dividend (XLA); jnp builds on them
    Case("int floor_divide by zero", lambda np_, lax_, x, y: x // y,
         (A([5, -5, 0, 7, -7], i32), A([0, 0, 0, 2, 2], i32)), A([-2, -2, -1, 3, -4], i32)),
    Case("int remainder by zero", lambda np_, lax_, x, y: x % y,
         (A([5, -5, 0, 7, -7], i32), A([0, 0, 0, 2, 2], i32)), A([0, 0, 0, 1, 1], i32)),
    Case("int fmod by zero", lambda np_, lax_, x, y: np_.fmod(x, y),
         (A([5, -5, 0, 7, -7], i32), A([0, 0, 0, 2, 2], i32)), A([0, 0, 0, 1, -1], i32)),
    Case("uint floor_divide by zero", lambda np_, lax_, x, y: np_.floor_divide(x, y),
         (A([5, 0, 7], u8), A([0, 0, 2], u8)), A([255, 255, 3], u8)),
    Case("lax.div by zero and INT_MIN / -1", lambda np_, lax_, x, y: lax_.div(x, y),
         (A([5, -5, INT32_MIN, 7], i32), A([0, 0, -1, -2], i32)),
         A([-1, -1, INT32_MIN, -3], i32)),
    Case("lax.rem by zero and INT_MIN % -1", lambda np_, lax_, x, y: lax_.rem(x, y),
         (A([5, -5, INT32_MIN, 7], i32), A([0, 0, -1, -2], i32)), A([5, -5, 0, 1], i32)),
    Case("lax.div int64 INT_MIN / -1", lambda np_, lax_, x, y: lax_.div(x, y),
         (A([-2**63, 9], i64), A([-1, 0], i64)), A([-2**63, -1], i64), x64=True),
]

CASES = REDUCTIONS + SPECIAL_VALUES + BOOLEANS + ROUNDING + WEAK_TYPES + PYTHON_SCALARS + DIVISION
IDS = [c.id for c in CASES]
TRACED = [c for c in CASES if c.args]  # cases with operands exercise the backends


# --- running and comparing -------------------------------------------------------------------

def run_jitviz(case, how):
    fn = functools.partial(case.fn, jnp, lax)
    if how == "eager":  # on jitviz Arrays, as the JAX reference runs on jax Arrays
        return fn(*[jnp.asarray(a) for a in case.args])
    return jitviz.jit(fn, backend=how)(*case.args)


def assert_like_jax(got, case):
    """Same dtype, weak type and values as `case.want`: NaN where it has NaN, the sign of
    every zero, integers exactly, floats to an ulp or two."""
    wants = case.want if isinstance(case.want, tuple) else (case.want,)
    gots = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        assert bool(getattr(g, "weak_type", False)) == case.weak, f"{case.id}: weak type"
        g = np.asarray(g)
        assert g.dtype == w.dtype, f"{case.id}: dtype {g.dtype}, JAX {w.dtype}"
        assert g.shape == w.shape, f"{case.id}: shape {g.shape}, JAX {w.shape}"
        if w.dtype.kind == "f":
            ulps = 4 * np.finfo(w.dtype).eps  # a float32 0.001 widened is 5e-8 off: fails
            np.testing.assert_allclose(g, w, rtol=ulps, atol=0, equal_nan=True,
                                       err_msg=case.id)
            real = ~np.isnan(w)
            np.testing.assert_array_equal(np.signbit(g)[real], np.signbit(w)[real],
                                          err_msg=f"{case.id}: sign of zero")
        else:
            np.testing.assert_array_equal(g, w, err_msg=case.id)


@pytest.fixture
def mode(request):
    """64-bit defaults for the cases that ask for them (restored by conftest)."""
    case = request.param
    if case.x64:
        request.getfixturevalue("x64")
    return case


@main_only
@pytest.mark.parametrize("mode", CASES, ids=IDS, indirect=True)
@pytest.mark.parametrize("how", ["eager", "interpret", "cpu"])
def test_matches_jax(mode, how, request):
    if how == "eager" and mode.eager_gap:  # strict: passing means the gap closed
        request.applymarker(pytest.mark.xfail(reason=mode.eager_gap, strict=True))
    assert_like_jax(run_jitviz(mode, how), mode)


# --- the CUDA backend, in the simulator --------------------------------------------------------

@main_only
def test_cuda_simulator_agrees():
    """Run this file's `sim` tests in Numba's CUDA simulator, in a fresh process."""
    run_in_simulator(__file__)


@sim
@pytest.mark.parametrize("mode", TRACED, ids=[c.id for c in TRACED], indirect=True)
def test_cuda_matches_jax(mode):
    from jitviz.backends.cuda.runtime import runtime
    assert runtime().mode == "sim"
    assert_like_jax(run_jitviz(mode, "cuda"), mode)


# --- the expected values are JAX's ---------------------------------------------------------

@pytest.fixture(scope="module")
def jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    return pytest.importorskip("jax")


def _needs_x64(case):
    """JAX has 64-bit types only with x64 (so has jitviz, by default)."""
    wants = case.want if isinstance(case.want, tuple) else (case.want,)
    arrays = list(wants) + [np.asarray(a) for a in case.args]
    return case.x64 or any(a.dtype.itemsize == 8 and a.dtype.kind != "c" for a in arrays)


@main_only
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_expected_values_are_jaxs(case, jax):
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", _needs_x64(case))
    try:
        got = case.fn(jax.numpy, jax.lax, *[jax.numpy.asarray(a) for a in case.args])
        assert_like_jax(got, case)
    finally:
        jax.config.update("jax_enable_x64", before)
