"""jax.nn.dot_product_attention (the "xla" implementation): values against real JAX with
bias, boolean masks, causal and local-window masks, sequence lengths, grouped-query heads and
unbatched inputs, on the interpreter and the CPU backend; gradients and vmap; bad shapes."""
import numpy as np
import pytest

import jitviz
from jitviz import nn

jax = pytest.importorskip("jax")
rng = np.random.default_rng(2)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
Q = rng.normal(size=(B, T, N, H)).astype(np.float32)
KEY = rng.normal(size=(B, S, K, H)).astype(np.float32)
VAL = rng.normal(size=(B, S, K, H)).astype(np.float32)
KEY_N = rng.normal(size=(B, S, N, H)).astype(np.float32)
VAL_N = rng.normal(size=(B, S, N, H)).astype(np.float32)
BIAS = rng.normal(size=(1, N, T, S)).astype(np.float32)
MASK = rng.random((B, 1, T, S)) > 0.3

CASES = {
    "plain": ((Q, KEY_N, VAL_N), {}),
    "grouped heads": ((Q, KEY, VAL), {}),
    "bias and scale": ((Q, KEY_N, VAL_N), dict(bias=BIAS, scale=0.5)),
    "mask": ((Q, KEY_N, VAL_N), dict(mask=MASK)),
    "causal": ((Q, KEY, VAL), dict(is_causal=True)),
    "window": ((Q, KEY_N, VAL_N), dict(local_window_size=(1, 2))),
    "lengths": ((Q, KEY_N, VAL_N), dict(query_seq_lengths=np.array([3, 5], np.int32),
                                        key_value_seq_lengths=np.array([6, 2], np.int32))),
    "unbatched": ((Q[0], KEY_N[0], VAL_N[0]), dict(is_causal=True)),
}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(backend, name):
    args, kw = CASES[name]
    got = jitviz.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, **kw),
                     backend=backend)(*args)
    want = np.asarray(jax.nn.dot_product_attention(*args, **kw))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_gradients_and_vmap_match_jax():
    def loss(lib, q, k, v):
        return (lib.nn.dot_product_attention(q, k, v, is_causal=True) ** 2).sum()
    got = jitviz.grad(lambda q, k, v: loss(jitviz, q, k, v), argnums=(0, 1, 2))(Q, KEY, VAL)
    want = jax.grad(lambda q, k, v: loss(jax, q, k, v), argnums=(0, 1, 2))(Q, KEY, VAL)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-4, atol=1e-5)
    per = jitviz.vmap(lambda q: nn.dot_product_attention(q, KEY_N[0], VAL_N[0]))(Q)
    per_j = jax.vmap(lambda q: jax.nn.dot_product_attention(q, KEY_N[0], VAL_N[0]))(Q)
    np.testing.assert_allclose(per, np.asarray(per_j), rtol=2e-5, atol=2e-6)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="multiple of the number of key/value heads"):
        nn.dot_product_attention(Q, KEY_N[:, :, :3], VAL_N[:, :, :3])
    with pytest.raises(TypeError, match="mask must be boolean"):
        nn.dot_product_attention(Q, KEY_N, VAL_N, mask=MASK.astype(np.float32))
    with pytest.raises(NotImplementedError, match="'xla' implementation only"):
        nn.dot_product_attention(Q, KEY_N, VAL_N, implementation="cudnn")
