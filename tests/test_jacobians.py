"""jacfwd, jacrev and hessian: analytic Jacobians, pytrees nested as JAX nests them (output
structure outside, input structure inside), composition with jit, and JAX itself when
installed."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp

X = np.array([0.5, 1.0, 2.0], np.float32)


def f(x):
    return jnp.sin(x) * x.sum()


def expected_jacobian(x):  # d/dx_j sin(x_i) * s = delta_ij cos(x_i) s + sin(x_i)
    return np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]


@pytest.mark.parametrize("jac", [jitviz.jacfwd, jitviz.jacrev])
@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_jacobian_of_a_vector_function(jac, backend):
    out = jitviz.jit(jac(f), backend=backend)(X)
    np.testing.assert_allclose(out, expected_jacobian(X), rtol=1e-5)
    assert out.shape == (3, 3) and out.dtype == np.float32


def test_hessian_of_a_scalar_function():
    h = jitviz.hessian(lambda x: (x ** 3).sum() + x[0] * x[1])(X)
    expected = np.diag(6 * X)
    expected[0, 1] = expected[1, 0] = 1.0
    np.testing.assert_allclose(h, expected, rtol=1e-6)


@pytest.mark.parametrize("jac", [jitviz.jacfwd, jitviz.jacrev])
def test_pytrees_nest_output_outside_input_inside(jac):
    params = {"w": np.ones((2, 3), np.float32), "b": np.float32(2.0)}

    def g(p, q):
        return {"a": p["w"] @ q, "b": (p["b"] * q).sum()}
    out = jac(g, argnums=(0, 1))(params, X)
    assert out["a"][0]["w"].shape == (2, 2, 3) and out["a"][1].shape == (2, 3)
    assert out["b"][0]["b"].shape == () and out["b"][1].shape == (3,)
    np.testing.assert_allclose(out["a"][1], params["w"])
    np.testing.assert_allclose(out["b"][1], np.full(3, 2.0))
    np.testing.assert_allclose(out["a"][0]["w"][1, 1], X)  # d(w@q)_1 / dw_1j = q_j


def test_has_aux_and_integer_inputs():
    jac, aux = jitviz.jacrev(lambda x: (f(x), x.sum()), has_aux=True)(X)
    np.testing.assert_allclose(jac, expected_jacobian(X), rtol=1e-5)
    assert float(aux) == pytest.approx(X.sum())
    with pytest.raises(TypeError, match="jacfwd requires real- or complex-valued inputs"):
        jitviz.jacfwd(f)(np.arange(3))


def test_matches_jax_when_installed():
    jax = pytest.importorskip("jax")
    for ours, theirs in ((jitviz.jacfwd, jax.jacfwd), (jitviz.jacrev, jax.jacrev),
                         (jitviz.hessian, jax.hessian)):
        fun = (lambda np_: lambda x: (np_.tanh(x) ** 2).sum()) if ours is jitviz.hessian \
            else (lambda np_: lambda x: np_.tanh(x)[::-1] * x[0])
        a = ours(fun(jnp))(X)
        b = np.asarray(theirs(fun(jax.numpy))(X))
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
        assert a.shape == b.shape and a.dtype == b.dtype
