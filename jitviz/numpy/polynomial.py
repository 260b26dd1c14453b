"""Polynomials as coefficient arrays, highest power first, as `jax.numpy` has them: `poly`,
`polyadd`, `polysub`, `polymul`, `polydiv`, `polyder`, `polyint`, `polyfit`
(`polyval` is in mathextra.py).

Coefficient counts are static (they are shapes); `trim_leading_zeros=True` needs concrete
coefficients, as in JAX. `polyfit` solves its least-squares problem with Householder
reflections, unrolled over the (static) number of coefficients, so it is traceable and
differentiable in y and x.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes, lax
from ..core import explain
from ._core import aval, is_traced, promote, to_dtype
from .creation import arange, asarray, ones, zeros
from .indexing import where
from .shape import concatenate, reshape
from . import ufuncs as _u


def _operand(x):
    (x,) = promote(x)
    return x if is_traced(x) else asarray(x)


def _coefficients(name, *ps, inexact=False):
    ps = promote(*ps, inexact=inexact) if len(ps) > 1 or inexact else ps
    out = [_operand(p) for p in ps]
    for p in out:
        if aval(p).ndim != 1:
            raise ValueError(f"jnp.{name}: polynomial coefficients must be a 1-D array, got "
                             f"shape {aval(p).shape}")
    return out


def _pad_front(p, n):
    """p with zeros in front up to length n."""
    k = aval(p).shape[0]
    if k >= n:
        return p
    return concatenate([zeros(n - k, aval(p).dtype), p])


def _trim_leading_zeros(p, name):
    value = np.asarray(explain.concrete_or_error(
        p, f"The error arose in jnp.{name} with trim_leading_zeros=True: the number of leading "
           "zeros decides the result's shape."))
    nonzero = np.flatnonzero(value)
    start = nonzero[0] if nonzero.size else max(value.shape[0] - 1, 0)
    return p[int(start):]


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (real when the complex
    roots come in conjugate pairs, as in NumPy)."""
    from .mathextra import convolve
    z = _operand(seq_of_zeros)
    if aval(z).ndim == 2:
        raise NotImplementedError("jnp.poly of a square matrix (its characteristic "
                                  "polynomial) needs eigenvalues, which jitviz does not have "
                                  "yet; pass the roots as a 1-D array.")
    if aval(z).ndim > 2:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    (z,) = promote(reshape(z, (-1,)), inexact=True)
    dt = aval(z).dtype
    out = ones(1, dt)
    for i in range(aval(z).shape[0]):
        out = convolve(out, concatenate([ones(1, dt), _u.negative(z[i:i + 1])]))
    if dt.kind == "c" and not is_traced(z):
        roots = np.asarray(z)
        if np.array_equal(np.sort_complex(roots[roots.imag > 0]),
                          np.sort_complex(np.conj(roots[roots.imag < 0]))):
            out = asarray(np.real(np.asarray(out)) + 0j, dt)
    return reshape(out, ()) if aval(z).shape[0] == 0 else out


def polyadd(a1, a2):
    """The sum of two polynomials."""
    a1, a2 = _coefficients("polyadd", a1, a2)
    n = max(aval(a1).shape[0], aval(a2).shape[0])
    return _u.add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = _coefficients("polysub", a1, a2)
    n = max(aval(a1).shape[0], aval(a2).shape[0])
    return _u.subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution of their coefficients)."""
    from .mathextra import convolve
    a1, a2 = _coefficients("polymul", a1, a2)
    if trim_leading_zeros:
        a1, a2 = _trim_leading_zeros(a1, "polymul"), _trim_leading_zeros(a2, "polymul")
    if aval(a1).shape[0] == 0:
        a1 = zeros(1, aval(a1).dtype)
    if aval(a2).shape[0] == 0:
        a2 = zeros(1, aval(a2).dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial long division; the remainder keeps u's length
    (leading zeros) unless trim_leading_zeros."""
    u, v = _coefficients("polydiv", u, v, inexact=True)
    m, n = aval(u).shape[0] - 1, aval(v).shape[0] - 1
    scale = _u.reciprocal(v[0])
    q_len = max(m - n + 1, 1)
    q = zeros(q_len, aval(u).dtype)
    rem = u
    for k in range(0, m - n + 1):
        d = _u.multiply(scale, rem[k])
        q = q.at[k].set(d)
        rem = rem.at[k:k + n + 1].add(_u.negative(_u.multiply(d, v)))
    if trim_leading_zeros:
        rem = _trim_leading_zeros(rem, "polydiv")
    return q, rem


def polyder(p, m=1):
    """The m-th derivative's coefficients."""
    (p,) = _coefficients("polyder", p, inexact=True)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in range(m):
        n = aval(p).shape[0]
        if n <= 1:
            return zeros(0, aval(p).dtype)
        powers = arange(n - 1, 0, -1, dtype=aval(p).dtype)
        p = _u.multiply(p[:-1], powers)
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative's coefficients; k: the integration constants (one for all,
    or m of them, the first for the first integration)."""
    (p,) = _coefficients("polyint", p, inexact=True)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if m == 0:
        return p
    if k is None:
        k = zeros(m, aval(p).dtype)
    k = to_dtype(_operand(k), aval(p).dtype)
    if aval(k).ndim == 0:
        k = _u.multiply(k, ones(m, aval(p).dtype))
    if aval(k).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in range(m):
        n = aval(p).shape[0]
        powers = arange(n, 0, -1, dtype=aval(p).dtype)
        p = concatenate([_u.true_divide(p, powers), k[i:i + 1]])
    return p


# --- least squares fit ------------------------------------------------------------------------

def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through the points (x, y) (y may hold
    several columns, fitted separately), weighted by w."""
    from .extra import vander
    from .reductions import sum as sum_
    if full or cov:
        raise NotImplementedError("jnp.polyfit with full=True or cov=True (singular values, "
                                  "rank, covariance) is not supported by jitviz yet; the "
                                  "coefficients (the default) are.")
    deg = operator.index(explain.concrete_or_error(
        deg, "It arose in the deg argument of jnp.polyfit, which must be a static integer."))
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x, y = promote(x, y, inexact=True)
    x, y = _operand(x), _operand(y)
    if aval(x).ndim != 1:
        raise TypeError("expected 1D vector for x")
    if aval(x).shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if aval(y).ndim not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if aval(x).shape[0] != aval(y).shape[0]:
        raise TypeError("expected x and y to have same length")
    order = deg + 1
    if aval(x).shape[0] < order:
        raise ValueError(f"jnp.polyfit: {aval(x).shape[0]} points cannot determine "
                         f"{order} coefficients uniquely; lower deg")
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = to_dtype(_operand(w), aval(x).dtype)
        if aval(w).shape != aval(x).shape:
            raise TypeError("expected a 1-d array for weights of the same length as x")
        lhs = _u.multiply(lhs, w[:, None])
        rhs = _u.multiply(rhs, w if aval(rhs).ndim == 1 else w[:, None])
    # columns scaled to unit norm, as NumPy and JAX do, for a better conditioned solve
    scale = _u.sqrt(sum_(_u.square(lhs), axis=0))
    scale = where(scale == 0, to_dtype(1, aval(scale).dtype), scale)
    coeffs = _least_squares(_u.true_divide(lhs, scale), rhs)
    return _u.true_divide(coeffs, scale if aval(coeffs).ndim == 1 else scale[:, None])


def _least_squares(a, b):
    """argmin |a c - b| for a (n, m) of full column rank, n >= m: QR by Householder
    reflections (each column's entries below the diagonal reflected to zero, b reflected
    along), then back substitution."""
    from .reductions import sum as sum_
    n, m = aval(a).shape
    vector = aval(b).ndim == 1
    b = b[:, None] if vector else b
    for j in range(m):
        col = a[j:, j]
        norm = _u.sqrt(sum_(_u.square(col)))
        alpha = where(col[0] >= 0, _u.negative(norm), norm)  # away from col[0]: no cancellation
        v = col.at[0].add(_u.negative(alpha))
        vv = sum_(_u.square(v))
        beta = where(vv > 0, _u.true_divide(2, where(vv > 0, vv, 1)), 0)
        a = a.at[j:, :].add(_u.negative(_reflect(v, beta, a[j:, :])))
        b = b.at[j:, :].add(_u.negative(_reflect(v, beta, b[j:, :])))
    c = [None] * m
    for i in reversed(range(m)):
        acc = b[i]
        for k in range(i + 1, m):
            acc = _u.subtract(acc, _u.multiply(a[i, k], c[k]))
        c[i] = _u.true_divide(acc, a[i, i])
    from .shape import stack
    out = stack(c, axis=0)
    return out[:, 0] if vector else out


# --- roots: the eigenvalues of the companion matrix ---------------------------------------------

def roots(p, *, strip_zeros: bool = True):
    """`jnp.roots`: the roots of the polynomial with coefficients `p` (highest power first),
    as the eigenvalues of its companion matrix (`jnp.linalg.eigvals`), complex. Leading zeros
    are stripped, which needs concrete coefficients; `strip_zeros=False` works under jit and
    gives NaN for each root a leading zero stands for, as JAX's."""
    from .reductions import all as all_, argmin
    from .shape import atleast_1d
    (p,) = promote(p, inexact=True)
    p = atleast_1d(p)
    if aval(p).ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = aval(p).shape[0]
    if n < 2:
        return zeros((0,), np.result_type(aval(p).dtype, np.complex64))
    leading = where(all_(p == 0), n, argmin(p == 0))
    if strip_zeros:
        leading = int(explain.concrete_or_error(
            leading, "The error occurred in the jnp.roots() function. To use this within a "
            "JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros "
            "will result in some returned roots being set to NaN."))
        return _roots_no_zeros(p[leading:])
    from .extra import roll
    p = where(leading == n, to_dtype(1, aval(p).dtype), p)  # all zero: no LAPACK error
    found = _roots_no_zeros(roll(p, -leading))
    found = lax.sort_key_val(found == 0, found)[1]  # zero roots last
    k = aval(found).shape[0]
    nan = to_dtype(complex(np.nan, np.nan), aval(found).dtype)
    return where(arange(k) < k - leading, found, nan)


def _roots_no_zeros(p):
    """The eigenvalues of the companion matrix of p (p[0] != 0)."""
    from . import linalg
    from .extra import diag
    n = aval(p).shape[0]
    if n < 2:
        return zeros((0,), np.result_type(aval(p).dtype, np.complex64))
    companion = diag(ones((n - 2,), aval(p).dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(companion)


def _reflect(v, beta, block):
    """beta * v (v^T block): what the reflection I - beta v v^T removes from block."""
    from .reductions import sum as sum_
    proj = sum_(_u.multiply(v[:, None], block), axis=0)
    return _u.multiply(_u.multiply(beta, v[:, None]), proj[None, :])


__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyfit", "roots"]
