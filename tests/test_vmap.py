"""vmap: the seed's example, in_axes/out_axes, control flow and dot_general batching,
composition with jit and grad (per-example gradients), and hypothesis-generated programs
compared with a Python loop."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import float64_kept  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests compare with NumPy in float64 (rtol 1e-12): jitviz's keep_float64 switch
    keeps NumPy float64 operands float64 without x64."""
    with float64_kept():
        yield


def absstruct(x, y):  # the seed's function
    return abs(y - x)


def test_seed_absstruct():
    a = np.array([0.5], np.float32)
    b = np.arange(4, dtype=np.float32).reshape(4, 1)
    got = jitviz.vmap(absstruct, (0, None))(b, a)
    np.testing.assert_array_equal(got, np.abs(a - b))
    assert got.shape == (4, 1)


def test_in_axes_out_axes():
    x = np.arange(12.0).reshape(3, 4)
    got = jitviz.vmap(lambda r: r * 2, in_axes=1, out_axes=1)(x)
    np.testing.assert_array_equal(got, x * 2)
    got = jitviz.vmap(lambda r, s: jnp.dot(r, s), in_axes=(0, None))(x, np.ones(4))
    np.testing.assert_array_equal(got, x.sum(1))


def test_dot_general_every_batching():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 4, 2))
    loop = np.stack([A[i] @ B[i] for i in range(5)])
    np.testing.assert_allclose(jitviz.vmap(jnp.matmul)(A, B), loop)
    np.testing.assert_allclose(jitviz.vmap(jnp.matmul, (0, None))(A, B[0]),
                               np.stack([A[i] @ B[0] for i in range(5)]))
    np.testing.assert_allclose(jitviz.vmap(jnp.matmul, (None, 0))(A[0], B),
                               np.stack([A[0] @ B[i] for i in range(5)]))


def test_control_flow():
    xs = np.array([-1.0, 0.5, 2.0, 3.0])

    def f(x):
        y = lax.cond(x > 1.0, lambda v: v * v, lambda v: -v, x)  # batched predicate
        z = lax.fori_loop(0, 3, lambda i, c: c + x, y)  # scan
        w = lax.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1.0, c[1] * 2.0),
                           (0.0, 1.0))[1]  # per-example trip counts
        _, ys = lax.scan(lambda c, a: (c + a * x, c), 0.0, jnp.arange(3.0))
        return z + w + jnp.sum(ys)
    got = jitviz.vmap(f)(xs)
    np.testing.assert_allclose(got, [float(f(x)) for x in xs])
    np.testing.assert_allclose(jitviz.jit(jitviz.vmap(f))(xs), got)


def test_per_example_gradients():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((8, 3)), rng.standard_normal(8)
    w = np.array([0.1, -0.2, 0.3])

    def loss(w, x, t):
        return (jnp.dot(x, w) - t) ** 2
    per = jitviz.vmap(jitviz.grad(loss), (None, 0, 0))(w, X, y)
    loop = np.stack([np.asarray(jitviz.grad(loss)(w, X[i], y[i])) for i in range(8)])
    np.testing.assert_allclose(per, loop, rtol=1e-12)
    np.testing.assert_allclose(per, 2 * (X @ w - y)[:, None] * X)
    jitted = jitviz.jit(jitviz.vmap(jitviz.grad(loss), (None, 0, 0)))(w, X, y)
    np.testing.assert_allclose(jitted, per, rtol=1e-12)
    np.testing.assert_allclose(jitviz.grad(lambda w: jnp.sum(jitviz.vmap(
        loss, (None, 0, 0))(w, X, y)))(w), per.sum(0))


def test_nested_vmap_and_printing():
    x = np.arange(6.0).reshape(2, 3)
    got = jitviz.vmap(jitviz.vmap(lambda a, b: a * b, (0, None)), (None, 0))(x[0], x)
    assert got.shape == (2, 3, 3)
    text = str(jitviz.make_jaxpr(jitviz.vmap(jnp.sin))(x))
    assert "sin" in text and "f64[2,3]" in text


def test_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jitviz.vmap(lambda a, b: a + b)(np.ones(2), np.ones(3))


# --- hypothesis programs: vmap against a loop -----------------------------------------------

OPS = [lambda a, b: a + b, lambda a, b: a * jnp.sin(b), lambda a, b: jnp.maximum(a, b),
       lambda a, b: jnp.where(a > b, a, b * 2.0), lambda a, b: a[::-1] - b,
       lambda a, b: jnp.cumsum(a) + b, lambda a, b: jnp.concatenate([a[1:], b[:1]]),
       lambda a, b: a @ jnp.ones((a.shape[0], a.shape[0])) + b, lambda a, b: a - jnp.max(b)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 5), st.integers(0, 5)),
                min_size=1, max_size=5), st.integers(0, 2))
def test_generated_programs_match_a_loop(ops, axes_kind):
    def f(x, y):
        vals = [x, y]
        for k, i, j in ops:
            vals.append(OPS[k](vals[i % len(vals)], vals[j % len(vals)]))
        return vals[-1]
    rng = np.random.default_rng(len(ops))
    X, Y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    in_axes = [(0, 0), (0, None), (None, 0)][axes_kind]
    Yu = Y if in_axes[1] == 0 else Y[0]
    Xu = X if in_axes[0] == 0 else X[0]
    got = jitviz.vmap(f, in_axes)(Xu, Yu)
    loop = np.stack([np.asarray(f(Xu[i] if in_axes[0] == 0 else Xu,
                                  Yu[i] if in_axes[1] == 0 else Yu)) for i in range(3)])
    np.testing.assert_allclose(got, loop, rtol=1e-12, atol=1e-12)


# --- jitviz.debug.print under vmap: one line per example, as JAX prints -----------------------

def _print_xy(x, y):
    jitviz.debug.print("x={} y={}", x, y)
    return x


@pytest.mark.parametrize("run", ["eager", "interpret", "cpu"])
def test_debug_print_under_vmap_prints_each_example(run, capfd):
    f = jitviz.vmap(_print_xy, in_axes=(0, None))
    if run != "eager":
        f = jitviz.jit(f, backend=run)
    f(np.arange(3, dtype=np.float32), np.float32(7))
    assert capfd.readouterr().out == "x=0.0 y=7.0\nx=1.0 y=7.0\nx=2.0 y=7.0\n"


@pytest.mark.parametrize("jit", [False, True])
def test_debug_print_under_nested_vmap_in_jax_order(jit, capfd):
    # JAX 0.10 prints these four lines in this order: the first vmap applied (over x)
    # varies slowest
    f = jitviz.vmap(jitviz.vmap(_print_xy, in_axes=(0, None)), in_axes=(None, 0))
    if jit:
        f = jitviz.jit(f)
    f(np.arange(2, dtype=np.float32), np.array([10, 20], np.float32))
    assert capfd.readouterr().out == ("x=0.0 y=10.0\nx=0.0 y=20.0\n"
                                      "x=1.0 y=10.0\nx=1.0 y=20.0\n")


def test_batched_debug_print_prints_rows_of_a_matrix_and_its_jaxpr_says_so(capfd):
    def g(row):
        jitviz.debug.print("{r}", r=row)
        return row
    jitviz.vmap(g)(np.ones((2, 3), np.float32))
    assert capfd.readouterr().out == "[1. 1. 1.]\n[1. 1. 1.]\n"
    text = str(jitviz.make_jaxpr(jitviz.vmap(g))(np.ones((2, 3), np.float32)))
    assert "batch_rank=1" in text
