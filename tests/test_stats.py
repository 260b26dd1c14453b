"""jitviz.scipy.stats's distributions against jax.scipy.stats (real JAX 0.10): every function
on grids that run outside each support and through its edges, float32 and float64, under jit;
gradients of log densities against JAX; vmap against a loop; bad shapes."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.scipy.stats as stats


@pytest.fixture(autouse=True)
def _float64_operands_stay_float64(keep_float64):
    """The float64 cases compare jitviz's float64 results with JAX's under x64: NumPy float64
    operands stay float64 here (jitviz's keep_float64 switch)."""

jax = pytest.importorskip("jax")
jax_stats = pytest.importorskip("jax.scipy.stats")

rng = np.random.default_rng(1414)
X = np.concatenate([[-np.inf, -3.0, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 7.0, np.inf, np.nan],
                    rng.normal(1.0, 2.0, 12)])
Q = np.array([-0.1, 0.0, 1e-6, 0.1, 0.5, 0.9, 1.0, 1.1, np.nan])
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 2.5, 10.0, 25.0])


def _grid(*axes):
    return [m.ravel() for m in np.meshgrid(*axes, indexing="ij")]


LOC_SCALE = _grid(X, [0.0, -1.0], [1.0, 2.5])
SHAPE = _grid(X, [0.5, 1.0, 3.5], [0.0, 0.5], [1.0, 2.0])
BETA = _grid(np.linspace(-0.25, 1.25, 11), [0.5, 1.0, 4.0], [0.7, 3.0], [0.0], [1.0, 0.5])

# (module, function) -> operands
CASES = {}
for dist, names in {"norm": ["logpdf", "pdf", "ppf", "isf"], "expon": [
        "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"],
        "laplace": ["logpdf", "pdf", "cdf"],
        "cauchy": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"],
        "uniform": ["logpdf", "pdf", "cdf", "ppf"],
        "logistic": ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]}.items():
    for name in names:
        CASES[dist, name] = (_grid(Q, [0.0, -1.0], [1.0, 2.5]) if name in ("ppf", "isf")
                             else LOC_SCALE)
for name in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
    CASES["gamma", name] = SHAPE
    CASES["chi2", name] = SHAPE
    CASES["beta", name] = BETA
CASES["t", "logpdf"] = CASES["t", "pdf"] = SHAPE
for name in ["logpmf", "pmf", "cdf"]:
    CASES["poisson", name] = _grid(K, [0.5, 4.0], [0.0, 1.0])
CASES["bernoulli", "logpmf"] = CASES["bernoulli", "pmf"] = _grid(K, [0.0, 0.3, 1.0], [0.0, 1.0])
CASES["bernoulli", "cdf"] = _grid(np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]),
                                  [-0.1, 0.0, 0.3, 1.0, np.nan])
CASES["bernoulli", "ppf"] = _grid(Q, [-0.1, 0.0, 0.3, 1.0, np.nan])
CASES["binom", "logpmf"] = CASES["binom", "pmf"] = _grid(K, [0.0, 3.0, 10.0], [0.0, 0.4, 1.0],
                                                         [0.0, 1.0])
CASES["geom", "logpmf"] = CASES["geom", "pmf"] = _grid(K, [0.2, 1.0], [0.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: ".".join(c))
def test_matches_jax(case, dtype):
    dist, name = case
    args = [a.astype(dtype) for a in CASES[case]]
    if dist == "norm" and dtype == np.float64 and name not in ("logpdf", "pdf", "ppf", "isf"):
        pytest.skip("norm's cdf is float32 only (jitviz/_erf.py)")
    with np.errstate(all="ignore"):
        ours = np.asarray(jitviz.jit(getattr(getattr(stats, dist), name))(*args))
    with jax.enable_x64(dtype == np.float64):
        theirs = np.asarray(jax.jit(getattr(getattr(jax_stats, dist), name))(*args))
    assert ours.dtype == theirs.dtype == dtype
    rtol = {np.float32: 2e-4 if dist in ("gamma", "chi2", "beta", "poisson") else 2e-5,
            np.float64: 1e-6 if dist in ("beta", "binom") else 1e-9}[dtype]
    if case == ("norm", "isf") and dtype == np.float32:
        rtol = 1e-3  # JAX's is ppf(1 - q): isf(1e-6) is 4.7508, jitviz's the exact 4.7534
    if case in (("cauchy", "logcdf"), ("cauchy", "logsf")):
        # at -inf JAX's rounding leaves cdf 6e-9 (float32) or NaN (float64), not 0
        ours, theirs = ours[np.isfinite(args[0])], theirs[np.isfinite(args[0])]
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * 0.1, equal_nan=True,
                               err_msg=f"{dist}.{name}")


def test_dirichlet_matches_jax():
    alpha = np.array([0.5, 2.0, 3.0], np.float32)
    x = np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [0.3, 0.3, 0.3], [0.1, 0.1, 0.8]],
                 np.float32).T
    for args in ((x, alpha), (x[:2], alpha)):
        ours = jitviz.jit(stats.dirichlet.logpdf)(*args)
        np.testing.assert_allclose(ours, np.asarray(jax_stats.dirichlet.logpdf(*args)),
                                   rtol=1e-5)
    with pytest.raises(ValueError, match="`alpha` must be one-dimensional"):
        stats.dirichlet.logpdf(x, alpha[None])
    with pytest.raises(ValueError, match="one entry fewer"):
        stats.dirichlet.logpdf(x[:1], alpha)


LOG_DENSITIES = {
    "gamma": (lambda d, x, p: d.gamma.logpdf(x, p, 0.5, 2.0), [1.0, 2.5, 6.0], 2.5),
    "beta": (lambda d, x, p: d.beta.logpdf(x, p, 2.0), [0.2, 0.5, 0.7], 1.5),
    "t": (lambda d, x, p: d.t.logpdf(x, p, 1.0, 2.0), [-3.0, 0.5, 4.0], 3.0),
    "chi2": (lambda d, x, p: d.chi2.logpdf(x, p), [0.5, 2.0, 9.0], 4.0),
    "poisson": (lambda d, x, p: d.poisson.logpmf(x, p), [0.0, 2.0, 5.0], 3.0),
    "gamma.cdf": (lambda d, x, p: d.gamma.cdf(x, 2.0, 0.0, p), [0.5, 2.0, 6.0], 1.5),
}


@pytest.mark.parametrize("name", sorted(LOG_DENSITIES))
def test_gradients_match_jax(name):
    f, xs, p = LOG_DENSITIES[name]
    x, p = np.array(xs, np.float32), np.float32(p)

    def ours(x, p):
        return f(stats, x, p).sum()

    def theirs(x, p):
        return f(jax_stats, x, p).sum()
    got = jitviz.grad(ours, argnums=(0, 1))(x, p)
    want = jax.grad(theirs, argnums=(0, 1))(x, p)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=2e-5, atol=1e-6)


def test_vmap_matches_a_loop():
    x = rng.uniform(0.1, 5.0, (5, 3)).astype(np.float32)
    a = np.float32(2.5)

    def f(x):
        return stats.gamma.logpdf(x, a) + stats.beta.cdf(x / 6, a, 2.0) + stats.t.pdf(x, a)
    np.testing.assert_allclose(jitviz.vmap(f)(x), np.stack([f(row) for row in x]), rtol=1e-6)


def test_multinomial_matches_jax():
    x = np.array([[1, 2, 0], [3, 0, 0], [1, 1, 1]], np.int32)
    p = np.array([0.2, 0.5, 0.3], np.float32)
    for n in (np.int32(3), np.int32(9)):  # JAX compares n with the sum over all of x
        ours = jitviz.jit(stats.multinomial.logpmf)(x, n, p)
        np.testing.assert_allclose(ours, np.asarray(jax_stats.multinomial.logpmf(x, n, p)),
                                   rtol=1e-6)
        np.testing.assert_allclose(stats.multinomial.pmf(x[0], np.int32(3), p),
                                   np.asarray(jax_stats.multinomial.pmf(x[0], 3, p)), rtol=1e-6)
    with pytest.raises(ValueError, match="x and n must be of integer type"):
        stats.multinomial.logpmf(x.astype(np.float32), n, p)
