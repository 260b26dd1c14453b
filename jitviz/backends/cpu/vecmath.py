"""Branch-free elementary functions for the CPU kernels, float32 and float64, that vectorize.

A kernel that calls libm per element (`np.tanh(x)` in Numba) runs one scalar call per value:
the loop cannot vectorize. The functions here are straight-line arithmetic instead: a range
reduction by exact operations, a polynomial on the reduced range, a reconstruction, and
selects (`a if c else b`, which LLVM turns into vector blends) for the special values. No
fastmath: every step is IEEE arithmetic whose error is bounded below.

Each function has one implementation, written once for both float types by a factory that
closes over that type's constants (`_F32`, `_F64`); Numba freezes them into the code. The
polynomials' coefficients come from `scripts/fit_vecmath.py` (least-squares fits of each
function's tail after its exact leading terms, on Chebyshev nodes, against long-double
references). The kernels call them as `rt.<name>_f32` / `rt.<name>_f64` (runtime.py
re-exports them; the `_vector` rule of rules.py names the function of a primitive and dtype).
sin/cos/tan also have `_fast` variants without the large-argument table and a `trig_big_*`
test, which elementwise kernels use blockwise (`FusedRenderer._guarded_loops`).

Measured accuracy (max ulp over the whole range, tests/test_vecmath.py) is in README.md.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# no `cache=True`: these are inlined into kernels, whose code the verified kernel cache keeps
_inline = njit(cache=False, error_model="numpy", nogil=True, inline="always")


# --- intrinsics: fused multiply-add, bit casts, scaling by 2**n --------------------------

def _is_float(t):
    return t in (types.float32, types.float64)


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c with one rounding (llvm.fma: a vector FMA once the loop vectorizes). Only
    inside these approximations (whose error bounds count on it), never for user code."""
    if not (a == b == c and _is_float(a)):
        return None

    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t] * 3))
        return builder.call(fn, args)
    return a(a, a, a), codegen


@intrinsic
def as_int(typingctx, x):
    """The bits of a float as the signed integer of its width."""
    if not _is_float(x):
        return None
    it = types.int32 if x == types.float32 else types.int64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32 if x == types.float32 else 64))
    return it(x), codegen


@intrinsic
def as_float(typingctx, i):
    """The float whose bits are the integer `i` (int32 -> float32, int64 -> float64)."""
    if i not in (types.int32, types.int64):
        return None
    ft = types.float32 if i == types.int32 else types.float64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType() if i == types.int32 else ir.DoubleType())
    return ft(i), codegen


@intrinsic
def ldexp(typingctx, x, n):
    """x * 2**n with one rounding (llvm.ldexp: one `vscalefps/pd` per vector on AVX-512,
    a library call elsewhere, which is why `scale` uses it only there)."""
    if not _is_float(x) or n != types.int32:
        return None

    def codegen(context, builder, signature, args):
        t, i32 = args[0].type, ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.ldexp", [t, i32], ir.FunctionType(t, [t, i32]))
        return builder.call(fn, args)
    return x(x, n), codegen


# CPUs LLVM knows with AVX-512F, for a NUMBA_CPU_NAME given without NUMBA_CPU_FEATURES
_AVX512_CPUS = ("avx512", "knl", "knm", "cannonlake", "icelake", "tigerlake", "cooperlake",
                "cascadelake", "rocketlake", "sapphirerapids", "graniterapids",
                "emeraldrapids", "alderlake-avx512", "znver4", "znver5", "x86-64-v4")


def target_has_avx512() -> bool:
    """Whether Numba compiles for a CPU with AVX-512F: its NUMBA_CPU_FEATURES, else the CPU
    NUMBA_CPU_NAME names (`haswell`: no), else the host."""
    from numba.core import config
    import llvmlite.binding as ll
    features = config.CPU_FEATURES
    if features is None and config.CPU_NAME and config.CPU_NAME != "host":
        return any(name in config.CPU_NAME for name in _AVX512_CPUS)
    if features is None:
        features = ll.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


@_inline
def horner(x, c):
    """c[0] + c[1] x + c[2] x^2 + ... (a constant tuple: LLVM unrolls the loop)."""
    p = c[len(c) - 1]
    for i in range(len(c) - 2, -1, -1):
        p = fma(p, x, c[i])
    return p


# --- per-type constants --------------------------------------------------------------------
# Coefficients: `python scripts/fit_vecmath.py` (the max relative error of each fit there).

def _consts(F, I, mant, bias, **kw):
    c = SimpleNamespace(F=F, I=I, MANT=I(mant), BIAS=I(bias), **kw)
    c.ZERO, c.HALF, c.ONE, c.TWO = F(0), F(0.5), F(1), F(2)
    c.INF, c.NAN = F(np.inf), F(np.nan)
    c.TINY = F(np.finfo(F).tiny)  # the smallest normal number
    c.ONE_BITS = I(bias << mant)
    c.MANT_MASK = I((1 << mant) - 1)
    c.SQRTH_BITS = I(int(np.array(np.sqrt(0.5), F).view(I)))  # sqrt(1/2) as bits
    c.SUB_SCALE, c.SUB_K = F(2.0 ** (mant + 2)), I(mant + 2)  # lifts subnormals to normal
    for k, v in list(vars(c).items()):
        if isinstance(v, tuple):
            setattr(c, k, tuple(F(x) for x in v))
        elif isinstance(v, float):
            setattr(c, k, F(v))
    return c


_F32 = _consts(
    np.float32, np.int32, 23, 127,
    # ln2 = LN2_HI + LN2_LO, LN2_HI with 8 trailing zero bits (n * LN2_HI exact for |n| < 2^8)
    LN2_HI=0.693145751953125, LN2_LO=1.428606765330187045e-06, LOG2E=1.4426950408889634,
    LOG2E_HI=1.4426950216293335, LOG2E_LO=1.925963033500011e-08,
    LOG10E=0.4342944819032518, LOG10_2_HI=0.30102539062, LOG10_2_LO=4.605038981e-06,
    # exp clamps: e^-104 underflows to 0, e^90 overflows (sinh/cosh included)
    EXP_LO=-104.0, EXP_HI=90.0, EXP2_LO=-151.0, EXP2_HI=130.0,
    EXPM1=(0.16666665873017147, 0.04166646393346171, 0.008333514377129054,
           0.0013935359213523442, 0.00019776422357764564),
    LOG=(0.6666677717260451, 0.39977227381543, 0.29884438157148197),
    # float32's log(1 + f) without a division: f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1,
    # sqrt(2) - 1] (degree 7: 2^-27 relative)
    LOG_F=(0.3333335576940048, -0.2500091297925078, 0.1999982320233121,
           -0.1661909717557934, 0.14224373692781112, -0.1322196256394409,
           0.12655155223554548, -0.0735735440619235),
    ATAN=(-0.33333314760409327, 0.19998421151512719, -0.14242264573785687,
          0.10582641478328783, -0.06046255308871525),
    ASIN=(0.1666674119399463, 0.07495711177030893, 0.04542220803330117,
          0.024403198353104408, 0.041805802411958755),
    PIO2_HI=1.5707963705062866, PIO2_LO=-4.371139000186243e-08,
    PI_HI=3.1415927410125732, PI_LO=-8.742278000372485e-08,
    HUGE=4096.0,
    # float32 tanh below 0.5625 and sinh below 1: x + x^3 P(x^2) (fewer steps than expm1)
    TANH=(-0.333333152181899, 0.13332487970708404, -0.05384054673752884,
          0.021018454016903335, -0.00619339147600203),
    SINH=(0.16666666509651987, 0.008333349369871504, 0.0001983627403200106,
          2.8163716019218874e-06),  # above it, asinh/acosh are log(2x) to within float32 rounding
)

_F64 = _consts(
    np.float64, np.int64, 52, 1023,
    LN2_HI=6.93147180369123816490e-01, LN2_LO=1.90821492927058770002e-10,
    LOG2E=1.4426950408889634, LOG2E_HI=1.4426950408889634, LOG2E_LO=2.0355273740931033e-17,
    LOG10E=0.4342944819032518, LOG10_2_HI=3.01029995663611771306e-01,
    LOG10_2_LO=3.69423907715893078616e-13,
    EXP_LO=-746.0, EXP_HI=711.0, EXP2_LO=-1076.0, EXP2_HI=1025.0,
    EXPM1=(0.1666666666666668, 0.04166666666666659, 0.008333333333319533,
           0.0013888888888934057, 0.0001984126989194355, 2.4801587220455254e-05,
           2.755723790737191e-06, 2.7557363376764e-07, 2.511136862557535e-08,
           2.088768680090374e-09),
    LOG=(0.6666666666666734, 0.39999999999400215, 0.28571428748241934, 0.22222197740491326,
         0.18183618193576548, 0.15312429993880977, 0.14814361760885755),
    ATAN=(-0.33333333333333326, 0.19999999999997495, -0.14285714285358855,
          0.11111111086045065, -0.09090908059320293, 0.07692280693540747,
          -0.06666194718019962, 0.05876696477296624, -0.052162524720785135,
          0.04494615761667364, -0.03326311682446271, 0.014977831644490147),
    ASIN=(0.16666666666666735, 0.07499999999976854, 0.044642857169183855,
          0.030381942955443986, 0.02237220830390733, 0.017351727577532967,
          0.013979482204317613, 0.011409521648501042, 0.01072249851475123,
          0.003918730738320854, 0.021203723946685432, -0.020302849991541697,
          0.032202779410067044),
    PIO2_HI=1.5707963267948966, PIO2_LO=6.123233995736766e-17,
    PI_HI=3.141592653589793, PI_LO=1.2246467991473532e-16,
    HUGE=2.0 ** 28,
    TANH=None, SINH=None,  # float64: the expm1 forms (an odd polynomial would be long)
    LOG_F=None,  # float64 keeps the division: its polynomial in f would need degree 20
)


# --- scaling by 2**n -----------------------------------------------------------------------

def _make_scale(c):
    I, MANT, BIAS = c.I, c.MANT, c.BIAS

    @_inline
    def scale_bits(p, k):
        """p * 2**k from exponent bits, in two halves (|k| up to twice the exponent range,
        subnormal results rounded once, in the second product)."""
        h = k >> 1
        a = as_float(I((I(h) + BIAS) << MANT))
        b = as_float(I((I(k - h) + BIAS) << MANT))
        return p * a * b

    @_inline
    def scale_ldexp(p, k):
        return ldexp(p, np.int32(k))

    return scale_ldexp if target_has_avx512() else scale_bits


# --- exp, expm1, exp2, logistic, tanh, sinh, cosh ------------------------------------------

def _make_exp_family(c, scale):
    F, P, LOG2E, LN2_HI, LN2_LO = c.F, c.EXPM1, c.LOG2E, c.LN2_HI, c.LN2_LO
    ZERO, HALF, ONE, TWO = c.ZERO, c.HALF, c.ONE, c.TWO
    LO, HI, LO2, HI2 = c.EXP_LO, c.EXP_HI, c.EXP2_LO, c.EXP2_HI

    @_inline
    def expm1_poly(r):
        """e^r - 1 for |r| <= ln2/2: r + r^2/2 exactly, the tail r^3 P(r) fitted."""
        return fma(r * r, fma(r, horner(r, P), HALF), r)

    @_inline
    def parts(x):
        """(q, n) with e^x = 2^n (1 + q). Cody-Waite: n = rint(x / ln2), r = x - n ln2 with
        ln2 in two pieces; n * LN2_HI is exact (LN2_HI ends in zero bits and |n| is small
        after the clamp), so r carries only the tiny n * LN2_LO rounding. A NaN is clamped
        to a number here (the callers restore it)."""
        xc = x if x > LO else LO
        xc = xc if xc < HI else HI
        n = np.rint(xc * LOG2E)
        r = fma(n, -LN2_HI, xc)
        r = fma(n, -LN2_LO, r)
        return expm1_poly(r), np.int32(n)

    @_inline
    def from_parts_m1(q, k):
        """2^k (1 + q) - 1 without cancellation: for k <= 1 as 2^k q + (2^k - 1), where
        2^k - 1 is exact; for larger k as 2^k (1 + q) - 1, which loses nothing (the result
        exceeds 2.8) and does not overflow 2^k early near the largest results."""
        small = scale(q, k) + (scale(ONE, k) - ONE)
        big = scale(q + ONE, k) - ONE
        return small if k < 2 else big

    @_inline
    def exp(x):
        q, k = parts(x)
        y = scale(q + ONE, k)
        return y if x == x else x

    @_inline
    def expm1(x):
        q, k = parts(x)
        y = from_parts_m1(q, k)
        return x if (x == ZERO) | (x != x) else y  # -0.0 and NaN as given

    @_inline
    def exp2(x):
        """2^x = 2^n 2^r, n = rint(x), r = x - n exact, 2^r = e^(r ln2)."""
        xc = x if x > LO2 else LO2
        xc = xc if xc < HI2 else HI2
        n = np.rint(xc)
        y = scale(expm1_poly((xc - n) * LN2_HI + (xc - n) * LN2_LO) + ONE, np.int32(n))
        return y if x == x else x

    @_inline
    def logistic(x):
        """1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e = e^-|x| never overflows, and
        tiny results for very negative x keep their precision (1 / (1 + inf) would be 0)."""
        q, k = parts(-abs(x))
        e = scale(q + ONE, k)
        y = (ONE if x >= ZERO else e) / (ONE + e)
        return y if x == x else x

    @_inline
    def tanh(x):
        """With t = expm1(+-2|x|): -t / (t + 2) below |x| = 1 (no cancellation for small x),
        1 - 2 / (t + 2) above; one division for both. Saturates at 1 as t overflows."""
        a = abs(x)
        big = a >= ONE
        q, k = parts(a + a if big else -(a + a))
        t = from_parts_m1(q, k)
        d = (TWO if big else -t) / (t + TWO)
        y = ONE - d if big else d
        y = y if a == a else x
        return np.copysign(y, x)

    @_inline
    def sinh(x):
        """|x| < 1: (E + E / (E + 1)) / 2 with E = expm1(|x|) (no cancellation); above,
        e^|x| / 2 - e^-|x| / 2 from the same 2^n (1 + q), scaled by 2^(n-1) directly so
        values near the overflow threshold stay finite. One division for both."""
        a = abs(x)
        q, k = parts(a)
        p = q + ONE
        small = a < ONE
        em1 = from_parts_m1(q, k)
        d = (em1 if small else ONE) / (em1 + ONE if small else p)
        y = HALF * (em1 + d) if small else scale(p, k - 1) - scale(d, -k - 1)
        y = y if a == a else x
        return np.copysign(y, x)

    @_inline
    def cosh(x):
        """e^|x| / 2 + e^-|x| / 2, both from 2^n (1 + q) (no cancellation: both positive)."""
        a = abs(x)
        q, k = parts(a)
        p = q + ONE
        y = scale(p, k - 1) + scale(ONE / p, -k - 1)
        return y if a == a else a

    if c.TANH is None:
        return SimpleNamespace(exp=exp, expm1=expm1, exp2=exp2, logistic=logistic,
                               tanh=tanh, sinh=sinh, cosh=cosh, parts=parts)
    PT, PS, SMALL_T = c.TANH, c.SINH, F(0.5625)

    @_inline
    def tanh_poly(x):
        """float32: x + x^3 P(x^2) below 0.5625 (fitted), 1 - 2 / (e^2|x| + 1) above
        (the quotient is at most 0.5 there, so the subtraction loses nothing)."""
        a = abs(x)
        z = a * a
        q, k = parts(a + a)
        big = ONE - TWO / (scale(q + ONE, k) + ONE)
        y = fma(a * z, horner(z, PT), a) if a < SMALL_T else big
        y = y if a == a else x
        return np.copysign(y, x)

    @_inline
    def sinh_poly(x):
        """float32: x + x^3 P(x^2) below 1 (fitted), e^|x| / 2 - e^-|x| / 2 above."""
        a = abs(x)
        z = a * a
        q, k = parts(a)
        p = q + ONE
        big = scale(p, k - 1) - scale(ONE / p, -k - 1)
        y = fma(a * z, horner(z, PS), a) if a < ONE else big
        y = y if a == a else x
        return np.copysign(y, x)

    return SimpleNamespace(exp=exp, expm1=expm1, exp2=exp2, logistic=logistic,
                           tanh=tanh_poly, sinh=sinh_poly, cosh=cosh, parts=parts)


# --- log, log1p, log2, log10, asinh, acosh, atanh -------------------------------------------

def _make_log_family(c, scale):
    F, I, P, PF, MANT, BIAS = c.F, c.I, c.LOG, c.LOG_F, c.MANT, c.BIAS
    ZERO, HALF, ONE, TWO, INF, NAN = c.ZERO, c.HALF, c.ONE, c.TWO, c.INF, c.NAN
    TINY, SUB_SCALE, SUB_K = c.TINY, c.SUB_SCALE, c.SUB_K
    OFFSET, SQRTH_BITS, MANT_MASK = I(c.ONE_BITS - c.SQRTH_BITS), c.SQRTH_BITS, c.MANT_MASK
    LN2_HI, LN2_LO, LOG2E_HI, LOG2E_LO = c.LN2_HI, c.LN2_LO, c.LOG2E_HI, c.LOG2E_LO
    LOG10E, L10_HI, L10_LO, HUGE = c.LOG10E, c.LOG10_2_HI, c.LOG10_2_LO, c.HUGE

    @_inline
    def tail_atanh(f, hfsq):
        """fdlibm's identity: s = f / (2 + f), log(1 + f) = 2 atanh(s)
        = f - f^2/2 + s (f^2/2 + R(s^2)), R fitted, |s| < 0.1716."""
        s = f / (TWO + f)
        z = s * s
        return s * (hfsq + z * horner(z, P))

    @_inline
    def tail_poly(f, hfsq):
        """log(1 + f) - (f - f^2/2) = f^3 P(f), P fitted: no division (float32)."""
        return f * (f * f) * horner(f, PF)

    tail_of = tail_atanh if PF is None else tail_poly

    @_inline
    def parts(u, c_abs):
        """(k, f, hfsq, tail) with u + c_abs = 2^k (1 + f) and log(1 + f) = f - hfsq + tail.
        k and 1 + f in [sqrt(1/2), sqrt(2)) come from the bits: adding ONE - sqrt(1/2) to
        the bits carries into the exponent exactly when the mantissa is >= sqrt(1/2) (so
        k = exponent + 1 there), and the mantissa bits, re-based at sqrt(1/2), give 1 + f
        (exact, so f = m - 1 is exact). Subnormal u is first lifted by 2^(mant+2). c_abs, a
        correction below u's last bit (log1p's rounding of 1 + x), joins f after scaling by
        2^-k, where f has room for it. The tail: `tail_of`."""
        sub = u < TINY
        us = u * SUB_SCALE if sub else u
        # (I(...) around integer steps: Numba widens int32 arithmetic to int64, which
        # would double the vector integer work and convert k from int64)
        ix = I(as_int(us) + OFFSET)
        k = I(I((ix >> MANT) - BIAS) - (SUB_K if sub else I(0)))
        m = as_float(I((ix & MANT_MASK) + SQRTH_BITS))
        k32 = np.int32(k)
        f = (m - ONE) + scale(c_abs, -k32)
        hfsq = HALF * f * f
        return F(k), f, hfsq, tail_of(f, hfsq)

    @_inline
    def log_of(u, c_abs, kadd):
        """log(u + c_abs) + kadd ln2, with k ln2 in two pieces (k * LN2_HI exact)."""
        k, f, hfsq, tail = parts(u, c_abs)
        k = k + kadd
        return fma(k, LN2_HI, ((tail + k * LN2_LO) - hfsq) + f)

    @_inline
    def one_plus(t):
        """(u, c_abs): u = fl(1 + t) and its rounding error c_abs = (1 + t) - u, exactly
        (Fast2Sum: the larger of 1 and t first)."""
        u = ONE + t
        return u, (ONE - (u - t)) if t >= ONE else (t - (u - ONE))

    @_inline
    def specials(x, y, lo):
        """log-like results: NaN below the domain's bound `lo`, -inf at it, inf at inf."""
        y = y if x > lo else (-INF if x == lo else NAN)
        return y if x < INF else x  # inf stays inf, NaN stays NaN

    @_inline
    def log(x):
        return specials(x, log_of(x, ZERO, ZERO), ZERO)

    @_inline
    def log1p(x):
        u, cr = one_plus(x)
        y = log_of(u, cr, ZERO)
        y = x if x == ZERO else y  # -0.0
        return specials(x, y, -ONE)

    @_inline
    def log2(x):
        """k + log(1 + f) log2(e): exact for powers of two (log(1) = 0); log2(e) in two
        pieces so the product keeps the precision of log(1 + f)."""
        k, f, hfsq, tail = parts(x, ZERO)
        v = (tail - hfsq) + f
        return specials(x, fma(v, LOG2E_HI, fma(v, LOG2E_LO, k)), ZERO)

    @_inline
    def log10(x):
        """k log10(2) + log(1 + f) log10(e), log10(2) in two pieces (k * L10_HI exact)."""
        k, f, hfsq, tail = parts(x, ZERO)
        v = (tail - hfsq) + f
        return specials(x, fma(k, L10_HI, fma(v, LOG10E, k * L10_LO)), ZERO)

    @_inline
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
        y = log_of(u, cr if small else ZERO, ONE if huge else ZERO)
        y = y if (a == a) & (a < INF) & (a != ZERO) else a
        return np.copysign(y, x)

    @_inline
    def acosh(x):
        """log(x + sqrt(x^2 - 1)) as one log: x < 2: log1p(t + sqrt(2t + t^2)), t = x - 1
        exact; 2 <= x <= HUGE: log(2x - 1 / (x + sqrt(x^2 - 1))); beyond: log(x) + ln2."""
        small, huge = x < TWO, x > HUGE
        t = x - ONE
        sq = np.sqrt(fma(x, x, -ONE) if not (huge | small) else ONE)
        u, cr = one_plus(t + np.sqrt(fma(t, t, t + t) if small else ZERO))
        u = u if small else (x if huge else x + x - ONE / (x + sq))
        y = log_of(u, cr if small else ZERO, ONE if huge else ZERO)
        y = y if x > ONE else (ZERO if x == ONE else NAN)
        return y if x < INF else x

    @_inline
    def atanh(x):
        """sign(x) log1p(2a / (1 - a)) / 2, written fdlibm's way below a = 1/2:
        log1p(2a + 2a a / (1 - a)) (the small term separate); one division for both."""
        a = abs(x)
        t = a + a
        small = a < HALF
        d = (t * a if small else t) / (ONE - a)
        u, cr = one_plus(t + d if small else d)
        y = HALF * log_of(u, cr, ZERO)
        y = y if a < ONE else (INF if a == ONE else NAN)
        y = y if a != ZERO else a
        return np.copysign(y, x)

    return SimpleNamespace(log=log, log1p=log1p, log2=log2, log10=log10, asinh=asinh,
                           acosh=acosh, atanh=atanh, log_of=log_of)


# --- sin, cos, tan --------------------------------------------------------------------------
# Both types reduce in float64: |x| = (q + y) pi/2 with q an integer (only q mod 4 matters)
# and |y| <= 1/2, then r = y pi/2 in [-pi/4, pi/4] goes to the sin and cos polynomials.
#
# Large arguments (Payne-Hanek, without branches): write |x| = M 2^s with M an integer of at
# most 24 (float32) or 53 (float64) bits. Then |x| 2/pi mod 4 = M G_s mod 4 with
# G_s = (2^s 2/pi) mod 4, because M times a multiple of 4 is a multiple of 4. G_s depends
# only on the exponent, so a table indexed by the exponent bits holds it, cut into chunks
# (from the exact bits of 2/pi computed below with integers); each chunk times M is exact
# (float32: a 24-bit M times chunks of at most 29 bits) or split exactly by an FMA (float64),
# and the integer parts of the partial products are dropped (modulo 4) as soon as they
# appear, so the fraction keeps every bit it needs: the float64 closest to a multiple of
# pi/2 leaves about 2^-61 of it, the float32 one about 2^-30.


def _two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2^bits), from Machin's pi = 16 atan(1/5) - 4 atan(1/239) in integers."""
    prec = bits + 64

    def atan_inv(n):  # atan(1/n) 2^prec, by its alternating series
        total, term, k, sign = 0, (1 << prec) // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k, sign = k + 2, -sign
        return total
    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    return (1 << (prec + bits + 1)) // pi


def _chunks(s_values, cuts, rest):
    """Per exponent s: G_s = (2^s 2/pi) mod 4 as exact float64 chunks of `cuts` bits each,
    from weight 2^1 down; with `rest`, one more: everything below them, rounded to 53
    significant bits (so tiny G_s keep their precision)."""
    B, W = 1400, 400  # 2/pi to 2^-1400; G_s kept to weight 2^-400
    g = _two_over_pi_bits(B)
    rows = []
    for s in s_values:
        v = (g >> (B - s - W)) % (1 << (W + 2))  # G_s 2^W: bits of weight 2^1 .. 2^-W
        row, top = [], W + 2
        for n in cuts:
            top -= n
            row.append(float((v >> top) % (1 << n)) * 2.0 ** (top - W))
        if rest:
            row.append((v % (1 << top)) / (1 << W))  # int / int: correctly rounded
        rows.append(row)
    return np.array(rows).T.copy()


# float32: s = max(e, 1) - 150 for exponent bits e; chunks of 29 and 26 bits and the rest
_TRIG32 = _chunks([max(e, 1) - 150 for e in range(256)], (29, 26), rest=True)
_T32_0, _T32_1, _T32_2 = _TRIG32[0], _TRIG32[1], _TRIG32[2]
# float64: s = max(e, 1) - 1075; four chunks of 53 bits
_TRIG64 = _chunks([max(e, 1) - 1075 for e in range(2048)], (53, 53, 53, 53), rest=False)
_T64_0, _T64_1, _T64_2, _T64_3 = _TRIG64[0], _TRIG64[1], _TRIG64[2], _TRIG64[3]
_PIO2_1 = np.float64(1.5707963267948966)  # pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 (+2^-160)
_PIO2_2 = np.float64(6.123233995736766e-17)
_PIO2_3 = np.float64(-1.4973849048591698e-33)
_TWO_OVER_PI = np.float64(0.6366197723675814)
_CW_LIMIT = np.float64(2.0 ** 30)  # below it, Cody-Waite: n exact, n pi/2 to 160 bits


@_inline
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth; any magnitudes)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@_inline
def _mod4(j):
    """j mod 4 for an integral float (exact: a power-of-two scaling and a floor)."""
    return j - 4.0 * np.floor(j * 0.25)


@_inline
def _cody_waite(a):
    """(r_hi, r_lo, q) for 0 <= a < 2^40 (float64): n = rint(a 2/pi) is exact, a - n C1 is
    exact (both multiples of C1's last bit, the result below 1; a itself for n = 0), n C2 is
    split exactly by an FMA and n C3 rounded far below the result; pi/2 - C1 - C2 - C3 is
    2^-160, so n times it stays below the float64 closest approach to a multiple of pi/2
    (float64 uses it below 2^30, float32 below 2^40: near 2^52 the rounded
    product a 2/pi may round n the wrong way)."""
    n = np.rint(a * _TWO_OVER_PI)
    r1 = fma(n, -_PIO2_1, a)
    p = n * _PIO2_2
    hi, lo = _two_sum(r1, -p)
    lo = (lo - fma(n, _PIO2_2, -p)) - n * _PIO2_3
    r = hi + lo
    return r, lo - (r - hi), np.int64(_mod4(n))


_F32_PIO2 = tuple(np.float32(v) for v in (1.5707963705062866, -4.371138828673793e-08,
                                            -1.7151245100058819e-15))  # 3 x 24 bits
_F32_CW_LIMIT = np.float32(2.0 ** 16)


@_inline
def reduce_f32(x):
    """(r, 0, q) with |x| = q pi/2 + r, |r| <= pi/4 (float32), q mod 4.

    Below 2^16 Cody-Waite in float32 (16 lanes per AVX-512 vector): pi/2 in three 24-bit
    pieces; |x| - n C1 is exact (multiples of C1's last bit, the result below 1), the two
    other FMAs round relative to the result, and n (pi/2 - C1 - C2 - C3) < 2^16 2^-73 stays
    far below the closest approach of a float32 to a multiple of pi/2 there.

    Above, the table in float64: M c0 < 2^26 is a multiple of 2^-27: exact; its fraction
    f0 plus M c1 (< 2^-3, a multiple of 2^-53) fits 53 bits: exact; M c2 < 2^-29 is rounded
    at 2^-82. Every lane computes both (the table loads are masked gathers, the price of
    being right for every float32)."""
    a = abs(x)
    n = np.rint(a * np.float32(0.63661975))
    r = fma(n, -_F32_PIO2[0], a)
    r = fma(n, -_F32_PIO2[1], r)
    r = fma(n, -_F32_PIO2[2], r)
    ix = as_int(a)
    e = np.uint32(ix >> 23)
    big = a >= _F32_CW_LIMIT
    m = np.float64((ix & np.int32(0x7FFFFF)) | np.int32(0x800000))
    c0 = _T32_0[e] if big else 0.0
    c1 = _T32_1[e] if big else 0.0
    c2 = _T32_2[e] if big else 0.0
    p0 = m * c0
    j0 = np.rint(p0)
    s1 = fma(m, c1, p0 - j0)
    j1 = np.rint(s1)
    y = fma(m, c2, s1 - j1)
    ph_q = np.int64(_mod4(j0) + j1)
    r = np.float32(y * _PIO2_1) if big else r
    return r, np.float32(0), (ph_q if big else np.int64(n)) & 3


@_inline
def reduce_f64(x):
    """(r_hi, r_lo, q) with |x| = q pi/2 + r_hi + r_lo, |r_hi| <= pi/4 (about 2^-106
    relative), q mod 4. Below 2^30 Cody-Waite: n = rint(|x| 2/pi), |x| - n C1 exact (both
    multiples of C1's last bit, result below 1), n C2 split exactly by an FMA and n C3
    rounded far below the result. Above, the table (4 chunks of G_s, every product split
    exactly, the fraction accumulated as a double-double). Both run; a select keeps one."""
    a = abs(x)
    cw_hi, cw_lo, cw_q = _cody_waite(a)
    # Payne-Hanek: y = M (g0 + g1 + g2 + g3) mod 4, in units of pi/2 (masked table loads)
    big = a >= _CW_LIMIT
    ix = as_int(a)
    e = np.uint64(ix >> 52)
    m = np.float64((ix & np.int64(0xFFFFFFFFFFFFF)) | np.int64(0x10000000000000))
    g0 = _T64_0[e] if big else 0.0
    g1 = _T64_1[e] if big else 0.0
    g2 = _T64_2[e] if big else 0.0
    g3 = _T64_3[e] if big else 0.0
    p0 = m * g0
    e0 = fma(m, g0, -p0)
    j0, je = np.rint(p0), np.rint(e0)
    p1 = m * g1
    e1 = fma(m, g1, -p1)
    j1 = np.rint(p1)
    h, l = _two_sum((p0 - j0) + (e0 - je), p1 - j1)  # the first sum: multiples of 2^-51
    jh = np.rint(h)
    h, t = _two_sum(h - jh, e1)
    l = l + t
    p2 = m * g2
    h, t = _two_sum(h, p2)
    l = l + t + (fma(m, g2, -p2) + m * g3)
    y = h + l
    l = l - (y - h)
    jy = np.rint(y)
    y = y - jy
    ph_q = np.int64(_mod4(j0) + _mod4(je) + j1 + jh + jy)
    ph_hi = y * _PIO2_1
    ph_lo = fma(y, _PIO2_1, -ph_hi) + (y * _PIO2_2 + l * _PIO2_1)
    return (ph_hi if big else cw_hi), (ph_lo if big else cw_lo), (ph_q if big else cw_q) & 3


@_inline
def reduce_f32_fast(x):
    """reduce_f32 for |x| < 2^16 only (no table): what kernels run on blocks without a
    larger argument (see trig_big_f32)."""
    a = abs(x)
    n = np.rint(a * np.float32(0.63661975))
    r = fma(n, -_F32_PIO2[0], a)
    r = fma(n, -_F32_PIO2[1], r)
    r = fma(n, -_F32_PIO2[2], r)
    return r, np.float32(0), np.int32(n) & np.int32(3)


@_inline
def reduce_f64_fast(x):
    """reduce_f64 for |x| < 2^30 only (Cody-Waite, no table)."""
    r, l, q = _cody_waite(abs(x))
    return r, l, q & 3


@_inline
def trig_big_f32(x):
    """Whether sin/cos/tan of x need the table (|x| >= 2^16; inf too; NaN not)."""
    return abs(x) >= _F32_CW_LIMIT


@_inline
def trig_big_f64(x):
    return abs(x) >= _CW_LIMIT


def _make_trig(F, S, C, reduce):
    """sin/cos/tan from a reduction giving (r_hi, r_lo, q) in F; S and C are the tails of
    sin and cos on [-pi/4, pi/4] (fitted; float32's shorter)."""
    ONE, HALF, INF = F(1), F(0.5), F(np.inf)
    S, C = tuple(F(v) for v in S), tuple(F(v) for v in C)

    @_inline
    def sin_cos(x):
        """(sin |x|, cos |x|) before the quadrant: sin(r + l) = r + (r^3 S(r^2) + l (1 -
        r^2/2)), cos(r + l) = 1 - r^2/2 + (r^4 C(r^2) - r l), 1 - r^2/2 summed fdlibm's way
        (w = 1 - r^2/2 rounded, its error ((1 - w) - r^2/2) added back)."""
        r, l, q = reduce(x)
        z = r * r
        s = r + fma(r * z, horner(z, S), l * (ONE - HALF * z))
        hz = HALF * z
        w = ONE - hz
        co = w + (((ONE - w) - hz) + fma(z * z, horner(z, C), -r * l))
        return s, co, q

    @_inline
    def sin(x):
        s, co, q = sin_cos(x)
        y = (s if (q & 1) == 0 else co)
        y = -y if q >= 2 else y
        y = y if abs(x) < INF else x - x  # inf and NaN: NaN
        return y * np.copysign(F(1), x)  # sin(-x) = -sin(x), sin(-0.0) = -0.0

    @_inline
    def cos(x):
        s, co, q = sin_cos(x)
        y = (co if (q & 1) == 0 else s)
        y = -y if (q == 1) | (q == 2) else y
        return y if abs(x) < INF else x - x

    @_inline
    def tan(x):
        s, co, q = sin_cos(x)
        odd = (q & 1) == 1
        y = (-co if odd else s) / (s if odd else co)
        y = y if abs(x) < INF else x - x
        return y * np.copysign(F(1), x)

    return SimpleNamespace(sin=sin, cos=cos, tan=tan)


_S32 = (-0.16666653676325885, 0.008332091723465274, -0.00019505112957313446)
_C32 = (0.04166664287824948, -0.001388718094345492, 2.4417797848746966e-05)
_S64 = (-0.16666666666666666, 0.00833333333333333, -0.0001984126984126533,
        2.755731922100938e-06, -2.5052107374327893e-08, 1.6058857433244174e-10,
        -7.629381270907599e-13, 2.1164514690671243e-15)
_C64 = (0.041666666666666664, -0.0013888888888889126, 2.48015873017672e-05,
        -2.755731929005414e-07, 2.0876769470666093e-09, -1.147184646260371e-11,
        4.8020293262854093e-14)
_TRIG_F32 = _make_trig(np.float32, _S32, _C32, reduce_f32)
_TRIG_F64 = _make_trig(np.float64, _S64, _C64, reduce_f64)
# the same without the large-argument table, for blocks whose arguments are all below it
_TRIG_F32_FAST = _make_trig(np.float32, _S32, _C32, reduce_f32_fast)
_TRIG_F64_FAST = _make_trig(np.float64, _S64, _C64, reduce_f64_fast)


# --- arctan, arcsin, arccos, arctan2 ----------------------------------------------------------

def _make_inverse_trig(c):
    F, PA, PS = c.F, c.ATAN, c.ASIN
    ZERO, HALF, ONE, INF, NAN = c.ZERO, c.HALF, c.ONE, c.INF, c.NAN
    PIO2_HI, PIO2_LO, PI_HI, PI_LO = c.PIO2_HI, c.PIO2_LO, c.PI_HI, c.PI_LO
    PIO4_HI, PIO4_LO = F(c.PIO2_HI * 0.5), F(c.PIO2_LO * 0.5)
    TAN3PIO8, TANPIO8 = F(2.414213562373095), F(0.41421356237309503)

    @_inline
    def atan_abs(a):
        """atan(a) for a >= 0: a = tan(b + u) with b in {0, pi/4, pi/2} chosen so that
        |t| = |tan u| <= tan(pi/8): t = a, (a - 1) / (a + 1) or -1 / a (one division for
        all three), then atan t = t + t^3 A(t^2) (fitted); b in two pieces."""
        top, mid = a > TAN3PIO8, a > TANPIO8
        t = (-ONE if top else (a - ONE if mid else a)) / (a if top else (a + ONE if mid else ONE))
        z = t * t
        b_hi = PIO2_HI if top else (PIO4_HI if mid else ZERO)
        b_lo = PIO2_LO if top else (PIO4_LO if mid else ZERO)
        return b_hi + (t + fma(t * z, horner(z, PA), b_lo))

    @_inline
    def atan(x):
        return np.copysign(atan_abs(abs(x)), x)  # y >= 0: copysign is sign(x) * y

    @_inline
    def asin_parts(a):
        """(p, big): for a <= 1/2, p = asin(a) = a + a^3 B(a^2) (fitted); above,
        p = asin(sqrt((1 - a) / 2)) (1 - a exact) and asin(a) = pi/2 - 2p."""
        big = a > HALF
        z = HALF * (ONE - a) if big else a * a
        sq = np.sqrt(z) if big else a
        return fma(sq * z, horner(z, PS), sq), big

    @_inline
    def asin(x):
        a = abs(x)
        p, big = asin_parts(a)
        y = PIO2_HI - ((p + p) - PIO2_LO) if big else p
        y = y if a <= ONE else NAN
        return np.copysign(y, x) if a == a else x

    @_inline
    def acos(x):
        """pi/2 - asin(x) for |x| <= 1/2; 2p for x > 1/2 and pi - 2p below -1/2 (p as in
        asin_parts: no cancellation near +-1); pi and pi/2 in two pieces."""
        a = abs(x)
        p, big = asin_parts(a)
        neg = x < ZERO
        y = (PI_HI - ((p + p) - PI_LO) if neg else p + p) if big else \
            PIO2_HI - (np.copysign(p, x) - PIO2_LO)
        y = y if a <= ONE else NAN
        return y if a == a else x

    @_inline
    def atan2(y, x):
        """atan(min / max) of |y|, |x| (in [0, 1]), then placed by octant: pi/2 - r when
        |y| > |x|, pi - r when x < 0 (-0.0 included), both: pi/2 + r; sign of y. Equal
        infinities give min/max = 1, a zero numerator 0 (even 0/0), as C's atan2."""
        ay, ax = abs(y), abs(x)
        swap = ay > ax
        num, den = (ax, ay) if swap else (ay, ax)
        t = ZERO if num == ZERO else (ONE if (num == INF) & (den == INF) else num / den)
        r = atan_abs(t)
        left = np.copysign(ONE, x) < ZERO
        b_hi = (PIO2_HI if swap else PI_HI) if left else (PIO2_HI if swap else ZERO)
        b_lo = (PIO2_LO if swap else PI_LO) if left else (PIO2_LO if swap else ZERO)
        v = b_hi + ((-r if swap != left else r) + b_lo)
        v = np.copysign(v, y)
        return v if (x == x) & (y == y) else x + y

    return SimpleNamespace(atan=atan, asin=asin, acos=acos, atan2=atan2)


# --- cbrt, pow --------------------------------------------------------------------------------

def _make_cbrt(c, scale):
    F, I, MANT, BIAS, ONE, TWO = c.F, c.I, c.MANT, c.BIAS, c.ONE, c.TWO
    TINY, INF, MASK, ONE_BITS = c.TINY, c.INF, c.MANT_MASK, c.ONE_BITS
    START = tuple(F(v) for v in (0.5538377439720975, 0.5849490984690608,
                                 -0.16147549955620027, 0.02277094563997633))
    CBRT2, CBRT4 = F(2.0 ** (1 / 3)), F(4.0 ** (1 / 3))
    SUB_SCALE, SUB_Q = F(2.0 ** (3 * 18)), np.int32(18)  # a multiple of 3: exact cbrt
    STEPS = 1 if F is np.float32 else 2

    @_inline
    def cbrt(x):
        """|x| = 2^(3q + k) m, m in [1, 2), k in {0, 1, 2}: a cubic start for cbrt(m)
        (2^-13.6), times cbrt(2^k), refined for v = 2^k m by Halley's iteration
        t (t^3 + 2v) / (2t^3 + v) (cubic convergence: float64 only, to 2^-40) and a Newton
        step (quadratic), scaled by 2^q. Subnormals are lifted by 2^54 first (a multiple
        of 3)."""
        a = abs(x)
        sub = a < TINY
        ix = as_int(a * SUB_SCALE if sub else a)
        e = np.int32(I(ix >> MANT) - BIAS)  # (np.int32: Numba widens int32 arithmetic)
        q = np.int32(np.int32(np.uint32(np.int32(e + np.int32(3000))) // np.uint32(3))
                     - np.int32(1000))  # floor(e / 3) by an unsigned division (no branches)
        k = np.int32(e - np.int32(3) * q)
        m = as_float(I((ix & MASK) | ONE_BITS))
        v = m * (ONE if k == 0 else (TWO if k == 1 else F(4)))
        t = horner(m, START) * (ONE if k == 0 else (CBRT2 if k == 1 else CBRT4))
        for _ in range(STEPS - 1):
            t3 = t * t * t
            t = t * (t3 + v + v) / (t3 + t3 + v)
        # a last Newton step on an accurate residual: t^2 = t2 + e2 exactly (FMA), so
        # t^3 - v is known far below t's last bit and the result rounds once, at the end
        t2 = t * t
        e2 = fma(t, t, -t2)
        res = fma(t2, t, -v) + e2 * t
        t = t - res / (F(3) * t2)
        y = scale(t, np.int32(q - (SUB_Q if sub else np.int32(0))))
        y = y if (a < INF) & (a != F(0)) else a
        return np.copysign(y, x)

    return cbrt


def _build(c):
    scale = _make_scale(c)
    e = _make_exp_family(c, scale)
    lg = _make_log_family(c, scale)
    trig = _TRIG_F32 if c is _F32 else _TRIG_F64
    return SimpleNamespace(scale=scale, **vars(e), **vars(lg), **vars(trig),
                           **vars(_make_inverse_trig(c)), cbrt=_make_cbrt(c, scale))


_V32 = _build(_F32)
_V64 = _build(_F64)

# the kernels' names: rt.tanh_f32, rt.log_f64, ...
FUNCTIONS = ("exp", "expm1", "exp2", "logistic", "tanh", "sinh", "cosh",
             "log", "log1p", "log2", "log10", "asinh", "acosh", "atanh", "sin", "cos", "tan", "atan", "asin", "acos", "atan2", "cbrt")
__all__ = []
for _name in FUNCTIONS:
    globals()[f"{_name}_f32"] = getattr(_V32, _name)
    globals()[f"{_name}_f64"] = getattr(_V64, _name)
    __all__ += [f"{_name}_f32", f"{_name}_f64"]
__all__.append("pow_f32")  # float64 pow stays libm's: it needs a double-double log
for _name in ("sin", "cos", "tan"):
    globals()[f"{_name}_f32_fast"] = getattr(_TRIG_F32_FAST, _name)
    globals()[f"{_name}_f64_fast"] = getattr(_TRIG_F64_FAST, _name)
    __all__ += [f"{_name}_f32_fast", f"{_name}_f64_fast"]
__all__ += ["trig_big_f32", "trig_big_f64"]


_exp64, _log64 = _V64.exp, _V64.log


@_inline
def pow_f32(x, y):
    """x^y for float32 as exp(y log|x|) in float64 (log and exp above: |y log x| < 104 for
    finite nonzero results, so its float64 error is far below a float32 ulp), then C's
    special cases: x^0 = 1 and 1^y = 1 (even NaN), (-1)^+-inf = 1, a negative x needs an
    integral y (else NaN; -inf excepted) and an odd one flips the sign (of zeros and
    infinities too)."""
    ONE = np.float32(1)
    xd, yd = np.float64(x), np.float64(y)
    ad = abs(xd)
    r = np.float32(_exp64(yd * _log64(ad)))
    integral = np.rint(yd) == yd
    odd = integral & (np.rint(yd * 0.5) * 2.0 != yd)
    neg = np.copysign(1.0, xd) < 0.0
    r = -r if neg & odd else r
    finite_neg = (xd < 0.0) & (xd > -np.inf)  # (-inf)^y is +-inf or +-0, never NaN
    r = np.float32(np.nan) if finite_neg & ~integral & (abs(yd) < np.inf) else r
    r = ONE if (ad == 1.0) & (abs(yd) == np.inf) else r
    return ONE if (y == 0) | (x == ONE) else r
