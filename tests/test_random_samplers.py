"""jitviz.random's distributions (jitviz/random_samplers.py) against real JAX 0.10: the same
key gives JAX's samples (integer-valued samplers exactly, float ones within a few ulps, as
jitviz's log/exp/tan may differ from XLA's in the last bit), eagerly and under jit, with
JAX's shapes and dtypes, vmapped over keys, JAX's argument errors, and each distribution's
mean and variance on a large sample."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import random

from helpers import jax_x64_enabled

jax = pytest.importorskip("jax")
jr = jax.random

# a few ulps of float32 / float64: the elementwise math differs from XLA's in the last bit
# (absolute where a difference of logs near 1 cancels, e.g. gumbel's -log(-log u) near 0)
RTOL = {np.dtype(np.float32): 4e-6, np.dtype(np.float64): 1e-13}
ATOL = {np.dtype(np.float32): 2.5e-7, np.dtype(np.float64): 5e-16}

# each test jits a fresh lambda on purpose (one compile per case)
pytestmark = [pytest.mark.filterwarnings("ignore::jitviz.errors.RetraceWarning"),
              # a sampler is many equations on the line that calls it, not a Python loop
              pytest.mark.filterwarnings("ignore::jitviz.errors.UnrolledLoopWarning")]


jax_x64 = jax_x64_enabled  # helpers.py: JAX's x64 on inside the block


def both(name, seed, *args, **kwargs):
    """(JAX's draw, jitviz's eager draw, jitviz's jitted draw) of one sampler."""
    want = np.asarray(getattr(jr, name)(jr.PRNGKey(seed), *args, **kwargs))
    eager = np.asarray(getattr(random, name)(random.PRNGKey(seed), *args, **kwargs))
    jitted = jitviz.jit(lambda k: getattr(random, name)(k, *args, **kwargs))(
        random.PRNGKey(seed))
    return want, eager, np.asarray(jitted)


def assert_same_samples(want, got, what):
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, what
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype], atol=ATOL[want.dtype], err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


FLOAT_CASES = {
    "exponential": ((7,),),
    "gumbel": ((2, 5),),
    "laplace": ((7,),),
    "logistic": ((7,),),
    "cauchy": ((7,),),
    "maxwell": ((2, 3),),
    "lognormal": (np.array([0.25, 0.5, 2.0], np.float32), (2, 3)),
    "pareto": (np.array([1.5, 3.0], np.float32),),
    "rayleigh": (2.0, (6,)),
    "weibull_min": (2.0, 1.5, (6,)),
    "triangular": (0.0, np.array([0.2, 0.5, 0.9], np.float32), 1.0),
    "wald": (np.array([0.5, 1.0, 3.0], np.float32), (2, 3)),
    "double_sided_maxwell": (np.zeros(2, np.float32), 2.0),
}


@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_samplers_draw_jaxs_samples_eagerly_and_under_jit(name):
    want, eager, jitted = both(name, 3, *FLOAT_CASES[name])
    assert_same_samples(want, eager, f"{name} eager")
    assert_same_samples(want, jitted, f"{name} under jit")


def test_gumbel_high_mode_draws_jaxs_samples():
    want, eager, jitted = both("gumbel", 1, (64,), mode="high")
    assert_same_samples(want, eager, "gumbel high")
    assert_same_samples(want, jitted, "gumbel high under jit")


@pytest.mark.parametrize("name", ["exponential", "laplace", "logistic", "cauchy", "gumbel"])
def test_float64_samples_equal_jax_with_x64(name, x64):
    with jax_x64():
        want = np.asarray(getattr(jr, name)(jr.PRNGKey(11), (9,), dtype=np.float64))
    got = np.asarray(getattr(random, name)(random.PRNGKey(11), (9,), dtype=jnp.float64))
    assert_same_samples(want, got, name)


def test_default_dtype_follows_x64(x64):
    with jax_x64():
        want = np.asarray(jr.laplace(jr.PRNGKey(4), (5,)))
        want_int = np.asarray(jr.rademacher(jr.PRNGKey(4), (5,)))
    assert_same_samples(want, np.asarray(random.laplace(random.PRNGKey(4), (5,))), "laplace")
    assert_same_samples(want_int, np.asarray(random.rademacher(random.PRNGKey(4), (5,))),
                        "rademacher")


INTEGER_CASES = [
    ("rademacher", ((9,),), {}),
    ("rademacher", ((4,),), {"dtype": np.float32}),
    ("geometric", (np.array([0.05, 0.3, 0.9], np.float32), (4, 3)), {}),
    ("categorical", (np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32)),), {"shape": (12,)}),
    ("categorical", (np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5),),
     {"axis": 0, "shape": (2, 5)}),
    ("categorical", (np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5),),
     {"axis": 1, "shape": (3, 3), "replace": False}),
    ("categorical", (np.zeros((2, 6), np.float32),), {"mode": "high"}),
    ("choice", (10, (8,)), {}),
    ("choice", (10, (6,)), {"replace": False}),
    ("choice", (5, (9,)), {"p": np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)}),
    ("choice", (5, (3,)), {"replace": False,
                           "p": np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)}),
    # int32 arrays: jitviz keeps a NumPy int64 array's dtype where JAX (no x64) makes it int32
    ("choice", (np.arange(20, dtype=np.int32).reshape(4, 5), (2,)), {"replace": False,
                                                                     "axis": 1}),
    ("choice", (np.arange(20, dtype=np.int32).reshape(4, 5), (3, 2)), {}),
]


@pytest.mark.parametrize("name,args,kwargs", INTEGER_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(INTEGER_CASES)])
def test_integer_valued_samplers_equal_jax_exactly(name, args, kwargs):
    for seed in (0, 2):
        want, eager, jitted = both(name, seed, *args, **kwargs)
        assert_same_samples(want, eager, f"{name} seed {seed}")
        assert_same_samples(want, jitted, f"{name} seed {seed} under jit")


LAMBDAS = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 300.0, 1e4], np.float32)


def test_poisson_equals_jax_exactly_for_small_and_large_rates():
    for seed in (0, 1, 2):
        want = np.asarray(jr.poisson(jr.PRNGKey(seed), LAMBDAS, (5, 8)))
        got = np.asarray(random.poisson(random.PRNGKey(seed), LAMBDAS, (5, 8)))
        assert_same_samples(want, got, f"poisson seed {seed}")
    jitted = jitviz.jit(lambda k: random.poisson(k, LAMBDAS))(random.PRNGKey(4))
    assert_same_samples(np.asarray(jr.poisson(jr.PRNGKey(4), LAMBDAS)), np.asarray(jitted),
                        "poisson under jit")


COUNTS = np.array([0, 1, 5, 20, 100, 1000, 50, 7], np.float32)
PROBS = np.array([0.3, 0.5, 0.9, 0.3, 0.3, 0.7, 0.02, 0.6], np.float32)


def test_binomial_equals_jax_exactly_by_inversion_and_btrs():
    for seed in (0, 1):
        want = np.asarray(jr.binomial(jr.PRNGKey(seed), COUNTS, PROBS, (4, 8)))
        got = np.asarray(random.binomial(random.PRNGKey(seed), COUNTS, PROBS, (4, 8)))
        assert_same_samples(want, got, f"binomial seed {seed}")
    jitted = jitviz.jit(lambda k: random.binomial(k, COUNTS, PROBS))(random.PRNGKey(3))
    assert_same_samples(np.asarray(jr.binomial(jr.PRNGKey(3), COUNTS, PROBS)),
                        np.asarray(jitted), "binomial under jit")


def test_binomial_of_invalid_arguments_is_nan_and_of_infinite_count_inf():
    n = np.array([np.nan, -1, np.inf, 5], np.float32)
    p = np.array([0.5, 0.5, 0.5, np.nan], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # no NumPy warning about inf - inf
        got = np.asarray(random.binomial(random.PRNGKey(1), n, p))
    np.testing.assert_array_equal(got, np.asarray(jr.binomial(jr.PRNGKey(1), n, p)))


def test_multinomial_equals_jax_exactly():
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    cases = [((20.0, p), {}), ((np.array([5.0, 100.0], np.float32), p), {"shape": (2, 4)}),
             ((1000.0, np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], np.float32)), {})]
    for args, kwargs in cases:
        want = np.asarray(jr.multinomial(jr.PRNGKey(3), *args, **kwargs))
        got = np.asarray(random.multinomial(random.PRNGKey(3), *args, **kwargs))
        assert_same_samples(want, got, f"multinomial {kwargs}")
    counts = np.asarray(random.multinomial(random.PRNGKey(5), 100.0, p, shape=(N // 8, 4)))
    np.testing.assert_array_equal(counts.sum(axis=1), 100.0)
    np.testing.assert_allclose(counts.mean(axis=0), 100 * p, rtol=0.02)


def test_poissons_log_factorial_is_lgamma():
    from jitviz.random_samplers import _log_gamma_from_one_half
    x = np.concatenate([np.linspace(0.5, 3, 11), np.arange(1, 3000, 7)]).astype(np.float32)
    want = np.asarray(jax.lax.lgamma(x))
    got = np.asarray(_log_gamma_from_one_half(jnp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


GAMMA_CASES = [
    ("gamma", (np.array([0.3, 1.0, 2.5, 7.0], np.float32),), {}),
    ("gamma", (2.0, (3, 2)), {}),
    ("loggamma", (np.array([0.01, 0.3, 1.0, 2.5], np.float32),), {}),
    ("beta", (0.5, np.array([2.0, 0.7, 5.0], np.float32)), {}),
    ("dirichlet", (np.array([0.5, 1.0, 2.0], np.float32), (2,)), {}),
    ("chisquare", (3.0, (5,)), {}),
    ("t", (np.array([1.0, 4.0, 30.0], np.float32),), {}),
    ("f", (3.0, np.array([2.0, 5.0, 9.0], np.float32)), {}),
    ("generalized_normal", (1.5, (5,)), {}),
    ("ball", (3, 2, (2,)), {}),
    ("ball", (2, 1.0), {}),
]


@pytest.mark.parametrize("name,args,kwargs", GAMMA_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(GAMMA_CASES)])
def test_gamma_family_draws_jaxs_samples(name, args, kwargs):
    want = np.asarray(getattr(jr, name)(jr.PRNGKey(5), *args, **kwargs))
    got = np.asarray(getattr(random, name)(random.PRNGKey(5), *args, **kwargs))
    assert_same_samples(want, got, name)


def test_gamma_under_jit_and_vmap_over_keys():
    alphas = np.array([0.4, 3.0], np.float32)
    keys = random.split(random.PRNGKey(8), 3)
    jitted = jitviz.jit(jitviz.vmap(lambda k: random.gamma(k, alphas)))(keys)
    want = np.asarray(jax.vmap(lambda k: jr.gamma(k, alphas))(jr.split(jr.PRNGKey(8), 3)))
    assert_same_samples(want, np.asarray(jitted), "vmapped, jitted gamma")


@pytest.mark.parametrize("name,args", [("exponential", ((4,),)), ("categorical",
                         (np.log(np.array([0.2, 0.5, 0.3], np.float32)), -1, (4,))),
                         ("choice", (7, (3,), False)), ("rayleigh", (1.5, (4,)))])
def test_vmap_over_keys_equals_one_draw_per_key(name, args):
    keys = random.split(random.PRNGKey(9), 5)
    batched = np.asarray(jitviz.vmap(lambda k: getattr(random, name)(k, *args))(keys))
    want = np.asarray(jax.vmap(lambda k: getattr(jr, name)(k, *args))(jr.split(
        jr.PRNGKey(9), 5)))
    assert_same_samples(want, batched, name)


def test_gradients_through_reparameterized_samplers_equal_jax():
    def jax_loss(s):
        k = jr.PRNGKey(1)
        return (jr.lognormal(k, s, (5,)).sum() + jr.pareto(k, s + 1.0, (5,)).sum()
                + jr.weibull_min(k, s, s + 0.5, (5,)).sum())

    def jitviz_loss(s):
        k = random.PRNGKey(1)
        return (random.lognormal(k, s, (5,)).sum() + random.pareto(k, s + 1.0, (5,)).sum()
                + random.weibull_min(k, s, s + 0.5, (5,)).sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", random.KeyReuseWarning)
        got = float(jitviz.grad(jitviz_loss)(np.float32(0.7)))
    np.testing.assert_allclose(got, float(jax.grad(jax_loss)(np.float32(0.7))), rtol=1e-5)


# --- statistics: each distribution's mean and variance on a large sample -----------------------

N = 40000
MOMENTS = [
    # (sampler, args, mean, variance); heavy-tailed ones checked by median and quartiles below
    ("exponential", ((N,),), 1.0, 1.0),
    ("gumbel", ((N,),), np.euler_gamma, np.pi ** 2 / 6),
    ("laplace", ((N,),), 0.0, 2.0),
    ("logistic", ((N,),), 0.0, np.pi ** 2 / 3),
    ("rademacher", ((N,),), 0.0, 1.0),
    ("lognormal", (0.5, (N,)), np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ("pareto", (5.0, (N,)), 5 / 4, 5 / (16 * 3)),
    ("maxwell", ((N,),), 2 * np.sqrt(2 / np.pi), (3 * np.pi - 8) / np.pi),
    ("rayleigh", (2.0, (N,)), 2 * np.sqrt(np.pi / 2), (4 - np.pi) / 2 * 4),
    ("weibull_min", (2.0, 3.0, (N,)), 2 * 0.8929795, 4 * (0.9027453 - 0.8929795 ** 2)),
    ("geometric", (0.25, (N,)), 4.0, 0.75 / 0.0625),
    ("triangular", (0.0, 0.25, 1.0, (N,)), 1.25 / 3, (1 + 0.0625 - 0.25) / 18),
    ("gamma", (np.full(N // 4, 0.6, np.float32),), 0.6, 0.6),
    ("gamma", (np.full(N // 4, 4.0, np.float32),), 4.0, 4.0),
    ("beta", (2.0, 3.0, (N // 4,)), 0.4, 6 / (25 * 6)),
    ("chisquare", (3.0, (N // 4,)), 3.0, 6.0),
    ("t", (6.0, (N // 4,)), 0.0, 1.5),
    ("poisson", (3.5, (N,)), 3.5, 3.5),
    ("poisson", (60.0, (N,)), 60.0, 60.0),
    ("binomial", (8.0, 0.3, (N,)), 2.4, 1.68),
    ("binomial", (200.0, 0.6, (N,)), 120.0, 48.0),
    ("f", (5.0, 10.0, (N // 4,)), 10 / 8, 2 * 100 * 13 / (5 * 64 * 6)),
    ("wald", (2.0, (N,)), 2.0, 8.0),
    ("double_sided_maxwell", (1.0, 2.0, (N,)), 1.0, 12.0),
    ("generalized_normal", (1.0, (N // 4,)), 0.0, 2.0),   # p = 1: Laplace(0, 1)
]


@pytest.mark.parametrize("name,args,mean,var", MOMENTS,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MOMENTS)])
def test_sample_mean_and_variance(name, args, mean, var):
    x = np.asarray(getattr(random, name)(random.PRNGKey(21), *args), np.float64)
    n = x.size
    # 5 standard errors of the mean; the variance within 10 percent
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) < 0.1 * var, (x.var(), var)


def test_cauchy_quartiles():
    x = np.asarray(random.cauchy(random.PRNGKey(3), (N,)))
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    assert abs(med) < 0.03 and abs(q1 + 1) < 0.05 and abs(q3 - 1) < 0.05


def test_categorical_and_choice_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    cat = np.asarray(random.categorical(random.PRNGKey(1), np.log(p), shape=(N,)))
    np.testing.assert_allclose(np.bincount(cat, minlength=4) / N, p, atol=0.01)
    ch = np.asarray(random.choice(random.PRNGKey(2), 4, (N,), p=p))
    np.testing.assert_allclose(np.bincount(ch, minlength=4) / N, p, atol=0.01)
    # without replacement: distinct values
    draws = np.asarray(random.choice(random.PRNGKey(3), 50, (50,), replace=False))
    assert sorted(draws.tolist()) == list(range(50))


def test_ball_points_are_uniform_in_the_unit_ball():
    # in d dimensions the radius of a uniform point has P(|x| <= r) = r**d
    x = np.asarray(random.ball(random.PRNGKey(6), 3, 2, (N // 8,)), np.float64)
    radius = np.linalg.norm(x, axis=-1)
    assert radius.max() <= 1.0
    assert abs(np.mean(radius <= 0.5) - 0.125) < 0.015


def test_dirichlet_rows_sum_to_one_with_the_right_means():
    alpha = np.array([1.0, 2.0, 5.0], np.float32)
    x = np.asarray(random.dirichlet(random.PRNGKey(4), alpha, (N // 8,)), np.float64)
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(axis=0), alpha / alpha.sum(), atol=0.01)


# --- JAX's argument errors ------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc,match", [
    (lambda k: random.exponential(k, (3,), dtype=np.int32), ValueError,
     "dtype argument to `exponential` must be a float dtype, got int32"),
    (lambda k: random.geometric(k, 0.5, (3,), dtype=np.float32), ValueError,
     "dtype argument to `geometric` must be an int dtype, got float32"),
    (lambda k: random.pareto(k, np.ones(3), shape=(2,)), ValueError,
     "pareto parameter shapes must be broadcast-compatible with shape argument"),
    (lambda k: random.gumbel(k, (3,), mode="middle"), ValueError,
     "Must provide valid mode for gumbel got: middle"),
    (lambda k: random.choice(k, 3, (5,), replace=False), ValueError,
     r"Cannot take a larger sample \(size 5\) than population \(size 3\)"),
    (lambda k: random.choice(k, 3, 5), TypeError,
     "shape argument of jax.random.choice must be a sequence"),
    (lambda k: random.choice(k, 3, (2,), p=np.ones(4) / 4), ValueError,
     "p must be None or a 1D vector with the same size as a.shape"),
    (lambda k: random.categorical(k, np.zeros((2, 3)), shape=(4, 2), replace=False),
     ValueError, r"Number of samples without replacement \(4\) cannot exceed number of "
                 r"categories \(3\)"),
    (lambda k: random.dirichlet(k, 1.0), ValueError,
     "dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0"),
    (lambda k: random.gamma(k, 1.0, (2,), dtype=np.int32), ValueError,
     "dtype argument to `gamma` must be a float dtype"),
    (lambda k: random.poisson(k, 2.0, (2,), dtype=np.float32), ValueError,
     "dtype argument to `poisson` must be an int dtype, got float32"),
    (lambda k: random.laplace(np.zeros(3, np.uint32), (2,)), TypeError,
     "laplace: a PRNG key is a uint32"),
])
def test_bad_arguments_raise_jaxs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(random.PRNGKey(0))


def test_gumbel_highest_mode_explains_what_to_use():
    with pytest.raises(NotImplementedError, match="mode='high'"):
        random.gumbel(random.PRNGKey(0), (2,), mode="highest")


def test_gamma_gradient_with_respect_to_a_is_refused_clearly_and_stop_gradient_works():
    key = random.PRNGKey(0)
    with pytest.raises(NotImplementedError, match="lax.stop_gradient"):
        jitviz.grad(lambda a: random.gamma(key, a))(np.float32(2.0))
    # the sample itself is a constant of the rest of the computation
    got = jitviz.grad(lambda a: a * random.gamma(key, jitviz.lax.stop_gradient(a)))(
        np.float32(2.0))
    np.testing.assert_allclose(float(got), float(jr.gamma(jr.PRNGKey(0), 2.0)), rtol=4e-6)
