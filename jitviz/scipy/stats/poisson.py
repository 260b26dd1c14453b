"""`jitviz.scipy.stats.poisson`, as `jax.scipy.stats.poisson`: pmf mu^k e^-mu / k!."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact, where_outside


def logpmf(k, mu, loc=0):
    """k log mu - lgamma(k + 1) - mu; -inf below `loc` and at non-integer k."""
    k, mu, loc = inexact(k, mu, loc)
    y = k - loc
    log_mass = special.xlogy(y, mu) - special.gammaln(y + 1) - mu
    return where_outside((y < 0) | (jnp.round(k) != k), -np.inf, log_mass)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """Q(floor(k) + 1, mu), the upper incomplete gamma; 0 below `loc`."""
    k, mu, loc = inexact(k, mu, loc)
    y = k - loc
    return where_outside(y < 0, 0, special.gammaincc(jnp.floor(1 + y), mu))
