"""jitviz: a tracing JIT for Python/NumPy that shows what it did.

    import jitviz
    import jitviz.numpy as jnp
    print(jitviz.make_jaxpr(lambda x: 2 * x * x + 3 * x + 3)(3))
"""
# first, before anything compiles: 512-bit vectors where the CPU has AVX-512 (Numba's target
# machine is made once, when the first function is decorated; see cpu_target.py)
from .cpu_target import prefer_512_bit_vectors as _prefer_512_bit_vectors

_prefer_512_bit_vectors()
from . import errors  # noqa: E402
from .array import Array
from .config import config, disable_jit
from .core.interpreter import eval_jaxpr
from .core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from .core.trace import ensure_compile_time_eval
from .core.typecheck import typecheck_jaxpr
from .staging import (ShapeDtypeStruct, eval_shape, make_jaxpr, named_call, named_scope,
                      typeof)
from .tree import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                   tree_structure, tree_unflatten)
from . import tree, tree_util  # (jax.tree, jax.tree_util)
from . import lax
from . import numpy
from . import debug, diagnostics
from .diagnostics import Event, subscribe
from .errors import (JitvizWarning, RetraceWarning, SideEffectWarning, StaleGlobalWarning,
                     UnrolledLoopWarning, X64ConversionWarning)
from .jit import (CacheInfo, Compiled, Lowered, Traced, block_until_ready, clear_caches, jit,
                  registry)
from .budget import expect_compiles
from .ledger import ledger
from .diff import ProgramDiff, diff, diff_with_previous
from .export import export
from .annotate import Annotation, annotate
from .explorer import explore, monitor
# transformations (grad, vmap) and counter-based random numbers: jitviz/transforms, random.py
from .transforms import (grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp,
                         vmap)
jacobian = jacrev  # jax.jacobian
from .transforms.linear_transpose import linear_transpose
from . import test_util
from .custom_derivatives import custom_jvp, custom_vjp
from . import random
# host callbacks (jax.pure_callback, jax.experimental.io_callback, jax.debug.callback)
from .callbacks import pure_callback
from . import experimental
# JAX's other modules (jax.nn, jax.scipy), composed from jitviz.numpy and jitviz.lax
from . import nn, ops, scipy
from .devices import (Device, default_backend, device_count, device_get, device_put, devices,
                      local_device_count, local_devices, process_count, process_index)
# jax.checkpoint / jax.remat and the jax.ad_checkpoint module
from . import ad_checkpoint
from .ad_checkpoint import checkpoint, checkpoint_policies, remat
# mutable arrays (jax.new_ref, jax.freeze, jax.Ref; the jax.ref module)
from . import ref
from .state import Ref, freeze, new_ref

__version__ = "0.1.0"

__all__ = [
    # compiling and its diagnostics
    "jit", "block_until_ready", "registry", "clear_caches", "CacheInfo", "Traced", "Lowered",
    "Compiled", "config", "named_scope", "named_call",
    "disable_jit", "expect_compiles", "ledger", "debug", "diagnostics", "subscribe", "Event",
    "errors", "JitvizWarning", "SideEffectWarning", "StaleGlobalWarning", "RetraceWarning",
    "UnrolledLoopWarning", "X64ConversionWarning",
    # the IR
    "make_jaxpr", "eval_jaxpr", "typecheck_jaxpr", "eval_shape", "ShapeDtypeStruct", "typeof",
    "ShapedArray", "ClosedJaxpr", "Jaxpr", "Eqn", "Var", "Literal", "Array",
    "ensure_compile_time_eval",
    # looking at programs
    "explore", "monitor", "diff", "diff_with_previous", "ProgramDiff", "export", "annotate",
    "Annotation",
    # JAX's API
    "lax", "numpy", "random", "nn", "scipy", "grad", "value_and_grad", "jvp", "vjp", "vmap",
    "jacfwd", "jacrev", "jacobian", "linearize", "linear_transpose", "hessian", "test_util",
    "custom_jvp", "custom_vjp", "pure_callback", "experimental",
    "tree", "tree_util", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_map",
    "tree_structure", "register_pytree_node",
    "Device", "default_backend", "device_count", "device_get", "device_put", "devices",
    "local_device_count", "local_devices", "process_count", "process_index",
    "checkpoint", "remat", "checkpoint_policies", "ad_checkpoint",
    "new_ref", "freeze", "Ref", "ref",
    # `%load_ext jitviz`
    "load_ipython_extension", "unload_ipython_extension",
]


def load_ipython_extension(ip):
    """`%load_ext jitviz`: register the magics (`%%jit`, `%jaxpr`, `%jitbench`, `%jitledger`)."""
    from .magics import load_ipython_extension as load
    load(ip)


def unload_ipython_extension(ip):
    """`%unload_ext jitviz`: remove the magics, the error display and the monitors."""
    from .magics import unload_ipython_extension as unload
    unload(ip)
