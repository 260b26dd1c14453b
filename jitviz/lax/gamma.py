"""`lax.lgamma` and `lax.digamma` as primitives (and `jax.scipy.special.gammaln` / `digamma`
over them), made as `lax.erf` is (`erf.py`'s `_define`: NumPy implementation and both Numba
targets through one scalar helper each compiles, elementwise batching).

lgamma is libm's, with its poles (0, -1, -2, ...) at +inf as libm and JAX give them (Python's
math.lgamma raises there). digamma has no libm function: its helper shifts x above 10 with
psi(x) = psi(x + 1) - 1/x, reflects negative x with psi(x) = psi(1 - x) - pi / tan(pi x), and
sums the asymptotic series through x^-12 (truncation below 1e-15 relative there), in float64
whatever the operand's dtype; NaN at the poles, as JAX. Derivatives: lgamma's is digamma;
digamma's is the trigamma function, composed here from `jnp` operations (the same shift,
reflection and series), so it differentiates further by the usual rules.
"""
from __future__ import annotations

import math

import numpy as np

from .erf import _define


def lgamma_scalar(x):
    v = float(x)
    if v == math.inf or v == -math.inf:
        return math.inf
    if v != v:
        return v
    # a pole: 0 or a negative integer (every float below -2^52 is one, and floor's integer
    # would overflow there); each helper is compiled alone, so the test is written out
    if v <= 0.0 and (v <= -4503599627370496.0 or v == math.floor(v)):
        return math.inf  # libm's and JAX's value (Python's math.lgamma raises)
    return math.lgamma(v)


def digamma_scalar(x):
    v = float(x)
    if v == math.inf:
        return math.inf
    if v != v or v == -math.inf or (v <= 0.0 and (v <= -4503599627370496.0
                                                  or v == math.floor(v))):
        return math.nan  # NaN, -inf and the poles, as JAX
    result = 0.0
    if v < 0.0:
        # reflection; tan(pi v) has period 1, so reduce first to keep its argument small
        result = -math.pi / math.tan(math.pi * (v - math.floor(v)))
        v = 1.0 - v
    while v < 10.0:
        result -= 1.0 / v
        v += 1.0
    w = 1.0 / (v * v)
    series = w * (1.0 / 12 - w * (1.0 / 120 - w * (1.0 / 252 - w * (
        1.0 / 240 - w * (1.0 / 132 - w * (691.0 / 32760))))))
    return result + math.log(v) - 0.5 / v - series


lgamma_p = _define("lgamma", lgamma_scalar)
digamma_p = _define("digamma", digamma_scalar)


def trigamma(x):
    """psi'(x) composed from jnp operations (digamma's derivative): ten recurrence terms
    sum 1/(x + k)^2 below the asymptotic series at x + 10; negative x by the reflection
    psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x). +inf at the poles."""
    from .. import numpy as jnp
    negative = x < 0
    y = jnp.where(negative, 1.0 - x, x)
    total = jnp.zeros_like(y)
    for k in range(10):
        total = total + 1.0 / jnp.square(y + float(k))
    z = y + 10.0
    w = 1.0 / jnp.square(z)
    series = (1.0 + 0.5 / z + w * (1.0 / 6 - w * (1.0 / 30 - w * (1.0 / 42 - w * (
        1.0 / 30 - w * (5.0 / 66 - w * (691.0 / 2730))))))) / z
    positive = total + series
    reflected = (math.pi ** 2) / jnp.square(jnp.sin(math.pi * (x - jnp.floor(x)))) - positive
    pole = (x <= 0) & (x == jnp.floor(x))
    out = jnp.where(negative, reflected, positive)
    return jnp.where(pole, jnp.full_like(out, np.inf), out)


def _register_transformation_rules():
    from ..transforms import register_batch, register_jvp, register_vjp
    from ..transforms.batching import elementwise_rule

    def rules(prim, slope):
        def jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return prim.bind(x), (None if t is None else t * slope(x))

        def vjp(ct, primals, out):
            return [ct * slope(primals[0])]
        register_jvp(prim, jvp)
        register_vjp(prim, vjp)
        register_batch(prim, elementwise_rule(prim))
    rules(lgamma_p, digamma_p.bind)
    rules(digamma_p, trigamma)


_register_transformation_rules()


def lgamma(x):
    """`jax.lax.lgamma`: log|Gamma(x)| of a float array."""
    return lgamma_p.bind(x)


def digamma(x):
    """`jax.lax.digamma`: Gamma'(x) / Gamma(x) of a float array."""
    return digamma_p.bind(x)
