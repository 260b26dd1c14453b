"""`jitviz.scipy.stats.expon`, as `jax.scipy.stats.expon` (composed from `jitviz.numpy`)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-(x - loc) / scale - log(scale) on x >= loc, -inf below."""
    x, loc, scale = inexact(x, loc, scale)
    return jnp.where(x < loc, -np.inf, -((x - loc) / scale + jnp.log(scale)))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """log P(X > x): -(x - loc) / scale, 0 below loc."""
    x, loc, scale = inexact(x, loc, scale)
    z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(z), z)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """-expm1(-(x - loc) / scale), 0 below loc."""
    x, loc, scale = inexact(x, loc, scale)
    z = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(z), -jnp.expm1(z))


def logcdf(x, loc=0, scale=1):
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc - scale log1p(-q); NaN outside [0, 1]."""
    q, loc, scale = inexact(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * jnp.log1p(-q))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
