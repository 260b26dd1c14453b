"""The CPU kernels' vectorized elementary functions (jitviz/backends/cpu/vecmath.py).

Each function runs through `jitviz.jit` on the CPU backend over the whole float range
(random bit patterns: every exponent, subnormals included), dense grids where the range
reductions switch (multiples of ln2/2 and pi/4, the branch points of each formula), and the
special values. Finite results must be within 4 ulp of a long-double reference (64-bit
significand on x86: exact enough to measure float64 ulps); the special values (NaN, +-inf,
+-0.0 and overflowing results) must equal the interpreter's (NumPy's) bit for bit. The README's accuracy table is the `max ulp` these tests measure.

CUDA kernels keep libdevice's functions (the GPU's own vectorized math: see
jitviz/backends/cuda/rules.py); the same measurements run on them too (the `cuda` tests at the
end): on a GPU that measures libdevice, in Numba's simulator (a child process, without a GPU)
the CUDA lowering of each function and its special values. The interpreter (the oracle: NumPy's
loops) is measured the same way.
"""
from __future__ import annotations

import os
import re

import numba
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.lax import special

from helpers import float64_kept, run_in_simulator  # noqa: E402
from jitviz.backends.cpu import vector_isa  # noqa: E402
from jitviz.backends.cpu.vecmath_tables import TANH32_D  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests measure float32 and float64 kernels: jitviz's keep_float64 switch keeps
    NumPy float64 operands float64 without x64 (JAX would need x64)."""
    with float64_kept():
        yield


L = np.longdouble
MAX_ULP = 4.0


def _logistic(x):
    return 1 / (1 + np.exp(-x))


# name -> (jitviz function, long-double reference, points where its reduction switches)
LN2 = float(np.log(2))
FUNCS = {
    "exp": (jnp.exp, np.exp, [k * LN2 / 2 for k in range(-8, 9)] + [88.72, 709.78, -745.1]),
    "expm1": (jnp.expm1, np.expm1, [k * LN2 / 2 for k in range(-8, 9)]
              + [88.72, 709.78, 128.4 * LN2, 1024.4 * LN2]),  # overflow; the clamp
    "exp2": (jnp.exp2, np.exp2, [0.5, -0.5, 1.5, 127.99, 128.0, -149.5, 1023.9, -1074.5]),
    "logistic": (lax.logistic, _logistic, [0.0, 88.7, -88.7, -103.9, 709.7, -745.0]),
    # tanh reduces 2|x| by ln2/2 steps and clamps it at 2 * 9.02 (float32), 2 * 19.1; float32
    # with vector_isa: the edges of its 32 cells
    "tanh": (jnp.tanh, np.tanh, [k * LN2 / 4 for k in range(1, 12)]
             + [0.5, 1.0, -1.0, 9.0, 9.02, 19.0, 19.1, 22.0] + list(TANH32_D[1:])),
    # sinh/cosh: |x| by ln2/2 steps, 2^-2n clamped above n = 32, overflow near 89.4 and 710.5
    "sinh": (jnp.sinh, np.sinh, [k * LN2 / 2 for k in range(-8, 9)]
             + [32.5 * LN2, 33.5 * LN2, 89.41, 89.42, 710.47, 710.48]),
    "cosh": (jnp.cosh, np.cosh, [k * LN2 / 2 for k in range(1, 9)]
             + [32.5 * LN2, 33.5 * LN2, 89.41, 89.42, 710.47, 710.48]),
    "log": (jnp.log, np.log, [1.0, np.sqrt(0.5), np.sqrt(2.0), 2.0, 0.5]),
    "log1p": (jnp.log1p, np.log1p, [-1.0, np.sqrt(0.5) - 1, np.sqrt(2.0) - 1, 1.0, -0.5]),
    "log2": (jnp.log2, np.log2, [1.0, np.sqrt(0.5), np.sqrt(2.0), 8.0, 0.125]),
    "log10": (jnp.log10, np.log10, [1.0, 10.0, 100.0, 1e-3, np.sqrt(2.0)]),
    "asinh": (jnp.arcsinh, np.arcsinh, [0.5, 0.53, -0.53, 2.0, -2.0, 4096.0, 2.0 ** 28]),
    "acosh": (jnp.arccosh, np.arccosh, [1.0, 1.5, 2.0, 4096.0, 2.0 ** 28]),
    "atanh": (jnp.arctanh, np.arctanh, [0.5, -0.5, 1.0, -1.0]),
    "atan": (jnp.arctan, np.arctan, [np.tan(np.pi / 8), np.tan(3 * np.pi / 8), 1.0, 1e10]),
    "asin": (jnp.arcsin, np.arcsin, [0.5, -0.5, 1.0, -1.0, 0.975]),
    "acos": (jnp.arccos, np.arccos, [0.5, -0.5, 1.0, -1.0, 0.975, -0.975]),
    # cbrt: float32 with vector_isa: the edges of its cells (2^k (1 + q/8))
    "cbrt": (jnp.cbrt, np.cbrt, [1.0, 2.0, 4.0, 8.0, 0.125, 1e-40, 1e-310]
             + [2.0 ** k * (1 + q / 8) for k in range(3) for q in range(1, 8)]),
    # trig: the quadrant edges, the Cody-Waite/Payne-Hanek switch (2^30), the float64 closest
    # to a multiple of pi/2 (6381956970095103 * 2^797) and the float32 one (about 1.6e35 ...)
    **{name: (fn, ref, [k * np.pi / 4 for k in range(-12, 13)] + [
        2.0 ** 30, 1e22, 6381956970095103 * 2.0 ** 797, 16367173.0 * 2.0 ** 72, 1e6, 1e15])
       for name, fn, ref in (("sin", jnp.sin, np.sin), ("cos", jnp.cos, np.cos),
                             ("tan", jnp.tan, np.tan))},
}


def _inputs(dtype, edges, n=150_000):
    """Random finite bit patterns (every exponent, both signs, subnormals), grids around 0
    and the edges (with their float neighbours), and the special values."""
    rng = np.random.default_rng(1234)
    it = np.int32 if dtype == np.float32 else np.int64
    x = rng.integers(np.iinfo(it).min, np.iinfo(it).max, n, dtype=it).view(dtype)
    x = x[np.isfinite(x)]
    info = np.finfo(dtype)
    grid = np.linspace(-12, 12, n // 3, dtype=dtype)
    near = []
    for e in edges:
        e = dtype(e)
        steps = np.arange(-64, 65)
        near.append(e + steps.astype(dtype) * np.spacing(e))
        near.append(e + np.linspace(-0.01, 0.01, 201).astype(dtype))
        near.append(-near[-1])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny,
                        info.smallest_subnormal, -info.smallest_subnormal, info.max,
                        -info.max, 1.0, -1.0, 1e-30, -1e-30], dtype)
    return np.concatenate([x, grid, grid / dtype(4096), *[v.astype(dtype) for v in near],
                           special])


_JITTED: dict = {}


def _jit(fn, backend="cpu"):
    """One jitted function per (function, backend): jit caches by the function object."""
    key = (fn, backend)
    if key not in _JITTED:
        _JITTED[key] = jitviz.jit(fn, backend=backend)
    return _JITTED[key]


def _measure(fn, ref_fn, args, dtype, backend="cpu"):
    """(max ulp error over the finite results, its index among them, their mask) of
    `backend`'s results; asserts that the special results equal the interpreter's exactly."""
    got = np.asarray(_jit(fn, backend)(*args))
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
        ref = ref_fn(*(a.astype(L) for a in args))
        rounded = ref.astype(dtype)
        expected = np.asarray(_jit(fn, "interpret")(*args))
    # exact: NaN, infinite (or overflowing) and exactly-zero results; tiny results that
    # round to 0 or to the smallest subnormal are measured in ulps like the others
    exact = ~np.isfinite(rounded) | (ref == 0) | np.isnan(expected)
    np.testing.assert_array_equal(got[exact], expected[exact], err_msg="special values")
    signed = exact & ~np.isnan(expected)  # a NaN's sign bit means nothing (README)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(expected[signed]))
    ulp = np.maximum(np.spacing(np.abs(rounded[~exact])).astype(L),
                     L(np.finfo(dtype).smallest_subnormal))
    err = np.abs(got[~exact].astype(L) - ref[~exact]) / ulp
    i = int(np.argmax(err))
    return float(err[i]), i, ~exact


def max_ulp(name, dtype):
    """(max ulp error, the input where it occurs) of a unary function."""
    fn, ref_fn, edges = FUNCS[name]
    x = _inputs(dtype, edges)
    err, i, finite = _measure(fn, ref_fn, (x,), dtype)
    return err, x[finite][i]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_within_4_ulp_everywhere_and_specials_exact(name, dtype):
    err, where = max_ulp(name, dtype)
    assert err <= MAX_ULP, f"{name}({where!r}) is {err:.2f} ulp off"


NAN_PAYLOAD_FUNCS = {**{name: fn for name, (fn, _, _) in FUNCS.items()},
                     "erf": lax.erf, "erfc": lax.erfc, "erf_inv": lax.erf_inv,
                     "lgamma": lax.lgamma, "digamma": lax.digamma,
                     "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(NAN_PAYLOAD_FUNCS))
def test_a_nan_of_any_payload_stays_nan(name, dtype):
    """NaNs of random payloads, both signs, quiet and signalling, in whole blocks and a
    tail: every result is NaN. (Bit tricks can turn a NaN into a number: exp's fast variant
    adds n to the exponent bits, and n comes from the NaN's payload.)"""
    it = np.uint32 if dtype == np.float32 else np.uint64
    mant = np.finfo(dtype).nmant
    rng = np.random.default_rng(8)
    payload = rng.integers(1, 2 ** mant, 128 * 3 + 7, dtype=it, endpoint=False)
    sign = rng.integers(0, 2, payload.size, dtype=it) << it(8 * np.dtype(dtype).itemsize - 1)
    x = (sign | (it(2 ** (8 * np.dtype(dtype).itemsize - 1) - 2 ** mant)) | payload).view(dtype)
    assert np.isnan(x).all()
    with np.errstate(all="ignore"):
        got = np.asarray(_jit(NAN_PAYLOAD_FUNCS[name])(x))
    assert np.isnan(got).all(), x[~np.isnan(got)][:4]


@pytest.mark.parametrize("name", ["tanh", "log", "logistic", "sinh", "cosh"])
def test_kernels_vectorize_without_libm_calls(name):
    """The loop's arithmetic is vector FMAs (zmm on AVX-512, ymm on AVX2) and no libm call
    remains in the kernel; sinh and float64 cosh get e^-|x| from e^|x|'s polynomial split by
    parity, without a division (float32 cosh divides once: h + 1/(4h), cheaper there)."""
    fn = FUNCS[name][0]
    for dtype in (np.float32, np.float64):
        k = _jit(fn).lower(np.ones(1000, dtype)).compile().kernels[0]
        asm = k.asm()
        assert any(f"vfmadd{v}" in asm for v in ("132p", "213p", "231p")), name
        assert "mm" in asm and ("zmm" in asm or "ymm" in asm)
        lib = {"logistic": "exp"}.get(name, name)
        assert f"@{lib}" not in k.llvm_ir() and f"{lib}f@PLT" not in asm
        if name == "sinh" or (name, dtype) == ("cosh", np.float64):
            assert "vdivp" not in asm and "vdivs" not in asm, (name, dtype)


def _long_double(value):
    """An mpmath number as a long double (through 24 significant digits: more than its 64
    bits hold)."""
    import mpmath
    return L(mpmath.nstr(value, 24, min_fixed=1, max_fixed=0))


def _erf_reference(name, dtype):
    """A reference for lax.erf/lax.erfc (long double has none): for float32, libm's float64
    function (its error, about 2^-53, is far below float32's ulp); for float64, mpmath where
    the value needs it, the leading series terms below 1e-4 (erf ~ 2x/sqrt(pi) (1 - x^2/3),
    erfc = 1 - that: exact to long double there), the limits beyond the range where erf is
    +-1 and erfc is 0 or 2 in long double."""
    import math

    import mpmath
    if dtype == np.float32:
        libm = np.frompyfunc(getattr(math, name), 1, 1)
        return lambda x: libm(x.astype(np.float64)).astype(np.float64).astype(L)
    mpmath.mp.prec = 80
    exact = getattr(mpmath, name)
    c = L(2) / np.sqrt(np.arccos(L(-1)))

    def one(v):
        f = float(v)
        if not math.isfinite(f):
            return L(getattr(math, name)(f))
        if abs(f) < 1e-4:
            erf = c * v * (1 - v * v / 3)
            return erf if name == "erf" else 1 - erf
        if name == "erf" and abs(f) > 7:
            return L(math.copysign(1.0, f))
        if name == "erfc" and (f > 100 or f < -7):
            return L(0.0 if f > 0 else 2.0)
        return _long_double(exact(mpmath.mpf(f)))

    def reference(x):
        return np.array([one(v) for v in x.ravel()], dtype=L).reshape(x.shape)
    return reference


# bound per function and type, so that a change that loses accuracy fails here: the measured
# maximum on these inputs (erf 1.16 and 0.90, erfc 2.98 and 2.74) and some margin (6M random
# float32 values measured erf 1.16, erfc 3.01; 100k float64, erfc 2.99)
ERF_MAX_ULP = {("erf", np.float32): 1.3, ("erf", np.float64): 1.2,
               ("erfc", np.float32): 3.3, ("erfc", np.float64): 3.3}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_and_erfc_are_vectorized_and_accurate(name, dtype):
    """lax.erf and lax.erfc (vecmath_erf.py) over the whole range (random bit patterns, the
    grids, the edges of their intervals: 1/2, 0.84375, the clamps 10.1 and 27.3, where
    erfc becomes subnormal), specials exactly as the interpreter's (libm's); the kernel's
    loop is vector FMAs with no libm call per element (it was `erf` per value: 17.8 ms per
    1M float32 values, 8x slower)."""
    fn = getattr(lax, name)
    edges = [0.5, 0.84375, 2.0, 3.0, 3.92, 5.93, 9.19, 10.05, 10.1, 26.5, 27.2, 27.3]
    rng = np.random.default_rng(17)
    tail = rng.uniform(-1, 10.2 if dtype == np.float32 else 27.3,
                       1_000_000 if dtype == np.float32 else 30_000)
    x = np.concatenate([_inputs(dtype, edges, n=60_000), tail.astype(dtype)])
    err, i, finite = _measure(fn, _erf_reference(name, dtype), (x,), dtype)
    assert err <= ERF_MAX_ULP[name, dtype], f"{name}({x[finite][i]!r}) is {err:.2f} ulp off"
    assert err <= MAX_ULP
    k = _jit(fn).lower(np.ones(1000, dtype)).compile().kernels[0]
    asm = k.asm()
    assert f"rt.{name}_" in k.source
    assert any(f"vfmadd{v}" in asm for v in ("132p", "213p", "231p"))
    assert f"@{name}" not in k.llvm_ir() and f"{name}@PLT" not in asm


def _erf_inv_reference(x):
    """erf_inv in long double: the scalar helper's float64 value (lax/erf.py, about an ulp of
    float64) and one Newton step on it in mpmath (mpmath's own erfinv, by root finding,
    took 40 s for these values), on erfc(y) = 1 - |x| from |x| = 1/2 (exact in mpmath)."""
    import math

    import mpmath

    from jitviz.lax.erf import erf_inv_scalar
    mpmath.mp.prec = 100

    def one(v):
        f = float(v)
        if not abs(f) < 1:  # +-1, beyond, NaN
            return L(math.copysign(math.inf, f) if abs(f) == 1 else math.nan)
        a, y = mpmath.mpf(abs(f)), mpmath.mpf(abs(erf_inv_scalar(f)))
        residual = mpmath.erf(y) - a if a < 0.5 else (1 - a) - mpmath.erfc(y)
        y -= residual / (2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-y * y))
        return _long_double(math.copysign(1, f) * y)
    return np.array([one(v) for v in x.ravel()], dtype=L).reshape(x.shape)


@pytest.mark.parametrize("dtype,bound", [(np.float32, 2.4), (np.float64, 2.8)],
                         ids=["f32", "f64"])
def test_erf_inv_is_vectorized_and_accurate(dtype, bound):
    """lax.erf_inv (vecmath_erf.py): uniform values, values near +-1 (1 - x down to the
    type's epsilon, where the tail polynomial and, for float64, the Halley step's 1 - x
    matter), tiny and subnormal ones, the switch at w = 5 (x = 0.99663), and the specials as
    the interpreter's (+-0, +-inf at +-1, NaN beyond); within `bound` ulp (measured 1.96
    and 2.41 on a larger set; the scalar helper it replaces took 194 ms per 1M float32
    values, this 3.1 ms). The reference: `_erf_inv_reference`."""
    rng = np.random.default_rng(21)
    lowest = -24 if dtype == np.float32 else -53
    near_one = 1 - np.exp2(rng.uniform(lowest, -1, 8_000))
    x = np.concatenate([rng.uniform(-1, 1, 8_000), near_one, -near_one[:2_000],
                        np.exp2(rng.uniform(-140, -1, 4_000)), 0.99663 + rng.uniform(
                            -1e-3, 1e-3, 2_000),
                        [0.0, -0.0, 1.0, -1.0, 1.5, -3.0, np.inf, -np.inf, np.nan,
                         np.finfo(dtype).smallest_subnormal]]).astype(dtype)
    err, i, finite = _measure(lax.erf_inv, _erf_inv_reference, (x,), dtype)
    assert err <= bound, f"erf_inv({x[finite][i]!r}) is {err:.2f} ulp off"
    k = _jit(lax.erf_inv).lower(np.ones(1000, dtype)).compile().kernels[0]
    assert "rt.erf_inv_" in k.source and "erf_inv_scalar" not in k.source
    assert any(f"vfmadd{v}" in k.asm() for v in ("132p", "213p", "231p"))


def _gamma_reference(name):
    """lax.lgamma / lax.digamma in long double, from mpmath (long double has neither) at 160
    bits: near digamma's root its value is 2^-53 of its terms, and 80 bits were 76000 ulp off
    there."""
    import mpmath
    mpmath.mp.prec = 160
    exact = mpmath.loggamma if name == "lgamma" else mpmath.digamma

    def one(v):
        f = float(v)
        return L(f) if not np.isfinite(f) else _long_double(exact(mpmath.mpf(f)))
    return np.frompyfunc(one, 1, 1)


GAMMA_MAX_ULP = {("lgamma", np.float32): 0.6, ("lgamma", np.float64): 1.1,
                 ("digamma", np.float32): 0.6, ("digamma", np.float64): 1.9}


def _gamma_inputs(dtype):
    """x > 0: random bit patterns (every exponent, subnormals), uniform values up to 12,
    grids across the edges of vecmath_gamma's reductions (1 and 2, lgamma's zeros; digamma's
    root 1.4616...; the integers up to 6, where x - floor(x) steps; 6, where Stirling's series
    takes over; 2^-60, where digamma becomes -1/x) with their float neighbours, and the
    specials."""
    rng = np.random.default_rng(29)
    it = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(0, np.iinfo(it).max, 6_000, dtype=it).view(dtype)
    edges = [0.5, 1.0, 1.4616321449683623, 2.0, 3.0, 4.0, 5.0, 6.0, 2.0 ** -60]
    near = [dtype(e) + np.arange(-16, 17).astype(dtype) * np.spacing(dtype(e)) for e in edges]
    near += [dtype(e) * (1 + rng.uniform(-1e-3, 1e-3, 300)).astype(dtype) for e in edges]
    # (where the recurrences' terms cancel most: their refinements show there, 0.3 to 0.6 ulp)
    near += [e + rng.uniform(-2e-3, 2e-3, 3_000).astype(dtype) for e in (dtype(1), dtype(2))]
    info = np.finfo(dtype)
    specials = np.array([np.inf, np.nan, info.tiny, info.smallest_subnormal, info.max, 1e-30,
                         2.56e305 if dtype == np.float64 else 4e36], dtype)
    x = np.concatenate([bits[np.isfinite(bits)], rng.uniform(0, 12, 6_000).astype(dtype),
                        *near, specials])
    return x[~(x <= 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_lgamma_and_digamma_are_vectorized_and_accurate(name, dtype):
    """lax.lgamma and lax.digamma (vecmath_gamma.py) for x > 0 within GAMMA_MAX_ULP of
    mpmath (both types compute in float64: float32's results are its correctly rounded
    ones but for a hair), specials as the interpreter's. The kernel's loop is vector FMAs
    (it was one scalar helper call per value, 4x slower), tested blockwise for x <= 0."""
    fn = getattr(lax, name)
    x = _gamma_inputs(dtype)
    err, i, finite = _measure(fn, _gamma_reference(name), (x,), dtype)
    bound = GAMMA_MAX_ULP[name, dtype]
    assert err <= bound, f"{name}({x[finite][i]!r}) is {err:.2f} ulp off"
    k = _jit(fn).lower(np.ones(1000, dtype)).compile().kernels[0]
    assert f"rt.{name}_f" in k.source and f"rt.{name}_special_" in k.source
    assert f"{name}_scalar" not in k.source
    assert any(f"vfmadd{v}" in k.asm() for v in ("132p", "213p", "231p"))


def _negative_lgamma_inputs(dtype):
    """x <= 0 for lgamma: uniform values to -30, the negative integers and halves, [-1, 0],
    -0.0, -inf, -1e30."""
    rng = np.random.default_rng(31)
    return np.concatenate([-rng.uniform(0, 30, 3_000), -np.arange(0, 40) * 1.0,
                           -np.arange(0, 40) - 0.5, -rng.uniform(0, 1, 500),
                           [-0.0, -np.inf, -1e30]]).astype(dtype)


def _lgamma_values_do_not_depend_on_their_block(dtype):
    """A positive value's result is the same in a block holding an x <= 0 (the full
    function) as in one without (the fast one)."""
    positive = _gamma_inputs(dtype)[: 128 * 40]
    mixed = np.empty(2 * positive.size, dtype)
    mixed[0::2], mixed[1::2] = positive, np.resize(_negative_lgamma_inputs(dtype), positive.size)
    np.testing.assert_array_equal(np.asarray(_jit(lax.lgamma)(mixed))[0::2],
                                  _jit(lax.lgamma)(positive))


def test_float64_lgamma_below_zero_runs_the_scalar_helper_blockwise():
    """float64 lax.lgamma of x <= 0 is special.py's helper compiled by Numba (libm's lgamma;
    CPython's own differs from it in the last bit), in blocks of 128 that the kernel runs
    with the full function when one of its values is <= 0 (also where every such value is
    in [-1, 0]): near lgamma's negative zeros float64's reflection cancels (vecmath_gamma)."""
    dtype = np.float64
    helper = np.vectorize(numba.njit(special.lgamma_scalar), otypes=[np.float64])
    rng = np.random.default_rng(31)
    for values in (_negative_lgamma_inputs(dtype), -rng.uniform(0, 1, 1_024),
                   np.full(256, -0.0)):
        np.testing.assert_array_equal(_jit(lax.lgamma)(values), helper(values))
    _lgamma_values_do_not_depend_on_their_block(dtype)
    k = _jit(lax.lgamma).lower(np.ones(1000, dtype)).compile().kernels[0]
    assert "rt.lgamma_special_" in k.source and "rt.lgamma_f" in k.source


def _lgamma_negative_zeros(kmax):
    """lgamma's zeros in (-kmax, -2) with mpmath, two between each pair of integers: from
    -k, lgamma falls from +inf to below 0 halfway to either neighbour (but -1: lgamma(-1/2)
    and lgamma(-3/2) are positive); bisected on the distance to -k, geometrically while the
    bracket spans more than a factor of 4 (the zeros next to -k are about 1/k! from it)."""
    import mpmath
    zeros = []
    for k in range(2, kmax):
        for side in (-1, 1) if k > 2 else (-1,):
            def lg(d):
                return mpmath.re(mpmath.loggamma(-k + side * d))
            lo, hi = mpmath.mpf(10) ** -30, mpmath.mpf(0.5)
            assert lg(lo) > 0 > lg(hi)
            for _ in range(120):
                mid = mpmath.sqrt(lo * hi) if hi > 4 * lo else (lo + hi) / 2
                lo, hi = (mid, hi) if lg(mid) > 0 else (lo, mid)
            zeros.append(-k + side * lo)
    assert len(zeros) == 2 * (kmax - 3) + 1
    return zeros


def test_float32_lgamma_below_zero_is_the_vectorized_reflection():
    """float32 lax.lgamma of x < 0 is log(pi) - log|sin(pi x)| - lgamma(1 - x) in float64 in
    the vector loop (no helper call), within GAMMA_MAX_ULP of mpmath also at the float32
    neighbours of lgamma's negative zeros, where the terms cancel most (float64's 2^-52 or
    so of them still leaves half an ulp of float32: 0.497 measured at 1.2e-6 next to
    -2.7477). +inf at 0, the negative integers and -inf, as the interpreter's."""
    import mpmath
    mpmath.mp.prec = 160
    dtype = np.float32
    near = []
    for z in _lgamma_negative_zeros(14):  # float32 tells its zeros from the poles to -13
        v = np.float32(float(z))
        near += [v + np.float32(j) * np.spacing(v) for j in range(-6, 7)]
    x = np.concatenate([_negative_lgamma_inputs(dtype), np.array(near, dtype),
                        -np.exp(np.random.default_rng(43).uniform(-80, 15, 1_000)),
                        [-8388607.5, -1e-45, -1e-38]]).astype(dtype)
    poles = x == np.floor(x)
    reference = np.frompyfunc(
        lambda v: _long_double(mpmath.re(mpmath.loggamma(mpmath.mpf(float(v))))), 1, 1)
    err, i, _ = _measure(lax.lgamma, lambda a: reference(a).astype(L), (x[~poles],), dtype)
    assert err <= GAMMA_MAX_ULP["lgamma", dtype], f"lgamma({x[~poles][i]!r}) is {err:.2f} ulp off"
    np.testing.assert_array_equal(_jit(lax.lgamma)(x[poles]),
                                  _jit(lax.lgamma, "interpret")(x[poles]))
    assert np.all(np.asarray(_jit(lax.lgamma)(x[poles & ~np.isnan(x)])) == np.inf)
    _lgamma_values_do_not_depend_on_their_block(dtype)
    k = _jit(lax.lgamma).lower(np.ones(1000, dtype)).compile().kernels[0]
    assert "rt.lgamma_special_f32" in k.source and "lgamma_scalar" not in k.llvm_ir()
    k64 = _jit(lax.lgamma).lower(np.ones(1000, np.float64)).compile().kernels[0]
    assert "lgamma_scalar" in k64.llvm_ir()  # (what the check above would see)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_digamma_below_zero_is_vectorized_by_the_reflection(dtype):
    """lax.digamma of x < 0 is digamma(1 - x) - pi cot(pi x) in the vector loop, within 3.5 ulp
    of the larger of the two terms (measured 3.26; the scalar helper's 147): relative to the
    result that is unbounded near digamma's negative zeros, where the terms cancel (JAX's
    reflection too). NaN at 0, the negative integers and -inf, as the interpreter's. A block
    holding an x <= 0 runs the full function (with the reflection), which gives a positive
    value the fast function's result."""
    import mpmath
    mpmath.mp.prec = 160
    rng = np.random.default_rng(37)
    smallest = -80 if dtype == np.float32 else -700  # (digamma stays finite in the type)
    x = np.concatenate([-rng.uniform(0, 30, 3_000), -np.exp(rng.uniform(smallest, 35, 1_000)),
                        -np.arange(30) - 0.5, -rng.uniform(0.45, 0.55, 500),
                        -rng.uniform(0, 1, 500)]).astype(dtype)
    x = x[(x != np.rint(x)) & (x > np.finfo(dtype).min / 2)]
    got = np.asarray(_jit(lax.digamma)(x)).astype(np.float64)
    worst = 0.0
    for xi, yi in zip(x.astype(np.float64), got):
        v = mpmath.mpf(float(xi))
        terms = max(abs(mpmath.digamma(1 - v)), abs(mpmath.pi * mpmath.cot(mpmath.pi * v)))
        ulp = mpmath.mpf(float(np.spacing(dtype(float(terms)))))
        worst = max(worst, float(abs(mpmath.mpf(float(yi)) - mpmath.digamma(v)) / ulp))
    assert 0 < worst <= 3.5, worst
    poles = np.array([0.0, -0.0, -1.0, -7.0, -1e6, -np.inf, np.nan], dtype)
    np.testing.assert_array_equal(_jit(lax.digamma)(poles), _jit(lax.digamma, "interpret")(poles))
    positive = _gamma_inputs(dtype)[: 128 * 40]
    mixed = np.empty(2 * positive.size, dtype)
    mixed[0::2], mixed[1::2] = positive, np.resize(x, positive.size)
    np.testing.assert_array_equal(np.asarray(_jit(lax.digamma)(mixed))[0::2],
                                  _jit(lax.digamma)(positive))


BESSEL_MAX_ULP = {np.float32: 0.6, np.float64: 2.5}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("order", [0, 1])
def test_bessel_i0e_and_i1e_are_vectorized_and_accurate(order, dtype):
    """lax.bessel_i0e and bessel_i1e (vecmath_bessel.py) within BESSEL_MAX_ULP of mpmath
    (float64 measured 2.19 ulp; special.py's helper, the interpreter's, 11), specials as the
    interpreter's (i1e odd: -0.0 and -inf give -0.0): random bit patterns (every exponent),
    uniform values to 40, and the float neighbours of the split between the series and the
    asymptotic form (12) and of 3 and 11.6, where float64's series rounds most. One vector
    loop without the helper (it was a scalar call per value, 40x slower than jax.jit)."""
    import mpmath
    mpmath.mp.prec = 160
    fn = (lax.bessel_i0e, lax.bessel_i1e)[order]
    rng = np.random.default_rng(47)
    it = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(np.iinfo(it).min, np.iinfo(it).max, 4_000, dtype=it).view(dtype)
    edges = [12.0, 3.0, 11.6]
    near = [dtype(e) + np.arange(-20, 21).astype(dtype) * np.spacing(dtype(e)) for e in edges]
    near += [dtype(e) * (1 + rng.uniform(-1e-2, 1e-2, 500)).astype(dtype) for e in edges]
    info = np.finfo(dtype)
    x = np.concatenate([bits[np.isfinite(bits)], rng.uniform(-40, 40, 4_000).astype(dtype),
                        *near, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max,
                                         -info.max, info.tiny, info.smallest_subnormal],
                                        dtype)])

    def one(v):
        f = float(v)
        if not np.isfinite(f):
            return L(f)
        a = mpmath.mpf(f)
        return _long_double(mpmath.besseli(order, a) * mpmath.exp(-abs(a)))
    err, i, finite = _measure(fn, np.frompyfunc(one, 1, 1), (x,), dtype)
    assert err <= BESSEL_MAX_ULP[dtype], f"order {order}: {x[finite][i]!r} is {err:.2f} ulp off"
    np.testing.assert_array_equal(np.signbit(_jit(fn)(np.array([-0.0, -np.inf], dtype))),
                                  [order == 1] * 2)
    k = _jit(fn).lower(np.ones(1000, dtype)).compile().kernels[0]
    name = ("bessel_i0e", "bessel_i1e")[order]
    assert f"rt.{name}_f" in k.source and "bessel_ie_scalar" not in k.llvm_ir()
    assert any(f"vfmadd{v}" in k.asm() for v in ("132p", "213p", "231p"))


def test_pow_vectorizes_without_libm_calls():
    """Both float types: lax.pow's kernel loop is vector FMAs, no libm pow per element."""
    for dtype in (np.float32, np.float64):
        x = np.ones(1000, dtype)
        k = _jit(BINARY["pow"][0]).lower(x, x).compile().kernels[0]
        asm = k.asm()
        assert "rt.pow_" in k.source
        assert any(f"vfmadd{v}" in asm for v in ("132p", "213p", "231p")), dtype
        assert "@pow" not in k.llvm_ir() and "pow@PLT" not in asm and "powf@PLT" not in asm


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_logistic_keeps_its_subnormal_results(backend):
    """Below -88.7 (float32) e^-x overflows while logistic(x) is still a subnormal number
    down to -103.9: the interpreter (the oracle) computes what the kernels do, 1 / (1 + e)
    times e with e = e^-|x|, not 1 / (1 + e^-x), which gives 0 there (as XLA does)."""
    x = np.linspace(-104, -88, 2001).astype(np.float32)
    got = np.asarray(_jit(lax.logistic, backend)(x))
    ref = _logistic(x.astype(L))
    tiny = L(np.finfo(np.float32).smallest_subnormal)
    assert np.all(np.abs(got.astype(L) - ref) <= np.maximum(
        4 * np.spacing(ref.astype(np.float32)).astype(L), tiny))
    assert (got > 0).sum() == (ref >= tiny / 2).sum() > 1500


def test_float16_uses_the_float32_functions():
    x = np.linspace(-3, 3, 101, dtype=np.float16)
    got = np.asarray(jitviz.jit(jnp.tanh)(x))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.tanh(x.astype(np.float32)).astype(np.float16))


# binary functions: the reference, and the (y-like, x-like) operands' interesting values
BINARY = {
    "atan2": (jnp.arctan2, np.arctan2, [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, np.inf, -np.inf,
                                        np.nan, 1e-30, 1e30]),
    "pow": (lambda x, y: lax.pow(x, y), np.power,
            [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, 2.5, np.inf, -np.inf, np.nan,
             1e-30, 1e30, 127.0, 128.0, -149.0, -150.0]),
}


def _pairs(dtype, values, n=100_000):
    """Every pair of the interesting values, random (bits, bits) pairs, and pairs of
    moderate magnitudes (where results are neither 0 nor inf)."""
    rng = np.random.default_rng(99)
    v = np.array(values, dtype)
    a, b = np.meshgrid(v, v)
    it = np.int32 if dtype == np.float32 else np.int64
    bits = rng.integers(np.iinfo(it).min, np.iinfo(it).max, (2, n), dtype=it).view(dtype)
    mod = (rng.standard_normal((2, n)) * [[8.0], [20.0]]).astype(dtype)
    mod[0] = np.abs(mod[0])  # positive bases for pow, any sign for atan2 below
    x = np.concatenate([a.ravel(), bits[0], mod[0], -mod[0][: n // 2]])
    y = np.concatenate([b.ravel(), bits[1], mod[1], mod[1][: n // 2]])
    return x, y


def max_ulp_binary(name, dtype):
    fn, ref_fn, values = BINARY[name]
    x, y = _pairs(dtype, values)
    err, i, finite = _measure(fn, ref_fn, (x, y), dtype)
    return err, (x[finite][i], y[finite][i])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_within_4_ulp_and_specials_exact(name, dtype):
    err, where = max_ulp_binary(name, dtype)
    assert err <= MAX_ULP, f"{name}{where!r} is {err:.2f} ulp off"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_pow_with_large_exponents_within_4_ulp(dtype):
    """Where |y log2 x| is large (bases near 1 with large exponents, results from near
    underflow to near overflow, subnormal bases), log2's relative error is multiplied by it:
    float32 pow carries log2 as a float32 pair, float64 pow as a double-double, for this."""
    rng = np.random.default_rng(7)
    n, zmax = 100_000, (150.0 if dtype == np.float32 else 1070.0)
    near_one = 1 + rng.uniform(-0.01, 0.01, n)
    wide = rng.uniform(0, 4, n)
    tiny = np.float64(np.finfo(dtype).smallest_subnormal) * rng.uniform(1, 2.0 ** 20, n)
    x = np.concatenate([near_one, wide, tiny])
    reach = zmax / np.maximum(np.abs(np.log2(x)), 1e-3)  # |y log2 x| up to zmax
    y = rng.uniform(-1, 1, 3 * n) * reach
    x, y = x.astype(dtype), y.astype(dtype)
    err, i, finite = _measure(lambda a, b: lax.pow(a, b), np.power, (x, y), dtype)
    assert err <= MAX_ULP, (x[finite][i], y[finite][i], err)
    assert finite.sum() > 2.5 * n  # most results are finite and nonzero: measured


def _pow64_table_portable():
    """vecmath's float64 pow by tables (`_make_pow64_table`, AVX-512's code) built from
    portable operations instead of vector_isa's: getexp/getmant from the bits (subnormals
    lifted by 2^54), scalef by exponent bits, the tables as constant arrays. The arithmetic
    is the same, so this runs AVX-512's pow on any CPU (as a scalar loop) for its accuracy."""
    from numba import njit
    from jitviz.backends.cpu import vecmath
    from jitviz.backends.cpu.vecmath_core import F64, as_float, as_int, inline

    tiny, lift, mask, one = F64.TINY, np.float64(2.0 ** 54), F64.MANT_MASK, F64.ONE_BITS

    @inline
    def bits(a):
        sub = a < tiny
        return as_int(a * lift if sub else a), (54.0 if sub else 0.0)

    @inline
    def getexp(a):
        ix, lifted = bits(a)
        return np.float64((ix >> np.int64(52)) - np.int64(1023)) - lifted

    @inline
    def getmant(a):  # in [3/4, 3/2), as vgetmant's interval 3
        m = as_float((bits(a)[0] & mask) | one)
        return m if m < 1.5 else m * 0.5

    @inline
    def scalef(p, e):
        return vecmath._scale64(p, np.int32(np.floor(e)))

    def table(values):
        array = np.array(values, np.float64)

        @inline
        def lookup(j):
            return array[j & np.int32(15)]
        return lookup

    log2_dd, exp2_dd = vecmath._make_pow64_table(getexp, getmant, scalef, table)

    @njit(error_model="numpy")
    def pow_fast(x, y, out):
        for i in range(x.size):
            gh, gl = log2_dd(x[i])
            zc, zl, _ = vecmath._times_log2(y[i], gh, gl, vecmath._POW64_CLAMP)
            out[i] = exp2_dd(zc, zl)

    @njit(error_model="numpy")
    def log2_parts(x, hi, lo):
        for i in range(x.size):
            hi[i], lo[i] = log2_dd(x[i])
    return pow_fast, log2_parts


def _ulps(got, x, y):
    """max ulp of float64 x^y over the finite nonzero results, and where."""
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(L), y.astype(L))
        rounded = ref.astype(np.float64)
    ok = np.isfinite(rounded) & (ref != 0)
    ulp = np.maximum(np.spacing(np.abs(rounded[ok])).astype(L), L(2.0 ** -1074))
    err = np.abs(got[ok].astype(L) - ref[ok]) / ulp
    i = int(np.argmax(err))
    return float(err[i]), (x[ok][i], y[ok][i]), int(ok.sum())


def test_float64_pow_by_tables_is_accurate_on_any_cpu():
    """AVX-512's float64 pow (tables, no division) measured on this CPU whatever it is:
    log2 as a double-double to 2^-62 of max(1, |log2 x|) over every exponent, subnormals
    included (2^-63.0 measured); pow within 0.6 ulp over ordinary arguments (0.54-0.55
    over three seeds; the portable code, 1.15) and 3 ulp where |y log2 x| reaches 1070
    (2.24-2.50, at bases near 1.06 with |y| near 13000: f^3 Q(f)'s rounding times y; the
    portable code, 2.78), the large-exponent test's sets. A wrong table entry, a missing
    low part or a short polynomial fails it."""
    pow_fast, log2_parts = _pow64_table_portable()
    rng = np.random.default_rng(11)
    x = np.concatenate([np.exp2(rng.uniform(-1074, 1024, 200_000)),
                        1 + rng.uniform(-0.07, 0.07, 200_000), rng.uniform(0.5, 2, 200_000)])
    hi, lo = np.empty_like(x), np.empty_like(x)
    log2_parts(x, hi, lo)
    ref = np.log2(x.astype(L))
    rel = np.abs((hi.astype(L) + lo.astype(L)) - ref) / np.maximum(np.abs(ref), L(1))
    assert float(rel.max()) < 2.0 ** -62, float(rel.max())

    x = rng.uniform(0.01, 10, 300_000)
    y = rng.uniform(-6, 6, x.size)
    out = np.empty_like(x)
    pow_fast(x, y, out)
    err, where, n = _ulps(out, x, y)
    assert err <= 0.6 and n == x.size, (where, err)

    near_one = 1 + rng.uniform(-0.07, 0.07, 100_000)
    tiny = 2.0 ** -1074 * rng.uniform(1, 2.0 ** 20, 100_000)
    x = np.concatenate([near_one, rng.uniform(0, 4, 100_000), tiny])
    x = x[x > 0]
    y = rng.uniform(-1, 1, x.size) * 1070 / np.maximum(np.abs(np.log2(x)), 1e-3)
    out = np.empty_like(x)
    pow_fast(x, y, out)
    err, where, n = _ulps(out, x, y)
    assert err <= 3.0 and n > 0.8 * x.size, (where, err, n)


@pytest.mark.skipif(not vector_isa.available(), reason="vector_isa needs AVX-512F and VL")
def test_float64_pow_by_tables_is_the_portable_build_bit_for_bit():
    """On AVX-512, the kernels' float64 pow is the tables' code, and its results equal the
    portable build of the same code (the accuracy test's) bit for bit."""
    pow_fast, _ = _pow64_table_portable()
    rng = np.random.default_rng(12)
    x = np.concatenate([np.exp2(rng.uniform(-1074, 1024, 50_000)),
                        1 + rng.uniform(-0.07, 0.07, 50_000)])
    y = rng.uniform(-1, 1, x.size) * 1070 / np.maximum(np.abs(np.log2(x)), 1e-3)
    want = np.empty_like(x)
    pow_fast(x, y, want)
    got = np.asarray(_jit(lambda a, b: lax.pow(a, b))(x, y))
    np.testing.assert_array_equal(got, want)


def test_pow_of_float32_converts_an_integer_exponent_to_float32_first():
    """lax.pow(float32, int32) as XLA lowers it: the exponent becomes float32 before the
    power, so 2^24 + 1 is even there ((-1)^y = 1, (-2)^y = +inf), as the interpreter computes
    (its NumPy power of the float32-converted exponent)."""
    x = np.array([-1.0, -2.0, -1.0, -2.0, 1.0000001, 3.0], np.float32)
    y = np.array([2 ** 24 + 1, 2 ** 24 + 1, 3, -3, 2 ** 30, -7], np.int32)
    got = np.asarray(_jit(lambda a, b: lax.pow(a, b))(x, y))
    with np.errstate(all="ignore"):
        want = np.power(x, y.astype(np.float32))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.asarray(_jit(lambda a, b: lax.pow(a, b),
                                                       "interpret")(x, y)))


# NumPy's own functions (the interpreter's, and the CUDA simulator's stand-ins for libdevice)
# are measured below 2^30 for sin/cos/tan: NumPy's float64 cos(5.319372648326541e+255) is 8 ulp
# off on this machine's AVX-512 loops (-4.68716592425462e-19; exact: -4.6871659242546276e-19),
# where libdevice documents 2 ulp over the whole range (CUDA Math API) and jitviz's CPU
# functions are measured everywhere.
HOST_TRIG_MAX = 2.0 ** 30


def _below_host_trig_max(name, x):
    return x[~(np.abs(x) >= HOST_TRIG_MAX)] if name in ("sin", "cos", "tan") else x  # (NaN kept)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_the_interpreter_is_within_4_ulp_too(name, dtype):
    """The oracle (NumPy's loops) over the same inputs: what the kernels are compared with is
    itself within the bound (measured 3.2 ulp at most, float32 log2)."""
    fn, ref_fn, edges = FUNCS[name]
    x = _below_host_trig_max(name, _inputs(dtype, edges))
    err, i, finite = _measure(fn, ref_fn, (x,), dtype, backend="interpret")
    assert err <= MAX_ULP, f"interpreter: {name}({x[finite][i]!r}) is {err:.2f} ulp off"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_the_interpreters_binary_functions_are_within_4_ulp_too(name, dtype):
    fn, ref_fn, values = BINARY[name]
    err, i, finite = _measure(fn, ref_fn, _pairs(dtype, values), dtype, backend="interpret")
    assert err <= MAX_ULP, (name, err)


def test_the_cell_tables_are_what_the_fitting_script_writes(tmp_path):
    """vecmath_tables.py is generated (`python scripts/fit_vecmath.py --tables`): an edit by
    hand, or a change to the fit not rerun, shows here."""
    import importlib.util
    from pathlib import Path
    script = Path(__file__).resolve().parent.parent / "scripts" / "fit_vecmath.py"
    spec = importlib.util.spec_from_file_location("fit_vecmath", script)
    fit_vecmath = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit_vecmath)
    fit_vecmath.write_tables(tmp_path / "tables.py")
    assert (tmp_path / "tables.py").read_text() == fit_vecmath.TABLES.read_text()


@pytest.mark.parametrize("parallel", [False, True])
def test_trig_blocks_skip_the_table_unless_an_argument_needs_it(parallel):
    """sin/cos/tan run blockwise: the fast variants (no large-argument table) on blocks of
    small arguments, the block again with the full functions when one is large."""
    def f(x, y):
        return jnp.sin(x * 2.0) + jnp.cos(y) * jnp.tan(x)
    x = np.random.default_rng(5).uniform(-10, 10, (3, 1000)).astype(np.float32)
    y = x[::-1].copy()
    x[1, 300], y[2, 999] = 3e30, -1e20  # one block of row 1, the tail of row 2
    c = jitviz.jit(f, parallel=parallel).lower(x, y).compile()
    src = c.kernels[0].source
    assert "rt.sin_f32_fast(" in src and "rt.trig_big_f32(" in src and "rt.tan_f32(" in src
    got = np.asarray(c(x, y))
    xl, yl = x.astype(L), y.astype(L)
    want = np.sin(xl * 2) + np.cos(yl) * np.tan(xl)
    np.testing.assert_allclose(got, want.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_block_tests_whose_arguments_need_no_call_run_first():
    """render._pretests: the tests of sin(v1) (v1 from a load and arithmetic) run in a loop
    before the block, with the lines their arguments take; cos(v2)'s argument takes log, so
    its test stays in the fast loop; a line at another depth than its call's, one that
    reads an array the body stores into, and any body with a line other than one-line
    assignments are not copied (their calls' tests stay in the block)."""
    from jitviz.backends.cpu.render import _pretests
    body = [(3, "v0 = x0[i0]", None), (3, "v1 = np.float32(v0 * c0)", None),
            (3, "v2 = np.float32(rt.log_f32(v1))", None),
            (3, "v3 = np.float32(rt.sin_f32(v1))", None),
            (3, "v4 = np.float32(rt.cos_f32(v2))", None), (3, "out0[i0] = v4 + v3", None)]
    pre, hoisted = _pretests(body)
    assert hoisted == {"rt.sin_f32(v1)"}
    assert [text for _, text, _ in pre] == ["v0 = x0[i0]", "v1 = np.float32(v0 * c0)",
                                            "{g} |= rt.trig_big_f32(v1)"]
    assert _pretests([(4, "v0 = x0[i0]", None), (3, "v1 = rt.sin_f64(v0)", None)]) == ([], set())
    # an array the body stores into is read after the store: not before the block
    stores = [(3, "t0[i0] = x0[i0] * c0", None), (3, "v1 = t0[i0]", None),
              (3, "v2 = rt.sin_f64(v1)", None)]
    assert _pretests(stores) == ([], set())
    # a line it cannot read (a tuple target, a loop, `+=`): nothing hoisted from the body
    for odd in ("v0, v5 = x0[i0], c0", "for j in range(3):", "v0 += c0"):
        assert _pretests([(3, odd, None), (3, "v1 = rt.sin_f64(c0 * c0)", None)]) == ([], set())
    # a reduction's block (calls=True) computes cos's argument, log(v1), once more for its test
    pre, hoisted = _pretests(body, calls=True)
    assert hoisted == {"rt.sin_f32(v1)", "rt.cos_f32(v2)"}
    assert [text for _, text, _ in pre][2:] == ["v2 = np.float32(rt.log_f32(v1))",
                                                "{g} |= rt.trig_big_f32(v1)",
                                                "{g} |= rt.trig_big_f32(v2)"]
    # but never an accumulator (a line that reads the name it assigns)
    acc = [(3, "v0 = x0[i0]", None), (3, "p1 = rt.add_reassoc(p1, v0)", None),
           (3, "v2 = rt.sin_f64(p1)", None)]
    assert _pretests(acc, calls=True) == ([], set())


@pytest.mark.parametrize("parallel", [False, True])
def test_a_block_test_that_needs_a_call_is_taken_in_the_fast_loop(parallel):
    """cos(exp(x)): the test of cos's argument needs exp, so the fast loop ORs it in and a
    block where it holds runs again with the full functions; sin(3 x)'s test runs before
    the block. Each value is the full function's, as in the tail (a kernel of 1 value):
    the same bits."""
    def f(x):
        return jnp.cos(jnp.exp(x)) + jnp.sin(x * 3.0)
    x = np.random.default_rng(41).uniform(-2, 2, 128 * 20 + 5).astype(np.float32)
    x[[128 * 3 + 7, 128 * 11, 128 * 19 + 127]] = [40.0, 60.0, 80.0]  # exp(x) needs the table
    x[128 * 7 + 2] = 3e4  # 3 x needs it
    c = jitviz.jit(f, parallel=parallel).lower(x).compile()
    src = c.kernels[0].source
    assert "the tests that need no call first" in src
    # sin's before the block, cos's in it; in the full blocks and in the tail, run as a
    # shorter block (it ran the full functions, whose table made a row of 100 values 20x
    # slower)
    assert src.count("g0 |= rt.trig_big_f32(") == 4
    assert src.count("rt.cos_f32_fast(") == 2 and "the tail, as a shorter block" in src
    one = jitviz.jit(f, parallel=parallel)
    want = np.concatenate([np.asarray(one(x[i:i + 1])) for i in range(x.size)])
    np.testing.assert_array_equal(np.asarray(c(x)), want)
    for changes in ({-2: 50.0}, {-4: 2e4}, {-2: 50.0, -4: 2e4}):  # in the tail: cos's test
        y, want_y = x.copy(), want.copy()                          # holds, sin's, both
        for i, value in changes.items():
            y[i] = value
            want_y[i] = np.asarray(one(y[i:i + 1]))[0]
        np.testing.assert_array_equal(np.asarray(c(y)), want_y)


# binary functions that run blockwise: a fast variant without the special cases, and for each
# a few arguments that need them (the first value is y for atan2, x for pow)
GUARDED_BINARY = {
    "pow": (lambda a, b: lax.pow(a, b) * 2, (0.01, 10), (-6, 6),
            [(-2.0, 3.0), (0.0, 2.5), (np.inf, 0.5), (3.0, np.nan), (-0.5, -np.inf),
             (np.nan, 1.0), (-1.0, 1e30), (-3.0, -2.0)]),
    "atan2": (lambda a, b: jnp.arctan2(a, b) * 2, (-10, 10), (-10, 10),
              [(0.0, 0.0), (-0.0, -0.0), (np.inf, 2.0), (1.0, -np.inf), (np.nan, 1.0),
               (2.0, np.nan), (np.inf, np.inf), (3e38, 1.0)]),
}


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(GUARDED_BINARY))
def test_binary_blocks_skip_the_special_cases_unless_a_value_needs_them(name, dtype, parallel):
    """pow and atan2 run blockwise like sin/cos/tan: a block where their test is false for
    every value takes the fast variant (no special cases), a block with any other value the
    full function, whose results on the ordinary values are the same bits. Threaded, the
    blocks are split across threads (one axis: `prange` over blocks)."""
    fn, a_range, b_range, unusual = GUARDED_BINARY[name]
    rng = np.random.default_rng(11)
    n = 128 * 40 + 17  # 40 blocks and a tail
    a = rng.uniform(*a_range, n).astype(dtype)
    b = rng.uniform(*b_range, n).astype(dtype)
    c = jitviz.jit(fn, parallel=parallel).lower(a, b).compile()
    src = c.kernels[0].source
    tag = "f32" if dtype == np.float32 else "f64"
    test = {"pow": "pow_special", "atan2": "atan2_special"}[name]
    assert f"rt.{name}_{tag}_fast(" in src and f"rt.{test}_{tag}(" in src
    assert ("prange(" in src) == parallel
    clean = np.asarray(c(a, b))
    # one unusual pair in some blocks (and the tail): each kind the test must catch
    spots = [3, 128 * 5 + 9, 128 * 11 + 127, 128 * 17, 128 * 23 + 64, 128 * 29 + 1,
             128 * 33 + 2, n - 4]
    a2, b2 = a.copy(), b.copy()
    for i, (u, v) in zip(spots, unusual):
        a2[i], b2[i] = u, v
    dirty = np.asarray(c(a2, b2))
    rest = np.ones(n, bool)
    rest[spots] = False
    np.testing.assert_array_equal(dirty[rest], clean[rest])
    with np.errstate(all="ignore"):
        want = np.asarray(_jit(fn, "interpret")(a2, b2))
    np.testing.assert_array_equal(dirty[~rest], want[~rest])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["exp", "logistic"])
def test_exp_fast_variant_is_exp_wherever_its_test_is_false(name, dtype):
    """exp's fast variant (no clamp, 2^n as one exponent-bits add) gives exp's own bits for
    every |x| below its bound, the bound's neighbours included, and so does logistic's (its
    e^-|x|); the test holds from the bound on, and for the specials (the fast variant's bits
    are meaningless there)."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    t = "f32" if dtype == np.float32 else "f64"
    full, fast, special = (getattr(rt, n) for n in (f"{name}_{t}", f"{name}_{t}_fast",
                                                     f"exp_special_{t}"))

    @njit
    def apply(x, a, b, s):
        for i in range(x.shape[0]):
            a[i], b[i], s[i] = full(x[i]), fast(x[i]), special(x[i])
    bound = dtype(86.0 if dtype == np.float32 else 707.0)
    edges = [np.nextafter(bound, dtype(0)), bound, np.nextafter(bound, dtype(np.inf))]
    x = np.concatenate([np.linspace(-bound, bound, 3_000_001, dtype=dtype),
                        np.array(edges, dtype), -np.array(edges, dtype),
                        np.array([0.0, -0.0, 1e-30, -1e-30, 5e-324 if t == "f64" else 1e-45,
                                  np.inf, -np.inf, np.nan, 1e30, -1e30], dtype)])
    a, b, s = np.empty_like(x), np.empty_like(x), np.empty(x.shape, bool)
    apply(x, a, b, s)
    np.testing.assert_array_equal(s, ~(np.abs(x) < bound))
    np.testing.assert_array_equal(a[~s].view(f"i{x.itemsize}"), b[~s].view(f"i{x.itemsize}"))


def test_float32_erf_calls_exp_fast_only_inside_its_bound():
    """float32 erf's 1 - exp(-R(a)) takes exp_f32_fast for every a (the select comes after),
    so R over [0, 3.92], where a is clamped, must stay below exp's fast bound: a refit of R
    that left it would give wrong results silently."""
    from jitviz.backends.cpu.vecmath_core import F32
    from jitviz.backends.cpu.vecmath_erf import _ERF_UPPER32
    center, top, coeffs = _ERF_UPPER32
    a = np.linspace(0.0, top, 400_001)
    r = np.polynomial.polynomial.polyval(a - center, coeffs)
    assert np.abs(r).max() < 0.9 * float(F32.EXP_FAST_MAX), np.abs(r).max()


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_exp_blocks_skip_the_clamp_unless_a_value_needs_it(dtype, parallel):
    """Without AVX-512 exp and logistic run blockwise (render.GUARD_TESTS): a block of
    moderate values takes the fast variants, a block with a huge, tiny-result, infinite or
    NaN argument the full functions; every value is the full function's (the same bits as a
    loop of rt.exp_* and rt.logistic_*). With AVX-512 neither is guarded (vscalef leaves
    nothing to skip)."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    from jitviz.backends.cpu.vecmath_core import target_has_avx512
    t = "f32" if dtype == np.float32 else "f64"
    full, logistic = getattr(rt, f"exp_{t}"), getattr(rt, f"logistic_{t}")
    nn_sigmoid = jitviz.nn.sigmoid

    @njit
    def reference(x, out):
        for i in range(x.shape[0]):
            out[i] = full(x[i])

    @njit
    def sigmoid(x, out):
        for i in range(x.shape[0]):
            out[i] = logistic(x[i])
    n = 128 * 30 + 9
    x = np.random.default_rng(12).uniform(-80, 80, n).astype(dtype)
    big = [88.7, -103.5, np.inf, -np.inf, np.nan, 1e4] if t == "f32" else \
        [709.7, -745.0, np.inf, -np.inf, np.nan, 1e4]
    x[[5, 128 * 4 + 100, 128 * 9 + 127, 128 * 17, 128 * 25 + 3, n - 2]] = big
    f = lambda v: jnp.exp(v * 0.5) * 2.0 + nn_sigmoid(v)  # noqa: E731
    c = jitviz.jit(f, parallel=parallel).lower(x).compile()
    src = c.kernels[0].source
    guarded = not target_has_avx512()
    assert (f"rt.exp_{t}_fast(" in src and f"rt.exp_special_{t}(" in src) == guarded
    assert (f"rt.logistic_{t}_fast(" in src) == guarded
    want, s = np.empty_like(x), np.empty_like(x)
    reference(x * dtype(0.5), want)
    sigmoid(x, s)
    np.testing.assert_array_equal(np.asarray(c(x)), want * dtype(2.0) + s)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("shape", [(3, 128 * 9 + 17), (128 * 40 + 3,)], ids=["rows", "all"])
def test_a_reductions_guarded_calls_are_tested_before_each_block(shape, parallel):
    """render._tested_block: in a blocked sum (over rows, or over every axis in chunks on
    every core), the tests of sin and, without AVX-512, exp run before each block, which
    then runs once, with the fast variants or the full functions. The fast variants are
    wrong for the arguments some blocks hold (sin's beyond its reduction: 10^18 for sin(2e10);
    exp's below -86: -4e23), so each sum must come out of the full functions' values. (Not
    compared bit for bit: LLVM may associate a block's adds differently in the two loops.)"""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    from jitviz.backends.cpu.vecmath_core import target_has_avx512
    sin, exp = rt.sin_f32, rt.exp_f32

    @njit
    def terms(x, s, e):
        for i in range(x.size):
            s[i] = sin(x[i] * np.float32(2.0))
            e[i] = exp(-abs(x[i]) - np.float32(3.0))

    def f(x):
        return jnp.sum(jnp.sin(x * 2.0), axis=-1), jnp.sum(jnp.exp(-jnp.abs(x) - 3.0), axis=-1)
    x = np.random.default_rng(8).uniform(-3, 3, shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[[128 * 2 + 5, 128 * 9 + 3, 128 * 14 + 127]] = [1e10, -3e9, 1.5e30]  # sin's table
    flat[[128 * 5 + 1, 128 * 12 + 64]] = [-120.0, 97.0]  # exp's clamp and scale, as 1e10
    c = jitviz.jit(f, parallel=parallel).lower(x).compile()
    src = "".join(k.source for k in c.kernels)
    assert "rt.sin_f32_fast(" in src and "# the tests first" in src
    assert ("rt.exp_f32_fast(" in src) == (not target_has_avx512())
    s, e = np.empty_like(flat), np.empty_like(flat)
    terms(flat, s, e)
    got = c(x)
    for out, t in ((got[0], s.reshape(shape)), (got[1], e.reshape(shape))):
        t, out = t.astype(np.float64), np.asarray(out, np.float64)
        want, bound = t.sum(axis=-1), 1e-6 * np.abs(t).sum(axis=-1)
        assert np.all(np.abs(out - want) <= bound), (out, want)
    np.testing.assert_array_equal(np.asarray(c(x)[0]), np.asarray(got[0]))  # deterministic


@pytest.mark.parametrize("parallel", [False, True])
def test_max_lanes_test_their_tail_first(monkeypatch, parallel):
    """A max over rows with lanes (AVX-512's form, forced here on any CPU) runs its last
    block at full width, lanes past the end taking the identity. Its guarded calls are
    tested first, in the full blocks and over the tail, so a row of 100 values runs the
    fast sin unless a value needs the table: the lanes' update line (a call alone, not an
    assignment) had kept every test in the block, so every value ran the full sin."""
    from numba import njit
    from jitviz.backends.cpu import render as cpu_render, runtime as rt
    monkeypatch.setattr(cpu_render, "MAX_MIN_LANES", True)
    sin = rt.sin_f32

    @njit
    def terms(x, out):
        for i in range(x.size):
            out[i] = sin(x[i])
    x = np.random.default_rng(12).uniform(-3, 3, (4, 100)).astype(np.float32)
    x[1, 98], x[2, 97], x[3, 5] = 1e10, -3e9, 1.5e30  # (98 and 97: in the tail)
    c = jitviz.jit(lambda x: jnp.max(jnp.sin(x), axis=-1), parallel=parallel).lower(x).compile()
    src = c.kernels[0].source
    assert "rt.lanes_total_max(" in src and src.count("rt.sin_f32_fast(") == 2, src
    t = np.empty(x.size, np.float32)
    terms(x.reshape(-1), t)
    np.testing.assert_array_equal(np.asarray(c(x)), t.reshape(x.shape).max(axis=-1))


@pytest.mark.parametrize("parallel", [False, True])
def test_a_reductions_guarded_call_of_a_call_is_tested_before_each_block(parallel):
    """sum(sin(exp(x))) over rows: sin's argument takes a call, which the test loop computes
    once more (a block that accumulates cannot run again), so the fast sin runs where no
    argument needs the table; exp(40) and exp(50) do (the fast sin of exp(40) is far off)."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    sin, exp = rt.sin_f32, rt.exp_f32

    @njit
    def terms(x, out):
        for i in range(x.size):
            out[i] = sin(exp(x[i]))
    x = np.random.default_rng(9).uniform(-2, 2, (2, 128 * 6 + 5)).astype(np.float32)
    x[0, 128 * 2 + 3], x[1, 128 * 4] = 40.0, 50.0
    c = jitviz.jit(lambda x: jnp.sum(jnp.sin(jnp.exp(x)), axis=-1),
                   parallel=parallel).lower(x).compile()
    src = c.kernels[0].source
    assert "# the tests first" in src and "rt.sin_f32_fast(" in src, src
    t = np.empty(x.size, np.float32)
    terms(x.reshape(-1), t)
    t = t.reshape(x.shape).astype(np.float64)
    got = np.asarray(c(x), np.float64)
    assert np.all(np.abs(got - t.sum(axis=-1)) <= 1e-6 * np.abs(t).sum(axis=-1)), got


@pytest.mark.parametrize("parallel", [False, True])
def test_a_reduction_over_a_leading_axis_tests_each_block_first(parallel):
    """sum(sin(x), axis=0) adds each row into the output row (no blocks of its own): per
    block of columns the tests run first, then the block once, fast or full. The sums run
    in row order either way, so they have the bits of the same loop over the full sin
    (the fast sin is far off for 1e10 and 1.5e30)."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    sin = rt.sin_f32

    @njit
    def column_sums(x, out):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[j] = np.float32(out[j] + sin(x[i, j]))
    x = np.random.default_rng(10).uniform(-10, 10, (40, 128 * 3 + 7)).astype(np.float32)
    x[5, 130], x[33, 300], x[12, 387] = 1e10, 1.5e30, -2e10  # (387: in the tail)
    c = jitviz.jit(lambda x: jnp.sum(jnp.sin(x), axis=0), parallel=parallel).lower(x).compile()
    src = c.kernels[0].source
    assert "# the tests first" in src and src.count("rt.sin_f32_fast(") == 2, src
    want = np.full(x.shape[1], -0.0, np.float32)
    column_sums(x, want)
    np.testing.assert_array_equal(np.asarray(c(x)), want)


def test_a_fastmath_reduction_in_chunks_tests_each_block_first():
    """With fastmath a sum has no blocks of its own (LLVM reassociates), and threaded over
    every axis it runs in chunks: each chunk's blocks test first, starting at the chunk's
    start (rt.nonneg: not at 0)."""
    from numba import njit
    from jitviz.backends.cpu import runtime as rt
    sin = rt.sin_f32

    @njit
    def terms(x, out):
        for i in range(x.size):
            out[i] = sin(x[i])
    x = np.random.default_rng(11).uniform(-10, 10, 3 * 65536 + 77).astype(np.float32)
    x[[70000, 140001, 3 * 65536 + 70]] = [1e10, -3e9, 1.5e30]
    c = jitviz.jit(lambda x: jnp.sum(jnp.sin(x)), parallel=True,
                   fastmath=True).lower(x).compile()
    src = c.kernels[0].source
    assert "prange(nch)" in src and "# the tests first" in src and "rt.nonneg(b0" in src, src
    t = np.empty_like(x)
    terms(x, t)
    t = t.astype(np.float64)
    assert abs(float(c(x)) - t.sum()) <= 1e-6 * np.abs(t).sum()


def test_every_guarded_function_has_its_fast_variant_and_test():
    """render.GUARD_TESTS names the calls that run blockwise (exp and logistic only without
    AVX-512); each needs `rt.<name>_<t>_fast` and `rt.<test>_<t>` for both float
    types (a new entry without them would render kernels that fail to compile; the
    functions without an entry would never be used)."""
    from jitviz.backends.cpu import runtime as rt
    from jitviz.backends.cpu.render import (GUARD_TESTS, GUARDED_EVERYWHERE,
                                            GUARDED_WITHOUT_AVX512)
    from jitviz.backends.cpu.vecmath_core import target_has_avx512
    every = {**GUARDED_EVERYWHERE, **GUARDED_WITHOUT_AVX512}
    for name, test in every.items():
        for t in ("f32", "f64"):
            assert callable(getattr(rt, f"{name}_{t}_fast", None)), (name, t)
            assert callable(getattr(rt, f"{test}_{t}", None)), (test, t)
    fast = {n[: -len("_f32_fast")] for n in dir(rt) if n.endswith("_f32_fast")}
    assert fast == set(every), fast
    assert set(GUARD_TESTS) == set(every) - (set(GUARDED_WITHOUT_AVX512)
                                             if target_has_avx512() else set())


def test_threaded_blocks_load_without_gathers():
    """Under prange a block's start is masked (render.py's BLOCK_START_MASK): LLVM then knows
    it is not negative and the block's loads stay contiguous vector loads. Without the mask
    they became gathers (7 in this kernel instead of the serial kernel's 1, which is in its
    tail loop), 3x slower."""
    x = np.ones(5000, np.float32)
    count = [jitviz.jit(lambda a: lax.pow(a, a), parallel=p).lower(x).compile().kernels[0]
             .asm().count("vgather") for p in (False, True)]
    assert count[1] <= count[0], count


def test_pow_special_is_false_for_the_common_case_only():
    """The test that sends a block to the full pow: false for positive finite bases
    (subnormal ones included) with finite exponents, true otherwise."""
    from jitviz.backends.cpu import runtime as rt
    for dtype, test in ((np.float32, rt.pow_special_f32), (np.float64, rt.pow_special_f64)):
        info = np.finfo(dtype)
        for x in (1.0, 0.5, info.tiny, info.smallest_subnormal, info.max, 3.7):
            for y in (0.0, -2.5, info.max, -info.max):
                assert not test(dtype(x), dtype(y)), (dtype, x, y)
        for x, y in ((0.0, 1.0), (-0.0, 1.0), (-1.0, 2.0), (-info.smallest_subnormal, 1.0),
                     (np.inf, 1.0), (-np.inf, 1.0), (np.nan, 1.0), (2.0, np.inf),
                     (2.0, -np.inf), (2.0, np.nan)):
            assert test(dtype(x), dtype(y)), (dtype, x, y)


def test_atan2_special_is_false_for_the_common_case_only():
    """atan2's block test: false for finite pairs below a quarter of the largest float that
    are not both zero (one zero is ordinary), true otherwise."""
    from jitviz.backends.cpu import runtime as rt
    for dtype, test in ((np.float32, rt.atan2_special_f32),
                        (np.float64, rt.atan2_special_f64)):
        info = np.finfo(dtype)
        for y, x in ((1.0, 2.0), (-3.0, 0.0), (0.0, -5.0), (-0.0, 1.0), (info.max / 8, -1.0),
                     (info.smallest_subnormal, info.tiny)):
            assert not test(dtype(y), dtype(x)), (dtype, y, x)
        for y, x in ((0.0, 0.0), (-0.0, -0.0), (np.inf, 1.0), (1.0, -np.inf), (np.nan, 1.0),
                     (1.0, np.nan), (info.max, 1.0), (1.0, -info.max / 2)):
            assert test(dtype(y), dtype(x)), (dtype, y, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_blocks_give_the_same_bits_either_way(name, dtype):
    """A value's result does not depend on its block: the full function (a block with a
    large argument) gives the fast variant's bits below the table's threshold (float32 tan
    by its table of 32 points in both; the others by the same Cody-Waite code)."""
    fn = getattr(jnp, name)
    rng = np.random.default_rng(13)
    x = rng.uniform(-1000, 1000, 128 * 30).astype(dtype)
    clean = np.asarray(_jit(fn)(x))
    x2 = x.copy()
    big = [5, 128 * 7 + 100, 128 * 19 + 1, 128 * 29 + 127]
    x2[big] = dtype(3e30)
    dirty = np.asarray(_jit(fn)(x2))
    rest = np.ones(x.size, bool)
    rest[big] = False
    np.testing.assert_array_equal(dirty[rest], clean[rest])
    np.testing.assert_array_equal(dirty[big], np.asarray(_jit(fn)(x2[big])))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_atan2_of_the_largest_floats(dtype):
    """atan2's one division forms |y| + |x| for ratios near 1: near the largest float that
    sum would overflow (and give 0 or NaN) unless both are scaled down first."""
    big = np.finfo(dtype).max
    y = np.array([big, big * 0.75, big / 3, big, -big, big * 0.5], dtype)
    x = np.array([big, big, big, big * 0.5, -big * 0.9, -big], dtype)
    err, i, finite = _measure(jnp.arctan2, np.arctan2, (y, x), dtype)
    assert finite.all() and err <= MAX_ULP, (y[i], x[i], err)


# finite arguments where each result is a normal number: fastmath's nnan/ninf flags make
# NaN and infinity results undefined, so only accuracy is compared
FASTMATH_RANGES = {"exp": (-80, 80), "expm1": (-10, 10), "exp2": (-100, 100),
                   "logistic": (-50, 50), "tanh": (-10, 10), "sinh": (-80, 80),
                   "cosh": (-80, 80), "cbrt": (-1e6, 1e6)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FASTMATH_RANGES))
def test_fastmath_keeps_the_exp_family_and_cbrt_within_4_ulp(name, dtype):
    """With fastmath=True LLVM may reassociate. The exp family rounds x log2(e) to an integer
    by adding 1.5 * 2^mant inside an FMA and reads the integer from the sum's bits; folding
    (v * m + MAGIC) - MAGIC back to v * m would leave n and that integer disagreeing, and
    results off by powers of two (as exp2 was, whose FMA x * 1 + MAGIC LLVM turns into an
    add). Small arguments too: for them expm1, tanh and sinh keep q = e^r - 1 whole (an
    FMA 2^n q + (2^n - 1) that LLVM factored as 2^n (q + 1) - 1 would cancel)."""
    fn, ref_fn, _ = FUNCS[name]
    lo, hi = FASTMATH_RANGES[name]
    x = np.random.default_rng(7).uniform(lo, hi, 100_000).astype(dtype)
    x[:5000] *= dtype(1e-6)
    got = np.asarray(jitviz.jit(fn, fastmath=True)(x)).astype(L)
    ref = ref_fn(x.astype(L))
    ulp = np.spacing(np.abs(ref.astype(dtype))).astype(L)
    err = np.abs(got - ref) / ulp
    i = int(np.argmax(err))
    assert err[i] <= MAX_ULP, f"{name}({x[i]!r}) with fastmath is {float(err[i]):.2f} ulp off"


_FASTMATH_FIRST = """
import json, re, numpy as np, jitviz, jitviz.numpy as jnp
from jitviz import lax
jitviz.config.update("keep_float64", True)
x = np.linspace(0.5, 7.5, 1000)
found = {}
for fastmath in (True, False):  # a fastmath kernel compiled first in this fresh process
    for name, fn in (("lgamma", lax.lgamma), ("tanh", jnp.tanh)):
        f = jitviz.jit(fn, fastmath=fastmath)
        ir = f.lower(x).compile().kernels[0].llvm_ir()
        flagged = re.findall(r"= (fadd|fsub|fmul|fdiv) (fast|reassoc|contract|nnan|ninf|nsz)", ir)
        found[f"{name} {fastmath}"] = [np.asarray(f(x)).tolist(), len(flagged)]
print(json.dumps(found))
"""


def test_a_fastmath_kernel_leaves_the_math_functions_of_later_kernels_alone(tmp_path):
    """vecmath's functions are Numba dispatchers inlined into kernels, compiled once per
    signature; a flag they left unset was inherited from the first kernel that compiled
    them, so after one fastmath=True kernel every later kernel of the process (and the kernel
    cache) had fastmath copies: float64 lgamma(2.00114) came out 5.27 ulp off instead of 0.73
    depending on what was compiled before. In a fresh process whose first kernels are
    fastmath ones, the later plain kernels' code has no fast-math flag and their values are
    this process's (and fastmath kernels use the same functions)."""
    import json
    import subprocess
    import sys
    env = {**os.environ, "JITVIZ_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _FASTMATH_FIRST], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    x = np.linspace(0.5, 7.5, 1000)
    for name, fn in (("lgamma", lax.lgamma), ("tanh", jnp.tanh)):
        plain, flagged = found[f"{name} False"]
        assert flagged == 0, name
        np.testing.assert_array_equal(plain, np.asarray(_jit(fn)(x)), err_msg=name)
        np.testing.assert_array_equal(found[f"{name} True"][0], plain, err_msg=name)


def test_tanh_of_the_portable_code_in_a_child_without_avx512(tmp_path):
    """Without AVX-512 tanh scales 2^n q by one product from the exponent bits
    (vecmath's `scale_exponent_bits`: n <= 27, float32, or 56 after the clamp), which an
    AVX-512 host never compiles: this file's tanh tests (every range and the specials, and
    under fastmath, where a 2^n shared with 2^n - 1 could be factored out and cancel) run
    again in a child whose target has no AVX-512."""
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f",
           "JITVIZ_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          __file__, "-k", "tanh and not portable_code and not cuda"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    # (the accuracy tests of both types, fastmath's, the vectorization check and more)
    passed = re.search(r"\b(\d+) passed\b", out.stdout)
    assert passed and int(passed.group(1)) >= 6, out.stdout[-2000:]


# a Zen 4's features (LLVM's `znver4`), given explicitly: with NUMBA_CPU_NAME alone Numba keeps
# the host's feature list
ZNVER4_FEATURES = ",".join("+" + f for f in (
    "64bit sse sse2 sse3 ssse3 sse4.1 sse4.2 popcnt cx16 avx avx2 fma f16c bmi bmi2 lzcnt "
    "movbe xsave avx512f avx512vl avx512dq avx512bw avx512cd avx512vbmi avx512ifma "
    "avx512vpopcntdq avx512bf16 avx512bitalg avx512vbmi2 avx512vnni").split())

_AVX512_KERNELS = """
import json, numpy as np, jitviz, jitviz.numpy as jnp
from jitviz import lax
from jitviz.backends.cpu import vector_isa
jitviz.config.update("keep_float64", True)
found = {"available": vector_isa.available()}
for name, fn, binary in (("log", jnp.log, False), ("log1p", jnp.log1p, False),
                         ("tanh", jnp.tanh, False), ("cbrt", jnp.cbrt, False),
                         ("pow", lambda a, b: lax.pow(a, b), True), ("erf", lax.erf, False),
                         ("erf_inv", lax.erf_inv, False), ("lgamma", lax.lgamma, False),
                         ("digamma", lax.digamma, False),
                         ("bessel_i0e", lax.bessel_i0e, False)):
    for dtype in (np.float32, np.float64):
        x = np.ones(4096, dtype)
        k = jitviz.jit(fn).lower(*((x, x) if binary else (x,))).compile().kernels[0]
        asm = k.asm()  # compiled, never run: the host may lack these instructions
        found[f"{name}_{np.dtype(dtype).name}"] = sorted(
            op for op in ("zmm", "vpermi2p", "vpermt2p", "vgetmantp", "vscalefp", "vdivp")
            if op in asm)
print(json.dumps(found))
"""


def test_the_avx512_code_compiles_on_any_host(tmp_path):
    """vecmath's AVX-512 code (vector_isa's tables, vgetexp/vgetmant, vscalef) compiles for
    an AVX-512 CPU (`znver4`) in a child, whatever the host: a host without AVX-512 never
    compiles it otherwise (LLVM refuses what a target lacks: "Cannot select"). The kernels of
    the table-based functions (and erf's, erf_inv's, lgamma's, digamma's and bessel_i0e's)
    are compiled there, not run; float64 pow's holds its table permutes and no division (the
    portable code divides once per value)."""
    import json
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_CPU_NAME": "znver4", "NUMBA_CPU_FEATURES": ZNVER4_FEATURES,
           "JITVIZ_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _AVX512_KERNELS], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found.pop("available") is True
    assert len(found) == 20
    for kernel in ("lgamma", "digamma", "bessel_i0e"):  # (float64 arithmetic: zmm vectors)
        assert all("zmm" in found.pop(f"{kernel}_{t}") for t in ("float32", "float64"))
    # (2^n from exponent bits on any target: tanh's, and float32 erf's exp_fast)
    assert "zmm" in found.pop("tanh_float64") and "zmm" in found.pop("erf_float32")
    for kernel, ops in found.items():  # (every one uses one of them at least)
        assert "zmm" in ops and {"vpermi2p", "vpermt2p", "vgetmantp", "vscalefp"} & set(ops), \
            (kernel, ops)
    assert {"vgetmantp", "vscalefp"} <= set(found["pow_float64"]), found["pow_float64"]
    assert {"vpermi2p", "vpermt2p"} & set(found["pow_float64"]), found["pow_float64"]
    assert "vdivp" not in found["pow_float64"]


# --- the CUDA kernels: libdevice on a GPU, the lowering in Numba's simulator ------------------

CUDA_CHILD = os.environ.get("JITVIZ_CUDA_SIM_CHILD") == "1"


def _cuda_mode():
    from jitviz.backends.cuda.runtime import runtime
    return runtime().mode


# The simulator runs each value through Python (its math is the host's, not libdevice):
# fewer random values and grid points there, every edge and special value kept (CI time:
# 62 s of 30 minutes)
SIM_VALUES = 30_000


@pytest.fixture
def cuda_here():
    """Runs a test on CUDA where there is a GPU, or in the simulator's child process."""
    mode = _cuda_mode()
    if not (mode == "gpu" or (mode == "sim" and CUDA_CHILD)):
        pytest.skip("needs a GPU, or runs in the simulator child (test_cuda_simulator_agrees)")
    return mode




@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_cuda_within_4_ulp_everywhere_and_specials_exact(name, dtype, cuda_here):
    """libdevice through jitviz's CUDA kernels: within 4 ulp, and NaN, infinities and signed
    zeros exactly the interpreter's (as the CPU's functions above)."""
    fn, ref_fn, edges = FUNCS[name]
    x = _inputs(dtype, edges, n=SIM_VALUES if cuda_here == "sim" else 150_000)
    x = _below_host_trig_max(name, x) if cuda_here == "sim" else x
    err, i, finite = _measure(fn, ref_fn, (x,), dtype, backend="cuda")
    assert err <= MAX_ULP, f"cuda ({cuda_here}): {name}({x[finite][i]!r}) is {err:.2f} ulp off"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_cuda_binary_within_4_ulp_and_specials_exact(name, dtype, cuda_here):
    fn, ref_fn, values = BINARY[name]
    x, y = _pairs(dtype, values, n=SIM_VALUES if cuda_here == "sim" else 100_000)
    err, i, finite = _measure(fn, ref_fn, (x, y), dtype, backend="cuda")
    assert err <= MAX_ULP, (cuda_here, name, x[finite][i], y[finite][i], err)


@pytest.mark.skipif(CUDA_CHILD, reason="the parent of the simulator run")
def test_cuda_simulator_agrees():
    """This file's `cuda` tests in Numba's simulator, in a fresh process (on a GPU machine
    they run in this process, on the GPU, instead)."""
    mode = _cuda_mode()
    if mode == "gpu":
        pytest.skip("a GPU is here: the cuda tests ran on it")
    pytest.importorskip("numba.cuda")
    out = run_in_simulator(__file__, "-k", "cuda")
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed[1]) == 2 * (len(FUNCS) + len(BINARY)), out[-3000:]  # no skip


# --- divisions per vector ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["arctan", "arctan2", "arcsin", "arccos", "tanh", "logistic",
                                  "arcsinh", "arctanh", "tan", "cosh"])
def test_a_function_divides_at_most_once_per_vector(name, dtype):
    """A division is the slowest instruction of these kernels (AVX-512's vdivps: one per 5
    to 10 cycles). LLVM splits `(a or b) / (c or 1)` into two divisions and a select, since
    x / 1 folds: atan's reduction divided twice until 2026-11-27 (1M float32 values 466 ->
    368 us, NumPy 389-409, on an Intel Xeon with AVX-512)."""
    from test_vector_isa import _hot_loop
    fn = {"logistic": jitviz.nn.sigmoid, "arctan2": lambda v: jnp.arctan2(v, v + 1.0)}.get(
        name, getattr(jnp, name, None))
    x = np.linspace(0.1, 0.9, 4096).astype(dtype)
    with float64_kept():
        asm = jitviz.jit(fn, parallel=False).lower(x).compile().kernels[0].asm()
    loop = _hot_loop(asm)
    # without AVX-512's table float64's log divides too (f / (2 + f)), and these two take one
    # log besides their own division
    logs = dtype == np.float64 and name in ("arcsinh", "arctanh") and \
        not vector_isa.available()
    assert len(re.findall(r"\bvdivp[sd]\b", loop)) <= 1 + logs, loop


# --- division by a constant (vecmath `div_const`, rules.py `_div`) --------------------------

DIVISORS = [np.log(2.0), np.log(10.0), 3.0, 255.0, 0.1, 7.0, 1.1, 1.9999999, -12345.678, 1e-3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_the_corrected_reciprocal_is_the_quotient(dtype):
    """div_const's fast variant (x (1/c) corrected by an FMA of the remainder) against the
    division, bit for bit: for float32 every significand (x in [1, 2): scaling x by a power
    of two scales the quotient exactly, within the range its test admits), for float64 2M
    random values across that range; both for ten constants, 1.9999999 among them (all
    significand bits set: Markstein's theorem's delicate case)."""
    from jitviz.backends.cpu import runtime as rt
    fast = rt.div_const_f32_fast if dtype == np.float32 else rt.div_const_f64_fast

    @numba.njit(error_model="numpy")
    def divide(x, c, out):
        for i in range(x.shape[0]):
            out[i] = fast(x[i], c)
    if dtype == np.float32:
        x = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(127 << 23)).view(np.float32)
    else:
        rng = np.random.default_rng(5)
        x = rng.uniform(1, 2, 2_000_000) * np.exp2(rng.integers(-499, 499, 2_000_000))
        x[::2] *= -1
    out = np.empty_like(x)
    for c in DIVISORS:
        c = dtype(c)
        divide(x, c, out)
        wrong = np.flatnonzero(out.view(np.uint8).reshape(x.size, -1).any(axis=1)
                               & (out != x / c))
        assert wrong.size == 0, (c, x[wrong[:3]], out[wrong[:3]], (x / c)[wrong[:3]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_division_by_a_constant_matches_the_interpreter_with_its_specials(dtype):
    """`x / c` through jit, blockwise: blocks with zeros of both signs (selected, not
    corrected), infinities, NaN, subnormals, tiny and huge values (the division) and ordinary
    ones; elementwise and in a sum, bit for bit against the interpreter."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(6)
    x = rng.standard_normal(5000).astype(dtype)
    x[:128] *= dtype(1e-3)
    x[130:140] = [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal, info.tiny,
                  info.max, -info.max, 1e-30]
    x[300] = -0.0  # a block of ordinary values and a negative zero: the fast variant
    with float64_kept():
        for c in (3.0, -0.1, 255.0):
            f = lambda v, c=c: v / c  # noqa: E731
            got, want = jitviz.jit(f)(x), jitviz.jit(f, backend="interpret")(x)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            s = lambda v, c=c: jnp.sum(v[256:] / c)  # noqa: E731  (ordinary values)
            assert float(jitviz.jit(s)(x)) == pytest.approx(float(np.sum(x[256:] / dtype(c))),
                                                            rel=1e-5)


def _div_source(f, x):
    return jitviz.jit(f).lower(x).compile().kernels[0].source


def test_which_divisions_by_constants_take_the_corrected_reciprocal():
    """A constant divisor of a loaded value: the corrected reciprocal, blockwise with its
    test first. A power of two (LLVM's product already), a divisor beyond 2^60, a dividend that
    takes a call (exp(x) / 3: its test in the fast loop would cost what the division does)
    and one read from an earlier nest's temporary (a mean's division by n, in the row loop
    it shares with the sum) keep the division."""
    x = np.linspace(1, 2, 1000, dtype=np.float32)
    src = _div_source(lambda v: v / 3.0, x)
    assert "rt.div_const_f32_fast(" in src and "rt.div_const_special_f32(" in src, src
    rows = x.reshape(40, 25)
    for f, arg in ((lambda v: v / 4.0, x), (lambda v: v / 1e30, x),
                   (lambda v: jnp.exp(v) / 3.0, x),
                   (lambda v: v - jnp.mean(v, axis=-1, keepdims=True), rows)):
        src = _div_source(f, arg)
        assert "div_const" not in src and " / c" in src, src


# --- a log times or over a constant (rules.py `_scaled_log`, vecmath `log_scaled`) ---------

SCALED_LOGS = {
    "log2": (jnp.log2, "div", np.log(2.0)),  # log(x) / log(2), as JAX writes it
    "log10": (jnp.log10, "mul", 1 / np.log(10.0)),  # log(x) * log10(e)
    "log_3": (lambda v: jnp.log(v) / np.log(3.0).astype(v.dtype), "div", np.log(3.0)),
    "half_log": (lambda v: 0.5 * jnp.log(v), "mul", 0.5),
    "log_small": (lambda v: jnp.log(v) / 7.3e-5, "div", 7.3e-5),
    "log_times_big": (lambda v: jnp.log(v) * 3.0e9, "mul", 3.0e9),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(SCALED_LOGS))
def test_a_log_times_or_over_a_constant_is_one_function(name, dtype):
    """log(x) / c and log(x) * c (c > 0) compute as one log with the scale in its last steps:
    no division, within 2.5 ulp of log(x) / c for the constant c of the dtype (NumPy's two
    steps, float32: up to 4.2 ulp), specials as the interpreter gives them."""
    fn, kind, c = SCALED_LOGS[name]
    x = _inputs(dtype, [1.0, np.sqrt(0.5), 2.0, 8.0, 1e-3])
    src = jitviz.jit(fn).lower(x).compile().kernels[0].source
    suffix = "f32" if dtype == np.float32 else "f64"
    assert f"rt.log_{kind}_const_{suffix}(" in src and " / c" not in src, src
    cd = L(dtype(c))
    ref = (lambda v: np.log(v) / cd) if kind == "div" else (lambda v: np.log(v) * cd)
    err, i, finite = _measure(fn, ref, (x,), dtype)
    assert err <= 2.5, f"{name}({x[finite][i]!r}) is {err:.2f} ulp off"


@pytest.mark.parametrize("fn", [
    lambda v: jnp.log(v) / -3.0,  # a negative scale: log(1) / c is -0.0
    lambda v: jnp.log(v) / 1e30,  # beyond DIV_CONST_RANGE
    lambda v: jnp.log(v) / 0.0,
    lambda v: jnp.log(v) / 3.0 + jnp.log(v),  # the log is read twice
    lambda v: (jnp.log(v), jnp.log(v) / 3.0),  # and stored
    lambda v: jnp.log(v) / v,  # not a constant
    lambda v: jnp.log1p(v) / 3.0,  # not a log
], ids=["negative", "out_of_range", "zero", "read_twice", "stored", "not_constant",
        "log1p"])
def test_a_log_and_a_scale_stay_apart_where_they_must(fn):
    x = np.linspace(0.5, 2, 100, dtype=np.float32)
    src = "".join(k.source for k in jitviz.jit(fn).lower(x).compile().kernels)
    assert "log_div_const" not in src and "log_mul_const" not in src, src
    with np.errstate(all="ignore"):
        got = jitviz.jit(fn)(x)
        want = jitviz.jit(fn, backend="interpret")(x)
    for g, w in zip(jitviz.tree_leaves(got), jitviz.tree_leaves(want)):
        np.testing.assert_array_equal(np.signbit(np.asarray(g)), np.signbit(np.asarray(w)))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=["f16", "f32"])
def test_a_scaled_log_of_another_dtype_keeps_its_steps(dtype):
    """float16 computes in float32 and rounds log(x) to float16 before the product (the
    interpreter's result): the combined form is for float32 and float64 only."""
    x = np.linspace(0.5, 2, 100, dtype=dtype)
    src = jitviz.jit(jnp.log10).lower(x).compile().kernels[0].source
    assert ("log_mul_const" in src) == (dtype == np.float32), src


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_expm1_of_a_tiny_argument_is_the_argument(dtype):
    """e^x - 1 = x + x^2/2 rounds to x below 2^-(mant + 2): returned as given, subnormals and
    -0.0 included (vecmath's 2 (h q + (h - 1/2)) would halve a subnormal q first and lose its
    last bit)."""
    info = np.finfo(dtype)
    mags = np.concatenate([info.smallest_subnormal * np.arange(1, 200, dtype=dtype),
                           np.geomspace(info.tiny, 2.0 ** -(info.nmant + 3), 500).astype(dtype)])
    x = np.concatenate([mags, -mags, [dtype(0.0), dtype(-0.0)]])
    got = np.asarray(_jit(jnp.expm1)(x))
    np.testing.assert_array_equal(got.view(f"u{x.itemsize}"), x.view(f"u{x.itemsize}"))
