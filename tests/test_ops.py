"""jitviz.ops (`jax.ops`): segment reductions, checked against NumPy loops written out, and
against JAX when it is installed, on the interpreter and the CPU backend."""
import numpy as np
import pytest

import jitviz

BACKENDS = ["interpret", "cpu"]
RNG = np.random.default_rng(3)
DATA = RNG.standard_normal((8, 3)).astype(np.float32)
INTS = RNG.integers(-5, 6, (8,)).astype(np.int32)
IDS = np.array([0, 2, 2, -1, 5, 1, 0, 2], np.int32)  # -1 and 5: out of range, dropped
OPS = {"segment_sum": (np.add, 0), "segment_prod": (np.multiply, 1),
       "segment_max": (np.maximum, None), "segment_min": (np.minimum, None)}


def reference(name, data, ids, n):
    """The loop the scatter stands for, from the operation's identity."""
    op, start = OPS[name]
    if start is None:
        low = name == "segment_max"
        if data.dtype.kind == "f":
            start = -np.inf if low else np.inf
        else:
            start = np.iinfo(data.dtype).min if low else np.iinfo(data.dtype).max
    out = np.full((n,) + data.shape[1:], start, data.dtype)
    for row, k in zip(data, ids):
        if 0 <= k < n:
            out[k] = op(out[k], row)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("data", [DATA, INTS], ids=["float32", "int32"])
def test_segment_reductions_drop_ids_out_of_range_and_fill_empty_segments(backend, name, data):
    f = jitviz.jit(lambda d, i: getattr(jitviz.ops, name)(d, i, num_segments=4),
                   backend=backend)
    got = f(data, IDS)
    want = reference(name, data, IDS, 4)  # segment 3 is empty
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_num_segments_defaults_to_the_largest_id_plus_one_outside_jit():
    got = jitviz.ops.segment_sum(DATA, IDS)
    np.testing.assert_allclose(np.asarray(got), reference("segment_sum", DATA, IDS, 6),
                               rtol=1e-6)
    with pytest.raises(jitviz.errors.ConcretizationTypeError, match="pass num_segments="):
        jitviz.jit(jitviz.ops.segment_sum)(DATA, IDS)


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        jitviz.ops.segment_sum(DATA > 0, IDS, 4)
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        jitviz.ops.segment_max(DATA, IDS.astype(np.float32), 4)
    with pytest.raises(ValueError, match="one id per row"):
        jitviz.ops.segment_min(DATA, IDS[:3], 4)
    with pytest.raises(ValueError, match="non-negative"):
        jitviz.ops.segment_sum(DATA, IDS, -1)


def test_segment_sum_is_differentiable_and_batches():
    g = jitviz.grad(lambda d: jitviz.ops.segment_sum(d, IDS, 4).sum())(DATA)
    np.testing.assert_array_equal(np.asarray(g), np.where((0 <= IDS) & (IDS < 4), 1.0,
                                                          0.0)[:, None] * np.ones_like(DATA))
    batched = jitviz.vmap(lambda d: jitviz.ops.segment_max(d, IDS, 4), in_axes=1)(DATA)
    np.testing.assert_allclose(np.asarray(batched), reference("segment_max", DATA, IDS, 4).T)


def test_matches_jax_when_installed():
    jax = pytest.importorskip("jax")
    for name in OPS:
        for data in (DATA, INTS):
            for n in (4, None):
                want = getattr(jax.ops, name)(data, IDS, num_segments=n)
                got = getattr(jitviz.ops, name)(data, IDS, num_segments=n)
                assert got.dtype == want.dtype
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
