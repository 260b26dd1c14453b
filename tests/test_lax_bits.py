"""lax.population_count, lax.clz and lax.shift_right_logical: every integer width, signed and
unsigned, against real JAX (x64 on) on the interpreter and the CPU backend — 64-bit values
included, whose unsigned right shift the CPU backend's helper gets wrong (see lax/bits.py)."""
import numpy as np
import pytest

import jitviz
from jitviz import lax

from helpers import jax_x64_enabled

# written for NumPy 64-bit operands that stay 64-bit (jitviz's keep_float64 switch);
# JAX's own 32-bit narrowing is tests/test_array_promotion.py's
pytestmark = pytest.mark.usefixtures("keep_float64")

jax = pytest.importorskip("jax")
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
rng = np.random.default_rng(5)


@pytest.fixture
def jax_x64():
    with jax_x64_enabled():
        yield


def _values(dt):
    info = np.iinfo(dt)
    edges = [0, 1, 2, info.min, info.max, info.max // 2, info.max // 2 + 1]
    return np.concatenate([rng.integers(info.min, info.max, 60, dtype=dt, endpoint=True),
                           np.array(edges, dt)])


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_bit_counts_match_jax(backend, dtype, jax_x64):
    x = _values(dtype)
    for name in ("population_count", "clz"):
        got = jitviz.jit(getattr(lax, name), backend=backend)(x)
        want = np.asarray(getattr(jax.lax, name)(x))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_shift_right_logical_matches_jax(backend, dtype, jax_x64):
    x = _values(dtype)
    bits = 8 * np.dtype(dtype).itemsize
    y = np.concatenate([rng.integers(0, bits, len(x) - 4), [0, bits - 1, bits, bits + 3]]
                       ).astype(dtype)
    got = jitviz.jit(lax.shift_right_logical, backend=backend)(x, y)
    np.testing.assert_array_equal(got, np.asarray(jax.lax.shift_right_logical(x, y)))


def test_vmap_weak_types_and_bad_dtypes():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) * 37
    np.testing.assert_array_equal(jitviz.vmap(lax.population_count)(x),
                                  np.asarray(jax.vmap(jax.lax.population_count)(x)))
    assert lax.clz(np.int32(1)) == 31
    with pytest.raises(TypeError, match="population_count does not accept dtype float32"):
        lax.population_count(np.float32(1))
    with pytest.raises(TypeError, match="same dtypes, got int32, int8"):
        lax.shift_right_logical(np.int32(1), np.int8(1))
