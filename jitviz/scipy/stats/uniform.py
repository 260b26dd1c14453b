"""`jitviz.scipy.stats.uniform`, as `jax.scipy.stats.uniform`: density 1 / scale on
[loc, loc + scale]."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import inexact, where_outside


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    return where_outside(outside, -np.inf, jnp.zeros_like(x + loc) - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below loc, 1 above loc + scale, linear between (NaN stays NaN)."""
    x, loc, scale = inexact(x, loc, scale)
    y = (x - loc) / scale
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, y, jnp.where(x > loc + scale, jnp.ones_like(y),
                                          jnp.zeros_like(y)))


def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact(q, loc, scale)
    return where_outside(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
