"""Fit the polynomial coefficients of `jitviz/backends/cpu/vecmath*.py` (run it to redo them).

Each polynomial approximates the *tail* of a function after its leading Taylor terms, which
are computed exactly in the kernels: f(r) = lead(r) + w(r) * P(t(r)). The targets are
evaluated in long double (64-bit significand on x86) and the leading terms subtracted there,
so the float64 least-squares fit of the small tail loses nothing that matters. The fit is
weighted by the relative error of the whole f (what ulps measure) and fit by
least squares on Chebyshev nodes (close to minimax: within a bit or so of it).

    python scripts/fit_vecmath.py      # prints each fit: coefficients and max relative error
    python scripts/fit_vecmath.py --tables   # rewrites jitviz/backends/cpu/vecmath_tables.py

The per-cell polynomials of the table-driven float32 tanh (vector_isa) are
fitted differently (`fit_cell`): float32 coefficients chosen one at a time, so that no cell's
error leans one way.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

TABLES = Path(__file__).resolve().parent.parent / "jitviz" / "backends" / "cpu" / \
    "vecmath_tables.py"

L = np.longdouble


def fit(name, f, lead, w, t, lo, hi, degree, n=4000):
    """Coefficients c (lowest first) of P with f ~ lead + w * P(t) on r in [lo, hi]."""
    r = L((lo + hi) / 2) + L((hi - lo) / 2) * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    r = r[r != 0]
    fr, tail, wr, tr = f(r), f(r) - lead(r), w(r), t(r)
    A = (np.vander(tr.astype(np.float64), degree + 1, increasing=True)
         * (wr / fr).astype(np.float64)[:, None])
    c, scale = np.zeros(degree + 1), np.linalg.norm(A, axis=0)
    for _ in range(3):  # iterative refinement: the residual of the rounded fit, in long double
        resid = (tail - wr * np.polynomial.polynomial.polyval(tr, c.astype(L))) / fr
        # columns scaled to unit norm: monomials of a small t differ by orders of magnitude
        c = c + np.linalg.lstsq(A / scale, resid.astype(np.float64), rcond=None)[0] / scale
    approx = lead(r) + wr * np.polynomial.polynomial.polyval(tr, c.astype(L))
    rel = float(np.max(np.abs((approx - fr) / fr)))
    print(f"{name}: degree {degree}, max rel error {rel:.3g} ({np.log2(rel):.1f} bits)")
    print("    (" + ", ".join(repr(float(x)) for x in c) + ")")
    return c


def main():
    ln2h = L(np.log(2)) / 2
    # e^r - 1 = r + r^2/2 + r^3 P(r) on |r| <= ln2/2 (and a little more: n is rounded)
    for name, d in (("EXPM1 f32", 4), ("EXPM1 f64", 9)):
        fit(name, np.expm1, lambda r: r + r * r / 2, lambda r: r ** 3, lambda r: r,
            float(-ln2h * 1.02), float(ln2h * 1.02), d)
    # log(1+f) = 2 atanh(s) = 2s + s^3 Q(s^2), s = f/(2+f), |s| <= 3 - 2 sqrt(2)
    smax = 3 - 2 * np.sqrt(2.0)
    for name, d in (("LOG f32", 2), ("LOG f64", 6)):
        fit(name, lambda s: 2 * np.arctanh(s), lambda s: 2 * s, lambda s: s ** 3,
            lambda s: s * s, 1e-6, smax * 1.01, d)
    # float32 without a division: log(1+f) = f - f^2/2 + f^3 P(f), 1+f in [sqrt(1/2), sqrt(2))
    fit("LOG_F f32", np.log1p, lambda f: f - f * f / 2, lambda f: f ** 3, lambda f: f,
        float(np.sqrt(0.5) - 1) * 1.01, float(np.sqrt(2.0) - 1) * 1.01, 7)
    # with vector_isa's table: f = m r_j - 1 in [-1/32, 1/16] (float32), [-0.0372, 1/16]
    # (float64: r_j of 5 bits)
    fit("LOG_T f32", np.log1p, lambda f: f - f * f / 2, lambda f: f ** 3, lambda f: f,
        -0.0313, 0.0626, 2)
    fit("LOG_T f64", np.log1p, lambda f: f - f * f / 2, lambda f: f ** 3, lambda f: f,
        -0.0372, 0.0626, 7)
    # sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4
    q = np.pi / 4 * 1.02
    for name, d in (("SIN f32", 2), ("SIN f64", 7)):
        fit(name, np.sin, lambda r: r, lambda r: r ** 3, lambda r: r * r, 1e-6, q, d)
    for name, d in (("COS f32", 2), ("COS f64", 6)):
        fit(name, np.cos, lambda r: 1 - r * r / 2, lambda r: r ** 4, lambda r: r * r,
            1e-6, q, d)
    # atan t = t + t^3 A(t^2) on |t| <= tan(pi/8); asin s = s + s^3 B(s^2) on |s| <= 1/2
    for name, d in (("ATAN f32", 4), ("ATAN f64", 11)):
        fit(name, np.arctan, lambda t: t, lambda t: t ** 3, lambda t: t * t,
            1e-6, float(np.tan(np.pi / 8)) * 1.01, d)
    for name, d in (("ASIN f32", 4), ("ASIN f64", 12)):
        fit(name, np.arcsin, lambda s: s, lambda s: s ** 3, lambda s: s * s, 1e-6, 0.5, d)
    # float32 atanh below 1/2 and asinh below 0.53: a + a^3 P(a^2)
    fit("ATANH f32", np.arctanh, lambda a: a, lambda a: a ** 3, lambda a: a * a, 1e-6, 0.5, 5)
    fit("ASINH_SMALL f32", np.arcsinh, lambda a: a, lambda a: a ** 3, lambda a: a * a, 1e-6,
        0.53, 4)
    # float32 acosh(1 + t) = sqrt(2t) (1 + t P(t)) for t in [0, 1]
    fit("ACOSH_SMALL f32", lambda t: np.arccosh(1 + t) / np.sqrt(2 * t), lambda t: 1 + 0 * t,
        lambda t: t, lambda t: t, 1e-6, 1.0, 5)
    # cbrt's start: m^(-1/3) on [1, 2] (Newton steps refine it)
    for name, d in (("RCBRT f32", 4), ("RCBRT f64", 6)):
        fit(name, lambda m: 1 / np.cbrt(m), lambda m: 0 * m, lambda m: 1 + 0 * m, lambda m: m,
            1.0, 2.0, d)
    # float32 pow in float32 pairs: atanh(s) = s + s^3/3 + s^5 P(s^2) (s = f/(2+f) as
    # above) and 2^r = 1 + r E(r) on [-1/2, 1/2]
    fit("POW32_ATANH", np.arctanh, lambda s: s + s ** 3 / 3, lambda s: s ** 5,
        lambda s: s * s, 1e-5, smax * 1.01, 2)
    fit("POW32_EXP2", np.exp2, lambda r: 1 + 0 * r, lambda r: r, lambda r: r,
        -0.5001, 0.5001, 5)
    # float32 cbrt on AVX-512: cbrt(1 + t) = 1 + t P(t), |t| < 0.0595 (cells of m of 1/8)
    fit("CBRT32T", lambda t: np.cbrt(1 + t), lambda t: 1 + 0 * t, lambda t: t, lambda t: t,
        -0.0595, 0.0595, 3)
    # float32 pow on AVX-512 (tables of 32 cells of the mantissa, 16 of 2^(j/16)):
    # log2(1 + f) = f log2(e) + f^2 Q(f) for |f| <= 2^-5, 2^r = 1 + r E(r) for |r| <= 1/32
    fit("POW32T_LOG2", lambda f: np.log2(1 + f), lambda f: f / np.log(L(2)), lambda f: f * f,
        lambda f: f, -1 / 32 * 1.001, 1 / 32 * 1.001, 3)
    fit("POW32T_EXP2", np.exp2, lambda r: 1 + 0 * r, lambda r: r, lambda r: r,
        -1 / 32 - 1e-3, 1 / 32 + 1e-3, 2)
    # float64 pow: log(1 + f) = 2s + (2/3) s^3 + s^5 P(s^2) (the long-double reference
    # limits the reported error to about 2^-61.6: the tail itself is fitted far better),
    # 2^r = 1 + r P(r)
    fit("POW64_LOG", lambda s: 2 * np.arctanh(s), lambda s: 2 * s + L(2) / 3 * s ** 3,
        lambda s: s ** 5, lambda s: s * s, 1e-5, smax * 1.01, 7)
    fit("POW64_EXP2", np.exp2, lambda r: 1 + 0 * r, lambda r: r, lambda r: r,
        -0.5001, 0.5001, 11)
    # float64 pow on AVX-512 (the 16 cells of log's table, 16 entries of 2^(j/16)):
    # log2(1 + f) = f log2(e) - f^2 log2(e)/2 + f^3 Q(f) for f in [-0.0372, 1/16], and
    # 2^r = 1 + r E(r) for |r| <= 1/32 (a long-double reference: the reported error of Q
    # bottoms out near 2^-64, which is the reference's)
    log2e = 1 / np.log(L(2))
    fit("POW64T_LOG2", lambda f: np.log1p(f) * log2e, lambda f: f * log2e - f * f * log2e / 2,
        lambda f: f ** 3, lambda f: f, -0.0373, 0.0627, 9)
    fit("POW64T_EXP2", np.exp2, lambda r: 1 + 0 * r, lambda r: r, lambda r: r,
        -1 / 32 - 1e-4, 1 / 32 + 1e-4, 6)


def fit_rational(name, f, lo, hi, dp, dq, n=6000, iterations=8):
    """P (degree dp) and Q (degree dq, Q(0) = 1) with f(r) ~ r + r z P(z) / Q(z), z = r^2, on
    r in [lo, hi] (0 < lo): least squares of the linearized error (P - tail Q) weighted by
    the relative error of f, the previous Q divided out at each pass (Loeb's iteration)."""
    r = L((lo + hi) / 2) + L((hi - lo) / 2) * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    z, fr = r * r, f(r)
    tail, scale = (fr - r) / (r * z), r * z / fr
    q_prev = np.ones_like(r)
    for _ in range(iterations):
        cols = [z ** k for k in range(dp + 1)] + [-tail * z ** k for k in range(1, dq + 1)]
        A = np.stack([(c * scale / q_prev) for c in cols], axis=1).astype(np.float64)
        norm = np.linalg.norm(A, axis=0)
        x = np.linalg.lstsq(A / norm, (tail * scale / q_prev).astype(np.float64),
                            rcond=None)[0] / norm
        p, q = x[:dp + 1].astype(L), np.concatenate([[L(1)], x[dp + 1:].astype(L)])
        q_prev = np.polynomial.polynomial.polyval(z, q)
    approx = r + r * z * np.polynomial.polynomial.polyval(z, p) / q_prev
    rel = float(np.max(np.abs((approx - fr) / fr)))
    print(f"{name}: degrees {dp}/{dq}, max rel error {rel:.3g} ({np.log2(rel):.1f} bits)")
    print("    P (" + ", ".join(repr(float(v)) for v in p) + ")")
    print("    Q (" + ", ".join(repr(float(v)) for v in q) + ")")
    return p, q


def fit_tan():
    """vecmath_trig.py's float64 tan: tan r = r + r z P(z) / Q(z) on |r| <= pi/4 (and a
    little more), as one quotient (T / Q, or -Q / T in the odd quadrants)."""
    fit_rational("TAN64", np.tan, 1e-4, float(np.pi / 4 * 1.01), 3, 4)


# --- erf and erfc: references from mpmath (long double has no erf) ---------------------------

def fit_mp(name, target, lead, w, v, deg, weight=None):
    """float64 coefficients (lowest first) of P with target_i ~ lead_i + w_i P(v_i), in
    relative error, or in error times weight_i where given (target, lead, w, weight: mpmath
    numbers); least squares refined on the mpmath residual."""
    import mpmath as mp
    weight = [1 / t for t in target] if weight is None else weight

    def residual(c):
        coeffs = [mp.mpf(float(ci)) for ci in c[::-1]]
        return np.array([float((t - ld - wi * mp.polyval(coeffs, mp.mpf(float(x)))) * sc)
                         for t, ld, wi, x, sc in zip(target, lead, w, v, weight)])
    A = np.vander(v, deg + 1, increasing=True) * np.array(
        [float(wi * sc) for wi, sc in zip(w, weight)])[:, None]
    c, scale = np.zeros(deg + 1), np.linalg.norm(A, axis=0)
    for _ in range(3):
        c = c + np.linalg.lstsq(A / scale, residual(c), rcond=None)[0] / scale
    rel = float(np.max(np.abs(residual(c))))
    print(f"{name}: degree {deg}, max rel error {rel:.3g} ({np.log2(rel):.1f} bits)")
    print("    (" + ", ".join(repr(float(x)) for x in c) + ")")
    return c


def chebyshev_nodes(lo, hi, n):
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


def fit_erf():
    """vecmath_erf.py: erf(a) = a (2/sqrt(pi) + a^2 S(a^2)) for a < 0.84375; erfc(a) =
    exp(-a^2) G(t) / (1 + 2a), t = (a - K) / (a + K), for a from 1/2 to where erfc
    underflows, G = (1 + 2a) exp(a^2) erfc(a) = G(0) + t P(t): nearly constant and smooth in
    t on the whole half-line (Shepherd and Laframboise's function and variable). The leading
    constants (2/sqrt(pi) and G(0), printed) are exact in the kernels as hi + lo: rounded
    into the polynomial, their rounding alone was up to an ulp of float32."""
    import mpmath as mp
    mp.mp.prec = 128
    two_over_sqrt_pi = 2 / mp.sqrt(mp.pi)
    for name, deg in (("ERF_SERIES f32", 4), ("ERF_SERIES f64", 9)):
        z = chebyshev_nodes(1e-8, 0.84375 ** 2, 600)
        fit_mp(name, [mp.erf(mp.sqrt(mp.mpf(v))) / mp.sqrt(mp.mpf(v)) for v in z],
               [two_over_sqrt_pi] * len(z), [mp.mpf(v) for v in z], z, deg)
    # float32 erf above 0.84375 as 1 - exp(-R(a)), R = -log(erfc(a)) on [0.84375, 3.92] (erf
    # is 1 beyond), R a polynomial of a - 2.38 fitted for erf's relative error: erfc dR / erf
    a = chebyshev_nodes(0.84375, 3.92, 500)
    fit_mp("ERF_UPPER f32 (a - 0.84375)", [-mp.log(mp.erfc(mp.mpf(v))) for v in a],
           [mp.mpf(0)] * len(a), [mp.mpf(1)] * len(a), a - 0.84375, 6,
           weight=[mp.erfc(mp.mpf(v)) / mp.erf(mp.mpf(v)) for v in a])
    for name, K, amax, deg in (("ERFC_TAIL f32", 2.0, 10.1, 9), ("ERFC_TAIL f64", 3.0, 27.3, 19)):
        t = chebyshev_nodes((0.5 - K) / (0.5 + K), (amax - K) / (amax + K), 800)
        a = [K * (1 + mp.mpf(v)) / (1 - mp.mpf(v)) for v in t]
        g0 = (1 + 2 * mp.mpf(K)) * mp.exp(mp.mpf(K) ** 2) * mp.erfc(K)
        print(f"{name}: K = {K}, G(0) = {mp.nstr(g0, 25)}")
        fit_mp(f"{name}", [(1 + 2 * x) * mp.exp(x * x) * mp.erfc(x) for x in a],
               [g0] * len(t), [mp.mpf(v) for v in t], t, deg)


def fit_erf_inv():
    """vecmath_erf.py's erf_inv: y / x = sqrt(pi)/2 + w P(w) for w = -log(1 - x^2) <= 5 (not
    Giles's P(w - 5/2): its terms cancel, which float32's rounding of them turned into 3.2
    ulp), else Q(sqrt(w) - 3) up to the largest w of the type (1 - x = 2^-24: 16.6; 2^-53:
    36.7), as in Giles's "Approximating the erfinv function" (2010), our fits: float32's are
    the result (degree 9 each), float64's a first guess (degree 8) that a Halley step
    refines."""
    import mpmath as mp
    mp.mp.prec = 128

    def y_over_x(w):
        x = mp.sqrt(-mp.expm1(-mp.mpf(w)))
        return mp.erfinv(x) / x
    sqrt_pi_2 = mp.sqrt(mp.pi) / 2
    for name, deg, top in (("f32", 9, 4.1), ("f64", 8, 6.06)):
        w = chebyshev_nodes(1e-8, 5.0, 400)
        fit_mp(f"ERF_INV_CENTRAL {name} (sqrt(pi)/2 + w P(w))", [y_over_x(v) for v in w],
               [sqrt_pi_2] * len(w), [mp.mpf(v) for v in w], w, deg - 1)
        r = chebyshev_nodes(np.sqrt(5.0), top, 400)
        fit_mp(f"ERF_INV_TAIL {name}", [y_over_x(v * v) for v in r], [mp.mpf(0)] * len(r),
               [mp.mpf(1)] * len(r), r - 3.0, deg)


def fit_gamma(stirling_min=6.0):
    """vecmath_gamma.py's lgamma and digamma for x > 0. On [1, 2], with each zero factored
    out so that the results keep their relative accuracy there: lgamma(x) = (x - 1)(x - 2)
    R(v) and digamma(x) = (x - x0) Q(v), v = x - 3/2, x0 = 1.4616... digamma's root (both
    quotients are smooth: the nearest singularity is the pole at 0), each as its exact value
    at v = 0 plus v P(v), P fitted. From `stirling_min` up:
    lgamma(x) = (x - 1/2)(log x - 1) + (log(2 pi) - 1)/2 + S(1/x^2) / x, digamma(x) = log x -
    1/(2x) + A(1/x^2) / x^2 (the asymptotic series' tails, fitted; 400-bit arithmetic, since
    their targets are differences of nearly equal numbers). Between, the kernels shift x
    into [1, 2) by the recurrences. float32's polynomials are shorter: the kernels compute
    them in float64."""
    import mpmath as mp
    mp.mp.prec = 400
    x0 = mp.findroot(mp.digamma, mp.mpf("1.4616"))
    print(f"DIGAMMA_ROOT = {mp.nstr(x0, 35)}")
    x = chebyshev_nodes(1.0, 2.0, 500)
    X = [mp.mpf(v) for v in x]
    # R and Q at v = 0 (x = 3/2) exactly, printed to 35 digits: the kernels add them as hi + lo
    r0 = mp.loggamma(mp.mpf(1.5)) / (mp.mpf(0.5) * mp.mpf(-0.5))
    q0 = mp.digamma(mp.mpf(1.5)) / (mp.mpf(1.5) - x0)
    print(f"LGAMMA_R0 = {mp.nstr(r0, 35)}\nDIGAMMA_Q0 = {mp.nstr(q0, 35)}")
    for name, deg_r, deg_q in (("f32", 10, 11), ("f64", 21, 21)):
        fit_mp(f"LGAMMA_R {name} (R0 + v P(v))", [mp.loggamma(v) for v in X],
               [(v - 1) * (v - 2) * r0 for v in X],
               [(v - 1) * (v - 2) * (v - 1.5) for v in X], x - 1.5, deg_r)
        fit_mp(f"DIGAMMA_Q {name} (Q0 + v P(v))", [mp.digamma(v) for v in X],
               [(v - x0) * q0 for v in X], [(v - x0) * (v - 1.5) for v in X], x - 1.5, deg_q)
    u = chebyshev_nodes(1e-12, 1 / stirling_min ** 2, 300)  # u = 1/x^2
    X = [1 / mp.sqrt(mp.mpf(v)) for v in u]
    u = np.array([float(1 / (v * v)) for v in X])
    half_log_2pi_m_half = mp.log(2 * mp.pi) / 2 - mp.mpf(1) / 2
    print(f"HALF_LOG_2PI_MINUS_HALF = {mp.nstr(half_log_2pi_m_half, 35)}")
    for name, deg_s, deg_a in (("f32", 2, 2), ("f64", 5, 5)):
        fit_mp(f"LGAMMA_STIRLING {name}", [mp.loggamma(v) for v in X],
               [(v - 0.5) * (mp.log(v) - 1) + half_log_2pi_m_half for v in X],
               [1 / v for v in X], u, deg_s, weight=[1 / mp.loggamma(v) for v in X])
        fit_mp(f"DIGAMMA_ASYMPTOTIC {name}", [mp.digamma(v) for v in X],
               [mp.log(v) - 1 / (2 * v) for v in X], [1 / (v * v) for v in X], u, deg_a)


def fit_bessel(split=12.0):
    """vecmath_bessel.py's bessel_i0e and bessel_i1e (e^-|x| I0(x), e^-|x| I1(x)), t = |x|.
    Below `split`: I0(t) = S0(y), I1(t) = (t/2) S1(y), y = t^2/4, the power series' sums
    (entire in y, all terms positive), each 1 + y P(y) fitted on [0, split^2/4]; the kernels
    multiply by e^-t. From `split` up: sqrt(t) e^-t I(t) = G(w), w = 1/t, which tends to
    1/sqrt(2 pi) (the asymptotic series diverges, but G is smooth on [0, 1/split]), as
    1/sqrt(2 pi) + w P(w). A larger split shortens G's polynomials and lengthens S's: 12
    kept their sum near its least (32 terms for float64 at 8, 12, 14 and 16)."""
    import mpmath as mp
    mp.mp.prec = 200
    y = chebyshev_nodes(1e-12, split * split / 4, 300)
    Y = [mp.mpf(v) for v in y]
    for name, deg in (("f32", 11), ("f64", 18)):
        for order in (0, 1):
            target = [mp.besseli(order, 2 * mp.sqrt(v)) / mp.sqrt(v) ** order for v in Y]
            fit_mp(f"BESSEL_S{order} {name} (1 + y P(y))", target, [mp.mpf(1)] * len(Y), Y, y,
                   deg)
    w = chebyshev_nodes(1e-9, 1 / split, 300)
    W = [mp.mpf(v) for v in w]
    for name, deg in (("f32", 5), ("f64", 14)):
        for order in (0, 1):
            target = [mp.sqrt(1 / v) * mp.exp(-1 / v) * mp.besseli(order, 1 / v) for v in W]
            fit_mp(f"BESSEL_G{order} {name} (1/sqrt(2 pi) + w P(w))", target,
                   [1 / mp.sqrt(2 * mp.pi)] * len(W), W, w, deg)


# --- per-cell polynomials, looked up in vector_isa's tables ---------------------------------

def tanh32_cells():
    """float32 tanh on 32 cells of |x|: cell 0 is [0, 5/64), cells 1-31 quarter octaves from
    5/64 to 16 (the index is |x|'s exponent and top two mantissa bits, less 4 (127 - 4), at
    least 0). Left edges d_j (0 for cell 0)."""
    edges = [0.0] + [2.0 ** e * (1 + q / 4) for e in range(-4, 4) for q in range(4)][1:] + [16.0]
    return edges[:-1], edges[1:]


def fit_cell(f, lo, hi, d, degree, through_zero, n=3000, first=0, lead=False):
    """float32 coefficients (lowest first) of P(r), r = x - d, with f(x) ~ P(r) on [lo, hi],
    least squares on the relative error at evenly spaced points; `through_zero`: P(r) = r +
    r^2 Q(r) (f(0) = 0, f'(0) = 1, so tiny arguments keep their relative accuracy); `first`:
    the lowest power fitted (1: P(r) = r Q(r), f(d) = 0, every coefficient free); `lead`:
    P(r) = r + the fitted powers (returned without the r), so that a coefficient of r near 1
    is stored as its small difference from 1, which float32 holds to 2^-24 of itself. Each
    coefficient is rounded to float32 in turn and the later ones refitted to what the
    rounding left: rounding them all at once left errors of a fixed sign over whole cells
    (float32 tanh: up to half an ulp on average), which a training loop adds up (a small
    MLP's gradients after 300 steps moved 7x further from float64's than with the unbiased
    expm1 form)."""
    x = L(lo) + (L(hi) - L(lo)) * (np.arange(n) + L(0.5)) / n
    fx, r = f(x), x - L(d)
    w = (1 / fx).astype(np.float64)
    low = 2 if through_zero else first
    powers = [r ** k for k in range(low, degree + 1)]
    fixed = [0.0, 1.0] if through_zero else [0.0] * first
    target = fx - (r if through_zero or lead else 0)
    chosen = []
    for i in range(len(powers)):
        done = sum((L(c) * p for c, p in zip(chosen, powers)), L(0) * r)
        A = np.stack([p.astype(np.float64) for p in powers[i:]], axis=1) * w[:, None]
        scale = np.linalg.norm(A, axis=0)
        resid = ((target - done) * w).astype(np.float64)
        c = np.linalg.lstsq(A / scale, resid, rcond=None)[0] / scale
        for _ in range(2):  # refined on the long-double residual
            approx = done + sum((L(ci) * p for ci, p in zip(c, powers[i:])), L(0) * r)
            c = c + np.linalg.lstsq(A / scale, ((target - approx) * w).astype(np.float64),
                                    rcond=None)[0] / scale
        chosen.append(float(np.float32(c[0])))
    coeffs = fixed + chosen
    approx = np.polynomial.polynomial.polyval(r, np.array(coeffs, dtype=L)) + (r if lead else 0)
    return np.array(coeffs), float(np.max(np.abs((approx - fx) / fx)))


def log32_cells():
    """float32 log on the 16 cells of m = getmant(x) in [3/4, 3/2) that its top four
    mantissa bits pick (cells 0-7: [1, 3/2) in steps of 1/16; 8-15: [3/4, 1) in steps of
    1/32). The cells beside m = 1 (0 and 15) have no r^1 term beyond r itself, so that
    log(1 + r) keeps its relative accuracy as r goes to 0."""
    lows = [1 + j / 16 if j < 8 else (1 + j / 16) / 2 for j in range(16)]
    highs = [1 + (j + 1) / 16 if j < 8 else (1 + (j + 1) / 16) / 2 for j in range(16)]
    return lows, highs


def fit_cells(f, cells, degree, options):
    """Rows of fit_cell over each cell (lows, highs, left edges) and the worst error."""
    rows, worst = [], 0.0
    for j, (lo, hi, d) in enumerate(zip(*cells)):
        c, err = fit_cell(f, lo, hi, d, degree, **options(j))
        rows.append(tuple(float(np.float32(v)) for v in c))
        worst = max(worst, err)
    return rows, worst


def write_tables(path):
    """jitviz/backends/cpu/vecmath_tables.py: the per-cell coefficients."""
    lows, highs = tanh32_cells()
    rows, worst = fit_cells(np.tanh, (lows, highs, lows), 5,
                            options=lambda j: {"through_zero": j == 0})
    print(f"TANH32 cells: degree 5, max rel error {worst:.3g} ({np.log2(worst):.1f} bits)")
    log_lows, log_highs = log32_cells()
    log_rows, log_worst = fit_cells(np.log, (log_lows, log_highs, [1.0] * 16), 4,
                                    options=lambda j: {"through_zero": False, "lead": True,
                                                       "first": 2 if j in (0, 15) else 1})
    log_rows = [row[1:] for row in log_rows]  # (the constant term is 0: log(1) = 0)
    print(f"LOG32 cells: degree 4, max rel error {log_worst:.3g} "
          f"({np.log2(log_worst):.1f} bits)")
    header = (
        "Per-cell polynomial coefficients for vecmath's table-driven functions, written by\n"
        "`python scripts/fit_vecmath.py --tables` (do not edit).\n\n"
        "TANH32: float32 tanh on the cells of `tanh32_cells` there (left edges\n"
        f"TANH32_D), P(r) = sum c_i r^i with r = |x| - d_j, degree 5: {worst:.3g} relative.\n"
        "LOG32: float32 log(m) on the cells of `log32_cells` there, r + r Q(r) with r = m - 1\n"
        f"and Q(r) = sum c_i r^i of degree 3 (lowest first): {log_worst:.3g} relative.\n")
    with open(path, "w") as out:
        out.write(f'"""{header}"""\n\n')
        out.write("TANH32_D = (" + ", ".join(repr(float(np.float32(v))) for v in lows) + ")\n")
        for name, table in (("TANH32_C", rows), ("LOG32_C", log_rows)):
            out.write(f"{name} = (\n" + "".join(f"    ({', '.join(repr(v) for v in row)}),\n"
                                                 for row in table) + ")\n")


if __name__ == "__main__":
    if "--tables" in sys.argv:
        write_tables(TABLES)
    else:
        main()
        fit_tan()
        fit_erf()
        fit_erf_inv()
        fit_gamma()
        fit_bessel()
