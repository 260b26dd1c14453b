"""The public surface: `jitviz.__all__` lists every public name, each one (and every class and
warning of `jitviz.errors` and `jitviz.diagnostics`) says what it is, and `jit`'s docstring
documents each of its options."""
import inspect
import types

import pytest

import jitviz
import jitviz.diagnostics
import jitviz.errors


def _public_names(module) -> list[str]:
    return [name for name in dir(module) if not name.startswith("_")
            and not isinstance(getattr(module, name), types.ModuleType)]


def test_every_public_name_is_in_all():
    missing = [name for name in _public_names(jitviz) if name not in jitviz.__all__]
    assert missing == [], f"public names missing from jitviz.__all__: {missing}"
    assert len(set(jitviz.__all__)) == len(jitviz.__all__)


@pytest.mark.parametrize("name", jitviz.__all__)
def test_every_exported_name_exists_and_has_a_docstring(name):
    assert (inspect.getdoc(getattr(jitviz, name)) or "").strip(), f"jitviz.{name} has no docstring"


@pytest.mark.parametrize("module", [jitviz.errors, jitviz.diagnostics], ids=lambda m: m.__name__)
def test_every_class_and_warning_has_a_docstring(module):
    classes = [getattr(module, name) for name in _public_names(module)
               if inspect.isclass(getattr(module, name))]
    # inspect.getdoc would inherit a base class's docstring: each class must have its own
    undocumented = [c.__name__ for c in classes if not (c.__doc__ or "").strip()]
    assert classes and undocumented == []


def test_jit_documents_every_option():
    doc = inspect.getdoc(jitviz.jit)
    options = [name for name, p in inspect.signature(jitviz.jit).parameters.items()
               if p.kind is p.KEYWORD_ONLY]
    undocumented = [name for name in options if f"\n{name}:" not in f"\n{doc}"]
    assert options and undocumented == []
