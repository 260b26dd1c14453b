"""CPU backend reductions against NumPy: max/min bit for bit (they are exact in any order:
NaN propagates, the identity for empty reductions, -0.0/+0.0 where all zeros share a sign),
sum/prod within tolerance, on row lengths around the kernels' blocks (64 lanes for max/min,
128 values for a sum's cascade) and with NaN/inf placed in the head, middle and tail of a
block. No timing is asserted here (see benchmarks/bench_reductions.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitviz.numpy as jnp
from jitviz import lax
from jitviz.backends.cpu import render as cpu_render

from cpu_helpers import assert_same, compile_cpu, leaves, run_interpret
from helpers import float64_kept

@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests compute at the dtypes they name, float64 included: jitviz's keep_float64
    switch keeps NumPy float64 operands float64 without x64 (JAX would need x64)."""
    with float64_kept():
        yield

f32, f64 = np.float32, np.float64
ROWS = [0, 1, 7, 37, 63, 64, 65, 100, 127, 128, 129, 200, 1000]
AXES = [None, -1, 0, (0, 1)]
rng = np.random.default_rng(11)


def _reducer(op, axis, keepdims=False):
    return lambda x: getattr(jnp, op)(x, axis=axis, keepdims=keepdims)


def run(op, x, axis=None, keepdims=False, fastmath=False):
    f = _reducer(op, axis, keepdims)
    exe, _ = compile_cpu(f, x, fastmath=fastmath)
    return np.asarray(exe(*leaves(x))[0])


def want(op, x, axis=None, keepdims=False):
    return np.asarray(getattr(np, op)(x, axis=axis, keepdims=keepdims))


def assert_bits(got, expected):
    """Same dtype, shape and bits (NaN is NaN, -0.0 is not 0.0)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    if got.dtype.kind == "f":  # any NaN bit pattern counts as NaN
        gn, en = np.isnan(got), np.isnan(expected)
        np.testing.assert_array_equal(gn, en)
        got, expected = np.where(gn, 0, got), np.where(en, 0, expected)
    assert got.tobytes() == expected.tobytes(), (got, expected)


def _empty_ok(x, axis):
    """NumPy refuses max/min of an empty reduction (no identity); jitviz gives it."""
    axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
    return all(x.shape[a] for a in axes)


# --- max/min: bit for bit -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n", ROWS)
def test_max_min_rows(op, n, dtype):
    x = rng.standard_normal((3, n)).astype(dtype)
    for axis in AXES:
        if _empty_ok(x, axis):
            assert_bits(run(op, x, axis), want(op, x, axis))
    assert_bits(run(op, x[0]), want(op, x[0])) if n else None


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_empty_reduction_is_the_identity(op, dtype):
    """lax.reduce_max/min of nothing (jnp.max refuses, as NumPy): -inf/+inf (XLA's)."""
    x = np.zeros((3, 0), dtype)
    ident = -np.inf if op == "max" else np.inf
    prim = getattr(lax, f"reduce_{op}")
    for axes, expected in (((1,), np.full(3, ident, dtype)), ((0, 1), np.array(ident, dtype))):
        exe, _ = compile_cpu(lambda x: prim(x, axes), x)
        assert_bits(exe(*leaves(x))[0], expected)


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n", [1, 7, 64, 100, 129, 1000])
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_anywhere_in_a_block(op, n, dtype, special):
    base = rng.standard_normal((2, n)).astype(dtype)
    # head, middle and tail of the first block, the tail block, and the last value
    for p in sorted({0, min(n - 1, 31), min(n - 1, 63), min(n - 1, 64), n // 2, n - 1}):
        x = base.copy()
        x[1, p] = special
        for axis in (None, -1, 0):
            assert_bits(run(op, x, axis), want(op, x, axis))


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_all_nan_and_all_inf(op, dtype):
    for fill in (np.nan, np.inf, -np.inf):
        x = np.full((4, 130), fill, dtype)
        for axis in (None, -1, 0):
            assert_bits(run(op, x, axis), want(op, x, axis))


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n", [1, 7, 64, 100, 1000])
def test_signed_zeros(op, n, dtype):
    for zero in (0.0, -0.0):  # all zeros of one sign, among values on the other side
        x = np.full((3, n), zero, dtype)
        x[1, ::3] = -1.0 if op == "max" else 1.0
        for axis in (None, -1, 0):
            assert_bits(run(op, x, axis), want(op, x, axis))
    # a single zero of the other sign is outvoted by a nonzero extreme
    x = np.zeros((2, n), dtype)
    x[0, n // 2] = -0.0
    x[1, -1] = 2.0 if op == "max" else -2.0
    assert_bits(run(op, x, -1)[1], want(op, x, -1)[1])


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", [f32, f64])
def test_maximum_and_minimum_order_signed_zeros_in_either_argument_order(backend, dtype):
    """IEEE 754-2019 maximum/minimum, as XLA: +0.0 beats -0.0 for maximum, -0.0 for minimum,
    whichever operand it is (runtime.fmax: llvm.maximum)."""
    import jitviz
    a = np.array([0.0, -0.0, -0.0, 0.0, 1.0, -1.0], dtype)
    b = np.array([-0.0, 0.0, -0.0, 0.0, 1.0, -1.0], dtype)
    for fn, zeros in ((jnp.maximum, [0.0, 0.0, -0.0, 0.0]), (jnp.minimum, [-0.0, -0.0, -0.0, 0.0])):
        got = np.asarray(jitviz.jit(fn, backend=backend)(a, b))
        assert_bits(got, np.array(zeros + [1.0, -1.0], dtype))


@pytest.mark.parametrize("dtype", [f32, f64])
def test_maximum_and_minimum_of_every_pair_of_specials_are_xlas(dtype):
    """runtime.fmax/fmin (llvm.maximum/minimum) on every ordered pair of specials: a NaN in
    either operand gives NaN, signed zeros ordered, infinities and subnormals as numbers;
    elementwise, in a running max down the rows (the loop that LLVM left scalar when the max
    was a select), and in a clip. The expected values are IEEE 754-2019's, written out."""
    import jitviz
    tiny = np.finfo(dtype).smallest_subnormal
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, tiny, -tiny,
                   np.finfo(dtype).max], dtype)
    a, b = np.repeat(sp, sp.size), np.tile(sp, sp.size)

    def ieee(pick, a, b):
        zeros = (a == 0) & (b == 0)
        signed = np.where(np.signbit(a) == (pick is np.minimum), a, b)
        return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(zeros, signed, pick(a, b)))
    for fn, pick, reduce_op in ((jnp.maximum, np.maximum, "max"),
                                (jnp.minimum, np.minimum, "min")):
        want_ab = ieee(pick, a, b).astype(dtype)
        assert_bits(np.asarray(jitviz.jit(fn)(a, b)), want_ab)
        assert_bits(run(reduce_op, np.stack([a, b]), 0), want_ab)
    x = np.resize(sp, 300)
    got = np.asarray(jitviz.jit(lambda v: jnp.clip(v, -1.0, 1.0))(x))
    want = ieee(np.minimum, ieee(np.maximum, x, np.full_like(x, -1.0)), np.full_like(x, 1.0))
    assert_bits(got, want.astype(dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_integer_maximum_minimum_and_running_max(dtype):
    """fmax/fmin serve integers too (a compare and select, signed or unsigned): elementwise,
    down the rows, and in lax.cummax/cummin (runtime's cumulative helpers)."""
    import jitviz
    info = np.iinfo(dtype)
    x = np.random.default_rng(3).integers(info.min, info.max, (5, 40), dtype=dtype,
                                          endpoint=True)
    y = x[::-1].copy()
    np.testing.assert_array_equal(np.asarray(jitviz.jit(jnp.maximum)(x, y)), np.maximum(x, y))
    np.testing.assert_array_equal(np.asarray(jitviz.jit(jnp.minimum)(x, y)), np.minimum(x, y))
    np.testing.assert_array_equal(run("max", x, 0), x.max(axis=0))
    np.testing.assert_array_equal(run("min", x, 0), x.min(axis=0))
    for op, ref in ((lax.cummax, np.maximum), (lax.cummin, np.minimum)):
        got = np.asarray(jitviz.jit(lambda v: op(v, axis=1))(x))
        np.testing.assert_array_equal(got, ref.accumulate(x, axis=1))


@pytest.mark.parametrize("dtype", [f32, f64])
def test_max_over_axis_0_takes_the_ieee_maximum_of_signed_zeros(dtype):
    """A running max down the rows (runtime.fmax): a column of -0.0 then +0.0 (or the other
    order) gives +0.0, min gives -0.0 (the CPU's choice; NumPy's np.max depends on its loop)."""
    x = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, -0.0]], dtype)
    assert_bits(run("max", x, 0), np.array([0.0, 0.0, -0.0], dtype))
    assert_bits(run("min", x, 0), np.array([-0.0, -0.0, -0.0], dtype))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_integers(op, dtype):
    info = np.iinfo(dtype)
    for n in (0, 1, 65, 1000):
        x = rng.integers(info.min, info.max, (3, n), dtype=dtype, endpoint=True)
        for axis in AXES:
            if _empty_ok(x, axis):
                assert_bits(run(op, x, axis), want(op, x, axis))


@pytest.mark.parametrize("op", ["max", "min"])
def test_keepdims_and_rank3(op):
    x = rng.standard_normal((4, 5, 70)).astype(f32)
    x[2, 3, 66] = np.nan
    for axis in (-1, (1, 2), None, 0, 1, (0, 2)):
        for keepdims in (False, True):
            assert_bits(run(op, x, axis, keepdims), want(op, x, axis, keepdims))


@pytest.mark.parametrize("op", ["max", "min"])
def test_fused_with_elementwise_and_sum(op):
    """A max in the same kernel as a sum (one nest, one block) and behind elementwise ops."""
    x = rng.standard_normal((5, 300)).astype(f32)
    x[3, 290] = np.nan

    def f(x):
        y = x * 2.0 - 1.0
        return getattr(jnp, op)(y, axis=-1), jnp.sum(y, axis=-1)

    exe, _ = compile_cpu(f, x)
    got = exe(*leaves(x))
    ref = run_interpret(f, x)
    assert_bits(got[0], np.asarray(ref[0]))
    assert_same(got[1], ref[1])
    y = x * f32(2.0) - f32(1.0)
    assert_bits(got[0], getattr(np, op)(y, axis=-1))


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_fastmath_path(op, dtype):
    """fastmath=True lets LLVM vectorize on its own (no lanes); finite values stay exact."""
    for n in (1, 37, 129, 1000):
        x = rng.standard_normal((3, n)).astype(dtype)
        for axis in (None, -1, 0):
            assert_bits(run(op, x, axis, fastmath=True), want(op, x, axis))


def test_kernel_shapes():
    """What the generated code relies on: with AVX-512, lanes on the stack and a masked
    full-width tail; without, one accumulator through rt.fmax_f32 (llvm.maximum, which LLVM
    vectorizes as a reduction), also beside a sum's cascade in one nest."""
    x = np.ones((10, 100), f32)
    src = "\n".join(k.source for k in
                    jitviz_kernels(lambda x: jnp.max(x, axis=-1), x))
    if not cpu_render.MAX_MIN_LANES:
        assert "stack_array" not in src and "= np.float32(rt.fmax_f32(a" in src, src
        both = "\n".join(k.source for k in jitviz_kernels(
            lambda x: (jnp.sum(x, axis=-1), jnp.min(x, axis=-1)), np.ones((3, 300), f32)))
        assert "rt.cascade_push_add(" in both and "lane" not in both, both
        return
    assert f"rt.stack_array({cpu_render.LANES}, np.float32)" in src
    assert "rt.nonneg(" in src and "rt.lanes_total_max(" in src
    # long rows take more lanes (more independent chains), short ones fewer (less to combine)
    long_rows = np.ones((2, cpu_render.LONG_ROW), f32)
    src = "\n".join(k.source for k in jitviz_kernels(lambda x: jnp.max(x, axis=-1), long_rows))
    assert f"rt.stack_array({cpu_render.LANES_LONG}, np.float32)" in src
    assert cpu_render.LANES < cpu_render.LANES_LONG


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["max", "min"])
def test_lanes_combine_with_every_lane_reaching_the_result(op, dtype):
    """The halving combine (lane j with j + h): each lane in turn holds the row's extreme
    (or its only NaN), at every row length around the lane counts."""
    for n in (cpu_render.LANES - 1, cpu_render.LANES, 3 * cpu_render.LANES + 5,
              cpu_render.LONG_ROW + 3):
        for lane in range(0, cpu_render.LANES_LONG, 7):
            x = np.zeros((3, n), dtype)
            if lane < n:
                x[0, lane] = 5.0 if op == "max" else -5.0
                x[1, lane] = np.nan
                x[2, n - 1 - lane] = 7.0 if op == "max" else -7.0
            assert_bits(run(op, x, -1), want(op, x, -1))


def jitviz_kernels(f, x):
    import jitviz
    return jitviz.jit(f).lower(x).compile().kernels


# --- sum/prod keep their numerics ---------------------------------------------------------

@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("n", [0, 1, 7, 127, 128, 129, 1000])
def test_sum_prod_rows(op, n, dtype):
    x = (rng.standard_normal((3, n)) * (0.1 if op == "prod" else 1) + (1 if op == "prod" else 0))
    x = x.astype(dtype)
    for axis in AXES:
        assert_same(run(op, x, axis), want(op, x, axis), rtol=1e-4 if dtype == f32 else 1e-10)


# --- random shapes and values -------------------------------------------------------------

_values = st.sampled_from([0.0, -0.5, 1.5, np.inf, -np.inf, np.nan, 3.0, -7.25])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(1, 4), n=st.integers(0, 300), dtype=st.sampled_from([f32, f64]),
       op=st.sampled_from(["max", "min"]), axis=st.sampled_from(AXES),
       specials=st.lists(st.tuples(st.integers(0, 10**6), _values), max_size=6),
       seed=st.integers(0, 2**32 - 1))
def test_random_max_min(rows, n, dtype, op, axis, specials, seed):
    x = np.random.default_rng(seed).standard_normal((rows, n)).astype(dtype)
    for pos, v in specials:
        if x.size:
            x.flat[pos % x.size] = v
    if _empty_ok(x, axis) and not _mixed_zero_extreme(x, op, axis):
        assert_bits(run(op, x, axis), want(op, x, axis))


def _mixed_zero_extreme(x, op, axis):
    """Where the extreme is a zero present with both signs, which one NumPy returns depends
    on its SIMD loop's order: not compared."""
    ext = getattr(np, op)(x, axis=axis, keepdims=True)
    zeros = (x == 0) & (ext == 0)
    neg = np.signbit(x) & zeros
    pos = ~np.signbit(x) & zeros
    return bool(np.any(np.any(neg, axis=axis) & np.any(pos, axis=axis)))


@pytest.mark.parametrize("n", [1_000_003, 2 ** 20])
def test_long_float32_sum_error_grows_like_log_n(n):
    """Blocks are summed in any order (vectorized), but blocks combine pairwise: a float32 sum
    of a million values stays as accurate as NumPy's pairwise sum. A running float32 total
    would be off by ~1e-3 here."""
    x = np.full(n, 0.1, f32) + rng.random(n).astype(f32) * f32(1e-3)
    exact = x.astype(np.float64).sum()
    got = float(run("sum", x))
    numpy_err = abs(float(x.sum()) - exact) / exact
    assert abs(got - exact) / exact <= max(4 * numpy_err, 1e-6)
    running = np.cumsum(x[:200_000], dtype=f32)[-1]  # the naive order, for contrast
    assert abs(running - x[:200_000].astype(np.float64).sum()) / exact > 1e-6


def test_sum_blocks_vectorize_without_fastmath():
    """Only the block's own adds are reassociable (`rt.add_reassoc`); the kernel is not
    compiled with fastmath, and its elementwise arithmetic stays IEEE-exact."""
    x = rng.random((4, 300)).astype(f32)
    exe, _ = compile_cpu(lambda x: (x * 3.0 + 1.0).sum(axis=1), x)
    src = exe.kernels[0].source
    assert "fastmath=False" in src and "rt.add_reassoc(" in src
    assert_same(exe(x)[0], (x * f32(3) + f32(1)).sum(axis=1), rtol=1e-6, atol=1e-5)


# --- threaded reductions over every axis: chunks combined in order -------------------------

def _chunks(n0, size):
    from jitviz.backends.cpu import runtime as rt
    return max(1, min(rt.REDUCE_CHUNKS_MAX, n0, size // rt.REDUCE_CHUNK_MIN))


def _threaded(f, x):
    exe, _ = compile_cpu(f, x, parallel=True)
    return exe


def _with_threads(n, exe, x):
    import numba
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        return [np.asarray(a) for a in exe(*leaves(x))]
    finally:
        numba.set_num_threads(old)


FULL_N = 3 * 65536 + 77  # three chunks, the last one with a tail that is not a full block


@pytest.mark.parametrize("dtype", [f32, f64, np.int32])
def test_a_threaded_full_reduction_is_chunked_and_exact(dtype):
    """A reduction over every axis of a threaded kernel: its outer axis cut into chunks
    (prange), max/min bit for bit NumPy's (IEEE's for a tie of zeros without AVX-512), sum
    within tolerance, NaN and signed zeros in a later chunk honoured; the same bits on one
    thread as on all (the chunks come from the size alone)."""
    assert _chunks(FULL_N, FULL_N) == 3
    x = (rng.standard_normal(FULL_N) * 100).astype(dtype)

    def f(x):
        return jnp.sum(x), jnp.max(x), jnp.min(x)
    exe = _threaded(f, x)
    src = "\n".join(k.source for k in exe.kernels)
    assert "nch = rt.reduce_chunks(n0, n0)" in src and "for ch in prange(nch)" in src, src
    one, every = _with_threads(1, exe, x), _with_threads(2, exe, x)
    for a, b in zip(one, every):
        assert a.tobytes() == b.tobytes()
    assert_same(every[0], np.sum(x, dtype=dtype) if dtype != np.int32 else np.int32(x.sum()),
                rtol=1e-5 if dtype == f32 else 1e-12)
    assert_bits(every[1], np.max(x))
    assert_bits(every[2], np.min(x))
    if dtype != np.int32:
        for value, where in ((np.nan, FULL_N - 5), (np.nan, 70000), (np.inf, 140000)):
            y = x.copy()
            y[where] = value
            got = _with_threads(2, exe, y)
            assert_bits(got[1], np.max(y))
            assert_bits(got[2], np.min(y))
        zeros = np.zeros(FULL_N, dtype)
        zeros[150000] = -0.0  # a lone -0.0 in the third chunk: max is +0.0, min -0.0
        got = _with_threads(2, exe, zeros)
        assert_bits(got[1], np.zeros((), dtype))
        # (IEEE 754-2019 minimum without lanes, as XLA's for 1000 values; NumPy's and the
        # lanes' tie depends on the order: +0.0 here)
        assert_bits(got[2], np.min(zeros) if cpu_render.MAX_MIN_LANES else -np.zeros((), dtype))
        neg = -np.zeros(FULL_N, dtype)  # all -0.0: the sum is -0.0 as on one chunk
        assert_bits(_with_threads(2, exe, neg)[0], np.array(-0.0, dtype))


def test_a_threaded_full_reduction_of_a_matrix_and_beside_elementwise_work():
    """Rank 2: the chunks split the outer axis, as many as the values allow (a long axis of
    short rows, or a short axis of long rows: 9 rows of 131077 are 9 chunks, not one); an
    elementwise output of the same loop nest is written by its chunk (every element once).
    (A broadcast row keeps the nest: a body whose arrays all have one shape runs as one
    loop over every value, statements._flat_body.)"""
    def f(x):
        y = x * 2.0 + x[1]
        return y, jnp.sum(y), jnp.max(y)
    for shape, chunks in (((2 * 65536 + 3, 3), 6), ((9, 2 * 65536 + 5), 9)):
        assert _chunks(shape[0], shape[0] * shape[1]) == chunks
        x = rng.standard_normal(shape).astype(f32)
        exe = _threaded(f, x)
        src = "\n".join(k.source for k in exe.kernels)
        assert "rt.reduce_chunks(n0, n0 * n1)" in src and "for ch in prange(nch)" in src
        got, ref = exe(*leaves(x)), run_interpret(f, x)
        assert_bits(got[0], np.asarray(ref[0]))
        assert_same(got[1], ref[1], rtol=1e-5, atol=1e-3)
        assert_bits(got[2], np.asarray(ref[2]))
        assert _with_threads(1, exe, x)[1].tobytes() == _with_threads(2, exe, x)[1].tobytes()


def test_a_small_threaded_reduction_is_one_chunk_and_partial_reductions_are_not_chunked():
    x = rng.standard_normal(1000).astype(f32)
    exe = _threaded(lambda x: jnp.sum(x), x)
    assert_same(exe(*leaves(x))[0], np.sum(x), rtol=1e-5)  # one chunk: nch = 1
    m = rng.standard_normal((300, 400)).astype(f32)
    src = "\n".join(k.source for k in _threaded(lambda m: jnp.sum(m, axis=0), m).kernels)
    assert "reduce_chunks" not in src


@pytest.mark.parametrize("dtype", [f32, f64, np.int32])
@pytest.mark.parametrize("shape", [(37, 128 * 5 + 9), (6, 100), (9, 3, 300)],
                         ids=["blocks", "too narrow", "rank 3"])
def test_threaded_column_reductions_split_the_columns(shape, dtype):
    """A reduction over a leading axis that keeps the last one (`sum(x, axis=0)`) cannot
    split its rows, which all add into the output row: its columns are split instead, one
    block per thread (render._column_blocked, `for cb in prange(ncb)`). Each column is
    still reduced over the rows in order by one thread: the same bits as the kernel on one
    thread (parallel=False), on one thread as on two, max/min NumPy's; an elementwise
    output beside them is written by its block. Fewer than two blocks' worth of columns
    (2 x rt.COLUMN_BLOCK) keep one thread."""
    from jitviz.backends.cpu import runtime as rt
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    if dtype != np.int32:
        x[3, ..., 7], x[5, ..., -1], x[2, ..., 0] = np.nan, -0.0, np.inf

    def f(x):
        lead = tuple(range(x.ndim - 1))
        return (jnp.sum(x, axis=0), jnp.max(x * 2, axis=0), jnp.min(x, axis=lead),
                x * 3 + 1)
    exe = _threaded(f, x)
    src = "\n".join(k.source for k in exe.kernels)
    blocked = shape[-1] >= 2 * rt.COLUMN_BLOCK
    assert ("for cb in prange(ncb):" in src) == blocked == ("prange(" in src), src
    header = r"ncb = rt\.column_blocks\(n\d, rt\.thread_count\(\)\)"
    assert bool(re.search(header, src)) == blocked
    one, every = _with_threads(1, exe, x), _with_threads(2, exe, x)
    serial, _ = compile_cpu(f, x, parallel=False)
    for a, b, c in zip(one, every, serial(*leaves(x))):
        assert a.tobytes() == b.tobytes() == np.asarray(c).tobytes()
    assert_bits(every[1], np.max(x * dtype(2), axis=0))
    assert_bits(every[2], np.min(x, axis=tuple(range(x.ndim - 1))))
    assert_bits(every[3], x * dtype(3) + dtype(1))
    assert_same(every[0], np.sum(x, axis=0, dtype=dtype), rtol=1e-4 if dtype == f32 else 1e-12)


def test_threaded_column_blocks_keep_the_loop_vectorized():
    """The loop over a block's columns runs `j in range(hi - lo)` at `rt.nonneg(lo + j)`:
    over `range(lo, hi)` LLVM could not tell the index was not negative, kept the loop
    scalar, and two threads were 10x slower than one (a column max of 1024x1024: 1.2 ms
    against 0.1). Likewise the chunks of a reduction over every axis."""
    x = rng.standard_normal((64, 1024)).astype(f32)
    # (x[1]: a broadcast row keeps the full reduction's nest, statements._flat_body)
    for f in (lambda x: jnp.sum(x * 2, axis=0), lambda x: jnp.sum(x * 2 + x[1])):
        kernel = _threaded(f, x).kernels[0]
        assert "in range(hi - lo):" in kernel.source, kernel.source
        assert re.search(r"fadd(?: \w+)* <\d+ x float>", kernel.llvm_ir()), kernel.source


def test_a_nest_reducing_rows_and_columns_is_not_split_by_columns():
    """Sums over both axes in one nest: a row's sum spans every block of columns, so the
    nest keeps one thread (no `prange`) and both sums are right."""
    x = rng.standard_normal((50, 300)).astype(f32)

    def f(x):
        return jnp.sum(x, axis=0), jnp.sum(x, axis=1)
    exe = _threaded(f, x)
    src = "\n".join(k.source for k in exe.kernels)
    assert "column_blocks" not in src
    got, ref = exe(*leaves(x)), run_interpret(f, x)
    for a, b in zip(got, ref):
        assert_same(a, b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [f32, f64])
def test_threaded_row_reductions_give_each_thread_its_own_scratch(dtype):
    """Blocked reductions over rows (max/min lanes with AVX-512, a sum's cascade) split the
    rows across threads: each row's lanes and cascade stack are allocated inside the
    threaded loop (on that thread's stack), so rows cannot share them; the same bits on one
    thread as on all, max/min NumPy's bit for bit."""
    x = rng.standard_normal((301, 1000)).astype(dtype)
    x[7, 500], x[150, 3] = np.nan, -0.0

    def f(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return jnp.max(x, axis=-1), jnp.min(x, axis=-1), jnp.sum(x, axis=-1), e / e.sum(
            axis=-1, keepdims=True)
    exe = _threaded(f, x)
    src = "\n".join(k.source for k in exe.kernels)
    assert src.count("in prange(n0):") == 1, src  # (the row nests share one: _fuse_rows)
    for scratch in ("lane", "stk")[0 if cpu_render.MAX_MIN_LANES else 1:]:
        line = next(l for l in src.splitlines() if f"{scratch}" in l and "stack_array" in l)
        assert line.startswith(" " * 8), line  # inside the threaded loop
    one, every = _with_threads(1, exe, x), _with_threads(2, exe, x)
    for a, b in zip(one, every):
        assert a.tobytes() == b.tobytes()
    assert_bits(every[0], np.max(x, axis=-1))
    assert_bits(every[1], np.min(x, axis=-1))
    ref = run_interpret(f, x)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == f32 else dict(rtol=1e-10, atol=1e-10)
    assert_same(every[2], ref[2], **tol)  # (sums of 1000 normal values: cancellation)
    assert_same(every[3], ref[3], **tol)


def _softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _nests_calling(src, fn):
    """How many nests of a kernel's source call rt.<fn>: a nest that runs blockwise
    (render.GUARD_TESTS: exp and logistic without AVX-512) calls it and its fast variant
    once in its full blocks and once in its tail, a shorter block."""
    full, fast = src.count(f"rt.{fn}("), src.count(f"rt.{fn}_fast(")
    return full - fast + fast // 2


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dtype", [f32, f64])
def test_nests_over_the_same_rows_share_one_loop(dtype, parallel):
    """render._fuse_rows: softmax's nests (the row max; exp(x - max); its sum; the
    division) loop over the rows once, each row's later nests right after its earlier
    ones; its values are the interpreter's, and with threads the same bits on one
    thread as on all."""
    x = rng.standard_normal((301, 1000)).astype(dtype)
    exe, _ = compile_cpu(_softmax, x, parallel=parallel)
    src = exe.kernels[0].source
    assert src.count(f"for i0 in {'prange' if parallel else 'range'}(n0):") == 1, src
    # exp(x - max) once per value, kept for the sum and the division in a buffer of one
    # row (FusedRenderer._worth_caching): no (n0, n1) temporary; it was computed 3 times
    assert _nests_calling(src, "exp_f32" if dtype == f32 else "exp_f64") == 1
    assert "np.empty((n1,)" in src and "np.empty((n0, n1" not in src
    row_buffer = next(line for line in src.splitlines() if "np.empty((n1,)" in line)
    assert row_buffer.startswith(" " * (8 if parallel else 4)), row_buffer  # (per row)
    tol = dict(rtol=1e-5, atol=1e-7) if dtype == f32 else dict(rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(np.asarray(exe(x)[0]), run_interpret(_softmax, x)[0], **tol)
    if parallel:
        assert _with_threads(1, exe, x)[0].tobytes() == _with_threads(2, exe, x)[0].tobytes()


@pytest.mark.parametrize("case", ["column sums", "row maxima by column", "any NaN"])
def test_a_nest_that_needs_other_rows_keeps_its_own_loop(case):
    """A column sum is complete only after the last row, a row maximum read by column
    (max(x, 1)[None, :] of a square matrix) needs rows not reached yet, and so does a
    whole-array `any` (a scalar): the nest that reads them (sum(x, 0)[:, None] at row i0;
    the maxima at column i1; the `any` in a select) keeps its own loop after the one that
    computes them (fused, row 0 would see the first row's partial sums, maxima not
    computed yet, or no NaN yet: jnp.quantile of an array with a NaN gave a number)."""
    def f(x):
        if case == "column sums":
            return x - jnp.sum(x, axis=0)[:, None]
        if case == "any NaN":  # (a scalar accumulator: jnp.quantile's NaN test)
            return jnp.where(jnp.any(jnp.isnan(x)), jnp.nan, x)
        return x - jnp.max(x, axis=1)[None, :]
    x = rng.standard_normal((300, 300) if case != "any NaN" else (300,)).astype(f32)
    if case == "any NaN":
        x[200] = np.nan
    exe, _ = compile_cpu(f, x)
    assert exe.kernels[0].source.count("for i0 in range(n0):") == 2
    np.testing.assert_allclose(np.asarray(exe(x)[0]), run_interpret(f, x)[0], rtol=1e-5,
                               atol=1e-4)


def test_a_cheap_or_unshared_value_is_not_kept_in_a_row_buffer():
    """Only a value that costs more than a store and a load, and whose nests share a row
    loop, is kept: layernorm's x - mean is recomputed (its nests share one loop, the
    (rows, 1) nest of sqrt(var + eps) with a size of its own); exp(x) / sum(exp(x), axis=0)
    needs every row's exp before its division, so its nests keep their loops and exp is
    recomputed (no temporary of the whole array either)."""
    def layernorm(x):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5)

    def by_columns(x):
        e = jnp.exp(x)
        return e / jnp.sum(e, axis=0)
    x = rng.standard_normal((64, 200)).astype(f32)
    srcs = {}
    for f, loops in ((layernorm, 1), (by_columns, 2)):
        exe, _ = compile_cpu(f, x)
        srcs[f] = src = exe.kernels[0].source
        assert src.count("for i0 in range(n0):") == loops, src
        np.testing.assert_allclose(np.asarray(exe(x)[0]), run_interpret(f, x)[0], rtol=1e-5,
                                   atol=1e-6)
    assert "np.empty((n1" not in srcs[layernorm]  # (no row buffer)
    assert _nests_calling(srcs[by_columns], "exp_f32") == 2
    assert "np.empty((n0, n1,)" not in srcs[by_columns]



def test_a_row_buffer_replaces_a_temporary_used_only_at_its_row():
    """render._row_buffers: a temporary stored and read only at [i0, ...] inside one group's
    loop becomes one row's buffer (allocated in the threaded loop, indexed without i0);
    used at another row, by a size, or outside the group, it stays (False: the caller
    keeps the kernel without it)."""
    def group(body, before=()):
        return {"before": [(1, "n0 = x0.shape[0]", None), (1, "n1 = x0.shape[1]", None),
                           (1, "t1 = np.empty((n0, n1,), np.float32)", None), *before],
                "loop": (1, "for i0 in prange(n0):", None), "nests": [0, 1],
                "body": [(2, text, None) for text in body]}
    ok = [group(["t1[i0, 3] = v0", "v1 = t1[i0, i1]"])]
    assert cpu_render._row_buffers(ok, {"t1"})
    assert [t for _, t, _ in ok[0]["body"]] == ["t1 = np.empty((n1,), np.float32)",
                                                 "t1[3] = v0", "v1 = t1[i1]"]
    assert not any("t1" in t for _, t, _ in ok[0]["before"])
    for segments in ([group(["t1[i0, 3] = v0", "v1 = t1[i1, i0]"])],
                     [group(["t1[i0, 3] = v0"], [(1, "n2 = t1.shape[1]", None)])],
                     [group(["t1[i0, 3] = v0"]), [(1, "v2 = t1[0, 0]", None)]]):
        assert not cpu_render._row_buffers(segments, {"t1"})


@pytest.mark.parametrize("n", [1, 5, 64, 65, 1000])
@pytest.mark.parametrize("dtype", [f32, f64, np.int32, np.uint8, np.bool_])
def test_argmax_and_argmin_over_any_axis_are_numpys(dtype, n):
    """rt.argmax_rows/argmin_rows (the best value by a vectorized reduction, then the first
    index holding it, searched by blocks of 64) and, over another axis, rt.*_cols (columns
    side by side, the index moved by arithmetic): ties take the first index, -0.0 and +0.0
    tie, a NaN wins (the first NaN), infinities and extreme integers count as numbers;
    against np.argmax/np.argmin."""
    import jitviz
    rng = np.random.default_rng(n)
    rows = 40
    if dtype == np.bool_:
        x = rng.random((rows, n)) < 0.05
    elif np.dtype(dtype).kind == "f":
        x = rng.integers(-3, 4, (rows, n)).astype(dtype)  # (many ties)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
        spots = rng.integers(0, n, (rows, 3))
        for r in range(rows):
            if r % 4:  # most rows hold a few specials; every fourth none
                x[r, spots[r]] = rng.choice(specials, 3)
        x[0] = -0.0
        x[1, :] = -np.inf
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, (rows, n), dtype=dtype, endpoint=True)
        x[0, -1] = info.max
    for fn, ref in ((jnp.argmax, np.argmax), (jnp.argmin, np.argmin)):
        jf = jitviz.jit(lambda v: fn(v, axis=-1))
        np.testing.assert_array_equal(np.asarray(jf(x)), ref(x, axis=-1))
        assert "_rows(" in jf.lower(x).compile().executable.driver_source
    for fn, ref in ((jnp.argmax, np.argmax), (jnp.argmin, np.argmin)):
        jf = jitviz.jit(lambda v: fn(v, axis=0))
        np.testing.assert_array_equal(np.asarray(jf(x)), ref(x, axis=0))
        form = "_cols(" if n > 1 else "_rows("  # ((rows, 1) over axis 0: post is 1)
        assert form in jf.lower(x).compile().executable.driver_source
        x3 = np.stack([x, x[::-1]], axis=1)  # (rows, 2, n): the middle axis of three
        np.testing.assert_array_equal(np.asarray(jitviz.jit(lambda v: fn(v, axis=1))(x3)),
                                      ref(x3, axis=1))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_argmax_and_argmin_of_complex_numbers_are_type_errors_as_in_jax(backend):
    """JAX's argmax/argmin compare with gt/lt, which take no complex: a TypeError naming the
    function and dtype when tracing, on every backend (the CPU kernel had no order for
    complex numbers and failed inside Numba; the interpreter answered NumPy's)."""
    import jitviz
    z = np.array([[1 + 2j, 3 + 0j], [2 + 0j, 2 + 5j]], np.complex64)
    for fn, name in ((lambda v: jnp.argmax(v, axis=1), "argmax"),
                     (lambda v: lax.argmin(v, 0, np.int32), "argmin")):
        with pytest.raises(TypeError, match=rf"{name} does not accept dtype complex64"):
            jitviz.jit(fn, backend=backend)(z)
