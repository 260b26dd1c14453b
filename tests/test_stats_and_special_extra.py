"""The distributions of jitviz.scipy.stats beyond norm (expon, laplace, logistic, uniform,
cauchy, poisson, gamma, beta), scipy.special's betaln / gamma / gammasgn / rel_entr / kl_div /
softmax / log_softmax, and nn's sparse_plus / sparse_sigmoid / log1mexp / logmeanexp / tanh:
values and dtypes against real JAX (eager, under jit, on the CPU backend), gradients, vmap."""
import numpy as np
import pytest

import jitviz
import jitviz.scipy.special as special
import jitviz.scipy.stats as stats
from jitviz import nn

jax = pytest.importorskip("jax")
jst, jsp = jax.scipy.stats, jax.scipy.special
X = np.concatenate([np.linspace(-4, 9, 53), [0.0, 1.0, 2.0, 3.0, -np.inf, np.inf, np.nan]]
                   ).astype(np.float32)
U = np.concatenate([np.linspace(0, 1, 21), [-0.5, 1.5, np.nan]]).astype(np.float32)
K = np.array([0, 1, 2, 3, 7, 2.5, -1, 30], np.float32)

# name -> (our function, JAX's, its arguments)
CASES = {
    "expon.logpdf": (stats.expon.logpdf, jst.expon.logpdf, (X, 0.5, 2.0)),
    "expon.pdf": (stats.expon.pdf, jst.expon.pdf, (X,)),
    "expon.cdf": (stats.expon.cdf, jst.expon.cdf, (X, -1.0, 0.5)),
    "expon.sf": (stats.expon.sf, jst.expon.sf, (X,)),
    "expon.logsf": (stats.expon.logsf, jst.expon.logsf, (X,)),
    "expon.logcdf": (stats.expon.logcdf, jst.expon.logcdf, (X,)),
    "expon.ppf": (stats.expon.ppf, jst.expon.ppf, (U, 1.0, 3.0)),
    "laplace.logpdf": (stats.laplace.logpdf, jst.laplace.logpdf, (X, 1.0, 2.0)),
    "laplace.pdf": (stats.laplace.pdf, jst.laplace.pdf, (X,)),
    "laplace.cdf": (stats.laplace.cdf, jst.laplace.cdf, (X, 1.0, 0.5)),
    "logistic.logpdf": (stats.logistic.logpdf, jst.logistic.logpdf, (X, 1.0, 2.0)),
    "logistic.pdf": (stats.logistic.pdf, jst.logistic.pdf, (X,)),
    "logistic.cdf": (stats.logistic.cdf, jst.logistic.cdf, (X,)),
    "logistic.sf": (stats.logistic.sf, jst.logistic.sf, (X, 0.5)),
    "logistic.ppf": (stats.logistic.ppf, jst.logistic.ppf, (U,)),
    "logistic.isf": (stats.logistic.isf, jst.logistic.isf, (U, 1.0, 2.0)),
    "uniform.logpdf": (stats.uniform.logpdf, jst.uniform.logpdf, (X, -1.0, 3.0)),
    "uniform.pdf": (stats.uniform.pdf, jst.uniform.pdf, (X,)),
    "uniform.cdf": (stats.uniform.cdf, jst.uniform.cdf, (X, -1.0, 3.0)),
    "uniform.ppf": (stats.uniform.ppf, jst.uniform.ppf, (U, 2.0, 4.0)),
    "cauchy.logpdf": (stats.cauchy.logpdf, jst.cauchy.logpdf, (X, 1.0, 2.0)),
    "cauchy.pdf": (stats.cauchy.pdf, jst.cauchy.pdf, (X,)),
    "cauchy.cdf": (stats.cauchy.cdf, jst.cauchy.cdf, (X,)),
    "cauchy.logcdf": (stats.cauchy.logcdf, jst.cauchy.logcdf, (X, 0.5)),
    "cauchy.sf": (stats.cauchy.sf, jst.cauchy.sf, (X, 0.5, 2.0)),
    "poisson.logpmf": (stats.poisson.logpmf, jst.poisson.logpmf, (K, 2.5)),
    "poisson.pmf": (stats.poisson.pmf, jst.poisson.pmf, (K, 4.0, 1.0)),
    "gamma.logpdf": (stats.gamma.logpdf, jst.gamma.logpdf, (X, 2.5, -1.0, 2.0)),
    "gamma.pdf": (stats.gamma.pdf, jst.gamma.pdf, (X, 0.7)),
    "beta.logpdf": (stats.beta.logpdf, jst.beta.logpdf, (U, 2.0, 3.5)),
    "beta.pdf": (stats.beta.pdf, jst.beta.pdf, (U, 0.5, 0.5, -0.1, 1.2)),
    "betaln": (special.betaln, jsp.betaln, (np.float32([0.5, 1, 2.5, 7]),
                                           np.float32([3, 0.2, 2.5, 11]))),
    "gamma": (special.gamma, jsp.gamma, (np.float32([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 3, 7.5,
                                                     -1, -np.inf, np.inf, np.nan]),)),
    "gammasgn": (special.gammasgn, jsp.gammasgn, (np.float32([-3.5, -2.5, -1.5, -0.5, -0.0,
                                                              0.0, 2, -2, -np.inf, np.inf,
                                                              np.nan]),)),
    "rel_entr": (special.rel_entr, jsp.rel_entr, (np.float32([0, 0, 1, 2, -1, 3, 0.5]),
                                                 np.float32([0, 1, 2, 0, 1, -1, 0.25]))),
    "kl_div": (special.kl_div, jsp.kl_div, (np.float32([0, 0, 1, 2, 3, 0.5]),
                                           np.float32([0, 1, 2, 0, -1, 0.25]))),
    "special.softmax": (special.softmax, jsp.softmax, (X[:20].reshape(4, 5),)),
    "special.log_softmax": (special.log_softmax, jsp.log_softmax, (X[:20].reshape(4, 5),)),
    "special.softmax axis": (lambda x: special.softmax(x, axis=1),
                             lambda x: jsp.softmax(x, axis=1), (X[:20].reshape(4, 5),)),
    "nn.sparse_plus": (nn.sparse_plus, jax.nn.sparse_plus, (X,)),
    "nn.sparse_sigmoid": (nn.sparse_sigmoid, jax.nn.sparse_sigmoid, (X,)),
    "nn.log1mexp": (nn.log1mexp, jax.nn.log1mexp, (np.float32([1e-6, 0.1, 0.69, 0.7, 5, 50,
                                                               np.inf]),)),
    "nn.logmeanexp": (lambda x: nn.logmeanexp(x, axis=1), lambda x: jax.nn.logmeanexp(x, axis=1),
                      (X[:20].reshape(4, 5),)),
    "nn.tanh": (nn.tanh, jax.nn.tanh, (X,)),
}


# betaln is gammaln(a) + gammaln(b) - gammaln(a + b) here, a more careful algorithm in JAX:
# a few float32 ulps of the sum apart, absolute (the log-density crosses zero)
ATOL = {"beta.logpdf": 1e-5, "beta.pdf": 1e-5, "betaln": 1e-5}


def _same(got, want, rtol=2e-6, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_eagerly_and_on_the_cpu_backend(name):
    ours, theirs, args = CASES[name]
    want = theirs(*args)
    atol = ATOL.get(name, 1e-6)
    _same(ours(*args), want, atol=atol)
    _same(jitviz.jit(ours, backend="cpu")(*args), want, atol=atol)


def test_gradients_and_vmap_match_jax():
    x = np.linspace(0.2, 3.0, 7).astype(np.float32)
    for ours, theirs in ((lambda v: stats.gamma.logpdf(v, 2.5).sum(),
                          lambda v: jst.gamma.logpdf(v, 2.5).sum()),
                         (lambda v: stats.logistic.logpdf(v).sum(),
                          lambda v: jst.logistic.logpdf(v).sum()),
                         (lambda v: nn.log1mexp(v).sum(), lambda v: jax.nn.log1mexp(v).sum()),
                         (lambda v: special.betaln(v, 2.0).sum(),
                          lambda v: jsp.betaln(v, 2.0).sum())):
        _same(jitviz.grad(ours)(x), jax.grad(theirs)(x), rtol=2e-5)
    rates = np.float32([0.5, 2.0, 7.0])
    _same(jitviz.vmap(lambda r: stats.poisson.logpmf(K[:5], r))(rates),
          jax.vmap(lambda r: jst.poisson.logpmf(K[:5], r))(rates))
