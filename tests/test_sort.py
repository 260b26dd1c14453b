"""lax.sort and jnp.sort/argsort: NumPy's stable order (NaN last, -0.0 equal to 0.0, which is
also JAX's) on every backend, the rules of the primitive (jvp, vjp, batching), JAX's API."""
import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

RNG = np.random.default_rng(7)
BACKENDS = ["interpret", "cpu"]


def _data(shape, dtype):
    x = RNG.integers(-3, 4, size=shape).astype(dtype)  # many ties: stability shows
    if np.dtype(dtype).kind == "f":
        x.flat[::5] = np.nan
        x.flat[1::7] = -0.0
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort_match_numpy_stable(backend, dtype, axis):
    x = _data((7, 9), dtype)
    sort = jitviz.jit(lambda x: jnp.sort(x, axis=axis), backend=backend)
    argsort = jitviz.jit(lambda x: jnp.argsort(x, axis=axis), backend=backend)
    np.testing.assert_array_equal(sort(x), np.sort(x, axis=axis, kind="stable"))
    np.testing.assert_array_equal(argsort(x), np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_descending_keeps_equal_keys_in_order(backend):
    x = np.array([2.0, -0.0, 5.0, 0.0, np.nan, 2.0], np.float32)
    out = jitviz.jit(lambda x: jnp.argsort(x, descending=True), backend=backend)(x)
    assert out.tolist() == [4, 2, 0, 5, 1, 3]  # NaN first; 2.0s and the zeros in order
    values = jitviz.jit(lambda x: jnp.sort(x, descending=True), backend=backend)(x)
    np.testing.assert_array_equal(values, np.sort(x)[::-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_sort_key_val_moves_values_with_their_keys(backend):
    k = np.array([[3, 1, 2], [0, 0, -1]], np.int32)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    keys, vals = jitviz.jit(lambda k, v: lax.sort_key_val(k, v), backend=backend)(k, v)
    assert keys.tolist() == [[1, 2, 3], [-1, 0, 0]]
    assert vals.tolist() == [[1.0, 2.0, 0.0], [5.0, 3.0, 4.0]]


def test_sort_prints_as_jax():
    x = np.ones((2, 3), np.float32)
    assert str(jitviz.make_jaxpr(lambda x: lax.sort(x, 0))(x)) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] = sort[dimension=0 is_stable=True "
        "num_keys=1] a\n  in (b,) }")


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_goes_back_through_the_permutation(backend):
    x = np.array([[0.3, -1.0, 2.0, 0.5], [1.0, 0.0, -2.0, 4.0]], np.float32)
    w = np.arange(1, 5, dtype=np.float32)
    g = jitviz.jit(jitviz.grad(lambda x: (jnp.sort(x, axis=1) * w).sum()), backend=backend)(x)
    expected = np.zeros_like(x)
    np.put_along_axis(expected, np.argsort(x, 1), np.broadcast_to(w, x.shape), 1)
    np.testing.assert_array_equal(g, expected)
    _, tangent = jitviz.jvp(lambda x: jnp.sort(x, axis=1), (x,), (np.ones_like(x) * w,))
    np.testing.assert_array_equal(tangent, np.take_along_axis(np.broadcast_to(w, x.shape),
                                                              np.argsort(x, 1), 1))


def test_vmap_sorts_each_example():
    x = _data((4, 5, 6), np.float32)
    out = jitviz.vmap(lambda row: jnp.sort(row, axis=0), in_axes=1)(x)
    np.testing.assert_array_equal(out, np.moveaxis(np.sort(x, axis=0), 1, 0))
    keys, vals = jitviz.vmap(lax.sort_key_val, in_axes=(0, None))(
        np.array([[2, 1], [1, 2]], np.int32), np.array([10.0, 20.0], np.float32))
    assert vals.tolist() == [[20.0, 10.0], [10.0, 20.0]]


def _complex_data(shape, dtype):
    """Ties in the real parts (the imaginary parts decide), NaNs in either part, signed
    zeros."""
    x = (RNG.integers(-2, 3, size=shape) + 1j * RNG.integers(-2, 3, size=shape)).astype(dtype)
    x.flat[::6] = complex(np.nan, 1.0)
    x.flat[1::9] = complex(1.0, np.nan)
    x.flat[2::11] = complex(np.nan, np.nan)
    x.flat[3::13] = complex(-0.0, 2.0)
    return x


def _lexicographic_argsort(x, axis):
    """JAX's order of complex numbers: by the real parts, then the imaginary parts, each with
    NaN last (NumPy's np.sort differs: it puts 1+nanj after 2+2j)."""
    if axis is None:
        x, axis = x.ravel(), 0
    return np.lexsort((x.imag, x.real), axis=axis)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_complex_keys_sort_by_real_then_imaginary_part(backend, dtype, axis):
    x = _complex_data((7, 9), dtype)
    order = _lexicographic_argsort(x, axis)
    sort = jitviz.jit(lambda x: jnp.sort(x, axis=axis), backend=backend)
    argsort = jitviz.jit(lambda x: jnp.argsort(x, axis=axis), backend=backend)
    flat = x.ravel() if axis is None else x
    np.testing.assert_array_equal(sort(x), np.take_along_axis(flat, order, axis or 0))
    np.testing.assert_array_equal(argsort(x), order)
    keys, vals = jitviz.jit(lax.sort_key_val, backend=backend)(x[0], np.arange(9, dtype=np.int32))
    np.testing.assert_array_equal(vals, _lexicographic_argsort(x[0], 0))
    want = x[0][np.lexsort((x[0].imag, x[0].real))]
    np.testing.assert_array_equal(jitviz.jit(jnp.sort_complex, backend=backend)(x[0]), want)


def test_complex_comparisons_are_jaxs():
    """lax's comparisons refuse complex numbers; jnp's order them by real, then imaginary
    part; clip refuses them (as JAX)."""
    a = _complex_data((40,), np.complex64)
    b = a[::-1].copy()
    for name in ("less", "less_equal", "greater", "greater_equal"):
        real_op = getattr(np, name)
        # JAX's formula (NumPy's own also asks both imaginary parts not to be NaN)
        want = np.where(a.real == b.real, real_op(a.imag, b.imag), real_op(a.real, b.real))
        got = jitviz.jit(getattr(jnp, name))(a, b)
        np.testing.assert_array_equal(got, want, err_msg=name)
    want = np.where(a.real == b.real, a.imag < b.imag, a.real < b.real)
    np.testing.assert_array_equal(jitviz.jit(lambda a, b: a < b)(a, b), want)
    # lax.max/min pick x where that order says so, else y (a NaN part loses), size-1
    # dimensions and scalars broadcast as max_p's do
    for fn, real_op in ((lax.max, np.greater), (lax.min, np.less)):
        for x, y in ((a, b), (a.reshape(8, 5)[:, :1], b.reshape(8, 5)), (a[0], b)):
            xb, yb = np.broadcast_arrays(x, y)
            take_x = np.where(xb.real == yb.real, real_op(xb.imag, yb.imag),
                              real_op(xb.real, yb.real))
            np.testing.assert_array_equal(jitviz.jit(fn)(x, y), np.where(take_x, xb, yb))
    for op in (lax.lt, lax.le, lax.gt, lax.ge):
        with pytest.raises(TypeError, match="does not accept dtype complex64"):
            jitviz.jit(op)(a, b)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jnp.clip(a, 0, 1)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jnp.clip(a.real, 0j, 1)


def test_unsupported_sorts_say_so():
    with pytest.raises(NotImplementedError, match="num_keys=1"):
        jitviz.jit(lambda a, b: lax.sort((a, b), num_keys=2))(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(np.ones(2), kind="quicksort")
    with pytest.raises(jitviz.errors.CompilationError, match="float16"):
        jitviz.jit(jnp.sort, backend="cpu")(np.ones(3, np.float16))


def test_matches_jax_when_installed():
    jax = pytest.importorskip("jax")
    x = _data((6, 8), np.float32)
    for fn in ("sort", "argsort"):
        for kw in ({}, {"axis": 0}, {"descending": True}, {"axis": None}):
            ours = getattr(jnp, fn)
            theirs = getattr(jax.numpy, fn)
            for data in (x, _complex_data((6, 8), np.complex64)):
                np.testing.assert_array_equal(
                    jitviz.jit(lambda x: ours(x, **kw))(data),
                    np.asarray(jax.jit(lambda x: theirs(x, **kw))(data)))
    a = _complex_data((40,), np.complex64)
    for fn in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum"):
        np.testing.assert_array_equal(jitviz.jit(getattr(jnp, fn))(a, a[::-1]),
                                      np.asarray(getattr(jax.numpy, fn)(a, a[::-1])), fn)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_quantiles_match_numpy(backend, method, axis):
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    f = jitviz.jit(lambda x, q: jnp.quantile(x, q, axis=axis, method=method), backend=backend)
    np.testing.assert_allclose(f(x, q), np.quantile(x, q, axis=axis, method=method),
                               rtol=1e-6, atol=1e-7)
    keep = jitviz.jit(lambda x: jnp.median(x, axis=axis, keepdims=True), backend=backend)(x)
    np.testing.assert_allclose(keep, np.median(x, axis=axis, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_quantiles_skip_nans_and_plain_ones_propagate_them(backend):
    x = np.array([[3.0, np.nan, 1.0, 2.0], [np.nan, np.nan, np.nan, np.nan]], np.float32)
    median = jitviz.jit(lambda x: jnp.median(x, axis=1), backend=backend)(x)
    nanmedian = jitviz.jit(lambda x: jnp.nanmedian(x, axis=1), backend=backend)(x)
    assert np.isnan(median).all()
    np.testing.assert_array_equal(nanmedian, [2.0, np.nan])
    p = jitviz.jit(lambda x: jnp.nanpercentile(x[0], 50.0), backend=backend)(x)
    assert p == 2.0 and p.dtype == np.float32


def test_median_is_differentiable():
    x = np.array([4.0, 1.0, 3.0, 2.0], np.float32)
    g = jitviz.grad(jnp.median)(x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.5])  # the two middle values


def test_quantile_errors_are_jax_s():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(x, 0.5, method="bogus")
    with pytest.raises(ValueError, match="q must be have rank <= 1"):
        jnp.quantile(x, np.ones((2, 2)))
    with pytest.raises(ValueError, match="does not support overwrite_input=True"):
        jnp.median(x, overwrite_input=True)
    with pytest.raises(NotImplementedError, match="inverted_cdf"):
        jnp.quantile(x, 0.5, method="inverted_cdf")


def test_quantiles_match_jax_when_installed():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    x[1, 2] = np.nan
    q = np.array([0.1, 0.5, 0.75], np.float32)
    for name, kw in [("quantile", {"method": "nearest"}), ("nanquantile", {"axis": 1}),
                     ("percentile", {"axis": 0, "keepdims": True}), ("median", {}),
                     ("nanmedian", {"axis": (0, 1)}), ("nanpercentile", {})]:
        args = (x,) if "median" in name else (x, q * 100 if "percentile" in name else q)
        ours = jitviz.jit(lambda *a: getattr(jnp, name)(*a, **kw))(*args)
        theirs = jax.jit(lambda *a: getattr(jax.numpy, name)(*a, **kw))(*args)
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6, err_msg=name)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, name


def test_quantile_over_an_empty_reduced_axis_keeps_the_shape():
    out = jitviz.jit(lambda x: jnp.quantile(x, 0.5, axis=(-3,), keepdims=True))(
        np.zeros((1, 1, 0), np.int32))
    assert out.shape == (1, 1, 0) and out.dtype == np.float32
