"""`jitviz.scipy.stats.t`, as `jax.scipy.stats.t`: Student's t distribution with `df`
degrees of freedom."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import const, inexact


def logpdf(x, df, loc=0, scale=1):
    """lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - (df+1)/2 log1p(y^2/df)."""
    x, df, loc, scale = inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    log_norm = (special.gammaln(half_df + const(x, 0.5)) - special.gammaln(half_df)
                - jnp.log(const(x, np.pi) * scale * scale * df) / 2)
    return log_norm - (half_df + const(x, 0.5)) * jnp.log1p(y * y / df)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
