"""`jax.test_util.check_grads`: compare a function's derivatives with finite differences.

    from jitviz.test_util import check_grads
    check_grads(loss, (W, b), order=2)   # raises AssertionError naming the check that failed

Forward mode is checked against central differences along a random direction; reverse mode
against the same differences through the identity <ct, J t> == <J^T ct, t>; order > 1 repeats
both on the derivative functions themselves. Tolerances and the step follow JAX's defaults.
"""
from __future__ import annotations

import numpy as np

from .tree import tree_flatten, tree_map

# JAX's defaults (jax._src.public_test_util): gradient tolerance per dtype, finite step
_GRADIENT_TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
                       np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 2e-3,
                       np.dtype(np.complex128): 1e-5}
EPS = 1e-4


def check_grads(f, args, order: int, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check `f`'s derivatives at `args` (a tuple) up to `order`, in `modes` ('fwd', 'rev')."""
    args = tuple(args)
    eps = EPS if eps is None else eps
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and 'rev'")
    if order < 1:
        return
    rng = np.random.RandomState(0)
    if "fwd" in modes:
        check_jvp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng)
        if order > 1:
            tangents = _random_like(args, rng)
            check_grads(lambda *a: _jvp_out(f, a, tangents), args, order - 1, ("fwd",),
                        atol, rtol, eps)
    if "rev" in modes:
        check_vjp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng)
        if order > 1:
            from .transforms import vjp
            cotangent = _random_like(f(*args), rng)
            check_grads(lambda *a: vjp(f, *a)[1](cotangent), args, order - 1, ("rev",),
                        atol, rtol, eps)


def check_jvp(f, args, atol=None, rtol=None, eps=EPS, rng=None):
    """Forward mode along a random direction against central differences."""
    rng = rng or np.random.RandomState(0)
    tangents = _random_like(args, rng)
    got = _jvp_out(f, args, tangents)
    _assert_close(got, _numerical_jvp(f, args, tangents, eps), atol, rtol,
                  "JVP against finite differences")


def check_vjp(f, args, atol=None, rtol=None, eps=EPS, rng=None):
    """Reverse mode against central differences: <ct, J t> must equal <J^T ct, t> (so a
    custom_vjp function, which has no forward mode, is checked too)."""
    from .transforms import vjp
    rng = rng or np.random.RandomState(0)
    tangents = _random_like(args, rng)
    out, pullback = vjp(f, *args)
    cotangent = _random_like(out, rng)
    expected = _inner(cotangent, _numerical_jvp(f, args, tangents, eps))
    got = _inner(pullback(cotangent), tangents)
    # the tolerances of the values' dtypes, not of the double-precision products
    _assert_close(got, expected, _tolerance(out, atol), _tolerance(out, rtol),
                  "VJP against finite differences (<J^T ct, t> = <ct, J t>)")


def _numerical_jvp(f, args, tangents, eps):
    step = tree_map(lambda t: t * (eps / 2), tangents)
    plus = f(*_add(args, step, 1))
    minus = f(*_add(args, step, -1))
    return tree_map(lambda p, m: (_host(p) - _host(m)) / eps, plus, minus)


def _jvp_out(f, args, tangents):
    from .transforms import jvp
    return jvp(f, args, tuple(tangents))[1]


def _host(x):
    return np.asarray(x)


def _random_like(tree, rng):
    """A random value of each leaf's shape and dtype (zeros for integer leaves)."""
    def one(x):
        a = np.asarray(x)
        if a.dtype.kind not in "fc":
            return np.zeros(a.shape, a.dtype)
        v = rng.standard_normal(a.shape)
        if a.dtype.kind == "c":
            v = v + 1j * rng.standard_normal(a.shape)
        return v.astype(a.dtype)
    return tree_map(one, tree)


def _add(args, step, sign):
    return tuple(tree_map(lambda a, s: _shift(a, s, sign), args, step))


def _shift(a, s, sign):
    a = np.asarray(a)
    if a.dtype.kind not in "fc":
        return a
    return (a + sign * s).astype(a.dtype)


def _inner(x, y):
    """The real inner product of two pytrees of the same structure, in double precision."""
    total = 0.0
    for a, b in zip(tree_flatten(x)[0], tree_flatten(y)[0]):
        a, b = np.asarray(a), np.asarray(b)
        wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
        total += np.vdot(a.astype(wide).ravel(), b.astype(wide).ravel()).real
    return np.asarray(total)


def _tolerance(value, given):
    if given is not None:
        return given
    dtypes = [np.asarray(v).dtype for v in tree_flatten(value)[0]]
    return max((_GRADIENT_TOLERANCE.get(d, 1e-5) for d in dtypes), default=1e-5)


def _assert_close(got, want, atol, rtol, what):
    got_leaves, got_tree = tree_flatten(got)
    want_leaves, want_tree = tree_flatten(want)
    if got_tree != want_tree:
        raise AssertionError(f"{what}: the structures differ: {got_tree} vs {want_tree}")
    atol, rtol = _tolerance(got, atol), _tolerance(got, rtol)
    for k, (a, b) in enumerate(zip(got_leaves, want_leaves)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            raise AssertionError(f"{what}: output {k} has shape {a.shape}, expected {b.shape}")
        np.testing.assert_allclose(a.astype(np.complex128 if a.dtype.kind == "c" else
                                            np.float64), b, atol=atol, rtol=rtol,
                                   err_msg=f"{what}: output {k}")


__all__ = ["check_grads", "check_jvp", "check_vjp"]
