"""erf and erfc composed from other primitives, accurate to float32: what `nn.gelu`, `ndtr`
and `norm.cdf` use (the `lax.erf`/`lax.erfc` primitives are libm's, any float; moving these
users onto them changes their float32 values by an ulp or so, a step of its own).

|x| < 1: erf is Eigen's / XLA's float32 rational approximation `x P(x^2) / Q(x^2)`;
|x| >= 1: erfc is Cephes' `erfcf`, `exp(-x^2) / |x| R(1 / x^2)`, so the tails keep their
relative accuracy (1 + erf(-5) would cancel to nothing). Both are within a few float32 ulps
of the true function where the result is a normal float; float64 inputs are refused, since
these coefficients give only float32 accuracy.
"""
from __future__ import annotations

import numpy as np

_ERF_A = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_B = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)
_ERFC_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
           -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
           3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)  # 1 <= |x| < 2
_ERFC_R = (-1.047766399936249e1, 1.297719955372516e1, -7.495518717768503e0,
           2.921019019210786e0, -1.015265279202700e0, 4.218463358204948e-1,
           -2.820767439740514e-1, 5.641895067754075e-1)  # |x| >= 2


def float32_operand(x, name):
    """`x` as an inexact array; float64 is refused (the approximations are float32's)."""
    from .numpy._core import promote
    (x,) = promote(x, inexact=True)
    from .lax import aval_of
    if aval_of(x).dtype != np.float32:
        raise NotImplementedError(
            f"{name} of {aval_of(x).dtype.name}: jitviz computes {name} with a composed erf "
            "accurate to float32 only; use float32 inputs")
    return x


def _poly(y, coefs):
    from . import numpy as jnp
    p = jnp.full_like(y, coefs[0])
    for c in coefs[1:]:
        p = p * y + np.float32(c)
    return p


def _erf_small(x):
    from . import numpy as jnp
    x = jnp.clip(x, -4.0, 4.0)
    x2 = x * x
    return x * _poly(x2, _ERF_A) / _poly(x2, _ERF_B)


def _erfc_large(x):
    """erfc(|x|) for |x| >= 1 (any value where |x| < 1; the caller does not use it)."""
    from . import numpy as jnp
    ax = jnp.maximum(jnp.abs(x), 1.0)
    q = 1.0 / ax
    y = q * q
    p = jnp.where(ax < 2.0, _poly(y, _ERFC_P), _poly(y, _ERFC_R))
    return jnp.exp(-ax * ax) * q * p


def erf(x):
    """`jax.lax.erf` (float32)."""
    from . import numpy as jnp
    x = float32_operand(x, "erf")
    big = 1.0 - _erfc_large(x)
    return jnp.where(jnp.abs(x) < 1.0, _erf_small(x), jnp.where(x < 0, -big, big))


def erfc(x):
    """`jax.lax.erfc` (float32)."""
    from . import numpy as jnp
    x = float32_operand(x, "erfc")
    tail = _erfc_large(x)
    return jnp.where(jnp.abs(x) < 1.0, 1.0 - _erf_small(x), jnp.where(x < 0, 2.0 - tail, tail))
