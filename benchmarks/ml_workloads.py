"""The workloads real array code is made of, for bench_cpu.py: softmax and logsumexp over rows,
layernorm, GELU, pairwise distances by broadcasting, cumsum, and a fori_loop whose body is
elementwise math. Each is written once against an array module (run with jitviz.numpy, NumPy
and jax.numpy, jitted for jitviz and JAX) and once as a hand-written Numba loop (the output
allocated by NumPy, as bench_cpu's other loops)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

import jitviz.numpy as jnp
from _timing import numpy_output
from jitviz import lax

GELU_C = math.sqrt(2.0 / math.pi)


# --- the programs, once for jitviz.numpy, NumPy and jax.numpy ------------------------------

def programs(xp, fori_loop=None):
    """The workloads written against the array module `xp` (Python float constants: weak
    in JAX and jitviz, and kept at float32 by NumPy 2's promotion rules)."""
    def softmax(x):
        e = xp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def logsumexp(x):
        m = x.max(axis=-1, keepdims=True)
        return xp.log(xp.exp(x - m).sum(axis=-1)) + m[:, 0]

    def layernorm(x):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / xp.sqrt(var + 1e-5)

    def gelu(x):
        return 0.5 * x * (1.0 + xp.tanh(GELU_C * (x + 0.044715 * x ** 3)))

    def pairwise(p):
        d = p[:, None, :] - p[None, :, :]
        return xp.sqrt((d * d).sum(axis=-1))

    def damped(x):
        body = lambda i, y: y * 0.99 + xp.sin(y) * 0.01  # noqa: E731
        if fori_loop is not None:
            return fori_loop(0, 100, body, x)
        for i in range(100):  # NumPy: the loop in Python, each step over the whole array
            x = body(i, x)
        return x

    return dict(softmax=softmax, logsumexp=logsumexp, layernorm=layernorm, gelu=gelu,
                pairwise=pairwise, cumsum=xp.cumsum, damped=damped)


# --- hand-written Numba --------------------------------------------------------------------

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


nb_softmax, nb_layernorm = numpy_output(_nb_softmax), numpy_output(_nb_layernorm)
nb_gelu, nb_damped = numpy_output(_nb_gelu), numpy_output(_nb_damped)


# --- the table ---------------------------------------------------------------------------

def rows(rng, jax=None, xnp=None):
    """(name, size, make args, jitviz, NumPy, Numba, jax.jit or None)."""
    ours, theirs = programs(jnp, lax.fori_loop), programs(np)
    jx = {k: jax.jit(f) for k, f in programs(xnp, jax.lax.fori_loop).items()} if jax else {}
    numba = dict(softmax=nb_softmax, logsumexp=nb_logsumexp, layernorm=nb_layernorm,
                 gelu=nb_gelu, pairwise=nb_pairwise, cumsum=nb_cumsum, damped=nb_damped)
    by_rows = lambda: (rng.standard_normal((4096, 1024)).astype(np.float32),)  # noqa: E731
    vec = lambda: (rng.standard_normal(1_000_000).astype(np.float32),)  # noqa: E731
    pts = lambda: (rng.standard_normal((2000, 3)).astype(np.float32),)  # noqa: E731
    small = lambda: (rng.standard_normal(100_000).astype(np.float32),)  # noqa: E731
    table = [("softmax over rows", "4096x1024 f32", by_rows, "softmax"),
             ("logsumexp over rows", "4096x1024 f32", by_rows, "logsumexp"),
             ("layernorm over rows", "4096x1024 f32", by_rows, "layernorm"),
             ("GELU (tanh form)", "1M f32", vec, "gelu"),
             ("pairwise distances (broadcast)", "2000x3 -> 2000x2000", pts, "pairwise"),
             ("cumsum", "1M f32", vec, "cumsum"),
             ("fori_loop, elementwise body x100", "100k f32", small, "damped")]
    return [(name, size, args, ours[k], theirs[k], numba[k], jx.get(k))
            for name, size, args, k in table]
