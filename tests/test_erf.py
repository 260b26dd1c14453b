"""lax.erf / lax.erfc primitives and jax.scipy.special's erf / erfc over them: libm's values on
every backend, float32 and float64, the derivative 2/sqrt(pi) exp(-x^2), JAX's values."""
import math

import numpy as np
import pytest

import jitviz
import jitviz.scipy.special as special
from jitviz import lax

X = np.array([-6.0, -3.0, -0.5, 0.0, 0.1, 2.5, 6.0, 27.0])


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_values_are_libm_s(backend, dtype, name, keep_float64):
    out = jitviz.jit(getattr(lax, name), backend=backend)(X.astype(dtype))
    expected = np.array([getattr(math, name)(v) for v in X.astype(dtype)], dtype)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=2e-7 if dtype == np.float32 else 1e-15,
                               atol=1e-45)


def test_derivative_and_integer_promotion():
    g = jitviz.grad(lambda x: special.erf(x).sum())(X[:6].astype(np.float32))
    np.testing.assert_allclose(g, 2 / np.sqrt(np.pi) * np.exp(-X[:6] ** 2), rtol=1e-6)
    gc = jitviz.grad(lambda x: special.erfc(x).sum())(np.float32(0.3))
    assert float(gc) == pytest.approx(-2 / np.sqrt(np.pi) * np.exp(-0.09), rel=1e-6)
    assert special.erf(1).dtype == np.float32
    with pytest.raises(TypeError, match="erf does not accept dtype int32"):
        lax.erf(np.int32(1))


def test_matches_jax_when_installed():
    jax = pytest.importorskip("jax")
    x = X.astype(np.float32)
    for name in ("erf", "erfc"):
        ours = jitviz.jit(getattr(special, name))(x)
        theirs = np.asarray(jax.jit(getattr(jax.scipy.special, name))(x))
        np.testing.assert_allclose(ours, theirs, rtol=3e-7, atol=1e-38)
