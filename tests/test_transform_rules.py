"""Every primitive has its transformation rules (JVP, VJP, batching) or is declared
non-differentiable; each rule is checked on the primitive's differential cases
(tests/test_primitives.py): vmap against a Python loop, JVP against VJP (the transpose
identity <ct, J t> == <J^T ct, t>), and elementwise derivatives against finite differences
in float64."""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
from jitviz import transforms
from jitviz.core.registry import PRIMITIVES
from jitviz.lax import primitives as P
from jitviz.lax.special import PARTLY_DIFFERENTIABLE
from jitviz.random import threefry2x32_p
from jitviz.transforms.jvp import NON_DIFFERENTIABLE

from test_primitives import CASES

from helpers import float64_kept  # noqa: E402

@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """These tests compute at the dtypes they name, float64 included: jitviz's keep_float64
    switch keeps NumPy float64 operands float64 without x64 (JAX would need x64)."""
    with float64_kept():
        yield

SKIP_BATCH = {"debug_print", "iota"}  # iota has no operand to map


def test_every_primitive_has_transformation_rules():
    missing = transforms.missing_rules()
    assert missing == {"jvp": [], "vjp": [], "batch": []}, missing


def test_a_primitive_without_rules_is_reported(monkeypatch):
    from jitviz.transforms import batching
    monkeypatch.delitem(batching.BATCH_RULES, P.sin_p)
    assert transforms.missing_rules()["batch"] == [P.sin_p]


def test_non_differentiable_are_declared():
    assert {P.eq_p, P.iota_p, P.argmax_p, P.floor_p, threefry2x32_p} <= NON_DIFFERENTIABLE
    assert NON_DIFFERENTIABLE <= set(PRIMITIVES.values())


def test_rules_are_registered_by_primitive():
    """The public registration keys a rule by the Primitive object; a name is refused (a rule
    under a name string would be one nothing looks up)."""
    assert transforms.rules_of(threefry2x32_p)["batch"] is not None
    with pytest.raises(TypeError, match="takes a Primitive"):
        transforms.register_batch("sin", lambda args, dims: None)


def _ids(c):
    return f"{c.prim}-{c.id}" if c.id else c.prim


@pytest.mark.parametrize("case", [c for c in CASES if c.prim not in SKIP_BATCH], ids=_ids)
def test_vmap_matches_a_loop(case):
    prim = PRIMITIVES[case.prim]
    rng = np.random.default_rng(0)

    def f(*args):
        return prim.bind(*args, **case.params)
    # two examples: the case's arguments and a perturbed copy (float operands)
    second = [a + np.asarray(rng.uniform(0.01, 0.02, np.shape(a)), np.asarray(a).dtype)
              if np.asarray(a).dtype.kind == "f" else a for a in case.args]
    # each operand alone batched, then all batched
    for mask in [[i == j for j in range(len(case.args))] for i in range(len(case.args))] + \
            [[True] * len(case.args)]:
        args = [np.stack([a, b]) if m else a for a, b, m in zip(case.args, second, mask)]
        axes = tuple(0 if m else None for m in mask)
        got = jitviz.vmap(f, in_axes=axes)(*args)
        refs = [f(*[b if m else a for a, b, m in zip(case.args, second, mask)]) if k else
                f(*case.args) for k in (0, 1)]
        got = got if prim.multiple_results else [got]
        refs = [r if prim.multiple_results else [r] for r in refs]
        for i, g in enumerate(got):
            want = np.stack([np.asarray(refs[0][i]), np.asarray(refs[1][i])])
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{case.prim} batched {mask}")


def _float_case(case):
    return any(np.asarray(a).dtype.kind == "f" for a in case.args) and \
        PRIMITIVES[case.prim] not in NON_DIFFERENTIABLE and \
        case.prim not in ("debug_print", "while", "custom_vjp_call", "pure_callback",
                          "io_callback", "debug_callback") and \
        case.prim not in PARTLY_DIFFERENTIABLE and \
        not _eigenvectors(case) and \
        case.id != "nan"  # while: reverse mode refuses (tested in test_grad.py); custom_vjp:
    # forward mode refuses (tests/test_custom_vjp.py); callbacks have no derivative
    # (tests/test_callbacks.py)


def _eigenvectors(case):
    """eig's eigenvectors have no derivative, in JAX either (tests/test_linalg.py checks the
    error); its eigenvalues do."""
    return case.prim == "eig" and (case.params["compute_left_eigenvectors"]
                                   or case.params["compute_right_eigenvectors"])


def _transposed_case(case):
    """A gather that clamps an index out of bounds is not its vjp's transpose: as in JAX,
    the gradient there is zero (the vjp is a scatter-add, which drops the update)."""
    return _float_case(case) and (case.prim, case.id) != ("gather", "clamped")


@pytest.mark.parametrize("case", [c for c in CASES if _transposed_case(c)], ids=_ids)
def test_jvp_and_vjp_agree(case):
    """<ct, jvp(t)> == <vjp(ct), t> for random t and ct: the rules are each other's
    transpose (checks every differentiable rule, linear or not)."""
    prim = PRIMITIVES[case.prim]
    rng = np.random.default_rng(1)
    fl = [np.asarray(a).dtype.kind == "f" for a in case.args]

    def f(*xs):
        it = iter(xs)
        args = [next(it) if m else a for a, m in zip(case.args, fl)]
        out = prim.bind(*args, **case.params)
        return list(out) if prim.multiple_results else out
    xs = [np.asarray(a) for a, m in zip(case.args, fl) if m]
    ts = [np.asarray(rng.standard_normal(x.shape), x.dtype) for x in xs]
    out, tout = jitviz.jvp(f, xs, ts)
    out_l = out if isinstance(out, list) else [out]
    tout_l = tout if isinstance(tout, list) else [tout]
    cts = [np.asarray(rng.standard_normal(np.shape(o)), np.asarray(o).dtype) for o in out_l]
    _, fn = jitviz.vjp(f, *xs)
    in_cts = fn(cts if isinstance(out, list) else cts[0])
    # a complex output of real inputs (an RFFT) pairs by Re(sum(ct * t)), JAX's convention
    lhs = sum(float(np.real(np.sum(np.asarray(c, np.complex128) * np.asarray(t, np.complex128))))
              for c, t, o in zip(cts, tout_l, out_l) if np.asarray(o).dtype.kind in "fc")
    rhs = sum(float(np.sum(np.asarray(c, np.float64) * np.asarray(t, np.float64)))
              for c, t in zip(in_cts, ts))
    scale = 1 + abs(lhs) + abs(rhs)
    assert abs(lhs - rhs) <= 2e-4 * scale, (lhs, rhs)


UNARY_DOMAIN = {"log": (0.5, 2), "log1p": (0.5, 2), "sqrt": (0.5, 2), "rsqrt": (0.5, 2),
                "asin": (-0.5, 0.5), "acos": (-0.5, 0.5), "atanh": (-0.5, 0.5),
                "acosh": (1.5, 3), "cbrt": (0.5, 2)}
UNARY = ["neg", "erf", "erfc", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic",
         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "sqrt", "rsqrt", "cbrt", "square", "abs"]
BINARY = ["add", "sub", "mul", "div", "pow", "max", "min", "atan2", "rem"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_derivative_matches_finite_differences(name):
    lo, hi = UNARY_DOMAIN.get(name, (-1.5, 1.5))
    x = np.linspace(lo, hi, 7)
    x = x[np.abs(x) > 1e-3]
    prim = PRIMITIVES[name]
    g = jitviz.vmap(jitviz.grad(lambda v: prim.bind(v)))(x)
    eps = 1e-6
    fd = (prim.impl(x + eps) - prim.impl(x - eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_binary_derivative_matches_finite_differences(name):
    x = np.array([0.7, 1.3, 2.1])
    y = np.array([1.1, 0.4, 1.7])
    prim = PRIMITIVES[name]
    gx, gy = jitviz.grad(lambda a, b: P.reduce_sum_p.bind(prim.bind(a, b), axes=(0,)),
                         argnums=(0, 1))(x, y)
    eps = 1e-6
    np.testing.assert_allclose(np.asarray(gx), (prim.impl(x + eps, y) - prim.impl(x - eps, y))
                               / (2 * eps), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), (prim.impl(x, y + eps) - prim.impl(x, y - eps))
                               / (2 * eps), rtol=1e-5, atol=1e-6)
