"""When, and how often, jitviz calls the Python functions of a custom_jvp / custom_vjp: users
see it through their `print`s and their Python control flow, so it follows JAX's order.

JAX never traces a custom_jvp function itself under jvp/grad: it calls only the rule (which
usually calls the function). An eager call just runs the function. Each scenario records the
calls in a list; under real JAX (when installed) the lists are compared, and the pinned lists
below keep CI without JAX checking the same order.
"""
import functools

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.errors import RetraceWarning

# each scenario jits a new function on purpose (fresh call records)
pytestmark = pytest.mark.filterwarnings(f"ignore::{RetraceWarning.__module__}.RetraceWarning")


def _jvp_fun(api, np_, log, nondiff=False):
    """JAX's notebook example: f = sin with a rule that calls f (optionally with a Python
    callable as a non-differentiable first argument)."""
    if nondiff:
        @functools.partial(api.custom_jvp, nondiff_argnums=(0,))
        def f(g, x):
            log.append("f")
            return g(np_.sin(x))

        @f.defjvp
        def f_jvp(g, primals, tangents):
            log.append("f_jvp")
            x, = primals
            t, = tangents
            return f(g, x), np_.cos(x) * t
        return functools.partial(f, lambda y: y * 2.0), 2.0

    @api.custom_jvp
    def f(x):
        log.append("f")
        return np_.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        log.append("f_jvp")
        x, = primals
        t, = tangents
        return f(x), np_.cos(x) * t
    return f, 1.0


def _vjp_fun(api, np_, log, nondiff=False):
    """JAX's notebook example: f = sin with fwd calling f and bwd printing."""
    if nondiff:
        @functools.partial(api.custom_vjp, nondiff_argnums=(0,))
        def f(g, x):
            log.append("f")
            return g(np_.sin(x))

        def f_fwd(g, x):
            log.append("f_fwd")
            return f(g, x), np_.cos(x)

        def f_bwd(g, cos_x, y_bar):
            log.append("f_bwd")
            return (2.0 * cos_x * y_bar,)
        f.defvjp(f_fwd, f_bwd)
        return functools.partial(f, lambda y: y * 2.0), 2.0

    @api.custom_vjp
    def f(x):
        log.append("f")
        return np_.sin(x)

    def f_fwd(x):
        log.append("f_fwd")
        return f(x), np_.cos(x)

    def f_bwd(cos_x, y_bar):
        log.append("f_bwd")
        return (cos_x * y_bar,)
    f.defvjp(f_fwd, f_bwd)
    return f, 1.0


def _run(api, kind, build, nondiff):
    """The calls each use of a custom function makes: {use: (calls, value)}."""
    np_ = api.numpy
    uses = {
        "eager": lambda f, log: f(3.0),
        "jit": lambda f, log: api.jit(f)(3.0),
        "grad": lambda f, log: api.grad(f)(3.0),
        "jit_of_grad": lambda f, log: api.jit(api.grad(f))(3.0),
        "grad_of_jit": lambda f, log: api.grad(api.jit(f))(3.0),
        "vmap": lambda f, log: api.vmap(f)(np.array([1.0, 2.0], np.float32)),
        "vmap_of_grad": lambda f, log: api.vmap(api.grad(f))(np.array([1.0, 2.0], np.float32)),
        "grad_of_vmap": lambda f, log: api.grad(
            lambda x: api.vmap(f)(x).sum())(np.array([1.0, 2.0], np.float32)),
        "vjp_only": lambda f, log: api.vjp(f, 3.0)[0],
    }
    if kind == "jvp":
        uses["jvp"] = lambda f, log: api.jvp(f, (3.0,), (1.0,))
        uses["grad_of_grad"] = lambda f, log: api.grad(api.grad(f))(3.0)
        uses["jvp_of_grad"] = lambda f, log: api.jvp(api.grad(f), (3.0,), (1.0,))
    else:
        uses["vjp_then_pullback"] = lambda f, log: _pull_back_later(api, f, log)
    out = {}
    for use, run in uses.items():
        log = []
        f, _ = build(api, np_, log, nondiff)
        value = run(f, log)
        if "|" not in log:
            log.append("|")  # what ran before and after the transformation returned
        out[use] = (log, [np.asarray(v) for v in jitviz.tree_util.tree_leaves(value)])
    return out


def _pull_back_later(api, f, log):
    _, pullback = api.vjp(f, 3.0)
    log.append("|")
    return pullback(1.0)


# The order JAX 0.10 calls them in (checked against JAX by the test below when installed).
EXPECTED_JVP = {
    "eager": ["f", "|"],
    "jit": ["f", "|"],
    "grad": ["f_jvp", "f", "|"],
    "jit_of_grad": ["f_jvp", "f", "|"],
    "grad_of_jit": ["f", "f_jvp", "f", "|"],
    "vmap": ["f", "|"],
    "vmap_of_grad": ["f_jvp", "f", "|"],
    "grad_of_vmap": ["f_jvp", "f", "|"],
    "vjp_only": ["f_jvp", "f", "|"],
    "jvp": ["f_jvp", "f", "|"],
    "grad_of_grad": ["f_jvp", "f_jvp", "f", "|"],
    "jvp_of_grad": ["f_jvp", "f_jvp", "f", "|"],
}
EXPECTED_VJP = {
    "eager": ["f", "|"],
    "jit": ["f", "|"],
    "grad": ["f_fwd", "f", "f_bwd", "|"],
    "jit_of_grad": ["f_fwd", "f", "f_bwd", "|"],
    "grad_of_jit": ["f", "f_fwd", "f", "f_bwd", "|"],
    "vmap": ["f", "|"],
    "vmap_of_grad": ["f_fwd", "f", "f_bwd", "|"],
    "grad_of_vmap": ["f_fwd", "f", "f_bwd", "|"],
    "vjp_only": ["f_fwd", "f", "|"],
    "vjp_then_pullback": ["f_fwd", "f", "|", "f_bwd"],
}


@pytest.mark.parametrize("nondiff", [False, True], ids=["plain", "nondiff_argnums"])
@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_calls_match_jax(kind, nondiff):
    jax = pytest.importorskip("jax")
    build = _jvp_fun if kind == "jvp" else _vjp_fun
    ours, theirs = _run(jitviz, kind, build, nondiff), _run(jax, kind, build, nondiff)
    for use in theirs:
        assert ours[use][0] == theirs[use][0], use
        for a, b in zip(ours[use][1], theirs[use][1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=use)


@pytest.mark.parametrize("nondiff", [False, True], ids=["plain", "nondiff_argnums"])
def test_a_custom_jvp_function_is_not_traced_under_differentiation(nondiff):
    calls = _run(jitviz, "jvp", _jvp_fun, nondiff)
    assert {use: log for use, (log, _) in calls.items()} == EXPECTED_JVP


@pytest.mark.parametrize("nondiff", [False, True], ids=["plain", "nondiff_argnums"])
def test_a_custom_vjp_function_runs_fwd_then_bwd_under_grad(nondiff):
    calls = _run(jitviz, "vjp", _vjp_fun, nondiff)
    assert {use: log for use, (log, _) in calls.items()} == EXPECTED_VJP


def test_the_rule_and_the_function_branch_on_values_under_grad():
    """JAX's notebook: Python control flow on the primal in both the function and its rule
    works under grad (the values are known), and fails under jit (they are not)."""
    @jitviz.custom_jvp
    def f(x):
        if x > 0:
            return x
        return 2.0 * x

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), (2.0 if x > 0 else 3.0) * t
    assert float(jitviz.grad(f)(1.0)) == 2.0
    assert float(jitviz.grad(f)(-1.0)) == 3.0
    second = jitviz.grad(jitviz.grad(lambda x: f(x) * x))  # 2 f'(x): the rule's slope twice
    assert (float(second(-1.0)), float(second(1.0))) == (6.0, 4.0)
    with pytest.raises(jitviz.errors.TracerBoolConversionError):
        jitviz.jit(jitviz.grad(f))(1.0)


def test_the_fwd_rule_branches_on_values_under_grad():
    @jitviz.custom_vjp
    def f(x):
        return jnp.abs(x)

    def f_fwd(x):
        return f(x), (1.0 if x > 0 else -1.0)

    f.defvjp(f_fwd, lambda sign, g: (sign * g,))
    assert float(jitviz.grad(f)(2.0)) == 1.0
    assert float(jitviz.grad(f)(-2.0)) == -1.0


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_an_eager_call_just_runs_the_function(kind):
    """JAX's notebook: Python floats in a pytree stay Python floats (nothing is traced)."""
    def fun(p):
        return {"a": p[0] ** 2, "b": p[1]}
    f = getattr(jitviz, kind)(fun)
    if kind == "custom_jvp":
        f.defjvp(lambda primals, tangents: (fun(*primals), fun(*tangents)))
    else:
        f.defvjp(lambda p: (fun(p), None), lambda res, g: ((g["a"], g["b"]),))
    out = f((1.5, 2.0))
    assert out == {"a": 2.25, "b": 2.0} and type(out["a"]) is float


def test_jvp_of_a_custom_vjp_function_runs_fwd_before_refusing():
    calls = []

    @jitviz.custom_vjp
    def f(x):
        calls.append("f")
        return jnp.sin(x)

    def f_fwd(x):
        calls.append("f_fwd")
        return f(x), jnp.cos(x)

    f.defvjp(f_fwd, lambda c, g: (c * g,))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jitviz.jvp(f, (3.0,), (1.0,))
    assert calls == ["f_fwd", "f"]


def test_under_grad_the_call_keeps_the_rule_and_only_the_rules_primal_part():
    """make_jaxpr(grad(f)): the custom_jvp call is still an equation (its jaxpr the rule's
    primal outputs, tangent work dropped), and the backward pass is the rule's transpose;
    make_jaxpr(f) alone keeps the call of the function, as in JAX."""
    @jitviz.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))

    plain = jitviz.make_jaxpr(log1pexp)(3.0)
    assert [e.primitive.name for e in plain.jaxpr.eqns] == ["custom_jvp_call"]
    closed = jitviz.make_jaxpr(jitviz.grad(log1pexp))(3.0)
    forward, backward = [e for e in closed.jaxpr.eqns if e.primitive.name == "jit"]
    assert forward.params["name"] == "forward(log1pexp)"
    call, = forward.params["jaxpr"].jaxpr.eqns
    assert call.primitive.name == "custom_jvp_call"
    # its jaxpr is the rule's primal output: the rule's call of log1pexp, none of its
    # tangent work (exp, add, div, sub), and the function was never traced for it
    inner, = call.params["jaxpr"].jaxpr.eqns
    assert inner.primitive.name == "custom_jvp_call"
    assert "div" in str(backward.params["jaxpr"])  # the rule's slope, transposed
    np.testing.assert_allclose(jitviz.grad(log1pexp)(100.0), 1.0)
    np.testing.assert_allclose(jitviz.jit(jitviz.grad(log1pexp))(3.0), 1 / (1 + np.exp(-3.0)),
                               rtol=1e-6)


def _defjvps_exp(api, np_):
    """exp with a deliberately doubled slope that reads the output: higher orders follow the
    rule only if the rule's own call of the function is a call of the custom function."""
    f = api.custom_jvp(np_.exp)
    f.defjvps(lambda t, ans, x: 2.0 * ans * t)
    return f


def test_defjvps_calls_the_custom_function_so_higher_orders_follow_the_rule():
    f = _defjvps_exp(jitviz, jnp)
    assert float(jitviz.grad(jitviz.grad(f))(0.0)) == 4.0  # 2 * (2 * exp(0)), not 2 * exp(0)
    np.testing.assert_allclose(jitviz.hessian(f)(1.0), 4 * np.e, rtol=1e-6)


def test_defjvps_higher_orders_match_jax():
    jax = pytest.importorskip("jax")
    ours, theirs = _defjvps_exp(jitviz, jnp), _defjvps_exp(jax, jax.numpy)
    for x in (0.0, 0.5):
        np.testing.assert_allclose(jitviz.grad(jitviz.grad(ours))(x),
                                   jax.grad(jax.grad(theirs))(x), rtol=1e-6)


def _sin_with_logged_bwd(calls, branch_on_residual=False):
    @jitviz.custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_bwd(res, g):
        calls.append("f_bwd")
        cos_x, x = res
        if branch_on_residual:  # Python control flow on a residual: JAX's eager pullback
            return ((cos_x if x > 0 else -cos_x) * g,)
        return (cos_x * g,)
    f.defvjp(lambda x: (f(x), (jnp.cos(x), x)), f_bwd)
    return f


def test_each_call_of_the_pullback_runs_bwd_as_jax():
    calls = []
    f = _sin_with_logged_bwd(calls)
    y, pullback = jitviz.vjp(lambda x: f(x) * 2.0 + f(3.0 * x), 1.0)
    assert calls == []
    np.testing.assert_allclose(pullback(1.0)[0], 2 * np.cos(1.0) + 3 * np.cos(3.0), rtol=1e-6)
    assert calls == ["f_bwd", "f_bwd"]
    np.testing.assert_allclose(pullback(2.0)[0], 4 * np.cos(1.0) + 6 * np.cos(3.0), rtol=1e-6)
    assert calls == ["f_bwd"] * 4
    # under jit the pullback is traced once, where it is called
    calls.clear()
    g = jitviz.jit(lambda x: jitviz.grad(lambda v: f(v) * 2.0)(x))
    np.testing.assert_allclose(g(0.5), 2 * np.cos(0.5), rtol=1e-6)
    assert calls == ["f_bwd"]


def test_bwd_may_branch_on_its_residuals_under_an_eager_grad():
    f = _sin_with_logged_bwd([], branch_on_residual=True)
    assert float(jitviz.grad(f)(1.0)) == pytest.approx(np.cos(1.0))
    assert float(jitviz.grad(f)(-1.0)) == pytest.approx(-np.cos(-1.0))
    with pytest.raises(jitviz.errors.TracerBoolConversionError):
        jitviz.jit(jitviz.grad(f))(1.0)


def test_a_pending_bwd_composes_with_higher_orders_and_jacobians():
    f = _sin_with_logged_bwd([])
    x = np.array([0.5, 1.5], np.float32)
    np.testing.assert_allclose(jitviz.jacrev(lambda v: f(v) * 2.0)(x),
                               np.diag(2 * np.cos(x)), rtol=1e-6)
    # grad of grad differentiates bwd itself (cos_x * g), as JAX does
    second = jitviz.grad(jitviz.grad(lambda v: f(v) * v))(0.5)
    np.testing.assert_allclose(second, -0.5 * np.sin(0.5) + 2 * np.cos(0.5), rtol=1e-6)


def test_a_rule_is_not_called_for_operands_that_carry_no_tangent():
    # as JAX: every tangent a symbolic zero (stop_gradient), so the function just runs; a
    # rule that refuses to differentiate (random.gamma's, with respect to its shape) is
    # not reached
    calls = []

    @jitviz.custom_jvp
    def f(x):
        calls.append("f")
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("f_jvp")
        return f(primals[0]), jnp.cos(primals[0]) * tangents[0]

    got = jitviz.grad(lambda x: x * f(jitviz.lax.stop_gradient(x)))(2.0)
    np.testing.assert_allclose(float(got), np.sin(2.0), rtol=1e-6)
    assert calls == ["f"]
