"""bessel_i0e and bessel_i1e (e^-|x| I0(x), e^-|x| I1(x)) for the CPU kernels, branch-free so
that the kernel's loop vectorizes (vecmath.py's other functions are built the same way;
`vecmath` builds these from its float64 exp and exports rt.bessel_i0e_f32, ...). A scalar
helper per value before (special.py's power series, a division per term): 40x slower than
jax.jit's.

Both float types compute in float64 (float32's polynomials are shorter). With t = |x|:

- t < SPLIT: I0(t) = S0(y), I1(t) = (t/2) S1(y), y = (t/2)^2, the power series' sums (entire
  in y, every term positive), each 1 + y P(y); times e^-t. y rounds, and I0's relative
  change is about t/2 times y's (3 ulp of a result near 12 from half an ulp of y), so
  float64's Horner steps multiply by y as a double-double (y = yh + yl, one more FMA a
  step), the last ones compensated (`_series_dd`); float32's results see neither.
- t >= SPLIT: sqrt(t) e^-t I(t) = G(w), w = 1/t, 1/sqrt(2 pi) (as hi + lo) + w P(w), times
  sqrt(w) (w's rounding moves G by a hundredth of it, sqrt(w) by half).
- Both computed, one selected (so that the loop stays a vector loop); i1e takes x's sign (odd),
  i0e is even. +-inf give 0 (+-0 for i1e) from the second form (w = 0), NaN stays.

Coefficients: `scripts/fit_vecmath.py` (`fit_bessel`). Measured accuracy: README.md and
tests/test_vecmath.py. CUDA keeps special.py's scalar helper.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .vecmath_core import fma, horner, inline
from .vecmath_erf import hi_lo
from .vecmath_trig import _two_sum as two_sum

F = np.float64
ZERO, HALF, ONE = F(0), F(0.5), F(1)
SPLIT = F(12)  # fit_bessel's split
COMPENSATED = 6  # float64's last Horner steps of S as double-doubles (`_series_dd`)
INV_SQRT_2PI_HI, INV_SQRT_2PI_LO = hi_lo(F, "0.39894228040143267793994605993438187")

# S(y) = 1 + y P(y) on [0, 36]: f32 2^-29.7 (S0), 2^-31.7 (S1); f64 2^-55.9, 2^-54.8
# G(w) = 1/sqrt(2 pi) + w P(w) on [0, 1/12]: f32 2^-34.6, 2^-34.4; f64 2^-53.7, 2^-53.6
_S0 = {
    np.float32: (0.9999999822363491, 0.2500000726685706, 0.02777768520452326,
                 0.0017361649095715477, 6.942751765410717e-05, 1.9321836737274373e-06,
                 3.899352906035478e-08, 6.437309939424614e-10, 6.164107864703961e-12,
                 1.2183395029163706e-13, -2.6616420146178574e-16, 1.3445612011338697e-17),
    np.float64: (1.0, 0.25, 0.027777777777777794, 0.0017361111111110915, 6.944444444445863e-05,
                 1.9290123456724644e-06, 3.93675988934518e-08, 6.151187322274704e-10,
                 7.594058500649044e-12, 7.594057558550192e-14, 6.276089230690202e-16,
                 4.358335290191024e-18, 2.5792173271936664e-20, 1.314617190187944e-22,
                 5.883263902114129e-25, 2.204974042191239e-27, 9.171721618764151e-30,
                 1.0959468587879205e-32, 1.4906277982912287e-34),
}
_S1 = {
    np.float32: (0.49999999654949445, 0.08333334494132218, 0.006944431817275305,
                 0.0003472286707619036, 1.15722510558956e-05, 2.7588549798608313e-07,
                 4.886792699843055e-09, 7.079666441745364e-11, 6.434935282609877e-13,
                 1.0453285389997098e-14, -1.4135286050787438e-17, 9.896409562713286e-19),
    np.float64: (0.5, 0.08333333333333333, 0.006944444444444446, 0.00034722222222222034,
                 1.1574074074075308e-05, 2.755731922393339e-07, 4.920949861578694e-09,
                 6.834652582150223e-11, 7.594058476284666e-13, 6.903688930493016e-15,
                 5.230072556008841e-17, 3.3525758699093336e-19, 1.8422537249020973e-21,
                 8.765559266611595e-24, 3.673558953824209e-26, 1.3030561742628016e-28,
                 5.025051388938388e-31, 6.267215205779394e-34, 7.291139941500157e-36),
}
_G0 = {
    np.float32: (0.04986777637891271, 0.028052541987311667, 0.029080265445704228,
                 0.049289375097197795, 0.018973419035075004, 0.7198600195165737),
    np.float64: (0.049867785050227535, 0.028050629035416816, 0.029219427348677225,
                 0.04473780704488851, 0.09111971030032538, 0.18974932666911037, 2.622912576358151,
                 -63.882060867847436, 1574.5857016413745, -24896.94728047295, 252938.68426076835,
                 -1349508.7739013198, 347179.7830502373, 35338277.76462733, -129370669.31967361),
}
_G1 = {
    np.float32: (-0.1496033452619724, -0.04675322224517368, -0.04074942516247197,
                 -0.06267402795291459, -0.029645347703767134, -0.8275202190147336),
    np.float64: (-0.1496033551505874, -0.04675104842754477, -0.04090719005065225,
                 -0.05752120019948643, -0.11126254261007049, -0.23082896773548198,
                 -2.7383449456570688, 63.3067387516669, -1550.7095096805301, 24011.805795627348,
                 -234658.09869237905, 1107478.2954156788, 1654368.659558164, -44804868.113862745,
                 148743243.96651393),
}


@inline
def _horner_dd(yh, yl, c):
    """c[0] + c[1] y + ... at y = yh + yl (yl small): each step multiplies by both parts."""
    p = c[len(c) - 1]
    for i in range(len(c) - 2, -1, -1):
        p = fma(p, yh, fma(p, yl, c[i]))
    return p


@inline
def _times_plus_dd(ph, pl, yh, yl, c):
    """(ph + pl)(yh + yl) + c as a double-double (the product's and the sum's errors kept)."""
    a = ph * yh
    low = fma(pl, yh, fma(ph, yl, fma(ph, yh, -a)))
    s, e = two_sum(a, c)
    return s, low + e


@inline
def _series_dd(yh, yl, c):
    """1 + y P(y) at y = yh + yl as a double-double, P's coefficients c: the steps of P from
    COMPENSATED up by `_horner_dd`, the last ones and the 1 as double-doubles. Each rounding
    of a Horner step moves the whole share of the terms above it, and with all terms
    positive and y up to 36 that share is most of the sum for the low steps: plain steps
    measured 2.54 ulp of S0, with the last 6 compensated 0.77 (all 19: 0.57)."""
    ph, pl = _horner_dd(yh, yl, c[COMPENSATED:]), ZERO
    for i in range(COMPENSATED - 1, -1, -1):
        ph, pl = _times_plus_dd(ph, pl, yh, yl, c[i])
    return _times_plus_dd(ph, pl, yh, yl, ONE)


def make_bessel_family(kind, exp):
    """bessel_i0e and bessel_i1e of a float64 x, accurate for the float type `kind`
    (np.float32 or np.float64), with `exp` float64's exp."""
    S = tuple(tuple(F(v) for v in table[kind]) for table in (_S0, _S1))
    G = tuple(tuple(F(v) for v in table[kind]) for table in (_G0, _G1))
    exact_y = kind is np.float64

    @inline
    def series(y, yl, c):
        """1 + y P(y) at y + yl as (hi, lo) (float32's: at y, plain Horner, lo = 0)."""
        if exact_y:
            return _series_dd(y, yl, c)
        return fma(horner(y, c), y, ONE), ZERO

    def scaled(order):
        """e^-t I_order(t), t = |x|."""
        s_c, g_c = S[order], G[order]

        @inline
        def of(x):
            t = np.abs(x)
            h = HALF * t
            y = h * h
            sh, sl = series(y, fma(h, h, -y), s_c)
            if order == 1:  # (t/2) S1 as a double-double too
                sh, sl = h * sh, fma(h, sh, -(h * sh)) + h * sl
            e = exp(-t)
            near = fma(e, sh, e * sl)
            w = ONE / t
            far = np.sqrt(w) * (INV_SQRT_2PI_HI + fma(w, horner(w, g_c), INV_SQRT_2PI_LO))
            return near if t < SPLIT else far
        return of

    i0e = scaled(0)
    i1_scaled = scaled(1)

    @inline
    def i1e(x):
        return np.copysign(i1_scaled(x), x)

    return SimpleNamespace(i0e=i0e, i1e=i1e)
