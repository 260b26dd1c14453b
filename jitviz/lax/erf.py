"""`lax.erf`, `lax.erfc` and `lax.erf_inv`: the error function, its complement and its
inverse, as primitives.

Each primitive's rules are next to its definition: shape (an elementwise float op), the NumPy
implementation (libm's `erf`/`erfc` per element: NumPy has no ufunc for them), CUDA's Numba
expression calling a scalar helper (libdevice's erf/erfc on the GPU), its derivative
(`±2/sqrt(pi) exp(-x^2)`; erf_inv's `sqrt(pi)/2 exp(y^2)`) in both modes, and elementwise
batching. The CPU lowers all three to vecmath's vectorized functions, with the other
elementary functions (backends/cpu/rules.py: `rt.erf_f32`, ...; vecmath_erf.py). libm has no
erf_inv: its scalar helper (the interpreter's and CUDA's) refines a closed-form guess with
Newton's method on libm's erf/erfc, in float64 whatever the operand's dtype.
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


def erf_inv_scalar(x):
    """The inverse error function of one number, computed in float64: Winitzki's closed-form
    guess (relative error < 2e-3) refined by Newton's method on erf(y) = x for |x| <= 1/2
    and on erfc(y) = 1 - |x| beyond (1 - |x| is exact there, so the tails keep their
    accuracy); the error squares each step, so five steps reach float64's rounding."""
    v = float(x)
    a = abs(v)
    if not a <= 1.0:
        return math.nan  # |x| > 1, or NaN
    if a == 1.0:
        return math.copysign(math.inf, v)
    q = 1.0 - a
    log_term = math.log(q * (1.0 + a))  # log(1 - x^2), without cancelling
    first = 2.0 / (math.pi * 0.147) + 0.5 * log_term
    y = math.sqrt(math.sqrt(first * first - log_term / 0.147) - first)
    slope_scale = 2.0 / math.sqrt(math.pi)
    for _ in range(5):
        slope = slope_scale * math.exp(-y * y)
        if slope == 0.0:
            break
        if a <= 0.5:
            y -= (math.erf(y) - a) / slope
        else:
            y += (math.erfc(y) - q) / slope
    return math.copysign(y, v)


def _define(name, scalar):
    def rule(x):
        P._check_kind(name, x.dtype, P.FLOAT)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def impl(x):
        x = np.asarray(x)
        with np.errstate(all="ignore"):  # NaN and inf results (poles, |x| > 1) are values
            return np.vectorize(scalar, otypes=[np.float64])(x).astype(x.dtype)
    prim = primitive(name, abstract_eval=rule, impl=impl, kind="elementwise")
    helper = f"{name}_scalar"
    register_lowering(prim, "cuda.expr", lambda a, *_: f"{helper}({a[0]})", helpers=[scalar])
    return prim


erf_p = _define("erf", erf_scalar)
erfc_p = _define("erfc", erfc_scalar)
erf_inv_p = _define("erf_inv", erf_inv_scalar)


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


def _erf_inv_derivative():
    """d/dx erf_inv(x) = sqrt(pi)/2 exp(erf_inv(x)^2), read off the result."""
    def slope(out):
        from .. import numpy as jnp
        return jnp.exp(out * out) * np.asarray(math.sqrt(math.pi) / 2, out.dtype)

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        out = erf_inv_p.bind(x)
        return out, (None if t is None else t * slope(out))

    def vjp(ct, primals, out):
        return [ct * slope(out)]
    return jvp, vjp


def _register_transformation_rules():
    from ..transforms import register_batch, register_jvp, register_vjp
    from ..transforms.batching import elementwise_rule
    rules = [(erf_p, *_derivative(erf_p, 1.0)), (erfc_p, *_derivative(erfc_p, -1.0)),
             (erf_inv_p, *_erf_inv_derivative())]
    for prim, jvp, vjp in rules:
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


def erf_inv(x):
    """`jax.lax.erf_inv`: the inverse of erf on [-1, 1] (±inf at ±1, NaN outside)."""
    return erf_inv_p.bind(x)
