"""lax.erf_inv (a primitive) and what is built on the erf / erfc primitives — nn.gelu's exact
form, scipy.special.ndtr / log_ndtr / erfinv, scipy.stats.norm.cdf / logcdf: float32 and
float64 (accurate under x64), their derivatives, vmap, every backend, compared with JAX."""
import math

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
import jitviz.scipy.special as special
from jitviz import lax, nn
from jitviz.scipy.stats import norm

from helpers import jax_x64_enabled

# written for NumPy 64-bit operands that stay 64-bit (jitviz's keep_float64 switch);
# JAX's own 32-bit narrowing is tests/test_array_promotion.py's
pytestmark = pytest.mark.usefixtures("keep_float64")

jax = pytest.importorskip("jax")

INSIDE = np.concatenate([np.linspace(-0.999, 0.999, 801), [0.0, -0.0, 1e-30, 0.5, 0.999999]])


jax_x64 = jax_x64_enabled  # helpers.py: JAX's x64 on inside the block


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_inv_inverts_libm_erf(backend, dtype):
    x = INSIDE.astype(dtype)
    y = jitviz.jit(lax.erf_inv, backend=backend)(x)
    assert y.dtype == dtype
    back = np.array([math.erf(v) for v in np.asarray(y, np.float64)])
    # |d erf / dy| <= 2/sqrt(pi): an error of one ulp in y moves erf(y) by about that much
    tol = 4 * np.finfo(dtype).eps
    np.testing.assert_allclose(back, x.astype(np.float64), rtol=tol, atol=tol * 1e-30)
    edges = jitviz.jit(lax.erf_inv, backend=backend)(np.array([-1, 1, 1.5, -2, np.nan], dtype))
    np.testing.assert_array_equal(edges, [-np.inf, np.inf, np.nan, np.nan, np.nan])


def test_erf_inv_matches_jax_and_its_derivative():
    x = INSIDE.astype(np.float32)
    np.testing.assert_allclose(special.erfinv(x), np.asarray(jax.scipy.special.erfinv(x)),
                               rtol=4e-6, atol=1e-37)
    with jax_x64():
        x64 = np.linspace(-0.99, 0.99, 199)
        np.testing.assert_allclose(lax.erf_inv(x64), np.asarray(jax.lax.erf_inv(x64)),
                                   rtol=1e-14)
    g = jitviz.grad(lambda v: lax.erf_inv(v).sum())(x[:20])
    np.testing.assert_allclose(g, np.asarray(jax.grad(lambda v: jax.lax.erf_inv(v).sum())(
        x[:20])), rtol=2e-5)
    _, t = jitviz.jvp(lax.erf_inv, (np.float32(0.3),), (np.float32(2.0),))
    assert float(t) == pytest.approx(2.0 * math.sqrt(math.pi) / 2
                                     * math.exp(float(lax.erf_inv(np.float32(0.3))) ** 2), rel=1e-6)
    xs = x[:12].reshape(3, 4)
    np.testing.assert_array_equal(jitviz.vmap(lax.erf_inv)(xs), lax.erf_inv(xs))
    assert special.erfinv(0).dtype == np.float32  # integers become the default float
    with pytest.raises(TypeError, match="erf_inv does not accept dtype int32"):
        lax.erf_inv(np.int32(0))


def test_float64_gelu_ndtr_and_norm_match_jax_under_x64(x64):
    x = np.concatenate([np.linspace(-30.0, 12.0, 841), [-np.inf, np.inf, np.nan]])
    with jax_x64():
        pairs = [(lambda v: nn.gelu(v, approximate=False),
                  lambda v: jax.nn.gelu(v, approximate=False)),
                 (special.ndtr, jax.scipy.special.ndtr),
                 (special.log_ndtr, jax.scipy.special.log_ndtr),
                 (norm.cdf, jax.scipy.stats.norm.cdf),
                 (lambda v: norm.logcdf(v, 1.0, 2.0),
                  lambda v: jax.scipy.stats.norm.logcdf(v, 1.0, 2.0))]
        for ours, theirs in pairs:
            got, want = jitviz.jit(ours)(x), np.asarray(theirs(x))
            assert got.dtype == want.dtype == np.float64
            # the composed float32 erf gave ~1e-7 here; libm's is within an ulp or two
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_log_ndtr_has_jax_s_derivative_far_in_the_tails(backend, x64):
    x = np.array([-35.0, -15.0, -3.0, 0.0, 4.0, 9.0])
    with jax_x64():
        want = np.asarray(jax.vmap(jax.grad(jax.scipy.special.log_ndtr))(x))
        got = jitviz.jit(jitviz.vmap(jitviz.grad(special.log_ndtr)), backend=backend)(x)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(got))
    x32 = x.astype(np.float32)
    want32 = np.asarray(jax.vmap(jax.grad(jax.scipy.special.log_ndtr))(x32))
    np.testing.assert_allclose(jitviz.vmap(jitviz.grad(special.log_ndtr))(x32), want32,
                               rtol=2e-5)


def test_ndtr_refuses_other_dtypes_as_jax_and_series_order_is_checked():
    with pytest.raises(TypeError, match="x.dtype=float16 is not supported"):
        special.ndtr(np.ones(2, np.float16))
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        special.log_ndtr(np.ones(2, np.float32), series_order=2.0)
    with pytest.raises(ValueError, match="series_order must be <= 30"):
        special.log_ndtr(np.ones(2, np.float32), series_order=31)
    x = np.linspace(-25, -11, 8).astype(np.float32)
    for order in (0, 1, 5):
        np.testing.assert_allclose(special.log_ndtr(x, order),
                                   np.asarray(jax.scipy.special.log_ndtr(x, order)), rtol=1e-6)


def test_truncated_normal_with_traced_bounds_uses_the_erf_primitive():
    key = jitviz.random.PRNGKey(3)
    draw = jitviz.jit(lambda lo, hi: jitviz.random.truncated_normal(key, lo, hi, (2000,)))
    text = str(jitviz.make_jaxpr(
        lambda lo, hi: jitviz.random.truncated_normal(key, lo, hi, (4,)))(-1.0, 2.0))
    assert " erf " in text
    s = draw(np.float32(-0.5), np.float32(1.5))
    assert s.min() > -0.5 and s.max() < 1.5
    np.testing.assert_allclose(s, jitviz.random.truncated_normal(key, -0.5, 1.5, (2000,)),
                               rtol=1e-5, atol=1e-6)
    assert jnp.asarray(s).dtype == np.float32
