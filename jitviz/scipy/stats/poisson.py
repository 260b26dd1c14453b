"""`jitviz.scipy.stats.poisson`, as `jax.scipy.stats.poisson` (log-pmf from `gammaln`)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact


def logpmf(k, mu, loc=0):
    """k log(mu) - gammaln(k + 1) - mu for a whole k - loc >= 0, -inf elsewhere."""
    k, mu, loc = inexact(k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


__all__ = ["logpmf", "pmf"]
