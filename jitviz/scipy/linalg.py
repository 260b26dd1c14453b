"""`jitviz.scipy.linalg`, as `jax.scipy.linalg`: SciPy's signatures over the `lax.linalg`
primitives (no SciPy needed). A `b` with one axis fewer than `a` is a (batch of) vector(s),
as in JAX.

    solve_triangular, cho_factor, cho_solve, lu_factor, lu_solve, lu, cholesky, solve, inv,
    det, eigh, qr, svd, expm
"""
from __future__ import annotations

import numpy as np

from ..lax import linalg as lax_linalg
from ..numpy import linalg as jnp_linalg
from ..numpy._core import aval, promote

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv", "lu",
           "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "svd"]


def _jnp():
    from .. import numpy as jnp
    return jnp


def _mT(x):
    return _jnp().swapaxes(x, -1, -2)


def _as_columns(a, b):
    """(b as a batch of matrices, whether it was vectors): JAX's rule, b is a vector when it
    has one axis fewer than a."""
    vector = aval(a).ndim == aval(b).ndim + 1
    return (b[..., None] if vector else b), vector


def _check_square(name, a):
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name}: a must be a (batch of) square matrices (..., n, n), got "
                         f"shape {shape}")


def _solve_shapes(name, a, b):
    _check_square(name, a)
    m = aval(a).shape[-1]
    if aval(b).shape[-2] != m:
        raise ValueError(f"{name}: b of shape {aval(b).shape} does not match a of shape "
                         f"{aval(a).shape} (b needs {m} rows)")
    jnp = _jnp()
    batch = np.broadcast_shapes(aval(a).shape[:-2], aval(b).shape[:-2])
    return (jnp.broadcast_to(a, batch + aval(a).shape[-2:]),
            jnp.broadcast_to(b, batch + aval(b).shape[-2:]))


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """x with op(a) x = b for the triangular matrix a (trans 0/'N': a, 1/'T': a^T,
    2/'C': a^H); only a's `lower`/upper triangle is read."""
    a, b = promote(a, b, inexact=True)
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    b, vector = _as_columns(a, b)
    a, b = _solve_shapes("solve_triangular", a, b)
    out = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of the Hermitian positive definite `a`: upper (U^H U = a) unless
    `lower`; only that triangle of `a` is read."""
    jnp = _jnp()
    (a,) = promote(a, inexact=True)
    _check_square("cholesky", a)
    L = lax_linalg.cholesky(a if lower else jnp.conj(_mT(a)), symmetrize_input=False)
    return L if lower else jnp.conj(_mT(L))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower): the factor `cho_solve` takes."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b, from `cho_factor(a)`."""
    c, lower = c_and_lower
    c, b = promote(c, b, inexact=True)
    b, vector = _as_columns(c, b)
    c, b = _solve_shapes("cho_solve", c, b)
    x = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, x, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return x[..., 0] if vector else x


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): L (unit diagonal, below) and U packed in one matrix, and LAPACK's row
    swaps (row i was swapped with row piv[i])."""
    (a,) = promote(a, inexact=True)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), from `lu_factor(a)`."""
    from ..numpy.linalg_solvers import _lu_solve
    lu_, pivots = lu_and_piv
    lu_, b = promote(lu_, b, inexact=True)
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    b, vector = _as_columns(lu_, b)
    lu_, b = _solve_shapes("lu_solve", lu_, b)
    perm = lax_linalg.lu_pivots_to_permutation(pivots, aval(lu_).shape[-1])
    perm = _jnp().broadcast_to(perm, aval(lu_).shape[:-1])
    x = _lu_solve(lu_, perm, b, trans)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u (p a permutation matrix), or (p @ l, u)."""
    jnp = _jnp()
    (a,) = promote(a, inexact=True)
    lu_, _, perm = lax_linalg.lu(a)
    dtype = aval(a).dtype
    m, n = aval(a).shape[-2:]
    k = min(m, n)
    p = _mT((perm[..., None] == jnp.arange(m, dtype=np.int32)).astype(dtype))
    l = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
    u = jnp.triu(lu_)[..., :k, :]
    return (p @ l, u) if permute_l else (p, l, u)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """x with a x = b: by LU ('gen', 'sym', 'her'), or by Cholesky ('pos', reading the
    `lower`/upper triangle)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of {{'gen', 'sym', 'her', 'pos'}}, got "
                         f"{assume_a}.")
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    a, b = promote(a, b, inexact=True)
    b, vector = _as_columns(a, b)
    x = jnp_linalg.solve(a, b)
    return x[..., 0] if vector else x


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    return jnp_linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    return jnp_linalg.det(a)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,
         check_finite: bool = True):
    """(w, v) of the Hermitian `a` (its `lower`/upper triangle), or w (eigvals_only)."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = promote(a, inexact=True)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False)
    return w if eigvals_only else (w, v)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """(q, r) ('full': q square; 'economic': reduced), or (r,) for mode 'r'."""
    if pivoting:
        raise NotImplementedError("jitviz's qr does not pivot: use pivoting=False")
    if mode not in ("full", "r", "economic"):
        if mode == "raw":
            raise NotImplementedError("jitviz's qr has no 'raw' mode: use 'full' or "
                                      "'economic'")
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = promote(a, inexact=True)
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """(u, s, vh) with singular values descending, or s."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    return jnp_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


# Higham's (2005) [13/13] Padé approximant of exp and its scaling bound (the 1-norm below
# which it is accurate to double precision; float32 only gains from it)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential, by scaling and squaring with the [13/13] Padé approximant:
    A is scaled by 2^-s so that its 1-norm is at most 5.37, exp(A / 2^s) = Q^-1 P, then
    squared s times (s at most `max_squarings`; each matrix of a batch has its own s)."""
    jnp = _jnp()
    (A,) = promote(A, inexact=True)
    _check_square("expm", A)
    dtype = aval(A).dtype
    real = np.finfo(dtype).dtype
    norm1 = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1, initial=0)
    s = jnp.clip(jnp.ceil(jnp.log2(norm1 / np.asarray(_THETA13, real))), 0, max_squarings)
    s = jnp.where(jnp.isfinite(s), s, 0)  # a zero matrix: log2(0) = -inf, no scaling
    A = A / (2 ** s).astype(dtype)[..., None, None]
    n = aval(A).shape[-1]
    b = [np.asarray(c, real) for c in _PADE13]
    eye = jnp.eye(n, dtype=dtype)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 +
             b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + \
        b[0] * eye
    R = jnp_linalg.solve(V - U, V + U)
    # undo the scaling: square each matrix s times (the squarings past its s are discarded);
    # a loop traced once (a scan: differentiable), not max_squarings copies of its body
    from .. import lax
    s = s[..., None, None]
    return lax.fori_loop(0, max_squarings, lambda i, R: jnp.where(i < s, R @ R, R), R)
