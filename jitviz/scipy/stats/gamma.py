"""`jitviz.scipy.stats.gamma`, as `jax.scipy.stats.gamma` (shape `a`; from `gammaln`)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact


def logpdf(x, a, loc=0, scale=1):
    """(a - 1) log y - y - gammaln(a) - log(scale) for y = (x - loc) / scale, -inf below loc."""
    x, a, loc, scale = inexact(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1.0)  # (a harmless value where the result is -inf)
    log_probs = special.xlogy(a - 1, y) - y - (special.gammaln(a) + jnp.log(scale))
    return jnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


__all__ = ["logpdf", "pdf"]
