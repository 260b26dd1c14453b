"""The workloads real array code is made of, for bench_cpu.py: softmax and logsumexp over rows,
layernorm, GELU, pairwise distances by broadcasting, cumsum, and a fori_loop whose body is
elementwise math. Each is written four times, as a user of each would write it: jitviz.numpy,
NumPy, a hand-written Numba loop (the output allocated by NumPy, as bench_cpu's other loops),
and jax.numpy (when JAX is installed)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

import jitviz.numpy as jnp
from jitviz import lax

GELU_C = math.sqrt(2.0 / math.pi)


# --- jitviz ------------------------------------------------------------------------------

def softmax(x):
    e = jnp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return jnp.log(jnp.exp(x - m).sum(axis=-1)) + m[:, 0]


def layernorm(x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)


def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(GELU_C * (x + 0.044715 * x ** 3)))


def pairwise(p):
    d = p[:, None, :] - p[None, :, :]
    return jnp.sqrt((d * d).sum(axis=-1))


def cumsum(x):
    return jnp.cumsum(x)


def damped(x):
    return lax.fori_loop(0, 100, lambda i, y: y * 0.99 + jnp.sin(y) * 0.01, x)


# --- NumPy ---------------------------------------------------------------------------------

def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=-1)) + m[:, 0]


def np_layernorm(x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(1e-5))


def np_gelu(x):
    c, k = np.float32(GELU_C), np.float32(0.044715)
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + k * x ** 3)))


def np_pairwise(p):
    d = p[:, None, :] - p[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


def np_damped(x):
    y = x
    for _ in range(100):
        y = y * np.float32(0.99) + np.sin(y) * np.float32(0.01)
    return y


# --- hand-written Numba --------------------------------------------------------------------

def _into_new(loop):
    def run(x):
        out = np.empty_like(x)
        loop(x, out)
        return out
    return run


@njit(cache=True)
def _nb_softmax(x, out):
    for i in range(x.shape[0]):
        m = x[i, 0]
        for j in range(x.shape[1]):
            m = max(m, x[i, j])
        s = np.float32(0)
        for j in range(x.shape[1]):
            out[i, j] = np.exp(x[i, j] - m)
            s += out[i, j]
        for j in range(x.shape[1]):
            out[i, j] /= s


@njit(cache=True)
def nb_logsumexp(x):
    out = np.empty(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        m = x[i, 0]
        for j in range(x.shape[1]):
            m = max(m, x[i, j])
        s = np.float32(0)
        for j in range(x.shape[1]):
            s += np.exp(x[i, j] - m)
        out[i] = np.log(s) + m
    return out


@njit(cache=True)
def _nb_layernorm(x, out):
    n = x.shape[1]
    for i in range(x.shape[0]):
        s = np.float32(0)
        for j in range(n):
            s += x[i, j]
        mean = s / n
        v = np.float32(0)
        for j in range(n):
            d = x[i, j] - mean
            v += d * d
        inv = np.float32(1) / np.sqrt(v / n + np.float32(1e-5))
        for j in range(n):
            out[i, j] = (x[i, j] - mean) * inv


@njit(cache=True)
def _nb_gelu(x, out):
    c, k = np.float32(GELU_C), np.float32(0.044715)
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = np.float32(0.5) * v * (np.float32(1) + np.tanh(c * (v + k * v * v * v)))


@njit(cache=True)
def nb_pairwise(p):
    n = p.shape[0]
    out = np.empty((n, n), p.dtype)
    for i in range(n):
        for j in range(n):
            s = np.float32(0)
            for k in range(p.shape[1]):
                d = p[i, k] - p[j, k]
                s += d * d
            out[i, j] = np.sqrt(s)
    return out


@njit(cache=True)
def nb_cumsum(x):
    return np.cumsum(x)


@njit(cache=True)
def _nb_damped(x, out):
    for i in range(x.shape[0]):
        y = x[i]
        for _ in range(100):
            y = y * np.float32(0.99) + np.sin(y) * np.float32(0.01)
        out[i] = y


nb_softmax, nb_layernorm = _into_new(_nb_softmax), _into_new(_nb_layernorm)
nb_gelu, nb_damped = _into_new(_nb_gelu), _into_new(_nb_damped)


# --- JAX -----------------------------------------------------------------------------------

def jax_versions(jax, xnp):
    """The same programs in jax.numpy, jitted (None for each without JAX)."""
    if jax is None:
        return {}

    def j_softmax(x):
        e = xnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def j_logsumexp(x):
        m = x.max(axis=-1, keepdims=True)
        return xnp.log(xnp.exp(x - m).sum(axis=-1)) + m[:, 0]

    def j_layernorm(x):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / xnp.sqrt(var + 1e-5)

    def j_gelu(x):
        return 0.5 * x * (1.0 + xnp.tanh(GELU_C * (x + 0.044715 * x ** 3)))

    def j_pairwise(p):
        d = p[:, None, :] - p[None, :, :]
        return xnp.sqrt((d * d).sum(axis=-1))

    def j_damped(x):
        return jax.lax.fori_loop(0, 100, lambda i, y: y * 0.99 + xnp.sin(y) * 0.01, x)

    fns = dict(softmax=j_softmax, logsumexp=j_logsumexp, layernorm=j_layernorm,
               gelu=j_gelu, pairwise=j_pairwise, cumsum=xnp.cumsum, damped=j_damped)
    return {k: jax.jit(f) for k, f in fns.items()}


def rows(rng):
    """(name, size, make args, jitviz, NumPy, Numba, key of the JAX version)."""
    rows_ = lambda: (rng.standard_normal((4096, 1024)).astype(np.float32),)  # noqa: E731
    vec = lambda: (rng.standard_normal(1_000_000).astype(np.float32),)  # noqa: E731
    pts = lambda: (rng.standard_normal((2000, 3)).astype(np.float32),)  # noqa: E731
    small = lambda: (rng.standard_normal(100_000).astype(np.float32),)  # noqa: E731
    return [
        ("softmax over rows", "4096x1024 f32", rows_, softmax, np_softmax, nb_softmax,
         "softmax"),
        ("logsumexp over rows", "4096x1024 f32", rows_, logsumexp, np_logsumexp,
         nb_logsumexp, "logsumexp"),
        ("layernorm over rows", "4096x1024 f32", rows_, layernorm, np_layernorm,
         nb_layernorm, "layernorm"),
        ("GELU (tanh form)", "1M f32", vec, gelu, np_gelu, nb_gelu, "gelu"),
        ("pairwise distances (broadcast)", "2000x3 -> 2000x2000", pts, pairwise,
         np_pairwise, nb_pairwise, "pairwise"),
        ("cumsum", "1M f32", vec, cumsum, np.cumsum, nb_cumsum, "cumsum"),
        ("fori_loop, elementwise body x100", "100k f32", small, damped, np_damped,
         nb_damped, "damped"),
    ]
