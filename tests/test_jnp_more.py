"""The jax.numpy names of issue 14 added in setops.py, histograms.py, index_tricks.py,
arraymanip.py, numerics.py, ufuncs_more.py, polynomial.py and dtype_utils.py, against real
JAX 0.10: values, dtypes, weak types and shapes, eagerly and under `jitviz.jit` (the Numba
cpu backend for the first case of the most used functions, the interpreter for the rest, to
keep compile time down), the errors JAX raises, gradients and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.tree import tree_flatten

jax = pytest.importorskip("jax")
rjnp = jax.numpy

rng = np.random.default_rng(1)
F = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
V = np.array([5., 1, 4, 2, 8, 3], np.float32)
SORTED = np.array([-1.5, 0., 0., 2., 3.5, 7.], np.float32)
Q = np.array([-3., 0., 1., 2., 3.5, 9., np.nan], np.float32)
IV = np.array([3, 1, 2, 1, 3, 3, 0], np.int32)
I2 = np.array([[3, 1, 2], [1, 3, 3]], np.int32)
ROWS = np.array([[1, 2], [1, 2], [0, 5], [1, 0]], np.int32)
DUPS = np.array([1., np.nan, 2., np.nan, 1.], np.float32)
A1 = np.array([5, 1, 3, 3, 8], np.int32)
A2 = np.array([3, 8, 8, 2], np.int32)
XP = np.array([1., 2., 4., 5.], np.float32)
FP = np.array([10., 20., 0., 5.], np.float32)
X = np.array([0., 1.5, 3., 4.5, 6.], np.float32)
B = F > 0
U8 = np.array([5, 255, 0, 128], np.uint8)
P3 = np.array([1., -2., 3.], np.float32)
P2 = np.array([2., 1.], np.float32)
FIT_X = np.linspace(0, 1, 9).astype(np.float32)
FIT_Y = (3 * FIT_X ** 2 - FIT_X + 0.5 + 0.01 * np.sin(9 * FIT_X)).astype(np.float32)

pytestmark = pytest.mark.filterwarnings("ignore::jitviz.RetraceWarning")
CPU_ONCE = {"unique", "searchsorted", "digitize", "bincount", "histogram", "interp",
            "insert", "delete", "gradient", "trapezoid", "polyfit", "partition", "frexp",
            "cumulative_sum", "unravel_index", "setdiff1d", "lexsort", "vecdot"}
_COMPILED = set()


def _compare(ours, theirs, rtol, atol):
    ol, _ = tree_flatten(ours)
    tl = jax.tree_util.tree_leaves(theirs)
    assert len(ol) == len(tl), (ours, theirs)
    for o, t in zip(ol, tl):
        if isinstance(t, (bool, int, np.dtype)) or t is None:
            assert o == t, (o, t)
            continue
        a = np.asarray(o)
        assert a.shape == t.shape, (a.shape, t.shape)
        assert a.dtype == t.dtype, (a.dtype, t.dtype)
        assert bool(getattr(o, "weak_type", False)) == bool(t.weak_type), "weak type"
        np.testing.assert_allclose(a, np.asarray(t), rtol=rtol, atol=atol, equal_nan=True)


def check(name, *args, rtol=1e-5, atol=1e-6, jit=True, **kw):
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
    backend = "cpu" if name in CPU_ONCE and name not in _COMPILED else "interpret"
    _COMPILED.add(name)
    _compare(jitviz.jit(f, backend=backend)(*[args[i] for i in dyn]), expected, rtol, atol)


EAGER_ONLY = [  # the result's length depends on the values: no size=, no jit
    ("unique", (IV,), {}), ("unique", (I2, True, True, True), {}),
    ("unique", (DUPS,), {"return_counts": True}), ("unique", (DUPS,), {"equal_nan": False}),
    ("unique", (ROWS,), {"axis": 0, "return_index": True, "return_inverse": True,
                         "return_counts": True}),
    ("unique", (ROWS,), {"axis": 1}), ("unique", (np.float32(2.5),), {}),
    ("unique_values", (IV,), {}), ("unique_counts", (I2,), {}), ("unique_inverse", (I2,), {}),
    ("unique_all", (DUPS,), {}),
    ("union1d", (A1, A2), {}), ("intersect1d", (A1, A2), {}),
    ("intersect1d", (A1, A2), {"return_indices": True}), ("setdiff1d", (A1, A2), {}),
    ("setxor1d", (A1, A2), {}), ("setdiff1d", (A1, np.zeros(0, np.int32)), {}),
    ("bincount", (IV,), {}), ("bincount", (IV,), {"minlength": 9}),
    ("bincount", (np.array([1, 2], np.uint8),), {}), ("bincount", (np.zeros(0, np.int32),), {}),
    ("unique", (np.array([True, False, True]),), {}),
    ("delete", (V, np.array([0, -1, 2])), {}),
    ("compress", (np.array([True, False, True]), F), {"axis": 0}),
    ("compress", (np.array([1, 0, 1, 1], np.int32), F), {"axis": 1}),
    ("extract", (B, F), {}), ("flatnonzero", (V > 3,), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0], np.int32),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0], np.int32), "b"), {}),
    ("trim_zeros", (np.array([[0, 0, 0], [0, 1, 0]], np.int32),), {}),
    ("ravel_multi_index", ((np.array([1, 2], np.int32), np.array([0, 3], np.int32)), (3, 4)),
     {}),
    ("choose", (np.array([2, 0, 1], np.int32), [A1[:3], A2[:3], IV[:3]]), {}),
    ("polymul", (np.array([0., 0, 1, 2], np.float32), P2), {"trim_leading_zeros": True}),
    ("polydiv", (np.array([3., 5, 6, 7], np.float32), P2), {"trim_leading_zeros": True}),
]

CASES = [
    # sets, with size= (traced)
    ("unique", (IV,), {"size": 6}), ("unique", (IV,), {"size": 2}),
    ("unique", (I2, True, True, True), {"size": 6, "fill_value": -1}),
    ("unique", (ROWS,), {"axis": 0, "size": 4, "return_counts": True}),
    ("unique", (DUPS,), {"size": 4, "fill_value": 0.0, "return_inverse": True}),
    ("unique_all", (IV,), {"size": 5}), ("unique_values", (DUPS,), {"size": 5}),
    ("union1d", (A1, A2), {"size": 7}), ("union1d", (A1, A2), {"size": 7, "fill_value": -9}),
    ("intersect1d", (A1, A2), {"size": 4}),
    ("intersect1d", (A1, A2), {"size": 4, "return_indices": True}),
    ("setdiff1d", (A1, A2), {"size": 4}), ("setdiff1d", (A1, A2), {"size": 4, "fill_value": 7}),
    ("setxor1d", (A1, A2), {"size": 5}),
    ("lexsort", ((IV, np.array([1, 1, 0, 0, 1, 0, 1], np.int32)),), {}),
    ("lexsort", (np.stack([F[0], np.round(F[1])]),), {}), ("lexsort", ((F, F * 2),), {}),
    # searching and counting
    ("searchsorted", (SORTED, Q), {}), ("searchsorted", (SORTED, Q), {"side": "right"}),
    ("searchsorted", (SORTED, F), {}), ("searchsorted", (SORTED, np.float32(0.0)), {}),
    ("searchsorted", (np.array([1., 2., np.nan], np.float32), Q), {}),
    ("searchsorted", (SORTED, Q), {"method": "compare_all", "side": "right"}),
    ("searchsorted", (V, np.float32(4.5)), {"sorter": np.argsort(V).astype(np.int32)}),
    ("searchsorted", (np.zeros(0, np.float32), Q), {}),
    ("searchsorted", (IV[:3], 2), {}),
    ("digitize", (Q, SORTED[[0, 3, 5]]), {}), ("digitize", (Q, SORTED[[0, 3, 5]]), {"right": True}),
    ("digitize", (Q, SORTED[[5, 3, 0]]), {}), ("digitize", (F, np.zeros(0, np.float32)), {}),
    ("bincount", (IV,), {"length": 5}), ("bincount", (np.array([0, 1, -1, 9], np.int32),),
                                         {"length": 3}),
    ("bincount", (IV,), {"weights": np.linspace(0, 1, 7).astype(np.float32), "length": 4}),
    ("histogram", (V,), {}), ("histogram", (V,), {"bins": 3}),
    ("histogram", (F,), {"bins": np.array([-2., 0., 0.5, 2.], np.float32)}),
    ("histogram", (V,), {"bins": 4, "range": (0, 6), "weights": V, "density": True}),
    ("histogram", (IV,), {"bins": 3}), ("histogram", (np.ones(3, np.float32),), {"bins": 2}),
    ("histogram_bin_edges", (V,), {"bins": 5}),
    ("histogram2d", (V, V[::-1]), {"bins": 3}),
    ("histogram2d", (V, V[::-1]), {"bins": [2, 3], "weights": V, "density": True}),
    ("histogramdd", (np.stack([V, V[::-1], V * 2], 1),), {"bins": (2, 3, 2)}),
    ("histogramdd", (np.stack([V, V[::-1]], 1),), {"bins": [np.array([0., 4., 9.],
                                                                          np.float32), 2],
                                                     "range": [None, (0, 10)]}),
    ("interp", (X, XP, FP), {}), ("interp", (X, XP, FP), {"left": -1.0, "right": 99.0}),
    ("interp", (X, XP, FP), {"left": "extrapolate", "right": "extrapolate"}),
    ("interp", (X, XP, FP), {"period": 4.0}), ("interp", (2.5, XP, FP), {}),
    ("interp", (F, XP, IV[:4]), {}),
    # index tricks
    ("unravel_index", (np.array([5, 13, -1, -13, 0], np.int32), (3, 4)), {}),
    ("unravel_index", (5, (3, 4)), {}),
    ("ravel_multi_index", ((np.array([1, 2], np.int32), np.array([0, 5], np.int32)), (3, 4)),
     {"mode": "clip"}),
    ("ravel_multi_index", ((np.array([1, 2], np.int32), np.array([0, 5], np.int32)), (3, 4)),
     {"mode": "wrap", "order": "F"}),
    ("ix_", (IV[:2], A1[:3]), {}),
    # manipulation
    ("append", (F, F[:1]), {"axis": 0}), ("append", (V, 5.0), {}),
    ("delete", (F, 1), {"axis": 1}), ("delete", (F, slice(0, 2)), {"axis": 0}),
    ("delete", (V, np.array([0, 2], np.int32)), {"assume_unique_indices": True}),
    ("insert", (V, 2, 9.0), {}), ("insert", (V, np.array([1, 1, 6], np.int32),
                                             np.array([7., 8., 9.], np.float32)), {}),
    ("insert", (F, 1, 5.0), {"axis": 1}), ("insert", (F, -1, F[0]), {"axis": 0}),
    ("insert", (F, np.array([0, 3], np.int32), np.array([[1.], [2.]], np.float32)),
     {"axis": 0}),
    ("insert", (V, np.array([1], np.int32), np.array([7., 8.], np.float32)), {}),
    ("insert", (IV, 0, 2.7), {}),
    ("resize", (F, (5, 3)), {}), ("resize", (V, 2), {}), ("resize", (np.zeros(0, np.float32), 3), {}),
    ("tri", (3,), {}), ("tri", (3, 4, 1), {"dtype": np.int32}), ("tri", (2, 5, -1), {}),
    ("diagflat", (F[:2, :2],), {"k": 1}), ("dstack", ((V, V),), {}), ("dstack", ((F, F),), {}),
    ("unstack", (F,), {"axis": 1}), ("matrix_transpose", (np.ones((2, 3, 4), np.float32),), {}),
    ("rollaxis", (np.ones((2, 3, 4), np.float32), 2), {}),
    ("rollaxis", (np.ones((2, 3, 4), np.float32), 0, 2), {}),
    ("array_equiv", (F[0], np.stack([F[0], F[0]])), {}), ("array_equiv", (V, F), {}),
    ("array_equiv", (F, F + 1), {}),
    ("choose", (np.array([3, -1, 1], np.int32), [A1[:3], A2[:3]]), {"mode": "wrap"}),
    ("choose", (np.array([3, -1, 1], np.int32), [A1[:3], V[:3]]), {"mode": "clip"}),
    ("compress", (np.array([True, False, True]), F), {"axis": 0, "size": 3, "fill_value": -1}),
    ("extract", (B, F), {"size": 8}), ("flatnonzero", (V,), {"size": 8, "fill_value": -1}),
    ("place", (F, B, np.array([10., 20.], np.float32)), {"inplace": False}),
    ("put", (F, np.array([0, 5, 11], np.int32), np.array([7., 8.], np.float32)),
     {"inplace": False}),
    ("put", (F, np.array([0, 15], np.int32), np.float32(7)), {"inplace": False, "mode": "wrap"}),
    ("put", (F, np.array([0, 15], np.int32), np.float32(7)), {"inplace": False, "mode": "clip"}),
    # numerics
    ("gradient", (V,), {}), ("gradient", (V, 2.0), {}), ("gradient", (V, np.cumsum(V)), {}),
    ("gradient", (F,), {}), ("gradient", (F,), {"axis": 1}), ("gradient", (F, 1.0, 2.0), {}),
    ("gradient", (IV,), {}),
    ("trapezoid", (V,), {}), ("trapezoid", (V,), {"dx": 0.5}), ("trapezoid", (V, V ** 2), {}),
    ("trapezoid", (F,), {"axis": 0}), ("trapezoid", (F, XP), {}), ("trapezoid", (IV,), {}),
    ("cumulative_sum", (F,), {"axis": 1, "include_initial": True}),
    ("cumulative_sum", (IV,), {}), ("cumulative_sum", (B,), {"axis": 0}),
    ("cumulative_prod", (V,), {"include_initial": True}),
    ("cumulative_prod", (F,), {"axis": 0, "dtype": np.float32}),
    ("nancumsum", (DUPS,), {}), ("nancumprod", (np.array([[1., np.nan], [2, 3]], np.float32),),
                                 {"axis": 0}), ("nancumsum", (IV,), {}),
    ("vecdot", (F, F[0]), {}), ("vecdot", (F.T, F.T), {"axis": 0}),
    ("vecdot", (np.array([1 + 2j, 3j], np.complex64), np.array([3 + 1j, 1], np.complex64)), {}),
    ("matvec", (F, F[0]), {}), ("vecmat", (F[:, 0], F), {}),
    ("partition", (V, 2), {}), ("partition", (F, 0, 0), {}), ("partition", (I2, -1), {}),
    ("argpartition", (V, 2), {}), ("argpartition", (np.array([3, 1, 3, 1, 2], np.int32), 1), {}),
    ("argpartition", (F, 1, 0), {}),
    ("sort_complex", (V,), {}), ("sort_complex", (np.array([1 + 2j, 1 - 1j, -3j, 1 + 0j],
                                                           np.complex64),), {}),
    ("unwrap", (np.array([0, 3, 6.5, 0.1, -4], np.float32),), {}),
    ("unwrap", (np.array([0, 3, 7, 1, 12], np.int32),), {"period": 4}),
    ("unwrap", (F,), {"axis": 0, "discont": 1.0}),
    # elementwise
    ("frexp", (np.array([8., 0.3, 0, -5, np.inf, -np.inf, np.nan, 3.4e38, 1e-30, 1.0, 0.5,
                         0.99999994], np.float32),), {}),
    ("frexp", (IV,), {}), ("fabs", (IV,), {}), ("fabs", (F,), {}),
    ("spacing", (np.array([1., -1., 1e10, -1e-10, 3.], np.float32),), {}),
    ("logaddexp2", (F, F.T[0][:, None]), {}),
    ("logaddexp2", (np.array([np.inf, -np.inf, 1.], np.float32), np.array([np.inf, -np.inf,
                                                                            -np.inf],
                                                                           np.float32)), {}),
    ("i0", (np.array([0., 1., -3.5, 10., 19.9, 20.1, 40., 80.], np.float32),), {}),
    ("bitwise_count", (np.array([7, -1, 255, 0, -2 ** 31], np.int32),), {}),
    ("bitwise_count", (U8,), {}), ("bitwise_invert", (IV,), {}),
    ("bitwise_left_shift", (IV, 3), {}), ("bitwise_right_shift", (IV, 1), {}),
    ("iscomplex", (np.array([1 + 0j, 2j], np.complex64),), {}), ("iscomplex", (F,), {}),
    ("isreal", (np.array([1 + 0j, 2j], np.complex64),), {}), ("isreal", (IV,), {}),
    ("packbits", (np.array([1, 0, 1, 1, 0, 0, 0, 0, 1], np.int32),), {}),
    ("packbits", (B,), {"axis": 1, "bitorder": "little"}),
    ("unpackbits", (U8,), {}), ("unpackbits", (U8[None],), {"axis": 1, "count": 12}),
    ("unpackbits", (U8,), {"count": 5, "bitorder": "little"}),
    # windows
    ("bartlett", (5,), {}), ("blackman", (6,), {}), ("hamming", (3,), {}), ("hanning", (1,), {}),
    ("hanning", (0,), {}), ("kaiser", (7, 2.5), {}),
    # polynomials
    ("poly", (np.array([1., 2., 3.], np.float32),), {}), ("poly", (IV[:3],), {}),
    ("poly", (np.array([1 + 1j, 1 - 1j], np.complex64),), {}),
    ("polyadd", (P3, P2), {}), ("polyadd", (IV[:2], P3), {}), ("polysub", (P2, P3), {}),
    ("polymul", (P3, P2), {}), ("polymul", (IV[:3], IV[3:]), {}),
    ("polydiv", (np.array([1., 5., 6.], np.float32), P2), {}),
    ("polydiv", (np.array([3, 5, 6, 7], np.int32), np.array([2, 2], np.int32)), {}),
    ("polyder", (np.array([1, 2, 3, 4], np.int32),), {}), ("polyder", (P3, 2), {}),
    ("polyder", (P2, 3), {}), ("polyint", (P3,), {}),
    ("polyint", (P2, 2), {"k": np.array([1., 2.], np.float32)}), ("polyint", (P2,), {"k": 5.0}),
    ("polyfit", (FIT_X, FIT_Y, 2), {"rtol": 1e-3, "atol": 1e-4}),
    ("polyfit", (FIT_X, np.stack([FIT_Y, 2 * FIT_Y], 1), 1), {"rtol": 1e-3, "atol": 1e-4}),
    ("polyfit", (FIT_X, FIT_Y, 3), {"w": np.linspace(1, 2, 9).astype(np.float32),
                                    "rtol": 1e-3, "atol": 1e-3}),
]


def _split_tolerances(kw):
    kw = dict(kw)
    tol = {k: kw.pop(k) for k in ("rtol", "atol") if k in kw}
    return kw, tol


@pytest.mark.parametrize("name,args,kw", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kw):
    kw, tol = _split_tolerances(kw)
    check(name, *args, **tol, **kw)


@pytest.mark.parametrize("name,args,kw", EAGER_ONLY,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(EAGER_ONLY)])
def test_eager_against_jax(name, args, kw):
    check(name, *args, jit=False, **kw)


def test_index_objects():
    for expr in ("r_[np.array([1, 2], np.int32), 0, 5, np.array([3.], np.float32)]",
                 "r_[0:3, 7]", "r_[-1:1:5j]", "r_['0,2', np.array([1, 2], np.int32), "
                 "np.array([3, 4], np.int32)]", "r_['-1', np.ones((2, 2), np.float32), "
                 "np.zeros((2, 1), np.float32)]", "r_[1, 2]", "r_[1., 2]",
                 "c_[np.array([1, 2], np.int32), np.array([3, 4], np.int32)]",
                 "c_[F, F]", "c_[0:3, 4:7]",
                 "mgrid[0:2, 0:3]", "mgrid[0:1:3j]", "mgrid[0.:1:.5]", "mgrid[0:3]",
                 "mgrid[0:2:3j, 1:3]", "ogrid[0:2, 0:3]", "ogrid[0:1:4j]"):
        ns = {"np": np, "F": F}
        _compare(eval("jnp." + expr, {**ns, "jnp": jnp}), eval("jnp." + expr,
                                                               {**ns, "jnp": rjnp}), 1e-6, 0)
    assert jnp.s_[1:2, ::3] == rjnp.s_[1:2, ::3] and jnp.index_exp[2] == rjnp.index_exp[2]
    f = jitviz.jit(lambda x, y: jnp.r_[x, 0.5, y])
    _compare(f(V, F[0]), rjnp.r_[V, 0.5, F[0]], 0, 0)
    g = jitviz.jit(lambda x, y: jnp.c_[x, y], backend="interpret")
    _compare(g(V, V), rjnp.c_[V, V], 0, 0)


def test_fromfunction_and_apply_over_axes():
    for make in (lambda m: lambda i, j: i + 2 * j, lambda m: lambda i, j: m.where(i > j, i, -j),
                 lambda m: lambda i, j: m.sum(m.arange(3.0) * i) + j):
        _compare(jnp.fromfunction(make(jnp), (3, 4)), rjnp.fromfunction(make(rjnp), (3, 4)),
                 0, 0)
    _compare(jnp.fromfunction(lambda i: i * i, (4,), dtype=np.int32),
             rjnp.fromfunction(lambda i: i * i, (4,), dtype=np.int32), 0, 0)
    _compare(jnp.apply_over_axes(jnp.sum, F, [0, 1]), rjnp.apply_over_axes(rjnp.sum, F, [0, 1]),
             1e-6, 1e-6)
    _compare(jitviz.jit(lambda x: jnp.apply_over_axes(jnp.max, x, (1,)))(F),
             rjnp.apply_over_axes(rjnp.max, F, (1,)), 0, 0)


def test_mask_indices():
    for func, k in ((jnp.triu, 0), (jnp.tril, -1), (jnp.triu, 1)):
        rfunc = getattr(rjnp, func.__name__)
        _compare(jnp.mask_indices(3, func, k), rjnp.mask_indices(3, rfunc, k), 0, 0)
        _compare(jnp.mask_indices(3, func, k, size=7), rjnp.mask_indices(3, rfunc, k, size=7),
                 0, 0)


def test_frexp_is_exact_on_subnormals():
    # jitviz keeps subnormal numbers (README): 1e-40 is 0.5444... * 2**-132, as in NumPy
    x = np.array([1e-40, -3e-45, 1.2e-38], np.float32)
    m, e = jnp.frexp(x)
    nm, ne = np.frexp(x)
    np.testing.assert_array_equal(m, nm)
    np.testing.assert_array_equal(e, ne)


def test_dtype_utilities():
    for a, b in [(np.int8, np.uint8), ("float32", "int64"), (np.bool_, np.int16),
                 (np.float16, np.int32), (np.uint32, np.int32), (np.complex64, np.float64)]:
        assert jnp.promote_types(a, b) == rjnp.promote_types(a, b), (a, b)
    for a, b in [(np.int32, np.float32), (np.int8, np.int16), (np.float32, np.float64),
                 (np.float64, np.float32)]:
        assert jnp.can_cast(a, b) == rjnp.can_cast(a, b)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("integral", "bool"), np.float32]
    for d in (np.bool_, np.int8, np.uint16, np.float32, np.complex64):
        for k in kinds:
            assert jnp.isdtype(d, k) == rjnp.isdtype(d, k), (d, k)
    with pytest.raises(ValueError):
        jnp.isdtype(np.float32, "floating")
    for v in ([1], 3, np.ones(2), "ab"):
        assert jnp.iterable(v) == rjnp.iterable(v)
    for v in (1j, 1.0, np.ones(2), np.ones(2, np.complex64)):
        assert jnp.iscomplexobj(v) == rjnp.iscomplexobj(v)
        assert jnp.isrealobj(v) == rjnp.isrealobj(v)
    assert jnp.array_repr(np.array([1, 2])) == rjnp.array_repr(np.array([1, 2]))
    assert jnp.array_str(F) == rjnp.array_str(F)
    assert jnp.get_printoptions()["precision"] == rjnp.get_printoptions()["precision"]
    assert jnp.ComplexWarning is rjnp.ComplexWarning
    for name in ("generic", "character", "flexible", "object_"):
        assert getattr(jnp, name) is getattr(rjnp, name)
    # the aliases name the same dtypes as JAX's
    for name in ("bool", "int_", "uint", "float_", "complex_", "double", "single", "cdouble",
                 "csingle"):
        assert np.dtype(getattr(jnp, name)) == np.dtype(getattr(rjnp, name)), name
    assert jnp.bool(1).dtype == np.bool_ and jnp.single(2).dtype == np.float32


# --- errors -------------------------------------------------------------------------------------

TRACED_ERRORS = [  # (function of traced args, args): JAX's ConcretizationTypeError under jit
    (lambda m, x: m.unique(x), (IV,)), (lambda m, x: m.unique_values(x), (IV,)),
    (lambda m, a, b: m.union1d(a, b), (A1, A2)), (lambda m, a, b: m.setdiff1d(a, b), (A1, A2)),
    (lambda m, a, b: m.intersect1d(a, b), (A1, A2)),
    (lambda m, a, b: m.setxor1d(a, b), (A1, A2)),
    (lambda m, x: m.bincount(x), (IV,)),
    (lambda m, a, b: m.ravel_multi_index((a, b), (3, 4)), (IV[:2], IV[:2])),
    (lambda m, x: m.delete(x, x[:1].astype(np.int32) * 0), (IV,)),
    (lambda m, x: m.compress(x > 1, x), (IV,)), (lambda m, x: m.extract(x > 1, x), (IV,)),
    (lambda m, x: m.trim_zeros(x), (IV,)), (lambda m, x: m.flatnonzero(x), (IV,)),
]


@pytest.mark.parametrize("fn,args", TRACED_ERRORS, ids=[str(i) for i in range(len(TRACED_ERRORS))])
def test_traced_sizes_are_jax_errors(fn, args):
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda *a: fn(rjnp, *a))(*args)
    with pytest.raises(jitviz.errors.ConcretizationTypeError) as err:
        jitviz.jit(lambda *a: fn(jnp, *a), backend="interpret")(*args)
    assert "size" in str(err.value) or "static" in str(err.value) or "mode=" in str(err.value) \
        or "concrete" in str(err.value)


def test_unique_without_size_names_the_fix():
    with pytest.raises(jitviz.errors.ConcretizationTypeError, match="specify a concrete value "
                                                                    "for the size argument"):
        jitviz.jit(jnp.unique, backend="interpret")(IV)


BAD = [
    ("unique", (np.zeros(0, np.float32),), {"size": 2}),
    ("searchsorted", (F, V), {}), ("searchsorted", (V, V), {"side": "middle"}),
    ("digitize", (V, F), {}), ("bincount", (V,), {}), ("bincount", (I2,), {}),
    ("bincount", (IV,), {"weights": V}), ("histogram", (V,), {"weights": F}),
    ("histogram", (V,), {"bins": "auto"}), ("interp", (X, F, FP), {}),
    ("interp", (X, XP, FP[:3]), {}), ("ravel_multi_index", ((IV[:2], IV[:2] + 4), (3, 4)), {}),
    ("ix_", (B,), {}),
    ("ix_", (np.array([True, False]),), {}), ("delete", (V, 7), {}),
    ("insert", (V, 1.5, 2.0), {}), ("tri", (2.5,), {}), ("unstack", (np.float32(1),), {}),
    ("matrix_transpose", (V,), {}), ("choose", (np.array([0, 3], np.int32), [V[:2], V[:2]]), {}),
    ("compress", (B, F), {}), ("place", (F, B, V), {}), ("put", (F, IV, V), {}),
    ("gradient", (V,), {"edge_order": 2}), ("gradient", (np.ones(1, np.float32),), {}),
    ("cumulative_sum", (F,), {}), ("cumulative_sum", (np.float32(1),), {}),
    ("partition", (np.array([1j, 2], np.complex64), 0), {}), ("partition", (V, 9), {}),
    ("vecdot", (F, V), {}), ("unpackbits", (IV,), {}), ("packbits", (F,), {}),
    ("polyfit", (FIT_X, FIT_Y[:4], 2), {}), ("polyfit", (FIT_X[:, None], FIT_Y, 2), {}),
    ("polyint", (P3, 2), {"k": np.ones(3, np.float32)}), ("polyder", (P3, -1), {}),
    ("frexp", (np.array([1j], np.complex64),), {}), ("lexsort", ((V, F),), {}),
]


@pytest.mark.parametrize("name,args,kw", BAD, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD)])
def test_errors_match_jax(name, args, kw):
    with pytest.raises(Exception) as theirs:
        getattr(rjnp, name)(*args, **kw)
    with pytest.raises(Exception) as ours:
        getattr(jnp, name)(*args, **kw)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


def test_our_own_clear_errors():
    with pytest.raises(ValueError, match="sequence of length 2"):  # (JAX: an assert)
        jnp.ravel_multi_index((IV[:2],), (3, 4))
    with pytest.raises(NotImplementedError, match="full=True or cov=True"):
        jnp.polyfit(FIT_X, FIT_Y, 2, full=True)
    with pytest.raises(NotImplementedError, match="eigenvalues"):
        jnp.poly(np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="cannot determine"):
        jnp.polyfit(FIT_X[:2], FIT_Y[:2], 3)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(F, IV, V)


# --- transformations ------------------------------------------------------------------------------

GRADS = [
    ("interp fp", lambda m: lambda fp: m.sum(m.interp(X, XP, fp) ** 2), FP),
    ("interp x", lambda m: lambda x: m.sum(m.interp(x, XP, FP, right="extrapolate")), X + 0.1),
    ("trapezoid", lambda m: lambda y: m.trapezoid(y * y, V), V),
    ("gradient", lambda m: lambda y: m.sum(m.gradient(y, np.cumsum(V)) ** 2), V),
    ("histogram weights", lambda m: lambda w: m.sum(m.histogram(V, 3, weights=w)[0] ** 2), V),
    ("bincount weights", lambda m: lambda w: m.sum(m.bincount(IV, w, length=4) ** 2),
     np.linspace(0, 1, 7).astype(np.float32)),
    ("polyfit", lambda m: lambda y: m.sum(m.polyfit(FIT_X, y, 2) ** 2), FIT_Y),
    ("polyval of polyint", lambda m: lambda p: m.polyval(m.polyint(m.polymul(p, p)), 1.5), P3),
    ("polydiv", lambda m: lambda u: m.sum(m.polydiv(u, P2)[0]), P3),
    ("i0", lambda m: lambda x: m.sum(m.i0(x)), np.array([0.5, -2., 15., 25.], np.float32)),
    ("logaddexp2", lambda m: lambda x: m.sum(m.logaddexp2(x, 1.0)), V),
    ("cumulative_sum", lambda m: lambda x: m.sum(m.cumulative_sum(x * x, include_initial=True)
                                                 ), V),
    ("vecdot", lambda m: lambda x: m.sum(m.vecdot(F, x)), F[0]),
    ("partition", lambda m: lambda x: m.sum(m.partition(x, 2)[:3] ** 2), V),
    ("unwrap", lambda m: lambda x: m.sum(m.unwrap(x) ** 2), np.array([0, 3, 6.5, 0.1],
                                                                     np.float32)),
    ("insert delete", lambda m: lambda x: m.sum(m.delete(m.insert(x, 1, x[0] * 3), 2) ** 2), V),
    ("unique values", lambda m: lambda x: m.sum(m.unique(x, size=4) ** 2), V),
    ("frexp mantissa", lambda m: lambda x: m.sum(m.frexp(x)[0]), V),
]


@pytest.mark.parametrize("name,make,x", GRADS, ids=[g[0] for g in GRADS])
def test_grad_matches_jax(name, make, x):
    expected = jax.grad(make(rjnp))(x)
    np.testing.assert_allclose(jitviz.grad(make(jnp))(x), expected, rtol=2e-4, atol=2e-4)


def test_grad_by_finite_differences():
    f = lambda fp: jnp.sum(jnp.interp(X, XP, fp) * jnp.arange(5.0))
    g = np.asarray(jitviz.grad(f)(FP))
    eps = 1e-2
    for i in range(4):
        d = np.zeros(4, np.float32)
        d[i] = eps
        fd = (float(f(FP + d)) - float(f(FP - d))) / (2 * eps)
        assert abs(fd - g[i]) < 1e-2


VMAPS = [
    ("searchsorted", lambda m: lambda q: m.searchsorted(SORTED, q), F),
    ("searchsorted sorted", lambda m: lambda a: m.searchsorted(m.sort(a), 0.5), F),
    ("interp", lambda m: lambda fp: m.interp(X, XP, fp), np.stack([FP, FP * 2, -FP])),
    ("unique size", lambda m: lambda x: m.unique(x, size=3, fill_value=-1), I2),
    ("bincount length", lambda m: lambda x: m.bincount(x, length=4), I2),
    ("histogram", lambda m: lambda x: m.histogram(x, 3, range=(-2, 2))[0], F),
    ("digitize", lambda m: lambda x: m.digitize(x, SORTED), F),
    ("gradient", lambda m: lambda x: m.gradient(x), F),
    ("cumulative_sum", lambda m: lambda x: m.cumulative_sum(x, include_initial=True), F),
    ("partition", lambda m: lambda x: m.partition(x, 1), F),
    ("argpartition", lambda m: lambda x: m.argpartition(x, 1), F),
    ("insert", lambda m: lambda x: m.insert(x, 2, x[0]), F),
    ("polyfit", lambda m: lambda y: m.polyfit(FIT_X, y, 2), np.stack([FIT_Y, FIT_Y * 2])),
    ("setdiff1d", lambda m: lambda x: m.setdiff1d(x, A2[:3], size=3), I2),
    ("frexp", lambda m: lambda x: m.frexp(x), F),
    ("unravel_index", lambda m: lambda i: m.unravel_index(i, (2, 3)), I2),
]


@pytest.mark.parametrize("name,make,x", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap_matches_jax_and_a_loop(name, make, x):
    expected = jax.vmap(make(rjnp))(x)
    ours = jitviz.vmap(make(jnp))(x)
    _compare(ours, expected, 1e-4, 1e-4)
    loop = [make(jnp)(row) for row in x]
    stacked = jax.tree_util.tree_map(lambda *rows: np.stack(rows), *[
        jax.tree_util.tree_map(np.asarray, r) for r in loop])
    for o, s in zip(jax.tree_util.tree_leaves(jax.tree_util.tree_map(np.asarray, ours)),
                    jax.tree_util.tree_leaves(stacked)):
        np.testing.assert_allclose(o, s, rtol=1e-5, atol=1e-5)


def test_searchsorted_agrees_with_numpy_on_random_data():
    r = np.random.default_rng(7)
    for n in (1, 2, 3, 7, 8, 9, 100):
        a = np.sort(r.integers(-5, 5, n)).astype(np.float32)
        q = r.integers(-6, 6, 50).astype(np.float32)
        for side in ("left", "right"):
            np.testing.assert_array_equal(jnp.searchsorted(a, q, side=side),
                                          np.searchsorted(a, q, side=side))


def test_unique_agrees_with_numpy_on_random_data():
    r = np.random.default_rng(8)
    for n in (1, 5, 40):
        x = r.integers(0, 6, n).astype(np.int32)
        ours = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for o, t in zip(ours, np.unique(x, return_index=True, return_inverse=True,
                                        return_counts=True)):
            np.testing.assert_array_equal(o, t)
        traced = jitviz.jit(lambda v: jnp.unique(v, size=n, fill_value=-1),
                            backend="interpret")(x)
        u = np.unique(x)
        np.testing.assert_array_equal(traced[:len(u)], u)
        assert np.all(np.asarray(traced[len(u):]) == -1)


def test_new_names_are_exported():
    missing = {"unique", "searchsorted", "digitize", "bincount", "histogram", "interp", "c_",
               "r_", "s_", "mgrid", "ogrid", "ix_", "insert", "delete", "append", "setdiff1d",
               "union1d", "intersect1d", "setxor1d", "gradient", "trapezoid", "polyfit",
               "partition", "lexsort", "frexp", "unravel_index", "ravel_multi_index",
               "cumulative_sum", "nancumsum", "vecdot"}
    assert not {n for n in missing if not hasattr(jnp, n)}


def test_numpy_functions_on_tracers_use_the_new_names():
    # NumPy's functions called on traced values dispatch to these jnp functions (NEP 18)
    f = jitviz.jit(lambda q: np.searchsorted(SORTED, q) + np.digitize(q, SORTED[[0, 3]]),
                   backend="interpret")
    np.testing.assert_array_equal(f(Q[:-1]), np.searchsorted(SORTED, Q[:-1]) +
                                  np.digitize(Q[:-1], SORTED[[0, 3]]))
    g = jitviz.jit(lambda x: np.interp(x, XP, FP), backend="interpret")
    np.testing.assert_allclose(g(X), np.interp(X, XP, FP), rtol=1e-6)
    # without size=, the result's length is unknown: JAX's error for jnp.unique
    with pytest.raises(jitviz.errors.ConcretizationTypeError, match="jnp.unique"):
        jitviz.make_jaxpr(lambda x: np.unique(x))(IV)
