"""`jax.nn.dot_product_attention` (its "xla" implementation: the only one jitviz has),
composed from `jitviz.numpy`: scaled query-key products (`einsum`), the bias, the masks
(`mask`, `is_causal`, `local_window_size`, the sequence lengths) applied by replacing masked
logits with a large negative number as JAX does (not -inf: a fully masked row stays finite),
a float32 softmax, and the probability-weighted values. Grouped-query attention (fewer key /
value heads K than query heads N) repeats each key / value head for its N / K query heads.
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as jnp


def _large_negative(dtype):
    """The masked logit: -0.7 times the largest float (at most float32's), JAX's choice."""
    big = min(float(np.finfo(dtype).max), float(np.finfo(np.float32).max))
    return np.asarray(-0.7 * big, dtype)


def _as_bnts(x, name, B, N, T, S):
    """A bias or mask as 4-d (B, N, T, S)-broadcastable."""
    shape = lax.aval_of(x).shape
    if len(shape) > 4:
        raise ValueError(f"dot_product_attention: {name} must have at most 4 dimensions "
                         f"(B, N, T, S), got shape {shape}")
    x = jnp.reshape(x, (1,) * (4 - len(shape)) + tuple(shape))
    try:
        np.broadcast_shapes(lax.aval_of(x).shape, (B, N, T, S))
    except ValueError:
        raise ValueError(f"dot_product_attention: {name} of shape {shape} does not broadcast "
                         f"to (B, N, T, S) = {(B, N, T, S)}") from None
    return x


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None):
    """`jax.nn.dot_product_attention`: softmax(q k^T * scale + bias, masked) v over query
    (B, T, N, H) or (T, N, H), key / value (B, S, K, H) or (S, K, H); returns the query's
    shape with value's head size."""
    if implementation not in (None, "xla"):
        raise NotImplementedError(f"dot_product_attention(implementation={implementation!r}): "
                                  "jitviz has the 'xla' implementation only (pass None)")
    unbatched = lax.aval_of(query).ndim == 3
    if unbatched:
        query, key, value = (jnp.expand_dims(a, 0) for a in (query, key, value))
    for name, a in (("query", query), ("key", key), ("value", value)):
        if lax.aval_of(a).ndim != 4:
            raise ValueError(f"dot_product_attention: {name} must be (B, T|S, heads, H), got "
                             f"shape {lax.aval_of(a).shape}")
    B, T, N, H = lax.aval_of(query).shape
    _, S, K, _ = lax.aval_of(key).shape
    if lax.aval_of(value).shape[:3] != (B, S, K):
        raise ValueError(f"dot_product_attention: value's shape {lax.aval_of(value).shape} "
                         f"must match key's {lax.aval_of(key).shape} in (B, S, K)")
    if N % K:
        raise ValueError(f"dot_product_attention: the number of query heads ({N}) must be a "
                         f"multiple of the number of key/value heads ({K})")
    if N != K:  # grouped-query attention: query head n reads key/value head n // (N / K)
        key, value = (jnp.repeat(a, N // K, axis=2) for a in (key, value))
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    qdt = lax.aval_of(query).dtype
    logits_dt = np.promote_types(qdt, np.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dt)
    logits = logits * jnp.asarray(scale, logits_dt)
    if bias is not None:
        logits = (logits + _as_bnts(bias, "bias", B, N, T, S)).astype(logits_dt)
    keep = _keep_mask(mask, is_causal, query_seq_lengths, key_value_seq_lengths,
                      local_window_size, B, N, T, S)
    if keep is not None:
        logits = jnp.where(keep, logits, _large_negative(logits_dt))
    from . import softmax
    kdt = lax.aval_of(key).dtype
    probs = softmax(logits.astype(np.float32), axis=-1).astype(kdt)
    out = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if query_seq_lengths is not None:  # query positions past a sequence's length give 0
        rows = jnp.arange(T)[None, :] < jnp.asarray(query_seq_lengths)[:, None]
        out = out * rows[:, :, None, None].astype(lax.aval_of(out).dtype)
    return out[0] if unbatched else out


def _keep_mask(mask, is_causal, q_lengths, kv_lengths, window, B, N, T, S):
    """Where a logit is kept (broadcastable to (B, N, T, S)), or None for everywhere."""
    keep = None

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)
    if mask is not None:
        if lax.aval_of(mask).dtype != np.bool_:
            raise TypeError("dot_product_attention: mask must be boolean (True: attend), got "
                            f"{lax.aval_of(mask).dtype}")
        keep = both(keep, _as_bnts(mask, "mask", B, N, T, S))
    q_pos, k_pos = jnp.arange(T)[:, None], jnp.arange(S)[None, :]
    if is_causal:
        keep = both(keep, (q_pos >= k_pos)[None, None])
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep = both(keep, ((q_pos <= k_pos + left) & (q_pos >= k_pos - right))[None, None])
    if q_lengths is not None:
        rows = jnp.arange(T)[None, :, None] < jnp.asarray(q_lengths)[:, None, None]
        keep = both(keep, rows[:, None])
    if kv_lengths is not None:
        cols = jnp.arange(S)[None, None, :] < jnp.asarray(kv_lengths)[:, None, None]
        keep = both(keep, cols[:, None])
    return keep
