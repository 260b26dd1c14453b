"""The lowering registry: every backend finds its rules by `Primitive`, and every declared rule
table covers the primitives it says it must (a new primitive without a rule fails here)."""
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
