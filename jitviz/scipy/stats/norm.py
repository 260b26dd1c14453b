"""`jitviz.scipy.stats.norm`, as `jax.scipy.stats.norm` (`cdf` / `logcdf` are `ndtr` /
`log_ndtr` on the `lax.erf`/`erfc` primitives: float32 and float64)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special


def _inexact(*args):
    from ...numpy._core import promote
    return promote(*args, inexact=True)


def logpdf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.logpdf`: -(log(2 pi scale^2) + ((x - loc) / scale)^2) / 2."""
    x, loc, scale = _inexact(x, loc, scale)
    scale_sqrd = jnp.square(scale)
    log_normalizer = jnp.log(2 * np.pi * scale_sqrd)
    quadratic = jnp.square(x - loc) / scale_sqrd
    return (log_normalizer + quadratic) / -2


def pdf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.pdf`: exp(logpdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.cdf`: ndtr((x - loc) / scale)."""
    x, loc, scale = _inexact(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.logcdf`: log_ndtr((x - loc) / scale)."""
    x, loc, scale = _inexact(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """`jax.scipy.stats.norm.ppf`: ndtri(q) * scale + loc."""
    q, loc, scale = _inexact(q, loc, scale)
    return special.ndtri(q) * scale + loc


__all__ = ["cdf", "logcdf", "logpdf", "pdf", "ppf"]


def sf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.sf`: 1 - cdf, as the cdf of the mirrored variable (float32)."""
    x, loc, scale = _inexact(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """`jax.scipy.stats.norm.logsf` (float32)."""
    x, loc, scale = _inexact(x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """`jax.scipy.stats.norm.ppf`: loc + scale ndtri(q) (any float)."""
    q, loc, scale = _inexact(q, loc, scale)
    return loc + scale * special.ndtri(q)


def isf(q, loc=0, scale=1):
    """`jax.scipy.stats.norm.isf`: loc - scale ndtri(q)."""
    q, loc, scale = _inexact(q, loc, scale)
    return loc - scale * special.ndtri(q)
