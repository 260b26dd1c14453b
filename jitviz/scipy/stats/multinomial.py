"""`jitviz.scipy.stats.multinomial`, as `jax.scipy.stats.multinomial`: counts `x` (integers,
last axis the categories) of `n` draws with probabilities `p`."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import inexact, where_outside


def logpmf(x, n, p):
    """lgamma(n + 1) + sum_i (x_i log p_i - lgamma(x_i + 1)); -inf unless the counts add up
    to n (JAX compares the sum over all of `x`)."""
    (p,) = inexact(p)
    if lax.aval_of(x).dtype.kind not in "iu" or lax.aval_of(n).dtype.kind not in "iu":
        raise ValueError(f"x and n must be of integer type; got x.dtype="
                         f"{lax.aval_of(x).dtype}, n.dtype={lax.aval_of(n).dtype}")
    dt = lax.aval_of(p).dtype
    x, n = jnp.asarray(x).astype(dt), jnp.asarray(n).astype(dt)
    log_mass = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1),
                                                axis=-1)
    return where_outside(jnp.sum(x) != n, -np.inf, log_mass)


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
