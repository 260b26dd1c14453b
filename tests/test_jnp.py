"""`jitviz.numpy` against NumPy: every function the issue lists, run eagerly and traced
(make_jaxpr + typecheck + eval_jaxpr), plus plain NumPy called on traced values, JAX's
32-bit defaults and weak types, and 64-bit mode."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.errors import UnsupportedOperationError

from helpers import assert_close, trace_and_check, x64_enabled
from jitviz.tree import tree_flatten

f32, i32 = np.float32, np.int32
rng = np.random.default_rng(1)
X = rng.uniform(-2, 2, (3, 4)).astype(f32)
Y = rng.uniform(-2, 2, (3, 4)).astype(f32)
POS = rng.uniform(0.5, 3, (3, 4)).astype(f32)
UNIT = rng.uniform(-0.9, 0.9, (3, 4)).astype(f32)
XI = rng.integers(-5, 6, (3, 4)).astype(i32)
YI = rng.integers(1, 4, (3, 4)).astype(i32)
V = rng.uniform(-2, 2, (4,)).astype(f32)
X234 = rng.uniform(-2, 2, (2, 3, 4)).astype(f32)


def check(jfn, nfn, *args, rtol=1e-6, atol=1e-6, dtype=None, eager=True):
    """jfn eagerly (on jitviz Arrays) and traced equals nfn (NumPy); `dtype` overrides the
    expected dtype where JAX's rules differ from NumPy's (the mean of int32 is float32).
    `eager=False` for operators and methods: on concrete jitviz Arrays (NumPy arrays) those
    are NumPy's own, so only the traced run is jitviz's."""
    expected = nfn(*args)
    if dtype is not None:
        expected = np.asarray(expected).astype(dtype)
    if eager:
        jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        _compare_tree(jfn(*jargs), expected, rtol, atol)
    trace_and_check(jfn, *args, expected=expected, rtol=rtol, atol=atol, eager=False)


def _compare_tree(actual, expected, rtol, atol):
    a, ta = tree_flatten(actual)
    e, te = tree_flatten(expected)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        assert_close(x, y, rtol, atol)


# --- elementwise ------------------------------------------------------------------------------

UNARY = [
    ("negative", X), ("positive", X), ("abs", X), ("abs", XI), ("absolute", X), ("sign", X),
    ("sign", XI), ("floor", X), ("ceil", X), ("round", X * 3), ("rint", X * 3),
    ("trunc", X * 3), ("exp", X), ("exp2", X), ("expm1", X), ("log", POS), ("log2", POS),
    ("log10", POS), ("log1p", POS), ("sqrt", POS), ("cbrt", X), ("square", X), ("square", XI),
    ("reciprocal", POS), ("sin", X), ("cos", X), ("tan", UNIT), ("arcsin", UNIT),
    ("arccos", UNIT), ("arctan", X), ("sinh", X), ("cosh", X), ("tanh", X),
    ("arcsinh", X), ("arccosh", POS + 1), ("arctanh", UNIT), ("deg2rad", X), ("rad2deg", X),
    ("isnan", np.array([1.0, np.nan, np.inf], f32)), ("isinf", np.array([1.0, np.nan, -np.inf], f32)),
    ("isfinite", np.array([1.0, np.nan, np.inf], f32)), ("signbit", X),
    ("logical_not", XI), ("invert", XI), ("bitwise_not", XI > 0),
]


@pytest.mark.parametrize("name,x", UNARY, ids=[f"{n}-{x.dtype}" for n, x in UNARY])
def test_unary(name, x):
    check(getattr(jnp, name), getattr(np, name), x, rtol=2e-6)


def test_unary_on_ints_promotes_to_float32():
    check(jnp.sqrt, np.sqrt, np.abs(XI), dtype=f32)
    check(jnp.sin, np.sin, XI, dtype=f32)
    check(jnp.exp, lambda a: np.exp(a.astype(f32)), XI > 0)


BINARY = [
    ("add", X, Y), ("add", XI, YI), ("subtract", X, Y), ("multiply", X, Y), ("divide", X, POS),
    ("true_divide", X, POS), ("floor_divide", X, POS), ("floor_divide", XI, YI),
    ("floor_divide", XI, -YI), ("remainder", X, POS), ("remainder", XI, YI),
    ("remainder", -XI, YI), ("mod", XI, -YI), ("fmod", XI, YI), ("power", POS, Y),
    ("maximum", X, Y), ("minimum", X, Y), ("arctan2", X, Y), ("hypot", X, Y),
    ("logaddexp", X, Y), ("copysign", X, Y),
    ("equal", XI, YI), ("not_equal", X, Y), ("less", X, Y), ("less_equal", XI, YI),
    ("greater", X, Y), ("greater_equal", XI, YI),
    ("logical_and", X > 0, Y > 0), ("logical_or", X > 0, Y > 0), ("logical_xor", X > 0, Y > 0),
    ("bitwise_and", XI, YI), ("bitwise_or", XI, YI), ("bitwise_xor", XI, YI),
    ("left_shift", XI, YI), ("right_shift", XI, YI),
    ("add", X, V), ("multiply", X[:, :1], V), ("subtract", X, np.float32(2)),  # broadcasting
    ("add", X > 0, Y > 0), ("multiply", X > 0, Y > 0),  # on booleans: or / and
]


@pytest.mark.parametrize("name,x,y", BINARY,
                         ids=[f"{n}-{x.dtype}-{x.shape}-{y.shape}" for n, x, y in BINARY])
def test_binary(name, x, y):
    check(getattr(jnp, name), getattr(np, name), x, y, rtol=2e-6)


def test_operators_match_numpy():  # traced; on concrete Arrays operators are NumPy's
    ops = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a ** 2, lambda a, b: -a,
           lambda a, b: abs(a), lambda a, b: 2 - a, lambda a, b: 1 / b, lambda a, b: 3 % b,
           lambda a, b: a < b, lambda a, b: a >= 1, lambda a, b: (a > 0) & (b > 0),
           lambda a, b: (a > 0) | (b > 0), lambda a, b: ~(a > 0), lambda a, b: a @ b.T]
    for op in ops:
        check(op, op, X, POS, rtol=2e-6, eager=False)


def test_python_scalars_take_the_array_dtype():
    for dt in (np.int8, np.uint8, np.int16, np.float16, np.int64, np.float64):
        x = np.ones(3, dt)
        with x64_enabled():  # 64-bit arrays exist with x64, as in JAX
            c = trace_and_check(lambda a: a + 1, x, expected=x + dt(1))
        assert c.out_avals[0].dtype == dt
    check(lambda a: a * 2.5, lambda a: a * np.float32(2.5), X, eager=False)
    # an int array meets a Python float: float32 (NumPy would say float64)
    check(lambda a: a + 1.5, lambda a: (a + 1.5).astype(f32), XI, eager=False)
    check(lambda a: jnp.add(a, 1.5), lambda a: (a + 1.5).astype(f32), XI)


def test_clip_where_and_friends():
    check(lambda a: jnp.clip(a, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), X)
    check(lambda a: jnp.clip(a, max=0.5), lambda a: np.clip(a, None, 0.5), X)
    check(lambda a: a.clip(-1, 1), lambda a: a.clip(-1, 1), X)
    check(lambda a, b: jnp.where(a > b, a, b), lambda a, b: np.where(a > b, a, b), X, Y)
    check(lambda a: jnp.where(a > 0, a, 0.0), lambda a: np.where(a > 0, a, f32(0)), X)
    check(lambda a, v: jnp.where(a > 0, a, v), lambda a, v: np.where(a > 0, a, v), X, V)
    check(lambda a: jnp.where(True, a, 1), lambda a: a, X)


# --- creation ---------------------------------------------------------------------------------

def test_creation_defaults_are_32_bit():
    assert jnp.array([1, 2, 3]).dtype == i32
    assert jnp.array([1.0, 2.0]).dtype == f32
    assert jnp.array([1, 2.5]).dtype == f32
    assert jnp.array([1 + 2j]).dtype == np.complex64
    assert jnp.array([True, False]).dtype == np.bool_
    assert jnp.asarray(3).dtype == i32 and jnp.asarray(3.0).dtype == f32
    assert jnp.zeros(3).dtype == f32 and jnp.ones((2, 2), int).dtype == i32
    assert jnp.arange(4).dtype == i32 and jnp.arange(4.0).dtype == f32
    assert jnp.linspace(0, 1, 5).dtype == f32 and jnp.eye(2).dtype == f32
    assert jnp.array([[1, 2], [3, 4]]).shape == (2, 2)


def test_numpy_64_bit_inputs_are_32_bit_without_x64():
    """As in JAX; with x64, or jitviz's keep_float64 switch, they keep their dtype."""
    assert jnp.array(np.arange(3, dtype=np.int64)).dtype == i32
    assert jnp.asarray(np.ones(2)).dtype == f32
    c = trace_and_check(lambda x: x * 2.0 + np.float32(1), np.ones(3, np.float32))
    assert jitviz.make_jaxpr(lambda x: x * 2.0)(np.ones(3)).in_avals[0].dtype == f32
    for switch in ("enable_x64", "keep_float64"):
        jitviz.config.update(switch, True)
        try:
            assert jnp.array(np.arange(3, dtype=np.int64)).dtype == np.int64
            assert jnp.asarray(np.ones(2)).dtype == np.float64
            c = trace_and_check(lambda x: x * 2.0 + np.float32(1), np.ones(3))
            assert c.in_avals[0].dtype == np.float64 and c.out_avals[0].dtype == np.float64
        finally:
            jitviz.config.update(switch, False)


def test_weak_types():
    assert jnp.array(2.0).weak_type and jnp.array(2).weak_type
    assert not jnp.array(True).weak_type
    assert not jnp.array([2.0]).weak_type and not jnp.array(2.0, f32).weak_type
    assert jnp.full((2,), 3.0).weak_type
    assert not jnp.zeros(2).weak_type and not jnp.ones(2).weak_type
    assert jnp.sin(2.0).weak_type and jnp.sin(2.0).dtype == f32
    assert not jnp.sum(jnp.array(2.0)).weak_type  # reductions are strong
    c = jitviz.make_jaxpr(lambda x: x)(3.0)
    assert c.in_avals[0] == jitviz.ShapedArray((), f32, True)
    c = jitviz.make_jaxpr(lambda x: x * np.float32(2))(3.0)
    assert not c.out_avals[0].weak_type


PROMOTIONS = [  # (x, y, JAX's result dtype, weak)
    (np.int8(1), 1, np.int8, False), (np.int8(1), 1.0, f32, True),
    (np.uint8(1), np.int8(1), np.int16, False), (np.int32(1), np.float16(1), np.float16, False),
    (np.float16(1), 2.0, np.float16, False), (np.uint32(1), np.int32(1), i32, False),
    (np.bool_(True), 1, i32, True), (np.bool_(True), np.bool_(True), np.bool_, False),
    (1, 2, i32, True), (1, 2.0, f32, True), (2.0, 1j, np.complex64, True),
    # without x64 JAX makes 64-bit NumPy values 32-bit before promoting them
    (np.float32(1), np.float64(1), f32, False), (np.int64(1), 1.0, f32, True),
]


@pytest.mark.parametrize("x,y,dt,weak", PROMOTIONS)
def test_promotion_lattice(x, y, dt, weak):
    out = jnp.add(jnp.asarray(x) if not isinstance(x, (int, float)) else x, y)
    assert out.dtype == dt and out.weak_type == weak
    c = jitviz.make_jaxpr(lambda a, b: a + b)(x, y)
    jitviz.typecheck_jaxpr(c)
    assert c.out_avals[0].dtype == dt and c.out_avals[0].weak_type == weak


def test_x64_mode(x64):
    assert jnp.array([1, 2, 3]).dtype == np.int64
    assert jnp.array(1.0).dtype == np.float64 and jnp.zeros(2).dtype == np.float64
    c = trace_and_check(lambda x: x * 2, 1.0)
    assert str(c) == "{ lambda ; a:f64[]. let b:f64[] = mul a 2.0:f64[] in (b,) }"
    c = trace_and_check(lambda x: jnp.arange(3) + x, 1)
    assert c.out_avals[0].dtype == np.int64


def test_x64_fixture_restored():
    assert jitviz.config.enable_x64 is False
    assert jnp.array([1]).dtype == i32


CREATION = [
    (lambda: jnp.zeros((2, 3)), lambda: np.zeros((2, 3), f32)),
    (lambda: jnp.ones(4, dtype=i32), lambda: np.ones(4, i32)),
    (lambda: jnp.full((2, 2), 7), lambda: np.full((2, 2), 7, i32)),
    (lambda: jnp.full((3,), 2.5, dtype=np.float16), lambda: np.full(3, 2.5, np.float16)),
    (lambda: jnp.arange(5), lambda: np.arange(5, dtype=i32)),
    (lambda: jnp.arange(2, 9, 3), lambda: np.arange(2, 9, 3, dtype=i32)),
    (lambda: jnp.arange(5, 0, -2), lambda: np.arange(5, 0, -2, dtype=i32)),
    (lambda: jnp.arange(0.0, 1.0, 0.25), lambda: np.arange(0, 1, 0.25, dtype=f32)),
    (lambda: jnp.linspace(0.0, 1.0, 5), lambda: np.linspace(0, 1, 5, dtype=f32)),
    (lambda: jnp.linspace(2.0, 3.0, 4, endpoint=False),
     lambda: np.linspace(2, 3, 4, endpoint=False, dtype=f32)),
    (lambda: jnp.eye(3), lambda: np.eye(3, dtype=f32)),
    (lambda: jnp.eye(2, 4, k=1, dtype=i32), lambda: np.eye(2, 4, k=1, dtype=i32)),
    (lambda: jnp.array([[1, 2], [3, 4]]), lambda: np.array([[1, 2], [3, 4]], i32)),
]


@pytest.mark.parametrize("jf,nf", CREATION)
def test_creation_eager_and_inside_a_trace(jf, nf):
    expected = nf()
    assert_close(jf(), expected)
    # inside a trace the same values come out (as equations or constants)
    trace_and_check(lambda x: (jf(), x), np.float32(0), expected=(expected, np.float32(0)))


def test_like_functions():
    check(jnp.zeros_like, np.zeros_like, X)
    check(jnp.ones_like, np.ones_like, XI)
    check(lambda a: jnp.full_like(a, 3), lambda a: np.full_like(a, 3), X)
    check(lambda a: jnp.zeros_like(a, dtype=i32), lambda a: np.zeros_like(a, dtype=i32), X)


def test_array_of_traced_values():
    check(lambda a, b: jnp.array([a, b]), lambda a, b: np.array([a, b]), V, V * 2)
    check(lambda a: jnp.array([[a[0], 1.0], [2.0, a[1]]]),
          lambda a: np.array([[a[0], 1], [2, a[1]]], f32), V)
    check(lambda a: jnp.asarray(a, dtype=i32), lambda a: a.astype(i32), X)
    check(lambda a: a.astype(jnp.float16), lambda a: a.astype(np.float16), X)
    check(lambda a: jnp.float32(a), lambda a: a.astype(f32), XI)


# --- reductions -------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any",
              "all"]
AXES = [None, 0, 1, -1, (0, 1)]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        return
    x = X > 0 if name in ("any", "all") else X
    nfn = getattr(np, name)
    dtype = i32 if name in ("argmax", "argmin") else None
    check(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=keepdims),
          lambda a: nfn(a, axis=axis, keepdims=keepdims), x, rtol=1e-5, atol=1e-6,
          dtype=dtype)


def test_reduction_dtypes_follow_jax():
    check(jnp.sum, np.sum, XI, dtype=i32)  # int32 stays int32 (NumPy says int64)
    check(jnp.sum, lambda a: np.sum(a).astype(i32), X > 0)  # bools count as int32
    check(jnp.mean, np.mean, XI, dtype=f32)  # the mean of ints is float32 (not float64)
    check(lambda a: jnp.var(a, ddof=1), lambda a: np.var(a, ddof=1), X, rtol=1e-5)
    check(lambda a: jnp.std(a, axis=0, ddof=1), lambda a: np.std(a, axis=0, ddof=1), X,
          rtol=1e-5)
    check(lambda a: jnp.sum(a, dtype=np.float16), lambda a: np.sum(a, dtype=np.float16), XI)


def test_reduction_methods_and_numpy_functions_on_tracers():
    methods = [(lambda a: a.sum(), None), (lambda a: a.mean(0), None),
               (lambda a: a.max(axis=1, keepdims=True), None), (lambda a: a.argmin(), i32),
               (lambda a: a.std(1), None), (lambda a: a.cumsum(1), None),
               (lambda a: a.prod(axis=0), None), (lambda a: (a > 0).any(), None)]
    for fn, dt in methods:
        check(fn, fn, X, rtol=1e-5, dtype=dt, eager=False)


# --- NumPy called on traced values (NEP 13/18) ---------------------------------------------

NUMPY_ON_TRACERS = [
    lambda a: np.sin(a), lambda a: np.sum(a), lambda a: np.sum(a, axis=0),
    lambda a: np.mean(a, axis=1), lambda a: np.exp(a) + np.cos(a), lambda a: np.add(a, 1),
    lambda a: np.maximum(a, 0), lambda a: np.where(a > 0, a, 0.0),
    lambda a: np.concatenate([a, a]), lambda a: np.reshape(a, (4, 3)),
    lambda a: np.transpose(a), lambda a: np.dot(a, a.T), lambda a: np.max(a),
    lambda a: np.abs(a) ** 2, lambda a: np.sqrt(np.abs(a)), lambda a: np.add.reduce(a, 0),
    lambda a: np.stack([a, a], axis=1), lambda a: np.clip(a, -1, 1),
    lambda a: np.expand_dims(a, 0), lambda a: np.matmul(a, a.T), lambda a: np.tanh(a).T,
]


@pytest.mark.parametrize("fn", NUMPY_ON_TRACERS, ids=range(len(NUMPY_ON_TRACERS)))
def test_plain_numpy_on_tracers_is_traced(fn):
    closed = trace_and_check(fn, X, expected=fn(X), rtol=2e-6, atol=1e-5, eager=False)
    assert closed.jaxpr.eqns, "NumPy on a tracer must record equations"


@pytest.mark.parametrize("fn,name", [
    (lambda a: np.linalg.svd(a), "numpy.linalg.svd"),
    (lambda a: np.real_if_close(a), "numpy.real_if_close"),
    (lambda a: np.fft.fft(a), "numpy.fft.fft"),
    (lambda a: np.sin(a, out=a), "numpy.sin(..., out=...)"),
])
def test_unsupported_numpy_function_names_the_function_and_line(fn, name):
    with pytest.raises(UnsupportedOperationError) as e:
        jitviz.make_jaxpr(fn)(X)
    msg = str(e.value)
    assert name in msg
    assert f"{__file__}:" in msg  # the user's line (this file), not a jitviz frame
    assert isinstance(e.value, TypeError)


# --- products ---------------------------------------------------------------------------------

PRODUCTS = [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
            ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
            ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,))]


@pytest.mark.parametrize("sa,sb", PRODUCTS, ids=str)
def test_matmul(sa, sb):
    a = rng.uniform(-1, 1, sa).astype(f32)
    b = rng.uniform(-1, 1, sb).astype(f32)
    check(jnp.matmul, np.matmul, a, b, rtol=1e-5, atol=1e-6)
    check(lambda x, y: x @ y, lambda x, y: x @ y, a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
                                   ((3,), ()), ((3, 4), (4,))], ids=str)
def test_dot(sa, sb):
    a = rng.uniform(-1, 1, sa).astype(f32)
    b = np.asarray(rng.uniform(-1, 1, sb)).astype(f32)
    check(jnp.dot, np.dot, a, b, rtol=1e-5, atol=1e-6)


def test_outer_inner_and_int_products():
    check(jnp.outer, np.outer, V, V[:3])
    check(jnp.outer, np.outer, X, V)  # outer ravels its inputs
    check(jnp.inner, np.inner, X, Y, rtol=1e-5)
    check(jnp.dot, np.dot, XI, YI.T)
    check(jnp.matmul, lambda a, b: np.matmul(a, b.astype(f32)), X, YI.T.copy(), rtol=1e-5)


def test_matmul_errors():
    with pytest.raises(ValueError, match="ndim at least 1"):
        jnp.matmul(np.float32(1), V)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.matmul(np.ones((2, 3, 4), f32), np.ones((3, 4, 5), f32))


# --- shapes ----------------------------------------------------------------------------------

SHAPES = [
    (lambda a: a.reshape(4, 3), None), (lambda a: a.reshape((2, -1)), None),
    (lambda a: jnp.reshape(a, (12,)), lambda a: np.reshape(a, (12,))),
    (lambda a: a.reshape(-1), None), (lambda a: jnp.ravel(a), lambda a: np.ravel(a)),
    (lambda a: a.ravel(), None), (lambda a: a.flatten(), None), (lambda a: a.T, None),
    (lambda a: a.transpose(), None), (lambda a: jnp.transpose(a), lambda a: np.transpose(a)),
    (lambda a: a.transpose(1, 0), None),
    (lambda a: jnp.swapaxes(a, 0, 1), lambda a: np.swapaxes(a, 0, 1)),
    (lambda a: a.swapaxes(-1, 0), None),
    (lambda a: jnp.expand_dims(a, 0), lambda a: np.expand_dims(a, 0)),
    (lambda a: jnp.expand_dims(a, -1), lambda a: np.expand_dims(a, -1)),
    (lambda a: jnp.expand_dims(a, (0, 2)), lambda a: np.expand_dims(a, (0, 2))),
    (lambda a: jnp.squeeze(a[:1]), lambda a: np.squeeze(a[:1])),
    (lambda a: jnp.squeeze(a[:, :1], axis=1), lambda a: np.squeeze(a[:, :1], axis=1)),
    (lambda a: a[None].squeeze(0), None),
    (lambda a: jnp.broadcast_to(a, (2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4))),
    (lambda a: jnp.broadcast_to(a[:1], (5, 4)), lambda a: np.broadcast_to(a[:1], (5, 4))),
    (lambda a: jnp.concatenate([a, a]), lambda a: np.concatenate([a, a])),
    (lambda a: jnp.concatenate([a, a[:, :2]], axis=1),
     lambda a: np.concatenate([a, a[:, :2]], axis=1)),
    (lambda a: jnp.concatenate([a, a], axis=None), lambda a: np.concatenate([a, a], axis=None)),
    (lambda a: jnp.stack([a, a]), lambda a: np.stack([a, a])),
    (lambda a: jnp.stack([a, 2 * a], axis=-1), lambda a: np.stack([a, 2 * a], axis=-1)),
    (lambda a: jnp.stack([a[0, 0], a[1, 1]]), lambda a: np.stack([a[0, 0], a[1, 1]])),
]


@pytest.mark.parametrize("jf,nf", SHAPES, ids=range(len(SHAPES)))
def test_shape_functions(jf, nf):
    check(jf, nf or jf, X)


def test_stack_and_concatenate_promote():
    check(lambda a, b: jnp.concatenate([a, b]), lambda a, b: np.concatenate([a, b]).astype(f32),
          V, np.arange(3, dtype=i32))
    check(lambda a, b: jnp.stack([a, b]), lambda a, b: np.stack([a, b]).astype(f32),
          V, np.arange(4, dtype=i32))


def test_shape_errors():
    with pytest.raises(TypeError, match="cannot reshape"):  # JAX's class
        jnp.reshape(X, (5, 3))
    with pytest.raises(TypeError, match="one unknown axis size"):  # JAX's class
        jnp.reshape(X, (-1, -1))
    with pytest.raises(ValueError, match="squeeze"):
        jnp.squeeze(X, axis=0)
    with pytest.raises(ValueError, match="broadcast"):
        jnp.broadcast_to(X, (3, 5))
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([X, V])
    with pytest.raises(np.exceptions.AxisError):
        jnp.sum(X, axis=2)


# --- indexing --------------------------------------------------------------------------------

INDICES = [
    1, -1, (1, 2), (-1, -2), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
    slice(3, 0, -2), slice(-2, None), (slice(None), 1), (slice(None), slice(None, None, -2)),
    (Ellipsis, 1), (1, Ellipsis), Ellipsis, None, (None, 1), (slice(None), None, 2),
    (None, Ellipsis, None), (0, None, slice(1, 3)), slice(10, 20), slice(-10, 2),
    np.array([0, 2, 2]), np.array([-1, 0]), (np.array([0, 2]), np.array([1, 3])),
    (slice(None), np.array([3, 0])), (np.array([[0], [2]]), np.array([1, 3])),
    (1, np.array([0, 3])), [0, 2], np.array([True, False, True]),
    (np.array([True, False, True]), slice(1, 3)), np.int32(2), np.int64(-1),
]


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i).replace(" ", "") for i in INDICES])
def test_static_indexing(idx):
    check(lambda a: a[idx], lambda a: a[idx], X)
    check(lambda a: a[idx], lambda a: a[idx], XI)


@pytest.mark.parametrize("idx", [(0, 1), (slice(None), None, 1), (Ellipsis, 2), (1, 2, 3),
                                 (slice(None, None, -1), 0, slice(1, None, 2)),
                                 (np.array([1, 0]), slice(None), np.array([3, 3]))],
                         ids=repr)
def test_static_indexing_3d(idx):
    check(lambda a: a[idx], lambda a: a[idx], X234)


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_traced_scalar_index(i):
    check(lambda a, j: a[j], lambda a, j: a[j], X, i)
    check(lambda a, j: a[j], lambda a, j: a[j], X, np.int32(i))
    check(lambda a, j: a[:, j], lambda a, j: a[:, j], X, np.int32(i))
    check(lambda a, j: a[1, j], lambda a, j: a[1, j], X, np.int8(i))


def test_traced_integer_array_index():
    idx = np.array([2, 0, -1], i32)
    check(lambda a, j: a[j], lambda a, j: a[j], X, idx)
    check(lambda a, j: a[:, j], lambda a, j: a[:, j], X, idx)
    check(lambda a, j: jnp.take(a, j), lambda a, j: np.take(a, j), X, idx)
    check(lambda a, j: a.take(j, axis=1), lambda a, j: a.take(j, axis=1), X, idx)


def test_indexing_errors():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jitviz.make_jaxpr(lambda a: a[0])(np.zeros((0, 4), f32))  # JAX: nothing to clamp to
    with pytest.raises(IndexError, match="too many indices"):
        jitviz.make_jaxpr(lambda a: a[0, 0, 0])(X)
    with pytest.raises(TypeError, match="integer or boolean"):  # JAX's class
        jitviz.make_jaxpr(lambda a: a[np.array([0.5])])(X)
    with pytest.raises(IndexError, match="static"):
        jitviz.make_jaxpr(lambda a, n: a[:n])(X, 2)
    with pytest.raises(TypeError, match="immutable"):
        jitviz.make_jaxpr(lambda a: a.__setitem__(0, 1.0))(X)


def test_iterating_and_len_of_a_tracer():
    check(lambda a: [row.sum() for row in a], lambda a: [row.sum() for row in a], X, rtol=1e-5)
    check(lambda a: a * len(a), lambda a: a * np.float32(len(a)), X)
    with pytest.raises(TypeError, match="0-d"):
        jitviz.make_jaxpr(lambda a: list(a))(np.float32(1))
