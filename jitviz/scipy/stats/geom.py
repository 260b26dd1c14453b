"""`jitviz.scipy.stats.geom`, as `jax.scipy.stats.geom`: the trial of the first success."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact, where_outside


def logpmf(k, p, loc=0):
    """(k - 1) log(1 - p) + log p; -inf below 1 (after `loc`)."""
    k, p, loc = inexact(k, p, loc)
    y = k - loc
    log_mass = special.xlog1py(y - 1, -p) + jnp.log(p)
    return where_outside(y <= 0, -np.inf, log_mass)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
