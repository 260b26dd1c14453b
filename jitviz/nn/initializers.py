"""`jitviz.nn.initializers`, as `jax.nn.initializers`: each builder returns
`init(key, shape, dtype=None)` drawing from `jitviz.random` (the same bits as JAX for the same
key; `normal` and `truncated_normal` use jitviz's float32 erfinv, equal to a few ulps)."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import numpy as jnp
from .. import random

_TRUNC_STD = 0.87962566103423978  # stddev of a standard normal truncated to (-2, 2)


def _dtype(dtype):
    return dtypes.default_float() if dtype is None else np.dtype(dtype)


def zeros(key, shape, dtype=None):
    """`jax.nn.initializers.zeros`."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None):
    """`jax.nn.initializers.ones`."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """`jax.nn.initializers.constant`: arrays full of `value`."""
    def init(key, shape, dtype=dtype):
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """`jax.nn.initializers.uniform`: U[0, scale)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * jnp.asarray(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    """`jax.nn.initializers.normal`: N(0, stddev^2)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * jnp.asarray(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """`jax.nn.initializers.truncated_normal`: stddev * a standard normal truncated to
    (lower, upper)."""
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * jnp.asarray(stddev, dt)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError("Can't compute input and output sizes of a "
                         f"{len(shape)}-dimensional weights tensor. Must be at least 2D.")
    size = lambda axes: shape[axes] if isinstance(axes, int) else \
        math.prod(shape[i] for i in axes)  # noqa: E731
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """`jax.nn.initializers.variance_scaling`: variance scale / fan (fan_in, fan_out,
    fan_avg or fan_geo_avg), drawn from a truncated normal, a normal or a uniform."""
    def init(key, shape, dtype=dtype):
        shape = tuple(int(s) for s in shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}.get(mode)
        if denominator is None:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.asarray(scale / denominator, dtype=dt)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.asarray(_TRUNC_STD, dt)
            return random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * jnp.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dt, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def _preset(scale, mode, distribution, doc):
    def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    builder.__doc__ = doc
    return builder


glorot_uniform = _preset(1.0, "fan_avg", "uniform", "`jax.nn.initializers.glorot_uniform`.")
glorot_normal = _preset(1.0, "fan_avg", "truncated_normal",
                        "`jax.nn.initializers.glorot_normal`.")
lecun_uniform = _preset(1.0, "fan_in", "uniform", "`jax.nn.initializers.lecun_uniform`.")
lecun_normal = _preset(1.0, "fan_in", "truncated_normal", "`jax.nn.initializers.lecun_normal`.")
he_uniform = _preset(2.0, "fan_in", "uniform", "`jax.nn.initializers.he_uniform`.")
he_normal = _preset(2.0, "fan_in", "truncated_normal", "`jax.nn.initializers.he_normal`.")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal

__all__ = ["constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal",
           "ones", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
           "xavier_uniform", "zeros"]
