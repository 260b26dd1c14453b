"""`jax.random`'s distributions beyond uniform/normal, drawn the way JAX 0.10 draws them.

Each sampler is written over `jitviz.random`'s bit-exact `uniform`/`normal`/`randint`/
`split` and `jitviz.numpy`/`jitviz.lax`, following JAX's algorithm step by step (the same
uniform range, `log1p` where JAX uses it, the same key splits and per-element keys), so one key
gives JAX's samples: integer-valued samplers (`categorical`, `choice`, `rademacher`,
`geometric`, `poisson`, `binomial`, `multinomial`) exactly, float ones up to the last-ulp
differences of elementwise math (`log`, `exp`, `tan`, `pow`) between NumPy/Numba and XLA.
The rejection samplers (`gamma` and those built on it, `poisson`, `binomial`) accept or reject
a candidate by comparing such values, so a sample whose test lands within an ulp of the
boundary can take another round than JAX's and differ entirely (rare; none in the tests).

Argument checks raise JAX's exceptions with JAX's messages. One difference follows jitviz's
"float64 stays float64": `dtype=float64` without x64 gives float64 samples (JAX would draw
float32). Not here yet: `multivariate_normal` and `orthogonal` (they need jnp.linalg's
Cholesky/QR), `gumbel(mode="highest")`, and gamma's gradient with respect to `a`."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from . import dtypes
from . import lax
from . import numpy as jnp
from .core.trace import Tracer
from .random import normal, permutation, randint, split, uniform
from .transforms import vmap

# --- argument handling ---------------------------------------------------------------------------


def _check_key(name, key):
    """The key must be a uint32[2] raw key (a vmapped key arrives as one such key). Checked
    by its type only: reading its words would count as a use (KeyReuseWarning)."""
    from .transforms._util import aval_of
    av = aval_of(key if isinstance(key, Tracer) else np.asarray(key))
    if av.shape != (2,) or av.dtype != np.uint32:
        raise TypeError(f"{name}: a PRNG key is a uint32[2] array (from random.PRNGKey or "
                        f"random.split), got {av.str_short()}")


def _float_dtype(name, dtype, allow_complex=False):
    dt = dtypes.default_float() if dtype is None else np.dtype(dtype)
    if dt.kind == "f" and dt.itemsize in (4, 8):
        return dt
    kinds = "float or complex" if allow_complex else "float"
    if dt.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a {kinds} dtype, got {dt}")
    raise TypeError(f"{name}: jitviz draws float32 or float64 samples, got dtype={dt}; "
                    "pass dtype=jnp.float32 (or jnp.float64) and convert afterwards")


def _int_dtype(name, dtype):
    dt = dtypes.default_int() if dtype is None else np.dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dt}")
    return dt


def _canonical_shape(name, shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(operator.index(s)) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of non-negative integers, "
                        f"got {shape!r}") from None


def _shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _broadcast_shape(name, shape, *params):
    """JAX's rule: no shape -> the parameters' broadcast shape; a shape must already be the
    broadcast of itself with every parameter's shape."""
    param_shapes = [_shape_of(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()
    shape = _canonical_shape(name, shape)
    if param_shapes:
        try:
            combined = tuple(np.broadcast_shapes(shape, *param_shapes))
        except ValueError:
            combined = None
        if combined != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                f"and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {combined} for shape argument {shape}.")
    return shape


def _param(name, value, dt, shape=None):
    """A distribution parameter converted to the sample dtype (JAX refuses a complex one)."""
    arr = jnp.asarray(value)
    if arr.dtype.kind == "c":
        raise TypeError(
            f"In arguments to {name}, cannot safely cast argument of type {arr.dtype} to {dt}")
    arr = lax.convert_element_type(arr, dt)
    return arr if shape is None else jnp.broadcast_to(arr, shape)


def _pair(key, num=2):
    keys = split(key, num)
    return tuple(keys[i] for i in range(num))


def _finfo(dt):
    return np.finfo(dt)


# --- location-scale families from one uniform draw ----------------------------------------------


def exponential(key, shape=(), dtype=None):
    """Exponential(1): -log1p(-u), u uniform in [0, 1) (so log's argument is in (0, 1])."""
    _check_key("exponential", key)
    dt = _float_dtype("exponential", dtype)
    u = uniform(key, _canonical_shape("exponential", shape), dt)
    return -jnp.log1p(-u)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel(0, 1): -log(-log(u)). mode="low" (JAX's default) draws u in [tiny, 1);
    mode="high" adds a second uniform below the first's resolution where it is < 1/2."""
    _check_key("gumbel", key)
    dt = _float_dtype("gumbel", dtype)
    shape = _canonical_shape("gumbel", shape)
    mode = _gumbel_mode(mode)
    info = _finfo(dt)
    if mode == "low":
        u = uniform(key, shape, dt, minval=info.tiny, maxval=1.0)
        return -jnp.log(-jnp.log(u))
    both = uniform(key, (2,) + shape, dt)
    high, low = both[0], both[1]
    x = jnp.where(high >= 0.5, high, high + dt.type(2.0 ** -info.nmant) * low
                  + dt.type(info.tiny))
    return -jnp.log(-jnp.log1p(-x))


def _gumbel_mode(mode):
    if mode is None:
        from .config import config
        mode = "high" if getattr(config, "jax_use_high_dynamic_range_gumbel", False) else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    if mode == "highest":
        raise NotImplementedError(
            "gumbel(mode='highest') builds floats from raw bits with a count-leading-zeros "
            "and a bitcast, which jitviz has no primitive for; use mode='high' (about 2**-48 "
            "resolution near 0) instead")
    return mode


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1): sign(u) * log1p(-|u|), u uniform in [-1 + epsneg, 1)."""
    _check_key("laplace", key)
    dt = _float_dtype("laplace", dtype)
    u = uniform(key, _canonical_shape("laplace", shape), dt,
                minval=-1.0 + _finfo(dt).epsneg, maxval=1.0)
    return jnp.sign(u) * jnp.log1p(-jnp.abs(u))


def logistic(key, shape=(), dtype=None):
    """Logistic(0, 1): log(u) - log1p(-u), u uniform in [tiny, 1)."""
    _check_key("logistic", key)
    dt = _float_dtype("logistic", dtype)
    u = uniform(key, _canonical_shape("logistic", shape), dt, minval=_finfo(dt).tiny,
                maxval=1.0)
    return jnp.log(u) - jnp.log1p(-u)


def cauchy(key, shape=(), dtype=None):
    """Cauchy(0, 1): tan(pi (u - 1/2)), u uniform in [eps, 1)."""
    _check_key("cauchy", key)
    dt = _float_dtype("cauchy", dtype)
    u = uniform(key, _canonical_shape("cauchy", shape), dt, minval=_finfo(dt).eps, maxval=1.0)
    return jnp.tan(dt.type(np.pi) * (u - dt.type(0.5)))


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability (a Bernoulli(1/2) draw, 2 b - 1), integers by default."""
    _check_key("rademacher", key)
    dt = np.dtype(dtypes.default_int() if dtype is None else dtype)
    shape = _canonical_shape("rademacher", shape)
    # JAX's bernoulli(key, 0.5): a uniform of the default float dtype (float64 under x64)
    # below one half
    b = (uniform(key, shape, dtypes.default_float()) < 0.5).astype(dt)
    return (2 * b - 1).astype(dt)


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """exp(sigma * N(0, 1))."""
    _check_key("lognormal", key)
    dt = _float_dtype("lognormal", dtype, allow_complex=True)
    shape = _broadcast_shape("lognormal", shape, sigma)
    return jnp.exp(normal(key, shape, dt) * _param("lognormal", sigma, dt))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """The inverse Weibull CDF at u uniform in [0, 1): (-log1p(-u))**(1/k) * scale."""
    _check_key("weibull_min", key)
    dt = _float_dtype("weibull_min", dtype)
    u = uniform(key, _canonical_shape("weibull_min", shape), dt)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b): exp(E / b) with E ~ Exponential(1)."""
    _check_key("pareto", key)
    dt = _float_dtype("pareto", dtype)
    shape = _broadcast_shape("pareto", shape, b)
    return jnp.exp(exponential(key, shape, dt) / _param("pareto", b, dt))


def maxwell(key, shape=(), dtype=None):
    """The norm of three independent N(0, 1) (one normal draw of shape + (3,))."""
    _check_key("maxwell", key)
    dt = _float_dtype("maxwell", dtype)
    shape = _canonical_shape("maxwell", shape)
    x = normal(key, shape + (3,), dt)
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


def rayleigh(key, scale, shape=None, dtype=None):
    """scale * sqrt(-2 log u), u uniform in [0, 1) (u = 0 gives inf, as JAX)."""
    _check_key("rayleigh", key)
    dt = _float_dtype("rayleigh", dtype)
    shape = _broadcast_shape("rayleigh", shape, scale)
    u = uniform(key, shape, dt)
    return _param("rayleigh", scale, dt, shape) * jnp.sqrt(jnp.log(u) * dt.type(-2))


def geometric(key, p, shape=None, dtype=None):
    """Trials up to the first success: floor(log u / log1p(-p)) + 1 (u = 0 read as 1)."""
    _check_key("geometric", key)
    dt = _int_dtype("geometric", dtype)
    shape = _broadcast_shape("geometric", shape, p)
    p = jnp.asarray(p)
    if p.dtype.kind not in "fc":
        p = p.astype(dtypes.default_float())
    u = uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, p.dtype.type(1), u)
    g = jnp.floor(jnp.log(u) / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1
    return g.astype(dt)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """The inverse triangular CDF at u uniform in [0, 1)."""
    _check_key("triangular", key)
    dt = _float_dtype("triangular", dtype)
    shape = _broadcast_shape("triangular", shape, left, mode, right)
    left, mode, right = (_param("triangular", v, dt, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dt)
    below = left + jnp.sqrt(u * (right - left) * (mode - left))
    above = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, below, above)


# --- discrete choices -----------------------------------------------------------------------------


def _top_k_indices(x, k):
    """The indices of the k largest entries along the last axis, the largest first and equal
    values in index order (lax.top_k's order): a stable ascending sort of -x."""
    order = jnp.argsort(-x, axis=-1, stable=True)
    return order[..., :k]


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn from softmax(logits) along `axis` by the Gumbel-max trick (Gumbel top-k
    without replacement); result shape `shape`, default the logits' shape without `axis`."""
    _check_key("categorical", key)
    logits = jnp.asarray(logits)
    nd = logits.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"categorical: axis {axis} is out of bounds for logits of rank {nd}")
    axis %= nd
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _broadcast_shape("categorical", shape, np.empty(batch_shape))
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        noise_shape = list(shape[len(prefix):])
        noise_shape.insert(axis, logits.shape[axis])
        noise = gumbel(key, (*prefix, *noise_shape), logits.dtype, mode=mode)
        scores = noise + jnp.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(scores, axis=axis + len(prefix))
    scores = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    top = _top_k_indices(jnp.moveaxis(scores, axis, -1), k)     # batch_shape + (k,)
    return jnp.moveaxis(top, -1, 0).reshape(shape)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of `a`'s entries along `axis` (of range(a) for an integer a), uniformly or
    with probabilities `p`, with or without replacement."""
    _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _canonical_shape("choice", shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        if isinstance(a, Tracer):
            raise TypeError("choice: `a` must be a concrete integer or an array; a traced "
                            "scalar gives a size unknown while tracing. Mark it static "
                            "(static_argnums) or pass jnp.arange(a).")
        n_inputs = int(a)
    else:
        if not -arr.ndim <= axis < arr.ndim:
            raise ValueError(f"choice: axis {axis} is out of bounds for `a` of rank "
                             f"{arr.ndim}")
        axis %= arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            shuffled = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            result = shuffled[(slice(None),) * (axis if arr.ndim else 0) + (slice(n_draws),)]
    else:
        ind = _weighted_indices(key, p, n_inputs, shape, n_draws, replace, mode)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return result.reshape(out_shape)


def _weighted_indices(key, p, n_inputs, shape, n_draws, replace, mode):
    p = jnp.asarray(p)
    if p.dtype.kind not in "fc":
        p = p.astype(dtypes.default_float())
    if p.shape != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {p.shape} and a.shape[axis] is {n_inputs}.")
    if replace:
        # inverse CDF: the first cumulative weight >= r (searchsorted, side="left")
        cumulative = jnp.cumsum(p)
        r = cumulative[-1] * (1 - uniform(key, shape, cumulative.dtype))
        below = cumulative < jnp.expand_dims(r, -1)
        return jnp.sum(below, axis=-1, dtype=dtypes.default_int())
    scores = gumbel(key, (n_inputs,), p.dtype, mode=mode) + jnp.log(p)
    return _top_k_indices(scores, n_draws)


__all__ = ["exponential", "gumbel", "laplace", "logistic", "cauchy", "rademacher",
           "lognormal", "weibull_min", "pareto", "maxwell", "rayleigh", "geometric",
           "triangular", "categorical", "choice"]


# --- gamma and the distributions built on it ------------------------------------------------------


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) sample by Marsaglia and Tsang's squeeze-and-reject method (JAX's
    key schedule). alpha < 1 is boosted to alpha + 1 and the sample scaled by u**(1/alpha);
    in log space that factor is added as -E/alpha, so tiny alphas do not underflow."""
    dt = alpha.dtype
    zero, one = dt.type(0), dt.type(1)
    boosted = alpha >= one
    shape_param = jnp.where(boosted, alpha, alpha + one)
    d = shape_param - dt.type(1.0 / 3.0)
    c = dt.type(1.0 / 3.0) / jnp.sqrt(d)

    def rejected(state):
        _, x2, v3, u = state
        outside_squeeze = u >= one - dt.type(0.0331) * (x2 * x2)
        return outside_squeeze & (jnp.log(u) >= x2 * dt.type(0.5)
                                  + d * ((one - v3) + jnp.log(v3)))

    def positive_candidate(key):
        """x ~ N(0, 1) until v = 1 + c x is positive."""
        def draw(state):
            k, _, _ = state
            k, sub = _pair(k)
            x = normal(sub, (), dt)
            return k, x, one + x * c
        _, x, v = lax.while_loop(lambda s: s[2] <= zero, draw, (key, zero, -one))
        return x, v

    def propose(state):
        k, x_key, u_key = _pair(state[0], 3)
        x, v = positive_candidate(x_key)
        return k, x * x, (v * v) * v, uniform(u_key, (), dt)

    key, boost_key = _pair(key)
    # (x2, v3, u) = (0, 1, 2) is rejected, so the loop always proposes at least once
    _, _, v3, _ = lax.while_loop(rejected, propose, (key, zero, one, dt.type(2)))
    if log_space:
        log_u = -exponential(boost_key, (), dt)
        log_boost = jnp.where(boosted | (log_u == 0), zero, log_u * (one / alpha))
        return (jnp.log(d) + jnp.log(v3)) + log_boost
    u = one - uniform(boost_key, (), dt)
    boost = jnp.where(boosted, one, jnp.power(u, one / alpha))
    return (d * v3) * boost


def _gamma_samples(name, key, a, shape, dtype, log_space, dtype_name=None):
    _check_key(name, key)
    dt = _float_dtype(dtype_name or name, dtype)
    shape = _broadcast_shape(name, shape, a)
    alphas = _param(name, a, dt, shape).reshape(-1)
    n = alphas.shape[0]
    if n == 0:
        return jnp.zeros(shape, dt)
    keys = split(key, n)     # one key per element, in row-major order
    draw = _gamma_draw_in_log_space if log_space else _gamma_draw
    return draw(keys, alphas).reshape(shape)


def _undifferentiable_gamma(log_space):
    """The per-element draws, as a custom_jvp whose derivative rule explains itself: JAX
    differentiates a gamma sample with respect to `a` implicitly (through the gamma CDF),
    which jitviz does not implement yet; without the rule, grad would stop at the rejection
    loop with while_loop's advice to use scan, which cannot help here."""
    from .custom_derivatives import custom_jvp

    @custom_jvp
    def draw(keys, alphas):
        return vmap(lambda k, alpha: _gamma_one(k, alpha, log_space))(keys, alphas)

    def no_derivative(primals, tangents):
        raise NotImplementedError(
            "the derivative of random.gamma/loggamma samples (and of beta, dirichlet, "
            "chisquare, t, f, generalized_normal, ball built on them) with respect to the "
            "shape parameter is not implemented in jitviz (JAX's implicit reparameterization "
            "gradient). Wrap the parameter in lax.stop_gradient to differentiate the rest.")

    draw.defjvp(no_derivative)
    return draw


_gamma_draw = _undifferentiable_gamma(log_space=False)
_gamma_draw_in_log_space = _undifferentiable_gamma(log_space=True)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples (shape `shape`, default a's shape), by Marsaglia-Tsang rejection
    with one key per element: JAX's samples for the same key."""
    return _gamma_samples("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, computed in log space (accurate for very small a)."""
    # JAX's loggamma names `gamma` in its dtype error
    return _gamma_samples("loggamma", key, a, shape, dtype, log_space=True, dtype_name="gamma")


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) = Ga / (Ga + Gb) from two log-gamma draws (split keys), scaled by their max
    so that neither underflows."""
    _check_key("beta", key)
    dt = _float_dtype("beta", dtype)
    shape = _broadcast_shape("beta", shape, a, b)
    key_a, key_b = _pair(key)
    log_a = loggamma(key_a, _param("beta", a, dt, shape), shape, dt)
    log_b = loggamma(key_b, _param("beta", b, dt, shape), shape, dt)
    log_max = jnp.maximum(log_a, log_b)
    scaled_a, scaled_b = jnp.exp(log_a - log_max), jnp.exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) over alpha's last axis: the softmax of log-gamma draws."""
    _check_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    alpha_shape = _shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _broadcast_shape("dirichlet", shape, np.empty(alpha_shape[:-1]))
    logs = loggamma(key, _param("dirichlet", alpha, dt), shape + alpha_shape[-1:], dt)
    shifted = logs - lax.stop_gradient(jnp.max(logs, axis=-1, keepdims=True))
    weights = jnp.exp(shifted)
    return weights / jnp.sum(weights, axis=-1, keepdims=True)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) = 2 Gamma(df / 2), drawn in log space."""
    _check_key("chisquare", key)
    dt = _float_dtype("chisquare", dtype)
    shape = _broadcast_shape("chisquare", shape, df)
    half_df = _param("chisquare", df, dt) / dt.type(2)
    return jnp.exp(loggamma(key, half_df, shape, dt)) * dt.type(2)


def t(key, df, shape=None, dtype=None):
    """Student's t(df) = N * sqrt((df / 2) / Gamma(df / 2)) with split keys."""
    _check_key("t", key)
    dt = _float_dtype("t", dtype)
    shape = _broadcast_shape("t", shape, df)
    key_n, key_g = _pair(key)
    n = normal(key_n, shape, dt)
    half_df = _param("t", df, dt) / dt.type(2)
    g = gamma(key_g, half_df, shape, dt)
    return n * jnp.sqrt(half_df / g)


__all__ += ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "t"]


# --- poisson --------------------------------------------------------------------------------------

# Lanczos's approximation of the gamma function, g = 7 with 9 terms (the published
# coefficients; XLA's lgamma uses the same series)
# Deliberately not `lax.lgamma` (libm's, more accurate): the sampler accepts or rejects on
# `s <= t`, and only XLA's own series rounds t as JAX does; with lax.lgamma 16 of 40 Poisson
# samples of tests/test_random_samplers.py differ from JAX's (tried and measured)
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS_COEFFS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                   771.3234287776530788486528258894, -176.61502916214059906584551354,
                   12.507343278686904814458936853, -0.13857109526572011689554707,
                   9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _log_gamma_from_one_half(x):
    """log Gamma(x) for x >= 1/2 (the Poisson sampler's log k!, k >= 0), in x's dtype. The
    log of z + g + 1/2 is split as log(g + 1/2) + log1p(z / (g + 1/2)) to keep its low bits."""
    dt = x.dtype
    z = x - dt.type(1)
    series = jnp.full_like(z, dt.type(_LANCZOS_BASE))
    for i, c in enumerate(_LANCZOS_COEFFS):
        series = series + dt.type(c) / (z + dt.type(i + 1))
    g_half = dt.type(_LANCZOS_G + 0.5)
    t = z + g_half
    log_t = dt.type(np.log(_LANCZOS_G + 0.5)) + jnp.log1p(z / g_half)
    return (dt.type(0.5 * np.log(2 * np.pi)) + (z + dt.type(0.5)) * log_t - t) \
        + jnp.log(series)


def _poisson_small(key, lam, shape, dt, max_iters):
    """Knuth's method for lam < 10: multiply uniforms (add their logs) until the product
    drops below exp(-lam); one uniform per element per round, one key split per round."""
    def more(state):
        i, _, _, log_prod = state
        return jnp.any(log_prod > -lam) & (i < max_iters)

    def step(state):
        i, k, key, log_prod = state
        key, sub = _pair(key)
        k = jnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, key, log_prod + jnp.log(uniform(sub, shape, np.float32))

    init = (np.int32(0), jnp.zeros(shape, dt), key, jnp.zeros(shape, np.float32))
    return (lax.while_loop(more, step, init)[1] - 1).astype(dt)


def _poisson_large(key, lam, shape, dt, max_iters):
    """Hormann's transformed rejection (PTRS) for lam >= 10: each round proposes k from two
    uniforms for every element still unaccepted."""
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def pending(state):
        i, _, accepted, _ = state
        return jnp.any(~accepted) & (i < max_iters)

    def step(state):
        i, k_out, accepted, key = state
        key, key_u, key_v = _pair(key, 3)
        u = uniform(key_u, shape, lam.dtype) - 0.5
        v = uniform(key_v, shape, lam.dtype)
        u_shifted = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - _log_gamma_from_one_half(k + 1)
        quick = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = quick | (~reject & (s <= t))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

    init = (np.int32(0), jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, bool), key)
    return lax.while_loop(pending, step, init)[1].astype(dt)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts: Knuth's method where lam < 10 (or NaN), Hormann's rejection
    elsewhere, both run over the whole array with the same key (JAX's scheme); lam == 0
    gives 0."""
    _check_key("poisson", key)
    dt = _int_dtype("poisson", dtype)
    shape = _shape_of(lam) if shape is None else _canonical_shape("poisson", shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
    small = jnp.isnan(lam) | (lam < 10)
    max_iters = dt.type(np.iinfo(dt).max)
    counts = jnp.where(small,
                       _poisson_small(key, jnp.where(small, lam, 0.0), shape, dt, max_iters),
                       _poisson_large(key, jnp.where(small, 1e5, lam), shape, dt, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(counts), counts)


__all__ += ["poisson"]


# --- binomial -------------------------------------------------------------------------------------

# log k! - (Stirling's approximation of it) for k = 0..9; larger k use the series
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """The error of Stirling's formula for log k!: tabulated below 10, a series above
    (evaluated, as JAX does, at k clamped to [0, 9] — so the table always wins there)."""
    dt = k.dtype
    table = jnp.asarray(np.asarray(_STIRLING_TAIL, dt))
    small = k <= 9
    kc = jnp.clip(k, dt.type(0), dt.type(9))
    kp1sq = (kc + 1) * (kc + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    return jnp.where(small, table[jnp.floor(kc).astype(np.int32)], series)


def _binomial_by_inversion(key, count, prob, shape, dt, max_iters):
    """For count * q <= 10: count geometric waiting times until they pass `count`."""
    log_q = jnp.log1p(-prob)

    def more(state):
        i, _, total, _ = state
        return jnp.any(total <= count) & (i < max_iters)

    def step(state):
        i, n_geom, total, key = state
        sub, key = _pair(key)      # JAX's order here: the first key draws
        n_geom = jnp.where(total <= count, n_geom + 1, n_geom)
        u = uniform(sub, shape, prob.dtype)
        return i + 1, n_geom, total + jnp.ceil(jnp.log(u) / log_q), key

    zeros = jnp.zeros(shape, prob.dtype)
    return (lax.while_loop(more, step, (np.int32(0), zeros, zeros, key))[1] - 1).astype(dt)


def _binomial_btrs(key, count, prob, shape, dt, max_iters):
    """Hormann's BTRS transformed rejection for count * q > 10."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def pending(state):
        i, _, accepted, _ = state
        return jnp.any(~accepted) & (i < max_iters)

    def step(state):
        i, k_out, accepted, key = state
        key, key_u, key_v = _pair(key, 3)
        u = uniform(key_u, shape, prob.dtype) - 0.5
        v = uniform(key_v, shape, prob.dtype)
        us = 0.5 - jnp.abs(u)
        quick = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = quick | (~reject & (log_v <= bound))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

    init = (np.int32(0), jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), key)
    return lax.while_loop(pending, step, init)[1].astype(dt)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats: by inversion where n min(p, 1-p) <= 10, by BTRS
    elsewhere (JAX's scheme; p > 1/2 samples the failures). NaN for a NaN or negative n or
    an invalid p, inf for an infinite n."""
    _check_key("binomial", key)
    dt = _float_dtype("binomial", dtype)
    shape = _broadcast_shape("binomial", shape, n, p)
    prob = jnp.asarray(p)
    if prob.dtype.kind not in "fc":
        prob = prob.astype(dtypes.default_float())
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(n), prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    below_half = prob < 0.5
    q = jnp.where(below_half, prob, 1.0 - prob)
    bad_count = jnp.isnan(count) | (count < 0.0)
    infinite = jnp.isinf(count)
    q_nan, q_negative = jnp.isnan(q), q < 0.0
    q = jnp.where(q_nan | q_negative, jnp.full_like(q, 0.01), q)
    inversion = bad_count | (count * q <= 10.0)
    count = jnp.floor(count)
    max_iters = dt.type(np.finfo(dt).max)
    samples = jnp.where(
        inversion,
        _binomial_by_inversion(key, jnp.where(inversion, count, 0.0), q, shape, dt, max_iters),
        _binomial_btrs(key, jnp.where(inversion, 1e4, count), jnp.where(inversion, 0.5, q),
                       shape, dt, max_iters))
    invalid = q_negative | q_nan | bad_count
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
    samples = jnp.where(infinite & ~invalid, jnp.full_like(samples, np.inf), samples)
    keep = below_half | bad_count | q_nan | infinite
    return jnp.where(keep, samples, jnp.subtract(count.astype(dt), samples))


__all__ += ["binomial"]


# --- compositions of the samplers above -----------------------------------------------------------


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) = (X1 / dfnum) / (X2 / dfden) with chi-square X1, X2 (split keys)."""
    _check_key("f", key)
    dt = _float_dtype("f", dtype)
    shape = _broadcast_shape("f", shape, dfnum, dfden)
    dfnum, dfden = _param("f", dfnum, dt), _param("f", dfden, dt)
    key_den, key_num = _pair(key)
    num = chisquare(key_num, dfnum, shape, dt) / dfnum
    return num / (chisquare(key_den, dfden, shape, dt) / dfden)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) with scale 1, by Michael, Schucany and Haas's transformation
    of a squared normal, choosing between the two roots with a uniform."""
    _check_key("wald", key)
    dt = _float_dtype("wald", dtype)
    shape = _broadcast_shape("wald", shape, mean)
    key_n, key_u = _pair(key)
    mean = _param("wald", mean, dt, shape)
    y = lax.integer_pow(normal(key_n, shape, dt), 2)
    z = uniform(key_u, shape, dt)
    mean_sq = lax.integer_pow(mean, 2)
    root = jnp.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """loc + scale * (a Maxwell sample with a random sign); the result's shape is
    shape + broadcast(loc, scale) (JAX's convention)."""
    _check_key("double_sided_maxwell", key)
    dt = _float_dtype("double_sided_maxwell", dtype)
    param_shape = tuple(np.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    shape = _canonical_shape("double_sided_maxwell", shape)
    shape = (shape or param_shape) + param_shape
    key_m, key_sign = _pair(key)
    magnitude = maxwell(key_m, shape, dt)
    return rademacher(key_sign, shape, dt) * magnitude * scale + loc


def generalized_normal(key, p, shape=(), dtype=None):
    """Density proportional to exp(-|x|**p): a random sign times Gamma(1/p)**(1/p)."""
    _check_key("generalized_normal", key)
    dt = _float_dtype("generalized_normal", dtype)
    shape = _canonical_shape("generalized_normal", shape)
    key_g, key_sign = _pair(key)
    g = gamma(key_g, 1 / p, shape, dt)
    return rademacher(key_sign, shape, dt) * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform points in the d-dimensional unit p-norm ball, shape shape + (d,): generalized
    normal coordinates divided by (sum |g|**p + E)**(1/p) with E ~ Exponential(1)."""
    _check_key("ball", key)
    dt = _float_dtype("ball", dtype)
    shape = _canonical_shape("ball", shape)
    if isinstance(d, Tracer):
        raise TypeError("ball: the dimension d must be a concrete integer (it sets the "
                        "result's shape); mark it static (static_argnums) when jitting")
    d = operator.index(d)
    key_g, key_e = _pair(key)
    g = generalized_normal(key_g, p, (*shape, d), dt)
    e = exponential(key_e, shape, dt)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


__all__ += ["f", "wald", "double_sided_maxwell", "generalized_normal", "ball"]


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n draws over the categories of p's last axis: one binomial per category
    (a scan over them, one split key each) of the draws left, with probability p_i over the
    probability left."""
    _check_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    common = np.dtype(jnp.result_type(n, p))
    if common.kind != "f":
        common = dtypes.default_float()
    n, p = n.astype(common), p.astype(common)
    shape = p.shape if shape is None else _canonical_shape("multinomial", shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    left = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(left == 0, 1, left)

    def one_category(remaining, ratio_and_key):
        ratio, k = ratio_and_key
        count = binomial(k, remaining, jnp.clip(ratio, 0, 1), dtype=remaining.dtype)
        return remaining - count, count

    keys = split(key, ratios.shape[0])
    _, counts = lax.scan(one_category, n, (ratios, keys), unroll=unroll)
    out_dtype = dtypes.default_float() if dtype is None else np.dtype(dtype)
    return jnp.moveaxis(counts, 0, -1).astype(out_dtype)


__all__ += ["multinomial"]
