"""`jitviz.scipy.stats.beta`, as `jax.scipy.stats.beta` (normalized with `betaln`)."""
from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import inexact


def logpdf(x, a, b, loc=0, scale=1):
    """(a - 1) log y + (b - 1) log(1 - y) - betaln(a, b) - log(scale) on the support
    [loc, loc + scale], -inf outside; NaN for a, b or scale <= 0."""
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
                 - jnp.log(scale))
    out = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


__all__ = ["logpdf", "pdf"]
