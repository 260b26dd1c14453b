"""custom_vjp / custom_jvp with `nondiff_argnums` / `nondiff_argnames`, with JAX's conventions:
the non-differentiable arguments (functions, Python numbers, and for custom_jvp also traced
arrays) come first in bwd / the jvp rule, bwd returns cotangents for the other arguments only,
and fwd takes every argument in its place. Each case is checked against real JAX."""
from functools import partial

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp

jax = pytest.importorskip("jax")
X = np.array([0.5, -1.0, 2.0], np.float32)


def make_apply(lib, np_):
    """`apply(f, x, scale) = f(x) * scale`, f non-differentiable, bwd ignoring f's slope."""
    @partial(lib.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, scale):
        return f(x) * scale

    def fwd(f, x, scale):
        return apply(f, x, scale), (x, scale)

    def bwd(f, res, g):
        x, scale = res
        return (g * scale * 5.0, (g * f(x)).sum())
    apply.defvjp(fwd, bwd)
    return apply


def make_jvp_apply(lib, np_):
    """A custom_jvp whose non-differentiable arguments are a function and a number."""
    @partial(lib.custom_jvp, nondiff_argnums=(0, 2))
    def apply(f, x, power):
        return f(x) ** power

    @apply.defjvp
    def rule(f, power, primals, tangents):
        (x,), (t,) = primals, tangents
        y = apply(f, x, power)
        return y, 3.0 * power * t
    return apply


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_custom_vjp_nondiff_function_argument(backend):
    ours, theirs = make_apply(jitviz, jnp), make_apply(jax, jax.numpy)
    loss_ours = lambda x, s: ours(jnp.sin, x, s).sum()  # noqa: E731
    loss_theirs = lambda x, s: theirs(jax.numpy.sin, x, s).sum()  # noqa: E731
    s = np.float32(1.5)
    got = jitviz.jit(jitviz.grad(loss_ours, argnums=(0, 1)), backend=backend)(X, s)
    want = jax.grad(loss_theirs, argnums=(0, 1))(X, s)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-6)
    np.testing.assert_allclose(jitviz.jit(loss_ours, backend=backend)(X, s),
                               loss_theirs(X, s), rtol=1e-6)


def test_custom_vjp_nondiff_under_vmap():
    ours, theirs = make_apply(jitviz, jnp), make_apply(jax, jax.numpy)
    xs = np.stack([X, 2 * X])
    g = jitviz.vmap(jitviz.grad(lambda x: ours(jnp.tanh, x, np.float32(2.0)).sum()))(xs)
    want = jax.vmap(jax.grad(lambda x: theirs(jax.numpy.tanh, x, np.float32(2.0)).sum()))(xs)
    np.testing.assert_allclose(g, np.asarray(want), rtol=1e-6)


def test_custom_vjp_refuses_a_traced_nondiff_argument_as_jax_does():
    ours = make_apply(jitviz, jnp)

    @partial(jitviz.custom_vjp, nondiff_argnums=(1,))
    def scaled(x, k):
        return x * k
    scaled.defvjp(lambda x, k: (x * k, None), lambda k, res, g: (g * k,))
    with pytest.raises(jitviz.errors.UnexpectedTracerError, match="nondiff_argnums"):
        jitviz.jit(scaled)(X, np.float32(2.0))
    # a concrete number is fine, eagerly and under jit
    assert float(jitviz.grad(lambda x: scaled(x, 3.0))(np.float32(1.0))) == 3.0
    assert ours(jnp.sin, X, 1.0).shape == (3,)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_custom_jvp_nondiff_function_and_number(backend):
    ours, theirs = make_jvp_apply(jitviz, jnp), make_jvp_apply(jax, jax.numpy)
    f = jitviz.jit(lambda x: jitviz.jvp(lambda y: ours(jnp.exp, y, 2.0), (x,), (X,)),
                   backend=backend)
    (y, t) = f(X)
    (yj, tj) = jax.jvp(lambda y: theirs(jax.numpy.exp, y, 2.0), (X,), (X,))
    np.testing.assert_allclose(y, np.asarray(yj), rtol=1e-6)
    np.testing.assert_allclose(t, np.asarray(tj), rtol=1e-6)
    g = jitviz.jit(jitviz.grad(lambda x: ours(jnp.exp, x, 2.0).sum()), backend=backend)(X)
    np.testing.assert_allclose(g, np.asarray(jax.grad(
        lambda x: theirs(jax.numpy.exp, x, 2.0).sum())(X)), rtol=1e-6)


def make_traced_nondiff(lib):
    """custom_jvp with a traced array as its non-differentiable argument (JAX allows it)."""
    @partial(lib.custom_jvp, nondiff_argnums=(1,))
    def shifted_square(x, shift):
        return (x - shift) ** 2

    @shifted_square.defjvp
    def rule(shift, primals, tangents):
        (x,), (t,) = primals, tangents
        return (x - shift) ** 2, 10.0 * (x - shift) * t
    return shifted_square


def test_custom_jvp_traced_nondiff_argument_under_jit_grad_and_vmap():
    ours, theirs = make_traced_nondiff(jitviz), make_traced_nondiff(jax)
    shift = np.float32(0.25)
    loss_ours = lambda x, s: ours(x, s).sum()  # noqa: E731
    loss_theirs = lambda x, s: theirs(x, s).sum()  # noqa: E731
    got = jitviz.jit(jitviz.grad(loss_ours, argnums=(0, 1)))(X, shift)
    want = jax.jit(jax.grad(loss_theirs, argnums=(0, 1)))(X, shift)
    for a, b in zip(got, want):  # the shift gets no gradient: it is non-differentiable
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-6)
    shifts = np.array([0.0, 1.0], np.float32)
    per = jitviz.vmap(jitviz.grad(loss_ours), in_axes=(None, 0))(X, shifts)
    per_j = jax.vmap(jax.grad(loss_theirs), in_axes=(None, 0))(X, shifts)
    np.testing.assert_allclose(per, np.asarray(per_j), rtol=1e-6)


def test_nondiff_argnames_and_keyword_calls():
    @partial(jitviz.custom_vjp, nondiff_argnames=("op",))
    def combine(x, op, weight=2.0):
        return op(x) * weight

    combine.defvjp(lambda x, op, weight=2.0: (combine(x, op, weight), weight),
                   lambda op, w, g: (g * w, None))
    assert combine.nondiff_argnums == (1,)
    g = jitviz.grad(lambda x: combine(x, op=jnp.cos).sum())(X)
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="has no parameter 'opp'"):
        jitviz.custom_vjp(lambda x, op: x, nondiff_argnames=("opp",))


def test_defjvps_is_refused_with_nondiff_argnums_and_bad_positions_are_named():
    f = jitviz.custom_jvp(lambda g, x: g(x), nondiff_argnums=(0,))
    with pytest.raises(TypeError, match="defjvps"):
        f.defjvps(lambda t, y, g, x: t)
    h = jitviz.custom_vjp(lambda x: x, nondiff_argnums=(3,))
    h.defvjp(lambda x: (x, None), lambda *a: (a[-1],))
    with pytest.raises(TypeError, match=r"nondiff_argnums \(3,\).*only 1 arguments"):
        h(X)


def test_symbolic_zeros_is_refused_rather_than_ignored():
    f = jitviz.custom_jvp(lambda x: x)
    with pytest.raises(NotImplementedError, match="symbolic_zeros=True"):
        f.defjvp(lambda p, t: (p[0], t[0]), symbolic_zeros=True)
    g = jitviz.custom_vjp(lambda x: x * 2.0)
    with pytest.raises(NotImplementedError, match="symbolic_zeros=True"):
        g.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct,), symbolic_zeros=True)
    g.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct * 3.0,), optimize_remat=True)
    assert float(jitviz.grad(g)(np.float32(1.0))) == 3.0
