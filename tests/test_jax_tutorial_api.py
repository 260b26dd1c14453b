"""JAX API that the JAX documentation's tutorials call and jitviz lacked (found by running those
notebooks through scripts/jax_corpus.py): `jax.typeof`, `jit(f).trace(...)`,
`jax.test_util.check_grads`, `jax.jacobian`, `jax_explain_cache_misses`."""

import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.errors import CacheMissWarning
from jitviz.test_util import check_grads


# --- jax.typeof -----------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (np.ones((3, 3), np.float32), "float32[3,3]"),
    (1.0, "~float32[]"),
    (np.arange(4, dtype=np.int32), "int32[4]"),
    (True, "bool[]"), (3, "~int32[]"),
])
def test_typeof_prints_jax_type_text(value, text):
    t = jitviz.typeof(value)
    assert str(t) == text
    assert isinstance(t, jitviz.ShapedArray)


def test_typeof_inside_vmap_is_one_example():
    seen = []
    jitviz.vmap(lambda x: seen.append(str(jitviz.typeof(x))) or x)(jnp.arange(3))
    assert seen == ["int32[]"]


def test_typeof_inside_jit_is_the_traced_type():
    seen = []
    jitviz.jit(lambda x: seen.append(str(jitviz.typeof(x))) or x)(2.5)
    assert seen == ["~float32[]"]


# --- jit(f).trace ---------------------------------------------------------------------------

def g(x):
    return jnp.sin(x) * 2.0


def test_trace_gives_the_traced_program_and_output_types():
    traced = jitviz.jit(g).trace(1.0)
    assert str(traced.jaxpr) == str(jitviz.make_jaxpr(g)(1.0))
    assert str(traced.jaxpr) == ("{ lambda ; a:f32[]. let b:f32[] = sin a; "
                                 "c:f32[] = mul b 2.0:f32[] in (c,) }")  # JAX 0.10's text
    assert traced.out_info == jitviz.ShapeDtypeStruct((), np.float32, weak_type=True)
    assert traced.fun_name == "g"


def test_trace_then_lower_then_compile_runs():
    compiled = jitviz.jit(g).trace(np.float32(1.0)).lower().compile()
    np.testing.assert_allclose(compiled(np.float32(0.5)), np.sin(np.float32(0.5)) * 2,
                               rtol=1e-6)


def test_trace_reuses_a_cached_trace_and_of_no_arguments():
    f = jitviz.jit(g)
    f(np.float32(1.0))
    assert f.trace(np.float32(2.0)).jaxpr is f.specializations[0].closed

    class Counter:
        n = 0

        def count(self):
            self.n += 1
            return self.n
    assert str(jitviz.jit(Counter().count).trace().jaxpr) == "{ lambda ; . let  in (1:i32[],) }"


# --- check_grads ----------------------------------------------------------------------------

INPUTS = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30]], np.float32)


def loss(W, b):
    return jnp.sum(jnp.tanh(INPUTS @ W + b) ** 2)


def test_check_grads_passes_for_true_derivatives_up_to_order_two():
    W = np.array([0.3, -0.2, 0.5], np.float32)
    check_grads(loss, (W, 0.5), order=2)
    check_grads(loss, (W, 0.5), order=1, modes=["rev"])


def _wrong_rule_sin():
    @jitviz.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), 2 * jnp.cos(x) * t  # twice the true derivative
    return f


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_derivative_rule(modes):
    with pytest.raises(AssertionError, match="finite differences"):
        check_grads(_wrong_rule_sin(), (np.array([0.3, 1.0], np.float32),), order=1,
                    modes=("fwd",) + tuple(m for m in modes if m != "fwd"))


def test_check_grads_catches_a_reverse_rule_that_disagrees_with_forward():
    @jitviz.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (3 * c * g,))
    with pytest.raises(AssertionError, match="VJP against finite differences"):
        check_grads(f, (np.array([0.3, 1.0], np.float32),), order=1, modes=["rev"])


def test_check_grads_names_unknown_modes():
    with pytest.raises(ValueError, match="unknown modes"):
        check_grads(loss, (np.ones(3, np.float32), 0.5), order=1, modes=["sideways"])


def test_jacobian_is_jacrev():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(jitviz.jacobian(lambda v: v ** 2)(x), np.diag(2 * x))


# --- jax_explain_cache_misses ---------------------------------------------------------------

def test_explain_cache_misses_warns_at_every_trace_with_the_reason():
    @jitviz.jit
    def double(x):
        return 2 * x

    jitviz.config.update("jax_explain_cache_misses", True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            double(jnp.arange(3))
            double(jnp.arange(3))  # a hit: silent
            double(jnp.arange(3.0))
    finally:
        jitviz.config.update("jax_explain_cache_misses", False)
    misses = [str(w.message) for w in caught if issubclass(w.category, CacheMissWarning)]
    assert len(misses) == 2
    assert "never seen function double" in misses[0]
    assert "changed from i32[3] to f32[3]" in misses[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        double(jnp.arange(4.0))  # switched off again
    assert not [w for w in caught if issubclass(w.category, CacheMissWarning)]


# --- ensure_compile_time_eval, linearize -----------------------------------------------------

def test_ensure_compile_time_eval_computes_constants_inside_jit():
    @jitviz.jit
    def f(x):
        with jitviz.ensure_compile_time_eval():
            z = jnp.sin(jnp.sin(3.0))
            positive = z > 0          # concrete: usable in Python control flow
            n = jnp.arange(4).sum()   # concrete: usable as a shape
            scaled = x * 2            # traced values stay traced
        if positive:
            return jnp.sin(x) + jnp.zeros(int(n)).sum() + scaled
        return jnp.cos(x)
    assert float(f(np.float32(1.0))) == pytest.approx(np.sin(1.0) + 2.0, rel=1e-6)
    text = str(jitviz.make_jaxpr(f)(np.float32(1.0)))
    assert "f32[6]" in text and "cos" not in text
    with pytest.raises(jitviz.errors.TracerBoolConversionError):
        jitviz.jit(lambda x: 1 if jnp.sin(3.0) > 0 else 0)(1.0)  # without it: traced


def test_linearize_gives_the_value_and_the_jvp_at_a_point():
    y, f_jvp = jitviz.linearize(jnp.sin, np.float32(1.0))
    assert float(y) == pytest.approx(np.sin(1.0), rel=1e-6)
    assert float(f_jvp(np.float32(2.0))) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    y, f_jvp = jitviz.linearize(lambda a, b: {"s": a * b, "t": jnp.sum(a)},
                                np.ones(3, np.float32), 2.0)
    t = f_jvp(np.ones(3, np.float32), 1.0)
    np.testing.assert_array_equal(t["s"], [3, 3, 3])
    assert float(t["t"]) == 3.0
    with pytest.raises(TypeError, match="structure"):
        f_jvp(np.ones(3, np.float32))
    # inside jit, the linearized function is traced with the rest
    assert float(jitviz.jit(lambda x: jitviz.linearize(jnp.exp, x)[1](x))(np.float32(1.0))) \
        == pytest.approx(np.e, rel=1e-6)


# --- clear_caches, config switches JAX code sets, named scopes --------------------------------

def test_clear_caches_makes_every_jitted_function_compile_again():
    f = jitviz.jit(lambda x: x + 1)
    f(np.float32(1.0))
    f(np.float32(2.0))
    assert f.cache_info().misses == 1
    jitviz.clear_caches()
    f(np.float32(3.0))
    assert f.cache_info().misses == 2 and len(f.specializations) == 1


def test_config_switches_jax_code_sets():
    jitviz.config.update("jax_platform_name", "cpu")
    jitviz.config.update("jax_default_matmul_precision", "float32")
    jitviz.config.update("jax_default_matmul_precision", None)
    with pytest.raises(ValueError, match="backend='cuda'"):
        jitviz.config.update("jax_platform_name", "gpu")
    with pytest.raises(ValueError, match="must be one of"):
        jitviz.config.update("jax_default_matmul_precision", "fast")


def test_named_scope_and_named_call_run_the_code_as_is():
    @jitviz.jit
    def f(x):
        with jitviz.named_scope("layer1"):
            y = x * 2
        return jitviz.named_call(lambda v: v + 1, name="inc")(y)
    assert float(f(np.float32(1.0))) == 3.0
    with pytest.raises(TypeError, match="must be a string"):
        with jitviz.named_scope(3):
            pass


def test_lax_exports_primitives_under_jax_names():
    from jitviz.core.registry import Primitive
    from jitviz import lax
    for name in ("add_p", "exp_p", "cond_p", "while_p", "scan_p", "sort_p", "erf_p",
                 "stop_gradient_p", "psum_p", "reduce_sum_p", "dot_general_p"):
        prim = getattr(lax, name)
        assert isinstance(prim, Primitive) and prim.name == name[:-2]
    assert callable(lax.sort) and callable(lax.erf)  # the functions keep their names
    jaxpr = jitviz.make_jaxpr(lambda x: jnp.exp(x) + 1)(1.0).jaxpr
    assert [e.primitive for e in jaxpr.eqns] == [lax.exp_p, lax.add_p]
