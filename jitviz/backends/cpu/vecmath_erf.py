"""erf, erfc and erf_inv for the CPU kernels, float32 and float64, branch-free so that the
kernel's loop vectorizes (vecmath.py's other functions are built the same way: one factory for both
types, closing over that type's constants; `vecmath._build` adds these to each type's set).

With a = |x|:

- erf(a) = a (2/sqrt(pi) + a^2 S(a^2)) below 0.84375 (fdlibm's first interval), S a fitted
  polynomial (degree 4 for float32, 9 for float64), 2/sqrt(pi) as hi + lo: relative
  accuracy down to the subnormals, erf(-0) = -0.
- erfc(a) = exp(-a^2) G(t) / (1 + 2a) from a = 1/2 up, where G(a) = (1 + 2a) exp(a^2)
  erfc(a) is nearly constant and smooth over the whole half-line in t = (a - K) / (a + K)
  (the function and variable of Shepherd and Laframboise, "Chebyshev approximation of
  (1 + 2x) exp(x^2) erfc x in 0 <= x < infinity", Math. Comp. 1981): one polynomial
  G(0) + t P(t), G(0) as hi + lo (P of degree 9 for float32, 19 for float64), and two
  divisions, no intervals. a^2 = h + l exactly (an FMA gives l), and exp(-a^2) = exp(-h)
  (1 - l), so the tail keeps its relative accuracy down to the subnormals (exp(-h) alone
  would be off by up to |l| relative, hundreds of ulps at a = 27). exp(-h) = 2^k (1 + q)
  enters as y + q y, one rounding (exp's own result times y rounded twice: 3.5 ulp measured,
  float64), and 1 + 2a's rounding is corrected (it alone was 0.94 ulp of float32's 3.15). a
  is clamped where erfc underflows to 0 (10.1 for float32, 27.3 for float64), which keeps t
  finite for a = inf.
- erf(a) = 1 - erfc(a) from 0.84375 (erfc's error shrinks by erfc / erf < 0.31 there; for
  float32 as 1 - exp(-R(a)), R a polynomial, since only erfc's absolute accuracy matters),
  erfc(a) = 1 - erf(a) below 1/2 (by erf / erfc < 1.1), and the negative side by symmetry:
  erf(-a) = -erf(a), erfc(-a) = 2 - erfc(a) (1 + erf(a) below 1/2).

erf_inv: a polynomial in w = -log(1 - x^2) (two of them, Giles's structure), refined for
float64 by a Halley step on erf/erfc (`erf_inv` below).

Both halves are computed for every value and one is selected (the loop has no branch), so
each function costs both. Coefficients: `scripts/fit_vecmath.py` (`fit_erf`, `fit_erf_inv`:
least squares against mpmath). Measured accuracy: README.md and tests/test_vecmath.py. CUDA
keeps libdevice's erf and erfc (and erf_inv's scalar helper on them).
"""
from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import numpy as np

from .vecmath_core import fma, horner, horner_split2, inline, split_coeffs

SERIES_MAX = 0.84375  # erf by its series below, by 1 - erfc above

# erf(a) / a = 2/sqrt(pi) + z S(z), z = a^2, on [0, 0.84375]: float32 2^-27.2, float64 2^-56.1
TWO_OVER_SQRT_PI = "1.1283791670955125738961589031215"
_SERIES = {
    np.float32: (-0.37612593024580804, 0.11282900547306492, -0.026808981170559517,
                 0.005060925142826863, -0.0006369429959909139),
    np.float64: (-0.3761263890318349, 0.11283791670937444, -0.0268661706410199,
                 0.005223977577849484, -0.0008548323844559553, 0.00012055201125706198,
                 -1.4922137510684763e-05, 1.6401752420700345e-06, -1.5714922634895357e-07,
                 1.0727081105906902e-08),
}
# float32 erf from 0.84375 to 3.92 (1 beyond): 1 - exp(-R(a)), R = -log(erfc(a)) a polynomial of
# a - 0.84375 fitted for erf's relative error (2^-28.7): erf needs only erfc's absolute
# accuracy there, which R gives without erfc's two divisions (the form of ARM's
# optimized-routines erff; our fit). Its terms are positive where erfc matters (centred at
# 2.38 instead, they cancelled near 0.84: 5.1 ulp). float64 would need degree 20 or more.
_ERF_UPPER32 = (0.84375, 3.92, (1.4576858039047458, 2.378699007604244, 0.8220881106871427,
                                0.04828134687944215, -0.011552790092259005,
                                0.0020953132241430432, -0.0002058433571244407))
# (1 + 2a) exp(a^2) erfc(a) = G(t) = G(0) + t P(t), t = (a - K) / (a + K), on [1/2, the
# clamp]: (K, clamp, G(0), P); float32 2^-30.4, float64 2^-54.1. G stays within [1.12,
# 1.25] and its terms never cancel (their absolute sum is at most 1.34 times G): exp(a^2)
# erfc(a) itself as the polynomial measured 8 ulp (float32) and 27 (float64) in the far
# tail, where it is small and its terms cancel.
_TAIL = {
    np.float32: (2.0, 10.1, "1.2769783815525287193254429045427", (
        -0.092763815987935, -0.16603036185452558, 0.16405073909749693, -0.05422097211849411,
        -0.008026129408361832, 0.008730689262027507, 0.0012232599073832902,
        -0.0014821137892271575, -0.0003208695515012869, 0.00023130230452434673)),
    np.float64: (3.0, 27.3, "1.2530080582697296529350637071953", (
        -0.13562110612458095, -0.047562294353439394, 0.12964515870273216,
        -0.11927366341617486, 0.06830802734512906, -0.023770514895759286,
        0.0025293917938934408, 0.001888690060269938, -0.0007798320301664715,
        -0.00010515756818011934, 0.00012509773214208815, 4.939282259382017e-06,
        -2.009367199790072e-05, -7.021675515588135e-07, 3.4536961632803533e-06,
        3.0406365723008905e-07, -5.851808199021398e-07, -8.476142885924336e-08,
        7.168290056014579e-08, 8.70298256214371e-09)),
}


# erf_inv: y / x = sqrt(pi)/2 + w P(w) for w = -log(1 - x^2) <= 5, Q(sqrt(w) - 3) above, up to
# the type's largest w (the structure of Giles, "Approximating the erfinv function", GPU
# Computing Gems, 2010, whose P(w - 5/2) has terms that cancel: 3.2 ulp in float32; our fits):
# (P, Q); float32's are the result (2^-27.2 and 2^-26.4), float64's a first guess (2^-23.2
# and 2^-19.7) for a Halley step
_ERF_INV = {
    np.float32: ((0.2320137042787503, 0.011549195022198339, -0.0023353388619307943,
                  -0.00012645313415125513, 4.398858288662032e-05, 4.174516725079842e-06,
                  -2.01361891764118e-06, 2.2493619348130914e-07, -8.96249690176089e-09),
                 (2.8329767998988262, 1.0016749331900554, 0.00944532958407465,
                  -0.007636804071933272, 0.005686724773661268, -0.0035991821004653173,
                  0.0014856713785460554, -5.457244072308755e-05, -0.00031008206818850003,
                  0.00011497257531670622)),
    np.float64: ((0.23201581828820525, 0.011534496537665072, -0.002300804604696922,
                  -0.0001653066804306018, 6.798097270967439e-05, -4.404838001121023e-06,
                  -2.4296067781705303e-07, 2.9256012582397423e-08),
                 (2.8329773342791627, 1.0016953859009845, 0.009440997531410618,
                  -0.0077993872841065825, 0.00576509842415241, -0.003249286203726318,
                  0.0011602475858711622, -0.000227213878610604, 1.8466806362679576e-05)),
}
SQRT_PI_OVER_2 = "0.88622692545275801364908374167057"


def hi_lo(F, digits):
    """A constant given by its decimal digits as F(hi) + F(lo)."""
    hi = F(float(digits))
    return hi, F(float(Decimal(digits) - Decimal(float(hi))))


def make_erf_family(c, exp_parts, scale, exp, exp_fast, log):
    """erf, erfc and erf_inv of the float type of `c` (vecmath_core's F32 or F64), with that
    type's exp in parts (`exp_parts(x)` = (q, k), e^x = 2^k (1 + q)), scaling by 2^k, exp,
    exp of moderate arguments (`exp_fast`: |x| < 86 for float32) and log."""
    F = c.F
    ZERO, HALF, ONE, TWO = c.ZERO, c.HALF, c.ONE, c.TWO
    C0_HI, C0_LO = hi_lo(F, TWO_OVER_SQRT_PI)
    S2 = split_coeffs(tuple(F(v) for v in _SERIES[F]), 2)
    k, clamp, g0, p_coeffs = _TAIL[F]
    K, CLAMP, SMALL = F(k), F(clamp), F(SERIES_MAX)
    G0_HI, G0_LO = hi_lo(F, g0)
    INV_G0 = F(1 / float(g0))
    P2 = split_coeffs(tuple(F(v) for v in p_coeffs), 2)

    @inline
    def erf_series(a):
        """erf(a) for 0 <= a < 0.84375: a 2/sqrt(pi) rounded once (its low part joins the
        rest)."""
        z = a * a
        return fma(a, C0_HI, a * fma(z, horner_split2(z, S2), C0_LO))

    @inline
    def erfc_tail(a):
        """erfc(a) for a >= 1/2 (NaN passes): y = G / d, d = fl(1 + 2a), corrected by
        (1 - l - d_lo / d) for a^2's low part l and d's rounding error d_lo (exact: 2a >= 1;
        d_lo / d as d_lo y / G(0), G being within 14% of G(0): the correction is below 2^-53
        relative, so its own error is negligible), times 2^k (1 + q) = e^-h as y + q y (one
        rounding, where exp(-h) * y would round twice)."""
        ac = CLAMP if a > CLAMP else a
        t = (ac - K) / (ac + K)
        two_a = ac + ac
        d = ONE + two_a
        d_lo = two_a - (d - ONE)
        y = (G0_HI + fma(t, horner_split2(t, P2), G0_LO)) / d
        h = ac * ac
        q, k = exp_parts(-h)
        y = fma(-y, fma(d_lo * INV_G0, y, fma(ac, ac, -h)), y)
        return scale(fma(q, y, y), k)

    center, top, r_coeffs = _ERF_UPPER32
    R_CENTER, R_TOP = F(center), F(top)
    R2 = split_coeffs(tuple(F(v) for v in r_coeffs), 2)

    @inline
    def erf_upper_by_exp(a):
        """erf(a) for a >= 0.84375, float32: 1 - exp(-R(a)). R stays between 0 and 18 on
        [0, 3.92] (and erf computes this for every a: the select comes after), inside
        exp_fast's range, which gives exp's bits without its clamp and two-product scale;
        a NaN passes as itself (exp_fast's bits would be meaningless). 1M float32 erfs on
        one core of the AVX2-only CPU: 1.40 -> 1.09 ms. (tests/test_vecmath.py checks R's
        range against the bound.)"""
        ac = R_TOP if a > R_TOP else a
        y = ONE - exp_fast(-horner_split2(ac - R_CENTER, R2))
        return y if a == a else a

    @inline
    def erf_upper_by_erfc(a):
        """erf(a) for a >= 0.84375, float64: 1 - erfc(a)."""
        return ONE - erfc_tail(a)

    erf_upper = erf_upper_by_exp if F is np.float32 else erf_upper_by_erfc

    @inline
    def erf(x):
        a = abs(x)
        y = erf_series(a) if a < SMALL else erf_upper(a)
        return np.copysign(y, x)

    @inline
    def erfc(x):
        a = abs(x)
        series, tail = erf_series(a), erfc_tail(a)
        small = a < HALF
        if x < ZERO:
            return ONE + series if small else TWO - tail
        return ONE - series if small else tail

    INF, NAN = c.INF, c.NAN
    CENTRAL, TAIL = (tuple(F(v) for v in coeffs) for coeffs in _ERF_INV[F])
    FIVE, THREE = F(5), F(3)
    SQRT_PI_2 = F(float(SQRT_PI_OVER_2))
    SQRT_PI_2_HI, SQRT_PI_2_LO = hi_lo(F, SQRT_PI_OVER_2)
    REFINE = F is np.float64

    @inline
    def erf_inv_guess(a):
        """(y0, 1 - a) for 0 <= a: y0 = a P(w), w = -log(1 - a^2) as -log((1 - a)(1 + a))
        (1 - a exact from 1/2 up, so w keeps its accuracy near 1); sqrt(pi)/2 as hi + lo."""
        q = ONE - a
        w = -log(q * (ONE + a))
        p = SQRT_PI_2_HI + fma(w, horner(w, CENTRAL), SQRT_PI_2_LO) if w < FIVE else \
            horner(np.sqrt(w) - THREE, TAIL)
        return a * p, q

    @inline
    def halley(y0, a, q):
        """One Halley step on erf(y) - a from y0 (cubic: float64's 2^-19.7 becomes about
        2^-57), the residual as erf(y0) - a below y0 = 1/2 and as (1 - a) - erfc(y0) above
        (1 - a exact: the tails near 1 keep their accuracy); erf' = 2/sqrt(pi) exp(-y^2)."""
        f = erf_series(y0) - a if y0 < HALF else q - erfc_tail(y0)
        delta = f * SQRT_PI_2 * exp(y0 * y0)
        return y0 - delta / (ONE + y0 * delta)

    @inline
    def erf_inv(x):
        """y with erf(y) = x: the polynomial guess, refined by a Halley step for float64
        (float32's polynomials are accurate enough alone: 5x faster). +-inf at +-1, NaN
        beyond."""
        a = abs(x)
        y, q = erf_inv_guess(a)
        if REFINE:
            y = halley(y, a, q)
        y = y if a < ONE else (INF if a == ONE else NAN)
        return np.copysign(y, x)

    return SimpleNamespace(erf=erf, erfc=erfc, erf_inv=erf_inv)
