"""`jitviz.scipy.stats.laplace`, as `jax.scipy.stats.laplace`: density e^-|y| / (2 scale)."""
from __future__ import annotations

from ... import numpy as jnp
from ._common import const, inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return -jnp.abs(x - loc) / scale - jnp.log(2 * scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """e^y / 2 for y <= 0, 1 - e^-y / 2 above."""
    x, loc, scale = inexact(x, loc, scale)
    y = (x - loc) / scale
    half = const(x, 0.5)
    return jnp.where(y <= 0, half * jnp.exp(y), 1 - half * jnp.exp(-y))
