"""`jitviz.scipy.stats.logistic`, as `jax.scipy.stats.logistic`: the cdf is expit(y)."""
from __future__ import annotations

from ... import numpy as jnp
from .. import special
from ._common import inexact


def logpdf(x, loc=0, scale=1):
    """-2 log(e^(y/2) + e^(-y/2)) - log scale, without overflow for large |y|."""
    x, loc, scale = inexact(x, loc, scale)
    half_y = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half_y, -half_y) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return special.expit((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return loc + scale * special.logit(x)


def isf(x, loc=0, scale=1):
    x, loc, scale = inexact(x, loc, scale)
    return loc - scale * special.logit(x)

