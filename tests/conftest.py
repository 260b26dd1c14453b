"""Shared fixtures. `x64` turns on 64-bit defaults for one test and always restores them."""
import pytest

import jitviz

from helpers import float64_kept, x64_enabled  # noqa: E402


@pytest.fixture
def x64():
    with x64_enabled():
        yield


@pytest.fixture
def keep_float64():
    """jitviz's keep_float64 switch on for one test (NumPy float64 inputs stay float64)."""
    with float64_kept():
        yield


@pytest.fixture(autouse=True)
def _restore_x64():
    """No test may leave 64-bit mode (or the keep_float64 switch) on for the next one."""
    before = jitviz.config.enable_x64, jitviz.config.keep_float64
    yield
    jitviz.config.update("enable_x64", before[0])
    jitviz.config.update("keep_float64", before[1])


# The tracing-core test modules: every jaxpr they trace with `jitviz.make_jaxpr` is also
# checked with `jitviz.typecheck_jaxpr` (helpers.trace_and_check does more: eval vs NumPy).
TRACING_CORE_TESTS = {
    "test_primitives", "test_jnp", "test_hypothesis_programs", "test_seeds_tracing",
    "test_tracing_errors", "test_bad_input", "test_pytrees", "test_control_flow",
    "test_printing", "test_report",
}


@pytest.fixture(autouse=True)
def _typecheck_every_traced_jaxpr(request, monkeypatch):
    if request.module.__name__.rpartition(".")[2] in TRACING_CORE_TESTS:
        real = jitviz.make_jaxpr

        def make_jaxpr(fun, *args, **kwargs):
            make = real(fun, *args, **kwargs)

            def traced(*a, **kw):
                closed = make(*a, **kw)
                jitviz.typecheck_jaxpr(closed)
                return closed
            return traced
        monkeypatch.setattr(jitviz, "make_jaxpr", make_jaxpr)
    yield
