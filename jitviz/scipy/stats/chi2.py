"""`jitviz.scipy.stats.chi2`, as `jax.scipy.stats.chi2`: the chi-squared distribution with
`df` degrees of freedom, a gamma distribution of shape df/2 and scale 2."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import const, inexact, where_outside


def logpdf(x, df, loc=0, scale=1):
    """(df/2 - 1) log y - y/2 - lgamma(df/2) - df/2 log 2 - log scale; -inf below `loc`."""
    x, df, loc, scale = inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    log_density = ((half_df - 1) * jnp.log(y) - y / 2 - special.gammaln(half_df)
                   - half_df * const(x, np.log(2.0)) - jnp.log(scale))
    return where_outside(x < loc, -np.inf, log_density)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
    return jnp.clip((x - loc) / (scale * 2), const(x, 0), const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    return special.gammainc(df / 2, _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact(x, df, loc, scale)
    return special.gammaincc(df / 2, _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return jnp.log(sf(x, df, loc, scale))
