"""Mutable arrays (`jitviz.new_ref`, `jitviz.freeze`, `jitviz.Ref`; jitviz/state.py): the
behaviours of JAX's "stateful computations" tutorial, each against JAX when it is installed,
and jitviz's own checks of values, in-place write-back and the jit cache on the interpreter
and the CPU backend."""
import functools

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from helpers import run_program_in_simulator

BACKENDS = ["interpret", "cpu"]


def _jax():
    jax = pytest.importorskip("jax")
    return jax, jax.numpy


def _both():
    """(jax, jnp) pairs: JAX's own and jitviz's, to run one program under each."""
    jax, jjnp = _jax()
    return [(jax, jjnp), (jitviz, jnp)]


# --- the tutorial's cells, against JAX ---------------------------------------------------------

def test_a_jitted_function_closing_over_a_ref_adds_in_place_on_every_call():
    texts = []
    for jax, np_ in _both():
        x_ref = jax.new_ref(np_.zeros(3))

        @jax.jit
        def f():
            x_ref[1] += 1.

        before = repr(x_ref)
        assert f() is None
        f()
        texts.append((before, repr(x_ref), str(x_ref)))
    assert texts[0] == texts[1]
    assert texts[1][1] == "Ref([0., 2., 0.], dtype=float32)"


def test_grad_through_a_ref_made_inside_the_function():
    outs = []
    for jax, np_ in _both():
        def g(x):
            x_ref = jax.new_ref(0.)
            x_ref[...] = np_.sin(x)
            return x_ref[...]
        outs.append(jax.grad(g)(1.0))
    assert np.allclose(outs[1], np.cos(1.0)) and np.allclose(outs[0], outs[1])
    assert outs[0].dtype == outs[1].dtype and outs[0].weak_type == outs[1].weak_type


def test_math_on_a_ref_is_a_type_error():
    for jax, np_ in _both():
        with pytest.raises(TypeError):
            np_.sin(jax.new_ref(1.0))
        with pytest.raises(TypeError):
            jax.new_ref(1.0) + 1
    with pytest.raises(TypeError, match=r"read its value first, `x_ref\[\.\.\.\]`"):
        jnp.sin(jitviz.new_ref(1.0))


def _indexing_cell(jax, np_):
    x_ref = jax.new_ref(np_.arange(12.).reshape(3, 4))
    row = x_ref[0]
    x_ref[1] = row
    val = x_ref[1, 2]
    x_ref[2, 3] = val
    col = x_ref[:, 1]
    x_ref[0, :3] = col
    vals = x_ref[np_.array([0, 0, 1]), np_.array([1, 2, 3])]
    x_ref[np_.array([1, 2, 1]), np_.array([0, 0, 1])] = vals
    reads = [row, val, col, vals, x_ref[-1], x_ref[..., 1], x_ref[:, ::2]]
    return reads, jax.freeze(x_ref)


def test_reads_and_writes_take_numpy_indexing_and_freeze_gives_the_final_array():
    (j_reads, j_final), (reads, final) = [_indexing_cell(*p) for p in _both()]
    for a, b in zip(j_reads + [j_final], reads + [final]):
        assert type(b) is jitviz.Array and a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), b)
    assert repr(final) == repr(j_final)


def test_an_index_known_to_be_out_of_bounds_is_an_error():
    for jax, np_ in _both():
        r = jax.new_ref(np_.zeros((3, 4)))
        with pytest.raises(ValueError, match="Out of bound indexer: idx=5, dim=3"):
            r[5]
        with pytest.raises(ValueError, match="Out of bound indexer: idx=4, dim=4"):
            r[0, 4] = 1.0


def test_grad_of_a_function_using_a_ref_internally():
    outs = []
    for jax, np_ in _both():
        def normalize(x):
            acc = jax.new_ref(0.0)
            acc[...] = np_.sum(x)
            return x / acc[...]
        outs.append(jax.grad(lambda x: normalize(x).sum())(np_.arange(1.0, 4.0)))
        outs.append(jax.grad(lambda x: normalize(x)[0])(np_.arange(1.0, 4.0)))
    np.testing.assert_allclose(outs[2], outs[0], atol=1e-7)
    np.testing.assert_allclose(outs[3], outs[1], rtol=1e-6)
    np.testing.assert_allclose(outs[3], [1 / 6 - 1 / 36, -1 / 36, -1 / 36], rtol=1e-6)


def test_vmap_maps_a_ref_argument_and_each_instance_writes_its_slice():
    outs = []
    for jax, np_ in _both():
        def scale_into(x, out_ref):
            out_ref[...] = 2.0 * x
        out_ref = jax.new_ref(np_.zeros(3))
        assert jax.vmap(scale_into)(np_.arange(3.0), out_ref) is None
        outs.append(out_ref[...])
        # a ref mapped along axis 1 of a matrix: each instance writes a column
        m_ref = jax.new_ref(np_.zeros((2, 3)))
        jax.vmap(lambda x, r: r.__setitem__(..., np_.stack([x, -x])),
                 in_axes=(0, 1))(np_.arange(3.0), m_ref)
        outs.append(m_ref[...])
    np.testing.assert_array_equal(outs[2], [0., 2., 4.])
    np.testing.assert_array_equal(outs[0], outs[2])
    np.testing.assert_array_equal(outs[1], outs[3])


def test_vmap_of_a_function_writing_a_ref_it_closes_over_is_refused():
    for jax, np_ in _both():
        r = jax.new_ref(0.0)

        def write_shared(x):
            r[...] = x
        with pytest.raises(Exception):
            jax.vmap(write_shared)(np_.arange(3.0))
    r = jitviz.new_ref(0.0)
    with pytest.raises(NotImplementedError, match="pass the Ref as an argument"):
        jitviz.vmap(lambda x: r.__setitem__(..., x))(jnp.arange(3.0))
    assert float(r[...]) == 0.0


def test_vmap_refuses_a_per_instance_write_into_an_unmapped_ref():
    r = jitviz.new_ref(0.0)
    with pytest.raises(ValueError, match="not mapped"):
        jitviz.vmap(lambda x, ref: ref.__setitem__(..., x), in_axes=(0, None))(
            jnp.arange(3.0), r)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jitted_function_writes_a_ref_argument_in_place(backend):
    def sin_inplace(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])
    f = jitviz.jit(sin_inplace, backend=backend)
    x_ref = jitviz.new_ref(jnp.arange(3.0))
    address = x_ref.unsafe_buffer_pointer()
    f(x_ref)
    assert x_ref.unsafe_buffer_pointer() == address
    np.testing.assert_allclose(x_ref[...], np.sin(np.arange(3.0, dtype=np.float32)),
                               rtol=1e-6)
    f(x_ref)  # a cache hit reads the Ref's current value
    np.testing.assert_allclose(x_ref[...], np.sin(np.sin(np.arange(3.0, dtype=np.float32))),
                               rtol=1e-6)
    assert f.cache_info().compiles == 1


def test_ref_argument_values_match_jax():
    jax, jjnp = _jax()
    outs = []
    for jx, np_ in ((jax, jjnp), (jitviz, jnp)):
        @jx.jit
        def step(x, acc_ref, count_ref):
            acc_ref[1:] += x[:-1] * 2
            count_ref[...] = count_ref[...] + 1
            return acc_ref[...].sum()
        acc, count = jx.new_ref(np_.ones(4)), jx.new_ref(0)
        sums = [step(np_.arange(4.0), acc, count) for _ in range(3)]
        outs.append((sums, acc[...], count[...]))
    for a, b in zip(outs[0][0] + [outs[0][1], outs[0][2]], outs[1][0] + [outs[1][1], outs[1][2]]):
        np.testing.assert_allclose(np.asarray(a), b)
        assert a.dtype == b.dtype and a.weak_type == b.weak_type


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cached_call_reads_the_refs_current_value(backend):
    x_ref = jitviz.new_ref(jnp.zeros(3))
    f = jitviz.jit(lambda y: x_ref[...] * y, backend=backend)
    np.testing.assert_array_equal(f(2.0), [0, 0, 0])
    x_ref[...] = jnp.array([1.0, 2.0, 3.0])  # outside jit, between calls
    np.testing.assert_array_equal(f(2.0), [2, 4, 6])
    assert f.cache_info().compiles == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_ref_argument_gets_its_own_write(backend):
    @jitviz.jit(backend=backend)
    def bump(r, by):
        r[0] += by
    a, b = jitviz.new_ref(jnp.zeros(2)), jitviz.new_ref(jnp.full(2, 5.0, jnp.float32))
    bump(a, 1.0)
    bump(b, 2.0)
    bump(a, 3.0)
    np.testing.assert_array_equal(a[...], [4, 0])
    np.testing.assert_array_equal(b[...], [7, 5])
    assert bump.cache_info().compiles == 1


def test_a_returned_read_does_not_change_with_later_writes():
    r = jitviz.new_ref(jnp.arange(3.0))
    out = jitviz.jit(lambda ref: ref[...])(r)
    r[...] = jnp.zeros(3)
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_a_ref_and_an_array_argument_are_different_specializations():
    f = jitviz.jit(lambda x: x[...] * 2)
    r = jitviz.new_ref(jnp.ones(3))
    np.testing.assert_array_equal(f(jnp.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(f(r), [2, 2, 2])
    assert f.cache_info().compiles == 2
    assert str(jitviz.typeof(r)) == "Ref{float32[3]}"
    assert "Ref{f32[3]}" in f.specializations[1].signature


def test_typeof_and_reprs_match_jax():
    jax, jjnp = _jax()
    for make in (lambda m: m.new_ref(0.), lambda m: m.new_ref(3),
                 lambda m: m.new_ref(np.arange(3))):
        assert repr(make(jax)) == repr(make(jitviz))
    assert str(jax.typeof(jax.new_ref(jjnp.zeros((3, 4))))) == \
        str(jitviz.typeof(jitviz.new_ref(jnp.zeros((3, 4)))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_local_ref_inside_jit_is_pure_state(backend):
    @jitviz.jit(backend=backend)
    def cumsum3(x):
        acc = jitviz.new_ref(jnp.zeros_like(x))
        acc[0] = x[0]
        for i in range(1, 3):
            acc[i] = acc[i - 1] + x[i]
        return jitviz.freeze(acc)
    np.testing.assert_array_equal(cumsum3(jnp.array([1.0, 2.0, 3.0])), [1, 3, 6])
    closed = cumsum3.specializations[0].closed
    assert closed.refs is None and len(closed.jaxpr.invars) == 1


def test_the_jaxpr_shows_an_outside_ref_as_an_input_and_its_final_value_as_an_output():
    x_ref = jitviz.new_ref(jnp.zeros(3))

    def f(y):
        x_ref[...] = x_ref[...] + y
        return y * 2
    closed = jitviz.make_jaxpr(f)(1.0)
    assert [str(v.aval) for v in closed.jaxpr.invars] == ["~float32[]", "float32[3]"]
    assert closed.arg_names == ["y", "x_ref"]  # named by the variable it was read from
    assert [str(v.aval) for v in closed.jaxpr.outvars] == ["~float32[]", "float32[3]"]
    # a Ref only read is an input and no output
    assert len(jitviz.make_jaxpr(lambda: x_ref[0] * 2)().jaxpr.outvars) == 1
    np.testing.assert_array_equal(x_ref[...], [0, 0, 0])  # tracing wrote nothing


# --- what is refused ---------------------------------------------------------------------------

def test_jit_refuses_what_jax_refuses():
    for jax, np_ in _both():
        r = jax.new_ref(np_.arange(3.0))
        with pytest.raises(ValueError, match="cannot be returned"):
            jax.jit(lambda: r)()
        with pytest.raises(ValueError, match="cannot be returned"):
            jax.jit(lambda a: a)(r)
        with pytest.raises(ValueError, match="appeared at both a and b"):
            jax.jit(lambda a, b: None)(r, r)

        def both(a):
            r[0] = 1.
            a[1] = 2.
        with pytest.raises(ValueError, match="both closed over and passed as the argument a"):
            jax.jit(both)(r)
        np.testing.assert_array_equal(np.asarray(r[...]), [0, 1, 2])


def test_writes_neither_broadcast_nor_change_dtype_as_in_jax():
    for jax, np_ in _both():
        f, i = jax.new_ref(np_.zeros((2, 3))), jax.new_ref(np_.arange(3))
        with pytest.raises(ValueError):
            f[0] = 1.0  # a scalar into a row: no broadcasting
        with pytest.raises(ValueError):
            f[...] = np_.ones(3)
        with pytest.raises(ValueError):
            i[0] = 1.5  # float into int
        with pytest.raises(ValueError):
            f[0, 0] = np_.int32(1)  # a strong int into float
        i[0] = np_.int16(7)  # any integer into an integer Ref
        f[0, 0] = np.float64(2.5)  # NumPy float64 is float32 without x64
        assert int(i[0]) == 7 and float(f[0, 0]) == 2.5
    with pytest.raises(ValueError, match="does not broadcast.*broadcast_to"):
        jitviz.new_ref(jnp.zeros(3))[...] = 1.0
    with pytest.raises(ValueError, match=r"astype\(jnp.int32\)"):
        jitviz.new_ref(jnp.arange(3))[0] = 1.5


def test_refs_to_refs_and_non_arrays_are_refused():
    with pytest.raises(TypeError, match="refs to refs"):
        jitviz.new_ref(jitviz.new_ref(1.0))
    with pytest.raises(TypeError, match="new_ref has type list"):
        jitviz.new_ref([1.0, 2.0])
    r = jitviz.new_ref(jnp.zeros(2))
    with pytest.raises(TypeError, match="Ref into another Ref"):
        r[...] = jitviz.new_ref(jnp.zeros(2))
    for convert in (np.asarray, bool, float, list):
        with pytest.raises(TypeError, match=r"read it first: `x_ref\[\.\.\.\]`"):
            convert(jitviz.new_ref(1.0))


def test_freeze_only_in_the_scope_that_made_the_ref():
    r = jitviz.new_ref(jnp.ones(2))
    with pytest.raises(ValueError, match="only be frozen in the scope where it was created"):
        jitviz.jit(lambda: jitviz.freeze(r))()
    with pytest.raises(TypeError, match="freeze expects a Ref"):
        jitviz.freeze(jnp.ones(2))


def test_a_ref_used_after_its_trace_ended_is_an_error():
    kept = []

    @jitviz.jit
    def f(x):
        kept.append(jitviz.new_ref(x))
        return x
    f(1.0)
    with pytest.raises(ValueError, match="used after that function returned"):
        kept[0][...]


def _control_flow_programs(jax, np_, lax, jit, x_ref):
    """Programs whose control-flow bodies read and write a Ref of the enclosing function."""
    def fori(x):
        def body(i, c):
            x_ref[0] += 1.
            return c + x_ref[0]
        return lax.fori_loop(0, 3, body, x)

    def while_(n):
        def body(s):
            x_ref[...] = x_ref[...] * 2
            return s + 1
        return lax.while_loop(lambda s: s < n, body, 0)

    def scan(xs):
        def f(c, x):
            x_ref[0] = x_ref[0] + x
            return c + 1, x_ref[0]
        return lax.scan(f, 0, xs)

    def nested(x):
        def outer(i, c):
            def inner(j, d):
                x_ref[1] += 1.
                return d + x_ref[1]
            return lax.fori_loop(0, 2, inner, c)
        return lax.fori_loop(0, 3, outer, x)

    def cond(p):
        lax.cond(p, lambda: x_ref.__setitem__(2, x_ref[2] + 5.), lambda: None)
        return lax.cond(p, lambda: x_ref[2], lambda: -x_ref[2])

    @jit
    def inner_jit():
        x_ref[1] += 10.

    def local(x):  # a Ref local to the function, written in a loop: pure
        r = jax.new_ref(np_.zeros(3))

        def body(i, c):
            r[i] = x * i
            return c
        lax.fori_loop(0, 3, body, 0)
        return r[...].sum()

    def remat(x):  # a checkpointed function writing the Ref
        def f(y):
            x_ref[0] = x_ref[0] + y
            return y * 2
        return jax.checkpoint(f)(x)

    return [(jit(fori), (1.,)), (fori, (1.,)), (jit(while_), (2,)), (jit(remat), (2.,)),
            (remat, (3.,)),
            (jit(scan), (np_.arange(3.),)), (jit(nested), (0.,)),
            (jit(cond), (True,)), (jit(cond), (False,)),
            (jit(lambda: inner_jit()), ()), (jit(local), (2.,)),
            (jax.grad(local), (2.,)), (jax.vmap(local), (np_.arange(3.),))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_control_flow_bodies_read_and_write_an_enclosing_ref_as_in_jax(backend):
    jax, jjnp = _jax()
    results = []
    jitviz_jit = functools.partial(jitviz.jit, backend=backend)
    for jx, np_, lx, jit in ((jax, jjnp, jax.lax, jax.jit), (jitviz, jnp, lax, jitviz_jit)):
        x_ref = jx.new_ref(np_.arange(3.0))
        outs = []
        for fun, args in _control_flow_programs(jx, np_, lx, jit, x_ref):
            outs.append((fun(*args), np.asarray(x_ref[...])))
        results.append(outs)
    for (a, ra), (b, rb) in zip(*results):
        for x, y in zip(jitviz.tree_leaves(a), jitviz.tree_leaves(b)):
            np.testing.assert_allclose(np.asarray(x), y, rtol=1e-6)
            assert x.dtype == y.dtype and x.weak_type == y.weak_type
        np.testing.assert_allclose(ra, rb, rtol=1e-6)


def test_a_write_under_a_transformation_inside_a_loop_is_refused():
    r = jitviz.new_ref(jnp.zeros(3))

    def body(i, c):
        jitviz.vmap(lambda x: r.__setitem__(0, x))(jnp.ones(2))
        return c
    with pytest.raises(NotImplementedError, match="pass the Ref as an argument"):
        jitviz.jit(lambda x: lax.fori_loop(0, 3, body, x))(1.0)
    np.testing.assert_array_equal(r[...], [0, 0, 0])


def test_a_nested_jit_taking_a_ref_writes_the_outer_state():
    inner = jitviz.jit(lambda ref, v: ref.__setitem__(1, ref[1] + v))
    r = jitviz.new_ref(jnp.zeros(3))

    @jitviz.jit
    def outer(v):
        inner(r, v)
        inner(r, v)
    outer(2.0)
    np.testing.assert_array_equal(r[...], [0, 4, 0])


def test_the_jax_ref_module_functions():
    r = jitviz.ref.new_ref(jnp.arange(5))
    jitviz.ref.set(r, 1, 10)
    jitviz.ref.addupdate(r, 2, 10)
    assert jitviz.ref.get(r, 1) == 10 and jitviz.ref.get(r, 2) == 12
    np.testing.assert_array_equal(jitviz.ref.get(r), [0, 10, 12, 3, 4])
    assert isinstance(r, jitviz.Ref) and not isinstance(r, jitviz.Array)


def test_lowered_and_compiled_calls_write_refs_back():
    def g(r, y):
        r[0] = y
        return y * 2
    x_ref = jitviz.new_ref(jnp.zeros(2))
    compiled = jitviz.jit(g).lower(x_ref, 3.0).compile()
    assert float(compiled(x_ref, 3.0)) == 6.0
    np.testing.assert_array_equal(x_ref[...], [3, 0])
    text = str(jitviz.jit(g).trace(x_ref, 1.0).jaxpr)
    assert text.startswith("{ lambda ; a:f32[2] b:f32[]. let"), text
    timings, seconds, calls = jitviz.jit(g).time_kernels(x_ref, 5.0, min_time=0.0)
    assert calls >= 3 and float(x_ref[0]) == 3.0  # timing runs write nothing back


def test_a_frozen_ref_in_a_trace_is_gone_as_in_jax():
    for jax, np_ in _both():
        def fz(x):
            r = jax.new_ref(x)
            y = jax.freeze(r)
            return r[...] + y
        with pytest.raises(ValueError):
            jax.jit(fz)(1.0)
        eager = jax.new_ref(np_.ones(2))  # an eager freeze leaves the Ref usable
        jax.freeze(eager)
        np.testing.assert_array_equal(np.asarray(eager[...]), [1, 1])
    with pytest.raises(ValueError, match="used after jax.freeze"):
        jitviz.jit(lambda x: (jitviz.freeze(r := jitviz.new_ref(x)), r[...]))(1.0)


def test_an_eager_read_is_a_copy():
    r = jitviz.new_ref(jnp.arange(6.0).reshape(2, 3))
    row, whole = r[0], r[...]
    r[0] = jnp.zeros(3)
    np.testing.assert_array_equal(row, [0, 1, 2])
    np.testing.assert_array_equal(whole[0], [0, 1, 2])
    np.testing.assert_array_equal(r[0], [0, 0, 0])


def test_a_traced_ref_prints_its_type():
    seen = []
    r = jitviz.new_ref(jnp.zeros(3))
    jitviz.jit(lambda a: seen.append(repr(a)))(r)
    jitviz.jit(lambda: seen.append(str(r)))()  # a closed-over one too
    assert seen == ["Traced<Ref{float32[3]}>with<DynamicJaxprTrace>"] * 2


_CUDA_SIM_PROGRAM = """
from numba import cuda  # noqa: F401 (the simulator is chosen at this first import)
import numpy as np
import jitviz, jitviz.numpy as jnp
from jitviz import lax

def run(backend):  # a closed-over Ref and a Ref argument written in a loop
    x_ref = jitviz.new_ref(jnp.arange(4.0))
    address = x_ref.unsafe_buffer_pointer()
    f = jitviz.jit(lambda y: (x_ref.__setitem__(..., jnp.sin(x_ref[...]) + y),
                              x_ref[...] * 2)[1], backend=backend)
    out = f(1.0)
    g = jitviz.jit(lambda r: lax.fori_loop(
        0, 3, lambda i, c: (r.__setitem__(i, r[i] * 10), c)[1], 0), backend=backend)
    g(x_ref)
    assert x_ref.unsafe_buffer_pointer() == address
    return np.asarray(out), np.asarray(x_ref[...])

for got, want in zip(run("cuda"), run("interpret")):
    np.testing.assert_allclose(got, want, rtol=1e-6)
print("same as the interpreter")
"""


def test_refs_on_the_cuda_backend_in_the_simulator():
    pytest.importorskip("numba.cuda")
    assert "same as the interpreter" in run_program_in_simulator(_CUDA_SIM_PROGRAM)


def test_swap_and_refs_inside_pytree_arguments_match_jax():
    outs = []
    for jax, np_ in _both():
        state = {"count": jax.new_ref(0), "sums": jax.new_ref(np_.zeros(2))}

        @jax.jit
        def step(st, x):
            st["count"][...] += 1
            return jax.ref.swap(st["sums"], None, st["sums"][...] + x)
        olds = [step(state, np_.array([1.0, 2.0])) for _ in range(2)]
        outs.append([*olds, state["count"][...], state["sums"][...]])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(np.asarray(a), b)
        assert a.dtype == b.dtype and a.weak_type == b.weak_type


@pytest.mark.parametrize("backend", BACKENDS)
def test_swapping_two_refs_in_a_jitted_function(backend):
    @jitviz.jit(backend=backend)
    def swap_values(a, b):
        a[...], b[...] = b[...], a[...]
    a, b = jitviz.new_ref(jnp.zeros(3)), jitviz.new_ref(jnp.ones(3))
    swap_values(a, b)
    np.testing.assert_array_equal(a[...], [1, 1, 1])
    np.testing.assert_array_equal(b[...], [0, 0, 0])


def test_eval_shape_and_out_info_give_the_functions_own_outputs():
    r = jitviz.new_ref(jnp.zeros(3))

    def f(x):
        r[0] = x
        return x * 2
    shape = jitviz.eval_shape(f, 1.0)
    assert (shape.shape, shape.dtype) == ((), np.float32)
    info = jitviz.jit(lambda ref, x: (ref.__setitem__(1, x), x)[1]).trace(r, 1.0).out_info
    assert info.shape == () and info.dtype == np.float32
    assert jitviz.eval_shape(lambda ref: ref[0] * 2, r).shape == ()
    np.testing.assert_array_equal(r[...], [0, 0, 0])  # tracing writes nothing


def test_a_while_loop_condition_writing_a_ref_is_refused():
    r = jitviz.new_ref(0)

    def cond_fun(s):
        r[...] += 1
        return s < 3
    for f in (jitviz.jit(lambda: lax.while_loop(cond_fun, lambda s: s + 1, 0)),
              lambda: lax.while_loop(cond_fun, lambda s: s + 1, 0)):
        with pytest.raises(NotImplementedError, match="cond_fun.*write it in body_fun"):
            f()
    assert int(r[...]) == 0
