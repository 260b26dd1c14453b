"""Transformations of the IR, Autodidax-style: forward mode (`jvp.py`), reverse mode
(`vjp.py`), vectorization (`batching.py`), and the function transformations users call
(`function_transforms.py`: `grad`, `value_and_grad`, `jvp`, `vjp`, `vmap`; `jacobians.py`:
`jacfwd`, `jacrev`, `hessian`).

Each rule table is keyed by the `Primitive` object. A primitive defined outside `lax` gets its
rules next to its definition through `register_jvp`, `register_vjp`, `register_batch` and
`declare_non_differentiable` (as `jitviz/random.py` does for `threefry2x32`);
`rules_of(prim)` collects a primitive's rules and `missing_rules()` lists primitives without
them (tests fail on any).
"""
from __future__ import annotations

from ..core.registry import PRIMITIVES, Primitive
from .function_transforms import TransformError, grad, jvp, value_and_grad, vjp, vmap
from .jacobians import hessian, jacfwd, jacrev
from .linearize import linearize
import importlib as _importlib

# the submodules `jvp`/`vjp` share their names with the functions exported here
_jvp = _importlib.import_module(".jvp", __name__)
_vjp = _importlib.import_module(".vjp", __name__)
_batching = _importlib.import_module(".batching", __name__)


def _checked(prim, registrar: str) -> Primitive:
    # lookups go by `eqn.primitive`: a rule under a name string would silently never be found
    if not isinstance(prim, Primitive):
        raise TypeError(f"{registrar} takes a Primitive, got {prim!r}")
    return prim


def register_jvp(prim: Primitive, rule) -> None:
    """Forward mode for `prim`: `rule(primals, tangents, **params) -> (outputs, tangents)`,
    a tangent None for a symbolic zero (lists for multiple-result primitives)."""
    _jvp.JVP_RULES[_checked(prim, "register_jvp")] = rule


def register_vjp(prim: Primitive, rule) -> None:
    """Reverse mode for `prim`: `rule(ct, primals, out, **params) -> a cotangent per operand`
    (None for a zero; `ct` and `out` are lists for multiple-result primitives)."""
    _vjp.VJP_RULES[_checked(prim, "register_vjp")] = rule


def register_batch(prim: Primitive, rule) -> None:
    """Vectorization of `prim`: `rule(args, dims, **params) -> (outputs, output dims)`, a dim
    being the batch dimension of a value (None: the same for every example)."""
    _batching.BATCH_RULES[_checked(prim, "register_batch")] = rule


def declare_non_differentiable(prim: Primitive) -> None:
    """`prim`'s outputs carry no derivative (integer or boolean results, piecewise-constant
    functions): both modes pass zero tangents and cotangents through it, no rule needed."""
    _jvp.NON_DIFFERENTIABLE.add(_checked(prim, "declare_non_differentiable"))


def rules_of(prim: Primitive) -> dict:
    """The transformation rules of one primitive: jvp, vjp and batch (None if missing);
    `non_differentiable` when the primitive is declared so."""
    return {
        "jvp": _jvp.JVP_RULES.get(prim),
        "vjp": _vjp.VJP_RULES.get(prim) or _vjp.VJP_CALL_RULES.get(prim),
        "batch": _batching.BATCH_RULES.get(prim),
        "non_differentiable": prim in _jvp.NON_DIFFERENTIABLE,
    }


def missing_rules() -> dict:
    """{rule kind: [primitives without it, by name]} over the whole registry."""
    out = {"jvp": [], "vjp": [], "batch": []}
    for prim in sorted(PRIMITIVES.values(), key=lambda p: p.name):
        r = rules_of(prim)
        for kind in ("jvp", "vjp"):
            if r[kind] is None and not r["non_differentiable"]:
                out[kind].append(prim)
        if r["batch"] is None:
            out["batch"].append(prim)
    return out


__all__ = ["grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev", "hessian",
           "TransformError", "rules_of", "missing_rules", "register_jvp", "register_vjp",
           "register_batch", "declare_non_differentiable"]
