"""`lax.lgamma`, `digamma`, `igamma`, `igammac`, `betainc` (`regularized_incomplete_beta`),
`bessel_i0e`, `bessel_i1e`, `zeta` and `polygamma`: the special functions as primitives.

Each primitive has a scalar helper, plain Python that Numba compiles for the CPU and for CUDA
(and that the NumPy interpreter and CUDA's simulator run as Python, so a helper never lets a
domain error, a division by zero or an overflow reach Python's `math`: special values are
settled first). The helpers compute in float64 whatever the operand's dtype, and return the
special values JAX 0.10 returns (poles, negative integers, infinities, NaN). CPU kernels
call lgamma's and digamma's only where vecmath_gamma.py's vectorized functions do not
reach, float64 lgamma of x <= 0, and bessel_ie's never (vecmath_bessel.py).

The algorithms, from the mathematics:
  lgamma     libm's lgamma, with the poles (0, negative integers) as +inf, and x (log x - 1)
             above 1e305 (where Python's math.lgamma raises OverflowError)
  digamma    reflection below 1/2, the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then
             the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k)
  igamma(c)  the power series of P(a, x) below x = a + 1, Lentz's continued fraction of
             Q(a, x) above; the other one as the complement
  betainc    the continued fraction of I_x(a, b), on the side of (a + 1) / (a + b + 2) where
             it converges fast (the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) on the other)
  i0e, i1e   the power series of I_nu(x) e^-|x| up to |x| = 25, the asymptotic expansion above
  zeta       Hurwitz's zeta by Euler-Maclaurin summation: 9 terms (at least up to q + k > 9),
             the integral and the Bernoulli corrections
  polygamma  (-1)^(n+1) n! zeta(n + 1, x), digamma for n = 0, NaN for n not a natural number

Derivatives as JAX defines them: lgamma' = digamma, digamma' = polygamma(1, .),
d igamma / dx = x^(a-1) e^-x / Gamma(a), d betainc / dx = x^(a-1) (1-x)^(b-1) / B(a, b),
d polygamma(n, x) / dx = polygamma(n + 1, x), i0e' = i1e - sign(x) i0e,
i1e' = i0e - i1e (sign(x) + 1/x). Not differentiable, as in JAX: betainc in a and b, polygamma
in n. igamma's derivative in a is the primitive igamma_grad_a (the series or continued
fraction differentiated alongside its value), as in JAX. jitviz lacks zeta's derivative in s
and igamma_grad_a's own: differentiating in those gives NaN, so that a gradient never
silently drops them. zeta has a derivative in q here (-s zeta(s + 1, q)), which JAX does not define.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from . import primitives as P
from .elementwise import broadcast_shapes_scalar

# --- scalar helpers (each self-contained: Numba compiles each on its own) --------------------


def lgamma_scalar(x_in):
    x = np.float64(x_in)  # np.float64: Numba types float() of a float32 as float32
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0.0 and math.floor(x) == x):
        return math.inf
    if x > 1e305:  # where Python's math.lgamma raises OverflowError from 2.56e305 on: there
        # lgamma = x (log x - 1) to the last bit (Python floats overflow to inf, no warning)
        return float(x) * (math.log(x) - 1.0)
    return math.lgamma(x)


def digamma_scalar(x_in):
    x = np.float64(x_in)
    if math.isnan(x) or x == -math.inf or (x <= 0.0 and math.floor(x) == x):
        return math.nan
    if x == math.inf:
        return math.inf
    result = 0.0
    if x < 0.5:
        # psi(x) = psi(1 - x) - pi cot(pi x); cot has period 1, so reduce x first (pi * x
        # itself would lose the digits that matter far from 0)
        # (to [-1/2, 1/2]: near 0, x itself, so psi(-1e-30) keeps its 1e30)
        reduced = x - math.floor(x + 0.5)
        result = -math.pi / math.tan(math.pi * reduced)
        x = 1.0 - x
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    # sum_k B_2k / (2k) z^k for k = 1..7
    tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (
        1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return result + math.log(x) - 0.5 / x - tail


def incomplete_gamma_scalar(a_in, x_in, upper):
    """P(a, x), or Q(a, x) = 1 - P(a, x) when `upper`."""
    a = np.float64(a_in)  # np.float64: Numba types float() of a float32 as float32
    x = np.float64(x_in)
    if math.isnan(a) or math.isnan(x) or a < 0.0 or x < 0.0:
        return math.nan
    if a == 0.0 and x > 0.0 and upper:
        return 0.0  # JAX's Q(0, x) (its P(0, x) is NaN below x = 1)
    if a == 0.0 or a == math.inf:
        # JAX's values: P(0, x >= 1) = P(inf, inf) = 1, P(inf, x < 1) = 0, NaN otherwise
        if x == math.inf or (a == 0.0 and x >= 1.0):
            lower = 1.0
        elif a == math.inf and x < 1.0:
            lower = 0.0
        else:
            return math.nan
    elif x == 0.0:
        lower = 0.0
    elif x == math.inf:
        lower = 1.0
    elif x < a + 1.0:
        # P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)): positive terms
        term, total, n = 1.0, 1.0, 0
        while term > total * 1e-17 and n < 100000:
            n += 1
            term *= x / (a + n)
            total += term
        lower = math.exp(a * math.log(x) - x - math.lgamma(a + 1.0)) * total
    else:
        # Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), by
        # modified Lentz: f = b0 prod(C_n D_n)
        tiny = 1e-300
        b = x + 1.0 - a
        c = 1.0 / tiny
        d = 1.0 / b
        h = d
        n = 0
        delta = 0.0
        while abs(delta - 1.0) > 1e-16 and n < 100000:
            n += 1
            an = -n * (n - a)
            b += 2.0
            d = an * d + b
            d = tiny if abs(d) < tiny else d
            c = b + an / c
            c = tiny if abs(c) < tiny else c
            d = 1.0 / d
            delta = d * c
            h *= delta
        q = math.exp(a * math.log(x) - x - math.lgamma(a)) * h
        return (1.0 - q) if not upper else q
    return (1.0 - lower) if upper else lower


def igamma_grad_a_scalar(a_in, x_in, per_dx):
    """dP(a, x)/da, by differentiating the series of P (below x = a + 1) or the continued
    fraction of Q (above) in a alongside their values: forward mode, term by term. With
    `per_dx`, -(dP/da) / (dP/dx), the derivative of a Gamma(a) sample x (random_gamma_grad):
    the common factor x^a e^-x / Gamma(a) cancels, so it stays finite where both underflow."""
    a = np.float64(a_in)
    x = np.float64(x_in)
    if math.isnan(a) or math.isnan(x) or a <= 0.0 or x < 0.0 or math.isinf(a):
        return math.nan
    if x == 0.0 or x == math.inf:
        return 0.0
    log_x = math.log(x)
    if x < a + 1.0:
        # P = e^(a log x - x - lgamma(a + 1)) S, S = sum_n prod_k x / (a + k)
        term, total, d_term, d_total, harmonic, n = 1.0, 1.0, 0.0, 0.0, 0.0, 0
        while (term > total * 1e-17 or abs(d_term) > abs(d_total) * 1e-17) and n < 100000:
            n += 1
            term *= x / (a + n)
            harmonic += 1.0 / (a + n)
            d_term = -term * harmonic
            total += term
            d_total += d_term
        shift = a + 1.0  # digamma(a + 1) by recurrence and the asymptotic series
        psi = 0.0
        while shift < 10.0:
            psi -= 1.0 / shift
            shift += 1.0
        z = 1.0 / (shift * shift)
        psi += math.log(shift) - 0.5 / shift - z * (1.0 / 12 - z * (1.0 / 120 - z * (
            1.0 / 252 - z * (1.0 / 240 - z / 132.0))))
        slope = total * (log_x - psi) + d_total
        if per_dx:  # dP/dx = x^(a-1) e^-x / Gamma(a) = front * a / x
            return -slope * x / a
        return math.exp(a * log_x - x - math.lgamma(a + 1.0)) * slope
    # Q = e^(a log x - x - lgamma(a)) F, F by Lentz's method; each quantity with its
    # derivative in a (d_*)
    tiny = 1e-300
    b = x + 1.0 - a
    c, d_c = 1.0 / tiny, 0.0
    d = 1.0 / b
    d_d = d * d  # d(1/b)/da = -(-1)/b^2
    h, d_h = d, d_d
    n = 0
    delta, d_delta = 0.0, 1.0
    # until the derivative converges too (at a = 1 the fraction ends at once, its slope not)
    while ((abs(delta - 1.0) > 1e-16 or abs(h * d_delta) > 1e-16 * abs(d_h))
           and n < 100000):
        n += 1
        an = -n * (n - a)
        d_an = float(n)
        b += 2.0
        denom = an * d + b
        d_denom = d_an * d + an * d_d - 1.0
        if abs(denom) < tiny:
            denom = tiny
        d = 1.0 / denom
        d_d = -d_denom * d * d
        c_new = b + an / c
        d_c = -1.0 + (d_an * c - an * d_c) / (c * c)
        c = tiny if abs(c_new) < tiny else c_new
        delta = d * c
        d_delta = d_d * c + d * d_c
        d_h = d_h * delta + h * d_delta
        h *= delta
    shift = a  # digamma(a)
    psi = 0.0
    while shift < 10.0:
        psi -= 1.0 / shift
        shift += 1.0
    z = 1.0 / (shift * shift)
    psi += math.log(shift) - 0.5 / shift - z * (1.0 / 12 - z * (1.0 / 120 - z * (
        1.0 / 252 - z * (1.0 / 240 - z / 132.0))))
    slope = h * (log_x - psi) + d_h
    if per_dx:  # dP/dx = front / x
        return slope * x
    return -math.exp(a * log_x - x - math.lgamma(a)) * slope


def betainc_scalar(a_in, b_in, x_in):
    """I_x(a, b), the regularized incomplete beta function."""
    a = np.float64(a_in)
    b = np.float64(b_in)
    x = np.float64(x_in)
    if (math.isnan(a) or math.isnan(b) or math.isnan(x) or a < 0.0 or b < 0.0
            or x < 0.0 or x > 1.0 or (a == 0.0 and b == 0.0)
            or (a == math.inf and b == math.inf)):
        return math.nan
    if x == 1.0:
        return 1.0
    if x == 0.0 or b == 0.0 or a == math.inf:
        return 0.0
    if a == 0.0 or b == math.inf:
        return 1.0
    swap = x > (a + 1.0) / (a + b + 2.0)
    p, q, y = (b, a, 1.0 - x) if swap else (a, b, x)
    # the prefactor y^p (1 - y)^q / (p B(p, q)), the same on both sides but for p
    log_front = (a * math.log(x) + b * math.log1p(-x)
                 - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)))
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (p + q) * y / (p + 1.0)
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    m = 0
    delta = 0.0
    while abs(delta - 1.0) > 1e-16 and m < 100000:
        m += 1
        # the even step d_2m, then the odd step d_2m+1 of the continued fraction
        coef = m * (q - m) * y / ((p + 2.0 * m - 1.0) * (p + 2.0 * m))
        d = 1.0 + coef * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + coef / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        coef = -(p + m) * (p + q + m) * y / ((p + 2.0 * m) * (p + 2.0 * m + 1.0))
        d = 1.0 + coef * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + coef / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
    value = math.exp(log_front) * h / p
    return 1.0 - value if swap else value


def bessel_ie_scalar(x_in, order):
    """I_order(x) e^-|x| for order 0 or 1."""
    x = np.float64(x_in)
    if math.isnan(x):
        return x
    ax = abs(x)
    if ax == math.inf:
        return math.copysign(0.0, x) if order == 1 else 0.0
    if ax <= 25.0:
        # sum_k (x/2)^(2k + nu) / (k! (k + nu)!): positive terms
        half = 0.5 * ax
        term = half if order == 1 else 1.0
        total = term
        k = 0
        while term > total * 1e-17 and k < 500:
            k += 1
            term *= half * half / (k * (k + order))
            total += term
        value = total * math.exp(-ax)
    else:
        # e^x / sqrt(2 pi x) sum_k (-1)^k prod_j (4 nu^2 - (2j - 1)^2) / (k! (8x)^k)
        mu = 4.0 * order * order
        term, total, k = 1.0, 1.0, 0
        while abs(term) > abs(total) * 1e-17 and k < 60:
            k += 1
            term *= -(mu - (2.0 * k - 1.0) ** 2) / (k * 8.0 * ax)
            total += term
        value = total / math.sqrt(2.0 * math.pi * ax)
    return math.copysign(value, x) if order == 1 else value  # i1e is odd, i0e even


def _bernoulli_over_factorial(count):
    """B_2j / (2j)! for j = 1..count, from the recurrence sum_k C(n+1, k) B_k = 0."""
    bern = [Fraction(1)]
    for n in range(1, 2 * count + 1):
        bern.append(-sum(math.comb(n + 1, k) * bern[k] for k in range(n)) / (n + 1))
    return tuple(float(bern[2 * j] / math.factorial(2 * j)) for j in range(1, count + 1))


ZETA_BERNOULLI = _bernoulli_over_factorial(13)


def zeta_scalar(s_in, q_in):
    """Hurwitz's zeta(s, q) = sum_k (q + k)^-s."""
    s = np.float64(s_in)
    q = np.float64(q_in)
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == 1.0:
        return math.inf
    if math.isinf(s) or q == math.inf or s < 1.0:
        return math.nan
    integral_s = math.floor(s) == s
    if q <= 0.0:
        if q == -math.inf or math.floor(q) == q:  # a pole: +inf for even s, else NaN
            return math.inf if integral_s and math.floor(s * 0.5) * 2.0 == s else math.nan
        if not integral_s:
            return math.nan
    total = 0.0
    w = q
    k = 0
    while k < 9 or w <= 9.0:
        log_term = -s * math.log(abs(w))
        if log_term > 709.0:  # the term overflows; its sign is that of w^-s
            negative = w < 0.0 and math.floor(s * 0.5) * 2.0 != s
            return -math.inf if negative else math.inf
        term = math.exp(log_term)
        if w < 0.0 and math.floor(s * 0.5) * 2.0 != s:
            term = -term
        total += term
        w += 1.0
        k += 1
        if abs(term) <= abs(total) * 1e-17:
            return total
    # Euler-Maclaurin: the integral, half the first omitted term, the Bernoulli corrections
    power = math.exp(-s * math.log(w))  # w^-s
    total += w * power / (s - 1.0) + 0.5 * power
    rising = s  # s (s + 1) ... (s + 2j - 2)
    wpow = power / w  # w^(-s - 2j + 1)
    for j in range(len(ZETA_BERNOULLI)):
        correction = ZETA_BERNOULLI[j] * rising * wpow
        total += correction
        if abs(correction) <= abs(total) * 1e-17:
            break
        rising *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0)
        wpow /= w * w
    return total


def polygamma_combine(n_in, digamma_x, zeta_n1_x):
    """psi^(n)(x) from digamma(x) and zeta(n + 1, x): NaN unless n is a natural number."""
    n = np.float64(n_in)
    if math.isnan(n) or math.isinf(n) or n < 0.0 or math.floor(n) != n:
        return math.nan
    if n == 0.0:
        return digamma_x
    if math.isnan(zeta_n1_x) or zeta_n1_x == 0.0:
        return zeta_n1_x
    sign = 1.0 if math.floor(n * 0.5) * 2.0 != n else -1.0
    # n! zeta: in logarithms, so n! may overflow where the product does not
    log_mag = math.lgamma(n + 1.0) + math.log(abs(zeta_n1_x))
    if log_mag > 709.0:
        mag = math.inf
    else:
        mag = math.exp(log_mag)
    return sign * math.copysign(mag, zeta_n1_x)


# --- the primitives ---------------------------------------------------------------------------

def _float_rule(name, arity):
    def rule(*avals):
        dtypes = {a.dtype for a in avals}
        if len(dtypes) > 1:
            raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                            + ", ".join(a.dtype.name for a in avals) + ".")
        P._check_kind(name, avals[0].dtype, P.FLOAT)
        shape = broadcast_shapes_scalar(name, *(a.shape for a in avals))
        return ShapedArray(shape, avals[0].dtype, all(a.weak_type for a in avals))
    return rule


def _numpy_impl(scalar, *extra):
    """The interpreter's implementation: the helper on each element, in float64."""
    vectorized = np.vectorize(lambda *xs: scalar(*xs, *extra), otypes=[np.float64])

    def impl(*args):
        args = [np.asarray(a) for a in args]
        out = vectorized(*[a.astype(np.float64) for a in args])
        return np.asarray(out).astype(args[0].dtype)
    return impl


def _define(name, arity, scalar, *extra):
    from ..backends.numba_expr import register_shared
    prim = primitive(name, abstract_eval=_float_rule(name, arity),
                     impl=_numpy_impl(scalar, *extra), kind="elementwise")
    literals = [repr(e) for e in extra]

    def render(d, args, ins, out, params):
        return f"{d.helper(scalar.__name__)}({', '.join(list(args) + literals)})"
    register_shared(prim, render, helpers=[scalar])
    return prim


lgamma_p = _define("lgamma", 1, lgamma_scalar)
digamma_p = _define("digamma", 1, digamma_scalar)
igamma_p = _define("igamma", 2, incomplete_gamma_scalar, False)
igammac_p = _define("igammac", 2, incomplete_gamma_scalar, True)
regularized_incomplete_beta_p = _define("regularized_incomplete_beta", 3, betainc_scalar)
bessel_i0e_p = _define("bessel_i0e", 1, bessel_ie_scalar, 0)
bessel_i1e_p = _define("bessel_i1e", 1, bessel_ie_scalar, 1)
zeta_p = _define("zeta", 2, zeta_scalar)
igamma_grad_a_p = _define("igamma_grad_a", 2, igamma_grad_a_scalar, False)
random_gamma_grad_p = _define("random_gamma_grad", 2, igamma_grad_a_scalar, True)


def _polygamma_impl(n, x):
    n, x = np.asarray(n), np.asarray(x)
    d = _numpy_impl(digamma_scalar)(x.astype(np.float64))
    z = _numpy_impl(zeta_scalar)(n.astype(np.float64) + 1.0, x.astype(np.float64))
    return _numpy_impl(polygamma_combine)(n.astype(np.float64), d, z).astype(x.dtype)


def _register_polygamma():
    from ..backends.numba_expr import register_shared
    prim = primitive("polygamma", abstract_eval=_float_rule("polygamma", 2),
                     impl=_polygamma_impl, kind="elementwise")

    def render(d, args, ins, out, params):
        n, x = (d.group(a) for a in args)
        return (f"{d.helper('polygamma_combine')}({n}, {d.helper('digamma_scalar')}({x}), "
                f"{d.helper('zeta_scalar')}({n} + 1.0, {x}))")
    register_shared(prim, render, helpers=[polygamma_combine, digamma_scalar, zeta_scalar])
    return prim


polygamma_p = _register_polygamma()


# --- derivatives and batching -----------------------------------------------------------------

def _jnp():
    from .. import numpy as jnp
    return jnp


def _nan_like(x):
    return _jnp().full_like(x, np.nan)


def _i0e_slope(x, out):
    return bessel_i1e(x) - _jnp().sign(x) * out


def _i1e_slope(x, out):
    jnp = _jnp()
    safe = jnp.where(x == 0, jnp.ones_like(x), x)
    # at 0: i1e'(0) = 1/2 (the limit of i0e - i1e (sign x + 1/x))
    return jnp.where(x == 0, jnp.full_like(x, 0.5),
                     bessel_i0e(x) - out * (jnp.sign(x) + 1 / safe))


def _igamma_slope_x(a, x):
    jnp = _jnp()
    return jnp.exp(-x + (a - 1) * jnp.log(x) - lgamma(a))


def _betainc_slope_x(a, b, x):
    jnp = _jnp()
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    return jnp.exp((a - 1) * jnp.log(x) + (b - 1) * jnp.log1p(-x) - log_beta)


# prim -> one function per operand: (operands, out) -> the partial derivative; None: the
# operand is not differentiable (JAX raises); "nan": jitviz lacks the derivative
PARTIALS = {
    lgamma_p: [lambda x, out: digamma(x)],
    digamma_p: [lambda x, out: polygamma(_jnp().ones_like(x), x)],
    igamma_p: [lambda a, x, out: igamma_grad_a(a, x), lambda a, x, out: _igamma_slope_x(a, x)],
    igammac_p: [lambda a, x, out: -igamma_grad_a(a, x),
                lambda a, x, out: -_igamma_slope_x(a, x)],
    igamma_grad_a_p: ["nan", "nan"],
    random_gamma_grad_p: ["nan", "nan"],
    regularized_incomplete_beta_p: [None, None,
                                    lambda a, b, x, out: _betainc_slope_x(a, b, x)],
    bessel_i0e_p: [lambda x, out: _i0e_slope(x, out)],
    bessel_i1e_p: [lambda x, out: _i1e_slope(x, out)],
    zeta_p: ["nan", lambda s, q, out: -s * zeta(s + 1, q)],
    polygamma_p: [None, lambda n, x, out: polygamma(n + 1, x)],
}

# the primitives with an operand that has no derivative (JAX raises, or jitviz gives NaN):
# generic transpose checks that differentiate every float operand leave them out; their
# derivatives in the other operands are tested in tests/test_special.py
PARTLY_DIFFERENTIABLE = frozenset(prim.name for prim, rules in PARTIALS.items()
                                  if any(r is None or r == "nan" for r in rules))

_NOT_DIFFERENTIABLE = {
    regularized_incomplete_beta_p: "Betainc gradient with respect to a and b not supported.",
    polygamma_p: "polygamma gradient with respect to m is not supported",
}


def _partial(prim, i, primals, out):
    rule = PARTIALS[prim][i]
    if rule is None:
        raise ValueError(_NOT_DIFFERENTIABLE[prim])
    if rule == "nan":
        return _nan_like(primals[i])
    return rule(*primals, out)


def _jvp(prim):
    def rule(primals, tangents):
        out = prim.bind(*primals)
        t_out = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            term = t * _partial(prim, i, primals, out)
            t_out = term if t_out is None else t_out + term
        return out, t_out
    return rule


def _vjp(prim):
    def rule(ct, primals, out):
        cts = []
        for i, x in enumerate(primals):
            if PARTIALS[prim][i] is None:
                # the operand may be inactive: the rule cannot tell, so no error here (JAX
                # raises when it is differentiated); its cotangent is NaN, never a silent 0
                cts.append(ct * _nan_like(x))
                continue
            cts.append(_unbroadcast(ct * _partial(prim, i, primals, out), x))
        return cts
    return rule


def _unbroadcast(ct, x):
    """`ct` summed down to the shape of operand `x` (a rank-0 operand broadcast)."""
    from .. import lax
    shape = lax.aval_of(x).shape
    ct_shape = lax.aval_of(ct).shape
    if ct_shape == shape:
        return ct
    jnp = _jnp()
    if shape == ():
        return jnp.sum(ct)
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, ct_shape)) if a == 1 and b != 1)
    return jnp.sum(ct, axis=axes, keepdims=True)


def _register_transformation_rules():
    from ..transforms import register_batch, register_jvp, register_vjp
    from ..transforms.batching import elementwise_rule
    for prim in PARTIALS:
        register_jvp(prim, _jvp(prim))
        register_vjp(prim, _vjp(prim))
        register_batch(prim, elementwise_rule(prim))


_register_transformation_rules()


# --- the lax functions ----------------------------------------------------------------------

def lgamma(x):
    """`jax.lax.lgamma`: log |Gamma(x)|; +inf at 0 and the negative integers."""
    return lgamma_p.bind(x)


def digamma(x):
    """`jax.lax.digamma`: Gamma'(x) / Gamma(x); NaN at 0 and the negative integers."""
    return digamma_p.bind(x)


def igamma(a, x):
    """`jax.lax.igamma`: the regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(a, x)


def igammac(a, x):
    """`jax.lax.igammac`: the regularized upper incomplete gamma function Q(a, x) = 1 - P."""
    return igammac_p.bind(a, x)


def betainc(a, b, x):
    """`jax.lax.betainc`: the regularized incomplete beta function I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


def bessel_i0e(x):
    """`jax.lax.bessel_i0e`: exp(-|x|) I0(x)."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x):
    """`jax.lax.bessel_i1e`: exp(-|x|) I1(x)."""
    return bessel_i1e_p.bind(x)


def zeta(x, q):
    """`jax.lax.zeta`: Hurwitz's zeta function sum_k (q + k)^-x."""
    return zeta_p.bind(x, q)


def igamma_grad_a(a, x):
    """`jax.lax.igamma_grad_a`: the derivative of igamma(a, x) in a."""
    return igamma_grad_a_p.bind(a, x)


def random_gamma_grad(a, x):
    """`jax.lax.random_gamma_grad`: the derivative in a of a Gamma(a, 1) sample x, holding its
    cdf P(a, x) fixed: -(dP/da) / (dP/dx)."""
    return random_gamma_grad_p.bind(a, x)


def polygamma(m, x):
    """`jax.lax.polygamma`: the m-th derivative of digamma (m a natural number, else NaN)."""
    return polygamma_p.bind(m, x)
