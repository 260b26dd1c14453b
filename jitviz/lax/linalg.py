"""`lax.linalg`: the matrix decompositions and the FFT as primitives, as `jax.lax.linalg` and
`jax.lax.fft`.

    cholesky          x (..., n, n) -> L (lower; NaN where x is not positive definite)
    triangular_solve  a (..., m, m), b -> x with op(a) x = b (left_side) or x op(a) = b
    lu                x (..., m, n) -> lu, pivots (..., min(m, n)), permutation (..., m)
    qr                x (..., m, n) -> q, r              (full_matrices)
    eigh              x (..., n, n) -> v, w (ascending)  (lower: which triangle is read)
    svd               x (..., m, n) -> s, u, vt or s     (full_matrices, compute_uv)
    fft               x -> y over the last len(fft_lengths) axes, fft_type 0..3 as JAX's
                      FftType (FFT, IFFT, RFFT, IRFFT)

Every primitive works on the trailing axes, so leading axes are a batch. Each one's rules are
here, next to its definition (the registry's design): shape rule, NumPy implementation (the
interpreter: the value oracle), jvp (JAX's formulas), vjp (the transpose of that jvp, or the
formula where the primitive is linear), batching (the batch axis moved to the front), and the
backends' lowerings (`linalg_lowering.py`: the CPU driver calls NumPy's LAPACK, CUDA runs them
as host steps between kernels).
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ..core.ir import ShapedArray
from ..core.registry import primitive
from . import primitives as P


class FftType(enum.IntEnum):
    """`jax.lax.FftType`: printed as its number in a jaxpr (`fft[fft_lengths=(8,) fft_type=0]`),
    as JAX 0.10 prints it."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


# --- shape rules --------------------------------------------------------------------------

def _matrix(name, x, square=False):
    """Check that `x` is a batch of float/complex matrices (square ones where asked)."""
    P._check_kind(name, x.dtype, P.INEXACT)
    if x.dtype == np.float16:  # JAX's error class and words
        raise NotImplementedError(f"Unsupported dtype float16. ({name}: LAPACK has no half "
                                  "precision; convert the operand to float32 first)")
    if x.ndim < 2:
        raise ValueError(f"{name} expects an array of rank >= 2 (a batch of matrices), got "
                         f"shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} expects a batch of square matrices (..., n, n), got shape "
                         f"{x.shape}")


def _real_dtype(dtype):
    return np.dtype(np.finfo(dtype).dtype)


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _like(x, shape=None, dtype=None):
    return ShapedArray(x.shape if shape is None else tuple(shape),
                       x.dtype if dtype is None else np.dtype(dtype))


def _cholesky_rule(x):
    _matrix("cholesky", x, square=True)
    return _like(x)


def _triangular_solve_rule(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    _matrix("triangular_solve", a, square=True)
    if b.ndim < 2:
        raise ValueError(f"triangular_solve's b must have rank >= 2 (..., m, n), got shape "
                         f"{b.shape}: add a trailing axis to a vector")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires a and b to have the same dtype, got "
                        f"{a.dtype.name} and {b.dtype.name}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triangular_solve requires a and b to have the same batch "
                         f"dimensions, got {a.shape} and {b.shape}")
    m = b.shape[-2] if left_side else b.shape[-1]
    if m != a.shape[-1]:
        side = "rows" if left_side else "columns"
        raise ValueError(f"triangular_solve: b of shape {b.shape} must have {a.shape[-1]} "
                         f"{side} to match a of shape {a.shape} (left_side={left_side})")
    return _like(b)


def _lu_rule(x):
    _matrix("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    i32 = np.dtype(np.int32)
    return [_like(x), ShapedArray(batch + (min(m, n),), i32), ShapedArray(batch + (m,), i32)]


def _qr_rule(x, *, full_matrices, pivoting, use_magma):
    _matrix("qr", x)
    if pivoting:
        raise NotImplementedError("jitviz's qr does not pivot (pivoting=True): use "
                                  "pivoting=False")
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = x.shape[:-2]
    return [_like(x, batch + (m, k)), _like(x, batch + (k, n))]


def _eigh_rule(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    _matrix("eigh", x, square=True)
    if subset_by_index is not None:
        raise NotImplementedError("jitviz's eigh computes every eigenvalue: "
                                  "subset_by_index=None, then slice the result")
    return [_like(x), _like(x, x.shape[:-1], _real_dtype(x.dtype))]


def _eig_rule(x, *, compute_left_eigenvectors, compute_right_eigenvectors, use_magma):
    _matrix("eig", x, square=True)
    c = _complex_dtype(x.dtype)
    vectors = [_like(x, dtype=c)] * (int(compute_left_eigenvectors)
                                      + int(compute_right_eigenvectors))
    return [_like(x, x.shape[:-1], c)] + vectors


def _svd_rule(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    _matrix("svd", x)
    if subset_by_index is not None:
        raise NotImplementedError("jitviz's svd computes every singular value: "
                                  "subset_by_index=None, then slice the result")
    m, n = x.shape[-2:]
    k, batch = min(m, n), x.shape[:-2]
    s = _like(x, batch + (k,), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, _like(x, batch + (m, ku)), _like(x, batch + (kv, n))]


def _fft_rule(x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"fft works on 1 to 3 trailing axes, got fft_lengths={fft_lengths}")
    if x.ndim < k:
        raise ValueError(f"fft over {k} axes needs an operand of rank >= {k}, got shape "
                         f"{x.shape}")
    lead, tail = x.shape[:-k], x.shape[-k:]
    if fft_type == FftType.RFFT:
        P._check_kind("fft", x.dtype, P.FLOAT)
        if x.dtype == np.float16:
            raise ValueError("RFFT input must be float32 or float64, got float16")
        if tuple(tail) != tuple(fft_lengths):
            raise ValueError(f"RFFT: the operand's trailing axes {tail} must equal "
                             f"fft_lengths {fft_lengths}")
        return _like(x, lead + tail[:-1] + (tail[-1] // 2 + 1,), _complex_dtype(x.dtype))
    P._check_kind("fft", x.dtype, P.COMPLEX)
    if fft_type == FftType.IRFFT:
        want = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
        if tuple(tail) != want:
            raise ValueError(f"IRFFT: the operand's trailing axes {tail} must be {want} for "
                             f"fft_lengths {fft_lengths}")
        return _like(x, lead + tuple(fft_lengths), _real_dtype(x.dtype))
    if tuple(tail) != tuple(fft_lengths):
        raise ValueError(f"FFT: the operand's trailing axes {tail} must equal fft_lengths "
                         f"{fft_lengths}")
    return _like(x)


# --- NumPy implementations: the interpreter, and what the CPU backend runs -------------------

def _quiet(f):
    def run(*args, **params):
        with np.errstate(all="ignore"):  # NaN/inf are values here, as in LAPACK
            return f(*(np.asarray(a) for a in args), **params)
    run.__name__ = f.__name__
    return run


@_quiet
def _cholesky_impl(x):
    """NumPy's LAPACK potrf (the lower triangle is read); a matrix that is not positive
    definite gives NaNs, as JAX's."""
    try:
        return np.linalg.cholesky(x).astype(x.dtype)
    except np.linalg.LinAlgError:
        out = np.empty_like(x)
        flat_in, flat_out = x.reshape((-1,) + x.shape[-2:]), out.reshape((-1,) + x.shape[-2:])
        for i, m in enumerate(flat_in):
            try:
                flat_out[i] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                flat_out[i] = np.nan
        return out


def _operator(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """op(a): the triangle of `a` that is read (unit diagonal where asked), transposed
    and conjugated as asked."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t[..., np.arange(n), np.arange(n)] = 1
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if conjugate_a:  # with or without the transpose, as JAX's (a transposed solve needs conj(a))
        t = np.conj(t)
    return t


_BLOCK = 64  # rows per block of the substitutions and the LU: the rest is BLAS matmuls


def _substitute_rows(t, b, lower):
    """Solve t x = b for a small triangular t, row by row (forward/back substitution, each
    step vectorized over the batch and the columns)."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    for i in rows:
        known = slice(0, i) if lower else slice(i + 1, n)
        acc = b[..., i, :] - np.einsum("...k,...kj->...j", t[..., i, known], x[..., known, :])
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def _substitute(t, b, lower):
    """Solve t x = b for a triangular t as trsm does, block by block: the rows of a block
    by substitution, the rest of the matrix updated by one matmul per block. A zero on the
    diagonal gives inf/NaN as LAPACK's, where an LU solver would refuse the matrix."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    starts = list(range(0, n, _BLOCK))
    for s0 in starts if lower else starts[::-1]:
        s1 = min(s0 + _BLOCK, n)
        block = slice(s0, s1)
        known = slice(0, s0) if lower else slice(s1, n)
        rhs = b[..., block, :] - t[..., block, known] @ x[..., known, :]
        x[..., block, :] = _substitute_rows(t[..., block, block], rhs, lower)
    return x


@_quiet
def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    t = _operator(a, lower, transpose_a, conjugate_a, unit_diagonal)
    solves_lower = lower != bool(transpose_a)  # op(a) is lower triangular
    if left_side:
        return _substitute(t, b, solves_lower).astype(b.dtype)
    # x t = b  <=>  t^T x^T = b^T
    xt = _substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not solves_lower)
    return np.swapaxes(xt, -1, -2).astype(b.dtype)


def _pivot_magnitude(column):
    """How getrf ranks pivot candidates: |re| + |im| for complex entries (LAPACK's izamax,
    which JAX's LU calls), not the modulus, so a complex LU picks JAX's rows."""
    if column.dtype.kind == "c":
        return np.abs(column.real) + np.abs(column.imag)
    return np.abs(column)


@_quiet
def _lu_impl(x):
    """getrf's LU with partial pivoting (the first row of largest magnitude is the pivot),
    vectorized over the batch: NumPy's LAPACK has no LU of its own. Blocked as getrf is: a
    panel of columns factored column by column, then the rows to its right solved against
    its unit lower triangle and the trailing matrix updated by one matmul."""
    a = np.array(x, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), batch + (m,)).copy()
    pivots = np.zeros(batch + (k,), np.int32)
    idx = tuple(np.indices(batch, sparse=True)) if batch else ()
    for j0 in range(0, k, _BLOCK):
        j1 = min(j0 + _BLOCK, k)
        for j in range(j0, j1):
            p = j + np.argmax(_pivot_magnitude(a[..., j:, j]), axis=-1)
            pivots[..., j] = p
            for arr in (a, perm):  # swap rows j and p of every matrix (p == j leaves them)
                row_j = arr[(*idx, j)].copy()
                arr[(*idx, j)] = arr[(*idx, p)]
                arr[(*idx, p)] = row_j
            piv = a[..., j, j]
            nonzero = piv != 0  # a zero column: nothing to eliminate (getrf's info > 0)
            scale = np.where(nonzero, piv, 1)
            a[..., j + 1:, j] = np.where(nonzero[..., None],
                                         a[..., j + 1:, j] / scale[..., None],
                                         a[..., j + 1:, j])
            a[..., j + 1:, j + 1:j1] -= a[..., j + 1:, j, None] * a[..., j, None, j + 1:j1]
        if j1 < n:
            unit_lower = np.tril(a[..., j0:j1, j0:j1], -1) + np.eye(j1 - j0, dtype=a.dtype)
            a[..., j0:j1, j1:] = _substitute_rows(unit_lower, a[..., j0:j1, j1:], True)
            a[..., j1:, j1:] -= a[..., j1:, j0:j1] @ a[..., j0:j1, j1:]
    return [a, pivots, perm]


@_quiet
def _qr_impl(x, *, full_matrices, pivoting, use_magma):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype), r.astype(x.dtype)]


@_quiet
def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    """NumPy's LAPACK syevd/heevd, eigenvalues ascending."""
    w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
    return [v.astype(x.dtype), w.astype(_real_dtype(x.dtype))]


@_quiet
def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors, use_magma):
    """LAPACK's geev: NumPy's (batched) for the eigenvalues and right eigenvectors, SciPy's
    per matrix when the left ones are asked for too (one call gives all three in one order;
    NumPy has no left eigenvectors). Each eigenvector has unit norm, as LAPACK makes them."""
    c = _complex_dtype(x.dtype)
    x = np.asarray(x)
    n = x.shape[-1]
    if x.size == 0:  # LAPACK takes no empty matrix
        k = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
        return [np.zeros(x.shape[:-1], c)] + [np.zeros(x.shape, c) for _ in range(k)]
    if not compute_left_eigenvectors:
        w, vr = np.linalg.eig(x)
        return [w.astype(c)] + ([vr.astype(c)] if compute_right_eigenvectors else [])
    import scipy.linalg
    flat = x.reshape((-1, n, n))
    parts = [scipy.linalg.eig(m, left=True, right=True) for m in flat]
    w, vl, vr = (np.stack([p[i] for p in parts]).reshape(s).astype(c)
                 for i, s in ((0, x.shape[:-1]), (1, x.shape), (2, x.shape)))
    return [w, vl] + ([vr] if compute_right_eigenvectors else [])


@_quiet
def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    """NumPy's LAPACK gesdd; an empty matrix has no singular values."""
    real = _real_dtype(x.dtype)
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False).astype(real)]
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return [s.astype(real), u.astype(x.dtype), vt.astype(x.dtype)]


_NUMPY_FFT = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn,
              FftType.RFFT: np.fft.rfftn, FftType.IRFFT: np.fft.irfftn}


@_quiet
def _fft_impl(x, *, fft_type, fft_lengths):
    """NumPy's pocketfft over the trailing axes (the inverses scaled by 1/n, as XLA's)."""
    fft_type = FftType(fft_type)
    out_dtype = _fft_rule(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                          fft_lengths=fft_lengths).dtype
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if 0 in x.shape or 0 in fft_lengths:  # pocketfft refuses empty transforms
        shape = _fft_rule(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                          fft_lengths=fft_lengths).shape
        return np.zeros(shape, out_dtype)
    return _NUMPY_FFT[fft_type](x, s=fft_lengths, axes=axes).astype(out_dtype)


def _pp_fft(params):
    return [("fft_lengths", tuple(params["fft_lengths"])),
            ("fft_type", int(params["fft_type"]))]


def _pivots_rule(pivots, *, permutation_size):
    P._check_kind("lu_pivots_to_permutation", pivots.dtype, P.INT)
    if pivots.ndim < 1:
        raise ValueError("lu_pivots_to_permutation expects pivots of rank >= 1, got shape "
                         f"{pivots.shape}")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"lu_pivots_to_permutation: permutation_size {permutation_size} is "
                         f"smaller than the number of pivots {pivots.shape[-1]}")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


def _pivots_impl(pivots, *, permutation_size):
    """Apply the row swaps i <-> pivots[i], in order, to 0..permutation_size-1."""
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32),
                           batch + (permutation_size,)).copy()
    idx = tuple(np.indices(batch, sparse=True)) if batch else ()
    for i in range(pivots.shape[-1]):
        p = np.clip(pivots[..., i], 0, permutation_size - 1)
        row_i = perm[(*idx, i)].copy()
        perm[(*idx, i)] = perm[(*idx, p)]
        perm[(*idx, p)] = row_i
    return perm


cholesky_p = primitive("cholesky", abstract_eval=_cholesky_rule, impl=_cholesky_impl)
triangular_solve_p = primitive("triangular_solve", abstract_eval=_triangular_solve_rule,
                               impl=_triangular_solve_impl)
lu_p = primitive("lu", abstract_eval=_lu_rule, impl=_lu_impl, multiple_results=True)
qr_p = primitive("qr", abstract_eval=_qr_rule, impl=_qr_impl, multiple_results=True)
eigh_p = primitive("eigh", abstract_eval=_eigh_rule, impl=_eigh_impl, multiple_results=True)
svd_p = primitive("svd", abstract_eval=_svd_rule, impl=_svd_impl, multiple_results=True)
eig_p = primitive("eig", abstract_eval=_eig_rule, impl=_eig_impl, multiple_results=True)
fft_p = primitive("fft", abstract_eval=_fft_rule, impl=_fft_impl, pp_params=_pp_fft)
lu_pivots_to_permutation_p = primitive("lu_pivots_to_permutation", abstract_eval=_pivots_rule,
                                       impl=_pivots_impl)

LINALG_PRIMITIVES = (cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, eig_p, svd_p, fft_p,
                     lu_pivots_to_permutation_p)


# --- the lax functions ----------------------------------------------------------------------

def _symmetrized(x):
    from .. import numpy as jnp
    return (x + jnp.conj(jnp.swapaxes(x, -1, -2))) / np.asarray(2, _dtype_of(x))


def _dtype_of(x):
    from . import aval_of
    return aval_of(x).dtype


def cholesky(x, *, symmetrize_input: bool = True):
    """`jax.lax.linalg.cholesky`: the lower Cholesky factor of each matrix of `x` (NaN where
    one is not positive definite); `symmetrize_input` reads (x + x^H) / 2."""
    P._check_kind("cholesky", _dtype_of(x), P.INEXACT)  # before symmetrizing divides
    if symmetrize_input:
        x = _symmetrized(x)
    return _tril(cholesky_p.bind(x))  # the upper triangle is zero, NaNs or not, as JAX's


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """`jax.lax.linalg.triangular_solve`: x with op(a) x = b (left_side) or x op(a) = b,
    op(a) = a, a^T, conj(a) or a^H (transpose_a, conjugate_a); only `a`'s `lower`/upper triangle is
    read."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def lu(x):
    """`jax.lax.linalg.lu`: (lu, pivots, permutation) of the LU decomposition with partial
    pivoting, x[..., permutation, :] = L @ U."""
    return tuple(lu_p.bind(x))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """`jax.lax.linalg.lu_pivots_to_permutation`: the permutation the row swaps of LAPACK's
    pivots make (x[..., permutation, :] = L U)."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """`jax.lax.linalg.qr`: (q, r)."""
    return tuple(qr_p.bind(x, full_matrices=bool(full_matrices), pivoting=bool(pivoting),
                           use_magma=use_magma))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None):
    """`jax.lax.linalg.eigh`: (v, w), eigenvectors as columns and ascending eigenvalues."""
    P._check_kind("eigh", _dtype_of(x), P.INEXACT)
    if symmetrize_input:
        x = _symmetrized(x)
    return tuple(eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                             subset_by_index=subset_by_index, algorithm=None))


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        use_magma=None):
    """`jax.lax.linalg.eig`: [w, vl, vr] of a general square matrix, the eigenvalues w and
    the left and right eigenvectors as columns (each as asked), all complex, as LAPACK's
    geev orders and normalizes them (unit norm)."""
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           use_magma=use_magma))


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """`jax.lax.linalg.svd`: (u, s, vh) with compute_uv, else s."""
    out = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                     subset_by_index=subset_by_index, algorithm=algorithm)
    if not compute_uv:
        return out[0]
    s, u, vt = out
    return u, s, vt


def fft(x, fft_type, fft_lengths):
    """`jax.lax.fft`: the FFT of type `fft_type` (FftType or its name) over the trailing
    len(fft_lengths) axes."""
    from ..numpy._core import promote, to_dtype
    if isinstance(fft_type, str):
        fft_type = FftType[fft_type.upper()]
    fft_type = FftType(fft_type)
    lengths = tuple(int(n) for n in np.atleast_1d(fft_lengths))
    (x,) = promote(x, inexact=True)  # integers become the default float, as in JAX
    dtype = _dtype_of(x)
    if fft_type == FftType.RFFT:
        if dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
    elif dtype.kind != "c":
        x = to_dtype(x, _complex_dtype(dtype))
    return fft_p.bind(x, fft_type=int(fft_type), fft_lengths=lengths)


# --- differentiation --------------------------------------------------------------------------

def _jnp():
    from .. import numpy as jnp
    return jnp


def _mT(x):
    return _jnp().swapaxes(x, -1, -2)


def _H(x):
    return _jnp().conj(_mT(x))


def _tril(x, k=0):
    return _jnp().tril(x, k)


def _triu(x, k=0):
    return _jnp().triu(x, k)


def _eye_like(x, n):
    return _jnp().eye(n, dtype=_dtype_of(x))


def _cholesky_tangent(x, outs, dx):
    """dL = L Phi(L^-1 dA L^-H), Phi the lower triangle with the diagonal halved."""
    (L,) = outs
    n = L.shape[-1]
    tmp = triangular_solve(L, dx, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=True)
    tmp = triangular_solve(L, tmp, left_side=True, lower=True)
    half = _tril(tmp, -1) + _eye_like(L, n) * tmp * np.asarray(0.5, _real_dtype(_dtype_of(L)))
    return [L @ half]


def _triangular_op(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """op(a) as the primitive reads it (a traced version of `_operator`)."""
    jnp = _jnp()
    t = _tril(a) if lower else _triu(a)
    if unit_diagonal:
        t = t * (1 - _eye_like(a, a.shape[-1]))
    if transpose_a:
        t = _mT(t)
    if conjugate_a:
        t = jnp.conj(t)
    return t


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    da, db = tangents
    x = triangular_solve_p.bind(a, b, **params)
    dx = None if db is None else triangular_solve_p.bind(a, db, **params)
    if da is not None:
        dop = _triangular_op(da, params["lower"], params["transpose_a"],
                             params["conjugate_a"], False)
        if params["unit_diagonal"]:
            dop = dop * (1 - _eye_like(da, da.shape[-1]))
        rhs = dop @ x if params["left_side"] else x @ dop
        term = -triangular_solve_p.bind(a, rhs, **params)
        dx = term if dx is None else dx + term
    return x, dx


def _triangular_solve_vjp(ct, primals, out, *, left_side, lower, transpose_a, conjugate_a,
                          unit_diagonal):
    """b's cotangent is the solve with op(a)^T; a's is -(that) x^T (or x^T (that)) masked to
    the triangle that is read, transposed back if op transposed."""
    jnp = _jnp()
    a, b = primals
    flip = dict(left_side=left_side, lower=lower, transpose_a=not transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    ct_b = triangular_solve_p.bind(a, ct, **flip)
    g = -(ct_b @ _mT(out)) if left_side else -(_mT(out) @ ct_b)  # cotangent of op(a)
    if transpose_a:
        g = _mT(g)
    if conjugate_a:
        g = jnp.conj(g)
    g = _tril(g, -1 if unit_diagonal else 0) if lower else _triu(g, 1 if unit_diagonal else 0)
    return [g, ct_b]


def _lu_tangent(x, outs, dx):
    """JAX's: with P x = L U, X = L^-1 P dx U^-1; dL = L tril(X, -1), dU = triu(X) U."""
    jnp = _jnp()
    lu_, _, perm = outs
    m, n = lu_.shape[-2:]
    k = min(m, n)
    # P dx as a product with the one-hot permutation matrix (an index array built by
    # take_along_axis would be a constant an enclosing vjp cannot capture)
    cols = P.iota_p.bind(dtype=np.dtype(np.int32), shape=(m, m), dimension=1)
    px = (perm[..., :, None] == cols).astype(dx.dtype) @ dx
    # L as m x m and U as n x n, the missing columns/rows those of the identity (built with
    # products by 0/1 matrices: a padding constant would be captured by an enclosing vjp)
    l = _tril(lu_ @ jnp.eye(n, m, dtype=lu_.dtype) if m > k else lu_[..., :, :m], -1)
    l = l + _eye_like(lu_, m)
    u = _triu(lu_[..., :n, :])
    if n > k:
        cut = jnp.eye(n, m, dtype=lu_.dtype)
        u = _triu(cut @ lu_) + _eye_like(lu_, n) - cut @ _mT(cut)
    la = triangular_solve(l, px, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, lower=False)
    return [l @ _tril(lau, -1) + _triu(lau) @ u]


def _qr_tangent(x, outs, dx, *, full_matrices, pivoting, use_magma):
    """JAX's: dq = q (do - Q^H dx r^-1) + dx r^-1, dr = (Q^H dx r^-1 - do) r, do skew."""
    jnp = _jnp()
    q, r = outs
    m, n = x.shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = _H(q) @ dx_rinv
    low = _tril(qt_dx_rinv, -1)
    do = low - _H(low)
    eye = _eye_like(x, n)
    do = do + eye * (qt_dx_rinv - jnp.real(qt_dx_rinv).astype(qt_dx_rinv.dtype))
    return [q @ (do - qt_dx_rinv) + dx_rinv, (qt_dx_rinv - do) @ r]


def _eigh_tangent(x, outs, dx, **params):
    """JAX's: with S = V^H dx V, dV = V (F * S), F_ij = 1/(w_j - w_i) off the diagonal,
    dw = real(diag(S))."""
    jnp = _jnp()
    v, w_real = outs
    n = x.shape[-1]
    w = w_real.astype(_dtype_of(x))
    eye = _eye_like(x, n)
    F = 1 / (eye + w[..., None, :] - w[..., :, None]) - eye
    s = _H(v) @ dx @ v
    return [v @ (F * s), jnp.real(jnp.diagonal(s, 0, -2, -1))]


def _eig_tangent(x, outs, dx, *, compute_left_eigenvectors, compute_right_eigenvectors,
                 use_magma):
    """JAX's: only the eigenvalues have derivatives, dw = diag(V^-1 dx V) (Giles, eq. 4.60)."""
    _no_eigenvector_derivatives(compute_left_eigenvectors or compute_right_eigenvectors)
    v = _right_eigenvectors(x, use_magma)
    return [(_jnp().linalg.solve(v, dx.astype(_dtype_of(v))) * _mT(v)).sum(-1)]


def _eig_vjp(ct, primals, out, *, compute_left_eigenvectors, compute_right_eigenvectors,
             use_magma):
    """The transpose of dx -> diag(V^-1 dx V) (JAX's pairing, no conjugation): x's
    cotangent is V^-T diag(ct) V^T, its real part for a real x. (Not the transpose of the
    tangent map traced: that map computes V from x, and eig's eigenvectors have no
    derivative.)"""
    _no_eigenvector_derivatives(compute_left_eigenvectors or compute_right_eigenvectors)
    jnp = _jnp()
    (x,), (w_ct,) = primals, ct
    if w_ct is None:
        return [None]
    v = _right_eigenvectors(x, use_magma)
    x_ct = _mT(jnp.linalg.inv(v)) @ (w_ct[..., :, None] * _mT(v))
    dt = _dtype_of(x)
    return [x_ct if np.dtype(dt).kind == "c" else jnp.real(x_ct).astype(dt)]


def _right_eigenvectors(x, use_magma):
    return eig_p.bind(x, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                      use_magma=use_magma)[1]


def _no_eigenvector_derivatives(asked):
    if asked:
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion.")


def _svd_tangent(x, outs, dx, *, full_matrices, compute_uv, subset_by_index, algorithm):
    """JAX's SVD jvp (full matrices only where square: then they are the reduced ones)."""
    jnp = _jnp()
    if compute_uv and full_matrices and x.shape[-2] != x.shape[-1]:
        raise NotImplementedError("Singular value decomposition JVP not implemented for "
                                  "full matrices")
    if compute_uv:
        s, U, Vt = outs
    else:
        s, U, Vt = svd_p.bind(x, full_matrices=False, compute_uv=True,
                              subset_by_index=subset_by_index, algorithm=algorithm)
    dtype = _dtype_of(x)
    Ut, V = _H(U), _H(Vt)
    s_dim = s[..., None, :]
    dS = Ut @ dx @ V
    ds = jnp.real(jnp.diagonal(dS, 0, -2, -1))
    if not compute_uv:
        return [ds]
    k = s.shape[-1]
    s_diffs = (s_dim + _mT(s_dim)) * (s_dim - _mT(s_dim))
    eye_k = jnp.eye(k, dtype=s.dtype)
    F = 1 / (s_diffs + eye_k) - eye_k
    sd = s_dim.astype(dtype)
    dSS, SdS = sd * dS, _mT(sd) * dS
    s_zeros = (s == 0).astype(s.dtype)
    s_inv = 1 / (s + s_zeros) - s_zeros
    s_inv_mat = (s_inv[..., None, :] * eye_k).astype(dtype)
    dUdV_diag = (dS - _H(dS)) * s_inv_mat * np.asarray(0.5, _real_dtype(dtype))
    Fc = F.astype(dtype)
    dU = U @ (Fc * (dSS + _H(dSS)) + dUdV_diag)
    dV = V @ (Fc * (SdS + _H(SdS)))
    m, n = x.shape[-2:]
    if m > n:
        dAV = dx @ V
        dU = dU + (dAV - U @ (Ut @ dAV)) / sd
    if n > m:
        dAHU = _H(dx) @ U
        dV = dV + (dAHU - V @ (Vt @ dAHU)) / sd
    return [ds, dU, _H(dV)]


def _differentiable_outputs(prim, outs):
    """Which outputs have tangents (lu's pivots and permutation are integers)."""
    return [i for i, o in enumerate(outs) if np.dtype(_dtype_of(o)).kind in "fc"]


def _jvp_from_tangent(prim, tangent):
    def rule(primals, tangents, **params):
        (x,), (dx,) = primals, tangents
        outs = prim.bind(x, **params)
        outs_list = list(outs) if prim.multiple_results else [outs]
        if dx is None:
            touts = [None] * len(outs_list)
        else:
            found = iter(tangent(x, outs_list, dx, **params))
            live = set(_differentiable_outputs(prim, outs_list))
            touts = [next(found) if i in live else None for i in range(len(outs_list))]
        return (outs_list, touts) if prim.multiple_results else (outs, touts[0])
    return rule


def _vjp_from_tangent(prim, tangent):
    """The cotangent of x: the transpose of the (linear) tangent map dx -> d(outs), found
    by reverse-differentiating that map. The primal values are passed to it as arguments
    (a traced function may not capture values of the trace that differentiates it); only
    dx's cotangent is kept, and the others are dead code that DCE removes."""
    def rule(ct, primals, out, **params):
        from ..transforms.function_transforms import vjp
        (x,) = primals
        outs_list = list(out) if prim.multiple_results else [out]
        cts = list(ct) if prim.multiple_results else [ct]
        live = _differentiable_outputs(prim, outs_list)

        def tangent_map(x, outs, dx):
            return tuple(tangent(x, list(outs), dx, **params))
        _, back = vjp(tangent_map, x, tuple(outs_list), _jnp().zeros_like(x),
                      _name=f"{prim.name}_transpose")
        return [back(tuple(cts[i] for i in live))[2]]
    return rule


def _fft_jvp(primals, tangents, **params):
    (x,), (dx,) = primals, tangents
    return fft_p.bind(x, **params), (None if dx is None else fft_p.bind(dx, **params))


def _fft_vjp(ct, primals, out, *, fft_type, fft_lengths):
    """The DFT matrix and its inverse are symmetric, so FFT and IFFT are their own transposes; RFFT is a full FFT
    then a truncation, IRFFT (JAX's rule) an RFFT scaled per frequency, conjugated."""
    jnp = _jnp()
    fft_type = FftType(fft_type)
    params = dict(fft_lengths=fft_lengths)
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=int(fft_type), **params)]
    if fft_type == FftType.RFFT:
        n = fft_lengths[-1]
        pad = [(0, 0)] * (ct.ndim - 1) + [(0, n - ct.shape[-1])]
        full = fft_p.bind(jnp.pad(ct, pad), fft_type=int(FftType.FFT), **params)
        return [jnp.real(full).astype(_dtype_of(primals[0]))]
    x = fft_p.bind(ct, fft_type=int(FftType.RFFT), **params)
    m = x.shape[-1]
    # each frequency but the first (and the Nyquist one of an even length) stands for two
    k = P.iota_p.bind(dtype=np.dtype(np.int32), shape=(m,), dimension=0)
    twice = (k > 0) & ((k < m - 1) | (fft_lengths[-1] % 2 == 1))
    real = _real_dtype(_dtype_of(x))
    scale = jnp.where(twice, np.asarray(2, real), np.asarray(1, real)) / np.asarray(
        math.prod(fft_lengths), real)
    return [jnp.conj(x * scale)]


# --- batching -------------------------------------------------------------------------------

def _batch_rule(prim):
    """Every primitive here works on trailing axes: the batch axis goes first."""
    def rule(args, dims, **params):
        from ..transforms.batching import batch_size, bdim_to_front
        size = batch_size(args, dims)
        moved = [bdim_to_front(x, d, size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0
    return rule


def _register_transformation_rules():
    from ..transforms import (declare_non_differentiable, register_batch, register_jvp,
                              register_vjp)
    tangents = {cholesky_p: _cholesky_tangent, lu_p: _lu_tangent, qr_p: _qr_tangent,
                eigh_p: _eigh_tangent, eig_p: _eig_tangent, svd_p: _svd_tangent}
    for prim, tangent in tangents.items():
        register_jvp(prim, _jvp_from_tangent(prim, tangent))
        register_vjp(prim, _vjp_from_tangent(prim, tangent))
    register_vjp(eig_p, _eig_vjp)  # over the one from its tangent map
    register_jvp(triangular_solve_p, _triangular_solve_jvp)
    register_vjp(triangular_solve_p, _triangular_solve_vjp)
    declare_non_differentiable(lu_pivots_to_permutation_p)  # integers
    register_jvp(fft_p, _fft_jvp)
    register_vjp(fft_p, _fft_vjp)
    for prim in LINALG_PRIMITIVES:
        register_batch(prim, _batch_rule(prim))


_register_transformation_rules()


# the backends' lowerings of these primitives: linalg_lowering.py
from . import linalg_lowering  # noqa: E402,F401
