"""`jitviz.scipy.stats.laplace`, as `jax.scipy.stats.laplace`."""
from __future__ import annotations

from ... import numpy as jnp
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale)."""
    x, loc, scale = inexact(x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(z) / 2 for z = (x - loc) / scale <= 0, 1 - exp(-z) / 2 above."""
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z <= 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))


__all__ = ["cdf", "logpdf", "pdf"]
