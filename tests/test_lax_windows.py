"""lax.pad, reduce_window (and max / avg pooling as flax and haiku write it),
conv_general_dilated / conv / conv_with_general_padding, associative_scan, cumlogsumexp and
top_k: values against real JAX on the interpreter and the CPU backend, gradients against JAX's,
vmap against a loop, and JAX's errors for bad arguments."""
from functools import partial

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

jax = pytest.importorskip("jax")
jlax = jax.lax
rng = np.random.default_rng(11)
X = rng.normal(size=(2, 7, 6, 3)).astype(np.float32)
BACKENDS = ["interpret", "cpu"]


def close(ours, theirs, rtol=1e-5, atol=1e-5):
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pad_matches_jax(backend):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for config in ([(1, 2, 0), (0, 0, 1)], [(-1, 2, 2), (2, -3, 0)], [(0, 0, 0), (3, 1, 3)]):
        got = jitviz.jit(lambda v: lax.pad(v, np.float32(-7), config), backend=backend)(x)
        close(got, jlax.pad(x, np.float32(-7), config), 0, 0)
    g = jitviz.grad(lambda v: (lax.pad(v, 0.0, [(1, -1, 1), (0, 2, 0)]) ** 2).sum())(x)
    close(g, jax.grad(lambda v: (jlax.pad(v, 0.0, [(1, -1, 1), (0, 2, 0)]) ** 2).sum())(x))
    with pytest.raises(ValueError, match="one \\(low, high, interior\\) triple per dimension"):
        lax.pad(x, 0.0, [(1, 1, 0)])
    with pytest.raises(TypeError, match="padding_value's dtype int32"):
        lax.pad(x, np.int32(0), [(1, 1, 0)] * 2)


WINDOWS = [((1, 3, 3, 1), (1, 2, 2, 1), "SAME", None, None),
           ((1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
           ((1, 3, 2, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (0, 1), (0, 0)), None, None),
           ((1, 2, 3, 1), (1, 3, 1, 1), "SAME", (1, 2, 1, 1), (1, 1, 2, 1))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("window", range(len(WINDOWS)))
def test_reduce_window_matches_jax(backend, window):
    dims, strides, padding, base, wdil = WINDOWS[window]
    for init, ours_op, their_op in ((-np.inf, lax.max, jlax.max), (0.0, lax.add, jlax.add),
                                    (np.inf, lax.min, jlax.min)):
        f = partial(lax.reduce_window, init_value=init, computation=ours_op,
                    window_dimensions=dims, window_strides=strides, padding=padding,
                    base_dilation=base, window_dilation=wdil)
        want = jlax.reduce_window(X, init, their_op, dims, strides, padding, base, wdil)
        close(jitviz.jit(f, backend=backend)(X), want)


def test_reduce_window_gradients_and_vmap_match_jax():
    def avg_pool(lib, x):  # flax's avg_pool: a sum window divided by the window size
        return lib.reduce_window(x, 0.0, lib.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

    def max_pool(lib, x):  # flax's max_pool
        return lib.reduce_window(x, -jnp.inf, lib.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    for pool in (avg_pool, max_pool):
        loss = lambda lib, x: (pool(lib, x) ** 2).sum()  # noqa: E731
        close(jitviz.grad(partial(loss, lax))(X), jax.grad(partial(loss, jlax))(X))
        xs = np.stack([X, -2 * X])
        close(jitviz.vmap(partial(pool, lax))(xs), jax.vmap(partial(pool, jlax))(xs))


def test_reduce_window_of_a_pytree_and_integer_windows():
    """Two operands reduced together (an argmax-style window) and an int32 sum window."""
    idx = np.broadcast_to(np.arange(6, dtype=np.int32), (4, 6))
    vals = rng.normal(size=(4, 6)).astype(np.float32)

    def pick(lib, a, b):
        take_b = b[0] > a[0]
        return (lib.select(take_b, b[0], a[0]), lib.select(take_b, b[1], a[1]))
    ours = lax.reduce_window((vals, idx), (-np.inf, np.int32(0)), partial(pick, lax),
                             (1, 3), (1, 1), "VALID")
    theirs = jlax.reduce_window((vals, idx), (-np.inf, np.int32(0)), partial(pick, jlax),
                                (1, 3), (1, 1), "VALID")
    close(ours, theirs, 0, 0)
    ints = np.arange(20, dtype=np.int32).reshape(4, 5)
    close(lax.reduce_window(ints, 0, lax.add, (2, 2), (1, 2), "SAME"),
          jlax.reduce_window(ints, 0, jlax.add, (2, 2), (1, 2), "SAME"), 0, 0)
    with pytest.raises(TypeError, match="window_dimensions must have one entry per dimension"):
        lax.reduce_window(ints, 0, lax.add, (2,), (1,), "VALID")
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.reduce_window(ints, 0, lax.add, (2, 2), (1, 1), "FULL")


CONVS = [
    dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
    dict(window_strides=(2, 1), padding=((1, 0), (2, 1)), lhs_dilation=(1, 2),
         rhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC")),
    dict(window_strides=(1, 2), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NCHW")),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv_general_dilated_matches_jax(backend, case):
    kw = CONVS[case]
    w = rng.normal(size=(3, 3, 3, 8)).astype(np.float32)
    got = jitviz.jit(lambda x, k: lax.conv_general_dilated(x, k, **kw), backend=backend)(X, w)
    close(got, jlax.conv_general_dilated(X, w, **kw), 1e-5, 2e-5)


def test_conv_groups_1d_and_the_short_forms_match_jax():
    x = rng.normal(size=(4, 6, 9, 8)).astype(np.float32)
    wf = rng.normal(size=(6, 3, 3, 2)).astype(np.float32)
    wb = rng.normal(size=(6, 6, 3, 2)).astype(np.float32)
    close(lax.conv_general_dilated(x, wf, (1, 1), "VALID", feature_group_count=2),
          jlax.conv_general_dilated(x, wf, (1, 1), "VALID", feature_group_count=2), 1e-5, 2e-5)
    close(lax.conv_general_dilated(x, wb, (1, 1), "SAME", batch_group_count=2),
          jlax.conv_general_dilated(x, wb, (1, 1), "SAME", batch_group_count=2), 1e-5, 2e-5)
    close(lax.conv(x, wb, (1, 2), "SAME"), jlax.conv(x, wb, (1, 2), "SAME"), 1e-5, 2e-5)
    close(lax.conv_with_general_padding(x, wb, (2, 1), ((1, 1), (0, 2)), (1, 1), (2, 1)),
          jlax.conv_with_general_padding(x, wb, (2, 1), ((1, 1), (0, 2)), (1, 1), (2, 1)),
          1e-5, 2e-5)
    x1, w1 = rng.normal(size=(2, 3, 10)).astype(np.float32), rng.normal(size=(4, 3, 3)).astype(
        np.float32)
    close(lax.conv_general_dilated(x1, w1, (2,), "SAME_LOWER"),
          jlax.conv_general_dilated(x1, w1, (2,), "SAME_LOWER"), 1e-5, 2e-5)
    dn = lax.conv_dimension_numbers(X.shape, (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert tuple(dn) == tuple(jlax.conv_dimension_numbers(X.shape, (3, 3, 3, 8),
                                                          ("NHWC", "HWIO", "NHWC")))
    with pytest.raises(ValueError, match="feature dimension \\(6\\) must equal rhs input"):
        lax.conv(x, wf, (1, 1), "SAME")


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_transpose_matches_jax(backend):
    """flax's ConvTranspose: NHWC / HWIO, 'SAME' or 'VALID' or explicit pads, strides,
    kernel dilation and transpose_kernel."""
    x = rng.normal(size=(2, 5, 4, 3)).astype(np.float32)
    w = rng.normal(size=(3, 2, 3, 6)).astype(np.float32)
    cases = [dict(strides=(2, 2), padding="SAME"), dict(strides=(2, 1), padding="VALID"),
             dict(strides=(3, 2), padding="SAME", rhs_dilation=(1, 2)),
             dict(strides=(2, 2), padding=((1, 2), (0, 1))),
             dict(strides=(2, 2), padding=((1, 2), (0, 1)), use_consistent_padding=True),
             dict(strides=(1, 2), padding="VALID", transpose_kernel=True)]
    for kw in cases:
        k = w if not kw.get("transpose_kernel") else w.transpose(0, 1, 3, 2)
        got = jitviz.jit(lambda a, b: lax.conv_transpose(a, b, **kw), backend=backend)(x, k)
        close(got, jlax.conv_transpose(x, k, **kw), 1e-5, 2e-5)
    g = jitviz.grad(lambda b: lax.conv_transpose(x, b, (2, 2), "SAME").sum())(w)
    close(g, jax.grad(lambda b: jlax.conv_transpose(x, b, (2, 2), "SAME").sum())(w), 1e-5, 1e-4)


def test_conv_gradients_and_vmap_match_jax():
    w = rng.normal(size=(3, 3, 3, 4)).astype(np.float32)
    kw = dict(window_strides=(2, 1), padding="SAME", rhs_dilation=(1, 2),
              dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def loss(lib, x, k):
        return (jnp.tanh(lib.conv_general_dilated(x, k, **kw)) ** 2).sum() if lib is lax else \
            (jax.numpy.tanh(lib.conv_general_dilated(x, k, **kw)) ** 2).sum()
    got = jitviz.jit(jitviz.grad(partial(loss, lax), argnums=(0, 1)))(X, w)
    close(got, jax.grad(partial(loss, jlax), argnums=(0, 1))(X, w), 1e-4, 1e-4)
    per = jitviz.vmap(lambda x: lax.conv_general_dilated(x[None], w, **kw))(X)
    close(per, jax.vmap(lambda x: jlax.conv_general_dilated(x[None], w, **kw))(X), 1e-5, 2e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_associative_scan_matches_jax(backend):
    for n in (1, 2, 5, 8, 13):
        y = rng.normal(size=(n, 3)).astype(np.float32)
        for reverse in (False, True):
            got = jitviz.jit(lambda v: lax.associative_scan(jnp.add, v, reverse=reverse),
                             backend=backend)(y)
            close(got, jlax.associative_scan(jax.numpy.add, y, reverse=reverse))
    # a pytree and a non-commutative operator: composing affine maps x -> a x + b
    a, b = rng.normal(size=(2, 9, 4)).astype(np.float32)

    def compose(lib_add, lib_mul):
        return lambda f, g: (lib_mul(g[0], f[0]), lib_add(lib_mul(g[0], f[1]), g[1]))
    got = lax.associative_scan(compose(jnp.add, jnp.multiply), (a, b), axis=1)
    close(got, jlax.associative_scan(compose(jax.numpy.add, jax.numpy.multiply), (a, b),
                                     axis=1))
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(jnp.add, (a, b[:3]))


def test_associative_scan_gradient_and_vmap():
    y = rng.normal(size=(6, 3)).astype(np.float32)
    loss = lambda lib, np_, v: (lib.associative_scan(np_.maximum, v) ** 2).sum()  # noqa: E731
    close(jitviz.grad(partial(loss, lax, jnp))(y), jax.grad(partial(loss, jlax, jax.numpy))(y))
    close(jitviz.vmap(lambda v: lax.associative_scan(jnp.multiply, v))(y),
          jax.vmap(lambda v: jlax.associative_scan(jax.numpy.multiply, v))(y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_cumlogsumexp_matches_jax(backend):
    y = np.concatenate([rng.normal(size=(5, 4)) * 30, np.full((1, 4), -np.inf)]).astype(
        np.float32)
    for axis, reverse in ((0, False), (1, True), (1, False)):
        f = jitviz.jit(lambda v: lax.cumlogsumexp(v, axis, reverse), backend=backend)
        close(f(y), jlax.cumlogsumexp(y, axis, reverse))
    g = jitviz.grad(lambda v: lax.cumlogsumexp(v, 1).sum())(y[:5])
    close(g, jax.grad(lambda v: jlax.cumlogsumexp(v, 1).sum())(y[:5]))
    with pytest.raises(ValueError, match="axis -1 is out of bounds"):  # as JAX's
        lax.cumlogsumexp(y, -1)
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.arange(3, dtype=np.int32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_top_k_matches_jax(backend):
    x = np.array([[3, 1, np.nan, 3, 2, -np.inf], [0, 0, 1, 1, 5, -0.0]], np.float32)
    for k in (0, 1, 4, 6):
        close(jitviz.jit(lambda v: lax.top_k(v, k), backend=backend)(x), jlax.top_k(x, k), 0, 0)
    ints = (np.arange(24, dtype=np.int32) % 5).reshape(2, 3, 4)
    close(lax.top_k(ints, 2, axis=1), jlax.top_k(ints, 2, axis=1), 0, 0)
    y = rng.normal(size=(3, 7)).astype(np.float32)
    g = jitviz.grad(lambda v: (lax.top_k(v, 3)[0] ** 2).sum())(y)
    close(g, jax.grad(lambda v: (jlax.top_k(v, 3)[0] ** 2).sum())(y))
    close(jitviz.vmap(lambda v: lax.top_k(v, 2))(y), jax.vmap(lambda v: jlax.top_k(v, 2))(y))
    with pytest.raises(TypeError, match="must be no larger than size"):
        lax.top_k(y, 8)
    with pytest.raises(ValueError, match="must be nonnegative"):
        lax.top_k(y, -1)
