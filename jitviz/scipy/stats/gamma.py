"""`jitviz.scipy.stats.gamma`, as `jax.scipy.stats.gamma`: the gamma distribution of shape
`a`, density y^(a-1) e^-y / Gamma(a) / scale with y = (x - loc) / scale."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import const, inexact, where_outside


def logpdf(x, a, loc=0, scale=1):
    """log of the density: -inf below `loc`."""
    x, a, loc, scale = inexact(x, a, loc, scale)
    inside = x >= loc
    y = jnp.where(inside, (x - loc) / scale, jnp.ones_like(x))
    log_density = special.xlogy(a - 1, y) - y - special.gammaln(a) - jnp.log(scale)
    return where_outside(~inside, -np.inf, log_density)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """P(a, y), y clipped to [0, inf)."""
    x, a, loc, scale = inexact(x, a, loc, scale)
    return special.gammainc(a, jnp.clip((x - loc) / scale, const(x, 0), const(x, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """Q(a, y); 1 below `loc`."""
    x, a, loc, scale = inexact(x, a, loc, scale)
    y = (x - loc) / scale
    upper = special.gammaincc(a, y)
    return where_outside(y < 0, 1, upper)


def logsf(x, a, loc=0, scale=1):
    return jnp.log(sf(x, a, loc, scale))
