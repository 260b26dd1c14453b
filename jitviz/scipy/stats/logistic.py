"""`jitviz.scipy.stats.logistic`, as `jax.scipy.stats.logistic`."""
from __future__ import annotations

from ... import numpy as jnp
from .. import special
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-2 logaddexp(z / 2, -z / 2) - log(scale) for z = (x - loc) / scale (no overflow)."""
    x, loc, scale = inexact(x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return special.expit(-(x - loc) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return -special.logit(x) * scale + loc


__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
