"""`jitviz.scipy.stats.uniform`, as `jax.scipy.stats.uniform` (on [loc, loc + scale])."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-log(scale) inside [loc, loc + scale], -inf outside."""
    x, loc, scale = inexact(x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return jnp.where(outside, -np.inf, -jnp.log(scale) + jnp.zeros_like(x))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below loc, 1 above loc + scale, linear between (and 0 for NaN, which is in none
    of the three ranges: JAX's select default)."""
    x, loc, scale = inexact(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(x > loc + scale, 1.0, jnp.where(inside, (x - loc) / scale, 0.0))


def ppf(q, loc=0, scale=1):
    """loc + scale q; NaN outside [0, 1]."""
    q, loc, scale = inexact(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)


__all__ = ["cdf", "logpdf", "pdf", "ppf"]
