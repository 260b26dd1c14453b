"""`jitviz.scipy.special`, as `jax.scipy.special`, composed from `jitviz.numpy` / `jitviz.lax`.

`erf`, `erfc` and `erfinv` are the `lax` primitives (any float); `ndtr` and `log_ndtr` are
JAX's formulas over them (float32 and float64, log_ndtr with JAX's custom derivative); `ndtri`
is JAX's own rational approximation (any float). The gamma family, incomplete gamma and beta
functions, Bessel functions and zeta are the primitives of `jitviz/lax/special.py`, with JAX's
promotion (integers and bools become the default float) and JAX's values at poles and outside
the domain.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp


def _inexact(*args):
    from ..numpy._core import promote
    return promote(*args, inexact=True)


def _dtype(x):
    return lax.aval_of(x).dtype


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """`jax.scipy.special.logsumexp`: log(sum(b * exp(a))) without overflow — the finite
    maximum is subtracted first (0 for a row of -inf, whose result is then -inf). With `b`,
    a negative sum gives NaN, or its sign with `return_sign=True`."""
    if where is not None:
        a = jnp.where(where, a, -np.inf)
    if b is not None:
        a, b = _inexact(a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        (a,) = _inexact(a)
    from ..numpy._core import canonical_axes
    dims = canonical_axes(axis, lax.aval_of(a).ndim)
    amax = jnp.max(a, axis=dims, keepdims=True, initial=-np.inf)
    # (JAX stops the gradient here; d/d amax of the result is exactly 0 anyway)
    amax = jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax))
    exp_a = jnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims)
    sign = jnp.sign(sumexp)
    amax = amax if keepdims else jnp.squeeze(amax, dims)
    out = jnp.log(jnp.abs(sumexp)) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, jnp.asarray(np.nan, _dtype(out)), out)
    return out


def expit(x):
    """`jax.scipy.special.expit`: the logistic sigmoid."""
    (x,) = _inexact(x)
    return lax.logistic(x)


def logit(x):
    """`jax.scipy.special.logit`: log(x / (1 - x))."""
    (x,) = _inexact(x)
    return jnp.log(x / (1 - x))


def _x_times_log(log):
    """x * log(y), 0 where x == 0 (unless y is NaN), with JAX's derivative: d/dx is log(y)
    also at x == 0 (the select alone would give 0 there), d/dy is x / y'."""
    from ..custom_derivatives import custom_jvp

    @custom_jvp
    def product(x, y):
        return jnp.where((x != 0) | jnp.isnan(y), x * log(y), jnp.zeros_like(x * y))

    def derivative(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        slope_y = x / (1 + y) if log is jnp.log1p else x / y
        return product(x, y), x_dot * log(y) + y_dot * slope_y
    product.defjvp(derivative)
    return product


_xlogy = _x_times_log(jnp.log)
_xlog1py = _x_times_log(jnp.log1p)


def xlogy(x, y):
    """`jax.scipy.special.xlogy`: x * log(y), 0 where x == 0 (unless y is NaN)."""
    return _xlogy(*_inexact(x, y))


def xlog1py(x, y):
    """`jax.scipy.special.xlog1py`: x * log1p(y), 0 where x == 0 (unless y is NaN)."""
    return _xlog1py(*_inexact(x, y))


def entr(x):
    """`jax.scipy.special.entr`: -x log x for x > 0, 0 at 0, -inf below."""
    (x,) = _inexact(x)
    return jnp.where(x < 0, jnp.full_like(x, -np.inf), -xlogy(x, x))


def _normal_float(x, name):
    """`x` as float32 or float64, JAX's TypeError for other dtypes (ndtr and log_ndtr)."""
    (x,) = _inexact(x)
    dt = _dtype(x)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dt} is not supported, see docstring for supported types "
                        f"({name} takes float32 or float64)")
    return x


def ndtr(x):
    """`jax.scipy.special.ndtr`: the standard normal CDF, JAX's formula on the `lax.erf` /
    `lax.erfc` primitives (so float64 is accurate under x64): 1 + erf near 0, erfc in the
    tails (so ndtr(-9) keeps its relative accuracy)."""
    return _ndtr(_normal_float(x, "ndtr"))


def _ndtr(x):
    # (Python numbers are weakly typed: they take x's dtype)
    half_sqrt_2 = 0.5 * float(np.sqrt(2.0))
    w = x * half_sqrt_2
    z = jnp.abs(w)
    y = jnp.where(z < half_sqrt_2, 1.0 + lax.erf(w),
                  jnp.where(w > 0.0, 2.0 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


# where log_ndtr switches from log(ndtr(x)) to -ndtr(-x) (upper) and to the asymptotic series
# (lower), per dtype: JAX's segments
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def log_ndtr(x, series_order=3):
    """`jax.scipy.special.log_ndtr`: log(ndtr(x)), -ndtr(-x) above the upper segment and
    JAX's asymptotic series below the lower one; its derivative is JAX's custom rule
    exp(log pdf(x) - log_ndtr(x)), finite far into the tails."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr(_normal_float(x, "log_ndtr"), series_order)


def _log_ndtr_value(x, series_order):
    lower, upper = _LOG_NDTR_SEGMENTS[_dtype(x)]
    above = x > upper
    res = _ndtr(jnp.where(above, -x, jnp.maximum(x, lower)))
    return jnp.where(above, -res, jnp.where(x > lower, jnp.log(res),
                                             _log_ndtr_lower(jnp.minimum(x, lower),
                                                             series_order)))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _log_ndtr(x, series_order)
    return out, t * jnp.exp(_norm_logpdf(x) - out)


# log_ndtr's value with JAX's derivative rule (the series order is a Python number)
_log_ndtr = custom_jvp(_log_ndtr_value, nondiff_argnums=(1,))
_log_ndtr.defjvp(_log_ndtr_jvp)


def _norm_logpdf(x):
    return -0.5 * jnp.square(x) - float(np.log(np.sqrt(2 * np.pi)))


def _log_ndtr_lower(x, series_order):
    x_2 = jnp.square(x)
    log_scale = -0.5 * x_2 - jnp.log(-x) - float(0.5 * np.log(2.0 * np.pi))
    return log_scale + jnp.log(_asymptotic_series(x_2, series_order))


def _asymptotic_series(x_2, series_order):
    if series_order <= 0:
        return jnp.ones_like(x_2)
    even, odd, x_2n = jnp.zeros_like(x_2), jnp.zeros_like(x_2), x_2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 1, -2))) / x_2n  # (2n - 1)!! / x^2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x_2n = x_2n * x_2
    return 1.0 + even - odd


_NDTRI_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
             1.39312609387279679503e1, -1.23916583867381258016e0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
             -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
             1.59056225126211695515e1, -1.18331621121330003142e0)
_NDTRI_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
             4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
             -1.40256079171354495875e-1, -3.50424626827848203418e-2,
             -8.57456785154685413611e-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
             1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
             -3.80806407691578277194e-2, -9.33259480895457427372e-4)
_NDTRI_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
             1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
             3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
             2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
             2.89247864745380683936e-6, 6.79019408009981274425e-9)


def _polyval(coefs, x, dt):
    p = jnp.zeros_like(x)
    for c in coefs:
        p = p * x + np.asarray(c, dt)
    return p


def erf(x):
    """`jax.scipy.special.erf` (integer and boolean inputs become the default float)."""
    (x,) = _inexact(x)
    return lax.erf(x)


def erfc(x):
    """`jax.scipy.special.erfc`: 1 - erf(x), accurate in the tails."""
    (x,) = _inexact(x)
    return lax.erfc(x)


def erfinv(x):
    """`jax.scipy.special.erfinv`: the inverse error function (`lax.erf_inv`)."""
    (x,) = _inexact(x)
    return lax.erf_inv(x)


def ndtri(p):
    """`jax.scipy.special.ndtri`: the inverse normal CDF, JAX's (Cephes') piecewise rational
    approximation: one for the centre, two in sqrt(-2 log p) for the tails."""
    (p,) = _inexact(p)
    dt = _dtype(p)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dt} is not supported, see docstring for supported types.")
    c = lambda v: np.asarray(v, dt)  # noqa: E731
    mcp = jnp.where(p > c(-np.expm1(-2.0)), c(1.0) - p, p)
    mcp = jnp.where(mcp == c(0.0), jnp.full_like(mcp, 0.5), mcp)
    w = mcp - c(0.5)
    ww = jnp.square(w)
    x_big = (w + w * ww * (_polyval(_NDTRI_P0, ww, dt) / _polyval(_NDTRI_Q0, ww, dt))) \
        * -c(np.sqrt(2.0 * np.pi))
    z = jnp.sqrt(c(-2.0) * jnp.log(mcp))
    first = z - jnp.log(z) / z
    inv_z = c(1.0) / z
    x_small = first - _polyval(_NDTRI_P2, inv_z, dt) / _polyval(_NDTRI_Q2, inv_z, dt) / z
    x_other = first - _polyval(_NDTRI_P1, inv_z, dt) / _polyval(_NDTRI_Q1, inv_z, dt) / z
    x = jnp.where(mcp > c(np.exp(-2.0)), x_big, jnp.where(z >= c(8.0), x_small, x_other))
    x = jnp.where(p > c(1.0 - np.exp(-2.0)), x, -x)
    inf = jnp.full_like(x, np.inf)
    return jnp.where(p == c(0.0), -inf, jnp.where(p == c(1.0), inf, x))


# --- the gamma family, over the lax primitives (jitviz/lax/special.py) ---------------------

def gammaln(x):
    """`jax.scipy.special.gammaln`: log |Gamma(x)|, +inf at 0 and the negative integers."""
    (x,) = _inexact(x)
    return lax.lgamma(x)


loggamma = gammaln  # `jax.scipy.special.loggamma` (real arguments)


def gammasgn(x):
    """`jax.scipy.special.gammasgn`: the sign of Gamma(x): -1 on (-1, 0), (-3, -2), ... and at
    -0.0, NaN at the negative integers and NaN, +1 elsewhere."""
    (x,) = _inexact(x)
    dt = _dtype(x)
    floor_x = jnp.floor(x)
    negative = x < 0
    undefined = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (jnp.remainder(floor_x, 2) != 0)) | ((x == 0) & jnp.signbit(x))
    one = jnp.ones_like(x)
    return jnp.where(undefined, jnp.full_like(x, np.nan),
                     jnp.where(minus, -one, one)).astype(dt)


def gamma(x):
    """`jax.scipy.special.gamma`: gammasgn(x) exp(lgamma(x))."""
    (x,) = _inexact(x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def digamma(x):
    """`jax.scipy.special.digamma`: Gamma'(x) / Gamma(x)."""
    (x,) = _inexact(x)
    return lax.digamma(x)


def polygamma(n, x):
    """`jax.scipy.special.polygamma`: the n-th derivative of digamma; `n` must be integers."""
    if lax.aval_of(n).dtype.kind not in "iu":
        raise ValueError("Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{lax.aval_of(n).dtype}.")
    n, x = _inexact(n, x)
    n, x = _broadcast_pair(n, x)
    return lax.polygamma(n, x)


def zeta(x, q=None):
    """`jax.scipy.special.zeta`: Hurwitz's zeta sum_k (q + k)^-x (`q` is required, as in
    JAX)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = _broadcast_pair(*_inexact(x, q))
    return lax.zeta(x, q)


def _broadcast_pair(*args):
    """Operands of one shape, for the lax primitives (which take equal ranks only)."""
    shape = np.broadcast_shapes(*(lax.aval_of(a).shape for a in args))
    return tuple(jnp.broadcast_to(a, shape) for a in args)


def gammainc(a, x):
    """`jax.scipy.special.gammainc`: the regularized lower incomplete gamma P(a, x)."""
    return lax.igamma(*_broadcast_pair(*_inexact(a, x)))


def gammaincc(a, x):
    """`jax.scipy.special.gammaincc`: the regularized upper incomplete gamma Q(a, x)."""
    return lax.igammac(*_broadcast_pair(*_inexact(a, x)))


def betaln(a, b):
    """`jax.scipy.special.betaln`: log |B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    a, b = _inexact(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    """`jax.scipy.special.beta`: B(a, b), with the signs of the gamma functions."""
    a, b = _inexact(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def betainc(a, b, x):
    """`jax.scipy.special.betainc`: the regularized incomplete beta function I_x(a, b)."""
    return lax.betainc(*_broadcast_pair(*_inexact(a, b, x)))


def factorial(n, exact=False):
    """`jax.scipy.special.factorial`: Gamma(n + 1), 0 for negative n (exact=True is not
    supported, as in JAX)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _inexact(n)
    return jnp.where(n < 0, jnp.zeros_like(n), jnp.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
    """`jax.scipy.special.comb`: the binomial coefficient as a float, 0 outside 0 <= k <= N;
    with repetition, C(N + k - 1, k)."""
    N, k = _inexact(N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), jnp.ones_like(N + k),
                         comb(N + k - 1, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = jnp.where(inside, N, jnp.zeros_like(N))
    safe_k = jnp.where(inside, k, jnp.zeros_like(k))
    value = jnp.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return jnp.where(inside, value, jnp.zeros_like(value))


def poch(z, m):
    """`jax.scipy.special.poch`: the rising factorial Gamma(z + m) / Gamma(z), 1 for m = 0."""
    z, m = _inexact(z, m)
    ratio = gamma(z + m) / gamma(z)
    return jnp.where(m == 0, jnp.ones_like(ratio), ratio)


def multigammaln(a, d):
    """`jax.scipy.special.multigammaln`: log of the multivariate gamma function of dimension
    `d` (a Python integer): d (d - 1) / 4 log(pi) + sum_j lgamma(a - j / 2)."""
    from ..core.trace import Tracer
    if isinstance(d, Tracer):
        raise TypeError("the d argument of multigammaln must be a concrete integer: it sets "
                        "how many terms are summed; pass it as a Python int (or mark it "
                        "static in jit)")
    d = int(d)
    (a,) = _inexact(a)
    dt = _dtype(a)
    offsets = jnp.arange(d, dtype=dt) / np.asarray(2, dt)
    terms = gammaln(jnp.expand_dims(a, -1) - offsets)
    return jnp.sum(terms, axis=-1) + np.asarray(0.25 * d * (d - 1) * np.log(np.pi), dt)


def i0e(x):
    """`jax.scipy.special.i0e`: exp(-|x|) I0(x)."""
    (x,) = _inexact(x)
    return lax.bessel_i0e(x)


def i1e(x):
    """`jax.scipy.special.i1e`: exp(-|x|) I1(x)."""
    (x,) = _inexact(x)
    return lax.bessel_i1e(x)


def i0(x):
    """`jax.scipy.special.i0`: the modified Bessel function I0(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """`jax.scipy.special.i1`: the modified Bessel function I1(x)."""
    (x,) = _inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def rel_entr(p, q):
    """`jax.scipy.special.rel_entr`: p log(p / q) for p, q > 0, 0 for p = 0 <= q, inf
    otherwise."""
    p, q = _inexact(p, q)
    both_positive = (p > 0) & (q > 0)
    safe_p = jnp.where(both_positive, p, jnp.ones_like(p))
    safe_q = jnp.where(both_positive, q, jnp.ones_like(q))
    value = xlogy(safe_p, safe_p) - xlogy(safe_p, safe_q)
    edge = jnp.where((p == 0) & (q >= 0), jnp.zeros_like(value), jnp.full_like(value, np.inf))
    return jnp.where(both_positive, value, edge)


def kl_div(p, q):
    """`jax.scipy.special.kl_div`: rel_entr(p, q) - p + q."""
    p, q = _inexact(p, q)
    return rel_entr(p, q) - p + q


def softmax(x, /, *, axis=None):
    """`jax.scipy.special.softmax`: `jitviz.nn.softmax`, over every axis by default."""
    from .. import nn
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """`jax.scipy.special.log_softmax`: `jitviz.nn.log_softmax`, over every axis by
    default."""
    from .. import nn
    return nn.log_softmax(x, axis=axis)


__all__ = ["beta", "betainc", "erfinv", "log_softmax", "softmax", "betaln", "comb", "digamma", "factorial", "gamma", "gammainc",
           "gammaincc", "gammaln", "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "loggamma",
           "multigammaln", "poch", "polygamma", "rel_entr", "zeta",
           "entr", "erf", "erfc", "expit", "log_ndtr", "logit", "logsumexp", "ndtr", "ndtri",
           "xlog1py", "xlogy"]
