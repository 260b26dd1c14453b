"""`jitviz.scipy.stats.binom`, as `jax.scipy.stats.binom`: k successes of n trials."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact, where_outside


def logpmf(k, n, p, loc=0):
    """log C(n, k) + k log p + (n - k) log(1 - p); -inf outside [loc, loc + n]."""
    k, n, p, loc = inexact(k, n, p, loc)
    y = k - loc
    log_comb = special.gammaln(n + 1) - special.gammaln(y + 1) - special.gammaln(n - y + 1)
    log_powers = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    log_mass = log_comb + log_powers
    # certain outcomes are exactly log 1 (p = 0 or 1, or no trials)
    log_mass = where_outside(((y == 0) & (n == 0)) | (log_powers == 0), 0, log_mass)
    return where_outside(~((k >= loc) & (k < loc + n + 1)), -np.inf, log_mass)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
