"""The building blocks of vecmath.py's functions: LLVM intrinsics (fused multiply-add, bit
casts, scaling by 2**n), Horner's scheme, and the per-type constants and fitted coefficients
(`F32`, `F64`) that each function's factory closes over.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# no `cache=True`: these are inlined into kernels, whose code the verified kernel cache keeps.
# Inlined by LLVM (`forceinline`: the `alwaysinline` attribute), not by Numba's IR inliner
# (`inline="always"`): both give the same vectorized loop, but Numba's copies each body into
# the kernel's IR and reruns SSA over it, which grows superlinearly with the functions fused
# into one kernel (10 chained float32 sins: 21.5 s to compile that way, 1.9 s this way), and
# LLVM's own cost model, without the attribute, declines large bodies (pow: 8x slower).
# `fastmath=False` explicitly: a flag a dispatcher leaves unset is inherited from the first
# caller that compiles it (Numba's ConfigStack), and its code is then kept for that signature,
# so one fastmath=True kernel made every later kernel in the process (and the kernel cache)
# inline fastmath copies of these: results depended on the order kernels were compiled in.
# A fastmath kernel now relaxes its own arithmetic, never these functions' error terms.
inline = njit(cache=False, error_model="numpy", nogil=True, forceinline=True, fastmath=False)


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


def _extremum(name, op):
    """An intrinsic `f(a, b)` of two values of one type: for floats LLVM's `name`
    (llvm.maximum/minimum: IEEE 754-2019, a NaN wins and -0.0 < +0.0, as XLA), for integers
    a compare and select."""
    @intrinsic
    def extremum(typingctx, a, b):
        if a != b or not (_is_float(a) or isinstance(a, (types.Integer, types.Boolean))):
            return None

        def codegen(context, builder, signature, args):
            t = args[0].type
            if _is_float(a):
                fn = builder.module.declare_intrinsic(name, [t], ir.FunctionType(t, [t, t]))
                return builder.call(fn, args)
            signed = isinstance(a, types.Integer) and a.signed
            cmp = builder.icmp_signed if signed else builder.icmp_unsigned
            return builder.select(cmp(op, *args), *args)
        return a(a, a), codegen
    return extremum


ieee_max = _extremum("llvm.maximum", ">")
ieee_min = _extremum("llvm.minimum", "<")


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


def target_features() -> str:
    """The CPU features Numba compiles for ("+avx512f,+avx512vl,..."): its NUMBA_CPU_FEATURES,
    else those of the CPU NUMBA_CPU_NAME names (`haswell`: no AVX-512), else the host's."""
    from numba.core import config
    import llvmlite.binding as ll
    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    if config.CPU_NAME and config.CPU_NAME != "host":
        if not any(name in config.CPU_NAME for name in _AVX512_CPUS):
            return ""
        return "+avx512f" if config.CPU_NAME in ("knl", "knm") else "+avx512f,+avx512vl"
    return ll.get_host_cpu_features().flatten()


def target_has_avx512() -> bool:
    """Whether Numba compiles for a CPU with AVX-512F (`target_features`)."""
    return "+avx512f" in target_features().split(",")


@inline
def horner(x, c):
    """c[0] + c[1] x + c[2] x^2 + ... (a constant tuple: LLVM unrolls the loop)."""
    p = c[len(c) - 1]
    for i in range(len(c) - 2, -1, -1):
        p = fma(p, x, c[i])
    return p


def split_coeffs(c, ways):
    """The coefficient tuples of `horner_split`: every `ways`-th coefficient of c, from each
    of the first `ways` (c0 + c1 x + ... = sum over j of x^j P_j(x^ways))."""
    return tuple(tuple(c[j::ways]) for j in range(ways))


@inline
def horner_split2(x, c):
    """horner(x, ...) with the coefficients split two ways (`split_coeffs(..., 2)`):
    P0(x^2) + x P1(x^2), two independent Horner chains of half the length, for loops whose
    time is the latency of one long chain."""
    x2 = x * x
    return fma(x, horner(x2, c[1]), horner(x2, c[0]))


@inline
def horner_split4(x, c):
    """The same split four ways: (P0 + x P1) + x^2 (P2 + x P3), each P_j of x^4."""
    x2 = x * x
    x4 = x2 * x2
    lo = fma(x, horner(x4, c[1]), horner(x4, c[0]))
    hi = fma(x, horner(x4, c[3]), horner(x4, c[2]))
    return fma(x2, hi, lo)


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



F32 = _consts(
    np.float32, np.int32, 23, 127,
    # ln2 = LN2_HI + LN2_LO, LN2_HI with 8 trailing zero bits (n * LN2_HI exact for |n| < 2^8)
    LN2_HI=0.693145751953125, LN2_LO=1.428606765330187045e-06, LOG2E=1.4426950408889634,
    LOG2E_HI=1.4426950216293335, LOG2E_LO=1.925963033500011e-08,
    LOG10E=0.4342944819032518, LOG10_2_HI=0.30102539062, LOG10_2_LO=4.605038981e-06,
    # exp clamps: e^-104 underflows to 0, e^90 overflows (sinh/cosh included)
    EXP_LO=-104.0, EXP_HI=90.0, EXP2_LO=-151.0, EXP2_HI=130.0,
    # exp's fast variant below it: |n| <= 124, so 2^n (1 + q) is a normal number
    EXP_FAST_MAX=86.0,
    EXPM1=(0.16666665873017147, 0.04166646393346171, 0.008333514377129054,
           0.0013935359213523442, 0.00019776422357764564),
    LOG=(0.6666677717260451, 0.39977227381543, 0.29884438157148197),
    # float32's log(1 + f) without a division: f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1,
    # sqrt(2) - 1] (degree 7: 2^-27 relative)
    # with vector_isa's table (vecmath's `_log_table_parts`): log(1 + f) = f - f^2/2 + f^3 P(f)
    # on [-1/32, 1/16] (degree 2: 2^-28.3 relative)
    LOG_T=(0.33334464268637987, -0.25007409089633675, 0.18857175841061813),
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
    TANH_MAX=9.02,  # tanh of float32 above it rounds to 1
    # atanh below 1/2, asinh below 0.53 (where asinh reaches 1/2): a + a^3 P(a^2)
    # (2^-29.3 and 2^-28.6 relative)
    ATANH=(0.3333330530928021, 0.20002238701713032, 0.14227719835037178, 0.11784909006968776,
           0.05274774754111659, 0.17483277129196356),
    ASINH_SMALL=(-0.16666630156189308, 0.07498047553459088, -0.044303468203347005,
                 0.027751840904383214, -0.012509777399497464),
    # acosh(1 + t) = sqrt(2t) (1 + t P(t)) for t in [0, 1] (2^-27.8 relative)
    ACOSH_SMALL=(-0.08333307002619995, 0.0187447873350885, -0.005545175280785409,
                 0.001786064863599849, -0.0005048884740734308, 8.21441758778883e-05),
    # cbrt's start: m^(-1/3) on [1, 2] (2^-14.5 relative; a Newton step refines it)
    RCBRT=(1.6670206036806772, -1.1644779330871275, 0.6867964505362172, -0.2173245294264269,
           0.027941972984810336),
)

F64 = _consts(
    np.float64, np.int64, 52, 1023,
    LN2_HI=6.93147180369123816490e-01, LN2_LO=1.90821492927058770002e-10,
    LOG2E=1.4426950408889634, LOG2E_HI=1.4426950408889634, LOG2E_LO=2.0355273740931033e-17,
    LOG10E=0.4342944819032518, LOG10_2_HI=3.01029995663611771306e-01,
    LOG10_2_LO=3.69423907715893078616e-13,
    EXP_LO=-746.0, EXP_HI=711.0, EXP2_LO=-1076.0, EXP2_HI=1025.0,
    EXP_FAST_MAX=707.0,  # (|n| <= 1020)
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
    TANH_MAX=19.1,  # tanh of float64 above it rounds to 1
    # float64 atanh/asinh/acosh keep their log1p forms (their polynomials would be long)
    ATANH=None, ASINH_SMALL=None, ACOSH_SMALL=None,
    # with vector_isa's table: log(1 + f) = f - f^2/2 + f^3 P(f) on [-0.0372, 1/16] (r_j of 5
    # bits; degree 7: 2^-55.2 relative)
    LOG_T=(0.3333333333335464, -0.25000000000727807, 0.19999999919160036, -0.16666664025879388,
           0.14285792440761647, -0.12502996821118806, 0.11101237811048674,
           -0.08939455050842122),
    LOG_F=None,  # float64 keeps the division: its polynomial in f would need degree 20
    RCBRT=(1.8773027638629172, -1.974897784047575, 1.9587458554798336, -1.2566316920081106,
           0.4934623881158904, -0.10811718728869751, 0.010134622266814742),  # 2^-19.9
)


