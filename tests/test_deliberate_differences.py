"""Each deliberate difference from JAX listed in README.md ("Where jitviz differs from JAX,
deliberately") has one test here, named in the table's last column; the last test checks that
the table and this file name the same differences, so neither can drift from the other.

The eight differences that change what a jitted program computes are also known to the JAX
differential fuzzer (tests/jaxdiff/known.py), which checks each on its own example against
JAX itself."""
import math
import pathlib
import re

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import float64_kept, x64_enabled  # noqa: E402

F32 = np.float32


def _text(fn, *args):
    return str(jitviz.make_jaxpr(fn)(*args))


def test_todays_jaxpr_format():
    assert _text(lambda x: x * 2, 1) == \
        "{ lambda ; a:i32[]. let b:i32[] = mul a 2:i32[] in (b,) }"
    inner = jitviz.jit(lambda x: x + 1.0)
    text = _text(lambda x: inner(x) * 2.0, F32(1))
    assert "= jit[\n      name=<lambda>\n      jaxpr={ lambda" in text and "pjit" not in text


def test_no_sharding():
    assert "reduce_sum[axes=(0,) out_sharding=None]" in \
        _text(lambda x: x.sum(0), np.ones((2, 3), F32))


def test_keeping_float64_is_one_switch_off_by_default():
    assert not jitviz.config.enable_x64 and not jitviz.config.keep_float64
    double = lambda x: x * 2 + 1  # noqa: E731
    with pytest.warns(jitviz.X64ConversionWarning, match="argument 'x' is float64"):
        assert jitviz.jit(double)(np.ones(3, np.float64)).dtype == np.float32  # JAX's
    with float64_kept():
        out = jitviz.jit(double)(np.ones(3, np.float64))
        named = jitviz.jit(lambda x: jnp.float64(x) / 3)(F32(1))
        assert out.dtype == np.float64 and named.dtype == np.float64
        assert float(named) == 1 / 3
        # a Python float argument is still a weak float32, rounded at the call
        out = jitviz.jit(lambda x, y: x + y)(np.zeros(1, np.float64), 0.1)
        assert out.dtype == np.float64 and out[0] == np.float64(F32(0.1))


def test_simpler_gather():
    text = _text(lambda x, i: x[i], np.ones(3, F32), np.array([0, 1]))
    assert "gather[axes=(0,)]" in text and "slice_sizes" not in text


def test_where_is_a_plain_select_n():
    text = _text(lambda c, x, y: jnp.where(c, x, y), np.ones(3, bool), np.ones(3, F32),
                 np.zeros(3, F32))
    assert "select_n" in text and "jit[" not in text


def test_jnp_helpers_are_inlined():
    x = np.ones(3, F32)
    for fn in (lambda x: jnp.clip(x, 0, 1), jnp.var, jnp.round, jnp.cumsum):
        assert "jit[" not in _text(fn, x)


def test_tracer_repr_and_lax_messages(capsys):
    jitviz.jit(lambda x: (print(x), x)[1])(1)
    assert capsys.readouterr().out.strip() == \
        "Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>"
    with pytest.raises(TypeError, match=r"^add requires arguments to have the same dtypes, "
                                        r"got int32, float32\."):
        lax.add(1, 1.0)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_integer_division_by_zero_follows_xla_on_the_cpu(backend):
    x = np.array([7, -7, 0, np.iinfo(np.int32).min], np.int32)
    zero, minus_one = np.zeros(4, np.int32), np.full(4, -1, np.int32)
    div = jitviz.jit(lax.div, backend=backend)
    assert div(x, zero).tolist() == [-1, -1, -1, -1]
    assert div(x, minus_one)[3] == np.iinfo(np.int32).min
    assert jitviz.jit(lax.rem, backend=backend)(x, zero).tolist() == x.tolist()
    floor_div = jitviz.jit(jnp.floor_divide, backend=backend)(x[:3], zero[:3])
    assert floor_div.tolist() == [-2, -2, -1]
    to_int = jitviz.jit(lambda f: f.astype(jnp.int32), backend=backend)
    assert to_int(np.array([np.inf, -np.inf, np.nan, 3e9], F32)).tolist() == \
        [2**31 - 1, -2**31, 0, 2**31 - 1]


def test_the_sign_of_a_nan_is_not_read():
    negative_nan = -np.array([np.nan], F32)
    assert np.signbit(negative_nan)[0]  # NumPy reads it; jitviz does not
    assert not jitviz.jit(jnp.signbit)(negative_nan)[0]
    assert jitviz.jit(jnp.signbit)(np.array([-0.0], F32))[0]  # -0.0's sign is read


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_subnormal_numbers_are_kept(backend):
    tiny = np.array([1e-45], F32)
    assert jitviz.jit(jnp.ceil, backend=backend)(tiny)[0] == 1.0
    assert jitviz.jit(lambda x: x > 0, backend=backend)(tiny)[0]
    sigmoid = jitviz.jit(jitviz.nn.sigmoid, backend=backend)(np.array([-90.0], F32))[0]
    assert 8.1e-40 < sigmoid < 8.3e-40  # 1 / (1 + e^90): JAX gives 0.0


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_a_product_with_a_boolean_is_ieee(backend):
    out = jitviz.jit(lambda x, b: x * b, backend=backend)(np.array([np.inf], F32),
                                                          np.array([False]))
    assert math.isnan(out[0])


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_the_sign_of_a_zero_sum_is_not_specified(backend):
    # documented choice: float sums start from -0.0, the additive identity
    out = jitviz.jit(lambda x: (-x).sum(), backend=backend)(np.zeros(3, F32))
    assert out == 0.0 and np.signbit(out)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_an_index_beyond_int32_clamps(backend):
    x = np.array([[0, 1]], np.int64)
    with x64_enabled():
        read = jitviz.jit(lambda x, i: x[0, i], backend=backend)
        assert read(x, np.int64(2**62)) == 1 and read(x, np.int64(-2**62)) == 0
        assert read(x, np.array([2**32], np.int64)).tolist() == [1]


def test_typed_keys_are_uint32_data_in_a_jaxpr():
    from jitviz import random
    text = _text(lambda k: random.split(k), random.key(0))
    assert text.startswith("{ lambda ; a:u32[2]. let") and "threefry2x32" in text
    assert "key<fry>" not in text and "random_split" not in text


def test_results_are_jitviz_arrays():
    a = jnp.arange(3)
    assert isinstance(a, np.ndarray) and isinstance(a, jitviz.Array)
    assert repr(jnp.zeros(2)).startswith("Array([0., 0.]")
    # operators are JAX's, eagerly as traced (tests/test_array_promotion.py checks them all)
    assert (a + 1.5).dtype == jitviz.jit(lambda a: a + 1.5)(a).dtype == np.float32


def test_at_updates_are_one_scatter_over_the_flattened_operand():
    text = _text(lambda x: x.at[0].set(1.0), np.ones(3, F32))
    assert "scatter[axes=(0,) mode=set]" in text and "iota" in text
    assert "ScatterDimensionNumbers" not in text


def test_a_custom_vjp_bwd_inside_a_jitted_call_runs_in_vjp():
    """A custom_vjp called inside a `jit` (or cond, scan, checkpoint) body that `vjp`
    differentiates: jitviz builds that body's backward pass inside `vjp`, so its `bwd` runs
    there, once; JAX runs it when the pullback is called. Called directly in the
    differentiated function, `bwd` runs at each pullback call, as in JAX."""
    calls = []

    @jitviz.custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_bwd(cos_x, g):
        calls.append("f_bwd")
        return (cos_x * g,)
    f.defvjp(lambda x: (f(x), jnp.cos(x)), f_bwd)
    _, pullback = jitviz.vjp(lambda x: jitviz.jit(f)(x) * 2.0, 3.0)
    assert calls == ["f_bwd"]  # JAX: []
    np.testing.assert_allclose(pullback(1.0)[0], 2 * np.cos(3.0), rtol=1e-6)
    np.testing.assert_allclose(pullback(2.0)[0], 4 * np.cos(3.0), rtol=1e-6)
    assert calls == ["f_bwd"]  # JAX: ["f_bwd", "f_bwd"]
    _, direct = jitviz.vjp(lambda x: f(x) * 2.0, 3.0)
    direct(1.0)
    assert calls == ["f_bwd", "f_bwd"]  # as JAX


def test_refs_are_discharged_when_traced():
    x_ref = jitviz.new_ref(jnp.zeros(3))

    def bump():
        x_ref[1] += 1.0
    closed = jitviz.make_jaxpr(bump)()
    text = str(closed)
    # the Ref is an input, its final value an output, the write a scatter
    assert text.startswith("{ lambda ; a:f32[3]. let") and "scatter" in text
    assert "Ref{" not in text and "<-" not in text and len(closed.jaxpr.outvars) == 1
    # a write under grad to a Ref the function closes over is refused (JAX allows one of a
    # value that is not differentiated)
    with pytest.raises(NotImplementedError, match="pass the Ref as an argument"):
        jitviz.grad(lambda x: (x_ref.__setitem__(0, 7.0), x * 2)[1])(1.0)


def test_vmap_traces_abstractly(capsys):
    jitviz.vmap(lambda x: print(x))(jnp.arange(3))
    assert capsys.readouterr().out.strip() == \
        "Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>"  # JAX: VmapTracer(aval=...)
    with pytest.raises(AttributeError, match=r"vmap tracer has no \.val: .*once, abstractly, "
                                             r"on one example's type \(float32\[\]\).*"
                                             r"debug\.print"):
        jitviz.vmap(lambda x: print(x.val))(jnp.arange(3.0))
    jitviz.vmap(lambda x: jitviz.debug.print("{}", x))(jnp.arange(3.0))
    assert capsys.readouterr().out == "0.0\n1.0\n2.0\n"  # the fix the message names


def _tree_class(init):
    """A registered pytree class with one field and the given __init__ (the custom-pytrees
    notebook's MyTree)."""
    cls = type("MyTree", (), {"__init__": init})
    jitviz.tree_util.register_pytree_node(cls, lambda t: ((t.a,), None),
                                          lambda _, args: cls(*args))
    return cls


def test_jacobian_rebuilds_custom_nodes_from_arrays_and_trees():
    def converting(self, a):
        self.a = jnp.asarray(a)
    converting_tree = _tree_class(converting)
    with pytest.raises(TypeError, match="jnp.array got an object of type MyTree"):
        jitviz.jacobian(lambda x: x)(converting_tree(jnp.arange(3.0)))

    def permissive(self, a):  # the notebook's fix: leave non-arrays as they are
        self.a = a if a is None or type(a) is object or hasattr(a, "a") else jnp.asarray(a)
    permissive_tree = _tree_class(permissive)
    jac = jitviz.jacobian(lambda t: permissive_tree(t.a * 2))(permissive_tree(jnp.arange(3.0)))
    assert type(jac) is permissive_tree and type(jac.a) is permissive_tree
    np.testing.assert_array_equal(jac.a.a, 2 * np.eye(3, dtype=np.float32))


def test_a_breakpoint_without_input_continues():
    import io
    out = io.StringIO()
    f = jitviz.jit(lambda x: (jitviz.debug.breakpoint(stdin=io.StringIO(""), stdout=out),
                              x * 2)[1])
    assert float(f(2.0)) == 4.0  # JAX: jdb quits (SystemExit in the callback: a runtime error)
    assert out.getvalue().endswith("(jdb) no more input (EOF): continuing\n")


def _saved(fn, *args):
    import contextlib
    import io
    from jitviz.ad_checkpoint import print_saved_residuals
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(fn, *args)
    return out.getvalue().splitlines()


def test_offloading_policies_save_on_the_one_device():
    """What save_and_offload_only_these_names / offload_dot_with_no_batch_dims would move to
    host memory is saved where it is: a residual like any other (JAX: `f32<host>[4] output
    of device_put`)."""
    from jitviz.ad_checkpoint import checkpoint_name
    policy = jitviz.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=["y"], names_which_can_be_offloaded=["z"],
        offload_src="device", offload_dst="pinned_host")

    def f(x):
        y = checkpoint_name(jnp.sin(x), "y")
        z = checkpoint_name(jnp.sin(y), "z")
        return jnp.sum(checkpoint_name(jnp.sin(z), "w"))
    lines = _saved(jitviz.checkpoint(f, policy=policy), np.arange(4.0, dtype=F32))
    assert lines[0] == "f32[4] from the argument x"
    assert [line.split(" from ")[0] for line in lines[1:]] == \
        ["f32[4] named 'y'", "f32[4] named 'z'"]


def test_jax_remat3_is_recorded_not_followed():
    """With jax_remat3 on, JAX names a checkpointed function's arguments `args[0]`, ... and
    saves nothing under the offloading policies; jitviz follows JAX's default implementation
    whatever the switch says."""
    layer = jitviz.checkpoint(lambda w, x: jnp.sin(w @ x),
                              policy=jitviz.checkpoint_policies.dots_saveable)
    w, x = np.ones((3, 2), F32), np.ones(2, F32)
    before = jitviz.config.remat3
    try:
        jitviz.config.update("jax_remat3", True)
        lines = _saved(layer, w, x)
    finally:
        jitviz.config.update("jax_remat3", before)
    assert lines == _saved(layer, w, x)
    assert lines[:2] == ["f32[3,2] from the argument w", "f32[2] from the argument x"]


def test_a_checkpointed_function_sees_redefined_globals():
    """`jax.checkpoint` reuses its trace of a function whose globals changed (a notebook
    that redefines `predict` after checkpointing `loss`); jitviz traces at each call."""
    from jitviz.ad_checkpoint import checkpoint_name
    namespace = {"jnp": jnp, "checkpoint_name": checkpoint_name}
    exec("def loss(x):\n  return jnp.sum(predict(x))\n"
         "def predict(x):\n  return jnp.sin(x)\n", namespace)
    loss, x = namespace["loss"], np.ones(3, F32)
    policies = jitviz.checkpoint_policies
    assert _saved(jitviz.checkpoint(loss, policy=policies.dots_saveable), x) == \
        ["f32[3] from the argument x"]
    exec("def predict(x):\n  return checkpoint_name(jnp.sin(x), 'a') ** 2\n", namespace)
    lines = _saved(jitviz.checkpoint(loss, policy=policies.save_any_names_but_these("b")), x)
    assert lines[0] == "f32[3] from the argument x" and lines[1].startswith("f32[3] named 'a'")


def test_grad_is_a_forward_and_a_backward_call():
    text = _text(jitviz.grad(lambda x: jnp.sin(x) * x), F32(1))
    assert "name=forward(<lambda>)" in text and "name=backward(<lambda>)" in text
    np.testing.assert_allclose(jitviz.grad(lambda x: jnp.sin(x) * x)(F32(1)),
                               np.cos(1) + np.sin(1), rtol=1e-6)


def test_float32_math_is_within_ulps_of_xlas_not_bit_identical():
    # sin(1) rounded correctly is 0.84147096 (XLA's and NumPy's); jitviz's vectorized sin is
    # one ulp above, within its documented bound; a finite difference with eps = 1e-4 of a
    # float32 loss near 3 turns such an ulp into 2e-3 of the quotient
    got = jitviz.jit(jnp.sin)(F32(1.0))
    exact = F32(np.sin(np.float64(1.0)))
    assert abs(int(np.asarray(got).view(np.int32)) - int(exact.view(np.int32))) <= 1
    np.testing.assert_allclose(got, exact, rtol=2e-7)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_a_float_sum_adds_pairwise(backend):
    # 1e30 and -1e30 meet first in the pairwise order (0.0, NumPy's sum too), -144.71 is lost
    # into -1e30 first in a sequence (XLA's order for a short row: -144.71); the fuzzer's
    # seed 33002578 branched on such a sum
    x = np.array([0, 0, 0, 1e30, 0, -1e30, 0, -144.71, 0, 0], F32)
    got = jitviz.jit(jnp.sum, backend=backend)(x)
    assert got == 0.0 and np.sum(x) == 0.0
    assert math.fsum(x.tolist()) != 0.0  # neither order is exact here
    # a cumulative sum adds in sequence, as NumPy's cumsum (the fuzzer's seed 37009582:
    # XLA's order gives -262144 where the sequence gives -262136, both within the bound)
    v = np.array([9, -65537, -7, -65537, -3, 2147483647, 65536, 5, -1, 1073741824, 4, -5,
                  -2, -65537, 1073741824, -2, -2147483648, 8, -65537, -2147483648, -65537,
                  -2, -1, 6, -5, 5, 6], np.int32)
    got = jitviz.jit(lambda v: jnp.cumsum(v, dtype=jnp.float32), backend=backend)(v)
    np.testing.assert_array_equal(got, np.cumsum(v.astype(F32)))
    assert got[-1] == -262136.0


def test_a_float_product_multiplies_in_vector_lanes():
    # the fuzzer's seed 62000374: 2 and 3e38 in different lanes overflow when the lanes are
    # combined (inf), and inf times a lane's 0 is NaN; in sequence the zeros come first
    x = np.array([0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 0, 3e38, 0], F32)
    assert jitviz.jit(jnp.prod, backend="interpret")(x) == 0.0 == np.prod(x)
    got = float(jitviz.jit(jnp.prod, backend="cpu")(x))
    # the CPU's result is a product in some number of lanes (its vector width times LLVM's
    # interleaving): NaN in each of 4 to 64
    with np.errstate(all="ignore"):
        by_lanes = {}
        for lanes in (4, 8, 16, 32, 64):
            acc = np.ones(lanes, F32)
            for i, v in enumerate(x):
                acc[i % lanes] *= v
            while acc.size > 1:
                acc = acc[:acc.size // 2] * acc[acc.size // 2:]
            by_lanes[lanes] = float(acc[0])
    assert all(math.isnan(v) for v in by_lanes.values())
    assert math.isnan(got)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_how_a_dot_product_rounds_is_not_specified(backend):
    # 1e30 * -1e30 overflows float32 when rounded (-inf, and inf + -inf is NaN), not inside
    # an FMA (inf): the fuzzer's seed 32003143. jitviz's products are NumPy's: its 2x2 BLAS
    # kernel uses FMAs, its vector dot and a 1x2 @ 2x1 do not (JAX: the other way round)
    a, b = np.array([np.inf, 1e30], F32), np.array([np.inf, -1e30], F32)
    m, n = np.array([[np.inf, 1e30], [1, 0]], F32), np.array([[np.inf, 0], [-1e30, 0]], F32)
    vec, mat = jitviz.jit(lambda a, b, m, n: (jnp.dot(a, b), m @ n), backend=backend)(a, b, m, n)
    assert np.isnan(vec) and mat[0, 0] == np.inf
    # products that cancel (seed 34009821): exactly 1, within the error bound either way
    c = np.array([2.8211098e12, 0, 0, 2.8211098e12, 1], F32)
    d = np.array([-12, 0, 0, 12, 1], F32)
    got = float(jitviz.jit(jnp.inner, backend=backend)(c[None], d[None, None]).item())
    bound = 5 * np.finfo(F32).eps * float(np.abs(c.astype(float)) @ np.abs(d.astype(float)))
    assert abs(got - 1.0) <= bound and got == {"interpret": 0.0, "cpu": 1.0}[backend]


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_a_division_is_correctly_rounded(backend):
    # XLA's algebraic simplifier computes x / 100 as x * 0.01: 0.099999994 for float32 10
    # (the fuzzer's seed 31005432 met it inside jnp.nanpercentile's q / 100); jitviz divides
    tens = np.full(4, 10.0, F32)
    got = jitviz.jit(lambda x: x / 100, backend=backend)(tens)
    np.testing.assert_array_equal(got, tens / F32(100))
    assert got[0] != tens[0] * (F32(1) / F32(100))  # the rewrite would give this
    q = jitviz.jit(lambda a, q: jnp.percentile(a, q, axis=1), backend=backend)(
        np.array([[0.0, 1.0]], F32), np.array([10.0, 90.0], F32))
    assert q[0, 0] == F32(0.1)
    # by a scalar whose reciprocal is subnormal (seed 36003451): XLA's x * (1 / s) flushes
    # 1 / 3e38 to zero and gives [0, 0, 0]; -inf times the quotient is -inf, not NaN
    x, s = np.array([3.0, 3e38, 7.0], F32), F32(3e38)
    got = jitviz.jit(lambda x, s: (x / s, -np.inf * (x / s)), backend=backend)(x, s)
    np.testing.assert_array_equal(got[0], x / s)
    assert got[0][1] == 1.0 and (got[1] == -np.inf).all()


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_a_reverse_cumulative_sum_or_product_runs_from_the_end(backend):
    # the fuzzer's seed 36008583: XLA computes each output of a reverse scan as its own
    # window in array order ([-0, -inf, -6]); jitviz accumulates from the end in one pass
    x = np.array([0.0, 3e38, -6.0], F32)
    got = jitviz.jit(lambda x: lax.cumprod(x, reverse=True), backend=backend)(x)
    np.testing.assert_array_equal(got, np.float32([np.nan, -np.inf, -6.0]))
    s = np.array([1e30, 1.0, -1e30, 3.0], F32)
    got = jitviz.jit(lambda x: lax.cumsum(x, reverse=True), backend=backend)(s)
    np.testing.assert_array_equal(got, np.float32([0.0, -1e30, -1e30, 3.0]))
    fwd = jitviz.jit(lambda x: lax.cumprod(x), backend=backend)(x)  # forward: one order
    np.testing.assert_array_equal(fwd, np.float32([0.0, 0.0, -0.0]))


def test_unordered_debug_prints_come_in_program_order():
    import contextlib
    import io
    out = io.StringIO()

    def f(x):
        jitviz.debug.print("x {}", x)
        jitviz.debug.print("y {}", jnp.sin(x))
        return x
    with contextlib.redirect_stdout(out):
        lax.map(f, jnp.arange(2.0))
    assert [line.split()[0] for line in out.getvalue().splitlines()] == ["x", "y", "x", "y"]


def test_the_readme_table_lists_exactly_these_tests():
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Where jitviz differs from JAX, deliberately")[1].split("\n## ")[0]
    named = re.findall(r"`test_deliberate_differences.py::(\w+)`", section)
    here = sorted(n for n in globals() if n.startswith("test_")
                  and n != "test_the_readme_table_lists_exactly_these_tests")
    assert sorted(named) == here
    assert len(named) == len(set(named))
