"""jitviz: a tracing JIT for Python/NumPy that shows what it did.

    import jitviz
    import jitviz.numpy as jnp
    print(jitviz.make_jaxpr(lambda x: 2 * x * x + 3 * x + 3)(3))
"""
from __future__ import annotations

from . import errors
from .array import Array
from .config import config, disable_jit
from .core.interpreter import eval_jaxpr
from .core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from .core.typecheck import typecheck_jaxpr
from .staging import ShapeDtypeStruct, eval_shape, make_jaxpr
from .tree import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                   tree_structure, tree_unflatten)
from . import tree, tree_util  # noqa: E402  (jax.tree, jax.tree_util)
from . import lax  # noqa: E402
from . import numpy  # noqa: E402
from . import debug, diagnostics  # noqa: E402
from .diagnostics import Event, subscribe  # noqa: E402
from .errors import (JitvizWarning, RetraceWarning, SideEffectWarning,  # noqa: E402
                     StaleGlobalWarning, UnrolledLoopWarning)
from .jit import CacheInfo, Compiled, Lowered, block_until_ready, jit, registry  # noqa: E402
from .budget import expect_compiles  # noqa: E402
from .ledger import ledger  # noqa: E402
from .diff import ProgramDiff, diff, diff_with_previous  # noqa: E402
from .export import export  # noqa: E402
from .annotate import Annotation, annotate  # noqa: E402

__version__ = "0.1.0"

__all__ = ["jit", "block_until_ready", "registry", "debug", "subscribe", "Event",
           "JitvizWarning", "SideEffectWarning", "StaleGlobalWarning", "RetraceWarning",
           "UnrolledLoopWarning", "CacheInfo", "Lowered", "Compiled", "make_jaxpr", "eval_jaxpr", "typecheck_jaxpr", "ShapedArray", "ClosedJaxpr",
           "Jaxpr", "Eqn", "Var", "Literal", "Array", "config", "errors", "lax", "numpy",
           "tree_flatten", "tree_unflatten", "tree_leaves", "tree_map", "tree_structure",
           "register_pytree_node", "tree", "tree_util",
           "expect_compiles", "ledger", "grad", "value_and_grad", "jvp", "vjp", "vmap",
           "explore", "monitor", "random", "diff", "diff_with_previous", "ProgramDiff",
           "export", "annotate", "Annotation", "nn", "scipy", "Device", "default_backend", "device_count", "device_get",
           "device_put", "devices", "local_device_count", "local_devices", "process_count",
           "process_index", "eval_shape", "ShapeDtypeStruct", "disable_jit"]
def load_ipython_extension(ip): from .magics import load_ipython_extension as _l; _l(ip)  # noqa: E302,E501,E704
def unload_ipython_extension(ip): from .magics import unload_ipython_extension as _u; _u(ip)  # noqa: E302,E501,E704
from .explorer import explore, monitor  # noqa: E402
# --- transformations (grad, vmap) and counter-based random numbers: jitviz/transforms, random.py
from .transforms import grad, value_and_grad, jvp, vjp, vmap  # noqa: E402
from . import random  # noqa: E402
# --- JAX's other modules (jax.nn, jax.scipy), composed from jitviz.numpy and jitviz.lax
from . import nn, scipy  # noqa: E402
from .devices import (Device, default_backend, device_count, device_get,  # noqa: E402
                      device_put, devices, local_device_count, local_devices, process_count,
                      process_index)
