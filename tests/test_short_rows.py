"""Short rows on the CPU (statements._tiled_body): an elementwise body over (..., N, w), w below
16, whose other operands are rows of w values or columns (..., N, 1), runs over (C, L) views
with the rows tiled to L values and the columns' values repeated w times, and the rows left
over through the body's own kernel. Every case against the interpreter, and which path each
one took (the driver's source)."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.backends.cpu.statements import TILE_MIN_SIZE

from helpers import float64_kept

RNG = np.random.default_rng(7)


def _check(fn, *args, tiled: bool, rtol=1e-6):
    with float64_kept():
        f = jitviz.jit(fn, backend="cpu")
        got = f(*args)
        want = jitviz.jit(fn, backend="interpret")(*args)
        driver = f.lower(*args).compile().executable.driver_source
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-6)
    assert ("np.tile(" in driver or "np.repeat(" in driver) == tiled, driver
    return driver


def _data(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-2, 2, shape).astype(dtype)
    return RNG.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("w", [2, 3, 5, 7, 15])
@pytest.mark.parametrize("rows_left", [0, 1], ids=["whole", "rows-left"])
def test_rows_of_every_short_width_match_the_interpreter(w, rows_left):
    """The rows left over (fewer than a view row holds) go through the body's own kernel:
    with and without them, every value matches."""
    lcm = np.lcm(w, 16)
    k = lcm * -(-48 // lcm) // w  # rows per view row
    n = (TILE_MIN_SIZE // w // k + 3) * k + rows_left * (k - 1)
    x, b = _data((n, w), np.float32), _data((w,), np.float32)
    driver = _check(lambda x, b: jnp.tanh(x) * b + 1.0, x, b, tiled=True)
    assert ("_rest(" in driver) == bool(rows_left), driver


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_dtypes(dtype):
    x, b = _data((20000, 3), dtype), _data((3,), dtype)
    _check(lambda x, b: x * b - b, x, b, tiled=True)


def test_an_image_times_its_channel_weights():
    """(H, W, 3) * (3,): the views cover H W rows; a row operand of rank 2 (1, 3) too."""
    img = RNG.uniform(0, 1, (97, 131, 3)).astype(np.float32)  # 12707 rows: some left over
    weights = np.array([0.299, 0.587, 0.114], np.float32)
    _check(lambda i, w: jnp.sqrt(i) * w + 0.5, img, weights, tiled=True)
    _check(lambda i, w: i * w[None, :], img[0].repeat(50, axis=0), weights, tiled=True)


def test_several_row_operands_a_scalar_and_a_select():
    x = _data((30001, 4), np.float32)
    lo, hi = _data((4,), np.float32), _data((4,), np.float32) + 3
    _check(lambda x, lo, hi, s: jnp.where(x > lo, jnp.exp(x - hi), lo * s), x, lo, hi,
           np.float32(2.5), tiled=True)


@pytest.mark.parametrize("rows_left", [0, 1], ids=["whole", "rows-left"])
def test_columns_are_repeated_where_the_body_calls_a_function(rows_left):
    """A column operand (N, 1), (B, N, 1), alone or beside a row and through an explicit
    broadcast: its values for the views' rows repeated w times, the rest of it to the
    leftover rows' kernel."""
    n = 30000 + rows_left * 5
    x, c, b = _data((n, 3), np.float32), _data((n, 1), np.float32), _data((3,), np.float32)
    driver = _check(lambda x, c: jnp.tanh(x) * c, x, c, tiled=True)
    assert "np.repeat(" in driver and ("_rest(" in driver) == bool(rows_left), driver
    driver = _check(lambda x, c, b: jnp.exp(x - c) * b, x, c, b, tiled=True)
    assert "np.repeat(" in driver and "np.tile(" in driver, driver
    _check(lambda x, c: jnp.sin(x) + jnp.broadcast_to(c, x.shape), x, c, tiled=True)
    x3, c3 = _data((4, n // 4, 5), np.float32), _data((4, n // 4, 1), np.float32)
    _check(lambda x, c: jnp.log1p(jnp.abs(x)) / c, x3, c3, tiled=True)


def test_what_does_not_tile_still_matches():
    """Column operands of arithmetic alone (their copy would cost more than the nest),
    columns that broadcast over more than the rows, wide rows, small arrays and reductions
    keep the loops they had."""
    x = _data((30000, 3), np.float32)
    _check(lambda x, c: x * c + 1.0, x, _data((30000, 1), np.float32), tiled=False)
    _check(lambda x, c: jnp.tanh(x) * c, _data((4, 7500, 3), np.float32),
           _data((1, 7500, 1), np.float32), tiled=False)
    _check(lambda x, b: x * b, _data((3000, 16), np.float32), _data((16,), np.float32),
           tiled=False)
    _check(lambda x, b: x * b, _data((100, 3), np.float32), _data((3,), np.float32),
           tiled=False)
    _check(lambda x, b: jnp.sum(x * b, axis=1), x, _data((3,), np.float32), tiled=False)


def test_a_strided_input_is_copied_then_tiled():
    strided = _data((30000, 6), np.float32)[:, ::2]
    _check(lambda x, b: x * b, strided, _data((3,), np.float32), tiled=True)
