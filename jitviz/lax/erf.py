"""`lax.erf` and `lax.erfc`: the error function and its complement, as primitives.

Each primitive's rules are next to its definition: shape (an elementwise float op), the NumPy
implementation (libm's `erf`/`erfc` per element: NumPy has no ufunc for them), one Numba
expression for both backends calling a scalar helper each compiles (libm on the CPU, CUDA's
libdevice on the GPU), its derivative `±2/sqrt(pi) exp(-x^2)` in both modes, and elementwise
batching.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive, register_lowering
from . import primitives as P


def erf_scalar(x):
    return math.erf(x)


def erfc_scalar(x):
    return math.erfc(x)


def _define(name, scalar):
    def rule(x):
        P._check_kind(name, x.dtype, P.FLOAT)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def impl(x):
        x = np.asarray(x)
        return np.vectorize(scalar, otypes=[np.float64])(x).astype(x.dtype)
    prim = primitive(name, abstract_eval=rule, impl=impl, kind="elementwise")
    helper = f"{name}_scalar"
    register_lowering(prim, "cpu.expr", lambda a, *_: f"rt.{helper}({a[0]})",
                      helpers=[scalar])
    register_lowering(prim, "cuda.expr", lambda a, *_: f"{helper}({a[0]})", helpers=[scalar])
    return prim


erf_p = _define("erf", erf_scalar)
erfc_p = _define("erfc", erfc_scalar)


def _derivative(prim, sign):
    """d/dx erf = 2/sqrt(pi) exp(-x^2); erfc's is its negative."""
    def slope(x):
        from .. import numpy as jnp
        return jnp.exp(-(x * x)) * np.asarray(sign * 2 / math.sqrt(math.pi), x.dtype)

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return prim.bind(x), (None if t is None else t * slope(x))

    def vjp(ct, primals, out):
        return [ct * slope(primals[0])]
    return jvp, vjp


def _register_transformation_rules():
    from ..transforms import register_batch, register_jvp, register_vjp
    from ..transforms.batching import elementwise_rule
    for prim, sign in ((erf_p, 1.0), (erfc_p, -1.0)):
        jvp, vjp = _derivative(prim, sign)
        register_jvp(prim, jvp)
        register_vjp(prim, vjp)
        register_batch(prim, elementwise_rule(prim))


_register_transformation_rules()


def erf(x):
    """`jax.lax.erf`: the error function of a float array."""
    return erf_p.bind(x)


def erfc(x):
    """`jax.lax.erfc`: 1 - erf(x), accurate in the tails."""
    return erfc_p.bind(x)
