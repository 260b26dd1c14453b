"""lax.lgamma / lax.digamma primitives and scipy.special.gammaln / digamma over them: JAX's
values in float32 and float64 (poles and infinities included) on the interpreter and the CPU
backend, the derivatives (digamma; trigamma, checked against JAX where JAX's polygamma is
defined and by finite differences where it is not), vmap and integer promotion."""
import numpy as np
import pytest

import jitviz
import jitviz.scipy.special as special
from jitviz import lax

from helpers import jax_x64_enabled

jax = pytest.importorskip("jax")
X = np.concatenate([[-2.0, -1.5, -0.5, 0.0, 1e-8, 0.5, 1.0, 1.4616321449683622, 2.5, 10.0,
                     1e6, np.inf, -np.inf, np.nan, -100.3, -7.9, -1e20, 1e300],
                    np.linspace(-20, 40, 601)])


@pytest.fixture
def jax_x64():
    with jax_x64_enabled():
        yield


def _like_jax(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    # relative to 1 + |value|: near digamma's root the relative error of both is unbounded
    err = np.abs(got[finite] - want[finite]) / (1 + np.abs(want[finite]))
    assert err.max() <= rtol, (err.max(), X[finite][np.argmax(err)])


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_float64_values_match_jax(backend, name, jax_x64, x64):
    got = jitviz.jit(getattr(lax, name), backend=backend)(X)
    _like_jax(got, getattr(jax.lax, name)(X), 2e-14)


@pytest.mark.parametrize("name", ["gammaln", "digamma"])
def test_float32_values_match_jax(name):
    x = X.astype(np.float32)
    _like_jax(jitviz.jit(getattr(special, name))(x), getattr(jax.scipy.special, name)(x), 3e-6)
    assert getattr(special, name)(3).dtype == np.float32  # integers: the default float
    with pytest.raises(TypeError, match=f"{'lgamma' if name == 'gammaln' else name} does not "
                                        "accept dtype int32"):
        getattr(lax, "lgamma" if name == "gammaln" else name)(np.int32(3))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_derivatives(backend, jax_x64, x64):
    positive = np.linspace(0.05, 30, 200)
    dlgamma = jitviz.jit(jitviz.vmap(jitviz.grad(lax.lgamma)), backend=backend)(positive)
    np.testing.assert_allclose(dlgamma, np.asarray(jax.lax.digamma(positive)), rtol=1e-13)
    trigamma = jitviz.jit(jitviz.vmap(jitviz.grad(lax.digamma)), backend=backend)(positive)
    want = np.asarray(jax.vmap(jax.grad(jax.lax.digamma))(positive))
    np.testing.assert_allclose(trigamma, want, rtol=1e-12)
    # negative x: JAX's polygamma is not defined there; central differences of digamma are
    negative = np.array([-0.5, -1.3, -7.9, -19.01])
    got = jitviz.vmap(jitviz.grad(lax.digamma))(negative)
    h = 1e-6
    fd = np.array([(_digamma(v + h) - _digamma(v - h)) / (2 * h) for v in negative])
    np.testing.assert_allclose(got, fd, rtol=1e-6)
    hess = jitviz.grad(jitviz.grad(lambda v: lax.digamma(v)))(np.float64(2.5))
    assert float(hess) == pytest.approx(float(jax.grad(jax.grad(jax.grad(jax.lax.lgamma)))(2.5)),
                                        rel=1e-10)


def _digamma(v):
    return float(lax.digamma(np.float64(v)))


def test_gammaln_in_a_log_density_under_jit_and_vmap():
    """A Poisson log-pmf, the common use: k log(rate) - rate - gammaln(k + 1)."""
    k = np.arange(6, dtype=np.float32)
    rates = np.array([0.5, 2.0, 7.5], np.float32)

    def logpmf(lib_special, r):
        return k * np.log(r) - r - lib_special.gammaln(k + 1)
    got = jitviz.jit(jitviz.vmap(lambda r: logpmf(special, r)))(rates)
    want = jax.vmap(lambda r: k * jax.numpy.log(r) - r - jax.scipy.special.gammaln(k + 1))(rates)
    np.testing.assert_allclose(got, np.asarray(want), rtol=2e-6)
    np.testing.assert_allclose(np.exp(got[:2]).sum(1), [1, 1], atol=0.02)  # a pmf
