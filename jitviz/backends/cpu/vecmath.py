"""Branch-free elementary functions for the CPU kernels, float32 and float64, that vectorize.

A kernel that calls libm per element (`np.tanh(x)` in Numba) runs one scalar call per value:
the loop cannot vectorize. The functions here are straight-line arithmetic instead: a range
reduction by exact operations, a polynomial on the reduced range, a reconstruction, and
selects (`a if c else b`, which LLVM turns into vector blends) for the special values. No
fastmath: every step is IEEE arithmetic whose error is bounded below.

Each function has one implementation, written once for both float types by a factory that
closes over that type's constants (`F32`, `F64` of vecmath_core.py, with the intrinsics the
functions are built from; the trigonometric ones are vecmath_trig.py's); Numba freezes them
into the code. The polynomials' coefficients come from `scripts/fit_vecmath.py`
(least-squares fits of each function's tail after its exact leading terms, on Chebyshev
nodes, against long-double references). The kernels call them as `rt.<name>_f32` /
`rt.<name>_f64` (runtime.py re-exports them; the `_vector` rule of rules.py names the
function of a primitive and dtype).
sin/cos/tan, pow, atan2, exp and logistic also have `_fast` variants (without the
large-argument table, the special cases, or exp's clamp) and a test per call (`trig_big_*`,
`pow_special_*`, `atan2_special_*`, `exp_special_*`), which elementwise kernels use
blockwise (`FusedRenderer._guarded_loops`; render.py's GUARD_TESTS names them, and
tests/test_vecmath.py checks that each exists here).

Measured accuracy (max ulp over the whole range, tests/test_vecmath.py) is in README.md.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit

from ...lax.special import lgamma_scalar
from . import vector_isa
from .vecmath_erf import make_erf_family
from .vecmath_gamma import make_gamma_family
from .vecmath_bessel import make_bessel_family
from .vecmath_core import F32, F64, as_float, as_int, fma, horner, horner_split2, \
    inline, ldexp, split_coeffs, target_has_avx512
from .vecmath_trig import (_two_sum as two_sum, TRIG_F32, TRIG_F32_FAST, TRIG_F64, TRIG_F64_FAST,
                           make_inverse_trig, trig_big_f32, trig_big_f64)


# --- scaling by 2**n -----------------------------------------------------------------------

def _make_scale(c):
    I, MANT, BIAS = c.I, c.MANT, c.BIAS

    @inline
    def scale_bits(p, k):
        """p * 2**k from exponent bits, in two halves (|k| up to twice the exponent range,
        subnormal results rounded once, in the second product)."""
        h = k >> 1
        a = as_float(I((I(h) + BIAS) << MANT))
        b = as_float(I((I(k - h) + BIAS) << MANT))
        return p * a * b

    @inline
    def scale_ldexp(p, k):
        return ldexp(p, np.int32(k))

    return scale_ldexp if target_has_avx512() else scale_bits


def _make_scale_nk(c, scale):
    """scale_nk(p, n, k) = p 2^n for n a float and k the same integer: on AVX-512 `vscalef`
    of the float (no conversion of k: sinh and cosh scale twice; float64 64K values, sinh
    51-53 -> 44-45 us, cosh 52-58 -> 45-47; float32 unchanged), else `scale` of the int.
    LLVM drops whichever the target does not use."""
    if not vector_isa.available():
        @inline
        def by_int(p, n, k):
            return scale(p, k)
        return by_int
    scalef = vector_isa.scalef_f32 if c.F is np.float32 else vector_isa.scalef_f64

    @inline
    def by_float(p, n, k):
        return scalef(p, n)
    return by_float


# --- exp, expm1, exp2, logistic, tanh, sinh, cosh ------------------------------------------

def _make_exp_family(c, scale):
    scale_nk = _make_scale_nk(c, scale)
    F, P, LOG2E, LN2_HI, LN2_LO = c.F, c.EXPM1, c.LOG2E, c.LN2_HI, c.LN2_LO
    ZERO, HALF, ONE, TWO = c.ZERO, c.HALF, c.ONE, c.TWO
    LO, HI, LO2, HI2 = c.EXP_LO, c.EXP_HI, c.EXP2_LO, c.EXP2_HI
    I, MAGIC = c.I, F(1.5 * 2.0 ** int(c.MANT))  # (adding it leaves the units in the last bit)
    MAGIC_BITS = I(np.array(MAGIC).view(I))

    @inline
    def rint_mul(v, m):
        """(n, k): v * m rounded once to the nearest integer, as a float and as an int32,
        by adding 1.5 * 2^mant in the FMA (|v m| < 2^22): two instructions fewer than
        rint and a conversion, and a NaN may pass (n NaN, k arbitrary but defined: a
        float-to-int conversion of NaN would be undefined in LLVM)."""
        nb = fma(v, m, MAGIC)
        return nb - MAGIC, np.int32(as_int(nb) - MAGIC_BITS)

    @inline
    def expm1_poly(r):
        """e^r - 1 for |r| <= ln2/2: r + r^2/2 exactly, the tail r^3 P(r) fitted."""
        return fma(r * r, fma(r, horner(r, P), HALF), r)

    @inline
    def parts(x):
        """(q, n) with e^x = 2^n (1 + q). Cody-Waite: n = rint(x / ln2), r = x - n ln2 with
        ln2 in two pieces; n * LN2_HI is exact (LN2_HI ends in zero bits and |n| is small
        after the clamp), so r carries only the tiny n * LN2_LO rounding. A NaN passes
        (q is NaN)."""
        return parts_within(x, HI)

    @inline
    def parts_within(x, hi):
        """`parts` with x clamped to [LO, hi]."""
        q, n, k = parts_nk(x, hi)
        return q, k

    @inline
    def parts_nk(x, hi):
        """`parts_within`, n also as a float (`scale_nk`)."""
        xc = LO if x < LO else x
        xc = hi if xc > hi else xc
        n, k = rint_mul(xc, LOG2E)
        r = fma(n, -LN2_HI, xc)
        r = fma(n, -LN2_LO, r)
        return expm1_poly(r), n, k

    @inline
    def from_parts_m1(q, n, k):
        """2^k (1 + q) - 1 = 2 (h q + (h - 1/2)), h = 2^(k-1): one FMA of exact terms (h - 1/2
        is exact down to k = -22, below which the result is -1 within half an ulp), so one
        rounding, and no overflow of 2^k at the largest results (k = 128, float64 1024)
        before the final doubling, which is exact. It took 2^k q + (2^k - 1) for k < 2 and
        2^k (1 + q) - 1 above, both computed and one selected: three scalings where this
        takes one. (h q loses a subnormal q's last bit: `expm1` returns tiny x itself.)"""
        h = scale_nk(HALF, n, k)
        return TWO * fma(h, q, h - HALF)

    @inline
    def exp(x):
        q, k = parts(x)
        return scale(q + ONE, k)

    FAST_MAX, MANT_BITS = c.EXP_FAST_MAX, I(c.MANT)
    EXPM1_IS_X = F(2.0 ** -(c.MANT + 2))  # below it e^x - 1 = x + x^2/2 rounds to x
    # expm1's clamp: n = BIAS + 1 at most, so from_parts_m1's h = 2^(n-1) stays finite, and
    # e^x overflows there
    EXPM1_HI = F((int(c.BIAS) + 1.4) * np.log(2.0))

    @inline
    def exp_fast(x):
        """exp for |x| < EXP_FAST_MAX (`exp_special` false), where 2^n (1 + q) is a normal
        number: no clamp, and 2^n goes into the exponent bits with one integer add, where
        `scale_bits` takes two products (its halves reach the subnormal results). The same
        bits as `exp` there (both products are exact for normal results); 17 instructions
        per vector of float32 on AVX2 against exp's 34. (Blockwise: render.GUARD_TESTS.)"""
        n, k = rint_mul(x, LOG2E)
        r = fma(n, -LN2_HI, x)
        r = fma(n, -LN2_LO, r)
        return as_float(I(as_int(expm1_poly(r) + ONE) + (I(k) << MANT_BITS)))

    @inline
    def exp_special(x):
        """Whether exp(x) needs the full function: |x| >= EXP_FAST_MAX, or NaN."""
        return not abs(x) < FAST_MAX

    @inline
    def expm1(x):
        q, n, k = parts_nk(x, EXPM1_HI)
        y = from_parts_m1(q, n, k)
        return y if abs(x) >= EXPM1_IS_X else x  # x rounds to itself there; -0.0, NaN

    @inline
    def exp2(x):
        """2^x = 2^n 2^r, n = rint(x), r = x - n exact, 2^r = e^(r ln2)."""
        xc = x if x > LO2 else LO2  # (rint, not rint_mul: with fastmath LLVM would fold
        xc = xc if xc < HI2 else HI2  # (x + MAGIC) - MAGIC to x, the FMA being x * 1 + MAGIC)
        n = np.rint(xc)
        y = scale(expm1_poly((xc - n) * LN2_HI + (xc - n) * LN2_LO) + ONE, np.int32(n))
        return y if x == x else x

    @inline
    def logistic(x):
        """1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e = e^-|x| never overflows, and
        tiny results for very negative x keep their precision (1 / (1 + inf) would be 0)."""
        q, k = parts(-abs(x))
        e = scale(q + ONE, k)
        return (ONE if x >= ZERO else e) / (ONE + e)

    @inline
    def logistic_fast(x):
        """logistic where `exp_special` is false: e^-|x| by `exp_fast` (the same bits)."""
        e = exp_fast(-abs(x))
        return (ONE if x >= ZERO else e) / (ONE + e)

    TWO_TMAX, BIAS, MANT = F(2 * c.TANH_MAX), c.BIAS, c.MANT

    @inline
    def tanh(x):
        """t / (t + 2) with t = e^2|x| - 1 = 2^n q + (2^n - 1) (e^2|x| = 2^n (1 + q)): one
        expm1 and one division for every argument. No cancellation anywhere: for small x,
        n = 0 and t = q; above, 2^n - 1 is exact (n <= 27 after the clamp, float64 56) and
        t's relative error shrinks by 2 / (t + 2) in the quotient. 2|x| is clamped where
        tanh rounds to 1 (a NaN passes). One 2^n from its exponent bits serves both terms,
        in one FMA (2^n q is exact, so the same bits as a product and a sum; not `scale`
        and `pow2`: float32 686 -> 593-607 us per 1M values on AVX2, float64 2.09 -> 1.89
        ms). Under fastmath LLVM leaves the FMA whole, so it cannot factor 2^n out of
        2^n q + (2^n - 1) and cancel."""
        a = abs(x)
        s = a + a
        s = TWO_TMAX if s > TWO_TMAX else s
        n, k = rint_mul(s, LOG2E)
        r = fma(n, -LN2_HI, s)
        r = fma(n, -LN2_LO, r)
        p2 = as_float(I((I(k) + BIAS) << MANT))  # 2^n: 0 <= n <= 56
        t = fma(expm1_poly(r), p2, p2 - ONE)
        return np.copysign(t / (t + TWO), x)

    P_ODD, P_EVEN = P[0::2], P[1::2]  # expm1_poly's r^3 P(r), split by parity
    U_MIN = np.int32(-64)  # 2^-2n below 2^-64 changes no result (and 2^-2n stays a normal number)
    U_MIN_F, MINUS_TWO = F(U_MIN), F(-2)

    @inline
    def sinh_cosh_parts(x):
        """(e, o, u_minus, u_plus, n) with |x| = n ln2 + r, e^r = 1 + e + o split into its
        even part 1 + e and odd part o (expm1_poly's polynomial, split by the parity of its
        terms: e^-r = 1 + e - o for free, no division), and 1 -+ u for u = 2^-2n. Then
        e^|x| / 2 +- e^-|x| / 2 = 2^(n-1) ((1 + e)(1 +- u) + o (1 -+ u)), summed so that
        1 +- u (exact while it is not negligible) is added last. |x| is clamped where both
        overflow (a NaN passes: all results are NaN)."""
        a = abs(x)
        ac = HI if a > HI else a
        n, k = rint_mul(ac, LOG2E)
        r = fma(n, -LN2_HI, ac)
        r = fma(n, -LN2_LO, r)
        z = r * r
        e = z * fma(z, horner(z, P_EVEN), HALF)
        o = fma(r * z, horner(z, P_ODD), r)
        m2n = np.int32(-(k + k))
        m2n_f = n * MINUS_TWO
        u = scale_nk(ONE, m2n_f if m2n_f > U_MIN_F else U_MIN_F, m2n if m2n > U_MIN else U_MIN)
        return e, o, ONE - u, ONE + u, n - ONE, np.int32(k - np.int32(1))

    @inline
    def sinh(x):
        """2^(n-1) ((1 - u) + o (1 + u) + e (1 - u)). For n = 0 (|x| < ln2 / 2) u = 1 and
        this is o, sinh(r) itself: no cancellation for small x; at n = 1 the terms cancel
        by at most a factor 2.3 (measured 1.6 ulp worst, float64)."""
        e, o, um, up, n1, k = sinh_cosh_parts(x)
        return np.copysign(scale_nk(um + fma(o, up, e * um), n1, k), x)

    @inline
    def cosh(x):
        """2^(n-1) ((1 + u) + o (1 - u) + e (1 + u)), all but o positive and larger."""
        e, o, um, up, n1, k = sinh_cosh_parts(x)
        return scale_nk(up + fma(o, um, e * up), n1, k)

    QUARTER = F(0.25)

    @inline
    def cosh_by_exp(x):
        """h + 1/(4h) with h = e^|x| / 2 (2^(n-1) (1 + q): exact halving, finite wherever
        cosh is): a sum of two positive terms, so nothing cancels, and one exp and one
        division where `cosh` splits expm1's polynomial and scales twice. float32's (its
        division is cheap; float64's costs more than it saves). |x| is clamped where both
        overflow (a NaN passes)."""
        q, n, k = parts_nk(abs(x), HI)
        h = scale_nk(q + ONE, n - ONE, np.int32(k - np.int32(1)))
        return h + QUARTER / h

    return SimpleNamespace(exp=exp, expm1=expm1, exp2=exp2, logistic=logistic,
                           tanh=tanh, sinh=sinh, cosh=cosh, parts=parts,
                           exp_fast=exp_fast, exp_special=exp_special,
                           logistic_fast=logistic_fast, cosh_by_exp=cosh_by_exp)


# --- log, log1p, log2, log10, asinh, acosh, atanh -------------------------------------------

def _log_table_cells(c):
    """The table of `_log_table_parts`: 16 cells of m in [3/4, 3/2) by the top 4 bits of its
    mantissa (j 0-7: [1, 3/2) in steps of 1/16, j 8-15: [3/4, 1) in steps of 1/32), r_j about
    1 / (the cell's centre) and t_j = -log(r_j) as hi + lo, except the two cells at 1 (r = 1,
    t = 0: no cancellation near log(1) = 0). float64's r_j have 5 significant bits, so
    m r_j - 1 (|f| < 2^-4, 53 bits of m) is exact in one FMA; float32's are rounded to
    float32 (f's rounding, 2^-24 of f, is below an ulp of the result there)."""
    F = c.F
    r_j = []
    for j in range(16):
        lo, hi = (1 + j / 16, 1 + (j + 1) / 16) if j < 8 else ((1 + j / 16) / 2,
                                                             (1 + (j + 1) / 16) / 2)
        r = 2 / (lo + hi)
        if F is np.float64:
            e = np.floor(np.log2(r))
            r = float(np.round(r * 2.0 ** (4 - e)) * 2.0 ** (e - 4))  # 5 significant bits
        r_j.append(1.0 if j in (0, 15) else float(F(r)))
    t = [-np.log(np.longdouble(r)) for r in r_j]
    t_hi = [float(F(v)) for v in t]
    t_lo = [float(F(v - np.longdouble(h))) for v, h in zip(t, t_hi)]
    return r_j, t_hi, t_lo


def _log_table_parts(c):
    """`parts` (below) from AVX-512's exponent and mantissa (`vector_isa`; subnormals
    included, so `lift` is not needed) and a table (`_log_table_cells`): u = 2^k m, m in
    [3/4, 3/2), 1 + f = m r_j for the r_j of m's cell, and log(u) = k ln2 + t_j + log(1 + f)
    with f in [-1/16, 1/16]: a polynomial of degree 4 (float32; 9 on the full range) or 10
    (float64, where the full range takes a division). The returned t is t_j's high part; its
    low part joins the tail, and so does -f^2/2 (hfsq 0): at most 1/32 of f. A correction
    c_abs is scaled by 2^-k with `vscalef` (a float exponent: `ldexp` would convert k to an
    integer, which cost log1p 40% of its time); `parts_exact` has none."""
    F, I, ONE, HALF, ZERO, PT = c.F, c.I, c.ONE, c.HALF, c.ZERO, c.LOG_T
    r_j, t_hi, t_lo = _log_table_cells(c)
    TAB_R, TAB_T = vector_isa.table(r_j, F), vector_isa.table(t_hi, F)
    TAB_TL = vector_isa.table(t_lo, F)
    f32 = F is np.float32
    getmant = vector_isa.getmant_f32 if f32 else vector_isa.getmant_f64
    getmant_or_nan = vector_isa.getmant_or_nan_f32 if f32 else vector_isa.getmant_or_nan_f64
    getexp = vector_isa.getexp_f32 if f32 else vector_isa.getexp_f64
    scalef = vector_isa.scalef_f32 if f32 else vector_isa.scalef_f64
    SHIFT = I(c.MANT - 4)

    def make_cell(mant):
        @inline
        def cell(u):
            m = mant(u)
            k = getexp(u) + (ONE if m < ONE else ZERO)
            j = np.int32(I(as_int(m) >> SHIFT) & I(15))
            return m, k, j, TAB_R(j)
        return cell
    # (parts_exact's u is a log's own argument: NaN for a set sign bit from the mantissa)
    cell, cell_or_nan = make_cell(getmant), make_cell(getmant_or_nan)

    # (float64's degree-10 polynomial as two chains: the loops are latency-bound, log1p
    # 703 -> 638 us; float32's three terms gain nothing)
    PT2 = split_coeffs(PT, 2)

    @inline
    def tail_poly(f):
        return horner_split2(f, PT2) if not f32 else horner(f, PT)

    @inline
    def tail_of(f, j):
        return fma(f * f, fma(f, tail_poly(f), -HALF), TAB_TL(j))

    @inline
    def parts_table(u, c_abs, lift):
        m, k, j, r = cell(u)
        f = fma(m, r, -ONE) + scalef(c_abs, -k) * r
        return k, TAB_T(j), f, ZERO, tail_of(f, j)

    @inline
    def parts_exact(u, lift):
        m, k, j, r = cell_or_nan(u)
        f = fma(m, r, -ONE)
        return k, TAB_T(j), f, ZERO, tail_of(f, j)

    @inline
    def add_table(t, v):
        return t + v

    return parts_table, parts_exact, add_table


def _log_cells_f32():
    """float32 log(u) = k ln2 + r + r Q_j(r) on AVX-512, as Intel's SVML (NumPy's float32
    log2 and log10) computes it: m = getmant(u) in [3/4, 3/2) (NaN for a set sign bit), k =
    getexp(u) - getexp(m), r = m - 1 (exact), and Q_j a cubic per cell of m (its top four
    mantissa bits: `vecmath_tables.LOG32_C`, fitted by `scripts/fit_vecmath.py --tables`;
    r's coefficient is 1 + Q_j(0), stored as Q_j(0), which float32 holds to 2^-24 of
    itself where 1 + Q_j(0) would be rounded to 2^-24 of 1: log 1.34 -> ? ulp). Four table
    lookups and four FMAs, where `_log_table_parts` takes three lookups, eight arithmetic
    steps and an exponent fix-up. Returns `cell(u)` -> (k, log(m)); k is infinite or NaN
    where u is (`vgetexp`), -inf at 0 (tested by the caller); and `cell_plus(u, c_abs)`, the
    same for u + c_abs (log1p)."""
    from .vecmath_tables import LOG32_C
    F = np.float32
    C1, C2, C3, C4 = (vector_isa.table([row[i] for row in LOG32_C], F) for i in range(4))
    ONE, SHIFT = F(1), np.int32(19)

    @inline
    def split(u):
        """(m, k, j): u = 2^k m, and m's cell."""
        m = vector_isa.getmant_or_nan_f32(u)
        k = vector_isa.getexp_f32(u) - vector_isa.getexp_f32(m)
        return m, k, np.int32(as_int(m) >> SHIFT)  # (the tables keep j's low four bits)

    @inline
    def log1r(j, r):  # log(1 + r) in cell j
        return fma(fma(fma(fma(C4(j), r, C3(j)), r, C2(j)), r, C1(j)), r, r)

    @inline
    def cell(u):
        m, k, j = split(u)
        return k, log1r(j, m - ONE)

    @inline
    def cell_plus(u, c_abs):
        """`cell` of u + c_abs, c_abs below u's last bit (log1p's rounding of 1 + x): it
        joins r after scaling by 2^-k, where r has room for it (one rounding)."""
        m, k, j = split(u)
        return k, log1r(j, (m - ONE) + vector_isa.scalef_f32(c_abs, -k))
    return cell, cell_plus


def _make_log_family(c, scale):
    F, I, P, PF, MANT, BIAS = c.F, c.I, c.LOG, c.LOG_F, c.MANT, c.BIAS
    ZERO, HALF, ONE, TWO, INF, NAN = c.ZERO, c.HALF, c.ONE, c.TWO, c.INF, c.NAN
    TINY, SUB_SCALE, SUB_K = c.TINY, c.SUB_SCALE, c.SUB_K
    OFFSET, SQRTH_BITS, MANT_MASK = I(c.ONE_BITS - c.SQRTH_BITS), c.SQRTH_BITS, c.MANT_MASK
    LN2_HI, LN2_LO, LOG2E_HI, LOG2E_LO = c.LN2_HI, c.LN2_LO, c.LOG2E_HI, c.LOG2E_LO
    LOG10E, L10_HI, L10_LO, HUGE = c.LOG10E, c.LOG10_2_HI, c.LOG10_2_LO, c.HUGE
    P2 = split_coeffs(P, 2)  # (two half-length Horner chains: the loops are latency-bound)
    K_FINITE = F(4096)  # above the exponent of any finite x (log_scaled)
    PF2 = None if PF is None else split_coeffs(PF, 2)

    @inline
    def tail_atanh(f, hfsq):
        """fdlibm's identity: s = f / (2 + f), log(1 + f) = 2 atanh(s)
        = f - f^2/2 + s (f^2/2 + R(s^2)), R fitted, |s| < 0.1716."""
        s = f / (TWO + f)
        z = s * s
        return s * (hfsq + z * horner_split2(z, P2))

    @inline
    def tail_poly(f, hfsq):
        """log(1 + f) - (f - f^2/2) = f^3 P(f), P fitted: no division (float32)."""
        return f * (f * f) * horner_split2(f, PF2)

    tail_of = tail_atanh if PF is None else tail_poly

    @inline
    def parts(u, c_abs, lift):
        """(k, t, f, hfsq, tail) with u + c_abs = 2^k (1 + f) and log(1 + f) = f - hfsq + tail
        (t = 0: `parts_table` has a table term). k and 1 + f in [sqrt(1/2), sqrt(2)) come from
        the bits: adding ONE - sqrt(1/2) to the bits carries into the exponent exactly when
        the mantissa is >= sqrt(1/2) (so k = exponent + 1 there), and the mantissa bits,
        re-based at sqrt(1/2), give 1 + f (exact, so f = m - 1 is exact). Subnormal u is
        first lifted by 2^(mant+2) (`lift`: a constant, False where u cannot be subnormal,
        which drops those steps). c_abs, a correction below u's last bit (log1p's rounding
        of 1 + x), joins f after scaling by 2^-k, where f has room for it. The tail:
        `tail_of`."""
        sub = (u < TINY) & lift
        us = u * SUB_SCALE if sub else u
        # (I(...) around integer steps: Numba widens int32 arithmetic to int64, which
        # would double the vector integer work and convert k from int64)
        ix = I(as_int(us) + OFFSET)
        k = I(I((ix >> MANT) - BIAS) - (SUB_K if sub else I(0)))
        m = as_float(I((ix & MANT_MASK) + SQRTH_BITS))
        k32 = np.int32(k)
        f = (m - ONE) + scale(c_abs, -k32)
        hfsq = HALF * f * f
        return F(k), ZERO, f, hfsq, tail_of(f, hfsq)

    @inline
    def parts_exact(u, lift):
        return parts(u, ZERO, lift)

    @inline
    def no_table(t, v):
        return v

    @inline
    def specials(x, y, lo):
        """log-like results: NaN below the domain's bound `lo`, -inf at it, inf at inf."""
        y = y if x > lo else (-INF if x == lo else NAN)
        return y if x < INF else x  # inf stays inf, NaN stays NaN

    @inline
    def zero_special(x, y, lo):
        """`specials` of a log by the table (lo = 0): its mantissa makes the NaN of a
        negative x (and of -0.0, whose log is -inf like +0.0's: selected), its exponent the
        infinities and NaN; two instructions where `specials` takes six."""
        return -INF if x == ZERO else y

    log_parts, log_parts_exact, with_table = parts, parts_exact, no_table
    exact_specials = specials
    if c.LOG_T is not None and vector_isa.available():
        log_parts, log_parts_exact, with_table = _log_table_parts(c)
        exact_specials = zero_special

    @inline
    def log_of(u, c_abs, kadd, lift):
        """log(u + c_abs) + kadd ln2, with k ln2 in two pieces (k * LN2_HI exact); `lift`
        as in `parts`."""
        k, t, f, hfsq, tail = log_parts(u, c_abs, lift)
        k = k + kadd
        return fma(k, LN2_HI, with_table(t, ((tail + k * LN2_LO) - hfsq) + f))

    @inline
    def log_exact(u, kadd, lift):
        """log_of(u, 0, kadd, lift): with the table, no correction to scale (an opaque
        `vscalef` of 0 would still run)."""
        k, t, f, hfsq, tail = log_parts_exact(u, lift)
        k = k + kadd
        return fma(k, LN2_HI, with_table(t, ((tail + k * LN2_LO) - hfsq) + f))

    if F is np.float32 and vector_isa.available():
        log_cell, log_cell_plus = _log_cells_f32()

        @inline
        def log_exact(u, kadd, lift):  # noqa: F811  (the cells: `_log_cells_f32`)
            k, v = log_cell(u)
            k = k + kadd
            return fma(k, LN2_HI, fma(k, LN2_LO, v))

        @inline
        def log_plain(u):  # (log_exact with no kadd: k + 0.0 would stay an instruction)
            k, v = log_cell(u)
            return fma(k, LN2_HI, fma(k, LN2_LO, v))

        log_scaled_parts = log_cell

        @inline
        def log_plus(u, c_abs):  # log_of(u, c_abs, 0, False) by the cells
            k, v = log_cell_plus(u, c_abs)
            return fma(k, LN2_HI, fma(k, LN2_LO, v))
    else:
        @inline
        def log_plain(u):
            return log_exact(u, ZERO, True)

        @inline
        def log_plus(u, c_abs):
            return log_of(u, c_abs, ZERO, False)

        @inline
        def log_scaled_parts(x):
            k, t, f, hfsq, tail = log_parts_exact(x, True)
            return k, with_table(t, (tail - hfsq) + f)

    @inline
    def one_plus(t):
        """(u, c_abs): u = fl(1 + t) and its rounding error c_abs = (1 + t) - u, exactly
        (Fast2Sum: the larger of 1 and t first)."""
        u = ONE + t
        return u, (ONE - (u - t)) if t >= ONE else (t - (u - ONE))

    @inline
    def log(x):
        return exact_specials(x, log_plain(x), ZERO)

    @inline
    def log1p(x):
        u, cr = one_plus(x)
        y = log_plus(u, cr)  # (fl(1 + x) is 0 or at least 2^-53: never subnormal)
        y = x if x == ZERO else y  # -0.0
        return specials(x, y, -ONE)

    @inline
    def log2(x):
        """k + log(1 + f) log2(e): exact for powers of two (log(1) = 0); log2(e) in two
        pieces so the product keeps the precision of log(1 + f)."""
        k, v = log_scaled_parts(x)
        return exact_specials(x, fma(v, LOG2E_HI, fma(v, LOG2E_LO, k)), ZERO)

    @inline
    def log10(x):
        """k log10(2) + log(1 + f) log10(e), log10(2) in two pieces (k * L10_HI exact)."""
        k, v = log_scaled_parts(x)
        return exact_specials(x, fma(k, L10_HI, fma(v, LOG10E, k * L10_LO)), ZERO)

    @inline
    def log_scaled(x, s_hi, s_lo, a_hi, a_lo):
        """log(x) s for a constant s > 0 (`log_div_const`, `log_mul_const` below): k a +
        log(1 + f) s as log2 and log10 take it, with s = s_hi + s_lo and a = ln2 s = a_hi +
        a_lo (k a_hi exact). A log then a division by log(2) (`jnp.log2`) costs a vector
        division more than a log; this costs three FMAs. (On AVX-512 `vgetexp` makes k
        infinite for an infinite x: k a_lo takes k clamped, where a_lo's sign could make
        inf - inf; a NaN k stays NaN in k a_hi.)"""
        k, v = log_scaled_parts(x)
        k_lo = k if k < K_FINITE else K_FINITE
        return exact_specials(x, fma(k, a_hi, fma(v, s_hi, fma(v, s_lo, k_lo * a_lo))), ZERO)

    @inline
    def asinh(x):
        """sign(x) log(|x| + sqrt(x^2 + 1)), as one log with a chosen argument:
        |x| <= 2: log1p(a + a^2 / (1 + sqrt(1 + a^2)))  (no cancellation near 0);
        2 < |x| <= HUGE: log(2a + 1 / (a + sqrt(a^2 + 1)));  beyond: log(a) + ln2."""
        a = abs(x)
        small, huge = a <= TWO, a > HUGE
        sq = np.sqrt(fma(a, a, ONE) if not huge else ONE)
        d = (a * a if small else ONE) / (ONE + sq if small else a + sq)  # one division
        u, cr = one_plus(a + d)
        u = u if small else (a if huge else a + a + d)
        y = log_of(u, cr if small else ZERO, ONE if huge else ZERO, False)  # (u >= 1)
        y = y if (a == a) & (a < INF) & (a != ZERO) else a
        return np.copysign(y, x)

    @inline
    def acosh(x):
        """log(x + sqrt(x^2 - 1)) as one log1p with one square root and no division:
        log1p(t + sqrt(t (t + 2))), t = x - 1 exact (both terms positive: no cancellation,
        and for x near 1 the small argument keeps its precision); beyond HUGE (where
        t^2 could overflow): log(x) + ln2."""
        huge = x > HUGE
        t = x - ONE
        u, cr = one_plus(t + np.sqrt(fma(t, t, t + t)))
        y = log_of(x if huge else u, ZERO if huge else cr, ONE if huge else ZERO, False)
        y = y if x > ONE else (ZERO if x == ONE else NAN)
        return y if x < INF else x

    @inline
    def atanh(x):
        """sign(x) log1p(2a / (1 - a)) / 2, written fdlibm's way below a = 1/2:
        log1p(2a + 2a a / (1 - a)) (the small term separate); one division for both."""
        a = abs(x)
        t = a + a
        small = a < HALF
        d = (t * a if small else t) / (ONE - a)
        u, cr = one_plus(t + d if small else d)
        y = HALF * log_of(u, cr, ZERO, False)  # (u >= 1)
        y = y if a < ONE else (INF if a == ONE else NAN)
        y = y if a != ZERO else a
        return np.copysign(y, x)

    if c.ATANH is None:
        return SimpleNamespace(log=log, log1p=log1p, log2=log2, log10=log10, asinh=asinh,
                               acosh=acosh, atanh=atanh, log_of=log_of,
                               log_scaled=log_scaled)
    PAT, PAS, ASINH_POLY_MAX = c.ATANH, c.ASINH_SMALL, F(0.53)

    @inline
    def atanh_f32(x):
        """float32: a + a^3 P(a^2) below a = 1/2 (fitted), above log((1 + a) / (1 - a)) / 2
        by a plain log: no log1p correction, since the quotient is at least 3 (its rounding,
        about 2^-24 relative, is under an ulp of the result, at least 0.549). The
        correction terms, one_plus and the division of the small form are what float64
        still needs."""
        a = abs(x)
        z = a * a
        p = fma(a * z, horner(z, PAT), a)
        y = HALF * log_exact((ONE + a) / (ONE - a), ZERO, False)  # (never subnormal)
        y = p if a < HALF else y
        y = y if a < ONE else (INF if a == ONE else NAN)
        return np.copysign(y, x)

    @inline
    def asinh_f32(x):
        """float32: a + a^3 P(a^2) below a = 0.53 (fitted), above log(a + sqrt(a^2 + 1))
        by a plain log without a division: the argument is at least 1.6 and the result at
        least 1/2, so the argument's rounding (about 2^-24 relative) is under an ulp of
        the result; beyond HUGE log(a) + ln2."""
        a = abs(x)
        z = a * a
        p = fma(a * z, horner(z, PAS), a)
        huge = a > HUGE
        u = a if huge else a + np.sqrt(fma(a, a, ONE))
        y = log_exact(u, ONE if huge else ZERO, False)  # (u >= 1)
        y = p if a < ASINH_POLY_MAX else y
        y = y if a < INF else a  # inf, and NaN
        return np.copysign(y, x)

    PAC = c.ACOSH_SMALL

    @inline
    def acosh_f32(x):
        """float32: sqrt(2t) (1 + t P(t)) below x = 2 (t = x - 1 exact; fitted), above
        log(x + sqrt(x^2 - 1)) by a plain log without a division (the argument is at least
        3.7: its rounding is under an ulp of the result); beyond HUGE log(x) + ln2. One
        square root serves both: of 2t below 2, of x^2 - 1 above (both forms are computed and
        one selected, and a vector square root costs what a dozen FMAs do)."""
        t = x - ONE
        small = x < TWO
        s = np.sqrt((t + t) if small else fma(x, x, -ONE))
        p = s * fma(t, horner(t, PAC), ONE)
        huge = x > HUGE
        u = x if huge else x + s
        y = log_exact(u, ONE if huge else ZERO, False)  # (u >= 1)
        y = p if small else y
        y = y if x >= ONE else NAN
        return y if x < INF else x  # inf, and NaN

    return SimpleNamespace(log=log, log1p=log1p, log2=log2, log10=log10, asinh=asinh_f32,
                           acosh=acosh_f32, atanh=atanh_f32, log_of=log_of,
                           log_scaled=log_scaled)


# --- cbrt, pow --------------------------------------------------------------------------------

def _make_cbrt(c, scale):
    F, I, MANT, BIAS, ONE, HALF = c.F, c.I, c.MANT, c.BIAS, c.ONE, c.HALF
    TINY, MASK, ONE_BITS = c.TINY, c.MANT_MASK, c.ONE_BITS
    START = c.RCBRT  # m^(-1/3) on [1, 2]: 2^-14.5 (float32), 2^-19.9 (float64) relative
    THIRD = F(1 / 3)
    # 2^(-k/3) for k = 0, 1, 2 as a quadratic in k (exact at those points up to rounding)
    R1, R2 = 2.0 ** (-1 / 3), 2.0 ** (-2 / 3)
    RK = (F(1.0), F(2 * R1 - R2 / 2 - 1.5), F((R2 - 2 * R1 + 1) / 2))
    SUB_SCALE, SUB_Q = F(2.0 ** (3 * 18)), F(18)  # a multiple of 3: exact cbrt
    U = np.uint32 if F is np.float32 else np.uint64
    MAX_BITS = I(np.array(np.finfo(F).max, F).view(I))
    STEPS = 0 if F is np.float32 else 1

    @inline
    def split_bits(a):
        sub = a < TINY
        ix = as_int(a * SUB_SCALE if sub else a)
        # (the shift converted directly: Numba would widen an int32 subtraction to int64)
        e = F(ix >> MANT) - (F(BIAS) + (SUB_Q * F(3) if sub else F(0)))
        return e, as_float(I((ix & MASK) | ONE_BITS))

    @inline
    def scale_int(t, q):
        return scale(t, np.int32(q))

    split, scale_by = split_bits, scale_int
    if vector_isa.available():
        f32 = F is np.float32
        getexp = vector_isa.getexp_f32 if f32 else vector_isa.getexp_f64
        getmant1 = vector_isa.getmant1_f32 if f32 else vector_isa.getmant1_f64
        scale_by = vector_isa.scalef_f32 if f32 else vector_isa.scalef_f64

        @inline
        def split_isa(a):
            return getexp(a), getmant1(a)
        split = split_isa

    @inline
    def cbrt(x):
        """|x| = 2^(3q + k) m, m in [1, 2), k in {0, 1, 2}, v = 2^k m, with floats only
        (q = floor((e + 1/2) / 3) is exact for the small integer e; 2^k = (k^2 + k + 2)/2
        exactly). No division: r ~ v^(-1/3) from a polynomial in m times 2^(-k/3), refined
        (float64: 2^-19.9 to 2^-39) by r += r (1 - v r^3) / 3 (quadratic, division-free), then
        t = v r^2 and a last Newton step t - (t^3 - v) r^2 / 3 (t^3 - v by an FMA on the
        rounded t^2: its error, t^3 times 2^-mant, moves the result by a third of that, a
        sixth of an ulp; measured 0.88 ulp float32, 0.73 float64). Scaled by 2^q. e and m
        from `split`: the bits (subnormals lifted by 2^54 first), or AVX-512's vgetexp and
        vgetmant (`vector_isa`), which also scale by 2^q without converting q to an
        integer: float64 cbrt measured 803 -> 636 us that way."""
        a = abs(x)
        e, m = split(a)
        q = np.floor((e + HALF) * THIRD)
        k = e - F(3) * q
        v = m * (HALF * fma(k, k + ONE, F(2)))
        r = horner(m, START) * horner(k, RK)
        for _ in range(STEPS):
            r = fma(r * fma(-v, r * r * r, ONE), THIRD, r)
        r2 = r * r
        t = v * r2
        t = fma(-fma(t * t, t, -v), r2 * THIRD, t)
        y = scale_by(t, q)
        # 0, inf and NaN as given; finite nonzero <=> bits - 1 below the bits of the largest
        # float, unsigned (one compare: LLVM would make two range tests of a < inf, a != 0)
        finite_nonzero = U(as_int(a) - I(1)) < U(MAX_BITS)
        y = y if finite_nonzero else a
        return np.copysign(y, x)

    return cbrt


def _make_tanh_table(c):
    """float32 tanh by cells (vector_isa's tables, as NumPy's SVML-derived loop does): |x|'s
    exponent and top two mantissa bits pick one of 32 cells (`vecmath_tables.TANH32_*`:
    quarter octaves from 5/64 to 16, and [0, 5/64) whose polynomial is r + r^2 Q(r), exact
    for tiny and subnormal x), and a degree-5 polynomial in r = |x| - (the cell's left edge,
    exact) with that cell's float32 coefficients (2^-24.6 relative, fitted so that no cell's
    error leans one way: `fit_cell`) gives tanh|x|: six lookups and
    five FMAs, where `tanh` of the exp family takes an expm1 and a division."""
    from .vecmath_tables import TANH32_C, TANH32_D
    I, F, ONE, TMAX = c.I, c.F, c.ONE, c.TANH_MAX
    D = vector_isa.table(TANH32_D, F)
    C0, C1, C2, C3, C4, C5 = (vector_isa.table(col, F) for col in zip(*TANH32_C))
    # the cell: |x|'s exponent and top two mantissa bits, counted from those of 1/16
    SHIFT, BASE = I(c.MANT - 2), I((c.BIAS - 4) << 2)

    @inline
    def tanh(x):
        a = abs(x)
        j = np.int32(I(as_int(a) >> SHIFT) - BASE)
        j = j if j > np.int32(0) else np.int32(0)  # (above 31 it wraps: a > TMAX there)
        r = a - D(j)
        y = fma(fma(fma(fma(fma(C5(j), r, C4(j)), r, C3(j)), r, C2(j)), r, C1(j)), r, C0(j))
        y = y if a <= TMAX else (ONE if a == a else a)  # 1, or NaN
        return np.copysign(y, x)

    return tanh


def _make_cbrt_table(c):
    """float32 cbrt by cells: |x| = 2^(3q + k) m with AVX-512's exponent and mantissa (m in
    [1, 2), subnormals included), m's top three mantissa bits pick r_j, about 1 / (the
    cell's centre), and the cell k * 8 + j (of 24) cbrt(2^k / r_j) as hi + lo; then
    cbrt(2^k m) = cbrt(2^k / r_j) cbrt(1 + t), t = m r_j - 1 (|t| < 0.06), by a degree-4
    polynomial 1 + t P(t) shared by every cell (2^-29.3 relative), the table's lo part
    added before the one rounding that matters; scaled by 2^q with vscalef. No Newton step,
    no division: 175 us per 1M values where the fitted polynomial per cell (five
    coefficient tables) took 200, and 0.56 ulp where it gave 0.98."""
    F, I = c.F, c.I
    L = np.longdouble
    ONE, HALF, THIRD, MINUS_THREE = c.ONE, c.HALF, F(1 / 3), F(-3)
    r_j = [float(F(1 / (1 + (j + 0.5) / 8))) for j in range(8)]
    cell = [np.cbrt(L(2) ** k / L(r)) for k in range(3) for r in r_j] + [L(1)] * 8
    R = vector_isa.table(r_j, F)
    T_HI = vector_isa.table([float(F(v)) for v in cell], F)
    T_LO = vector_isa.table([float(F(v - L(F(v)))) for v in cell], F)
    P = tuple(F(v) for v in (0.3333332147576142, -0.11111095023941236, 0.0618622595899875,
                             -0.04127965883374841))
    getexp, getmant1, scalef = (vector_isa.getexp_f32, vector_isa.getmant1_f32,
                                vector_isa.scalef_f32)
    U, MAX_BITS = np.uint32, I(np.array(np.finfo(F).max, F).view(I))
    SHIFT = I(c.MANT - 3)  # m's top three mantissa bits

    @inline
    def cbrt(x):
        a = abs(x)
        e = getexp(a)
        m = getmant1(a)
        q = np.floor((e + HALF) * THIRD)  # (exact for the small integer e, as in `cbrt`)
        k = np.int32(fma(q, MINUS_THREE, e))  # 0, 1 or 2
        j = np.int32(I(as_int(m) >> SHIFT) & I(7))
        t = fma(m, R(j), -ONE)
        i = np.int32(k * np.int32(8) + j)
        hi = T_HI(i)
        y = scalef(fma(hi * t, horner(t, P), T_LO(i)) + hi, q)
        finite_nonzero = U(as_int(a) - I(1)) < U(MAX_BITS)  # (as in `cbrt`)
        y = y if finite_nonzero else a
        return np.copysign(y, x)

    return cbrt


# 2^r = 1 + r E(r) for |r| <= 1/32 (`scripts/fit_vecmath.py`: POW32T_EXP2, POW64T_EXP2), the
# polynomial of `_make_exp2_by_table`, which pow and exp2 use on AVX-512
_POW32T_EXP2 = (0.6931471846155055, 0.24023484294634678, 0.05550006503728344)
_POW64T_EXP2 = (0.6931471805599453, 0.24022650695910094, 0.05550410866482089,
                0.009618129106205962, 0.001333355816261082, 0.0001540377979194216,
                1.5251824021395354e-05)


def _make_exp2_by_table(F, coeffs, table, scalef):
    """2^(zh + zl) for |zh| <= pow's clamp and |zl| tiny beside it, by a table, for float32
    and float64 pow on AVX-512: 2^z = 2^(n/16) 2^r, n = rint(16 zh) by adding 1.5 * 2^mant
    (its low bits index a 16-entry table of 2^(j/16) as hi + lo), r = zh - n/16 (exact)
    + zl in [-1/32, 1/32] by 1 + r E(r) (E: `coeffs`), scaled by 2^floor(n/16) (`scalef`
    of the float n/16: no conversion to an integer). `table(values)` makes a lookup."""
    L = np.longdouble
    e2 = [L(2) ** (L(j) / 16) for j in range(16)]
    e2_hi = [float(F(v)) for v in e2]
    E_HI, E_LO = table(e2_hi), table([float(F(v - L(h))) for v, h in zip(e2, e2_hi)])
    E = tuple(F(v) for v in coeffs)
    SHIFTER = F(1.5 * 2.0 ** (23 if F is np.float32 else 52))
    SIXTEEN, SIXTEENTH = F(16), F(1 / 16)

    @inline
    def exp2(zh, zl):
        s = fma(zh, SIXTEEN, SHIFTER)
        n = s - SHIFTER
        r = fma(n, -SIXTEENTH, zh) + zl
        j = np.int32(as_int(s))
        th = E_HI(j)
        return scalef(fma(th, r * horner(r, E), E_LO(j)) + th, n * SIXTEENTH)
    return exp2


def _make_exp2_table(c):
    """exp2 on AVX-512: pow's `_make_exp2_by_table` of x, clamped to +-EXP2_CLAMP, where
    2^x is 0 or inf (a NaN passes): a lookup and a degree-3 polynomial, scaled with
    vscalef by the float n/16 (it takes the floor itself, so no conversion to an integer
    and none back). The exp family's `exp2` takes 2^r = e^(r ln 2) with ln 2 in two
    pieces and expm1's polynomial of degree 6 (float64 12), and converts n to an integer for
    `scale`: the loop's instructions between a vector's load and its store, float32 22 -> 18,
    float64 29 -> 22; at most 0.63 ulp where that one measured 1.05 and 1.11."""
    F = c.F
    coeffs = _POW32T_EXP2 if F is np.float32 else _POW64T_EXP2
    scalef = vector_isa.scalef_f32 if F is np.float32 else vector_isa.scalef_f64
    exp2_pair = _make_exp2_by_table(F, coeffs, lambda values: vector_isa.table(values, F),
                                    scalef)
    LO, HI, MINUS_ZERO = c.EXP2_LO, c.EXP2_HI, c.F(-0.0)  # (r + -0.0 folds to r; + 0.0 not)

    @inline
    def exp2(x):
        xc = LO if x < LO else x  # (the compares keep a NaN)
        xc = HI if xc > HI else xc
        return exp2_pair(xc, MINUS_ZERO)

    return exp2


def _make_exp_table(c):
    """float64 exp on AVX-512: 2^(x log2 e) by pow's `_make_exp2_by_table`, with x log2 e as
    a pair (the product's rounding error by an FMA, log2 e in two pieces), x clamped to
    [EXP_LO, EXP_HI] where e^x is 0 or inf (a NaN passes): a lookup and a degree-7
    polynomial on [-1/32, 1/32], where the exp family's takes degree 12 on [-ln2/2, ln2/2].
    64K values 32.8-34.3 -> 29.5-30.6 us (NumPy 33-36); 0.94 -> 0.62 ulp."""
    F = c.F
    exp2_pair = _make_exp2_by_table(F, _POW64T_EXP2, lambda values: vector_isa.table(values, F),
                                    vector_isa.scalef_f64)
    LO, HI, L2E, L2E_LO = c.EXP_LO, c.EXP_HI, F(c.LOG2E_HI), F(c.LOG2E_LO)
    ZERO, ONE = c.ZERO, c.ONE

    @inline
    def exp_fast(x):
        """exp where `exp_special` is false (no clamp): the same bits as `exp` there."""
        zh = x * L2E
        return exp2_pair(zh, fma(x, L2E_LO, fma(x, L2E, -zh)))

    @inline
    def exp(x):
        xc = LO if x < LO else x  # (the compares keep a NaN)
        return exp_fast(HI if xc > HI else xc)

    # logistic's e^-|x| by this exp too, so that its fast variant keeps its bits
    @inline
    def logistic(x):
        e = exp(-abs(x))
        return (ONE if x >= ZERO else e) / (ONE + e)

    @inline
    def logistic_fast(x):
        e = exp_fast(-abs(x))
        return (ONE if x >= ZERO else e) / (ONE + e)
    return SimpleNamespace(exp=exp, exp_fast=exp_fast, logistic=logistic,
                           logistic_fast=logistic_fast)


def _build(c):
    scale = _make_scale(c)
    e = _make_exp_family(c, scale)
    lg = _make_log_family(c, scale)
    trig = TRIG_F32 if c is F32 else TRIG_F64
    cbrt = _make_cbrt(c, scale)
    if c is F32 and vector_isa.available():
        e.tanh, cbrt = _make_tanh_table(c), _make_cbrt_table(c)
    if vector_isa.available():
        e.exp2 = _make_exp2_table(c)
    if vector_isa.available() and c is F64:
        vars(e).update(vars(_make_exp_table(c)))
    if c is F32:
        e.cosh = e.cosh_by_exp
    return SimpleNamespace(scale=scale, **vars(e), **vars(lg), **vars(trig),
                           **vars(make_inverse_trig(c)), cbrt=cbrt,
                           **vars(make_erf_family(c, e.parts, scale, e.exp, e.exp_fast,
                                                  lg.log)))


_V32 = _build(F32)
_V64 = _build(F64)

# the kernels' names: rt.tanh_f32, rt.log_f64, ...
FUNCTIONS = ("exp", "expm1", "exp2", "logistic", "tanh", "sinh", "cosh",
             "log", "log1p", "log2", "log10", "asinh", "acosh", "atanh", "sin", "cos", "tan",
             "atan", "asin", "acos", "atan2", "cbrt", "erf", "erfc", "erf_inv")
__all__ = []
for _name in FUNCTIONS:
    globals()[f"{_name}_f32"] = getattr(_V32, _name)
    globals()[f"{_name}_f64"] = getattr(_V64, _name)
    __all__ += [f"{_name}_f32", f"{_name}_f64"]
__all__ += ["pow_f32", "pow_f64", "pow_f32_fast", "pow_f64_fast", "pow_special_f32",
            "pow_special_f64"]
for _name in ("sin", "cos", "tan"):
    globals()[f"{_name}_f32_fast"] = getattr(TRIG_F32_FAST, _name)
    globals()[f"{_name}_f64_fast"] = getattr(TRIG_F64_FAST, _name)
    __all__ += [f"{_name}_f32_fast", f"{_name}_f64_fast"]
atan2_f32_fast, atan2_f64_fast = _V32.atan2_fast, _V64.atan2_fast
atan2_special_f32, atan2_special_f64 = _V32.atan2_special, _V64.atan2_special
__all__ += ["atan2_f32_fast", "atan2_f64_fast", "atan2_special_f32", "atan2_special_f64"]
__all__ += ["trig_big_f32", "trig_big_f64"]
exp_f32_fast, exp_f64_fast = _V32.exp_fast, _V64.exp_fast
logistic_f32_fast, logistic_f64_fast = _V32.logistic_fast, _V64.logistic_fast
exp_special_f32, exp_special_f64 = _V32.exp_special, _V64.exp_special
__all__ += ["exp_f32_fast", "exp_f64_fast", "logistic_f32_fast", "logistic_f64_fast",
            "exp_special_f32", "exp_special_f64"]


# --- division by a constant ------------------------------------------------------------------
# x / c for a constant c (rules.py `_div`): a vector division costs 8-16 cycles of the divider
# per AVX-512 vector, 3 instructions the FMA ports run in one or two. The fast variant takes
# q = x (1/c), the remainder e = x - q c (exact, by an FMA) and q + e (1/c) rounded once:
# Markstein's theorem (1/c rounded to nearest, q within an ulp of x/c) makes that x / c rounded
# to nearest, for every x whose quotient and remainder are normal numbers. The test sends
# blocks with a dividend outside [2^-R, 2^R] (R: rules.DIV_CONST_RANGE; NaN, infinities,
# tiny values) to the division; zero, whose sign the correction would lose, is selected.
# tests/test_vecmath.py checks every float32 significand against NumPy's division.

def _make_div_const(F, R):
    ZERO, ONE, LO, HI = F(0), F(1), F(2.0 ** -R), F(2.0 ** R)

    @inline
    def div_const(x, c):
        return x / c

    @inline
    def div_const_fast(x, c):
        r = ONE / c  # (a constant: LLVM computes it once)
        q = x * r
        e = fma(-q, c, x)
        return q if x == ZERO else fma(e, r, q)

    @inline
    def div_const_special(x, c):
        a = abs(x)
        return not ((a >= LO) & (a <= HI)) and x != ZERO

    return div_const, div_const_fast, div_const_special


# --- a log times or over a constant --------------------------------------------------------
# log(x) / c and log(x) * c for a constant c > 0 (rules.py `_scaled_log`: `jnp.log2` is
# log(x) / log(2), `jnp.log10` log(x) * log10(e), and any base's log takes the same form) as
# one log with the scale in its last steps (`log_scaled`). The scale's pieces come from c in
# the kernel (LLVM computes them once, before the loop), so the kernel's text does not depend
# on c's value and one compiled kernel serves every such constant: float32's from float64,
# float64's as double-words (1/c by an FMA remainder, ln2 in two pieces).

_LN2_PAIR = (np.float64(0.6931471805599453), np.float64(2.3190468138462996e-17))


def _make_log_scaled_f32(log_scaled):
    LN2 = _LN2_PAIR[0]
    CLEAR = np.int32(-4096)  # a_hi keeps 12 bits: k a_hi is exact for |k| < 2^12

    @inline
    def by(x, s):
        s_hi = np.float32(s)
        a = LN2 * s
        a_hi = as_float(np.int32(as_int(np.float32(a)) & CLEAR))
        return log_scaled(x, s_hi, np.float32(s - np.float64(s_hi)), a_hi,
                          np.float32(a - np.float64(a_hi)))

    @inline
    def log_div_const(x, c):
        return by(x, np.float64(1.0) / np.float64(c))

    @inline
    def log_mul_const(x, c):
        return by(x, np.float64(c))

    return log_div_const, log_mul_const


def _make_log_scaled_f64(log_scaled):
    L_HI, L_LO = _LN2_PAIR
    ONE, ZERO = np.float64(1.0), np.float64(0.0)
    CLEAR = np.int64(-4096)  # a_hi keeps 41 bits: k a_hi is exact for |k| < 2^12

    @inline
    def by(x, s_hi, s_lo):
        p = L_HI * s_hi
        lo = fma(L_HI, s_hi, -p) + fma(L_HI, s_lo, L_LO * s_hi)
        a_hi = as_float(as_int(p) & CLEAR)
        return log_scaled(x, s_hi, s_lo, a_hi, (p - a_hi) + lo)

    @inline
    def log_div_const(x, c):
        s = ONE / c
        return by(x, s, fma(-s, c, ONE) / c)

    @inline
    def log_mul_const(x, c):
        return by(x, c, ZERO)

    return log_div_const, log_mul_const


log_div_const_f32, log_mul_const_f32 = _make_log_scaled_f32(_V32.log_scaled)
log_div_const_f64, log_mul_const_f64 = _make_log_scaled_f64(_V64.log_scaled)
__all__ += ["log_div_const_f32", "log_mul_const_f32", "log_div_const_f64", "log_mul_const_f64"]

div_const_f32, div_const_f32_fast, div_const_special_f32 = _make_div_const(np.float32, 60)
div_const_f64, div_const_f64_fast, div_const_special_f64 = _make_div_const(np.float64, 500)
__all__ += ["div_const_f32", "div_const_f32_fast", "div_const_special_f32",
            "div_const_f64", "div_const_f64_fast", "div_const_special_f64"]


# --- float32 pow -----------------------------------------------------------------------------
# x^y = 2^(y log2|x|) in float32 pairs (hi + lo), 16 lanes per AVX-512 vector: |y log2 x| reaches
# 150 before the result is 0 or inf, and each 2^-24 of absolute error in it is 0.7 ulp of the
# result, so log2|x| needs about 2^-31 relative, more than one float32 holds. (It was computed
# in float64 before: 8 lanes and twice the instructions per value, 1.5x slower.) On AVX-512 by
# tables (_make_pow32_table), elsewhere by the portable functions below. pow_f32_fast leaves
# out the special cases; elementwise kernels run it blockwise where pow_special_f32 is false
# for every value (render.py's guarded loops).
# atanh(s) = s + s^3/3 + s^5 P(s^2) for |s| <= 3 - 2 sqrt(2) (2^-36.6), 2^r = 1 + r E(r) on
# [-1/2, 1/2] (2^-28.8); coefficients: `scripts/fit_vecmath.py`.
_POW32_ATANH = (0.20000080800139458, 0.1427307087660384, 0.1172149598642827)
_POW32_EXP2 = (0.6931472056067098, 0.24022648459584056, 0.055503289703146344,
               0.009618373449372206, 0.0013399874628700634, 0.00015370690830756833)
_POW32_ATANH_F = tuple(np.float32(v) for v in _POW32_ATANH)
_POW32_EXP2_2 = split_coeffs(tuple(np.float32(v) for v in _POW32_EXP2), 2)
_I32, _F32 = np.int32, np.float32
_OFFSET32 = _I32(F32.ONE_BITS - F32.SQRTH_BITS)
_SQRTH32, _MANT_MASK32, _TINY32, _LIFT32 = F32.SQRTH_BITS, F32.MANT_MASK, F32.TINY, _F32(2.0 ** 25)
_THIRD32 = _F32(1 / 3)
# 2 / ln 2 = _C32_HI + _C32_LO
_C32_HI = _F32(2 / np.log(2))
_C32_LO = _F32(2 / np.log(np.longdouble(2)) - np.longdouble(_C32_HI))
_scale32 = _V32.scale
_POW32_CLAMP = _F32(200.0)  # |y log2 x| beyond it: 0 or inf


def _make_exp2_portable(coeffs2, scale, one):
    """2^(zh + zl) without a table: 2^n 2^r, n = rint(zh), r = (zh - n) + zl in [-1/2, 1/2]
    by 1 + r P(r) (`coeffs2`: P split for two Horner chains), scaled by `scale`."""
    @inline
    def exp2(zh, zl):
        n = np.rint(zh)
        r = (zh - n) + zl
        return scale(fma(r, horner_split2(r, coeffs2), one), np.int32(n))
    return exp2


@inline
def _log2_pair32(a):
    """log2(a) for finite a > 0 as a float32 pair (hi, lo), to about 2^-31 relative:
    2^k (1 + f) = a from the bits as in log's `parts` (subnormals lifted by 2^25 first),
    log(1 + f) = 2 atanh(s), s = f / (2 + f) as a pair (one division, corrected by its
    residual), s^3 / 3 in float32 (2^-7 of the sum: its rounding is 2^-31 of it) plus the
    first-order part of s's low word, the rest s^5 P(s^2); times 2 / ln 2 as a pair (an FMA
    gives the product's error), k added by an exact two-sum (|k| >= 1 exceeds the rest). With
    fastmath LLVM may cancel the error terms ((a + b) - a) to 0: README gives the cost."""
    ONE, TWO = _F32(1), _F32(2)
    sub = a < _TINY32
    ix = _I32(as_int(a * _LIFT32 if sub else a) + _OFFSET32)
    k = _F32(_I32(_I32(ix >> _I32(23)) - _I32(127))) - (_F32(25) if sub else _F32(0))
    f = as_float(_I32(_I32(ix & _MANT_MASK32) + _SQRTH32)) - ONE  # exact
    dh = TWO + f
    dl = f - (dh - TWO)  # 2 + f = dh + dl exactly
    inv = ONE / dh
    sh = f * inv
    sl = (fma(-sh, dh, f) - sh * dl) * inv
    z = sh * sh
    w = z * sh
    third = w * _THIRD32
    h = sh + third  # |third| < |sh|: the error of this sum is exact below
    l = (third - (h - sh)) + (fma(sl, z, sl) + w * z * horner(z, _POW32_ATANH_F))
    ph = h * _C32_HI
    pl = fma(h, _C32_HI, -ph) + (h * _C32_LO + l * _C32_HI)
    gh = k + ph
    return gh, (ph - (gh - k)) + pl


def _make_pow32_table():
    """float32 log2|x| as a pair and 2^z from a pair by AVX-512's tables (vector_isa), as
    NumPy's SVML loop computes them (its algorithm; our cells, coefficients and code):
    x = 2^e m with m in [1/2, 1) from vgetexp/vgetmant, the top 5 bits of m's mantissa pick
    r_j (a multiple of 1/32, so 1 + f = m r_j is exact in one FMA and |f| <= 2^-5) and
    1 - log2(r_j) as hi + lo, hi a multiple of 2^-16 (e + hi is exact); log2(1 + f) =
    f log2(e) (log2(e) in two pieces, the product's error by an FMA) + f^2 Q(f), degree 3
    (2^-31.6); the sums by exact two-sums. The two cells at 1 (m near 1/2 and near 1) take
    r = 2 and r = 1: e + hi is 0 there, so log2 of x near 1 keeps its relative accuracy.
    2^z = 2^(n/16) 2^r, n = rint(16 z) by adding 1.5 * 2^23 (its low bits index a 16-entry
    table of 2^(j/16) as hi + lo), r = z - n/16 (exact) in [-1/32, 1/32] by a degree-3
    polynomial (2^-29), scaled by 2^floor(n/16) with vscalef. About 58 instructions per 16
    values in the kernel loop; the pairs' portable code takes 133."""
    F, ONE = np.float32, np.float32(1)
    L = np.longdouble
    r_j = []
    for i in range(32):  # the cells [1/2 + i/64, 1/2 + (i+1)/64)
        lo, hi = L(0.5) + L(i) / 64, L(0.5) + L(i + 1) / 64
        r = 2.0 if i == 0 else 1.0 if i == 31 else min(
            (k / 32 for k in range(32, 65)),
            key=lambda c: max(abs(L(c) * lo - 1), abs(L(c) * hi - 1)))
        r_j.append(r)
    t = [1 - np.log2(L(r)) for r in r_j]
    t_hi = [float(np.round(v * 2 ** 16) / 2 ** 16) for v in t]
    t_lo = [float(F(v - L(h))) for v, h in zip(t, t_hi)]
    R, T_HI, T_LO = (vector_isa.table(v, F) for v in (r_j, t_hi, t_lo))
    getexp = vector_isa.getexp_f32
    getmant = vector_isa.getmant_half_f32
    Q = tuple(F(v) for v in (-0.7213474484336853, 0.4808982893518832, -0.3609680782043702,
                             0.2887862417182902))
    LOG2E_HI = F(1 / np.log(L(2)))
    LOG2E_LO = F(1 / np.log(L(2)) - L(LOG2E_HI))

    @inline
    def log2_pair(a):
        """log2(a) for finite a > 0 as (hi, lo), about 2^-30 relative."""
        e = getexp(a)
        m = getmant(a)
        j = np.int32(np.int32(as_int(m) >> np.int32(18)) & np.int32(31))
        f = fma(m, R(j), -ONE)  # exact
        kt = e + T_HI(j)  # exact
        ph = f * LOG2E_HI
        pl = fma(f, LOG2E_HI, -ph)
        q = fma(f * f, horner(f, Q), f * LOG2E_LO)
        u = ph + q  # |q| < |ph|: its error is exact below
        hi = kt + u  # kt is 0 or |kt| > |u|: likewise
        return hi, ((kt - hi) + u) + ((((ph - u) + q) + pl) + T_LO(j))

    exp2_pair = _make_exp2_by_table(F, _POW32T_EXP2, lambda values: vector_isa.table(values, F),
                                    vector_isa.scalef_f32)
    return log2_pair, exp2_pair


_exp2_pair32_portable = _make_exp2_portable(_POW32_EXP2_2, _scale32, _F32(1))


if vector_isa.available():
    _log2_pair32_any, _exp2_pair32 = _make_pow32_table()
else:
    _log2_pair32_any, _exp2_pair32 = _log2_pair32, _exp2_pair32_portable


@inline
def _times_log2(y, gh, gl, clamp):
    """z = y (gh + gl) as (zc, zl, zh): zh = fl(z), zc it clamped at +-clamp (beyond, the
    power is 0 or inf; NaN stays NaN), zl the product's low part (an FMA gives its error;
    0 where clamped)."""
    zh = y * gh
    zl = fma(y, gh, -zh) + y * gl
    big = abs(zh) > clamp  # (inf included; NaN is not)
    return (np.copysign(clamp, zh) if big else zh), ((clamp - clamp) if big else zl), zh


@inline
def _pow32_core(y, gh, gl):
    """2^(y (gh + gl)), |y log2 x| clamped at 200."""
    zc, zl, zh = _times_log2(y, gh, gl, _POW32_CLAMP)
    return _exp2_pair32(zc, zl), zh


@inline
def pow_f32_fast(x, y):
    """pow_f32 for x > 0 finite and y finite (pow_special_f32 false): no special cases."""
    gh, gl = _log2_pair32_any(_F32(x))
    return _pow32_core(_F32(y), gh, gl)[0]


@inline
def pow_special_f32(x, y):
    """Whether pow_f32(x, y) needs its special cases: x not positive and finite, y not
    finite (NaN included)."""
    x, y = _F32(x), _F32(y)
    return (np.uint32(as_int(x) - _I32(1)) >= np.uint32(0x7F7FFFFF)) | ~(abs(y) < _F32(np.inf))


@inline
def pow_f32(x, y):
    """x^y for float32 as 2^(y log2|x|): log2|x| as a float32 pair (by tables on AVX-512,
    _make_pow32_table, else _log2_pair32), times y as a pair, 2^z from the pair; |z| beyond
    200 gives 0 or inf directly (measured within 1.7 ulp, tests/test_vecmath.py). Then C's
    special cases: x^0 = 1 and 1^y = 1 (even NaN), (-1)^+-inf = 1, a negative x needs an
    integral y (else NaN; -inf excepted) and an odd one flips the sign (of zeros and
    infinities too). An integer y is converted to float32 first, as XLA does."""
    ZERO, ONE, INF = _F32(0), _F32(1), _F32(np.inf)
    x, y = _F32(x), _F32(y)
    a = abs(x)
    gh, gl = _log2_pair32_any(a)
    gh = gh if a > ZERO else -INF
    gh = gh if a < INF else a  # inf, or NaN
    res, zh = _pow32_core(y, gh, gl)
    res = res if zh == zh else zh
    integral = np.rint(y) == y
    odd = integral & (np.rint(y * _F32(0.5)) * _F32(2) != y)
    neg = np.copysign(ONE, x) < ZERO
    res = -res if neg & odd else res
    finite_neg = (x < ZERO) & (x > -INF)  # (-inf)^y is +-inf or +-0, never NaN
    res = _F32(np.nan) if finite_neg & ~integral & (abs(y) < INF) else res
    res = ONE if (a == ONE) & (abs(y) == INF) else res
    return ONE if (y == ZERO) | (x == ONE) else res


# --- float64 pow ------------------------------------------------------------------------------
# x^y = 2^(y log2|x|) with log2|x| as a double-double (about 2^-64 relative): |y log2 x| reaches
# 1075 before the result underflows, and each 2^-53 of absolute error in it is 0.7 ulp of the
# result. Coefficients: `scripts/fit_vecmath.py`.
# log(1 + f) = 2s + (2/3) s^3 + s^5 P(s^2), s = f / (2 + f), |s| <= 3 - 2 sqrt(2)
_POW64_LOG = (0.40000000000001623, 0.2857142857075345, 0.22222222341811798,
              0.1818180693294505, 0.15385213226628422, 0.13315633379447986,
              0.12022290371737455, 0.09576365635438458)
# 2^r = 1 + r P(r) on [-1/2, 1/2] (2^-55.6 relative)
_POW64_EXP2 = (0.6931471805599453, 0.24022650695910072, 0.055504108664821694,
               0.00961812910762835, 0.0013333558146391318, 0.0001540353039360518,
               1.525273385534711e-05, 1.3215486621735447e-06, 1.0178051588113396e-07,
               7.054965207470922e-09, 4.456616125019035e-10, 2.5637435862997117e-11)
_POW64_LOG_2 = split_coeffs(_POW64_LOG, 2)
_POW64_EXP2_2 = split_coeffs(_POW64_EXP2, 2)
_TWO_THIRDS_HI, _TWO_THIRDS_LO = np.float64(0.6666666666666666), np.float64(3.700743415417188e-17)
_LOG2E_HI64, _LOG2E_LO64 = F64.LOG2E_HI, F64.LOG2E_LO
_TINY64, _SUB_SCALE64 = F64.TINY, np.float64(2.0 ** 54)
_POW64_CLAMP = np.float64(1100.0)  # |y log2 x| beyond it: 0 or inf
_scale64 = _V64.scale
_OFFSET64 = np.int64(F64.ONE_BITS - F64.SQRTH_BITS)
_SQRTH64, _MANT_MASK64 = F64.SQRTH_BITS, F64.MANT_MASK


@inline
def _log_dd(f):
    """log(1 + f) as a double-double for 1 + f in [sqrt(1/2), sqrt(2)), f exact:
    s = f / (2 + f) to about 2^-100 (one division: s = f (1 / (2 + f)) corrected by its
    exact residual), then 2s exactly, (2/3) s^3 as a double-double and the rest
    s^5 P(s^2) (below 2^-12 of the whole: its rounding is 2^-65 of it) in float64."""
    dh = 2.0 + f
    dl = f - (dh - 2.0)  # 2 + f = dh + dl exactly (|f| < 2)
    inv = 1.0 / dh
    sh = f * inv
    sl = (fma(-sh, dh, f) - sh * dl) * inv
    z = sh * sh
    zl = fma(sh, sh, -z)
    s3 = z * sh
    s3l = fma(z, sh, -s3) + (zl * sh + 3.0 * z * sl)
    th = _TWO_THIRDS_HI * s3
    tl = fma(_TWO_THIRDS_HI, s3, -th) + (_TWO_THIRDS_HI * s3l + _TWO_THIRDS_LO * s3)
    h = sh + sh
    hi = h + th  # |th| < |h|: the error of this sum is exact below
    lo = (th - (hi - h)) + ((sl + sl) + (tl + s3 * z * horner_split2(z, _POW64_LOG_2)))
    return hi, lo


@inline
def _log2_dd(ad):
    """log2(ad) for finite ad > 0 as a double-double: k + log(1 + f) log2(e), with 2^k (1 + f)
    = ad from the bits as in log's `parts` (subnormals lifted by 2^54 first), log2(e) in two
    pieces and k added by an exact two-sum."""
    sub = ad < _TINY64
    ix = as_int(ad * _SUB_SCALE64 if sub else ad) + _OFFSET64
    k = np.float64((ix >> np.int64(52)) - np.int64(1023)) - (54.0 if sub else 0.0)
    f = as_float((ix & _MANT_MASK64) + _SQRTH64) - 1.0
    lh, ll = _log_dd(f)
    ph = lh * _LOG2E_HI64
    pl = fma(lh, _LOG2E_HI64, -ph) + (lh * _LOG2E_LO64 + ll * _LOG2E_HI64)
    gh, gl = two_sum(k, ph)
    return gh, gl + pl


# float64 pow on AVX-512, by tables (`_make_pow64_table`): log2(1 + f) = f log2(e)
# - f^2 log2(e)/2 + f^3 Q(f) for f in [-0.0372, 1/16] (2^-62 relative, the long-double
# reference's limit), 2^r = 1 + r E(r) for |r| <= 1/32 (2^-60); `scripts/fit_vecmath.py`.
_POW64T_LOG2 = (0.4808983469629878, -0.3606737602222375, 0.28853900817880546,
                -0.24044917350345435, 0.20609928929550844, -0.18033682849374832,
                0.16030109547873983, -0.14431699473258852, 0.1309330061144965,
                -0.10564473634184471)


def _make_pow64_table(getexp, getmant, scalef, table):
    """float64 log2|x| as a double-double and 2^z from one, by 16-entry tables, in the
    structure of the float32 ones (_make_pow32_table) and without _log_dd's division: x =
    2^k m with m in [3/4, 3/2) (getmant/getexp), m's cell (log's 16 cells,
    `_log_table_cells`) gives r_j of 5 significant bits, so f = m r_j - 1 is exact in one
    FMA (|f| <= 1/16), and -log2(r_j) as hi + lo, hi a multiple of 2^-42 so that k + hi is
    exact (|k| <= 1075). log2(1 + f) = f log2(e) (the product's error by an FMA, log2(e) in
    two pieces) - f^2 log2(e)/2 (f^2 and the product exact by FMAs) + f^3 Q(f), the last in
    float64: at most 2^-12 of the whole, so its rounding is 2^-65 of it. The two cells at 1
    take r = 1: k + hi is 0 there, and x near 1 keeps its relative accuracy. 2^z = 2^(n/16)
    2^r, n = rint(16 z) by adding 1.5 * 2^52 (its low bits index 2^(j/16) as hi + lo), r =
    z - n/16 (exact) + z's low part, |r| <= 1/32, by a degree-7 polynomial, scaled by
    2^floor(n/16) (`scalef` of the float n/16). The four operations are vector_isa's
    (AVX-512); tests build it from portable equivalents (same arithmetic, bit for bit) so
    that any CPU checks its accuracy. 88 instructions per 8 values in the loop of the
    function alone, against 105 and a division for the portable code (both compiled for
    `znver4`)."""
    F, L = np.float64, np.longdouble
    r_j, _, _ = _log_table_cells(F64)
    t = [-np.log2(L(r)) for r in r_j]
    t_hi = [float(np.round(v * L(2) ** 42) / L(2) ** 42) for v in t]
    t_lo = [float(v - L(h)) for v, h in zip(t, t_hi)]
    R, T_HI, T_LO = (table(v) for v in (r_j, t_hi, t_lo))
    Q2 = split_coeffs(tuple(F(v) for v in _POW64T_LOG2), 2)
    log2e = 1 / np.log(L(2))
    L1_HI = F(log2e)
    L1_LO = F(log2e - L(L1_HI))
    C2_HI = F(-log2e / 2)
    C2_LO = F(-log2e / 2 - L(C2_HI))
    ONE, SHIFT, FIFTEEN = F(1), np.int64(48), np.int32(15)

    @inline
    def log2_dd(a):
        """log2(a) for finite a > 0 as (hi, lo), about 2^-64 relative."""
        m = getmant(a)
        k = getexp(a) + (ONE if m < ONE else F(0))
        j = np.int32(np.int32(as_int(m) >> SHIFT) & FIFTEEN)
        f = fma(m, R(j), -ONE)  # exact
        kt = k + T_HI(j)  # exact
        ph = f * L1_HI
        pl = fma(f, L1_HI, -ph) + f * L1_LO
        sq = f * f
        sql = fma(f, f, -sq)
        tail = sq * f * horner_split2(f, Q2)
        qh = fma(sq, C2_HI, tail)
        # (qh's rounding error: the FMA's residual is about |tail| <= 2^-12, so it is exact
        # to 2^-65; the f^2 and C2 low parts join it)
        ql = (fma(sq, C2_HI, -qh) + tail) + (sql * C2_HI + sq * C2_LO)
        u = ph + qh  # |qh| <= |ph| / 16: the error of this sum is exact below
        ul = (ph - u) + qh
        hi = kt + u  # kt is 0 or |kt| > |u|: likewise
        return hi, ((kt - hi) + u) + (ul + ((pl + ql) + T_LO(j)))

    return log2_dd, _make_exp2_by_table(F, _POW64T_EXP2, table, scalef)


_exp2_dd_portable = _make_exp2_portable(_POW64_EXP2_2, _scale64, np.float64(1))


if vector_isa.available():
    _log2_dd_any, _exp2_dd = _make_pow64_table(
        vector_isa.getexp_f64, vector_isa.getmant_f64, vector_isa.scalef_f64,
        lambda values: vector_isa.table(values, np.float64))
else:
    _log2_dd_any, _exp2_dd = _log2_dd, _exp2_dd_portable


@inline
def _pow64_core(y, gh, gl):
    """2^(y (gh + gl)), |y log2 x| clamped at 1100."""
    zc, zl, zh = _times_log2(y, gh, gl, _POW64_CLAMP)
    return _exp2_dd(zc, zl), zh


@inline
def pow_f64_fast(x, y):
    """pow_f64 for x > 0 finite and y finite (pow_special_f64 false): no special cases."""
    gh, gl = _log2_dd_any(np.float64(x))
    return _pow64_core(np.float64(y), gh, gl)[0]


@inline
def pow_special_f64(x, y):
    """Whether pow_f64(x, y) needs its special cases (as pow_special_f32)."""
    x, y = np.float64(x), np.float64(y)
    return (np.uint64(as_int(x) - np.int64(1)) >= np.uint64(0x7FEFFFFFFFFFFFFF)) | \
        ~(abs(y) < np.inf)


@inline
def pow_f64(x, y):
    """x^y for float64 as 2^(y log2|x|): log2|x| as a double-double (by tables on AVX-512,
    _make_pow64_table, else _log2_dd), times y as a double-double (an FMA gives the
    product's error), 2^z from it (_exp2_dd); |z| beyond 1100 gives 0 or inf directly. Then
    the special cases as in pow_f32 (0, inf and NaN bases give log2 = -inf, inf, NaN)."""
    x, y = np.float64(x), np.float64(y)  # (an integer exponent: lax.pow allows one)
    ad = abs(x)
    gh, gl = _log2_dd_any(ad)
    gh = gh if ad > 0.0 else -np.inf
    gh = gh if ad < np.inf else ad  # inf, or NaN
    res, zh = _pow64_core(y, gh, gl)
    res = res if zh == zh else zh
    integral = np.rint(y) == y
    odd = integral & (np.rint(y * 0.5) * 2.0 != y)
    neg = np.copysign(1.0, x) < 0.0
    res = -res if neg & odd else res
    finite_neg = (x < 0.0) & (x > -np.inf)  # (-inf)^y is +-inf or +-0, never NaN
    res = np.nan if finite_neg & ~integral & (abs(y) < np.inf) else res
    res = 1.0 if (ad == 1.0) & (abs(y) == np.inf) else res
    return 1.0 if (y == 0.0) | (x == 1.0) else res


# --- lgamma and digamma (vecmath_gamma.py) ---------------------------------------------------
# Both float types compute in float64. For x > 0 both are branch-free (`*_fast`); for x <= 0
# (`*_special_*` true), which elementwise kernels reach blockwise (render.py's guarded loops)
# and the full functions per value, the reflections are branch-free too, but for float64's
# lgamma: special.py's scalar helper (vecmath_gamma.py says why).

_LN2_HI64, _LN2_LO64 = F64.LN2_HI, F64.LN2_LO


@inline
def _ln_dd(ad):
    """log(ad) for finite ad > 0 as a double-double: k ln2 + log(1 + f), ad = 2^k (1 + f)
    from the bits as in _log2_dd, log(1 + f) by _log_dd, k ln2 in two pieces (k LN2_HI
    exact) and added by an exact two-sum."""
    sub = ad < _TINY64
    ix = as_int(ad * _SUB_SCALE64 if sub else ad) + _OFFSET64
    k = np.float64((ix >> np.int64(52)) - np.int64(1023)) - (54.0 if sub else 0.0)
    f = as_float((ix & _MANT_MASK64) + _SQRTH64) - 1.0
    lh, ll = _log_dd(f)
    gh, gl = two_sum(k * _LN2_HI64, lh)
    return gh, gl + (ll + k * _LN2_LO64)


@inline
def _log_pair64(h, lo):
    """log(h + lo) as a double-double (lo small beside h)."""
    gh, gl = _ln_dd(h)
    return gh, gl + lo / h


_log64 = _V64.log


@inline
def _log_pair32(h, lo):
    """float32's: float64's log alone (its error and lo's are far below float32's ulp)."""
    return _log64(h), 0.0


_G32 = make_gamma_family(np.float32, _log_pair32, TRIG_F64_FAST.sin, TRIG_F64_FAST.cos)
_G64 = make_gamma_family(np.float64, _log_pair64, TRIG_F64_FAST.sin, TRIG_F64_FAST.cos)
_lgamma_scalar = njit(cache=False, error_model="numpy", nogil=True, fastmath=False)(lgamma_scalar)


def _rounded_to_float32(fn):
    """fn (float64 arithmetic) for a float32 argument, its result rounded to float32."""
    @inline
    def of_float32(x):
        return np.float32(fn(np.float64(x)))
    return of_float32


lgamma_f32_fast, digamma_f32_fast, digamma_f32 = (
    _rounded_to_float32(f) for f in (_G32.lgamma, _G32.digamma_fast, _G32.digamma))
lgamma_f64_fast, digamma_f64_fast, digamma_f64 = _G64.lgamma, _G64.digamma_fast, _G64.digamma


@inline
def _nonpositive_f32(x):
    """lgamma's and digamma's test: x <= 0 needs the full function (the reflections, float64
    lgamma's scalar helper); the fast ones take x > 0, NaN and +inf."""
    return x <= np.float32(0)


@inline
def _nonpositive_f64(x):
    return x <= 0.0


lgamma_special_f32 = digamma_special_f32 = _nonpositive_f32
lgamma_special_f64 = digamma_special_f64 = _nonpositive_f64


# float32's full lgamma: x <= 0 by the reflection with float64's polynomials (and float64's
# own logs: float32's low parts dropped), because where its terms cancel, near lgamma's
# negative zeros, float32's polynomials' 2^-33 would show (float64's 2^-52 or so keep the
# result within half an ulp; tests/test_vecmath.py checks the float32 neighbours of every
# zero); x > 0 the fast function's result (float32's polynomials: 10% faster than
# float64's there). Both computed, one kept: a select, which vectorizes.
_lgamma_reflected_f32 = make_gamma_family(np.float64, _log_pair32, TRIG_F64_FAST.sin,
                                          TRIG_F64_FAST.cos).lgamma_reflected


@inline
def lgamma_f32(x):
    fast = lgamma_f32_fast(x)
    reflected = np.float32(_lgamma_reflected_f32(np.float64(x)))
    return reflected if x <= np.float32(0) else fast


@inline
def lgamma_f64(x):
    return _lgamma_scalar(x) if x <= 0.0 else lgamma_f64_fast(x)


__all__ += [f"{name}_{suffix}" for name in ("lgamma", "digamma")
            for suffix in ("f32", "f64", "f32_fast", "f64_fast")]
__all__ += ["lgamma_special_f32", "lgamma_special_f64", "digamma_special_f32",
            "digamma_special_f64"]


# --- bessel_i0e and bessel_i1e (vecmath_bessel.py) --------------------------------------------
# Both float types compute in float64, branch-free for every x.

_B32 = make_bessel_family(np.float32, _V64.exp)
bessel_i0e_f32, bessel_i1e_f32 = (_rounded_to_float32(f) for f in (_B32.i0e, _B32.i1e))
_B64 = make_bessel_family(np.float64, _V64.exp)
bessel_i0e_f64, bessel_i1e_f64 = _B64.i0e, _B64.i1e
__all__ += ["bessel_i0e_f32", "bessel_i1e_f32", "bessel_i0e_f64", "bessel_i1e_f64"]
