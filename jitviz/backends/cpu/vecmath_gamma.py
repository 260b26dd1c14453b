"""lgamma and digamma for the CPU kernels, branch-free so that the kernel's loop vectorizes
(vecmath.py's other functions are built the same way; `vecmath` builds these from its float64
log and exports rt.lgamma_f32, rt.digamma_f64, ...).

Both compute in float64 for either float type: the recurrences below add terms of opposite
sign, and float64 keeps float32's results within half an ulp of their rounding (float32's
polynomials are shorter). With u = x - floor(x) for x < 6, so that y = 1 + u is x moved into
[1, 2) by whole steps (u is exact: no step rounds):

- lgamma(y) = u (u - 1) R(u - 1/2) and digamma(y) = (u - (x0 - 1)) Q(u - 1/2), x0 = 1.4616...
  digamma's root, x0 - 1 as hi + lo: each zero factored out, so that the results keep their
  relative accuracy near them (R and Q are smooth on [1, 2]: the nearest singularity is the
  pole at 0). Each is its exact value at u = 1/2 as hi + lo plus v P(v), v = u - 1/2, and
  the products are double-doubles (the high part's error by an FMA).
- x < 1 (y = x + 1): lgamma(x) = lgamma(y) - log x, digamma(x) = digamma(y) - 1/x;
  x in [2, 6): lgamma(x) = lgamma(y) + log((x - 1) ... y), digamma(x) = digamma(y) + 1/(x - 1)
  + ... + 1/y. The float64 product is a double-double, its log is one (vecmath's `_log_dd`),
  and so are the reciprocals (each corrected by its FMA residual; float32's sum is one
  fraction, one division instead of four): near the zeros at 1 and 2 the terms cancel
  (lgamma(1 - e) = lgamma(2 - e) - log(1 - e), about 0.42 e and e for 0.58 e), so the log's
  and reciprocals' own errors would be amplified; the polynomial parts are at most 1.4 times
  the result there.
- x >= 6: Stirling's series, lgamma(x) = (x - 1/2)(log x - 1) + (log(2 pi) - 1)/2 + S(1/x^2)
  / x, and digamma(x) = log x - 1/(2x) + A(1/x^2) / x^2, with the series' tails fitted (S, A).
- x < 0 by the reflections, digamma(x) = digamma(1 - x) - pi cot(pi x) and lgamma(x) =
  log(pi) - log|sin(pi x)| - lgamma(1 - x), as special.py's digamma helper (and JAX) compute
  them (`digamma` and `lgamma_reflected` below say how their terms are kept accurate). Near
  the functions' negative zeros the terms cancel, so the error there is an ulp or two of
  the largest term, not of the result: fine for float32's lgamma (float64's terms are
  2^-52 or so of a float32 result's at every float32 next to a zero), not for float64's
  (up to 4110 ulp measured in (-3, -2), two zeros between each pair of negative integers
  down to about -18). float64 kernels take lgamma of x <= 0 from special.py's helper,
  libm's lgamma, which does not cancel. Kernels test `lgamma_special_*` /
  `digamma_special_*` (x <= 0) blockwise (render.py's GUARD_TESTS): a block without such a
  value runs the fast functions (x > 0 only), one with it the full ones (vecmath.py): the
  reflections, vectorized, and float64 lgamma's scalar helper.

Coefficients: `scripts/fit_vecmath.py` (`fit_gamma`). Measured accuracy: README.md and
tests/test_vecmath.py. CUDA keeps special.py's scalar helpers (libdevice's lgamma).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .vecmath_core import fma, horner, horner_split2, inline, split_coeffs
from .vecmath_erf import hi_lo
from .vecmath_trig import _two_sum as two_sum

F = np.float64
ZERO, HALF, ONE, TWO = F(0), F(0.5), F(1), F(2)
INF, NAN, PI = F(np.inf), F(np.nan), F(np.pi)
PI_LO = F(1.2246467991473532e-16)  # pi - PI
LOG_PI_HI, LOG_PI_LO = hi_lo(F, "1.1447298858494001741434273513530587")
STIRLING_MIN = F(6)  # fit_gamma's stirling_min
TINY_PSI = F(2.0 ** -60)  # digamma(x) = -1/x - 0.577... rounds to -1/x below it
# (log(2 pi) - 1) / 2
HALF_LOG_2PI_MINUS_HALF = F(0.41893853320467274178032973640561764)
# digamma's positive root less 1, as hi + lo
ROOT_M1_HI, ROOT_M1_LO = hi_lo(F, "0.4616321449683623412626595423257213")

# lgamma(1 + u) = u (u - 1) (R0 + v P(v)), v = u - 1/2, on u in [0, 1], R0 exact (as hi + lo):
# f32 2^-33.0, f64 2^-56.9
LGAMMA_R0 = "0.48312895054098088938207378312658885"
_LGAMMA_R = {
    np.float32: (-0.14595989590812067, 0.06291141016886637, -0.03130849367750038,
                 0.016796593197202853, -0.009425295703753007, 0.005455563409623564,
                 -0.003217860260358954, 0.0018520760584678738, -0.0011197990253328518,
                 0.0009543054978720133, -0.0005900086249178487),
    np.float64: (-0.14595989591430608, 0.06291140107456494, -0.03130848750100949,
                 0.016797098631185798, -0.009425622448626334, 0.005446457844658503,
                 -0.00321207406971968, 0.0019229161352425687, -0.0011644146719806006,
                 0.00071152239000056, -0.0004379919299475009, 0.0002712749927178471,
                 -0.00016892723445569426, 0.0001056452114877136, -6.609250396148485e-05,
                 4.163288362546675e-05, -2.735711414505009e-05, 1.7349430898448795e-05,
                 -8.078336188820244e-06, 5.118272888537648e-06, -7.97178441441306e-06,
                 5.113094950950868e-06),
}
# digamma(1 + u) = (u - (x0 - 1)) (Q0 + v P(v)): f32 2^-32.9, f64 2^-56.1
DIGAMMA_Q0 = "0.95105587603183287971105411894064104"
_DIGAMMA_Q = {
    np.float32: (-0.42362741867195025, 0.24054248352918958, -0.14840521535780243,
                 0.09498886148656924, -0.06191284323807741, 0.04075570199711614,
                 -0.02710116916150279, 0.01798231178170075, -0.011098909189155196,
                 0.0074185571356631085, -0.007692871866654175, 0.005084440467090541),
    np.float64: (-0.4236274212814606, 0.2405424842407869, -0.1484049230538814,
                 0.09498872445290593, -0.06192213327544576, 0.04076083393979731,
                 -0.026975796661483118, 0.017907248352377572, -0.01190822006883123,
                 0.007927021123105674, -0.005279937743774984, 0.0035181145699419636,
                 -0.002345490717764828, 0.0015633088358787657, -0.0010364793924387728,
                 0.0006912211656457199, -0.0004858837625614247, 0.00032306912574810165,
                 -0.0001449252178368992, 9.804934754355072e-05, -0.0001781281244129313,
                 0.00011770364725675589),
}
# x >= 6: lgamma's S(1/x^2) / x (relative to lgamma: f32 2^-38.5, f64 2^-57.2) and digamma's
# A(1/x^2) / x^2 (relative to digamma: f32 2^-36.6, f64 2^-54.4)
_LGAMMA_S = {
    np.float32: (0.0833333304848952, -0.0027772286158739582, 0.0007617390090383009),
    np.float64: (0.08333333333330735, -0.0027777777620697597, 0.0007936474491318799,
                 -0.0005948983069061638, 0.0008236714086302204, -0.0014173609763998237),
}
_DIGAMMA_A = {
    np.float32: (-0.08333331549568852, 0.00832973638217892, -0.0037522878166241815),
    np.float64: (-0.08333333333306073, 0.008333333160115914, -0.003968215719150434,
                 0.004162665566811455, -0.007357248344807648, 0.014875955604394838),
}
SHIFTS = (1, 2, 3, 4)  # x - i for x in [2, 6): the factors and reciprocals of the recurrences


@inline
def _two_prod(a, b):
    p = a * b
    return p, fma(a, b, -p)


@inline
def _recip(d):
    """1/d as a double-double: r + r (1 - r d), the residual exact by an FMA."""
    r = ONE / d
    return r, r * fma(-r, d, ONE)


@inline
def _add_dd(ah, al, bh, bl):
    """(ah + al) + (bh + bl) as (hi, lo), not renormalized (the high parts' sum exact)."""
    s, e = two_sum(ah, bh)
    return s, e + (al + bl)


@inline
def _sum_dd(ah, al, bh, bl):
    """(ah + al) + (bh + bl), rounded once at the end (the high parts' sum made exact)."""
    s, e = two_sum(ah, bh)
    return s + (e + (al + bl))


def make_gamma_family(kind, log_pair, sin, cos):
    """lgamma of float64 x > 0 (NaN and +inf pass) and digamma of any float64 x, accurate for
    the float type `kind` (np.float32 or np.float64; float32's polynomials are shorter), with
    `log_pair(h, l)` = log(h + l) as (hi, lo) for h > 0 (lo may be 0 where float64's log
    is accurate enough), and float64 sin and cos for |x| <= pi/2."""
    R0_HI, R0_LO = hi_lo(F, LGAMMA_R0)
    Q0_HI, Q0_LO = hi_lo(F, DIGAMMA_Q0)
    R2 = split_coeffs(tuple(F(v) for v in _LGAMMA_R[kind]), 2)
    Q2 = split_coeffs(tuple(F(v) for v in _DIGAMMA_Q[kind]), 2)
    S = tuple(F(v) for v in _LGAMMA_S[kind])
    A = tuple(F(v) for v in _DIGAMMA_A[kind])

    @inline
    def lgamma_window(u):
        """lgamma(1 + u) for u in [0, 1] as a double-double: u (u - 1) = ph + pl exactly,
        times R0_HI + t, t = R0_LO + v P(v) (a sixth of R at most: its rounding errors
        shrink by as much), the product's high part exact (an FMA)."""
        ph, pl = _two_prod(u, u - ONE)
        v = u - HALF
        t = fma(v, horner_split2(v, R2), R0_LO)
        h, e = _two_prod(ph, R0_HI)
        return h, e + fma(ph, t, pl * (R0_HI + t))

    @inline
    def lgamma_parts(x, n, u, lo):
        """lgamma(x + lo) as a double-double for x = n + u > 0 (n = floor(x + lo), u exact,
        lo the rounding error of x = n + u, 0 for a float64 argument; NaN and +inf pass).
        Only n and u decide the reduction, so 1 - x of a negative x (`lgamma_reflected`)
        keeps its digits: the factors (n - i) + u are exact."""
        small, big = n < ONE, n >= STIRLING_MIN
        wh, wl = lgamma_window(u)
        # (x - 1) ... (1 + u) as a double-double for x in [2, 6), 1 below
        ph, pl = ONE, ZERO
        for i in SHIFTS:
            d = (n - F(i)) + u
            d = d if d >= ONE else ONE
            h, e = _two_prod(ph, d)
            ph, pl = h, fma(pl, d, e)
        outer = small | big
        lh, ll = log_pair(x if outer else ph, lo if outer else pl)
        # x >= 6: (x - 1/2)(log x - 1) + ..., log x - 1 = t + te exactly (t + te = lh - 1);
        # lo's own term lo (log x - 1) (its share in (x - 1/2) log x is in ll)
        t = lh - ONE
        te = (lh - t) - ONE  # (Fast2Sum: lh >= 1.79)
        w = ONE / x
        tail = fma(w, horner(w * w, S), fma(lo, t, HALF_LOG_2PI_MINUS_HALF))
        m = x - HALF
        stirling = fma(m, t, fma(m, te + ll, tail))
        yh, yl = _add_dd(wh, wl, -lh, -ll) if small else _add_dd(wh, wl, lh, ll)
        return (stirling if big else yh), (ZERO if big else yl)

    @inline
    def lgamma(x):
        """lgamma of x > 0 (NaN and +inf pass)."""
        fl = np.floor(x)
        yh, yl = lgamma_parts(x, fl, x - fl, ZERO)
        y = yh + yl
        return y if x < INF else x  # +inf stays, NaN stays

    @inline
    def lgamma_reflected(x):
        """lgamma of any x: x > 0 as `lgamma`, x < 0 by the reflection lgamma(x) = log(pi)
        - log|sin(pi x)| - lgamma(1 - x), with 1 - x = n + u split exactly and sin(pi x)
        from x's distance r to the nearest integer as digamma's cot; the three terms are
        added as double-doubles (float32's kernels take it with float64's polynomials and a
        `log_pair` without low parts: theirs are far below float32's ulp). Near lgamma's
        negative zeros the terms cancel: the error there is an ulp or two of the largest
        term, not of the result, so only float32's kernels use it (the module's docstring).
        +inf at 0, the negative integers and -inf."""
        neg = x < ZERO
        a = -x if neg else x
        fl = np.floor(a)
        n = fl + ONE if neg else fl
        u = a - fl
        y = n + u  # x itself for x > 0, else 1 - x rounded ...
        lo = (n - y) + u  # ... and its rounding error (Fast2Sum: n >= u)
        lh, ll = lgamma_parts(y, n, u, lo)
        r = x - np.rint(x)
        zh = PI * r
        zl = fma(PI, r, -zh) + PI_LO * r
        sh = sin(zh)
        sl = cos(zh) * zl
        gh, gl = log_pair(np.abs(sh), sl if sh > ZERO else -sl)
        ph, pe = two_sum(LOG_PI_HI, -gh)
        qh, qe = two_sum(ph, -lh)
        y = qh + ((qe + pe) + ((LOG_PI_LO - gl) - ll)) if neg else lh + ll
        y = INF if (x <= ZERO) & (r == ZERO) | (x == -INF) else y
        return y if x < INF else x

    @inline
    def reciprocals_dd(x, n, u, small, big):
        """(sh, sl, 1/x) for x = n + u (n = floor(x)): sh + sl = 1/x below 1 and from 6 up,
        else 1/(x - 1) + ... + 1/(1 + u), a double-double of reciprocals each corrected by
        its residual. Which terms are kept is decided by n, their values are (n - i) + u
        (x - i exactly for a float64 x; see digamma)."""
        outer = small | big
        keep = outer | (n >= TWO)
        rh, rl = _recip(x if outer else ((n - ONE) + u if keep else ONE))
        inv_x = rh
        sh = rh if keep else ZERO
        sl = rl if keep else ZERO
        for i in SHIFTS[1:]:
            keep = (~outer) & (n >= F(i + 1))
            rh, rl = _recip((n - F(i)) + u if keep else ONE)
            sh, e = two_sum(sh, rh if keep else ZERO)
            sl = sl + (e + (rl if keep else ZERO))
        return sh, sl, inv_x

    @inline
    def reciprocals_one_division(x, n, u, small, big):
        """The same sum for float32's accuracy, as one fraction num / p (p the product of
        the x - i, num accumulated with it: a few float64 roundings, far below float32's
        ulp), so one division instead of four."""
        num, p = ZERO, ONE
        for i in SHIFTS:
            keep = n >= F(i + 1)
            d = (n - F(i)) + u if keep else ONE
            num = fma(num, d, p) if keep else num
            p = p * d
        outer = small | big
        r = (ONE if outer else num) / (x if outer else p)
        return r, ZERO, r

    reciprocals = reciprocals_dd if kind is np.float64 else reciprocals_one_division

    @inline
    def digamma_window(u):
        """digamma(1 + u) for u in [0, 1] as a double-double: u - (x0 - 1) = d - ROOT_M1_LO
        (d = u - ROOT_M1_HI, exact near the root), times Q0_HI + t as in lgamma_window."""
        d = u - ROOT_M1_HI
        v = u - HALF
        t = fma(v, horner_split2(v, Q2), Q0_LO)
        h, e = _two_prod(d, Q0_HI)
        return h, e + fma(d, t, -ROOT_M1_LO * (Q0_HI + t))

    @inline
    def digamma_positive(x, n, u):
        """digamma(x) for x = n + u > 0, n = floor(x) and u exact (see digamma)."""
        small, big = n < ONE, n >= STIRLING_MIN
        wh, wl = digamma_window(u)
        sh, sl, inv_x = reciprocals(x, n, u, small, big)
        lh, ll = log_pair(x, ZERO)
        w = sh * sh  # x >= 6: sh + sl = 1/x
        asym = (lh - HALF * sh) + (ll + fma(w, horner(w, A), -HALF * sl))
        y = _sum_dd(wh, wl, -sh, -sl) if small else _sum_dd(wh, wl, sh, sl)
        y = asym if big else y
        # (below 2^-60, -1/x rounded is the result, and 1/x may overflow: no residual then)
        y = -inv_x if x < TINY_PSI else y
        return y if x < INF else x

    @inline
    def digamma_fast(x):
        """digamma for x > 0 (NaN and +inf pass): `digamma` without the reflection."""
        fl = np.floor(x)
        return digamma_positive(x, fl, x - fl)

    @inline
    def digamma(x):
        """Every x: x > 0 as digamma_fast (the same operations: the same results); x < 0 by
        the reflection psi(x) = psi(1 - x) - pi cot(pi x), as special.py's helper (and JAX)
        compute it, with 1 - x = n + u split exactly (u = frac(-x): 1 - x itself rounds,
        which cost 15 ulp of psi(1 - x) near x = -1/2) and cot from x's distance r to the
        nearest integer (exact: pi x itself would lose the digits that matter). Near its
        negative zeros (one between each pair of negative integers) the two terms cancel:
        the error there is an ulp or two of the larger term, not of the result. NaN at 0,
        the negative integers and -inf."""
        neg = x < ZERO
        a = -x if neg else x
        fl = np.floor(a)
        y = digamma_positive(ONE - x if neg else x, fl + ONE if neg else fl, a - fl)
        r = x - np.rint(x)
        # cot(pi r) from pi r = zh + zl (zl by an FMA and pi's low part): cos(pi r) =
        # cos(zh) - sin(zh) zl, sin(pi r) = sin(zh) + cos(zh) zl (cos(zh) alone would be
        # 6e-17 at r = 1/2, 28 ulp of digamma(-1/2)); sin and cos of one argument share
        # their reduction and polynomials once inlined
        zh = PI * r
        zl = fma(PI, r, -zh) + PI_LO * r
        s, co = sin(zh), cos(zh)
        c = fma(-s, zl, co) / fma(co, zl, s)
        y = y - PI * c if neg else y
        return NAN if (x <= ZERO) & (r == ZERO) | (x == -INF) else y

    return SimpleNamespace(lgamma=lgamma, lgamma_reflected=lgamma_reflected, digamma=digamma,
                           digamma_fast=digamma_fast)
