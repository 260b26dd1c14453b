"""The lowering registry: every backend finds its rules by `Primitive`, and every declared rule
table covers the primitives it says it must (a new primitive without a rule fails here)."""
import numpy as np
import pytest

import jitviz  # noqa: F401  (registers every primitive)
import jitviz.random  # noqa: F401  (threefry2x32 brings its own rules)
from jitviz.backends import BACKEND_NAMES, get_backend
from jitviz.core import registry
from jitviz.core.registry import (PRIMITIVES, declare_target, lowering_helpers, lowering_rule,
                                  missing_lowerings, register_lowering)

for _name in BACKEND_NAMES:  # importing a backend declares its tables
    get_backend(_name)


@pytest.mark.parametrize("target", sorted(registry.TARGETS))
def test_every_target_covers_the_primitives_it_needs(target):
    assert missing_lowerings(target) == []


def test_a_new_primitive_without_a_rule_is_reported():
    prim = registry.Primitive("test_registry_probe", abstract_eval=lambda x: x,
                              impl=lambda x: x, kind="elementwise")
    try:
        declare_target("test.expr", needs=lambda p: p.kind == "elementwise"
                       and p.name.startswith("test_registry"))
        assert missing_lowerings("test.expr") == ["test_registry_probe"]
        register_lowering(prim, "test.expr", "rule")
        assert missing_lowerings("test.expr") == []
    finally:
        del PRIMITIVES["test_registry_probe"]
        registry.TARGETS.pop("test.expr", None)


def test_a_target_falls_back_to_its_base_table_and_overrides_it():
    prim = registry.Primitive("test_registry_fallback", abstract_eval=lambda x: x,
                              impl=lambda x: x)
    try:
        declare_target("test.base")
        declare_target("test.child", fallback="test.base")

        def helper():
            pass
        register_lowering(prim, "test.base", "base rule", helpers=[helper])
        assert lowering_rule(prim, "test.child") == "base rule"
        assert lowering_helpers("test.child") == {"helper": helper}
        register_lowering(prim, "test.child", "own rule")
        assert lowering_rule(prim, "test.child") == "own rule"
        assert lowering_rule(prim, "test.base") == "base rule"
    finally:
        del PRIMITIVES["test_registry_fallback"]
        for name in ("test.base", "test.child"):
            registry.TARGETS.pop(name, None)


def test_rules_are_keyed_by_the_primitive_object_not_its_name():
    with pytest.raises(TypeError, match="takes a Primitive"):
        register_lowering("exp", "cpu.expr", "rule")


# --- the expression rules both Numba targets share (backends/numba_expr.py) ---------------------

from jitviz.backends import numba_expr  # noqa: E402
from jitviz.backends.cpu.rules import CPU  # noqa: E402
from jitviz.backends.cuda.rules import CUDA  # noqa: E402

NUMBA_DIALECTS = (CPU, CUDA)


def test_both_numba_targets_fall_back_to_the_shared_table():
    assert registry.TARGETS["cpu.expr"].fallback == numba_expr.NUMBA_EXPR
    assert registry.TARGETS["cuda.expr"].fallback == numba_expr.NUMBA_EXPR


def test_a_primitive_missing_from_the_shared_table_is_reported_on_both_targets(monkeypatch):
    """add has no rule of its own on either target: without the shared one both miss it."""
    from jitviz.lax import primitives as P
    shared = registry._RULES[numba_expr.NUMBA_EXPR]
    assert P.add_p in shared
    monkeypatch.delitem(shared, P.add_p)
    assert "add" in missing_lowerings("cpu.expr")
    assert "add" in missing_lowerings("cuda.expr")


def test_a_shared_rule_speaks_each_dialect_and_a_target_overrides_it():
    prim = registry.Primitive("test_registry_shared", abstract_eval=lambda x: x,
                              impl=lambda x: x, kind="elementwise")
    f32 = np.dtype(np.float32)
    try:
        numba_expr.register_shared(
            prim, lambda d, args, ins, out, params: d.call("probe", args, ins[0], out))
        texts = {d.target: numba_expr.expression_rule(prim, d)(["x"], [f32], f32, {})
                 for d in NUMBA_DIALECTS}
        assert texts == {"cpu.expr": "np.probe(x)", "cuda.expr": "probe(x)"}
        register_lowering(prim, "cpu.expr", lambda args, ins, out, params: "own(x)")
        assert numba_expr.expression_rule(prim, CPU)(["x"], [f32], f32, {}) == "own(x)"
        assert numba_expr.expression_rule(prim, CUDA)(["x"], [f32], f32, {}) == "probe(x)"
    finally:
        del PRIMITIVES["test_registry_shared"]
        for table in ("cpu.expr", numba_expr.NUMBA_EXPR):
            registry._RULES[table].pop(prim, None)


def test_every_shared_rule_is_used_by_some_numba_target():
    """A shared rule both targets override is dead text: move it into one of them."""
    unused = sorted(
        prim.name for prim in registry.lowered_primitives(numba_expr.NUMBA_EXPR)
        if all(registry.lowering(prim, d.target) is not
               registry.lowering(prim, numba_expr.NUMBA_EXPR) for d in NUMBA_DIALECTS))
    assert unused == []


def test_a_shared_rule_computes_float16_in_float32_on_cuda_unless_exact():
    """CUDA computes half precision in float32 and rounds (as NumPy's float16 loops), except
    for the rules exact in half (comparisons, extrema, sign flips)."""
    from jitviz.lax import primitives as P
    from jitviz.backends.cuda.rules import elementwise_expr
    f16 = np.dtype(np.float16)
    inexact = elementwise_expr(P.add_p, ["a", "b"], [f16, f16], f16, {})
    exact = elementwise_expr(P.max_p, ["a", "b"], [f16, f16], f16, {})
    assert inexact.startswith("np.float16(") and "np.float32(a)" in inexact
    assert "np.float32" not in exact


BOOLS = np.array([False, True])


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_boolean_clamp_is_the_shared_extrema(backend):
    """clamp of booleans is min(max(x, lo), hi) through the dialect's extrema (on the CPU
    `((x or lo) and hi)`, its boolean max and min): every combination, as NumPy."""
    from jitviz import lax
    lo, x, hi = (a.ravel() for a in np.meshgrid(BOOLS, BOOLS, BOOLS, indexing="ij"))
    f = jitviz.jit(lambda lo, x, hi: lax.clamp(lo, x, hi), backend=backend)
    np.testing.assert_array_equal(f(lo, x, hi), np.minimum(np.maximum(x, lo), hi))


# --- the structural primitives CPU kernels compute: the fusion pass's choice ---------------------

def test_a_structural_primitive_the_fuser_admits_needs_an_index_map(monkeypatch):
    from jitviz.passes import fuse
    prim = registry.Primitive("test_registry_fused_structural", abstract_eval=lambda x: x,
                              impl=lambda x: x, kind="structural")
    try:
        monkeypatch.setitem(fuse.FUSABLE, prim, lambda eqn: True)
        assert missing_lowerings("cpu.index") == ["test_registry_fused_structural"]
        register_lowering(prim, "cpu.generate", lambda eqn, idx: "0")
        assert missing_lowerings("cpu.index") == []
    finally:
        del PRIMITIVES["test_registry_fused_structural"]
        registry._RULES["cpu.generate"].pop(prim, None)


def test_every_index_map_and_generator_is_of_a_primitive_the_fuser_admits():
    """An index or generate rule of a primitive that never reaches a kernel is dead."""
    from jitviz.passes.fuse import FUSABLE
    kernel_structural = (registry.lowered_primitives("cpu.index")
                         | registry.lowered_primitives("cpu.generate"))
    assert kernel_structural and kernel_structural <= set(FUSABLE)


def _softsign_scalar(x):
    return x / (1 + abs(x))


def test_one_shared_rule_with_a_helper_lowers_a_primitive_on_both_numba_targets(tmp_path):
    """A new elementwise primitive needs one rule for both Numba targets: its helper is
    compiled by each (rt.<name> in CPU kernels, a device function on CUDA)."""
    from jitviz.backends.cpu import CpuBackend
    from jitviz.backends.cpu.cache import KernelCache
    from jitviz.passes import run_pipeline
    prim = registry.Primitive("test_registry_softsign", abstract_eval=lambda x: x,
                              impl=lambda x: x / (1 + np.abs(x)), kind="elementwise")
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    try:
        numba_expr.register_shared(
            prim, lambda d, args, ins, out, params: f"{d.helper('softsign_scalar')}({args[0]})",
            helpers=[("softsign_scalar", _softsign_scalar)])
        for table in ("cpu.expr", "cuda.expr"):
            assert lowering_helpers(table)["softsign_scalar"] is _softsign_scalar
        closed = run_pipeline(jitviz.make_jaxpr(lambda x: prim.bind(x) * 2)(x))[-1][1]
        exe = CpuBackend(cache=KernelCache(str(tmp_path))).compile(closed)
        np.testing.assert_allclose(exe(x)[0], 2 * x / (1 + np.abs(x)), rtol=1e-6)
        assert "rt.softsign_scalar(" in exe.kernels[0].source
        from jitviz.backends.cuda.rules import elementwise_expr
        f32 = np.dtype(np.float32)
        assert elementwise_expr(prim, ["x"], [f32], f32, {}) == "softsign_scalar(x)"
    finally:
        del PRIMITIVES["test_registry_softsign"]
        registry._RULES[numba_expr.NUMBA_EXPR].pop(prim, None)


def test_a_plain_rule_in_the_shared_table_is_refused_with_the_fix():
    prim = registry.Primitive("test_registry_plain_shared", abstract_eval=lambda x: x,
                              impl=lambda x: x, kind="elementwise")
    try:
        register_lowering(prim, numba_expr.NUMBA_EXPR, lambda args, *_: args[0])
        with pytest.raises(TypeError, match="register_shared"):
            numba_expr.expression_rule(prim, CPU)
    finally:
        del PRIMITIVES["test_registry_plain_shared"]
        registry._RULES[numba_expr.NUMBA_EXPR].pop(prim, None)
