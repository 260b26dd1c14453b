"""Bad input gives clear errors that name the argument; odd-but-valid arrays (strided,
transposed, empty, read-only, big-endian, NaN/inf) give NumPy's results."""
from __future__ import annotations

import datetime

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp

from helpers import trace_and_check

rng = np.random.default_rng(3)
X = rng.standard_normal((4, 6)).astype(np.float32)


def body(x):
    return jnp.sin(x) * 2 + x.sum(0)


# --- arguments jitviz cannot trace --------------------------------------------------------------

@pytest.mark.parametrize("value,words", [
    ("abc", ["argument 'x'", "str", "Strings cannot be traced", "static"]),
    (b"abc", ["argument 'x'", "bytes"]),
    (np.array([1, "a"], dtype=object), ["argument 'x'", "object"]),
    (np.array(["a", "b"]), ["argument 'x'", "<U1"]),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), ["argument 'x'", "datetime64"]),
    (np.array([1], dtype="timedelta64[s]"), ["argument 'x'", "timedelta64"]),
    (datetime.date(2020, 1, 1), ["argument 'x'", "date"]),
    (len, ["argument 'x'", "Functions cannot be traced", "static"]),
    (lambda v: v, ["argument 'x'", "function"]),
    (object(), ["argument 'x'", "object"]),
    ({1, 2}, ["argument 'x'", "set"]),
])
def test_untraceable_argument_is_a_type_error_naming_it(value, words):
    with pytest.raises(TypeError) as e:
        jitviz.make_jaxpr(lambda x: x)(value)
    for w in words:
        assert w in str(e.value)


def test_bad_leaf_inside_a_pytree_is_named_by_its_path():
    with pytest.raises(TypeError, match=r"argument \"d\['b'\]\[1\]\"|argument 'd\['b'\]\[1\]'"):
        jitviz.make_jaxpr(lambda d: d["a"])({"a": 1.0, "b": (2.0, "oops")})


def test_bad_keyword_argument_is_named():
    with pytest.raises(TypeError, match="argument 'scale'"):
        jitviz.make_jaxpr(lambda x, scale: x * scale)(1.0, scale="big")


def test_callables_and_strings_are_fine_as_static_arguments():
    c = trace_and_check(lambda f, x: f(x), jnp.sin, X, static_argnums=(0,),
                        expected=np.sin(X))
    assert [e.primitive.name for e in c.jaxpr.eqns] == ["sin"]
    c = trace_and_check(lambda x, mode: x * 2 if mode == "double" else x, X, "double",
                        static_argnums=1, expected=X * 2)


def test_python_int_too_large_for_int32():
    with pytest.raises(OverflowError, match="too large"):
        jitviz.make_jaxpr(lambda x: x + 1)(2 ** 40)
    with pytest.raises(OverflowError):
        jitviz.make_jaxpr(lambda x: x + 2 ** 40)(1)


def test_large_python_int_is_fine_in_x64_mode(x64):
    c = trace_and_check(lambda x: x + 1, 2 ** 40, expected=np.int64(2 ** 40 + 1))
    assert c.in_avals[0].dtype == np.int64


# --- bad values given to jnp -----------------------------------------------------------------

@pytest.mark.parametrize("value,exc,match", [
    ("abc", TypeError, "strings"),
    (["a", "b"], TypeError, "strings"),
    ([[1, 2], [3]], ValueError, "ragged"),
    ([1, [2, 3]], ValueError, "ragged"),
    ([1, None], ValueError, "None is not a valid value"),  # JAX's class for None
    (np.array([1, "a"], dtype=object), TypeError, "object"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), TypeError, "datetime64"),
    ({"a": 1}, TypeError, "dict"),
])
def test_jnp_array_rejects_what_it_cannot_hold(value, exc, match):
    with pytest.raises(exc, match=match):
        jnp.array(value)
    with pytest.raises(exc, match=match):  # the same inside a trace
        jitviz.make_jaxpr(lambda x: x + jnp.array(value))(1.0)


def test_ragged_list_of_tracers_is_rejected():
    with pytest.raises(ValueError, match="ragged"):
        jitviz.make_jaxpr(lambda x: jnp.array([x, x[:2]]))(np.ones(3, np.float32))


def test_unsupported_requested_dtype():
    with pytest.raises(TypeError, match="datetime64"):
        jnp.zeros(3, dtype="datetime64[D]")
    with pytest.raises(TypeError, match="object"):
        jitviz.make_jaxpr(lambda x: x.astype(object))(1.0)


def test_closed_over_unsupported_constant_names_it():
    bad = np.array([1, "a"], dtype=object)
    with pytest.raises(TypeError, match="object"):
        jitviz.make_jaxpr(lambda x: x + bad)(1.0)


def test_eval_jaxpr_with_the_wrong_number_of_arguments():
    c = jitviz.make_jaxpr(lambda x, y: x + y)(1.0, 2.0)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        jitviz.eval_jaxpr(c.jaxpr, c.consts, 1.0)


# --- odd arrays give NumPy's answers --------------------------------------------------------

def _big_endian(a):
    return a.astype(a.dtype.newbyteorder(">"))


def _read_only(a):
    a = a.copy()
    a.setflags(write=False)
    return a


ODD = {
    "strided": X[:, ::2],
    "transposed": X.T,
    "reversed": X[::-1],
    "fortran": np.asfortranarray(X),
    "read-only": _read_only(X),
    "big-endian": _big_endian(X),
    "broadcast view": np.broadcast_to(X[:1], (4, 6)),
    "non-contiguous 3d": rng.standard_normal((3, 4, 5)).astype(np.float32)[:, 1:, ::2],
}


@pytest.mark.parametrize("name", list(ODD))
def test_odd_layouts_give_numpy_results(name):
    x = ODD[name]
    xn = x.astype(np.float32)  # native byte order, contiguous: the reference's input
    ref = np.sin(xn) * 2 + xn.sum(0)
    c = trace_and_check(body, x, expected=ref, rtol=1e-5, atol=1e-6)
    assert c.in_avals[0].dtype == np.float32  # big-endian data is computed natively
    # indexing and reductions on the odd layout too
    trace_and_check(lambda a: (a[1:, ::-1].T, a.max(1), a @ a.T), x,
                    expected=(xn[1:, ::-1].T, xn.max(1), xn @ xn.T), rtol=1e-5, atol=1e-5,
                    eager=False)


def test_big_endian_integers_and_closed_over_constants():
    xi = _big_endian(np.arange(6, dtype=np.int32))
    trace_and_check(lambda a: a * 3 + 1, xi, expected=np.arange(6, dtype=np.int32) * 3 + 1)
    const = _big_endian(np.linspace(0, 1, 6, dtype=np.float32))
    ro = _read_only(np.ones(6, np.float32))
    trace_and_check(lambda a: a + const - ro, X[0], expected=X[0] + const - 1)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_zero_size_arrays(shape):
    x = np.zeros(shape, np.float32)
    trace_and_check(lambda a: (jnp.exp(a) + 1, a.sum(), a.sum(0), a.prod(), jnp.mean(a, 0)),
                    x, expected=(np.exp(x) + 1, x.sum(), x.sum(0), x.prod(),
                                 np.full(x.shape[1:], np.nan, np.float32)), eager=False)
    trace_and_check(lambda a: a.reshape(-1)[::-1], x, expected=x.reshape(-1)[::-1])


def test_max_of_an_empty_axis_is_an_error_as_in_numpy():
    with pytest.raises(ValueError, match="zero-size"):
        jitviz.make_jaxpr(lambda a: a.max())(np.zeros((0,), np.float32))


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e38, -1e-45, 3.0], np.float32)


@pytest.mark.parametrize("fn", [
    lambda a: a + 1, lambda a: a * a, lambda a: jnp.exp(a), lambda a: jnp.log(jnp.abs(a)),
    lambda a: jnp.sqrt(a), lambda a: 1 / a, lambda a: jnp.maximum(a, 0.0),
    lambda a: jnp.minimum(a, 1.0), lambda a: jnp.sign(a), lambda a: jnp.floor(a),
    lambda a: jnp.isnan(a), lambda a: jnp.isinf(a), lambda a: jnp.isfinite(a),
    lambda a: jnp.where(jnp.isnan(a), 0.0, a), lambda a: a.astype(jnp.int32),
    lambda a: jnp.tanh(a), lambda a: a > 0, lambda a: a == a, lambda a: jnp.clip(a, -1, 1),
], ids=range(19))
def test_nan_and_inf_propagate_as_in_numpy(fn):
    with np.errstate(all="ignore"):
        ref = fn(jnp.asarray(SPECIALS))  # eager: jnp functions, and NumPy's own operators
    c = trace_and_check(fn, SPECIALS, eager=False)
    out = jitviz.eval_jaxpr(c.jaxpr, c.consts, SPECIALS)[0]
    assert out.dtype == np.asarray(ref).dtype
    if out.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        np.testing.assert_allclose(out, ref, rtol=1e-6, equal_nan=True)
    elif out.dtype.kind != "i":  # float -> int of NaN/inf is backend-defined (XLA: 0/clamp)
        np.testing.assert_array_equal(out, ref)


def test_nan_and_inf_reductions():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    trace_and_check(lambda a: (a.sum(), a.max(), a.min(), a.mean()), x,
                    expected=(np.float32(np.nan),) * 4)
    y = np.array([1.0, np.inf, -np.inf], np.float32)
    trace_and_check(lambda a: (a.max(), a.min(), a.sum()), y, eager=False,
                    expected=(np.float32(np.inf), np.float32(-np.inf), np.float32(np.nan)))


def test_python_float_literals_too_big_for_float32_become_inf():
    c = trace_and_check(lambda a: a * 1e100, 1.0, expected=np.float32(np.inf), eager=False)
    assert str(c) == "{ lambda ; a:f32[]. let b:f32[] = mul a 1e+100:f32[] in (b,) }"
