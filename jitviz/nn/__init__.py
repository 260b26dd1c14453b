"""`jitviz.nn`: activation functions and friends, as `jax.nn`, composed from `jitviz.numpy`
and `jitviz.lax` (no primitives of their own), so they trace, jit, vmap and differentiate.

The forms are JAX's numerically stable ones: softmax subtracts the row maximum, logsumexp
copes with rows of -inf, softplus is `logaddexp(x, 0)`. `relu` and `relu6` are written with
`where` so that their derivative at the kinks is 0, as JAX's custom JVPs make it.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..scipy.special import logsumexp
from . import initializers  # noqa: F401
from .attention import dot_product_attention  # noqa: F401

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _inexact(x):
    """`x` as an array of an inexact dtype (JAX's promote_args_inexact)."""
    from ..numpy._core import promote
    return promote(x, inexact=True)[0]


def identity(x):
    """`jax.nn.identity`."""
    return jnp.asarray(x)


def relu(x):
    """`jax.nn.relu`: max(x, 0), with derivative 0 at 0 (and NaN kept)."""
    x = jnp.asarray(x)
    return jnp.where(x <= 0, jnp.zeros_like(x), x)


def relu6(x):
    """`jax.nn.relu6`: min(max(x, 0), 6), with derivative 0 at 0 and 6."""
    x = jnp.asarray(x)
    # 6.0 (weak) as JAX's min(max(x, 0), 6.): integers come out float32
    return jnp.where(x <= 0, 0, jnp.where(x >= 6, 6.0, x))


def sigmoid(x):
    """`jax.nn.sigmoid`: `lax.logistic`."""
    return lax.logistic(_inexact(x))


def softplus(x):
    """`jax.nn.softplus`: log(1 + exp(x)) as logaddexp(x, 0), which does not overflow."""
    return jnp.logaddexp(x, 0)


def log_sigmoid(x):
    """`jax.nn.log_sigmoid`: -softplus(-x)."""
    return -softplus(-_inexact(x))


def silu(x):
    """`jax.nn.silu` (also `swish`): x * sigmoid(x)."""
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def soft_sign(x):
    """`jax.nn.soft_sign`: x / (|x| + 1)."""
    x = _inexact(x)  # (operators on concrete arrays follow NumPy: int / int is float64)
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    """`jax.nn.squareplus`: (x + sqrt(x^2 + b)) / 2."""
    x = _inexact(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def mish(x):
    """`jax.nn.mish`: x * tanh(softplus(x))."""
    x = _inexact(x)
    return x * jnp.tanh(softplus(x))


def gelu(x, approximate: bool = True):
    """`jax.nn.gelu`. The tanh approximation by default (as JAX); `approximate=False` is
    JAX's exact form x/2 erfc(-x/sqrt 2) on the `lax.erfc` primitive (any float dtype)."""
    x = _inexact(x)
    dt = lax.aval_of(x).dtype
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dt)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return 0.5 * x * lax.erfc(-x * np.sqrt(0.5).astype(dt))


def sparse_plus(x):
    """`jax.nn.sparse_plus`: 0 for x <= -1, (x + 1)^2 / 4 between, x for x >= 1."""
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """`jax.nn.sparse_sigmoid`: (x + 1) / 2 clipped to [0, 1] (sparse_plus' derivative)."""
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


def _log1mexp_value(x):
    # log(-expm1(-x)) near 0, log1p(-exp(-x)) beyond log 2: each accurate where it is used
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def _make_log1mexp():
    from ..custom_derivatives import custom_jvp
    f = custom_jvp(_log1mexp_value)
    # JAX's rule: d/dx log(1 - exp(-x)) = 1 / expm1(x), finite where the branches' are not
    f.defjvps(lambda g, ans, x: g / jnp.expm1(x))
    return f


_log1mexp = _make_log1mexp()


def log1mexp(x):
    """`jax.nn.log1mexp`: log(1 - exp(-x)), accurate for small and large x."""
    return _log1mexp(_inexact(x))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """`jax.nn.logmeanexp`: logsumexp(x) - log(the number of elements reduced)."""
    from ..numpy._core import canonical_axes
    x = _inexact(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    dims = canonical_axes(axis, lax.aval_of(x).ndim)
    if where is None:
        count = float(np.prod([lax.aval_of(x).shape[d] for d in dims]))
        return lse - np.log(count).astype(lax.aval_of(lse).dtype)
    mask = jnp.broadcast_to(jnp.asarray(where), lax.aval_of(x).shape)
    count = jnp.sum(mask, axis=dims, keepdims=keepdims, dtype=lax.aval_of(lse).dtype)
    return lse - jnp.log(count)


tanh = jnp.tanh  # `jax.nn.tanh`


def elu(x, alpha=1.0):
    """`jax.nn.elu`: x for x > 0, alpha (exp(x) - 1) otherwise (expm1 of a clipped x, so
    the unused branch cannot overflow into the gradient)."""
    x = _inexact(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=1e-2):
    """`jax.nn.leaky_relu`."""
    x = _inexact(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def celu(x, alpha=1.0):
    """`jax.nn.celu`: max(x, 0) + alpha expm1(min(x, 0) / alpha)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    """`jax.nn.selu`: scale * elu(x, alpha) with the self-normalizing constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def hard_tanh(x):
    """`jax.nn.hard_tanh`: x clipped to [-1, 1]."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    """`jax.nn.hard_sigmoid`: relu6(x + 3) / 6."""
    return relu6(_inexact(x) + 3.0) / 6.0


def hard_silu(x):
    """`jax.nn.hard_silu` (also `hard_swish`): x * hard_sigmoid(x)."""
    x = _inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def glu(x, axis=-1):
    """`jax.nn.glu`: the first half of `axis` gated by the sigmoid of the second."""
    x = jnp.asarray(x)
    shape = lax.aval_of(x).shape
    axis = operator.index(axis) % len(shape)
    size = shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} must have an even size, got {size}")
    half = size // 2
    start, limit = [0] * len(shape), list(shape)
    x1 = lax.slice(x, start, limit[:axis] + [half] + limit[axis + 1:])
    x2 = lax.slice(x, start[:axis] + [half] + start[axis + 1:], limit)
    return x1 * sigmoid(x2)


def _masked(x, where, fill):
    return x if where is None else jnp.where(where, x, fill)


def softmax(x, axis=-1, where=None):
    """`jax.nn.softmax`: exp(x - max) / sum, the maximum taken over `axis` (no overflow;
    a row with +inf gives NaN, as in JAX). Masked-out entries (`where`) are 0."""
    x = _inexact(x)
    x_safe = _masked(x, where, -np.inf)
    x_max = jnp.max(x_safe, axis, keepdims=True, initial=None if where is None else -np.inf)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(_masked(unnormalized, where, 0), axis, keepdims=True)
    return _masked(result, where, 0)


def log_softmax(x, axis=-1, where=None):
    """`jax.nn.log_softmax`: x - max - log(sum(exp(x - max))). (JAX stops the gradient
    through the max; its derivative cancels out here, so the result is the same.)"""
    x = _inexact(x)
    x_safe = _masked(x, where, -np.inf)
    x_max = jnp.max(x_safe, axis, keepdims=True, initial=None if where is None else -np.inf)
    shifted = x_safe - x_max
    shifted_lse = jnp.log(jnp.sum(_masked(jnp.exp(shifted), where, 0), axis, keepdims=True))
    return _masked(shifted - shifted_lse, where, -np.inf)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None,
                algorithm="fast"):
    """`jax.nn.standardize`: (x - mean) / sqrt(variance + epsilon); the "fast" variance
    E[x^2] - E[x]^2 (clipped at 0) by default, as JAX, or the two-pass "stable" one."""
    if where is not None:
        raise NotImplementedError("standardize(where=...): jitviz's mean has no where= yet")
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True) - jnp.square(mean)
            variance = jnp.clip(variance, 0)  # E[x^2] - E[x]^2 can round below 0
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(_inexact(variance + epsilon))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """`jax.nn.one_hot`: `x == iota` along a new `axis` (out-of-range indices give zeros)."""
    from .. import dtypes
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError("one_hot: num_classes must be a concrete integer (mark it static "
                        "under jit)") from None
    x = jnp.asarray(x)
    ndim = lax.aval_of(x).ndim
    out_axis = operator.index(axis) % (ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(lax.aval_of(x).dtype, rhs_shape, out_axis)
    dtype = dtypes.default_float() if dtype is None else dtype
    return jnp.asarray(lhs == rhs, dtype=dtype)


__all__ = ["celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "initializers", "leaky_relu", "log_sigmoid", "log_softmax",
           "log1mexp", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid",
           "squareplus", "standardize", "swish", "tanh"]
