"""jitviz.checkpoint / remat: values and derivatives are those of the function without it (and
JAX's), the call is a visible `remat2` equation, and under grad the backward pass recomputes
the function's intermediates from its inputs (the only residuals), as JAX's does."""
from functools import partial

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

X = np.linspace(-1.0, 2.0, 6, dtype=np.float32).reshape(2, 3)
W = np.linspace(0.5, -0.5, 9, dtype=np.float32).reshape(3, 3)


def layer(w, x):
    return jnp.tanh(x @ w) * jnp.sin(x)


def loss(layer_fn):
    return lambda w, x: (layer_fn(w, layer_fn(w, x)) ** 2).sum()


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_values_and_gradients_are_those_without_it(backend):
    plain, remat = loss(layer), loss(jitviz.checkpoint(layer))
    got = jitviz.jit(jitviz.value_and_grad(remat, argnums=(0, 1)), backend=backend)(W, X)
    want = jitviz.jit(jitviz.value_and_grad(plain, argnums=(0, 1)), backend=backend)(W, X)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_matches_jax_in_every_mode():
    jax = pytest.importorskip("jax")
    jlayer = lambda w, x: jax.numpy.tanh(x @ w) * jax.numpy.sin(x)  # noqa: E731
    ours, theirs = loss(jitviz.remat(layer)), loss(jax.remat(jlayer))
    np.testing.assert_allclose(jitviz.grad(ours)(W, X), jax.grad(theirs)(W, X), rtol=2e-6)
    h = jitviz.hessian(lambda x: jitviz.checkpoint(jnp.sin)(x).sum() ** 2)(X[0])
    hj = jax.hessian(lambda x: jax.checkpoint(jax.numpy.sin)(x).sum() ** 2)(X[0])
    np.testing.assert_allclose(h, np.asarray(hj), rtol=2e-6, atol=1e-7)
    _, t = jitviz.jvp(jitviz.checkpoint(layer), (W, X), (W, X))
    _, tj = jax.jvp(jax.checkpoint(jlayer), (W, X), (W, X))
    np.testing.assert_allclose(t, np.asarray(tj), rtol=1e-5, atol=1e-6)
    xs = np.stack([X, 2 * X])
    v = jitviz.vmap(jitviz.grad(ours, argnums=1), in_axes=(None, 0))(W, xs)
    vj = jax.vmap(jax.grad(theirs, argnums=1), in_axes=(None, 0))(W, xs)
    np.testing.assert_allclose(v, np.asarray(vj), rtol=2e-6, atol=1e-7)


def _remat_eqns(jaxpr):
    """Every remat2 equation, nested ones included."""
    found = []
    for e in jaxpr.eqns:
        if e.primitive.name == "remat2":
            found.append(e)
        for p in e.params.values():
            if hasattr(p, "jaxpr") and hasattr(p.jaxpr, "eqns"):
                found += _remat_eqns(p.jaxpr)
    return found


def test_the_call_prints_as_jax_prints_it():
    text = str(jitviz.make_jaxpr(jitviz.checkpoint(lambda x: jnp.sin(jnp.sin(x))))(1.0))
    assert "remat2[\n      differentiated=False\n      jaxpr={ lambda" in text
    assert "policy=None\n      prevent_cse=True\n    ]" in text


def test_under_grad_the_backward_recomputes_from_the_inputs_only():
    """JAX's structure: the forward pass is the function's equations, inlined, keeping no
    intermediate; the backward pass is one remat2[differentiated=True] call."""
    f = jitviz.checkpoint(lambda x: jnp.sin(jnp.exp(x)))
    closed = jitviz.make_jaxpr(jitviz.grad(lambda x: f(x).sum()))(X[0])
    (backward,) = _remat_eqns(closed.jaxpr)
    assert backward.params["differentiated"]
    forward = [e for e in closed.jaxpr.eqns if e.params.get("name") == "forward(<lambda>)"][0]
    # the forward pass returns only the loss: no residual leaves it
    assert len(forward.outvars) == 1
    body = backward.params["jaxpr"].jaxpr
    names = [e.primitive.name for e in body.eqns]
    assert "exp" in names and "cos" in names  # exp(x) is recomputed for cos(exp(x))
    # its operands: the function's input and the output cotangent
    assert [v.aval.shape for v in backward.invars] == [(3,), (3,)]


def test_without_checkpoint_the_intermediate_is_a_residual():
    """The contrast the test above relies on: a plain function's backward pass reads the
    forward pass's exp(x) rather than computing it."""
    closed = jitviz.make_jaxpr(jitviz.grad(lambda x: jnp.sin(jnp.exp(x)).sum()))(X[0])
    backward = [e for e in closed.jaxpr.eqns if e.params.get("name") == "backward(<lambda>)"][0]
    assert "exp" not in [e.primitive.name for e in backward.params["jaxpr"].jaxpr.eqns]


def test_static_argnums_policy_and_decorator_forms():
    @partial(jitviz.checkpoint, static_argnums=(1,),
             policy=jitviz.checkpoint_policies.dots_with_no_batch_dims_saveable)
    def power(x, n):
        for _ in range(n):  # Python control flow on the static argument
            x = jnp.sin(x)
        return x
    g = jitviz.grad(lambda x: power(x, 3).sum())(X[0])
    np.testing.assert_allclose(
        g, np.cos(X[0]) * np.cos(np.sin(X[0])) * np.cos(np.sin(np.sin(X[0]))), rtol=1e-6)
    eqn = jitviz.make_jaxpr(lambda x: power(x, 2))(X[0]).jaxpr.eqns[0]
    assert eqn.params["policy"] is jitviz.checkpoint_policies.dots_with_no_batch_dims_saveable
    named = jitviz.checkpoint(lambda x, n: x * n, static_argnames=("n",), prevent_cse=False)
    assert float(named(np.float32(2.0), n=3)) == 6.0
    with pytest.raises(ValueError, match="static_argnames: <lambda> has no parameter 'm' "
                                         r"\(its parameters: x, n\)"):
        jitviz.checkpoint(lambda x, n: x, static_argnames="m")
    with pytest.raises(TypeError, match="policy must be one of jitviz.checkpoint_policies"):
        jitviz.checkpoint(jnp.sin, policy="dots")


def test_policies_answer_as_jax_s():
    jax = pytest.importorskip("jax")
    cp, jcp = jitviz.checkpoint_policies, jax.checkpoint_policies
    dot = jitviz.make_jaxpr(lambda a, b: a @ b)(W, W).jaxpr.eqns[0]
    bdot = jitviz.make_jaxpr(lambda a, b: jnp.einsum("bij,bjk->bik", a, b))(
        W[None], W[None]).jaxpr.eqns[-1]
    assert bdot.primitive.name == "dot_general"
    for name in ("everything_saveable", "nothing_saveable", "dots_saveable",
                 "dots_with_no_batch_dims_saveable", "checkpoint_dots"):
        ours = getattr(cp, name)
        assert ours(dot.primitive, **dot.params) == getattr(jcp, name)(
            jax.lax.dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
        assert ours(bdot.primitive, **bdot.params) == getattr(jcp, name)(
            jax.lax.dot_general_p, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    both = cp.save_from_both_policies(cp.nothing_saveable, cp.dots_saveable)
    assert both(dot.primitive, **dot.params) and not both(lax.sin, x=None)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_closing_over_traced_values_and_scan_bodies(backend):
    """The common uses: a checkpointed scan step (the memory-saving idiom) and a function
    closing over a value of the enclosing jit."""
    def run(w, x, wrap):
        step = wrap(lambda c, _: (jnp.tanh(c @ w), c.sum()))
        c, ys = lax.scan(step, x, None, length=4)
        return c.sum() + ys.sum()
    ours = jitviz.jit(jitviz.grad(lambda w, x: run(w, x, jitviz.checkpoint)), backend=backend)
    plain = jitviz.jit(jitviz.grad(lambda w, x: run(w, x, lambda f: f)), backend=backend)
    np.testing.assert_allclose(ours(W, X), plain(W, X), rtol=1e-6, atol=1e-7)

    def closes_over(x, k):
        return jitviz.checkpoint(lambda y: jnp.sin(y * k))(x).sum()
    g = jitviz.jit(jitviz.grad(closes_over, argnums=(0, 1)), backend=backend)(X[0], np.float32(3))
    np.testing.assert_allclose(g[0], 3 * np.cos(3 * X[0]), rtol=1e-6)
    np.testing.assert_allclose(g[1], (X[0] * np.cos(3 * X[0])).sum(), rtol=1e-6)


def test_the_explorer_draws_it_as_a_cluster():
    from jitviz.explorer.graph import build_graph
    closed = jitviz.make_jaxpr(jitviz.checkpoint(lambda x: jnp.sin(x) * 2.0))(X[0])
    graph = build_graph(closed)
    clusters = [n for n in graph["nodes"] if n["kind"] == "cluster"]
    assert any(n.get("primitive") == "remat2" for n in clusters), clusters


def test_checkpoint_name_tags_without_changing_the_value_or_gradient():
    from jitviz.ad_checkpoint import checkpoint_name
    policy = jitviz.checkpoint_policies.save_only_these_names("hidden")
    f = jitviz.checkpoint(lambda x: jnp.sin(checkpoint_name(x * 2.0, "hidden")), policy=policy)
    np.testing.assert_allclose(jitviz.grad(lambda x: f(x).sum())(X[0]), 2 * np.cos(2 * X[0]),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="name must be a string"):
        checkpoint_name(X, 3)
