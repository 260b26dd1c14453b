"""`jitviz.scipy.stats.cauchy`, as `jax.scipy.stats.cauchy`: density
1 / (pi scale (1 + y^2))."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    y = (x - loc) / scale
    return -(jnp.log(const(x, np.pi) * scale) + jnp.log1p(y * y))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1/2 + arctan(y) / pi (times the rounded 1/pi, as JAX: cdf(-inf) is then not quite
    0 in float32)."""
    x, loc, scale = inexact(x, loc, scale)
    return const(x, 0.5) + const(x, 1 / np.pi) * jnp.arctan((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The cdf of the mirrored variable."""
    x, loc, scale = inexact(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """loc + scale tan(pi (q - 1/2))."""
    q, loc, scale = inexact(q, loc, scale)
    return loc + scale * jnp.tan(const(q, np.pi) * q - const(q, np.pi / 2))


def isf(q, loc=0, scale=1):
    """loc + scale tan(pi/2 - pi q)."""
    q, loc, scale = inexact(q, loc, scale)
    return loc + scale * jnp.tan(const(q, np.pi / 2) - const(q, np.pi) * q)
