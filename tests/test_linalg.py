"""jnp.linalg, jitviz.scipy.linalg and the lax.linalg primitives under them: values, dtypes,
shapes and errors against real JAX, every backend against the interpreter (CUDA in the
simulator: tests/test_cuda_backend.py runs the primitives' cases; here a program through
jit), gradients against JAX and finite differences, vmap against a loop."""
import os
import subprocess
import sys

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
import jitviz.scipy.linalg as jsl
from jitviz import lax
from helpers import jax_x64_enabled, run_program_in_simulator, x64_enabled

# written for NumPy 64-bit operands that stay 64-bit (jitviz's keep_float64 switch);
# JAX's own 32-bit narrowing is tests/test_array_promotion.py's
pytestmark = pytest.mark.usefixtures("keep_float64")

jax = pytest.importorskip("jax")
J = jax.numpy
JSL = jax.scipy.linalg

RNG = np.random.default_rng(11)
BACKENDS = ["interpret", "cpu"]


def _mat(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _spd(*batch, n=4, dtype=np.float32):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _leaves(x):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(
        tuple(x) if isinstance(x, tuple) else x)]


def _assert_like_jax(ours, theirs, rtol=2e-5, atol=2e-5):
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype, (o.dtype, t.dtype)
        assert o.shape == t.shape, (o.shape, t.shape)
        np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)


A = _mat(2, 3, 4, 4)
B = _mat(2, 3, 4, 2)
V = _mat(4)
SPD = _spd(2, 3)
TALL = _mat(2, 6, 4)
WIDE = _mat(4, 6)

# (name, arguments, keywords): functions whose results are unique (no sign choices)
UNIQUE = [
    ("solve", (A, B), {}), ("solve", (A, V), {}), ("inv", (A,), {}), ("det", (A,), {}),
    ("slogdet", (A,), {}), ("cholesky", (SPD,), {}), ("cholesky", (SPD,), {"upper": True}),
    ("eigvalsh", (SPD,), {}), ("eigvalsh", (SPD,), {"UPLO": "U"}),
    ("svd", (TALL,), {"compute_uv": False}), ("svdvals", (WIDE,), {}),
    ("pinv", (TALL,), {}), ("pinv", (WIDE,), {"rtol": 0.1}),
    ("matrix_power", (A, 5), {}), ("matrix_power", (A, -2), {}), ("matrix_power", (A, 0), {}),
    ("matrix_rank", (np.ones((3, 5), np.float32),), {}), ("matrix_rank", (TALL,), {}),
    ("norm", (A,), {}), ("norm", (A,), {"axis": (-2, -1), "ord": 2}),
    ("norm", (A,), {"axis": (1, 3), "ord": "nuc", "keepdims": True}),
    ("norm", (A,), {"axis": (-1, -2), "ord": 1}), ("norm", (A,), {"axis": (-2, -1), "ord": -np.inf}),
    ("norm", (A,), {"axis": -1, "ord": 3}), ("norm", (A,), {"axis": 0, "ord": 0}),
    ("norm", (A,), {"axis": 2, "ord": -np.inf}), ("norm", (A[0, 0],), {"ord": "fro"}),
    ("cond", (A,), {}), ("cond", (A,), {"p": 1}), ("cond", (A,), {"p": -2}),
    ("lstsq", (TALL[0], B[0, 0, :, :1].repeat(6, 0)[:6]), {}),
    ("lstsq", (TALL[0], _mat(6)), {}), ("multi_dot", ([A[0, 0], A[0, 1], V],), {}),
    ("tensorsolve", (_mat(2, 3, 6), _mat(2, 3)), {}),
    ("matrix_transpose", (TALL,), {}), ("vector_norm", (A,), {"axis": (0, 2), "ord": 1}),
    ("matrix_norm", (A,), {"ord": np.inf}),
]


def _call(module, name, args, kw):
    return getattr(module.linalg, name)(*args, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,args,kw", UNIQUE, ids=[f"{c[0]}{i}" for i, c in enumerate(UNIQUE)])
def test_values_dtypes_and_shapes_match_jax(backend, name, args, kw):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    others = [a for a in args if not isinstance(a, np.ndarray)]
    if name == "multi_dot":
        arrays, others = list(args[0]), []

    def call(module):
        def f(*xs):
            full = [list(xs)] if name == "multi_dot" else list(xs) + others
            return _call(module, name, full, kw)
        return f
    ours = jitviz.jit(call(jnp), backend=backend)(*arrays)
    theirs = jax.jit(call(J))(*arrays)
    _assert_like_jax(ours, theirs, rtol=2e-4, atol=2e-4)


def _orthogonal_columns(q):
    q = np.asarray(q, np.float64)
    gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=2e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_decompositions_reconstruct_and_match_jax_up_to_signs(backend):
    for mode, x in [("reduced", TALL), ("complete", TALL), ("reduced", WIDE)]:
        q, r = jitviz.jit(lambda x: jnp.linalg.qr(x, mode=mode), backend=backend)(x)
        Q, R = J.linalg.qr(x, mode=mode)
        assert (q.shape, r.shape, q.dtype) == (Q.shape, R.shape, Q.dtype)
        np.testing.assert_allclose(q @ r, x, atol=2e-5)
        np.testing.assert_allclose(np.abs(r), np.abs(np.asarray(R)), atol=2e-5)
        _orthogonal_columns(q)
        assert np.allclose(np.tril(r, -1), 0)
    w, v = jitviz.jit(jnp.linalg.eigh, backend=backend)(SPD)
    W, Vj = J.linalg.eigh(SPD)
    _assert_like_jax(w, W, rtol=1e-5)
    np.testing.assert_allclose(np.abs(v), np.abs(np.asarray(Vj)), atol=2e-5)
    np.testing.assert_allclose(v * w[..., None, :], SPD @ v, atol=1e-4)
    for full in (True, False):
        u, s, vh = jitviz.jit(lambda x: jnp.linalg.svd(x, full_matrices=full),
                              backend=backend)(TALL)
        U, S, VH = J.linalg.svd(TALL, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (U.shape, S.shape, VH.shape)
        _assert_like_jax(s, S, rtol=1e-5)
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], TALL,
                                   atol=2e-5)
        _orthogonal_columns(u)
    assert jnp.linalg.qr(TALL, mode="r").shape == (2, 4, 4)


def test_hermitian_svd_matches_jax():
    x = SPD[0, 0] - 5 * np.eye(4, dtype=np.float32)  # eigenvalues of both signs
    u, s, vh = jnp.linalg.svd(x, hermitian=True)
    _assert_like_jax(s, J.linalg.svd(x, hermitian=True)[1], rtol=1e-5)
    np.testing.assert_allclose((u * s) @ vh, x, atol=2e-5)
    _assert_like_jax(jnp.linalg.svd(x, hermitian=True, compute_uv=False),
                     J.linalg.svd(x, hermitian=True, compute_uv=False), rtol=1e-5)


def test_lax_linalg_matches_jax():
    lu, piv, perm = lax.linalg.lu(A)
    LU, PIV, PERM = jax.lax.linalg.lu(A)
    _assert_like_jax((lu, piv, perm), (LU, PIV, PERM), rtol=1e-5)
    _assert_like_jax(lax.linalg.lu_pivots_to_permutation(piv, 4),
                     jax.lax.linalg.lu_pivots_to_permutation(PIV, 4))
    for kw in [dict(left_side=True, lower=True), dict(left_side=False, lower=False),
               dict(left_side=True, lower=False, transpose_a=True, unit_diagonal=True)]:
        b = B if kw["left_side"] else np.swapaxes(B, -1, -2)
        _assert_like_jax(lax.linalg.triangular_solve(A + 4 * np.eye(4, dtype=np.float32), b,
                                                     **kw),
                         jax.lax.linalg.triangular_solve(A + 4 * np.eye(4, dtype=np.float32),
                                                         b, **kw), rtol=1e-4, atol=1e-5)
    _assert_like_jax(lax.linalg.cholesky(SPD), J.tril(jax.lax.linalg.cholesky(SPD)),
                     rtol=1e-5)


def test_jaxprs_print_jax_s_primitives():
    def text(f, *args):  # whitespace removed: params may wrap over lines
        return "".join(str(jitviz.make_jaxpr(f)(*args)).split())
    x = SPD[0, 0]
    assert "=cholesky" in text(jnp.linalg.cholesky, x)
    assert "cholesky[" not in text(jnp.linalg.cholesky, x)  # no params, as JAX prints it
    assert "b:f32[4,4]c:i32[4]d:i32[4]=lua" in text(lax.linalg.lu, x)
    assert "qr[full_matrices=Falsepivoting=Falseuse_magma=None]" in text(jnp.linalg.qr, x)
    assert "eigh[algorithm=Nonelower=Truesort_eigenvalues=Truesubset_by_index=None]" in \
        text(jnp.linalg.eigh, x)
    assert "svd[algorithm=Nonecompute_uv=Truefull_matrices=Truesubset_by_index=None]" in \
        text(jnp.linalg.svd, x)
    assert ("triangular_solve[conjugate_a=Falseleft_side=Truelower=Truetranspose_a=False"
            "unit_diagonal=False]") in text(lambda a: jsl.solve_triangular(a, a, lower=True), x)


def test_float64_with_x64_and_integer_promotion(x64):
    a = _mat(3, 3, dtype=np.float64)
    for f in (jnp.linalg.inv, jnp.linalg.det, lambda x: jnp.linalg.svd(x)[1]):
        assert f(a).dtype == np.float64
    # int32 stays 32-bit under x64 too, as in JAX
    assert jnp.linalg.inv(np.eye(2, dtype=np.int32)).dtype == np.float32
    np.testing.assert_allclose(jnp.linalg.inv(a) @ a, np.eye(3), atol=1e-12)


def test_integers_promote_to_float32_without_x64():
    assert jnp.linalg.inv(np.eye(2, dtype=np.int32)).dtype == np.float32
    assert jnp.linalg.eigh(np.eye(2, dtype=np.int32))[0].dtype == np.float32
    assert jnp.linalg.matrix_power(np.eye(2, dtype=np.int32), 3).dtype == np.int32


def test_singular_and_indefinite_inputs_give_jax_s_values():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(jnp.linalg.det(singular)) == 0.0
    sign, logdet = jnp.linalg.slogdet(singular)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    indefinite = np.array([[4, 2, 1], [2, -3, 0], [1, 0, 2]], np.float32)
    _assert_like_jax(jnp.linalg.cholesky(indefinite), J.linalg.cholesky(indefinite))
    lower = np.tril(np.ones((3, 3), bool))
    assert np.isnan(jnp.linalg.cholesky(-np.eye(3, dtype=np.float32))[lower]).all()
    assert not np.asarray(jnp.linalg.cholesky(indefinite))[~lower].any()  # NaNs below only
    x = jsl.solve_triangular(np.array([[0.0, 0], [1, 1]], np.float32),
                             np.ones(2, np.float32), lower=True)
    assert np.isinf(x[0])


@pytest.mark.parametrize("call,error,match", [
    (lambda: jnp.linalg.inv(np.ones((3, 4))), ValueError,
     r"Argument to inv must have shape \[..., n, n\], got \(3, 4\)"),
    (lambda: jnp.linalg.inv(np.ones(3)), ValueError, "must have shape"),
    (lambda: jnp.linalg.det(np.ones((3, 4))), ValueError, "Argument to _det"),
    (lambda: jnp.linalg.slogdet(np.ones((3, 4))), ValueError, "Argument to slogdet"),
    (lambda: jnp.linalg.solve(np.ones((2, 3, 3)), np.ones((2, 3))), ValueError,
     "Invalid shapes for solve"),
    (lambda: jnp.linalg.solve(np.eye(3), np.ones(4)), ValueError, "does not match"),
    (lambda: jnp.linalg.qr(np.ones((3, 3)), mode="x"), ValueError,
     "Unsupported QR decomposition mode 'x'"),
    (lambda: jnp.linalg.norm(np.ones((3, 3)), ord="x"), ValueError,
     "Invalid order 'x' for matrix norm"),
    (lambda: jnp.linalg.norm(np.ones((2, 2, 2)), ord=2), ValueError,
     "Improper number of axes for norm"),
    (lambda: jnp.linalg.matrix_power(np.ones((3, 4)), 2), TypeError,
     "Last 2 dimensions of the array must be square"),
    (lambda: jnp.linalg.matrix_power(np.eye(2), 1.5), TypeError,
     "exponent must be an integer, got 1.5"),
    (lambda: jnp.linalg.eigh(np.ones((3, 3)), UPLO="X"), ValueError, "UPLO"),
    (lambda: jnp.linalg.lstsq(np.ones((3, 2)), np.ones(4)), ValueError,
     "Leading dimensions of input arrays must match"),
    (lambda: lax.linalg.cholesky(np.eye(2, dtype=np.int32)), TypeError,
     "cholesky does not accept dtype int32"),
    (lambda: lax.linalg.triangular_solve(np.eye(3, dtype=np.float32),
                                         np.ones((2, 3), np.float32), left_side=True),
     ValueError, "must have 3 rows"),
    (lambda: jsl.solve_triangular(np.eye(3), np.ones(3), trans=4), ValueError,
     "Invalid 'trans' value 4"),
    (lambda: jsl.eigh(np.eye(2), np.eye(2)), NotImplementedError, "b=None"),
    (lambda: jnp.linalg.inv(np.eye(2, dtype=np.float16)), NotImplementedError,
     "Unsupported dtype float16"),
    (lambda: jnp.linalg.svd(np.eye(2, dtype=np.float16)), NotImplementedError,
     "Unsupported dtype float16"),
])
def test_bad_input_raises_jax_s_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_jax_raises_the_same_classes():
    """The error classes above are JAX's own (checked where JAX gives the same message)."""
    for call in (lambda m: m.linalg.inv(np.ones((3, 4))),
                 lambda m: m.linalg.solve(np.ones((2, 3, 3)), np.ones((2, 3))),
                 lambda m: m.linalg.norm(np.ones((2, 2, 2)), ord=2)):
        with pytest.raises(ValueError):
            call(J)
        with pytest.raises(ValueError):
            call(jnp)
    for call in (lambda m: m.linalg.matrix_power(np.ones((3, 4)), 2),
                 lambda m: m.linalg.matrix_power(np.eye(2), 1.5)):
        with pytest.raises(TypeError):
            call(J)
        with pytest.raises(TypeError):
            call(jnp)


# --- jax.scipy.linalg --------------------------------------------------------------------------

SCIPY = [
    ("solve_triangular", (A, B), {"lower": True}), ("solve_triangular", (A, V[None, None]),
                                                    {"trans": "T"}),
    ("solve_triangular", (A[0, 0], V), {"trans": 2, "unit_diagonal": True}),
    ("cholesky", (SPD,), {}), ("cholesky", (SPD,), {"lower": True}),
    ("solve", (SPD, B), {"assume_a": "pos"}), ("solve", (A[0, 0], V), {}),
    ("det", (A,), {}), ("inv", (A,), {}), ("eigh", (SPD,), {"eigvals_only": True}),
    ("svd", (A,), {"compute_uv": False}), ("expm", (A[0, 0],), {}), ("expm", (3 * A,), {}),
    ("lu", (WIDE[:3],), {}), ("lu", (A[0, 0],), {"permute_l": True}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,args,kw", SCIPY, ids=[f"{c[0]}{i}" for i, c in enumerate(SCIPY)])
def test_scipy_linalg_matches_jax(backend, name, args, kw):
    ours = jitviz.jit(lambda *x: getattr(jsl, name)(*x, **kw), backend=backend)(*args)
    theirs = jax.jit(lambda *x: getattr(JSL, name)(*x, **kw))(*args)
    _assert_like_jax(ours, theirs, rtol=5e-4, atol=1e-4)


def test_factor_and_solve_pairs_match_jax():
    c = jsl.cho_factor(SPD)
    assert c[1] is False
    _assert_like_jax(jsl.cho_solve(c, B), JSL.cho_solve(JSL.cho_factor(SPD), B), rtol=1e-4)
    _assert_like_jax(jsl.cho_solve(jsl.cho_factor(SPD, lower=True), V[None, None]),
                     JSL.cho_solve(JSL.cho_factor(SPD, lower=True), V[None, None]), rtol=1e-4)
    f, F = jsl.lu_factor(A), JSL.lu_factor(A)
    _assert_like_jax(f, F, rtol=1e-5)
    for trans in (0, 1, 2):
        _assert_like_jax(jsl.lu_solve(f, B, trans=trans), JSL.lu_solve(F, B, trans=trans),
                         rtol=1e-3, atol=1e-4)
    assert jsl.qr(A[0, 0], mode="r")[0].shape == (4, 4)
    q, r = jsl.qr(TALL[0], mode="economic")
    np.testing.assert_allclose(q @ r, TALL[0], atol=2e-5)


def test_expm_of_known_matrices():
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(jsl.expm(rot * np.pi / 2), [[0, -1], [1, 0]], atol=1e-6)
    np.testing.assert_array_equal(jsl.expm(np.zeros((3, 3), np.float32)), np.eye(3))
    big = np.diag([10.0, -3.0, 0.5]).astype(np.float64)  # needs squarings
    np.testing.assert_allclose(jsl.expm(big), np.diag(np.exp([10.0, -3.0, 0.5])), rtol=1e-12)


def test_the_decompositions_need_no_scipy():
    """The primitives run NumPy's LAPACK and pocketfft, never SciPy's bindings (Numba's
    np.linalg would): they work where SciPy cannot be imported. (A matmul inside a compiled
    loop, as expm's squarings, still uses SciPy's BLAS through Numba: pyproject.toml.)"""
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import numpy as np, jitviz, jitviz.numpy as jnp, jitviz.scipy.linalg as L\n"
            "a = np.eye(3, dtype=np.float32) * 2\n"
            "f = jitviz.jit(lambda a: (jnp.linalg.inv(a), jnp.linalg.eigh(a), jnp.fft.fft(a),\n"
            "                          jnp.linalg.svd(a), L.cho_solve(L.cho_factor(a), a)))\n"
            "print(float(f(a)[0][0, 0]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "0.5"


# --- the CPU backend inside control flow ---------------------------------------------------------

def test_cpu_runs_linalg_inside_a_compiled_loop():
    """In a region (a Numba function) the LAPACK call runs in an object-mode block."""
    a = SPD[0, 0] / 8

    def f(a, b):
        def body(i, x):
            q, r = jnp.linalg.qr(a + x[0, 0])
            return jnp.linalg.solve(a, x) + lax.linalg.cholesky(a)[:, :2] + r[:, :2]
        return lax.fori_loop(0, 3, body, b)
    ours = jitviz.jit(f, backend="cpu")(a, B[0, 0])
    want = jitviz.jit(f, backend="interpret")(a, B[0, 0])
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)
    exe = jitviz.jit(f, backend="cpu").lower(a, B[0, 0]).compile()
    assert "objmode" in "".join(k.source for k in exe.kernels if hasattr(k, "source")) or \
        any("_linalg_call" in str(getattr(k, "source", "")) for k in exe.kernels)


# --- differentiation -----------------------------------------------------------------------------

X4 = _mat(4, 4)
SPD4 = _spd(n=4)
T46 = _mat(4, 6)
B43 = _mat(4, 3)

GRADS = {
    "solve": (lambda m, x: (m.linalg.solve(x, B43) ** 2).sum(), X4),
    "inv": (lambda m, x: (m.linalg.inv(x) ** 2).sum(), X4),
    "det": (lambda m, x: m.linalg.det(x), X4),
    "slogdet": (lambda m, x: m.linalg.slogdet(x)[1], X4),
    "cholesky": (lambda m, x: (m.linalg.cholesky(x) ** 3).sum(), SPD4),
    "eigh": (lambda m, x: (m.linalg.eigh(x)[0] ** 2).sum() +
             (m.linalg.eigh(x)[1][:, 0] ** 2 * np.arange(4)).sum(), SPD4),
    "svd": (lambda m, x: (m.linalg.svd(x, full_matrices=False)[0][:, :2] ** 2 *
                          np.arange(4)[:, None]).sum() +
            m.linalg.svd(x, full_matrices=False)[1].sum(), T46),
    "svdvals": (lambda m, x: (m.linalg.svd(x, compute_uv=False) ** 2).sum(), T46.T),
    "qr": (lambda m, x: (m.linalg.qr(x)[0] ** 3).sum() + (m.linalg.qr(x)[1] ** 3).sum(), T46.T),
    "pinv": (lambda m, x: (m.linalg.pinv(x) ** 2).sum(), T46),
    "norm2": (lambda m, x: m.linalg.norm(x, 2), X4),
    "lstsq": (lambda m, x: (m.linalg.lstsq(x, T46[0])[0] ** 2).sum(), T46.T),
    "matrix_power": (lambda m, x: m.linalg.matrix_power(x, -3).sum(), X4),
    "lu_solve": (lambda m, x: m.scipy.linalg.lu_solve(m.scipy.linalg.lu_factor(x), B43,
                                                      trans=1).sum(), X4),
    "cho_solve": (lambda m, x: (m.scipy.linalg.cho_solve(
        m.scipy.linalg.cho_factor(x), B43) ** 2).sum(), SPD4),
    "solve_triangular": (lambda m, x: (m.scipy.linalg.solve_triangular(
        x + 4 * np.eye(4, dtype=np.float32), B43, lower=True, trans=1) ** 2).sum(), X4),
    "expm": (lambda m, x: (m.scipy.linalg.expm(x * 0.3) ** 2).sum(), X4),
}


class _Modules:
    def __init__(self, numpy, scipy):
        self.linalg, self.scipy = numpy.linalg, scipy


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_jax(name):
    import jax.scipy  # noqa: F401
    import jitviz.scipy  # noqa: F401
    f, x = GRADS[name]
    ours = jitviz.jit(jitviz.grad(lambda x: f(_Modules(jnp, jitviz.scipy), x)))(x)
    theirs = jax.grad(lambda x: f(_Modules(J, jax.scipy), x))(x)
    scale = 1e-3 + np.max(np.abs(np.asarray(theirs)))
    assert np.max(np.abs(np.asarray(ours) - np.asarray(theirs))) <= 2e-5 * scale * 10


@pytest.mark.parametrize("name", ["solve", "det", "eigh", "svd", "qr", "cholesky", "lu_solve"])
def test_gradients_match_finite_differences_in_float64(name, x64):
    import jitviz.scipy  # noqa: F401
    f, x = GRADS[name]
    x = x.astype(np.float64)
    g = np.asarray(jitviz.grad(lambda x: f(_Modules(jnp, jitviz.scipy), x))(x))
    direction = RNG.standard_normal(x.shape)
    if name in ("eigh", "cholesky"):
        direction = direction + direction.T  # stay symmetric: the functions symmetrize
    eps = 1e-6
    fd = (float(f(_Modules(jnp, jitviz.scipy), x + eps * direction)) -
          float(f(_Modules(jnp, jitviz.scipy), x - eps * direction))) / (2 * eps)
    assert abs(np.sum(g * direction) - fd) <= 1e-6 * (1 + abs(fd))


def test_forward_mode_matches_jax():
    t = _mat(4, 4)
    for f in (lambda m, x: m.linalg.inv(x), lambda m, x: m.linalg.eigh(x + x.T)[0],
              lambda m, x: m.linalg.qr(x)[1], lambda m, x: m.linalg.slogdet(x)[1]):
        _, ours = jitviz.jvp(lambda x: f(jnp, x), (X4,), (t,))
        _, theirs = jax.jvp(lambda x: f(J, x), (X4,), (t,))
        np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=2e-4)


def test_full_matrices_svd_is_differentiable_only_when_square_as_in_jax():
    for m in (jnp, J):
        with pytest.raises(NotImplementedError, match="full matrices"):
            jax.grad(lambda x: J.linalg.svd(x)[0].sum())(T46) if m is J else \
                jitviz.grad(lambda x: jnp.linalg.svd(x)[0].sum())(T46)
    ours = jitviz.grad(lambda x: (jnp.linalg.svd(x)[0] ** 3).sum())(X4)
    theirs = jax.grad(lambda x: (J.linalg.svd(x)[0] ** 3).sum())(X4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-4)


# --- vmap ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda a, b: jnp.linalg.solve(a, b), lambda a, b: jnp.linalg.det(a) * b.sum(),
    lambda a, b: jnp.linalg.eigh(a @ a.T)[0], lambda a, b: jnp.linalg.svd(a)[1],
    lambda a, b: jnp.linalg.qr(a)[1], lambda a, b: jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)),
    lambda a, b: lax.linalg.lu(a)[2], lambda a, b: jsl.solve_triangular(a, b, lower=True),
    lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), lambda a, b: jnp.linalg.pinv(a[:, :3]),
])
def test_vmap_matches_a_loop(f):
    a, b = _mat(5, 4, 4), _mat(4, 5, 2)  # b batched along its axis 1
    got = jitviz.vmap(f, in_axes=(0, 1))(a, b)
    want = np.stack([np.asarray(f(a[i], b[:, i])) for i in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    unbatched_b = jitviz.vmap(f, in_axes=(0, None))(a, b[:, 0])
    want_b = np.stack([np.asarray(f(a[i], b[:, 0])) for i in range(5)])
    np.testing.assert_allclose(unbatched_b, want_b, rtol=1e-4, atol=1e-5)


def test_grad_of_vmap_and_vmap_of_grad():
    a = _mat(3, 4, 4)
    per = jitviz.vmap(jitviz.grad(lambda x: jnp.linalg.slogdet(x)[1]))(a)
    want = np.stack([np.asarray(jax.grad(lambda x: J.linalg.slogdet(x)[1])(a[i]))
                     for i in range(3)])
    np.testing.assert_allclose(per, want, rtol=1e-4, atol=1e-5)


# --- differentiation on complex inputs, and in float64 -------------------------------------------
# Each case's jvp and vjp against JAX's. Outputs that are unique only up to a phase per column
# (eigenvectors, singular vectors) are compared through phase-invariant views.

CRNG = np.random.default_rng(5)


def _cmat(*shape):
    return CRNG.standard_normal(shape) + 1j * CRNG.standard_normal(shape)


def _phase_free(v):
    return v * v.conj()  # a column times e^{i t} leaves |v|^2 unchanged


def _as(const, x):
    """A constant operand in `x`'s dtype (its real part for a real x)."""
    kind = np.dtype(x.dtype).kind
    return (const if kind == "c" else const.real).astype(x.dtype)


class _Mods:
    def __init__(self, numpy, lax_):
        self.np, self.lax = numpy, lax_


CX = _cmat(4, 4) + 3 * np.eye(4)
CH = (lambda a: a @ a.conj().T + 4 * np.eye(4))(_cmat(4, 4))
CT = np.tril(_cmat(4, 4)) + 3 * np.eye(4)
CB = _cmat(4, 2)
CTALL = _cmat(6, 4)

COMPLEX_AD = {  # name: (f(modules, x), x)
    "cholesky": (lambda m, x: m.np.linalg.cholesky(x), CH),
    "cholesky_lower_triangle": (lambda m, x: m.lax.linalg.cholesky(x, symmetrize_input=False),
                                CH),
    "triangular_solve_a": (lambda m, x: m.lax.linalg.triangular_solve(
        x, _as(CB, x), left_side=True, lower=True), CT),
    "triangular_solve_b_with_a_H": (lambda m, x: m.lax.linalg.triangular_solve(
        _as(CT, x), x, left_side=True, lower=True, transpose_a=True, conjugate_a=True), CB),
    "triangular_solve_right_a_H": (lambda m, x: m.lax.linalg.triangular_solve(
        x, _as(CB.T, x), left_side=False, lower=True, transpose_a=True, conjugate_a=True), CT),
    "triangular_solve_conj_a": (lambda m, x: m.lax.linalg.triangular_solve(
        x, _as(CB, x), left_side=True, lower=False, conjugate_a=True, unit_diagonal=True), CT.T),
    "lu": (lambda m, x: m.lax.linalg.lu(x)[0], CX),
    "qr_reduced": (lambda m, x: tuple(m.lax.linalg.qr(x, full_matrices=False)), CTALL),
    "qr_square": (lambda m, x: tuple(m.np.linalg.qr(x)), CX),
    "eigh": (lambda m, x: (lambda v, w: (_phase_free(v), w))(*m.lax.linalg.eigh(x)), CH),
    "eigh_subspace": (lambda m, x: (lambda w, v: (w, v[:, :2] @ v[:, :2].conj().T))(
        *m.np.linalg.eigh(x)), CH),
    "svd": (lambda m, x: (lambda u, s, vh: (s, _phase_free(u), u @ vh))(
        *m.np.linalg.svd(x, full_matrices=False)), CTALL),
    "svdvals": (lambda m, x: m.np.linalg.svd(x, compute_uv=False), CX),
    "fft": (lambda m, x: m.np.fft.fft(x), CX),
    "ifft2": (lambda m, x: m.np.fft.ifft2(x), CX),
    "rfft": (lambda m, x: m.np.fft.rfft(x.real * 2 + x.imag), CX),
    "irfft": (lambda m, x: m.np.fft.irfft(x, n=6), CX),
    "solve": (lambda m, x: m.np.linalg.solve(x, _as(CB, x)), CX),
    "inv": (lambda m, x: m.np.linalg.inv(x), CX),
    "det": (lambda m, x: m.np.linalg.det(x), CX),
    "slogdet": (lambda m, x: tuple(m.np.linalg.slogdet(x)), CX),
    "eigvalsh": (lambda m, x: m.np.linalg.eigvalsh(x), CH),
    "norm_fro": (lambda m, x: m.np.linalg.norm(x), CX),
    "norm_2": (lambda m, x: m.np.linalg.norm(x, 2), CX),
    "norm_nuc": (lambda m, x: m.np.linalg.norm(x, "nuc"), CX),
    "pinv": (lambda m, x: m.np.linalg.pinv(x), CTALL),
}
# the primitives with a Numba lowering of their own: their vjps also run compiled
COMPILED_AD = {"triangular_solve_a", "triangular_solve_b_with_a_H",
               "triangular_solve_right_a_H", "triangular_solve_conj_a", "lu", "cholesky"}


@pytest.fixture
def jax_x64():
    """x64 on in both jitviz and JAX for one test."""
    with jax_x64_enabled(), x64_enabled():
        yield


def _cotangents_like(out):
    leaves = jax.tree_util.tree_leaves(out)
    made = []
    for leaf in leaves:
        leaf = np.asarray(leaf)
        z = CRNG.standard_normal(leaf.shape)
        if leaf.dtype.kind == "c":
            z = z + 1j * CRNG.standard_normal(leaf.shape)
        made.append(z.astype(leaf.dtype))
    return tuple(made) if isinstance(out, tuple) else made[0]


def _assert_ad_matches_jax(name, dtype, rtol, compiled):
    f, x = COMPLEX_AD[name]
    x = (x if np.dtype(dtype).kind == "c" else x.real).astype(dtype)
    t = _cmat(*x.shape).astype(dtype) if np.dtype(dtype).kind == "c" else \
        CRNG.standard_normal(x.shape).astype(dtype)
    ours_f, theirs_f = (lambda x: f(_Mods(jnp, lax), x)), (lambda x: f(_Mods(J, jax.lax), x))
    out, theirs_t = jax.jvp(theirs_f, (x,), (t,))
    _, ours_t = jitviz.jvp(ours_f, (x,), (t,))
    ct = _cotangents_like(out)
    (theirs_g,) = jax.vjp(theirs_f, x)[1](ct)
    got = {"jvp": ours_t, "vjp": jitviz.vjp(ours_f, x)[1](ct)[0]}
    if compiled:
        got["compiled vjp"] = jitviz.jit(lambda x, ct: jitviz.vjp(ours_f, x)[1](ct)[0])(x, ct)
    for what, ours in got.items():
        theirs = theirs_t if what == "jvp" else theirs_g
        for o, w in zip(_leaves(ours), _leaves(theirs)):
            assert o.dtype == w.dtype and o.shape == w.shape, (what, o.dtype, w.dtype)
            scale = 1e-3 + np.max(np.abs(w), initial=0)
            assert np.max(np.abs(o - w), initial=0) <= rtol * scale, (what, o, w)


@pytest.mark.parametrize("name", list(COMPLEX_AD))
def test_complex_jvp_and_vjp_match_jax(name):
    _assert_ad_matches_jax(name, np.complex64, 2e-5, compiled=name in COMPILED_AD)


@pytest.mark.parametrize("dtype", [np.complex128, np.float64])
@pytest.mark.parametrize("name", list(COMPLEX_AD))
def test_jvp_and_vjp_match_jax_in_64_bits(name, dtype, jax_x64):
    _assert_ad_matches_jax(name, dtype, 1e-11, compiled=False)


COMPLEX_HERMITIAN = np.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]],
                             np.complex64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_holomorphic_gradient_through_cholesky_matches_jax(backend):
    """JAX's complex-differentiation notebook: grad(holomorphic=True) through a Cholesky
    factor (its vjp solves with L^H, a conjugated transposed triangular solve)."""
    def f(m):
        def loss(x):
            L = m.linalg.cholesky(x)
            return m.sum((L - m.sin(L)) ** 2)
        return loss
    ours = jitviz.jit(jitviz.grad(f(jnp), holomorphic=True), backend=backend)(COMPLEX_HERMITIAN)
    theirs = jax.grad(f(J), holomorphic=True)(COMPLEX_HERMITIAN)
    _assert_like_jax(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "lu"])
def test_holomorphic_gradients_match_jax(name):
    f, x = COMPLEX_AD[name]
    x = x.astype(np.complex64)
    ours = jitviz.grad(lambda x: jnp.sum(f(_Mods(jnp, lax), x) ** 2), holomorphic=True)(x)
    theirs = jax.grad(lambda x: J.sum(f(_Mods(J, jax.lax), x) ** 2), holomorphic=True)(x)
    _assert_like_jax(ours, theirs, rtol=2e-5, atol=2e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_triangular_solve_with_conjugate_a_alone_solves_with_conj_a(backend):
    """conjugate_a without transpose_a is op(a) = conj(a), as JAX's (it was ignored)."""
    a, b = CT.astype(np.complex64), CB.astype(np.complex64)
    for lower, left_side in ((True, True), (False, False)):
        bb = b if left_side else b.T
        ours = jitviz.jit(lambda a, b: lax.linalg.triangular_solve(
            a, b, left_side=left_side, lower=lower, conjugate_a=True), backend=backend)(
                a if lower else a.T, bb)
        theirs = jax.lax.linalg.triangular_solve(a if lower else a.T, bb, left_side=left_side,
                                                 lower=lower, conjugate_a=True)
        _assert_like_jax(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_lu_pivots_as_lapack_does(backend):
    """getrf ranks complex pivots by |re| + |im|: in the first column 2+2j (4) beats 3 (whose
    modulus is larger)."""
    a = np.array([[3, 1], [2 + 2j, 1j]], np.complex64)
    batch = _cmat(3, 7, 5).astype(np.complex64)
    for x in (a, batch):
        _assert_like_jax(jitviz.jit(lax.linalg.lu, backend=backend)(x), jax.lax.linalg.lu(x),
                         rtol=1e-5, atol=1e-5)


# --- CUDA, in Numba's simulator ------------------------------------------------------------------

CUDA_PROGRAM = """
import numpy as np, jitviz, jitviz.numpy as jnp, jitviz.scipy.linalg as jsl
from jitviz import lax
from jitviz.backends.cuda import CudaArray
rng = np.random.default_rng(0)
a = rng.standard_normal((2, 4, 4)).astype(np.float32)
b = rng.standard_normal((2, 4, 3)).astype(np.float32)

def f(a, b):
    spd = a @ jnp.swapaxes(a, -1, -2) + 4 * jnp.eye(4)
    x = jnp.linalg.solve(a, b) * 2.0 + 1.0           # kernels around the host steps
    w, v = jnp.linalg.eigh(spd)
    s = jnp.linalg.svd(a, compute_uv=False)
    y = jsl.cho_solve(jsl.cho_factor(spd), b)
    spectrum = jnp.abs(jnp.fft.rfft(b, axis=1))
    loop = lax.fori_loop(0, 2, lambda i, c: jnp.linalg.inv(spd) @ c + 1.0, b)
    return x, w, jnp.abs(v), s, y, spectrum, loop

ours = jitviz.jit(f, backend="cuda")(a, b)
want = jitviz.jit(f, backend="interpret")(a, b)
assert all(isinstance(o, CudaArray) for o in ours)
for o, w in zip(ours, want):
    np.testing.assert_allclose(np.asarray(o), w, rtol=2e-4, atol=2e-4)
print("ok", len(ours))
"""


def test_cuda_runs_linalg_as_host_steps_in_the_simulator():
    assert run_program_in_simulator(CUDA_PROGRAM).strip().endswith("ok 7")


# --- eig, eigvals, roots: general (non-symmetric) matrices --------------------------------------

GENERAL = np.array([[[1.0, 2.0, 0.5], [-3.0, 0.5, 1.0], [0.2, 0.0, 2.0]],
                    [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]]], np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_eig_eigenvalues_match_jax_and_eigenvectors_solve_the_problem(backend):
    """Eigenvalues in LAPACK geev's order, as JAX's; each eigenvector up to a phase (LAPACK
    builds may differ there), so checked by A v = w v with unit norm."""
    w, v = jitviz.jit(jnp.linalg.eig, backend=backend)(GENERAL)
    W, _ = J.linalg.eig(GENERAL)
    _assert_like_jax(w, W, rtol=1e-5, atol=1e-5)
    assert v.dtype == np.complex64 and v.shape == GENERAL.shape
    np.testing.assert_allclose(GENERAL @ v, v * w[..., None, :], atol=2e-5)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=1e-5)
    _assert_like_jax(jitviz.jit(jnp.linalg.eigvals, backend=backend)(GENERAL),
                     J.linalg.eigvals(GENERAL), rtol=1e-5, atol=1e-5)
    w, vl, vr = jitviz.jit(lax.linalg.eig, backend=backend)(GENERAL)
    lh = np.conj(np.swapaxes(vl, -1, -2))  # left: vl^H A = w vl^H
    np.testing.assert_allclose(lh @ GENERAL, w[..., :, None] * lh, atol=2e-5)
    np.testing.assert_allclose(GENERAL @ vr, vr * w[..., None, :], atol=2e-5)


def test_eig_of_complex_empty_and_integer_matrices():
    c = (GENERAL[0] + 1j * GENERAL[1]).astype(np.complex64)
    w, v = jnp.linalg.eig(c)
    np.testing.assert_allclose(c @ v, v * w[None, :], atol=2e-5)
    assert jnp.linalg.eigvals(np.zeros((2, 0, 0), np.float32)).shape == (2, 0)
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.int32)).dtype == np.complex64
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.eig(np.ones((2, 3), np.float32))


def test_eigenvalue_gradients_match_jax_and_eigenvector_gradients_refuse():
    def f(m, x):
        w = m.linalg.eigvals(x)
        return (m.real(w) ** 2).sum() + m.imag(w).prod()
    x = GENERAL[0]
    ours = jitviz.jit(jitviz.grad(lambda x: f(jnp, x)))(x)
    np.testing.assert_allclose(ours, jax.grad(lambda x: f(J, x))(x), rtol=1e-4, atol=1e-5)
    t = _mat(3, 3)
    _, tours = jitviz.jvp(lambda x: jnp.linalg.eigvals(x), (x,), (t,))
    _, ttheirs = jax.jvp(lambda x: J.linalg.eigvals(x), (x,), (t,))
    np.testing.assert_allclose(tours, ttheirs, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="derivatives of eigenvectors"):
        jitviz.grad(lambda x: jnp.real(jnp.linalg.eig(x)[1]).sum())(x)
    batched = jitviz.vmap(jnp.linalg.eigvals)(GENERAL)
    _assert_like_jax(batched, J.linalg.eigvals(GENERAL), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("p", [[0.0, 1.0, -3.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0], [2.0],
                               [0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])
def test_roots_match_jax(p):
    p = np.array(p, np.float32)
    _assert_like_jax(jnp.roots(p), J.roots(p), rtol=1e-5, atol=1e-5)
    ours = jitviz.jit(lambda p: jnp.roots(p, strip_zeros=False), backend="cpu")(p)
    theirs = jax.jit(lambda p: J.roots(p, strip_zeros=False))(p)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_roots_under_jit_ask_for_strip_zeros_false():
    with pytest.raises(jitviz.errors.ConcretizationTypeError, match="strip_zeros=False"):
        jitviz.jit(jnp.roots)(np.array([1.0, 2.0], np.float32))
