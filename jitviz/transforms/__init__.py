"""Transformations of the IR, Autodidax-style: forward mode (`jvp.py`), reverse mode
(`vjp.py`), vectorization (`batching.py`), and the function transformations users call
(`function_transforms.py`: `grad`, `value_and_grad`, `jvp`, `vjp`, `vmap`).

Each rule table is keyed by primitive name; `rules_of(name)` collects a primitive's rules and
`missing_rules()` lists primitives without them (tests fail on any).
"""
from __future__ import annotations

from .function_transforms import TransformError, grad, jvp, value_and_grad, vjp, vmap
import importlib as _importlib

# the submodules `jvp`/`vjp` share their names with the functions exported here
_jvp = _importlib.import_module(".jvp", __name__)
_vjp = _importlib.import_module(".vjp", __name__)
_batching = _importlib.import_module(".batching", __name__)


def register_call_rules():
    """Rules for call primitives registered late (the optimizer's `fused`)."""
    _jvp.register_call_rules()
    _vjp.register_call_rules()
    _batching.register_call_rules()


def rules_of(name: str) -> dict:
    """The transformation rules of one primitive: jvp, vjp and batch (None if missing);
    `non_differentiable` when the primitive is declared so."""
    return {
        "jvp": _jvp.JVP_RULES.get(name),
        "vjp": _vjp.VJP_RULES.get(name) or _vjp.VJP_CALL_RULES.get(name),
        "batch": _batching.BATCH_RULES.get(name),
        "non_differentiable": name in _jvp.NON_DIFFERENTIABLE,
    }


def missing_rules() -> dict:
    """{rule kind: [primitive names without it]} over the whole registry."""
    from ..core.registry import PRIMITIVES
    register_call_rules()
    out = {"jvp": [], "vjp": [], "batch": []}
    for name in sorted(PRIMITIVES):
        r = rules_of(name)
        for kind in ("jvp", "vjp"):
            if r[kind] is None and not r["non_differentiable"]:
                out[kind].append(name)
        if r["batch"] is None:
            out["batch"].append(name)
    return out


__all__ = ["grad", "value_and_grad", "jvp", "vjp", "vmap", "TransformError", "rules_of",
           "missing_rules"]
