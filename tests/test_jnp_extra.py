"""The jnp functions composed from existing ones (jitviz/numpy/extra.py, mathextra.py,
einsum.py) against real JAX: values, dtypes, weak types and shapes, eagerly and under
`jitviz.jit` (the Numba cpu backend for one case of each function, the interpreter for the
rest, to keep compile time down), gradients for a few, and the exception types JAX raises."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.tree import tree_flatten

jax = pytest.importorskip("jax")
rjnp = jax.numpy

rng = np.random.default_rng(0)
F = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
F3 = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
V = rng.uniform(-2, 2, (5,)).astype(np.float32)
W = rng.uniform(-2, 2, (3,)).astype(np.float32)
I = rng.integers(-5, 6, (3, 4)).astype(np.int32)
IV = rng.integers(-5, 6, (6,)).astype(np.int32)
B = rng.uniform(size=(3, 4)) > 0.5
NANS = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan],
                 [0.5, 2.0, np.nan, 4.0]], np.float32)
SQ = rng.uniform(-2, 2, (4, 4)).astype(np.float32)
EMPTY = np.zeros((0, 3), np.float32)

# each case jits a new closure: the retrace warning is expected here
pytestmark = pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")
_JITTED = set()  # functions already compiled with Numba once (the rest run interpreted)


def _compare(ours, theirs, rtol, atol):
    ol, _ = tree_flatten(ours)
    tl = jax.tree_util.tree_leaves(theirs)
    assert len(ol) == len(tl), (ours, theirs)
    for o, t in zip(ol, tl):
        if isinstance(t, (int, float, bool)):  # a static answer (broadcast_shapes)
            assert o == t and type(o) is type(t)
            continue
        a = np.asarray(o)
        assert a.shape == t.shape, (a.shape, t.shape)
        assert a.dtype == t.dtype, (a.dtype, t.dtype)
        assert bool(getattr(o, "weak_type", False)) == bool(t.weak_type), "weak type"
        np.testing.assert_allclose(a, np.asarray(t), rtol=rtol, atol=atol, equal_nan=True)


def check(name, *args, rtol=1e-5, atol=1e-5, jit=True, **kw):
    """jnp.<name>(*args, **kw) equals jax.numpy.<name> eagerly and under jitviz.jit (NumPy
    array arguments are traced, everything else is closed over)."""
    ours, theirs = getattr(jnp, name), getattr(rjnp, name)
    expected = theirs(*args, **kw)
    _compare(ours(*args, **kw), expected, rtol, atol)
    if not jit:
        return
    dyn = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def f(*xs):
        full = list(args)
        for i, x in zip(dyn, xs):
            full[i] = x
        return ours(*full, **kw)
    backend = "interpret" if name in _JITTED else "cpu"
    _JITTED.add(name)
    _compare(jitviz.jit(f, backend=backend)(*[args[i] for i in dyn]), expected, rtol, atol)


CASES = [
    ("diff", (F,), {}), ("diff", (I,), {"n": 2, "axis": 0}), ("diff", (B,), {}),
    ("diff", (V,), {"prepend": 0.0, "append": W}), ("diff", (EMPTY,), {}),
    ("ediff1d", (I,), {}), ("ediff1d", (V,), {"to_begin": 1.0, "to_end": W}),
    ("ediff1d", (IV,), {"to_begin": 0.5}),
    ("roll", (F, 1), {}), ("roll", (F, -2, 1), {}), ("roll", (I, (1, 2), (0, 1)), {}),
    ("roll", (B, 5, 0), {}),
    ("rot90", (F,), {}), ("rot90", (F3, 3, (1, 2)), {}), ("rot90", (I, 2), {}),
    ("pad", (F, 2), {}), ("pad", (I, ((1, 0), (2, 3))), {"constant_values": 7}),
    ("pad", (F, ((1, 2), (3, 1))), {"mode": "edge"}),
    ("pad", (F, 2), {"mode": "reflect"}), ("pad", (F, ((2, 3), (1, 4))), {"mode": "symmetric"}),
    ("pad", (I, ((5, 2), (1, 9))), {"mode": "wrap"}), ("pad", (B, 1), {}),
    ("pad", (EMPTY, ((0, 0), (1, 1))), {"mode": "edge"}),
    ("split", (F, 2, 1), {}), ("split", (IV, [1, 4]), {}), ("array_split", (V, 3), {}),
    ("hsplit", (F, 2), {}), ("vsplit", (F, [1]), {}), ("dsplit", (F3, 2), {}),
    ("meshgrid", (V, W), {}), ("meshgrid", (V, W, IV), {"indexing": "ij"}),
    ("meshgrid", (V, W), {"sparse": True}),
    ("indices", ((2, 3),), {}), ("indices", ((2, 3),), {"sparse": True}),
    ("tril", (F,), {}), ("triu", (F3, 1), {}), ("tril", (B, -1), {}),
    ("tril_indices", (4,), {}), ("triu_indices", (3, 1, 5), {}),
    ("tril_indices_from", (F,), {}), ("triu_indices_from", (F, -1), {}),
    ("diag", (V,), {}), ("diag", (W, -2), {}), ("diag", (F, 1), {}), ("diag", (I,), {}),
    ("diagonal", (F3,), {}), ("diagonal", (F3, -1, 2, 1), {}), ("diagonal", (F, 5), {}),
    ("diag_indices", (3,), {}), ("diag_indices_from", (SQ,), {}),
    ("fill_diagonal", (F, 9.0), {"inplace": False}),
    ("fill_diagonal", (SQ, W), {"inplace": False}),
    ("kron", (F, W), {}), ("kron", (I, np.eye(2, dtype=np.int32)), {}),
    ("cross", (F[:, :3], F[:, 1:]), {}), ("cross", (F[:, :2], F[:, 2:]), {}),
    ("cross", (F3[:, :, :3], W), {}), ("cross", (F[:2, :3], F[:, 1:2]), {"axisb": 0}),
    ("take_along_axis", (F, np.argsort(F, axis=1).astype(np.int32), 1), {}),
    ("take_along_axis", (V, np.array([4, 0, 2], np.int32), None), {}),
    ("take_along_axis", (F, np.array([[-1, 7], [0, -9], [3, 4]], np.int32), 1), {}),
    ("take_along_axis", (I, np.array([[-1, 7], [0, -9], [3, 4]], np.int32), 1),
     {"mode": "clip"}),
    ("take_along_axis", (F, np.array([[2], [5], [-4]], np.int32), 1), {"fill_value": 1.5}),
    ("put_along_axis", (F, np.array([[0], [2], [1]], np.int32), 5.0, 1), {"inplace": False}),
    ("isin", (I, np.array([1, 2, -3], np.int32)), {}),
    ("isin", (I, np.array([0, 4], np.int32)), {"invert": True}),
    ("nansum", (NANS,), {}), ("nansum", (NANS, 1), {}), ("nansum", (I,), {}),
    ("nanprod", (NANS, 0), {}), ("nanmax", (NANS, 1), {}), ("nanmin", (NANS,), {}),
    ("nanmax", (I, 0), {}), ("nanmean", (NANS, 1), {}), ("nanmean", (I,), {}),
    ("nanvar", (NANS, 1), {}), ("nanvar", (NANS,), {"ddof": 1}), ("nanstd", (NANS, 0), {}),
    ("nanargmax", (NANS, 1), {}), ("nanargmin", (NANS,), {}), ("nanargmax", (I, 0), {}),
    ("nanmean", (NANS,), {"keepdims": True}),
    ("cov", (F,), {}), ("cov", (F, F + 1), {"rowvar": False}), ("cov", (V,), {}),
    ("cov", (I,), {"bias": True}), ("corrcoef", (F,), {}), ("corrcoef", (V, V * 2 + 1), {}),
    ("convolve", (V, W), {}), ("convolve", (W, V), {"mode": "same"}),
    ("convolve", (V, W[:2]), {"mode": "same"}), ("convolve", (V, W), {"mode": "valid"}),
    ("convolve", (IV, IV[:3]), {}),
    ("correlate", (V, W), {}), ("correlate", (W, V), {"mode": "full"}),
    ("correlate", (V, W[:2]), {"mode": "same"}),
    ("polyval", (W, F), {}), ("polyval", (IV[:3], IV), {}), ("polyval", (W, 2.0), {}),
    ("logspace", (0.0, 2.0, 5), {}), ("logspace", (1, 3, 4), {"base": 2.0, "endpoint": False}),
    ("geomspace", (1.0, 1000.0, 4), {}), ("geomspace", (-1.0, -16.0, 5), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1.0], np.float32),), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf], np.float32),),
     {"nan": 1.0, "posinf": 2.0, "neginf": -2.0}), ("nan_to_num", (I,), {}),
    ("select", ([F > 0, F < -1], [F, F * 2]), {}),
    ("select", ([I > 0, I < -1], [I, 2 * I]), {"default": -7}),
    ("vander", (W,), {}), ("vander", (IV[:4], 3), {"increasing": True}),
    ("atleast_3d", (V,), {}), ("atleast_3d", (F,), {}), ("atleast_3d", (1.0,), {}),
    ("atleast_3d", (F3, W), {}), ("modf", (2.5,), {}), ("kron", (2.0, F), {}),
    ("select", ([F > 1], [2.0]), {}), ("nansum", (B,), {}), ("roll", (3.0, 1), {}),
    ("rot90", (EMPTY,), {}), ("tril", (EMPTY,), {}), ("split", (EMPTY, 3, 1), {}),
    ("angle", (F,), {}), ("angle", (I,), {"deg": True}), ("angle", (1.0,), {}),
    ("angle", (np.array([1 + 1j, -2j], np.complex64),), {}),
    ("ldexp", (F, I), {}), ("ldexp", (I, 3), {}), ("ldexp", (2.0, IV), {}),
    ("modf", (F * 3,), {}), ("modf", (I,), {}),
    ("gcd", (I, np.int32(6)), {}), ("gcd", (6, 4), {}), ("gcd", (IV, IV[::-1]), {}),
    ("lcm", (I, np.int32(4)), {}), ("lcm", (IV, IV[::-1]), {}),
]


@pytest.mark.parametrize("name,args,kw", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kw):
    check(name, *args, **kw)


def test_block():
    a, b = F[:, :2], F[:, 2:]
    check("block", [[a, b], [b, a]], jit=False)
    check("block", [V, W], jit=False)
    check("block", [[1.0, 2.0], [3.0, 4.0]], jit=False)
    f = jitviz.jit(lambda a, b: jnp.block([[a, b], [b, a]]))
    _compare(f(a, b), rjnp.block([[a, b], [b, a]]), 1e-6, 1e-6)


def test_broadcast_shapes():
    assert jnp.broadcast_shapes((3, 1), (4,)) == rjnp.broadcast_shapes((3, 1), (4,))
    assert jnp.broadcast_shapes((2, 1, 3), (), (5, 1)) == (2, 5, 3)
    with pytest.raises(ValueError):
        jnp.broadcast_shapes((3,), (4,))


def test_piecewise():
    conds = lambda x: [x < 0, x > 1]
    funcs = [lambda x: -x, lambda x: x * 2, 0.5]
    expected = rjnp.piecewise(F, conds(F), funcs)
    _compare(jnp.piecewise(F, conds(F), funcs), expected, 1e-6, 1e-6)
    _compare(jitviz.jit(lambda x: jnp.piecewise(x, conds(x), funcs))(F), expected, 1e-6, 1e-6)
    # the last true condition wins, constants take x's dtype
    c = [I > 0, I > 2]
    _compare(jnp.piecewise(I, c, [1, 2]), rjnp.piecewise(I, c, [1, 2]), 0, 0)


def test_pad_traced_constant():
    expected = rjnp.pad(F, ((1, 0), (2, 1)), constant_values=F[0, 0])
    f = jitviz.jit(lambda x, c: jnp.pad(x, ((1, 0), (2, 1)), constant_values=c))
    _compare(f(F, F[0, 0]), expected, 0, 0)


def test_roll_traced_shift():
    expected = rjnp.roll(F, 3, axis=1)
    _compare(jitviz.jit(lambda x, s: jnp.roll(x, s, axis=1))(F, np.int32(3)), expected, 0, 0)
    _compare(jitviz.jit(lambda x, s: jnp.roll(x, s))(F, np.int32(-7)), rjnp.roll(F, -7), 0, 0)


EINSUM = [
    ("ij,jk->ik", F, F.T), ("ij,jk", F, F.T), ("i,i->", V, V), ("i,j->ij", V, W),
    ("ij->ji", F), ("ij->", F), ("ij", F), ("ji", F), ("bij,bjk->bik", F3, F3.transpose(0, 2, 1)),
    ("...ij,...jk->...ik", F3, F3.transpose(0, 2, 1)), ("...i,...i->...", F3, F),
    ("ij,ij->i", F, F), ("ij,k->ijk", F, W), ("bij,jk->bk", F3, F.T), ("i...->...i", F3),
    ("ij,jk,kl->il", F, F.T, F), ("ij,jk->ik", I, I.T), ("ij,jk->ik", F, I.T),
    ("...j,j->...", F3, F[0]), ("ij,i->j", F, W), ("ii->i", SQ), ("ii", SQ),
    ("iij,jk->ik", np.stack([SQ] * 3, 2), F), ("bii->b", np.stack([SQ, SQ.T])),
]


@pytest.mark.parametrize("case", EINSUM, ids=[c[0] for c in EINSUM])
def test_einsum(case):
    check("einsum", *case)


def test_einsum_unsupported():
    with pytest.raises(NotImplementedError):
        jnp.einsum(SQ, [0, 1])
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", F)
    with pytest.raises(ValueError):
        jnp.einsum("ii->i", F)


def test_vectorize():
    def f(x, y):
        return x * 2 + y
    expected = rjnp.vectorize(f)(F, W[:, None])
    _compare(jnp.vectorize(f)(F, W[:, None]), expected, 1e-6, 1e-6)
    _compare(jitviz.jit(jnp.vectorize(f))(F, W[:, None]), expected, 1e-6, 1e-6)
    dot = lambda a, b: jnp.sum(a * b)
    sig = "(n),(n)->()"
    _compare(jnp.vectorize(dot, signature=sig)(F3, F), rjnp.vectorize(
        lambda a, b: rjnp.sum(a * b), signature=sig)(F3, F), 1e-5, 1e-5)
    two = lambda m: lambda a, b: (m.sum(a * b), a[::-1])
    sig2 = "(n),(n)->(),(n)"
    _compare(jitviz.jit(jnp.vectorize(two(jnp), signature=sig2))(F3, F),
             rjnp.vectorize(two(rjnp), signature=sig2)(F3, F), 1e-5, 1e-5)
    with pytest.raises(ValueError):
        jnp.vectorize(dot, signature=sig)(F, W)
    scale = lambda x, k: x * k
    _compare(jnp.vectorize(scale, excluded={1})(F, 3.0),
             rjnp.vectorize(scale, excluded={1})(F, 3.0), 1e-6, 1e-6)


def test_apply_along_axis():
    f = lambda v: jnp.sum(v * v)
    g = lambda v: rjnp.sum(v * v)
    for axis in (0, 1, 2):
        _compare(jnp.apply_along_axis(f, axis, F3), rjnp.apply_along_axis(g, axis, F3),
                 1e-5, 1e-5)
    h = lambda v: v[::-1] * 2
    _compare(jnp.apply_along_axis(h, 1, F), rjnp.apply_along_axis(h, 1, F), 0, 0)


GRADS = [
    ("roll", lambda m: lambda x: m.sum(m.roll(x, 2, axis=1) * F)),
    ("pad", lambda m: lambda x: m.sum(m.pad(x, 2, mode="reflect") ** 2)),
    ("pad-constant", lambda m: lambda x: m.sum(m.pad(x, ((1, 2), (0, 3))) * 3)),
    ("diff", lambda m: lambda x: m.sum(m.diff(x, n=2) ** 2)),
    ("einsum", lambda m: lambda x: m.einsum("ij,kj->", x, m.sin(x))),
    ("convolve", lambda m: lambda x: m.sum(m.convolve(x[0], x[1, :3], mode="same") ** 2)),
    ("nanmean", lambda m: lambda x: m.nanmean(x * x)),
    ("cross", lambda m: lambda x: m.sum(m.cross(x[:, :3], x[:, 1:]))),
]


@pytest.mark.parametrize("name,make", GRADS, ids=[g[0] for g in GRADS])
def test_grad(name, make):
    expected = jax.grad(make(rjnp))(F)
    np.testing.assert_allclose(jitviz.grad(make(jnp))(F), expected, rtol=1e-5, atol=1e-5)


def test_batching():
    out = jitviz.vmap(lambda x: jnp.roll(jnp.diff(x), 1))(F)
    np.testing.assert_allclose(out, jax.vmap(lambda x: rjnp.roll(rjnp.diff(x), 1))(F))
    out = jitviz.vmap(lambda x: jnp.einsum("i,j->ij", x, x))(F)
    np.testing.assert_allclose(out, jax.vmap(lambda x: rjnp.einsum("i,j->ij", x, x))(F),
                               rtol=1e-6)


ERRORS = [
    ("diff", (np.float32(1.0),), {}), ("diff", (V,), {"n": -1}),
    ("rot90", (V,), {}), ("rot90", (F,), {"axes": (0, 0)}),
    ("pad", (F, -1), {}), ("pad", (F, 1), {"mode": "bogus"}),
    ("pad", (EMPTY, 1), {"mode": "wrap"}),
    ("split", (V, 2), {}), ("split", (V, 0), {}), ("dsplit", (F, 2), {}),
    ("meshgrid", (V, W), {"indexing": "ab"}), ("tril", (V,), {}), ("triu", (V,), {}),
    ("diag", (F3,), {}), ("diagonal", (V,), {}),
    ("fill_diagonal", (F, 1.0), {}), ("fill_diagonal", (V, 1.0), {"inplace": False}),
    ("fill_diagonal", (F3, 1.0), {"inplace": False}),
    ("cross", (F, F), {}),
    ("take_along_axis", (F, np.zeros((3,), np.int32), 1), {}),
    ("take_along_axis", (F, np.zeros((3, 1), np.float32), 1), {}),
    ("put_along_axis", (F, np.zeros((3, 1), np.int32), 1.0, 1), {}),
    ("convolve", (F, W), {}), ("convolve", (V, np.zeros(0, np.float32)), {}),
    ("convolve", (V, W), {"mode": "other"}), ("correlate", (V, F), {}),
    ("select", ([F > 0], [F, F]), {}), ("select", ([], []), {}),
    ("vander", (F,), {}), ("vander", (V, -1), {}), ("vander", (B[0],), {}),
    ("ldexp", (F, F), {}), ("gcd", (F, F), {}), ("lcm", (V, IV[:5]), {}),
    ("piecewise", (F, [F > 0], [1, 2, 3]), {}),
]


@pytest.mark.parametrize("name,args,kw", ERRORS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ERRORS)])
def test_errors_match_jax(name, args, kw):
    with pytest.raises(Exception) as theirs:
        getattr(rjnp, name)(*args, **kw)
    with pytest.raises(Exception) as ours:
        getattr(jnp, name)(*args, **kw)
    assert isinstance(ours.value, theirs.type), (ours.value, theirs.value)


def test_block_errors():
    with pytest.raises(ValueError):
        jnp.block([[F], F])
    with pytest.raises(ValueError):
        jnp.block([])


def test_unsupported_pad_modes_say_so():
    with pytest.raises(NotImplementedError):
        jnp.pad(F, 1, mode="linear_ramp")
    with pytest.raises(NotImplementedError):
        jnp.pad(F, 1, mode="reflect", reflect_type="odd")
