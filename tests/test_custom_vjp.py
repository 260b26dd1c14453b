"""jitviz.custom_vjp: the user's fwd/bwd decide reverse-mode derivatives (also under jit, vmap
and on the CPU backend), the value is the function's, forward mode is refused as in JAX."""
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
