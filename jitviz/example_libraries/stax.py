"""`jax.example_libraries.stax`: neural-network layers as `(init_fun, apply_fun)` pairs, as
JAX's example library defines them.

    from jitviz.example_libraries import stax
    init_fun, apply_fun = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10),
                                      stax.LogSoftmax)
    out_shape, params = init_fun(random.PRNGKey(0), (-1, 784))   # -1: any batch size
    logits = apply_fun(params, images)

`init_fun(rng, input_shape) -> (output_shape, params)` and `apply_fun(params, inputs,
**kwargs)`; a batch dimension given as -1 stays -1 in the shapes, except after a pooling
layer, where JAX's shape formula makes it 0 (kept, so shapes print as JAX's). Initial parameters are drawn
with `jitviz.nn.initializers` exactly as JAX's are (the same key gives the same numbers), and
the layers compute with `jnp`/`lax`, so a stax model traces into an ordinary program that every
backend compiles. One quirk is JAX's and kept: `Dropout(rate)` takes the probability of
*keeping* a unit.
"""
from __future__ import annotations

import functools
import operator

from .. import lax, random
from .. import numpy as jnp
from ..nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,  # noqa: F401
                  softplus, standardize)
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "Conv1DTranspose", "ConvTranspose",
           "GeneralConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp",
           "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu",
           "MaxPool", "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum",
           "FanInConcat", "Dropout", "serial", "parallel", "shape_dependent", "glorot",
           "glorot_normal", "randn", "normal", "ones", "zeros", "logsoftmax"]

glorot, randn = glorot_normal, normal
logsoftmax = log_softmax


# --- dense and convolutional layers -------------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802,N803 (JAX's names)
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))  # noqa: N806
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _with_unit_batch(shape, batch_axis):
    """`shape` with an unknown (-1) batch size replaced by 1, and whether it was unknown."""
    unknown = shape[batch_axis] < 0
    return tuple(1 if (k == batch_axis and unknown) else d for k, d in enumerate(shape)), unknown


def _output_shape(apply_one, input_shape, kernel_shape, lhs_batch_axis, out_batch_axis):
    """The output shape of a convolution, by abstract evaluation (no FLOPs): a -1 batch size
    goes through unchanged, as JAX's shape formulas let it."""
    from .. import ShapeDtypeStruct, eval_shape
    concrete, unknown = _with_unit_batch(tuple(input_shape), lhs_batch_axis)
    out = eval_shape(apply_one, ShapeDtypeStruct(concrete, jnp.float32),
                     ShapeDtypeStruct(tuple(kernel_shape), jnp.float32)).shape
    return tuple(-1 if (unknown and k == out_batch_axis) else d for k, d in enumerate(out))


def _kernel_shape(rhs_spec, lhs_spec, input_shape, filter_shape, out_chan):
    spatial = iter(filter_shape)
    return tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                 else next(spatial) for c in rhs_spec)


def _conv_layer(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init):  # noqa: N803
    """A convolution layer around `conv(inputs, W)`, plus a bias over the output channels."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, filter_shape, out_chan)
        output_shape = _output_shape(conv, input_shape, kernel_shape, lhs_spec.index("N"),
                                     out_spec.index("N"))
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return conv(inputs, W) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A convolution with layouts `dimension_numbers = (lhs_spec, rhs_spec, out_spec)`,
    e.g. ('NHWC', 'HWIO', 'NHWC'), plus a bias over the output channels."""
    one = (1,) * len(filter_shape)
    strides = strides or one

    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)
    return _conv_layer(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                         padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A transposed convolution (`lax.conv_transpose`) plus a bias."""
    strides = strides or (1,) * len(filter_shape)

    def conv(x, w):
        return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dimension_numbers)
    return _conv_layer(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Normalizes over `axis` with the batch's own statistics (no running averages), then
    scales by gamma and shifts by beta, which have the shape of the other axes."""
    axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)

    def init_fun(rng, input_shape):
        shape = tuple(d for k, d in enumerate(input_shape) if k not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        spread = tuple(None if k in axis else slice(None) for k in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[spread] * z + beta[spread]
        if center:
            return z + beta[spread]
        if scale:
            return gamma[spread] * z
        return z
    return init_fun, apply_fun


# --- elementwise layers -------------------------------------------------------------------

def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# --- pooling ------------------------------------------------------------------------------

def _window_output_shape(input_shape, window, strides, pads):
    """`lax.reduce_window`'s output shape by JAX's formula, which clamps at 0: so a -1 batch
    size comes out of a pooling layer as 0, as it does in JAX."""
    return tuple(max(0, (n + lo + hi - w) // s + 1)
                 for n, w, s, (lo, hi) in zip(input_shape, window, strides, pads))


def _full_window(window_shape, strides, spec, ndim_spatial):
    """Window and strides over all axes: 1 on the batch and channel axes (NHWC unless
    `spec` names them)."""
    batch_and_channel = (0, ndim_spatial + 1) if spec is None else \
        (spec.index("N"), spec.index("C"))
    window, steps = tuple(window_shape), tuple(strides)
    for k in sorted(batch_and_channel):
        window, steps = window[:k] + (1,) + window[k:], steps[:k] + (1,) + steps[k:]
    return window, steps, batch_and_channel


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        strides = strides or (1,) * len(window_shape)
        window, steps, batch_and_channel = _full_window(window_shape, strides, spec,
                                                        len(window_shape))

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window, steps, padding) \
                if isinstance(padding, str) else padding
            return _window_output_shape(input_shape, window, steps, pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
            if not average:
                return out
            # divide by how many entries each window covered (fewer at padded edges)
            spatial = tuple(d for k, d in enumerate(inputs.shape) if k not in batch_and_channel)
            counts = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0.0, lax.add,
                                       tuple(window_shape), tuple(strides), padding)
            return out / jnp.expand_dims(counts, tuple(sorted(batch_and_channel)))
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, average=True)


# --- shape and data-flow layers -----------------------------------------------------------

def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()
Identity = elementwise(lambda x: x)


def FanOut(num):  # noqa: N802
    """One input to `num` copies (for `parallel`)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """In "train" mode, keep each unit with probability `rate` (JAX's meaning: the keep
    rate) and scale the kept ones by 1/rate; needs `rng=` when applied."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=key)` where `key` is a PRNG key (e.g. from "
                "`jitviz.random.key`).")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# --- combinators --------------------------------------------------------------------------

def serial(*layers):
    """Layers one after the other; each gets its own key (split from `rng`) when applied
    with one."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side: the k-th takes the k-th of a list of inputs (see `FanOut`)."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(shape for shape, _ in results), tuple(param for _, param in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs,
                                                                rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape: `make_layer(shape) -> (init_fun, apply_fun)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
