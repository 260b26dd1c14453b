"""`jax_debug_nans` / `jax_debug_infs`: a FloatingPointError at the first NaN/inf made, naming
the equation and the user's line (jitviz/debug_nans.py)."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp


@pytest.fixture
def debug_nans():
    jitviz.config.update("jax_debug_nans", True)
    yield
    jitviz.config.update("jax_debug_nans", False)


def log_plus(x, y):
    a = x * 2
    b = jnp.log(y)  # the NaN is made here for y < 0
    return a + b


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_jitted_nan_names_the_equation_and_the_line(debug_nans, backend):
    f = jitviz.jit(log_plus, backend=backend)
    assert float(f(np.float32(1.0), np.float32(1.0))) == 2.0
    with pytest.raises(FloatingPointError) as info:
        f(np.float32(1.0), np.float32(-2.0))
    text = str(info.value)
    assert text.startswith("invalid value (nan) encountered in log at ")
    assert "test_debug_nans.py" in text and "b = jnp.log(y)" in text
    assert "jitted function log_plus" in text


def test_nan_inside_a_nested_jit_is_found_inside_it(debug_nans):
    def outer(x):
        return jitviz.jit(lambda v: jnp.sqrt(v) + 1)(x) * 3
    with pytest.raises(FloatingPointError, match=r"in sqrt .*\n.*inside jit <lambda>"):
        jitviz.jit(outer)(np.float32(-1.0))


def test_eager_operations_are_checked(debug_nans):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
        jnp.log(-1.0)
    assert float(jnp.log(1.0)) == 0.0


def test_infs_are_checked_only_when_asked():
    f = jitviz.jit(lambda x: 1.0 / x)
    assert np.isinf(f(np.float32(0.0)))
    jitviz.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
            f(np.float32(0.0))
    finally:
        jitviz.config.update("jax_debug_infs", False)


def test_off_by_default_and_nans_passed_in_are_not_the_programs():
    f = jitviz.jit(log_plus)
    assert np.isnan(f(np.float32(1.0), np.float32(-1.0)))  # off: no error
    jitviz.config.update("jax_debug_nans", True)
    try:
        assert np.isnan(f(np.float32(np.nan), np.float32(1.0)))  # the NaN came in
    finally:
        jitviz.config.update("jax_debug_nans", False)
