"""jitviz.random: JAX's bit streams (reference numbers from JAX 0.10.2, pasted below),
identical results eagerly, under jit (interpreter) and on the Numba CPU backend, traceable
and batchable keys, and the key-reuse diagnostic. (The CUDA lowering of `threefry2x32` is
checked in the simulator by tests/test_cuda_backend.py through the differential cases in
tests/test_primitives.py.)"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import jitviz
from jitviz import random

from helpers import x64_enabled  # noqa: E402

# jax.random with JAX 0.10.2 (jax_threefry_partitionable=True, its default)
JAX = {
    "key0": [0, 0],
    "key42": [0, 42],
    "split": [[1797259609, 2579123966], [928981903, 3453687069]],
    "split3": [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]],
    "fold": [2716826189, 292468403],
    "bits": [4070199207, 4202968722, 1427181096, 2012915765, 2447653815],
    "unif": [0.9476670026779175, 0.9785798788070679, 0.33229148387908936, 0.46866846084594727,
             0.569888710975647],
    "unif_range": [[0.1931624412536621, 0.668764591217041, 0.22959160804748535],
                   [0.19198167324066162, 2.486814022064209, 0.7947300672531128]],
    "normal": [1.622642159461975, 2.0252647399902344, -0.4335944354534149,
               -0.07861734926700592, 0.17609089612960815],
    "randint": [9, 0, 2, 3, 1, 7],
    "randint2": [580, 284, 305, 99],
    "bern": [False, False, False, False, False, True, False, False],
    "perm": [0, 1, 8, 5, 6, 4, 3, 2, 7, 9],
}


def draws(seed=0):
    k = random.PRNGKey(seed)
    return {
        "split": random.split(k),
        "split3": random.split(random.PRNGKey(42), 3),
        "fold": random.fold_in(k, 7),
        "bits": random.bits(k, (5,)),
        "unif": random.uniform(k, (5,)),
        "unif_range": random.uniform(random.PRNGKey(1), (2, 3), minval=-2.0, maxval=3.0),
        "normal": random.normal(k, (5,)),
        "randint": random.randint(k, (6,), 0, 10),
        "randint2": random.randint(random.PRNGKey(3), (4,), -5, 1000),
        "bern": random.bernoulli(k, 0.3, (8,)),
        "perm": random.permutation(k, 10),
    }


EXACT = ["split", "split3", "fold", "bits", "unif", "randint", "randint2", "bern", "perm"]


def test_keys_have_jax_layout():
    k = random.PRNGKey(0)
    assert k.dtype == np.uint32 and k.shape == (2,)
    assert np.asarray(k).tolist() == JAX["key0"]
    assert np.asarray(random.PRNGKey(42)).tolist() == JAX["key42"]
    assert np.asarray(random.key_data(random.key(42))).tolist() == JAX["key42"]
    with pytest.raises(TypeError, match="key_data"):  # as JAX: typed keys are not numbers
        np.asarray(random.key(42))


def test_streams_equal_jax():
    got = draws()
    for name in EXACT:
        assert np.asarray(got[name]).tolist() == JAX[name], name
    # normal: jitviz's float32 erfinv agrees with XLA's to a few ulps
    np.testing.assert_allclose(got["normal"], JAX["normal"], rtol=2e-6)
    np.testing.assert_allclose(got["unif_range"], JAX["unif_range"], rtol=1e-6)


@pytest.mark.filterwarnings("ignore::jitviz.random.KeyReuseWarning")  # draws() reuses k
@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_same_numbers_under_jit_on_every_backend(backend):
    eager = draws()
    jitted = jitviz.jit(lambda s: draws(s), backend=backend)(0)
    for name in eager:
        np.testing.assert_array_equal(np.asarray(jitted[name]), np.asarray(eager[name]),
                                      err_msg=f"{name} on {backend}")


def test_random_is_traceable_and_prints_threefry():
    text = str(jitviz.make_jaxpr(lambda k: random.uniform(k, (3,)))(random.PRNGKey(0)))
    assert "threefry2x32[word=2]" in text


def test_vmap_over_keys_and_traced_seed():
    keys = random.split(random.PRNGKey(7), 4)
    got = jitviz.vmap(lambda k: random.normal(k, (3,)))(keys)
    loop = np.stack([np.asarray(random.normal(k, (3,))) for k in keys])
    np.testing.assert_array_equal(got, loop)
    traced = jitviz.jit(lambda s: random.PRNGKey(s))(np.int32(5))
    assert np.asarray(traced).tolist() == np.asarray(random.PRNGKey(5)).tolist()


def test_distribution_sanity():
    x = np.asarray(random.normal(random.PRNGKey(1), (20000,)))
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    with x64_enabled():  # float64 draws need x64, as in JAX
        u = np.asarray(random.uniform(random.PRNGKey(2), (20000,), np.float64))
    assert u.dtype == np.float64 and 0 <= u.min() and u.max() < 1 and abs(u.mean() - .5) < .01
    p = np.asarray(random.permutation(random.PRNGKey(3), np.arange(50.0)))
    assert sorted(p.tolist()) == list(range(50))


def test_key_reuse_in_jit_is_reported():
    def f(k):
        a = random.uniform(k, (2,))
        b = random.uniform(k, (2,))  # the same key again
        return a + b
    with pytest.warns(random.KeyReuseWarning, match="random key reused"):
        jitviz.make_jaxpr(f)(random.PRNGKey(0))

    def g(k):
        k1, k2 = random.split(k)
        return random.uniform(k1, (2,)) + random.uniform(k2, (2,))
    with warnings.catch_warnings():
        warnings.simplefilter("error", random.KeyReuseWarning)
        jitviz.jit(g)(random.PRNGKey(0))


# --- typed keys (random.key), as JAX's ------------------------------------------------------

try:
    import jax as _jax
except ImportError:  # pragma: no cover - the jax extra is not installed
    _jax = None
needs_jax = pytest.mark.skipif(_jax is None, reason="JAX is not installed")


@needs_jax
def test_typed_keys_print_split_and_draw_as_jax():
    ours, theirs = random.key(42), _jax.random.key(42)
    assert repr(ours) == repr(theirs) and str(ours.dtype) == str(theirs.dtype) == "key<fry>"
    for f in (lambda r, k: r.split(k), lambda r, k: r.split(k, 3)[1:],
              lambda r, k: r.fold_in(k, 7), lambda r, k: r.split(k)[0]):
        a, b = f(random, ours), f(_jax.random, theirs)
        assert repr(a) == repr(b) and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(random.key_data(a)),
                                      np.asarray(_jax.random.key_data(b)))
    draws = [lambda r, k: r.uniform(k, (3,)), lambda r, k: r.normal(k, (2,)),
             lambda r, k: r.randint(k, (4,), 0, 10), lambda r, k: r.bits(k, (2,)),
             lambda r, k: r.bernoulli(k, 0.3, (5,)), lambda r, k: r.permutation(k, 6)]
    for draw in draws:
        typed = np.asarray(draw(random, ours))
        raw = np.asarray(draw(random, random.PRNGKey(42)))  # the same key as raw data
        np.testing.assert_allclose(typed, np.asarray(draw(_jax.random, theirs)), rtol=1e-6)
        np.testing.assert_array_equal(typed, raw)
    wrapped = random.wrap_key_data(random.key_data(random.split(ours)))
    assert repr(wrapped) == repr(_jax.random.wrap_key_data(
        _jax.random.key_data(_jax.random.split(theirs))))


def test_prngkey_stays_raw_uint32():
    k = random.PRNGKey(0)
    assert k.dtype == np.uint32 and k.shape == (2,)
    assert random.split(k).shape == (2, 2) and random.fold_in(k, 1).shape == (2,)
    assert random.key_data(k) is k


def test_typed_keys_pass_through_jit_and_vmap():
    k = random.key(3)
    same = jitviz.jit(lambda k: k)(k)
    assert isinstance(same, random.KeyArray) and repr(same) == repr(k)
    out = jitviz.jit(lambda k: random.split(k, 4))(k)
    assert isinstance(out, random.KeyArray) and out.shape == (4,)
    np.testing.assert_array_equal(np.asarray(random.key_data(out)),
                                  np.asarray(random.key_data(random.split(k, 4))))
    keys = random.split(k, 3)
    batched = jitviz.vmap(lambda k: random.uniform(k, (2,)))(keys)
    loop = np.stack([np.asarray(random.uniform(kk, (2,))) for kk in keys])
    np.testing.assert_array_equal(np.asarray(batched), loop)
    assert [kk.shape for kk in keys] == [()] * 3 and len(keys) == 3


@needs_jax
def test_a_batch_of_keys_where_one_is_expected_is_jax_s_value_error():
    for module in (random, _jax.random):
        for keys in (module.split(module.key(0)), module.split(module.PRNGKey(0))):
            for draw in (lambda k: module.uniform(k), lambda k: module.split(k),
                         lambda k: module.fold_in(k, 1)):
                with pytest.raises(ValueError, match="single key"):
                    draw(keys)


def test_typed_key_errors_name_the_fix():
    with pytest.raises(ValueError, match="single key.*keys\\[0\\]"):
        random.uniform(random.split(random.key(0)))
    with pytest.raises(TypeError, match="last axis is 2"):
        random.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="threefry2x32"):
        random.key(0, impl="rbg")


@needs_jax
def test_typeof_of_typed_keys_prints_as_jax():
    """`jax.typeof(random.key(0))` is `key<fry>[]`, eagerly, under jit and under vmap."""
    seen = []
    for module, api in ((random, jitviz), (_jax.random, _jax)):
        k = module.key(0)
        keys = module.split(k, 3)
        api.jit(lambda k: seen.append(str(api.typeof(k))) or module.normal(k))(k)
        api.vmap(lambda k: seen.append(str(api.typeof(k))) or module.normal(k))(keys)
        t = api.typeof(keys)
        seen.append((str(api.typeof(k)), repr(t), t.shape, str(t.dtype),
                     api.typeof(k) == api.typeof(module.key(1))))
    ours, theirs = seen[:3], seen[3:]
    assert ours == theirs
    assert ours[2] == ("key<fry>[]", "ShapedArray(key<fry>[3])", (3,), "key<fry>", True)


@needs_jax
def test_eval_shape_and_shape_dtype_struct_of_typed_keys_follow_jax():
    results = []
    for module, api in ((random, jitviz), (_jax.random, _jax)):
        k = module.key(0)
        struct = api.ShapeDtypeStruct((), k.dtype)
        results.append([repr(r) for r in (
            struct, api.ShapeDtypeStruct((2,), k.dtype),
            api.eval_shape(lambda k: module.split(k, 4), k),
            api.eval_shape(lambda k: (lambda ks: (ks[0], module.normal(ks[1], (3,))))(
                module.split(k)), struct),
            api.eval_shape(lambda k: {"data": module.key_data(k)}, struct))])
    assert results[0] == results[1]
    assert results[0][2] == "ShapeDtypeStruct(shape=(4,), dtype=key<fry>)"

