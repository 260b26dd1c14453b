"""`jitviz.scipy.stats.expon`, as `jax.scipy.stats.expon`: density e^-y / scale for
y = (x - loc) / scale >= 0."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import inexact, where_outside


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return where_outside(x < loc, -np.inf, -(x - loc) / scale - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-y; 0 below `loc`."""
    x, loc, scale = inexact(x, loc, scale)
    return where_outside(x < loc, 0, -(x - loc) / scale)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1 - e^-y, by expm1 (accurate for small y); 0 below `loc`."""
    x, loc, scale = inexact(x, loc, scale)
    return where_outside(x < loc, 0, -jnp.expm1(-(x - loc) / scale))


def logcdf(x, loc=0, scale=1):
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc - scale log(1 - q); NaN outside [0, 1]."""
    q, loc, scale = inexact(q, loc, scale)
    value = loc - scale * jnp.log1p(-q)
    return where_outside(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
