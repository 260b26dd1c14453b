"""The JAX tutorials' example programs (README.md, "The tutorials"), written as they write them.

One copy for the tests, the benchmarks and the demo notebooks, so that they all measure and
check the same code.
"""
from __future__ import annotations

from . import lax
from . import numpy as jnp


def slow_f(x):
    # Element-wise ops see a large benefit from fusion
    return x * x + x * 2.0


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def apply_activation(x):
    return jnp.maximum(0.0, x)


def get_dot_product(W, X):
    return jnp.dot(W, X)


def forward_pass(W, X):
    Z = jnp.dot(W, X)
    A = jnp.maximum(Z, 0)
    return Z, A


def f_loop(x, n):
    return lax.fori_loop(0, n, lambda i, y: y + x, 0.)


def sum_up_to(x):
    return lax.while_loop(lambda c: c[1] <= x, lambda c: (c[0] + c[1], c[1] + 1), (0, 1))[0]


def myabs(x):
    return lax.cond(x > 0, lambda _: x, lambda _: -x, None)


def tanh(x):
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)
