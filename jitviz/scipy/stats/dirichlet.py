"""`jitviz.scipy.stats.dirichlet`, as `jax.scipy.stats.dirichlet`: densities on the simplex;
`x` runs over its first axis (one entry fewer than `alpha` means the last is 1 - sum)."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp
from .. import special
from ._common import const, inexact, where_outside


def logpdf(x, alpha):
    """sum_i (alpha_i - 1) log x_i - (sum_i lgamma(alpha_i) - lgamma(sum_i alpha_i));
    -inf off the simplex (an entry <= 0, or a sum 1e-6 away from 1)."""
    x, alpha = inexact(x, alpha)
    ashape, xshape = lax.aval_of(alpha).shape, lax.aval_of(x).shape
    if len(ashape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={ashape}")
    if not xshape or xshape[0] not in (ashape[0], ashape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={xshape}, alpha.shape={ashape}")
    if xshape[0] != ashape[0]:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, ashape + (1,) * (len(xshape) - 1))
    log_density = jnp.sum(special.xlogy(alpha - 1, x), axis=0) - log_norm
    on_simplex = (jnp.all(x > 0, axis=0)
                  & (jnp.abs(jnp.sum(x, axis=0) - 1) < const(x, 1e-6)))
    return where_outside(~on_simplex, -np.inf, log_density)


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
