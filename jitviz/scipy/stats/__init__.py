"""`jitviz.scipy.stats`, as `jax.scipy.stats`: one module per distribution, composed from
`jitviz.numpy` and `jitviz.scipy.special` (so each is traced, differentiated and batched as the
functions it uses)."""
from __future__ import annotations

from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma,  # noqa: F401
               geom, laplace, logistic, multinomial, norm, poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom",
           "laplace", "logistic", "multinomial", "norm", "poisson", "t", "uniform"]
