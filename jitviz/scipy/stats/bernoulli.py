"""`jitviz.scipy.stats.bernoulli`, as `jax.scipy.stats.bernoulli`: 1 with probability p."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact, where_outside


def logpmf(k, p, loc=0):
    """k log p + (1 - k) log(1 - p); -inf outside {0, 1} (after `loc`)."""
    k, p, loc = inexact(k, p, loc)
    y = k - loc
    log_mass = special.xlogy(y, p) + special.xlog1py(1 - y, -p)
    return where_outside((y < 0) | (y > 1), -np.inf, log_mass)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def _invalid(p):
    return jnp.isnan(p) | (p < 0) | (p > 1)


def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1; NaN for NaN or p outside [0, 1]."""
    k, p = inexact(k, p)
    value = jnp.where(k < 0, jnp.zeros_like(k + p),
                      jnp.where(k < 1, 1 - p, jnp.ones_like(k + p)))
    return where_outside(jnp.isnan(k) | _invalid(p), np.nan, value)


def ppf(q, p):
    """0 for q <= 1 - p, else 1; NaN outside [0, 1]."""
    q, p = inexact(q, p)
    value = jnp.where(q <= 1 - p, jnp.zeros_like(q + p), jnp.ones_like(q + p))
    return where_outside(jnp.isnan(q) | (q < 0) | (q > 1) | _invalid(p), np.nan, value)
