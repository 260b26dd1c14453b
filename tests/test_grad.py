"""grad / value_and_grad / vjp / jvp: the seeds' examples, composition with jit and with
each other, control flow (cond, fori_loop, scan; while in forward mode), errors, printing,
and hypothesis-generated programs checked against finite differences (float64)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.transforms import TransformError

from helpers import x64_enabled  # noqa: E402


def tanh(x):  # the seed's function
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def test_seed_grad_tanh():
    assert np.float32(jitviz.grad(tanh)(1.0)) == np.float32(0.4199743)


def test_seed_third_derivative():
    # the seed prints 0.62162673; JAX 0.10.2 prints 0.6216267 (float32 rounding order)
    g3 = jitviz.grad(jitviz.grad(jitviz.grad(tanh)))(1.0)
    np.testing.assert_allclose(float(g3), 0.62162673, rtol=1e-6)


def test_compositions_with_jit():
    want = 0.4199743
    for f in (jitviz.jit(jitviz.grad(tanh)), jitviz.grad(jitviz.jit(tanh)),
              jitviz.jit(jitviz.grad(jitviz.jit(tanh)))):
        np.testing.assert_allclose(float(f(1.0)), want, rtol=1e-6)
    h = jitviz.jit(jitviz.grad(jitviz.grad(tanh)))
    np.testing.assert_allclose(float(h(0.3)), -2 * np.tanh(0.3) * (1 - np.tanh(0.3) ** 2),
                               rtol=1e-5)


def test_value_and_grad_argnums_has_aux():
    def f(x, y):
        return jnp.sum(x * y) + jnp.sin(y[0]), x.shape
    x, y = np.arange(3.0), np.array([0.5, 1.0, 2.0])
    (v, aux), (gx, gy) = jitviz.value_and_grad(f, argnums=(0, 1), has_aux=True)(x, y)
    assert aux == (3,)
    np.testing.assert_allclose(v, np.sum(x * y) + np.sin(0.5))
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gy, x + np.array([np.cos(0.5), 0, 0]))


@pytest.mark.usefixtures("x64")  # float64 values, as JAX computes them with x64
def test_vjp_and_jvp():
    f = lambda x: jnp.sin(x) * x  # noqa: E731
    x = np.array([0.1, 0.7, 2.0])
    out, fn = jitviz.vjp(f, x)
    (ct,) = fn(np.ones(3))
    np.testing.assert_allclose(ct, np.cos(x) * x + np.sin(x))
    y, t = jitviz.jvp(f, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(y, np.sin(x) * x)


def test_python_control_flow_under_eager_grad():
    def f(x):
        if x > 0:  # concrete under grad outside jit, as in JAX
            return x * x
        return -x
    assert float(jitviz.grad(f)(3.0)) == 6.0
    assert float(jitviz.grad(f)(-3.0)) == -1.0


def test_cond_fori_scan():
    def f(x):
        y = lax.cond(x > 1.0, lambda v: v * v, lambda v: jnp.sin(v), x)
        z = lax.fori_loop(0, 3, lambda i, c: c * x + 1.0, y)
        c, ys = lax.scan(lambda c, a: (c * a, c + a), z, jnp.arange(1.0, 4.0))
        return c + jnp.sum(ys)
    for x0 in (0.5, 1.5):
        g = float(jitviz.grad(f)(x0))
        eps = 1e-3
        fd = (float(f(x0 + eps)) - float(f(x0 - eps))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=2e-3)
        np.testing.assert_allclose(float(jitviz.jit(jitviz.grad(f))(x0)), g, rtol=1e-5)


@pytest.mark.usefixtures("x64")  # float64, as in JAX, needs x64
def test_scan_gradient_float64():
    xs = np.linspace(0.1, 1.0, 5)

    def f(w):
        c, ys = lax.scan(lambda c, x: (jnp.tanh(c * w + x), c * x), 0.3, xs)
        return c + jnp.sum(ys * ys)
    w0 = 0.7
    g = float(jitviz.grad(f)(w0))
    eps = 1e-6
    np.testing.assert_allclose(g, (float(f(w0 + eps)) - float(f(w0 - eps))) / (2 * eps),
                               rtol=1e-6)


def test_while_loop_forward_mode_and_reverse_error():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
                              (0, x))[1]
    _, t = jitviz.jvp(f, (2.0,), (1.0,))
    assert float(t) == pytest.approx(4 * 2.0 ** 3)
    with pytest.raises(TransformError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop") as e:
        jitviz.grad(f)(2.0)
    assert "test_grad.py" in str(e.value) and "'while'" in str(e.value)


def test_fori_loop_with_traced_bounds_is_a_while():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x, 1.0)
    with pytest.raises(TransformError, match="dynamic start/stop"):
        jitviz.jit(jitviz.grad(f))(2.0, 3)


def test_integer_input_error():
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued inputs \(input "
                       r"dtype that is a sub-dtype of np.inexact\), but got int32. If you want "
                       r"to use Boolean- or integer-valued inputs, use vjp or set allow_int to "
                       r"True."):
        jitviz.grad(lambda x: x * 2)(np.int32(3))


def test_non_scalar_output_error():
    with pytest.raises(TypeError, match="scalar-output"):
        jitviz.grad(lambda x: x * 2)(np.ones(3))


def test_gradient_program_prints_forward_and_backward():
    text = str(jitviz.make_jaxpr(jitviz.grad(tanh))(1.0))
    assert "jit[" in text and "name=forward(tanh)" in text and "name=backward(tanh)" in text
    from jitviz.explorer.graph import build_graph
    g = build_graph(jitviz.make_jaxpr(jitviz.grad(tanh))(1.0))
    labels = {n["label"] for n in g["nodes"] if n["kind"] == "cluster"}
    assert {"jit forward(tanh)", "jit backward(tanh)"} <= labels


def test_backward_equations_keep_the_user_line():
    closed = jitviz.make_jaxpr(jitviz.grad(tanh))(1.0)
    bwd = [e for e in closed.eqns if e.params.get("name") == "backward(tanh)"][0]
    lines = {e.source.code for e in bwd.params["jaxpr"].jaxpr.eqns if e.source}
    assert "y = jnp.exp(-2.0 * x)" in lines


def test_jit_grad_runs_on_cpu_backend():
    f = jitviz.jit(jitviz.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), backend="cpu")
    x = np.linspace(-1, 1, 5).astype(np.float32)
    np.testing.assert_allclose(f(x), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-5)


# --- hypothesis programs: grad against finite differences ------------------------------------

UNARY = [jnp.sin, jnp.cos, jnp.tanh, jnp.exp, lambda v: jnp.log(1.0 + v * v),
         lambda v: jnp.sqrt(1.0 + v * v), lambda v: v * v, jnp.arctan, lambda v: -v]
BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b,
          lambda a, b: a / (1.5 + jnp.cos(b)), lambda a, b: jnp.maximum(a, b + 0.123)]
REDUCE = [jnp.sum, jnp.max, lambda v: jnp.sum(jnp.cumsum(v)),
          lambda v: jnp.sum(v.reshape(2, 3).T @ jnp.ones((2, 2))), jnp.mean]


@st.composite
def programs(draw):
    ops = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 8), st.integers(0, 8)),
                        min_size=1, max_size=6))
    red = draw(st.integers(0, len(REDUCE) - 1))

    def f(x):
        vals = [x]
        for kind, i, j in ops:
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            if kind == 0:
                vals.append(UNARY[i % len(UNARY)](a))
            elif kind == 1:
                vals.append(BINARY[j % len(BINARY)](a, b))
            else:
                vals.append(jnp.where(a > 0.1, a, b * 0.5))
        return REDUCE[red](vals[-1])
    return f


@settings(max_examples=30, deadline=None)
@given(programs(), st.lists(st.floats(-1.5, 1.5), min_size=6, max_size=6))
def test_generated_programs_gradient_matches_finite_differences(f, xs):
    with x64_enabled():  # finite differences need float64, which needs x64 (as in JAX)
        _gradient_matches_finite_differences(f, np.array(xs, np.float64))


def _gradient_matches_finite_differences(f, x):
    g = np.asarray(jitviz.grad(f)(x))
    eps = 1e-6
    f0 = float(f(x))
    forward = np.array([(float(f(x + eps * e)) - f0) / eps for e in np.eye(len(x))])
    backward = np.array([(f0 - float(f(x - eps * e))) / eps for e in np.eye(len(x))])
    fd = (forward + backward) / 2
    # at a kink (a tie in max, the edge of a where) the one-sided slopes differ and no
    # derivative exists: JAX's convention there (e.g. ties share max's gradient) is not a
    # finite difference, so such points are skipped
    if not np.all(np.isfinite(fd)) or np.max(np.abs(fd)) > 1e6 or \
            not np.allclose(forward, backward, rtol=1e-3, atol=1e-3):
        return
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jitviz.jit(jitviz.grad(f))(x)), g, rtol=1e-9,
                               atol=1e-12)


def _central_difference(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
    return g


@pytest.mark.parametrize("name, f", [
    ("prod", lambda x: jnp.prod(x)),
    ("prod_axis", lambda x: jnp.sum(jnp.prod(x, axis=1) * jnp.array([1.0, 2.0]))),
    ("cumprod", lambda x: jnp.sum(jnp.cumprod(x, axis=1) * jnp.arange(3.0))),
    ("cumprod_reverse", lambda x: jnp.sum(jitviz.lax.cumprod(x, axis=1, reverse=True)
                                          * jnp.arange(3.0))),
])
@pytest.mark.usefixtures("x64")  # float64 finite differences need x64, as in JAX
def test_products_differentiate_exactly_at_zeros(name, f):
    x = np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])  # float64, with a zero
    want = _central_difference(f, x)
    np.testing.assert_allclose(np.asarray(jitviz.grad(f)(x)), want, atol=1e-6)
    _, jv = jitviz.jvp(f, (x,), (np.ones_like(x),))
    assert float(jv) == pytest.approx(want.sum(), abs=1e-6)


REAL_OF_COMPLEX = {
    "abs2": lambda z: jnp.abs(z) ** 2, "abs": jnp.abs, "real_sq": lambda z: (z * z).real,
    "real_sin": lambda z: jnp.sin(z).real, "imag_exp": lambda z: jnp.exp(z).imag,
    "log_abs": lambda z: jnp.log(jnp.abs(z)), "real_div": lambda z: (1 / z).real,
    "real_sqrt": lambda z: jnp.sqrt(z).real, "angle": jnp.angle, "pow": lambda z: (z ** 3).real,
    "sum_abs": lambda w: jnp.sum(jnp.abs(w) ** 2), "vdot": lambda w: jnp.vdot(w, w).real,
}
Z = np.complex128(1.5 - 0.7j)
W = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])


def _partials(f, z, h=1e-6):
    """df/dx and df/dy of a real function of complex z, by central differences."""
    def d(step):
        return (np.asarray(f(z + step)) - np.asarray(f(z - step))) / (2 * h)
    if np.ndim(z) == 0:
        return d(h), d(1j * h)
    unit = np.eye(len(z))
    return (np.array([d(h * u)[()] for u in unit]), np.array([d(1j * h * u)[()] for u in unit]))


@pytest.mark.parametrize("name", sorted(REAL_OF_COMPLEX))
def test_grad_of_a_real_function_of_complex_input_is_jax_convention(name, x64):
    # JAX's convention (the JVP transposed without conjugation): grad f = df/dx - i df/dy
    f = REAL_OF_COMPLEX[name]
    z = W if name in ("sum_abs", "vdot") else Z
    dx, dy = _partials(lambda v: f(v), z)
    np.testing.assert_allclose(np.asarray(jitviz.grad(f)(z)), dx - 1j * dy, rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("f", [lambda z: z ** 3, jnp.sin, jnp.exp, jnp.log, jnp.sqrt,
                               lambda z: 1 / z, jnp.tanh, lambda z: z * (2 + 1j)])
def test_holomorphic_grad_is_the_complex_derivative(f, x64):
    h = 1e-6
    want = (np.asarray(f(Z + h)) - np.asarray(f(Z - h))) / (2 * h)
    np.testing.assert_allclose(np.asarray(jitviz.grad(f, holomorphic=True)(Z)), want,
                               rtol=1e-6)


def test_complex_grad_errors_are_jax():
    with pytest.raises(TypeError, match="For holomorphic differentiation, pass holomorphic"):
        jitviz.grad(lambda z: z * z)(np.complex64(1 + 2j))
    with pytest.raises(TypeError, match="real-valued outputs"):
        jitviz.grad(lambda x: x * (1 + 1j))(np.float32(1.0))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex"):
        jitviz.grad(jnp.sin, holomorphic=True)(np.float32(1.0))
    with pytest.raises(TypeError, match="holomorphic=True requires outputs with complex"):
        jitviz.grad(jnp.abs, holomorphic=True)(np.complex64(1 + 1j))


def test_stop_gradient_blocks_derivatives_in_both_modes_and_keeps_values():
    from jitviz import lax
    f = lambda x: lax.stop_gradient(x) * x  # noqa: E731
    assert str(jitviz.make_jaxpr(f)(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a; c:f32[] = mul b a in (c,) }"
    for backend in ("interpret", "cpu"):
        assert float(jitviz.jit(jitviz.grad(f), backend=backend)(3.0)) == 3.0
    assert float(jitviz.jvp(f, (3.0,), (1.0,))[1]) == 3.0
    tree = lax.stop_gradient({"w": np.float32(2.0), "n": 3})
    assert tree["n"] == 3 and float(tree["w"]) == 2.0  # integer leaves pass untouched
    np.testing.assert_array_equal(jitviz.vmap(f)(np.arange(3.0)), [0.0, 1.0, 4.0])


def test_cotangent_of_a_weak_input_is_weak_as_in_jax():
    # JAX 0.10: grad(f)(0.5) and the 'b' leaf of a params dict holding a Python float are
    # weakly typed float32; strong inputs give strong gradients
    def loss(params, x):
        return jnp.sum((x @ params["W"] + params["b"]) ** 2)
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    g = jitviz.grad(loss)({"W": np.ones(3, np.float32), "b": 0.5}, x)
    assert g["b"].weak_type and g["b"].dtype == np.float32 and float(g["b"]) == 44.0
    assert not g["W"].weak_type
    for f in (jitviz.grad(jnp.sin), jitviz.jit(jitviz.grad(jnp.sin)),
              jitviz.grad(jitviz.grad(jnp.sin))):
        out = f(3.0)
        assert out.weak_type and out.dtype == np.float32
    assert not jitviz.grad(jnp.sin)(np.float32(3.0)).weak_type
    _, pullback = jitviz.vjp(jnp.sin, 4.0)
    assert pullback(1.0)[0].weak_type and jitviz.jit(pullback)(1.0)[0].weak_type


def test_weak_type_of_complex_gradients_as_jax():
    # JAX 0.10: real f of a Python complex: strong; holomorphic: weak
    g = jitviz.grad(lambda z: jnp.real(z) ** 2)(3.0 + 4j)
    assert g.dtype == np.complex64 and not g.weak_type and complex(g) == 6 + 0j
    h = jitviz.grad(lambda z: z * z, holomorphic=True)(3.0 + 4j)
    assert h.dtype == np.complex64 and h.weak_type and complex(h) == 6 + 8j
