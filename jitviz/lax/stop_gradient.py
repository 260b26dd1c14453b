"""`lax.stop_gradient`: the identity, through which no derivative flows.

Its rules are all here, next to the definition: the value is its operand (the NumPy
implementation and both Numba targets' expression), it carries no derivative (jvp and vjp
give zero), and it batches as any elementwise primitive.

    grad(lambda x: stop_gradient(x) * x)(3.0)   # 3.0: only the right factor is varied
"""
from __future__ import annotations

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive, register_lowering

stop_gradient_p = primitive(
    "stop_gradient", kind="elementwise",
    abstract_eval=lambda x: ShapedArray(x.shape, x.dtype, x.weak_type),
    impl=lambda x: np.array(x, copy=True))


def _identity(args, in_dtypes, out_dtype, params):
    return args[0]


register_lowering(stop_gradient_p, "cpu.expr", _identity)
register_lowering(stop_gradient_p, "cuda.expr", _identity)


def _register_transformation_rules():
    from ..transforms import declare_non_differentiable, register_batch
    from ..transforms.batching import elementwise_rule
    declare_non_differentiable(stop_gradient_p)
    register_batch(stop_gradient_p, elementwise_rule(stop_gradient_p))


_register_transformation_rules()


def stop_gradient(x):
    """`jax.lax.stop_gradient`: every inexact leaf of the pytree `x` passes through
    `stop_gradient_p` (integer and boolean leaves carry no derivative anyway)."""
    from ..tree import tree_map
    from . import aval_of

    def stop(leaf):
        if aval_of(leaf).dtype.kind in "fc":
            return stop_gradient_p.bind(leaf)
        # JAX converts a non-Array leaf (a Python int, a NumPy array): a tracer in a trace
        from ..numpy._core import unchanged
        return unchanged(leaf)
    return tree_map(stop, x)
