"""jitviz.custom_vjp and custom_jvp: the user's rules decide derivatives (also under jit, vmap
and on the CPU backend) and the value is the function's; a custom_vjp refuses forward mode and
a custom_jvp's reverse mode is its rule's transpose, as in JAX."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp

X = np.array([1.0, 2.0, 3.0], np.float32)


@jitviz.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1.0, 1.0),))


@jitviz.custom_vjp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


softplus.defvjp(lambda x: (softplus(x), (x,)), lambda res, g: (g / (1 + jnp.exp(-res[0])),))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_bwd_decides_the_gradient_and_the_function_the_value(backend):
    loss = lambda x: (clip_gradient(x) * 5.0).sum()  # noqa: E731
    np.testing.assert_array_equal(jitviz.jit(jitviz.grad(loss), backend=backend)(X), [1, 1, 1])
    assert float(jitviz.jit(loss, backend=backend)(X)) == 30.0
    g = jitviz.jit(jitviz.grad(lambda x: softplus(x).sum()), backend=backend)(X)
    np.testing.assert_allclose(g, 1 / (1 + np.exp(-X)), rtol=1e-6)


def test_the_call_prints_as_a_call_and_compiles_inlined():
    text = str(jitviz.make_jaxpr(lambda x: clip_gradient(x) * 2.0)(X))
    assert "custom_vjp_call[\n      name=clip_gradient" in text
    f = jitviz.jit(lambda x: softplus(x) * 2.0)
    f(X)
    assert [s[0] for s in f.specializations[0].stages][-1] == "fuse"
    final = str(f.specializations[0].stages[-1][1])
    assert "custom_vjp_call" not in final  # the shared inline pass spliced it in


def test_vmap_in_either_order_keeps_the_rule():
    per_example = jitviz.vmap(jitviz.grad(lambda v: (clip_gradient(v) * 3.0).sum()))
    np.testing.assert_array_equal(per_example(X.reshape(3, 1)), [[1.0], [1.0], [1.0]])
    batched = jitviz.grad(lambda v: jitviz.vmap(clip_gradient)(v).sum() * 4.0)
    np.testing.assert_array_equal(batched(X), [1.0, 1.0, 1.0])


def test_pytrees_in_and_out():
    @jitviz.custom_vjp
    def scale(p, x):
        return {"y": p["a"] * x, "z": x.sum()}

    def fwd(p, x):
        return scale(p, x), (p, x)

    def bwd(res, ct):
        p, x = res
        return {"a": (ct["y"] * x).sum() * 10.0}, ct["y"] * p["a"] + ct["z"]
    scale.defvjp(fwd, bwd)
    p = {"a": np.float32(2.0)}
    gp, gx = jitviz.grad(lambda p, x: scale(p, x)["y"].sum() + scale(p, x)["z"],
                         argnums=(0, 1))(p, X)
    assert float(gp["a"]) == pytest.approx(60.0)  # bwd's (deliberately scaled) answer
    np.testing.assert_allclose(gx, [3.0, 3.0, 3.0])


def test_misuse_is_named():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jitviz.jvp(softplus, (X,), (X,))
    bare = jitviz.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined"):
        bare(X)

    def outer(y):
        closes = jitviz.custom_vjp(lambda x: x * y)
        closes.defvjp(lambda x: (x * y, None), lambda r, g: (g,))
        return closes(X).sum()
    with pytest.raises(TypeError, match="closes over a value traced"):
        jitviz.grad(outer)(np.float32(2.0))


def test_matches_jax_when_installed():
    jax = pytest.importorskip("jax")

    def build(lib, np_):
        f = lib.custom_vjp(lambda x: np_.sin(x) * 2)
        f.defvjp(lambda x: (np_.sin(x) * 2, np_.cos(x)), lambda c, g: (g * c * 3,))
        return lambda x: f(x).sum()
    ours = jitviz.jit(jitviz.grad(build(jitviz, jnp)))(X)
    theirs = jax.jit(jax.grad(build(jax, jax.numpy)))(X)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)


# --- custom_jvp ------------------------------------------------------------------------------

@jitviz.custom_jvp
def scaled_sin(x, y):
    return jnp.sin(x) * y


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):  # deliberately 10x the true x-derivative
    x, y = primals
    return scaled_sin(x, y), jnp.cos(x) * tangents[0] * y * 10 + jnp.sin(x) * tangents[1]


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_custom_jvp_rule_drives_both_modes(backend):
    x, y = np.array([0.5, 1.0], np.float32), np.float32(2.0)
    expected_x = np.cos(x) * y * 10
    _, t = jitviz.jvp(scaled_sin, (x, y), (np.ones(2, np.float32), np.float32(0.0)))
    np.testing.assert_allclose(t, expected_x, rtol=1e-6)
    gx, gy = jitviz.jit(jitviz.grad(lambda x, y: scaled_sin(x, y).sum(), argnums=(0, 1)),
                        backend=backend)(x, y)
    np.testing.assert_allclose(gx, expected_x, rtol=1e-6)  # the rule's transpose
    np.testing.assert_allclose(gy, np.sin(x).sum(), rtol=1e-6)
    np.testing.assert_allclose(jitviz.jit(scaled_sin, backend=backend)(x, y), np.sin(x) * y)


def test_custom_jvp_with_vmap_hessian_and_defjvps():
    x, y = np.array([0.5, 1.0], np.float32), np.float32(2.0)
    per = jitviz.vmap(jitviz.grad(lambda v: scaled_sin(v, y)))(x)
    np.testing.assert_allclose(per, np.cos(x) * y * 10, rtol=1e-6)
    h = jitviz.hessian(lambda v: scaled_sin(v, y).sum())(x)
    np.testing.assert_allclose(h, np.diag(-np.sin(x) * y * 10), rtol=1e-6)
    safe_log = jitviz.custom_jvp(lambda v: jnp.log(v))
    safe_log.defjvps(lambda t, ans, v: t / jnp.maximum(v, 1e-3))
    g = jitviz.grad(lambda v: safe_log(v).sum())(np.array([0.0, 2.0], np.float32))
    np.testing.assert_allclose(g, [1000.0, 0.5], rtol=1e-5)  # finite at 0, as the rule says


def test_custom_jvp_matches_jax_when_installed():
    jax = pytest.importorskip("jax")

    def build(lib, np_):
        f = lib.custom_jvp(lambda x: np_.exp(x) - 1)
        f.defjvp(lambda p, t: (f(*p), np_.exp(p[0]) * t[0] * 2))
        return lambda x: (f(x) * x).sum()
    x = np.array([0.1, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(jitviz.grad(build(jitviz, jnp))(x),
                               np.asarray(jax.grad(build(jax, jax.numpy))(x)), rtol=1e-6)
    np.testing.assert_allclose(jitviz.hessian(build(jitviz, jnp))(x),
                               np.asarray(jax.hessian(build(jax, jax.numpy))(x)), rtol=1e-5)


def test_defvjp_returns_none_as_jax():
    # JAX's custom_vjp.defvjp returns None (a notebook cell ending with it shows nothing)
    f = jitviz.custom_vjp(lambda x: x)
    assert f.defvjp(lambda x: (x, None), lambda r, g: (g,)) is None
    assert float(jitviz.grad(f)(2.0)) == 1.0
