"""lax's one-axis conveniences (slice_in_dim, index_in_dim, dynamic_*_in_dim), collapse,
full_like, reciprocal and lax.reduce: values, dtypes and shapes against real JAX, traced
indices under jit on the interpreter and the CPU backend, gradients and vmap."""
from functools import partial

import numpy as np
import pytest

import jitviz
from jitviz import lax

jax = pytest.importorskip("jax")
jlax = jax.lax
X = np.arange(24, dtype=np.float32).reshape(4, 6) / 7.0
I = np.int32


def same(ours, theirs, rtol=1e-6):
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol)


CASES = {
    "slice_in_dim": lambda L, x, i: L.slice_in_dim(x, -3, None, axis=1),
    "slice_in_dim stride": lambda L, x, i: L.slice_in_dim(x, 1, None, 2),
    "index_in_dim": lambda L, x, i: L.index_in_dim(x, -1, 1, False),
    "index_in_dim keepdims": lambda L, x, i: L.index_in_dim(x, 2),
    "dynamic_slice_in_dim": lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, 1),
    "dynamic_index_in_dim": lambda L, x, i: L.dynamic_index_in_dim(x, i, 0, False),
    "dynamic_update_slice_in_dim": lambda L, x, i: L.dynamic_update_slice_in_dim(
        x, np.ones((4, 2), np.float32), i, 1),
    "dynamic_update_index_in_dim": lambda L, x, i: L.dynamic_update_index_in_dim(
        x, np.ones(6, np.float32), i, 0),
    "collapse": lambda L, x, i: L.collapse(x.reshape(2, 2, 6), 0, 2),
    "collapse to the end": lambda L, x, i: L.collapse(x.reshape(2, 2, 6), 1),
    "full_like": lambda L, x, i: L.full_like(x, 3),
    "full_like dtype shape": lambda L, x, i: L.full_like(x, 3, np.int32, (2,)),
    "reciprocal": lambda L, x, i: L.reciprocal(x + 1),
}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_with_traced_indices(backend, name):
    case = CASES[name]
    for index in (I(1), I(-2), I(5), I(9)):  # in range, from the end, clamped
        got = jitviz.jit(partial(case, lax), backend=backend)(X, index)
        same(got, jax.jit(partial(case, jlax))(X, index))


def test_dynamic_index_gradient_and_vmap():
    g = jitviz.grad(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, False).sum())(X, I(3))
    same(g, jax.grad(lambda x, i: jlax.dynamic_index_in_dim(x, i, 1, False).sum())(X, I(3)))
    idx = np.array([0, 3, -1, 7], np.int32)
    same(jitviz.vmap(lambda i: lax.dynamic_slice_in_dim(X, i, 2, 1))(idx),
         jax.vmap(lambda i: jlax.dynamic_slice_in_dim(X, i, 2, 1))(idx))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        lax.index_in_dim(X, 4)


REDUCTIONS = {
    "add": (lambda L: (X, 0.0, L.add, (0,))),
    "add with an init": (lambda L: (X, 2.0, L.add, (1,))),
    "max all": (lambda L: (X, -np.inf, L.max, (0, 1))),
    "min with a traced-looking init": (lambda L: (X, np.float32(0.5), L.min, (1,))),
    "int and": (lambda L: (np.arange(12, dtype=np.int32).reshape(3, 4), -1, L.bitwise_and,
                           (0,))),
    # associative, not a known monoid: (1 + a)(1 + b) - 1, identity 0
    "custom": (lambda L: (X / 4, 0.0, lambda a, b: a + b + a * b, (0,))),
    "custom odd length": (lambda L: (X[:3], 0.0, lambda a, b: L.max(a, b) + 0.0, (0,))),
    "pytree": (lambda L: ((X, X * 2), (0.0, -np.inf),
                          lambda a, b: (a[0] + b[0], L.max(a[1], b[1])), (1,))),
    "empty": (lambda L: (np.zeros((0, 3), np.float32), 4.0, lambda a, b: a + b, (0,))),
}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduce_matches_jax(backend, name):
    ops, init, comp, dims = REDUCTIONS[name](lax)
    jops, jinit, jcomp, jdims = REDUCTIONS[name](jlax)
    got = jitviz.jit(lambda o: lax.reduce(o, init, comp, dims), backend=backend)(ops)
    same(got, jlax.reduce(jops, jinit, jcomp, jdims), rtol=2e-6)


def test_reduce_with_a_known_monoid_is_its_primitive_and_differentiates():
    text = str(jitviz.make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (0,)))(X))
    assert "reduce_sum[axes=(0,)" in text
    g = jitviz.grad(lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (0,)).sum())(X + 1)
    same(g, jax.grad(lambda x: jlax.reduce(x, 1.0, lambda a, b: a * b, (0,)).sum())(X + 1),
         rtol=1e-5)
    per = jitviz.vmap(lambda x: lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,)))(
        np.ones((2, 3, 1), np.float32))
    assert per.shape == (2, 1)
    with pytest.raises(TypeError, match="init_values' structure"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
