"""`jitviz.scipy.stats.cauchy`, as `jax.scipy.stats.cauchy`."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-log(pi scale) - log1p(z^2) for z = (x - loc) / scale."""
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return -(jnp.log(np.pi * scale) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1/2 + arctan(z) / pi."""
    x, loc, scale = inexact(x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / np.pi


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return cdf(-x, -loc, scale)


__all__ = ["cdf", "logcdf", "logpdf", "pdf", "sf"]
