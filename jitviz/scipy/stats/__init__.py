"""`jitviz.scipy.stats`, as `jax.scipy.stats`: the normal, exponential, Laplace, logistic,
uniform, Cauchy, Poisson, gamma and beta distributions, composed from `jitviz.numpy` and
`jitviz.scipy.special`."""
from __future__ import annotations

from . import beta, cauchy, expon, gamma, laplace, logistic, norm, poisson, uniform  # noqa: F401

__all__ = ["beta", "cauchy", "expon", "gamma", "laplace", "logistic", "norm", "poisson",
           "uniform"]
