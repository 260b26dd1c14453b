"""jit on odd arrays gives exactly NumPy's results (every backend)."""
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import jit

BACKENDS = ["interpret", "cpu"]


def program(x):
    return jnp.sum(jnp.sin(x) * 2.0 + x, axis=0), jnp.max(x, axis=-1), x.T + 1.0


def reference(x):
    x = np.asarray(x)
    return (np.sum(np.sin(x) * np.float32(2.0) + x, axis=0), np.max(x, axis=-1),
            x.T + np.float32(1.0))


def odd_arrays():
    base = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    ro = base.copy()
    ro.flags.writeable = False
    nan = base.copy()
    nan[1, 2], nan[2, 3], nan[0, 0] = np.nan, np.inf, -np.inf
    return {
        "contiguous": base,
        "strided": np.arange(48, dtype=np.float32).reshape(4, 12)[:, ::2] / 7,
        "transposed": np.ascontiguousarray(base.T).T,
        "fortran": np.asfortranarray(base),
        "read_only": ro,
        "big_endian": base.astype(">f4"),
        "nan_inf": nan,
        "negative_stride": base[::-1, ::-1],
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(odd_arrays()))
def test_odd_arrays_match_numpy(backend, name):
    x = odd_arrays()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = reference(x)
        got = jit(program, backend=backend)(x)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.dtype(np.float32)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_size_arrays(backend):
    x = np.zeros((0, 3), np.float32)
    out = jit(lambda x: (x * 2, jnp.sum(x, axis=0), x.reshape(3, 0)), backend=backend)(x)
    assert out[0].shape == (0, 3)
    assert out[1].tolist() == [0.0, 0.0, 0.0]
    assert out[2].shape == (3, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_are_not_modified_and_outputs_are_fresh(backend):
    x = np.ones(4, np.float32)
    out = jit(lambda x: x, backend=backend)(x)
    out2 = jit(lambda x: x * 1, backend=backend)(x)
    assert x.tolist() == [1, 1, 1, 1]
    assert np.asarray(out2).tolist() == [1, 1, 1, 1]
    assert isinstance(out, jitviz.Array)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("switch", ["enable_x64", "keep_float64"])
def test_float64_inputs_keep_their_precision_with_x64_or_keep_float64(backend, switch):
    x = np.array([1e-10, 1.0], np.float64)
    jitviz.config.update(switch, True)  # conftest restores both switches
    out = jit(lambda x: x + 1.0, backend=backend)(x)
    assert out.dtype == np.float64
    assert out[0] == 1.0 + 1e-10


@pytest.mark.parametrize("backend", BACKENDS)
def test_float64_inputs_are_float32_by_default_as_in_jax(backend):
    x = np.array([1e-10, 1.0], np.float64)
    with pytest.warns(jitviz.X64ConversionWarning):
        out = jit(lambda x: x + 1.0, backend=backend)(x)
    assert out.dtype == np.float32
    assert out.tolist() == [1.0, 2.0]  # 1e-10 is lost in float32's 1.0
