"""`jitviz.linear_transpose`, checked against the matrix transpose and against real JAX."""
import importlib.util

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

HAS_JAX = importlib.util.find_spec("jax") is not None
A = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)


def test_the_transpose_of_a_matrix_product_is_the_transposed_matrix():
    transpose = jitviz.linear_transpose(lambda x: jnp.dot(A, x), jnp.ones(3))
    (ct,) = transpose(np.arange(4.0, dtype=np.float32))
    np.testing.assert_allclose(ct, A.T @ np.arange(4.0), rtol=1e-5)


def linear_functions(lib):
    """name -> (function, primals), written against `lib` (jitviz or jax) and its numpy."""
    np_ = lib.numpy
    return {
        "sum and scale": (lambda x, y: (2 * x + y.sum(), x @ np_.ones((3, 2))),
                          (np.ones(3, np.float32), np.ones((2, 2), np.float32))),
        "reshape, transpose, slice, concat": (
            lambda x: np_.concatenate([x.T.reshape(-1)[1:], -x[0]]),
            (np.ones((2, 3), np.float32),)),
        "select with a constant mask": (
            lambda x: np_.where(np_.arange(3) > 0, x, 0.0) * np_.arange(3.0),
            (np.ones(3, np.float32),)),
        "cumsum, gather, jit": (lib.jit(lambda x: np_.cumsum(x)[np_.array([2, 0])]),
                                (np.ones(3, np.float32),)),
        "an affine map drops its offset": (lambda x: 3 * x + 1.0, (np.ones(2, np.float32),)),
    }


LINEAR = linear_functions(jitviz)


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_functions_transpose_as_in_jax(name):
    fun, primals = LINEAR[name]
    out = jitviz.eval_shape(fun, *primals)
    rng = np.random.default_rng(1)
    cts = jitviz.tree.tree_map(lambda s: rng.normal(size=s.shape).astype(s.dtype), out)
    ours = jitviz.linear_transpose(fun, *primals)(cts)
    # <f(x), ct> == <x, f^T(ct)> for every x: the defining property of the transpose
    x = [rng.normal(size=np.shape(p)).astype(np.float32) for p in primals]
    lhs = sum(float(np.vdot(a, b)) for a, b in zip(jitviz.tree.tree_leaves(fun(*x)),
                                                    jitviz.tree.tree_leaves(cts)))
    if name != "an affine map drops its offset":
        rhs = sum(float(np.vdot(a, b)) for a, b in zip(x, ours))
        assert lhs == pytest.approx(rhs, rel=1e-4, abs=1e-4)
    if HAS_JAX:
        import jax
        theirs = jax.linear_transpose(linear_functions(jax)[name][0], *primals)(cts)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fun", [jnp.sin, lambda x: x * x, lambda x: jnp.exp(x) + x])
def test_a_nonlinear_function_is_refused_naming_the_operation(fun):
    with pytest.raises(NotImplementedError, match="Transpose rule .* for '(sin|mul|exp)'"):
        jitviz.linear_transpose(fun, 1.0)


def test_a_cotangent_of_another_type_is_jax_type_error():
    with pytest.raises(TypeError, match="cotangent type does not match function output"):
        jitviz.linear_transpose(lambda x: 2 * x, 1.0)(jnp.ones(2))


def test_primals_may_be_shape_dtype_structs():
    f_t = jitviz.linear_transpose(lambda x: lax.rev(x, (0,)),
                                  jitviz.ShapeDtypeStruct((3,), np.float32))
    np.testing.assert_array_equal(f_t(np.arange(3.0, dtype=np.float32))[0], [2.0, 1.0, 0.0])
