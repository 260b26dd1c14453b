"""The special functions (jitviz/lax/special.py's primitives, jitviz.scipy.special over them)
against real JAX 0.10: values on grids that hold the poles, negative integers, infinities and
NaN, in float32 and float64, on the interpreter and the CPU (CUDA in the simulator, in a
child process); derivatives against JAX; vmap against a loop; errors for bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
import jitviz.scipy.special as special
from jitviz import lax

from helpers import run_program_in_simulator, x64_enabled


@pytest.fixture(autouse=True)
def _float64_operands_stay_float64(keep_float64):
    """The float64 cases compare jitviz's float64 results with JAX's under x64: NumPy float64
    operands stay float64 here (jitviz's keep_float64 switch)."""

jax = pytest.importorskip("jax")
jax_special = pytest.importorskip("jax.scipy.special")

rng = np.random.default_rng(14)

EDGES = [-np.inf, -50.5, -3.0, -2.5, -1.0, -0.5, -1e-30, -0.0, 0.0, 1e-30, 0.5, 1.0, 1.4616,
         2.0, 7.25, 24.9, 25.1, 100.0, 1e4, 1e30, np.inf, np.nan]
GRID = np.array(EDGES + list(rng.normal(0, 4, 40)) + list(rng.uniform(-30, 60, 40)))
POSITIVE = np.array([0.0, 1e-20, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.3, 9.5, 10.0, 11.0, 30.0, 99.0,
                     250.0, 1e3, np.inf, np.nan, -1.0, -0.5])


def _pairs(xs, ys):
    a, b = np.meshgrid(xs, ys, indexing="ij")
    return a.ravel(), b.ravel()


A2, X2 = _pairs(POSITIVE, POSITIVE)
S2, Q2 = _pairs([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.5, 12.0, 40.0, np.inf, np.nan],
                [-3.0, -2.5, -1.5, -1.0, -1e-30, 0.0, 1e-30, 0.3, 1.0, 2.0, 7.5, 50.0, np.inf])
_ab = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 60.0, np.inf, -1.0])
_x = np.array([-0.1, 0.0, 1e-6, 0.1, 0.3, 0.5, 0.77, 0.999, 1.0, 1.1, np.nan])
B3 = [m.ravel() for m in np.meshgrid(_ab, _ab, _x, indexing="ij")]

# name -> (jitviz's lax function, JAX's, operands)
FUNCTIONS = {
    "lgamma": (lax.lgamma, jax.lax.lgamma, (GRID,)),
    "digamma": (lax.digamma, jax.lax.digamma, (GRID,)),
    "bessel_i0e": (lax.bessel_i0e, jax.lax.bessel_i0e, (GRID,)),
    "bessel_i1e": (lax.bessel_i1e, jax.lax.bessel_i1e, (GRID,)),
    "igamma": (lax.igamma, jax.lax.igamma, (A2, X2)),
    "igammac": (lax.igammac, jax.lax.igammac, (A2, X2)),
    "zeta": (lax.zeta, jax.lax.zeta, (S2, Q2)),
    "igamma_grad_a": (lax.igamma_grad_a, jax.lax.igamma_grad_a,
                      [v[np.isfinite(A2) & np.isfinite(X2) & (A2 > 0) & (A2 < 300)]
                       for v in (A2, X2)]),
    # (not deep in the left tail, x < a / 10: JAX's float32 is 1-6% off there, its float64
    # agrees with jitviz's)
    "random_gamma_grad": (lax.random_gamma_grad, jax.lax.random_gamma_grad,
                          [v[v_x >= v_a / 10] for v_a, v_x in [_pairs(
                              [0.3, 1.0, 2.5, 10.0, 50.0], [0.05, 0.5, 1.0, 3.0, 9.0, 60.0])]
                           for v in (v_a, v_x)]),
    "betainc": (lax.betainc, jax.lax.betainc, B3),
    # (not far below 0: JAX's zeta sums too few terms there, and its float32 cancels; see
    # test_polygamma_and_zeta_below_zero_are_the_sums)
    "polygamma": (lax.polygamma, jax.lax.polygamma,
                  _pairs([0.0, 1.0, 2.0, 3.0, 4.0, 1.5, -1.0, np.nan],
                         GRID[:40][(GRID[:40] > -2) | ~np.isfinite(GRID[:40])])),
}


def _jax(fn, args, dtype):
    with jax.enable_x64(dtype == np.float64):
        return np.asarray(jax.jit(fn)(*[a.astype(dtype) for a in args]))


def _assert_matches(ours, theirs, rtol, atol=0.0, what=""):
    """The same NaNs and infinities; finite values within rtol (or atol near a zero)."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    bad = (np.isnan(ours) != np.isnan(theirs)) | (np.isinf(ours) & (ours != theirs))
    both = np.isfinite(ours) & np.isfinite(theirs)
    with np.errstate(invalid="ignore"):
        err = np.abs(ours - theirs)
    bad |= both & (err > atol + rtol * np.abs(theirs))
    bad |= np.isfinite(ours) != np.isfinite(theirs)
    assert not bad.any(), (what, np.nonzero(bad)[0][:10], ours[bad][:10], theirs[bad][:10])


# JAX's float32 algorithms are themselves a few float32 ulps off (i0e(0) is 1.0000001,
# betainc(1, 1, 0.5) 0.5000005); float64 is compared far tighter. Near a root (digamma at
# 1.4616, lgamma at 1 and 2) the comparison is absolute.
RTOL = {np.float32: 5e-6, np.float64: 1e-12}
ATOL = {np.float32: 5e-6, np.float64: 1e-13}
# JAX's own float32 series lose more than a few ulps for these (long series, large operands)
RTOL_F32 = {"igamma": 3e-4, "igammac": 3e-4, "betainc": 3e-4, "zeta": 2e-5,
            "polygamma": 2e-5, "igamma_grad_a": 3e-4, "random_gamma_grad": 3e-4}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_special_values_match_jax(name, dtype, backend):
    ours_fn, theirs_fn, args = FUNCTIONS[name]
    args = [np.asarray(a, np.float64) for a in args]
    with np.errstate(all="ignore"):
        ours = jitviz.jit(ours_fn, backend=backend)(*[a.astype(dtype) for a in args])
    assert ours.dtype == dtype
    rtol = RTOL_F32.get(name, RTOL[dtype]) if dtype == np.float32 else RTOL[dtype]
    if dtype == np.float64 and name in ("igamma", "igammac", "betainc", "polygamma", "zeta",
                                        "igamma_grad_a", "random_gamma_grad"):
        rtol = 1e-9  # JAX's float64 series and continued fractions stop a little early
    _assert_matches(ours, _jax(theirs_fn, args, dtype), rtol, ATOL[dtype], name)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_results_are_the_float64_results_rounded(name):
    """Every helper computes in float64: a float32 result is within an ulp of the float64
    one, where the float64 one is a normal float32."""
    fn, _, args = FUNCTIONS[name]
    args32 = [np.asarray(a, np.float32) for a in args]
    with np.errstate(all="ignore"):
        out32 = np.asarray(jitviz.jit(fn)(*args32))
        out64 = np.asarray(jitviz.jit(fn)(*[a.astype(np.float64) for a in args32]))
        f32 = np.finfo(np.float32)
        normal = (np.abs(out64) >= f32.tiny) & (np.abs(out64) <= f32.max)
        close = np.abs(out32.astype(np.float64) - out64) <= 1.2e-7 * np.abs(out64)
    assert (close | ~normal | ~np.isfinite(out64)).all()


def test_polygamma_and_zeta_below_zero_are_the_sums():
    """psi^(n)(x) = (-1)^(n+1) n! sum_k (x + k)^-(n+1), summed directly (JAX's zeta is off
    below q = -9: its trigamma(-50.5) is negative)."""
    x = np.array([-50.5, -11.7, -6.29, -2.5, -0.25])
    big = 100_000
    k = np.arange(big)
    for n in (1, 2, 4):
        # the terms to `big`, then the rest as its integral and half a term (error ~1e-20)
        tail = [np.sum((v + k) ** -(n + 1.0)) + (v + big) ** -n / n + 0.5 * (v + big) ** -(n + 1.0)
                for v in x]
        want = (-1) ** (n + 1) * math.factorial(n) * np.array(tail)
        got = jitviz.jit(lax.polygamma)(np.full_like(x, n), x)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(jitviz.jit(lax.zeta)(np.full_like(x, n + 1.0), x),
                                   np.array(tail), rtol=1e-9, atol=1e-13)


def test_lgamma_float64_matches_libm_and_digamma_the_derivative():
    x = np.concatenate([rng.uniform(-40, 40, 200), rng.uniform(1e-3, 1e3, 200)])
    x = x[x != np.floor(x)]
    np.testing.assert_allclose(jitviz.jit(lax.lgamma)(x), [math.lgamma(v) for v in x],
                               rtol=1e-14, atol=1e-14)
    h = 1e-6
    slope = (np.array([math.lgamma(v + h) for v in x]) -
             np.array([math.lgamma(v - h) for v in x])) / (2 * h)
    np.testing.assert_allclose(jitviz.jit(lax.digamma)(x), slope, rtol=1e-6, atol=1e-6)


# --- derivatives --------------------------------------------------------------------------

GRADS = {
    "lgamma": (lambda x: lax.lgamma(x), lambda x: jax.lax.lgamma(x), [-2.5, 0.3, 1.0, 7.5]),
    "digamma": (lax.digamma, jax.lax.digamma, [-2.5, 0.3, 1.0, 7.5]),
    "bessel_i0e": (lax.bessel_i0e, jax.lax.bessel_i0e, [-30.0, -2.0, 0.5, 3.0, 40.0]),
    "bessel_i1e": (lax.bessel_i1e, jax.lax.bessel_i1e, [-30.0, -2.0, 0.0, 0.5, 3.0, 40.0]),
    "igamma_x": (lambda x: lax.igamma(jnp.full_like(x, 2.5), x),
                 lambda x: jax.lax.igamma(jax.numpy.full_like(x, 2.5), x), [0.5, 2.0, 9.0]),
    "igammac_x": (lambda x: lax.igammac(jnp.full_like(x, 0.7), x),
                  lambda x: jax.lax.igammac(jax.numpy.full_like(x, 0.7), x), [0.5, 2.0]),
    "betainc_x": (lambda x: lax.betainc(jnp.full_like(x, 2.0), jnp.full_like(x, 3.5), x),
                  lambda x: jax.lax.betainc(jax.numpy.full_like(x, 2.0),
                                            jax.numpy.full_like(x, 3.5), x), [0.1, 0.5, 0.9]),
    "igamma_a": (lambda a: lax.igamma(a, jnp.full_like(a, 2.0)),
                 lambda a: jax.lax.igamma(a, jax.numpy.full_like(a, 2.0)), [0.5, 1.0, 3.0, 9.0]),
    "igammac_a": (lambda a: lax.igammac(a, jnp.full_like(a, 4.0)),
                  lambda a: jax.lax.igammac(a, jax.numpy.full_like(a, 4.0)), [0.5, 2.0, 7.0]),
    "polygamma_x": (lambda x: lax.polygamma(jnp.full_like(x, 2.0), x),
                    lambda x: jax.lax.polygamma(jax.numpy.full_like(x, 2.0), x),
                    [0.4, 1.0, 6.0]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_jax(name):
    ours_fn, theirs_fn, points = GRADS[name]
    x = np.array(points, np.float32)
    ours = jitviz.grad(lambda v: ours_fn(v).sum())(x)
    theirs = jax.grad(lambda v: theirs_fn(v).sum())(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=2e-5, atol=1e-6)
    # forward mode agrees with reverse mode
    t = np.ones_like(x)
    _, forward = jitviz.jvp(ours_fn, (x,), (t,))
    np.testing.assert_allclose(forward, ours, rtol=1e-6, atol=1e-7)


def test_zeta_derivative_in_q_by_finite_differences():
    """JAX defines none for zeta; jitviz's in q is -s zeta(s + 1, q)."""
    q = np.array([0.5, 1.0, 3.0])
    s = np.full(3, 3.0)
    g = jitviz.grad(lambda q: lax.zeta(s, q).sum())(q)
    h = 1e-6
    fd = (np.asarray(lax.zeta(s, q + h)) - np.asarray(lax.zeta(s, q - h))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_operands_without_a_derivative():
    x, a, b = np.float32(0.3), np.float32(2.0), np.float32(3.0)
    # as JAX: betainc in a and b, and polygamma in n, are not differentiable
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        jitviz.jvp(lambda a: lax.betainc(a, b, x), (a,), (np.float32(1),))
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        jitviz.jvp(lambda n: lax.polygamma(n, x), (a,), (np.float32(1),))
    # reverse mode cannot tell an inactive operand: a differentiated one gets NaN, never 0
    assert np.isnan(jitviz.grad(lambda a: lax.betainc(a, b, x))(a))
    assert np.isnan(jitviz.grad(lambda s: lax.zeta(s, x))(a))  # jitviz lacks zeta's in s
    # ... and the others are unaffected
    assert np.isfinite(jitviz.grad(lambda x: lax.betainc(a, b, x))(x))


# --- batching, errors, printing -------------------------------------------------------------

def test_vmap_matches_a_loop():
    a = rng.uniform(0.5, 5.0, (4, 3)).astype(np.float32)
    x = rng.uniform(0.1, 0.9, 3).astype(np.float32)

    def f(a, x):
        return (lax.betainc(a, a + 1, x) + lax.igamma(a, x) + lax.lgamma(a)
                + lax.polygamma(jnp.ones_like(a), a) + lax.zeta(a + 1, x))
    batched = jitviz.jit(jitviz.vmap(f, in_axes=(0, None)))(a, x)
    looped = np.stack([f(row, x) for row in a])
    np.testing.assert_allclose(batched, looped, rtol=1e-6)


def test_bad_operands_are_type_errors():
    with pytest.raises(TypeError, match="lgamma does not accept dtype int32"):
        lax.lgamma(np.int32(1))
    with pytest.raises(TypeError, match="igamma requires arguments to have the same dtypes"):
        lax.igamma(np.float32(1), np.float64(1))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.betainc(np.ones(2, np.float32), np.ones(3, np.float32), np.ones(2, np.float32))


def test_jaxprs_name_the_primitives_as_jax_does():
    text = str(jitviz.make_jaxpr(lambda x: lax.betainc(x, x, x) + lax.lgamma(x)
                                 + lax.polygamma(x, x))(np.float32(1)))
    assert "regularized_incomplete_beta a a a" in text
    assert "lgamma a" in text and "polygamma a a" in text


# --- jax.scipy.special -----------------------------------------------------------------------

SCIPY = {
    "gammaln": ([GRID],), "gamma": ([np.clip(GRID, -30, 30)],), "gammasgn": ([GRID],),
    "digamma": ([GRID],), "i0e": ([GRID],), "i1e": ([GRID],),
    "i0": ([np.clip(GRID, -80, 80)],), "i1": ([np.clip(GRID, -80, 80)],),
    "gammainc": ([A2, X2],), "gammaincc": ([A2, X2],), "zeta": ([S2, Q2],),
    "betainc": (B3,), "betaln": ([A2[A2 < 300], X2[A2 < 300]],),
    "beta": ([np.clip(A2, -5, 20), np.clip(X2, -5, 20)],),
    "factorial": ([np.clip(GRID, -5, 30)],),
    "comb": ([np.array([5.0, 10, 3, 0, -1, 4.5, 20]), np.array([2.0, 10, 4, 0, 1, 2, 7])],),
    "poch": ([np.array([1.0, 2.5, -1.5, 3, 0.5]), np.array([0.0, 2, 1.5, 3, -0.25])],),
    "rel_entr": ([np.array([0.0, 0, 0.5, 1, -1, 2]), np.array([0.0, 1, 0.25, 0, 1, 3])],),
    "kl_div": ([np.array([0.0, 0, 0.5, 1, -1, 2]), np.array([0.0, 1, 0.25, 0, 1, 3])],),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(SCIPY))
def test_scipy_special_matches_jax(name, dtype):
    (args,) = SCIPY[name]
    args = [np.asarray(a, np.float64) for a in args]
    ours = np.asarray(jitviz.jit(getattr(special, name))(*[a.astype(dtype) for a in args]))
    theirs = _jax(getattr(jax_special, name), args, dtype)
    assert ours.dtype == theirs.dtype
    rtol = {np.float32: 3e-4 if name in ("gammainc", "gammaincc", "betainc", "betaln")
            else 2e-5, np.float64: 1e-10}[dtype]
    if name in ("beta", "betaln") and dtype == np.float64:
        rtol = 1e-6  # JAX's float64 betaln is this far off: betaln(1, 9.5) is -2.2512913
        np.testing.assert_allclose(  # the exact log(1 / 9.5) = -2.25129179860649...
            special.betaln(1.0, np.float64(9.5)), -math.log(9.5), rtol=1e-15)
    _assert_matches(ours, theirs, rtol, ATOL[dtype] * (10 if dtype == np.float32 else 1),
                    name)


def test_scipy_special_promotion_and_arguments():
    assert special.gammaln(3).dtype == np.float32  # integers become the default float
    assert special.gammainc(2, np.float32(1.5)).dtype == np.float32
    with x64_enabled():
        assert special.gammaln(3).dtype == np.float64
    # broadcasting, which the lax primitives leave to jnp
    assert special.gammainc(np.ones(3), 2.0).shape == (3,)
    assert special.betainc(2.0, np.ones((2, 1)), np.full(3, 0.5)).shape == (2, 3)
    assert float(special.polygamma(1, 2.0)) == pytest.approx(math.pi ** 2 / 6 - 1, rel=1e-6)
    with pytest.raises(ValueError, match="`n` to polygamma must be of integer type"):
        special.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="pass q != None"):
        special.zeta(2.0)
    with pytest.raises(NotImplementedError, match="exact=True"):
        special.factorial(3, exact=True)
    with pytest.raises(TypeError, match="d argument of multigammaln must be a concrete"):
        jitviz.jit(special.multigammaln)(np.float32(3.0), 2)
    a = np.array([2.5, 4.0, 10.0], np.float32)
    np.testing.assert_allclose(special.multigammaln(a, 3),
                               np.asarray(jax_special.multigammaln(a, 3)), rtol=1e-6)


# --- CUDA, in Numba's simulator ---------------------------------------------------------------

_SIM_PROGRAM = """
import numpy as np, jitviz
from jitviz import lax
from jitviz.backends.cuda.runtime import runtime
assert runtime().mode == "sim"
x = np.array([-2.5, -1.0, 0.0, 0.3, 1.0, 2.0, 7.5, 30.0, np.inf, np.nan], np.float32)
u = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.9, 0.95, 1.0, 0.5], np.float32)
def f(x, u):
    a = jitviz.numpy.abs(x)
    return (lax.lgamma(x), lax.digamma(x), lax.bessel_i0e(x), lax.bessel_i1e(x),
            lax.igamma(a, u), lax.igammac(a, u), lax.betainc(a, a + 1, u),
            lax.zeta(a + 1, u), lax.polygamma(jitviz.numpy.ones_like(x), x))
for name, got, want in zip(range(9), jitviz.jit(f, backend="cuda")(x, u),
                           jitviz.jit(f, backend="interpret")(x, u)):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, equal_nan=True, err_msg=name)
print("cuda simulator agrees")
"""


def test_cuda_simulator_matches_the_interpreter():
    assert "cuda simulator agrees" in run_program_in_simulator(_SIM_PROGRAM)


# --- lax's composites (jitviz/lax/composites.py) ----------------------------------------------

COMPOSITES = {
    "slice_in_dim": (lambda l, x: l.slice_in_dim(x, 1, -1, 2, axis=1),),
    "slice_in_dim_none": (lambda l, x: l.slice_in_dim(x, None, 2, axis=-1),),
    "index_in_dim": (lambda l, x: l.index_in_dim(x, -1, axis=0, keepdims=False),),
    "dynamic_slice_in_dim": (lambda l, x: l.dynamic_slice_in_dim(x, np.int32(3), 2, axis=1),),
    "dynamic_index_in_dim": (lambda l, x: l.dynamic_index_in_dim(x, np.int32(1), 0, False),),
    "dynamic_update_slice_in_dim": (lambda l, x: l.dynamic_update_slice_in_dim(
        x, x[:, :2] * 0 - 1, np.int32(4), axis=1),),
    "dynamic_update_index_in_dim": (lambda l, x: l.dynamic_update_index_in_dim(
        x, x[0] * 0 + 7, np.int32(2), 0),),
    "split": (lambda l, x: l.split(x, (1, 0, 4), axis=1),),
    "collapse": (lambda l, x: l.collapse(x.reshape(3, 5, 1), 1),),
    "tile": (lambda l, x: l.tile(x, (2, 1)),),
    "broadcast_to_rank": (lambda l, x: l.broadcast_to_rank(x, 4),),
    "batch_matmul": (lambda l, x: l.batch_matmul(x.reshape(3, 5, 1), x.reshape(3, 1, 5)),),
    "reciprocal": (lambda l, x: l.reciprocal(x + 10),),
    "full_like": (lambda l, x: l.full_like(x, 2.5, shape=(2, 2)),),
}


def _apply(f, x):
    return f(lax, x)


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_lax_composites_match_jax(name):
    (f,) = COMPOSITES[name]
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    ours = jitviz.jit(_apply, static_argnums=0)(f, x)
    theirs = jax.jit(lambda x: f(jax.lax, x))(x)
    for o, t in zip(jitviz.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_array_equal(o, np.asarray(t))
    assert "integer_pow[y=-1]" in str(jitviz.make_jaxpr(lax.reciprocal)(np.float32(2)))


def test_lax_composites_refuse_bad_arguments():
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(ValueError, match="Sum of sizes 4 must be equal to dimension 5"):
        lax.split(x, (2, 2), axis=1)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        lax.index_in_dim(x, 3)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.slice_in_dim(x, 0, 1, axis=2)
    with pytest.raises(ValueError, match="same batch dimensions"):
        lax.batch_matmul(x, x[None])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_scipy_softmax_defaults_to_every_axis(name):
    x = rng.normal(size=(2, 3)).astype(np.float32)
    for kw in ({}, {"axis": 0}, {"axis": (0, 1)}):
        np.testing.assert_allclose(getattr(special, name)(x, **kw),
                                   np.asarray(getattr(jax_special, name)(x, **kw)),
                                   rtol=1e-6, atol=1e-7)
