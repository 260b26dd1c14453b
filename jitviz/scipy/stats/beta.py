"""`jitviz.scipy.stats.beta`, as `jax.scipy.stats.beta`: density y^(a-1) (1-y)^(b-1) / B(a, b)
/ scale on [loc, loc + scale], y = (x - loc) / scale."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import const, inexact, where_outside


def logpdf(x, a, b, loc=0, scale=1):
    """-inf outside [loc, loc + scale]; NaN unless a, b and scale are positive."""
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_density = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y)
                   - special.betaln(a, b) - jnp.log(scale))
    log_density = where_outside((x < loc) | (x > loc + scale), -np.inf, log_density)
    return where_outside((a <= 0) | (b <= 0) | (scale <= 0), np.nan, log_density)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit(x, loc, scale):
    return jnp.clip((x - loc) / scale, const(x, 0), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return special.betainc(a, b, _unit(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """I_(1-y)(b, a): accurate where the cdf is close to 1."""
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    return jnp.log(sf(x, a, b, loc, scale))
