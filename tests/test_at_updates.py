"""`x.at[idx]` updates and immutable arrays, as in JAX.

In-bounds updates are checked against NumPy's own (`ref[idx] = v`, `np.add.at`, ...) eagerly
and under `jit` on the interpreter and the CPU backend; out-of-bounds indices and `mode=` are
checked against real JAX (the oracle for semantics) where it is installed; gradients against
finite differences, `vmap` against a loop.
"""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp

# each case jits fresh lambdas on purpose
pytestmark = pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")
rng = np.random.default_rng(3)
X = rng.standard_normal((4, 5)).astype(np.float32)
V = np.float32(2.5)

# (index, values broadcastable to X[index]); indices in bounds and unique for `set`
INDICES = [
    (1, rng.standard_normal(5).astype(np.float32)),
    (-1, V),
    ((2, 3), V),
    ((slice(1, 3), slice(None, None, 2)), V),
    ((Ellipsis, 0), rng.standard_normal(4).astype(np.float32)),
    ((None, 2), V),
    (np.array([0, 3]), V),
    ((np.array([0, 2]), np.array([1, 4])), np.float32([1, 2])),
    ((slice(None), np.array([4, 0, 2])), V),
    (X > 0, V),
    ((1, slice(-3, None)), np.float32([7, 8, 9])),
]
UFUNC_OF = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


@np.errstate(invalid="ignore")  # negative bases to a fractional power are NaN on both sides
def _numpy_update(x, idx, v, method):
    ref = np.array(x, copy=True)
    if method == "set":
        ref[idx] = v
    elif method in UFUNC_OF:
        UFUNC_OF[method].at(ref, idx, v)
    elif method == "divide":
        ref[idx] = ref[idx] / v
    elif method == "power":
        ref[idx] = ref[idx] ** v
    return ref


def _runners():
    yield "eager", lambda f, *a: f(*[jnp.asarray(v) for v in a])
    for backend in ("interpret", "cpu"):
        yield backend, lambda f, *a, b=backend: jitviz.jit(f, backend=b)(*a)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max", "divide", "power"])
@pytest.mark.parametrize("k", range(len(INDICES)))
def test_update_matches_numpy(method, k):
    idx, v = INDICES[k]
    want = _numpy_update(X, idx, v, method)
    for name, run in _runners():
        got = run(lambda x, v: getattr(x.at[idx], method)(v), X, v)
        assert got.dtype == np.float32, name
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=f"{name} {idx}")


@pytest.mark.parametrize("k", range(len(INDICES)))
def test_get_and_apply_match_numpy(k):
    idx, _ = INDICES[k]
    for name, run in _runners():
        np.testing.assert_array_equal(np.asarray(run(lambda x: x.at[idx].get(), X)), X[idx])
        want = np.array(X, copy=True)
        want[idx] = np.sin(X[idx])
        got = run(lambda x: x.at[idx].apply(jnp.sin), X)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=name)


def test_duplicate_indices_accumulate_and_a_traced_index_works():
    x = np.zeros(5, np.float32)
    i = np.array([1, 1, 3])
    for name, run in _runners():
        np.testing.assert_array_equal(np.asarray(run(lambda x: x.at[i].add(1.0), x)),
                                      [0, 2, 0, 1, 0])
    f = jitviz.jit(lambda x, j, v: x.at[j].set(v))
    for j in range(-5, 5):
        want = np.array(x, copy=True)
        want[j] = 9
        np.testing.assert_array_equal(np.asarray(f(x, j, 9.0)), want)


def test_the_operand_is_unchanged_and_values_take_its_dtype():
    a = jnp.arange(4)
    b = a.at[1].set(2.7)
    assert np.asarray(a).tolist() == [0, 1, 2, 3] and np.asarray(b).tolist() == [0, 2, 2, 3]
    assert b.dtype == np.int32
    w = jnp.asarray(1.0).at[()].set(3.0)  # a weak-typed scalar stays weak
    assert float(w) == 3.0 and w.weak_type


def test_arrays_are_immutable():
    a = jnp.array([1, 2, 3])
    b = a
    b += 10
    assert np.asarray(a).tolist() == [1, 2, 3] and np.asarray(b).tolist() == [11, 12, 13]
    c = a
    c *= 2
    assert np.asarray(a).tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)"):
        a[0] = 10

    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match=r"immutable.*x\.at\[idx\]\.set\(y\)"):
        jitviz.jit(f)(np.zeros(3, np.float32))


def test_bad_mode_and_bad_values_are_named():
    x = jnp.zeros(3)
    with pytest.raises(ValueError, match="mode 'wrap'"):
        x.at[0].set(1.0, mode="wrap")
    with pytest.raises(ValueError, match=r"values of shape \(2,\).*indexed shape \(3,\)"):
        x.at[:].set(jnp.ones(2))


@pytest.mark.usefixtures("x64")  # finite differences need float64, which needs x64 (as JAX)
def test_gradients_flow_through_set_add_and_get():
    x = rng.standard_normal(5).astype(np.float64)

    def loss(x):
        y = x.at[1].set(3.0).at[jnp.array([0, 0, 4])].add(x[2])
        return jnp.sum(y.at[1:4].get() ** 2) + jnp.sum(jnp.sin(y))

    g = np.asarray(jitviz.grad(loss)(x))
    eps = 1e-6
    fd = [(loss(jnp.asarray(x + eps * e)) - loss(jnp.asarray(x - eps * e))) / (2 * eps)
          for e in np.eye(5)]
    np.testing.assert_allclose(g, np.asarray(fd, np.float64), rtol=1e-4, atol=1e-6)


def test_vmap_matches_a_loop():
    rows = rng.standard_normal((3, 4)).astype(np.float32)
    idx = np.array([0, 3, 9], np.int32)  # the last one is out of bounds: dropped
    got = jitviz.vmap(lambda r, i: r.at[i].add(10.0))(rows, idx)
    want = np.stack([np.asarray(r.at[i].add(10.0))
                     for r, i in zip(jnp.asarray(rows), idx)])
    np.testing.assert_allclose(np.asarray(got), want)
    assert np.asarray(got)[2].tolist() == rows[2].tolist()


# --- out of bounds and modes: real JAX is the reference -------------------------------------

OOB = [
    ("set", 7, None), ("set", -9, None), ("add", np.array([1, 9, -1, -8]), None),
    ("set", 7, "clip"), ("set", -9, "clip"), ("add", np.array([1, 9]), "drop"),
    ("set", np.array([2, 5]), "promise_in_bounds"), ("max", 6, "fill"),
]


@pytest.mark.parametrize("method,idx,mode", OOB)
def test_out_of_bounds_updates_follow_jax(method, idx, mode):
    jax = pytest.importorskip("jax")
    x = np.arange(5, dtype=np.float32)
    want = getattr(jax.numpy.asarray(x).at[idx], method)(np.float32(9), mode=mode)
    for name, run in _runners():
        got = run(lambda x: getattr(x.at[idx], method)(9.0, mode=mode), x)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_out_of_bounds_get_follows_jax(dtype):
    jax = pytest.importorskip("jax")
    x = np.arange(5).astype(dtype)
    idx = np.array([0, 7, -1, -9])
    for mode, kw in [(None, {}), ("clip", {}), ("fill", {}), ("fill", {"fill_value": 1})]:
        want = jax.numpy.asarray(x).at[idx].get(mode=mode, **kw)
        for name, run in _runners():
            got = run(lambda x: x.at[idx].get(mode=mode, **kw), x)
            assert got.dtype == want.dtype, (name, mode)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want),
                                          err_msg=f"{name} {mode} {kw}")


def test_a_concrete_array_indexed_by_a_traced_value():
    """`table[i]` with a traced `i`: the Array becomes a constant of the program (NumPy
    would ask the tracer for an integer and fail)."""
    from jitviz import lax
    table = jnp.arange(10.0) * 2
    assert float(jitviz.jit(lambda i: table[i])(3)) == 6.0
    assert float(jitviz.jit(lambda i: table[i])(-1)) == 18.0
    assert float(lax.fori_loop(0, 10, lambda i, x: x + table[i], 0.0)) == 90.0
    got = jitviz.jit(lambda i: table[jnp.array([i, i + 1])], backend="cpu")(3)
    assert np.asarray(got).tolist() == [6.0, 8.0]
    jaxpr = jitviz.make_jaxpr(lambda i: table[i])(3)
    assert len(jaxpr.consts) == 1 and "dynamic_slice" in str(jaxpr)
