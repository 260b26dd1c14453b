"""`jnp.linalg`'s decompositions and what is built on them, composed as JAX composes them from
the `lax.linalg` primitives (cholesky, triangular_solve, lu, qr, eigh, svd): solve, inv, det,
slogdet, lstsq, pinv, matrix_power, matrix_rank, norm, cond, multi_dot, tensorsolve.

Every function works on a batch of matrices in the leading axes, promotes integer input to
the default float (as JAX), and refuses a wrong shape with JAX's exception class and message.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import NamedTuple

import numpy as np

from ..lax import linalg as lax_linalg
from ._core import aval, promote


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _jnp():
    from .. import numpy as jnp
    return jnp


def _inexact(*xs):
    return promote(*xs, inexact=True)


def _square(name, a):
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}.")


def _mT(x):
    return _jnp().swapaxes(x, -1, -2)


def _H(x):
    return _jnp().conj(_mT(x))


def _broadcast_batch(a, b, b_core):
    """`a` (..., m, m) and `b` (..., *b_core) broadcast to one batch shape (triangular_solve
    and lu work on equal batch dimensions)."""
    jnp = _jnp()
    sa, sb = aval(a).shape, aval(b).shape
    batch = np.broadcast_shapes(sa[:-2], sb[:len(sb) - b_core])
    return (jnp.broadcast_to(a, batch + sa[-2:]),
            jnp.broadcast_to(b, batch + sb[len(sb) - b_core:]))


# --- decompositions ------------------------------------------------------------------------

def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """`jnp.linalg.cholesky`: L with a = L L^H (upper: U = L^H), NaN where `a` is not
    positive definite."""
    (a,) = _inexact(a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(L) if upper else L


def qr(a, mode: str = "reduced"):
    """`jnp.linalg.qr`: QRResult(Q, R) ("reduced", "complete"), or R alone ("r")."""
    (a,) = _inexact(a)
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            raise NotImplementedError("jitviz's qr has no 'raw' mode (LAPACK's Householder "
                                      "vectors): use mode='reduced' or 'complete'")
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _uplo_lower(UPLO):
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO!r}")


def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """`jnp.linalg.eigh`: EighResult(eigenvalues ascending, eigenvectors as columns) of a
    Hermitian matrix."""
    (a,) = _inexact(a)
    v, w = lax_linalg.eigh(a, lower=_uplo_lower(UPLO), symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eig(a):
    """`jnp.linalg.eig`: EigResult(eigenvalues, right eigenvectors as unit columns) of a
    general square matrix, complex, in LAPACK geev's order."""
    (a,) = _inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """`jnp.linalg.eigvals`: the eigenvalues of a general square matrix, complex."""
    (a,) = _inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    """`jnp.linalg.eigvalsh`: the eigenvalues of a Hermitian matrix, ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """`jnp.linalg.svd`: SVDResult(U, S, Vh) with singular values descending, or S alone."""
    jnp = _jnp()
    (a,) = _inexact(a)
    if hermitian:
        w, v = eigh(a)
        s = jnp.abs(w)
        order = jnp.flip(jnp.argsort(s, axis=-1, stable=True), axis=-1)
        s = jnp.take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s
        sign = jnp.take_along_axis(jnp.sign(w), order, axis=-1)
        u = jnp.take_along_axis(v, order[..., None, :], axis=-1)
        return SVDResult(u, s, _H(u * sign[..., None, :].astype(aval(u).dtype)))
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def svdvals(x):
    """`jnp.linalg.svdvals`: the singular values, descending."""
    return svd(x, compute_uv=False)


# --- solves ---------------------------------------------------------------------------------

def _permute_rows(x, rows):
    """x[..., rows[..., i], j] for every i, j: one gather whose other indices are iotas (no
    index constants, and a concrete x works with traced rows)."""
    from .. import lax
    shape = aval(x).shape
    nd = len(shape)
    rows = _jnp().broadcast_to(rows[..., :, None], shape)
    index = [lax.broadcasted_iota(np.int32, shape, d) if d != nd - 2 else rows
             for d in range(nd)]
    return lax.gather(x, index, tuple(range(nd)))


def _lu_solve(lu, perm, b, trans=0):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), from a's LU (a[perm] =
    L U); b (..., m, n) with a's batch dimensions."""
    jnp = _jnp()
    if trans == 0:
        x = _permute_rows(b, perm)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    # a^T = U^T L^T P: row perm[i] of the result is row i of x
    return _permute_rows(x, jnp.argsort(perm, axis=-1))


def solve(a, b):
    """`jnp.linalg.solve`: x with a x = b, by LU with partial pivoting. b is a vector (m,)
    or a batch of matrices (..., m, n); batch dimensions broadcast."""
    jnp = _jnp()
    a, b = _inexact(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    _square("solve", a)
    if len(sb) == 1:
        if sb[0] != sa[-1]:
            raise ValueError(f"solve: b of shape {sb} does not match a of shape {sa} (its "
                             f"last axis must have {sa[-1]} entries)")
        x = solve(a, jnp.broadcast_to(b, sa[:-1])[..., None])
        return x[..., 0]
    if len(sa) == len(sb) + 1:
        raise ValueError(f"Invalid shapes for solve: {sa}, {sb}. Prior to JAX v0.5.0, this "
                         "would have been treated as a batched 1-dimensional solve. To recover "
                         "this behavior, use solve(a, b[..., None]).squeeze(-1).")
    if sb[-2] != sa[-1]:
        raise ValueError(f"solve: b of shape {sb} does not match a of shape {sa} (b needs "
                         f"{sa[-1]} rows)")
    a, b = _broadcast_batch(a, b, 2)
    lu, _, perm = lax_linalg.lu(a)
    return _lu_solve(lu, perm, b)


def inv(a):
    """`jnp.linalg.inv`: the inverse of each square matrix (solve with the identity)."""
    jnp = _jnp()
    (a,) = _inexact(a)
    _square("inv", a)
    n = aval(a).shape[-1]
    return solve(a, jnp.broadcast_to(jnp.eye(n, dtype=aval(a).dtype), aval(a).shape))


def _lu_diagonal_and_parity(a):
    """The diagonal of U and whether the row swaps of the LU of `a` are odd."""
    jnp = _jnp()
    lu, pivots, _ = lax_linalg.lu(a)
    diag = jnp.diagonal(lu, 0, -2, -1)
    k = aval(pivots).shape[-1]
    swaps = jnp.sum(pivots != jnp.arange(k, dtype=np.int32), axis=-1)
    return diag, (swaps % 2) == 1


def det(a):
    """`jnp.linalg.det`: the product of U's diagonal, negated for an odd permutation."""
    jnp = _jnp()
    (a,) = _inexact(a)
    _square("_det()", a)
    diag, odd = _lu_diagonal_and_parity(a)
    prod = jnp.prod(diag, axis=-1)
    return jnp.where(odd, -prod, prod)


def slogdet(a, *, method=None):
    """`jnp.linalg.slogdet`: SlogdetResult(sign, log|det|) (sign 0 and -inf when singular)."""
    jnp = _jnp()
    (a,) = _inexact(a)
    _square("slogdet()", a)
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`), and 'qr'." if method == "qr" else
                         f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`).")
    diag, odd = _lu_diagonal_and_parity(a)
    dtype = aval(a).dtype
    absd = jnp.abs(diag)
    logdet = jnp.sum(jnp.log(absd), axis=-1)
    if dtype.kind == "c":
        unit = diag / jnp.where(absd == 0, 1, absd).astype(dtype)
        sign = jnp.prod(unit, axis=-1)
    else:
        sign = jnp.prod(jnp.sign(diag), axis=-1)
    sign = jnp.where(odd, -sign, sign)
    singular = jnp.any(diag == 0, axis=-1)
    sign = jnp.where(singular, jnp.zeros_like(sign), sign)
    logdet = jnp.where(singular, -jnp.inf, logdet)
    return SlogdetResult(sign, logdet.astype(np.finfo(dtype).dtype))


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """`jnp.linalg.lstsq`: (x, residuals, rank, singular values) minimizing |a x - b|, by the
    SVD (JAX's algorithm: singular values below rcond * the largest are dropped)."""
    jnp = _jnp()
    a, b = _inexact(a, b)
    sa, sb = aval(a).shape, aval(b).shape
    if sa[0] != sb[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_vector = len(sb) == 1
    if b_vector:
        b = b[:, None]
    if len(sa) != 2:
        raise TypeError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    if aval(b).ndim != 2:
        raise TypeError(f"{len(sb)}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = sa
    dtype = aval(a).dtype
    if m * n == 0:
        s = jnp.zeros((0,), np.finfo(dtype).dtype)
        rank = jnp.asarray(0, dtype=np.int32)
        x = jnp.zeros((n,) + aval(b).shape[1:], dtype)
    else:
        eps = float(np.finfo(dtype).eps)
        rcond = eps * builtins.max(n, m) if rcond is None else \
            jnp.where(jnp.asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = s >= jnp.asarray(rcond, dtype=aval(s).dtype) * s[0]
        rank = jnp.sum(mask)
        safe = jnp.where(mask, s, 1).astype(dtype)
        s_inv = jnp.where(mask, 1 / safe, 0)[:, None]
        x = _H(vt) @ (s_inv * (_H(u) @ b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = jnp.zeros((0,), np.finfo(dtype).dtype)
    else:
        resid = norm(b - a @ x, axis=0) ** 2
    if b_vector:
        x = jnp.ravel(x)
    return x, resid, rank, s


def pinv(a, rtol=None, hermitian: bool = False):
    """`jnp.linalg.pinv`: the Moore-Penrose pseudo-inverse, singular values at or below
    rtol * the largest dropped (rtol defaults to 10 * max(m, n) * eps)."""
    jnp = _jnp()
    (a,) = _inexact(a)
    shape = aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"pinv requires an array of rank >= 2, got shape {shape}")
    m, n = shape[-2:]
    dtype = aval(a).dtype
    if m == 0 or n == 0:
        return jnp.zeros(shape[:-2] + (n, m), dtype)
    a = jnp.conj(a)
    real = np.finfo(dtype).dtype
    if rtol is None:
        rtol = 10.0 * builtins.max(m, n) * np.finfo(dtype).eps
    rtol = jnp.asarray(rtol, dtype=real)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = jnp.reshape(rtol, aval(rtol).shape + (1,) * (aval(s).ndim - aval(rtol).ndim))
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, jnp.inf).astype(dtype)
    return (_mT(vh) @ (_mT(u) / s[..., None])).astype(dtype)


def matrix_power(a, n):
    """`jnp.linalg.matrix_power`: a^n by repeated squaring (n < 0: of the inverse)."""
    jnp = _jnp()
    (a,) = promote(a)
    shape = aval(a).shape
    if len(shape) < 2:
        raise TypeError(f"{len(shape)}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if shape[-2] != shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return jnp.broadcast_to(jnp.eye(shape[-1], dtype=aval(a).dtype), shape)
    if n < 0:
        a, n = inv(a), -n
    result = square = None
    while n > 0:
        square = a if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else result @ square
    return result


def matrix_rank(M, rtol=None, *, tol=None):
    """`jnp.linalg.matrix_rank`: how many singular values exceed rtol * the largest
    (rtol defaults to max(m, n) * eps)."""
    jnp = _jnp()
    (M,) = _inexact(M)
    if tol is not None:
        rtol = tol
    if aval(M).ndim < 2:
        return jnp.any(M != 0).astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False)
    if rtol is None:
        dt = aval(S).dtype
        rtol = jnp.max(S, axis=-1) * np.asarray(builtins.max(aval(M).shape[-2:]) *
                                                np.finfo(dt).eps, dt)
    rtol = jnp.expand_dims(jnp.asarray(rtol), aval(jnp.asarray(rtol)).ndim)
    return jnp.sum(S > rtol, axis=-1)


# --- norms ----------------------------------------------------------------------------------

def _abs2_sum(x, axis, keepdims):
    jnp = _jnp()
    return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """`jnp.linalg.vector_norm`: the `ord`-norm of the entries over `axis` (all by
    default)."""
    jnp = _jnp()
    (x,) = _inexact(x)
    if ord is None or ord == 2:
        return _abs2_sum(x, axis, keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord in ("inf", "-inf"):
            msg += f"Use '{'-' if ord[0] == '-' else ''}jax.numpy.inf' instead."
        raise ValueError(msg)
    if ord == np.inf:
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    real = np.finfo(aval(x).dtype).dtype
    if ord == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(real)
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    p = np.asarray(ord, real)
    return jnp.power(jnp.sum(jnp.abs(x) ** p, axis=axis, keepdims=keepdims),
                     np.asarray(1 / p, real))


def _matrix_norm(x, ord, axis, keepdims):
    jnp = _jnp()
    row, col = axis
    if ord is None or ord in ("f", "fro"):
        return _abs2_sum(x, axis, keepdims)
    if ord in (1, -1):
        reduce = jnp.max if ord == 1 else jnp.min
        extra = {"initial": 0} if ord == 1 else {}
        if not keepdims and col > row:
            col -= 1
        return reduce(jnp.sum(jnp.abs(x), axis=row, keepdims=keepdims), axis=col,
                      keepdims=keepdims, **extra)
    if ord in (np.inf, -np.inf):
        reduce = jnp.max if ord == np.inf else jnp.min
        extra = {"initial": 0} if ord == np.inf else {}
        if not keepdims and row > col:
            row -= 1
        return reduce(jnp.sum(jnp.abs(x), axis=col, keepdims=keepdims), axis=row,
                      keepdims=keepdims, **extra)
    if ord in ("nuc", 2, -2):
        s = svd(jnp.moveaxis(x, axis, (-2, -1)), compute_uv=False)
        if ord == 2:
            y = jnp.max(s, axis=-1, initial=0)
        elif ord == -2:
            y = jnp.min(s, axis=-1)
        else:
            y = jnp.sum(s, axis=-1)
        return jnp.expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """`jnp.linalg.norm`: a vector norm over one axis, a matrix norm over two (ord None,
    'fro', 'nuc', ±1, ±2, ±inf), the 2-norm of all entries with neither."""
    from ._core import canonical_axis
    (x,) = _inexact(x)
    ndim = aval(x).ndim
    if axis is None:
        if ord is None:
            return _abs2_sum(x, None, keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, (tuple, list)):
        axis = tuple(canonical_axis(a, ndim) for a in axis)
    else:
        axis = (canonical_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """`jnp.linalg.matrix_norm`: the `ord` norm of the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """`jnp.linalg.cond`: the condition number in the `p` norm (None/2: the ratio of the
    extreme singular values); inf for a singular matrix."""
    jnp = _jnp()
    (x,) = _inexact(x)
    shape = aval(x).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"shape={shape}")
    if p is None or p == 2:
        s = svdvals(x)
        r = s[..., 0] / s[..., -1]
    elif p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-2] != shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"shape={shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    nan_free = ~jnp.any(jnp.isnan(x), axis=(-2, -1))
    return jnp.where(jnp.isnan(r) & nan_free, jnp.inf, r)


def multi_dot(arrays, *, precision=None):
    """`jnp.linalg.multi_dot`: the product of the arrays, left to right (a first 1-D array
    is a row, a last one a column)."""
    from .linalg import matmul
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x, precision=precision)
    return out


def tensorsolve(a, b, axes=None):
    """`jnp.linalg.tensorsolve`: x with tensordot(a, x, x.ndim) = b."""
    jnp = _jnp()
    a, b = _inexact(a, b)
    if axes is not None:
        nd = aval(a).ndim
        a = jnp.moveaxis(a, axes, len(axes) * (nd - 1,))
    sa, sb = aval(a).shape, aval(b).shape
    out_shape = sa[len(sb):]
    if sa[:len(sb)] != sb:
        raise ValueError("First dimensions of a must match the shape of b")
    size = math.prod(out_shape)
    if math.prod(sb) != size:
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         "prod(a.shape[b.ndim:]); got "
                         f"a.shape={sa}, b.ndim={len(sb)}.")
    x = solve(jnp.reshape(a, (size, size)), jnp.ravel(b))
    return jnp.reshape(x, out_shape)


def matrix_transpose(x, /):
    """`jnp.linalg.matrix_transpose`: the last two axes swapped."""
    if aval(x).ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={aval(x).ndim}")
    return _mT(x)
