"""Issue 17: indexing follows JAX out of bounds, no generated kernel reads or writes out of
bounds, bad input names the argument, and user text stays inert.

Out-of-bounds semantics, checked against jax 0.10.2 (`jax[cpu]`), whose values are written
out below: a gather clamps each index into range (`x[10]` of 5 elements is `x[4]`, also for a
static Python int), a scatter drops the update (so the gradient of an out-of-bounds gather
is zero there), dynamic_slice / dynamic_update_slice count a negative start from the end and
then clamp it, jnp.take fills (NaN) by default. A gather that would read from an empty axis
is a TypeError at trace time ("Slice size at index 0 in gather op is out of range"), used or
not; a static or traced scalar index into an empty axis is an IndexError.

The CPU kernels run under Numba's bounds checking in a child process
(`test_generated_cpu_kernels_stay_in_bounds`): NUMBA_BOUNDSCHECK must be set before Numba is
imported, and with fresh kernel caches so nothing compiled without checks is reused. The
CUDA backend gets the same out-of-bounds cases through `test_primitives.CASES` (run in the
simulator by test_cuda_backend.py).

The issue's other items live with their subjects: the cyclic kernel graph (item 3) in
test_fusion.py (`test_no_cycle_through_a_group_merged_after_the_value_was_computed`, and a
seeded search over small programs); inert user text (item 5) in test_explorer_graph.py,
test_explorer_widget.py and test_magics.py, over `helpers.XSS_PAYLOADS`.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import assert_close, run_pytest_child

BOUNDS_CHILD = os.environ.get("JITVIZ_BOUNDSCHECK_CHILD") == "1"
in_bounds_child = pytest.mark.skipif(not BOUNDS_CHILD, reason="runs under NUMBA_BOUNDSCHECK=1 "
                                     "in test_generated_cpu_kernels_stay_in_bounds' child")
main_only = pytest.mark.skipif(BOUNDS_CHILD, reason="runs in the main test process")
pytestmark = pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning")

f32, i32 = np.float32, np.int32
X = np.arange(20, dtype=f32).reshape(4, 5)
V = np.arange(5, dtype=f32)
OUT = np.array([9, -9, 2, -1, 4, -5, 5], i32)  # out of bounds both ways, negative, in bounds


def both_backends(fun, *args):
    """The interpreter's result and the CPU backend's, which must be equal."""
    want = jitviz.jit(fun, backend="interpret")(*args)
    got = jitviz.jit(fun)(*args)
    for g, w in zip(jitviz.tree_leaves(got), jitviz.tree_leaves(want)):
        assert_close(np.asarray(g), np.asarray(w), rtol=0, atol=0)
    return want


# --- 1. out-of-bounds and empty-axis indices follow JAX --------------------------------------

def gather_from_empty_axis(z, i):
    return z[i]


def unused_gather_from_empty_axis(z, i):
    _ = z[i]
    return z.sum()


@main_only
@pytest.mark.parametrize("fun", [gather_from_empty_axis, unused_gather_from_empty_axis])
@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_gather_from_an_empty_axis_is_a_type_error_at_trace_time_as_in_jax(fun, backend):
    """It used to return garbage read out of bounds on cpu (different on every run) and to
    fail in the interpreter with NumPy's IndexError. JAX raises this TypeError while tracing,
    whether the result is used or not: so do all of jitviz's backends, naming the line."""
    z, i = np.zeros((0, 6), f32), np.array([0, 1], i32)
    with pytest.raises(TypeError, match=r"(?s)Slice size at index 0 in gather op is out of "
                       r"range.*(return z\[i\]|_ = z\[i\])"):
        jitviz.jit(fun, backend=backend)(z, i)


@main_only
def test_gather_from_an_empty_axis_eagerly_and_with_static_indices():
    with pytest.raises(TypeError, match="gather op is out of range"):
        jnp.zeros((0, 6))[jnp.array([0, 1])]
    with pytest.raises(TypeError, match="gather op is out of range"):
        jitviz.jit(lambda z: z[np.array([0, 1])])(np.zeros((0, 6), f32))
    with pytest.raises(TypeError, match="index 1 in gather op"):
        jnp.zeros((3, 0))[:, jnp.array([0, 1])]


@main_only
@pytest.mark.parametrize("fun,args", [
    (lambda z: z[0], (np.zeros((0, 6), f32),)),
    (lambda z, k: z[k], (np.zeros((0, 6), f32), 0)),
    (lambda z: jnp.take(z, np.array([0, 1])), (np.zeros(0, f32),)),
], ids=["static int", "traced int", "take"])
def test_a_scalar_index_into_an_empty_axis_is_an_index_error_as_in_jax(fun, args):
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0|empty axis"):
        jitviz.jit(fun)(*args)


@main_only
def test_gathers_of_nothing_from_an_empty_axis_are_empty_as_in_jax():
    def f(z, e, w, v, i):
        return z[e], w[:, i], v[i], lax.dynamic_slice(z, (3, 2), (0, 2))
    out = both_backends(f, np.zeros((0, 6), f32), np.zeros(0, i32), np.zeros((0, 5), f32),
                        np.zeros((3, 0), f32), np.array([10, -10], i32))
    assert [np.shape(o) for o in out] == [(0, 6), (0, 2), (2, 0), (0, 2)]


@main_only
def test_unused_out_of_bounds_equations_do_not_fail_a_program():
    """Every equation that passes its shape rule runs on any index values: an unused gather,
    dynamic_slice, dynamic_update_slice or scatter with wild indices changes nothing."""
    def f(x, i, k, z, e):
        _ = (x[i], lax.dynamic_slice(x, (k, k), (2, 2)), z[e],
             lax.dynamic_update_slice(x, x[:2, :2], (k, -k)),
             lax.scatter(x, f32(1), [i], (0,), mode="add"))
        return x * 2
    args = (X, np.array([2 ** 30, -2 ** 30], i32), 10 ** 6, np.zeros((0, 3), f32),
            np.zeros(0, i32))
    closed = jitviz.make_jaxpr(f)(*args)
    assert {e.primitive.name for e in closed.jaxpr.eqns} >= {"gather", "scatter",
                                                             "dynamic_slice"}
    (out,) = jitviz.eval_jaxpr(closed.jaxpr, closed.consts, *jitviz.tree_leaves(args))
    assert_close(out, X * 2)
    assert_close(both_backends(f, *args), X * 2)


# values from jax 0.10.2
JAX_GATHERS = [
    ("traced array", lambda x, i: x[i], (V, OUT), [4, 0, 2, 4, 4, 0, 4]),
    ("traced array, 2 axes", lambda x, i, j: x[i, j], (X, np.array([5, -5], i32),
                                                       np.array([1, 9], i32)), [16, 4]),
    ("static array", lambda x: x[np.array([10, -10, 2])], (V,), [4, 0, 2]),
    ("static int and array", lambda x: x[10, np.array([1, 2])], (X,), [16, 17]),
    ("static array and int", lambda x: x[np.array([10]), 10], (X,), [19]),
    ("traced int", lambda x, k: x[k], (V, 10), 4),
    ("traced negative int", lambda x, k: x[k], (V, -10), 0),
    ("dynamic_slice", lambda x, k: lax.dynamic_slice(x, (k,), (3,)), (V, 4), [2, 3, 4]),
    ("dynamic_slice -1", lambda x, k: lax.dynamic_slice(x, (k,), (3,)), (V, -1), [2, 3, 4]),
    ("dynamic_slice -10", lambda x, k: lax.dynamic_slice(x, (k,), (3,)), (V, -10), [0, 1, 2]),
    ("dynamic_update_slice 4", lambda x, k: lax.dynamic_update_slice(x, jnp.ones(3), (k,)),
     (V, 4), [0, 1, 1, 1, 1]),
    ("dynamic_update_slice -1", lambda x, k: lax.dynamic_update_slice(x, jnp.ones(3), (k,)),
     (V, -1), [0, 1, 1, 1, 1]),
    ("dynamic_update_slice -10", lambda x, k: lax.dynamic_update_slice(x, jnp.ones(3), (k,)),
     (V, -10), [1, 1, 1, 3, 4]),
    # the transpose of a gather is a scatter-add, which drops out-of-bounds indices
    ("grad traced array", jitviz.grad(lambda x, i: x[i].sum()), (V, OUT), [1, 0, 1, 0, 2]),
    ("grad static array", jitviz.grad(lambda x: x[np.array([10, -10, 2])].sum()), (V,),
     [0, 0, 1, 0, 0]),
    ("grad static int", jitviz.grad(lambda x: x[10]), (V,), [0, 0, 0, 0, 1]),
    ("scatter drops", lambda x, i: lax.scatter(x, f32(100), [i], (0,), mode="add"),
     (V, OUT), [0, 1, 102, 3, 104]),
    # the transpose of a scatter gathers, with zero where the update was dropped
    ("grad scatter-add updates", jitviz.grad(
        lambda u, i: (lax.scatter(V, u, [i], (0,), mode="add") * V).sum()),
     (np.ones(7, f32), OUT), [0, 0, 2, 0, 4, 0, 0]),
    ("grad scatter-set operand", jitviz.grad(
        lambda x, i: (lax.scatter(x, jnp.zeros(7), [i], (0,), mode="set") * V).sum()),
     (np.ones(5, f32), OUT), [0, 1, 0, 3, 0]),
    ("take fills", lambda x, i: jnp.take(x, i), (V, np.array([10, -10, 2, -1, -5, -6], i32)),
     [np.nan, np.nan, 2, 4, 0, np.nan]),
    ("take int fills", lambda x, i: jnp.take(x.astype(i32), i), (V, np.array([10, 2], i32)),
     np.array([np.iinfo(i32).min, 2], i32)),
    ("take clip", lambda x, i: jnp.take(x, i, mode="clip"), (V, np.array([-1, -6, 7], i32)),
     [0, 0, 4]),
    ("take wrap", lambda x, i: jnp.take(x, i, mode="wrap"), (V, np.array([-1, -6, 7], i32)),
     [4, 4, 2]),
    ("take fill_value", lambda x: jnp.take(x, np.array([-1, -5, -6, 5]), fill_value=7.0),
     (V,), [4, 0, 7, 7]),
]


@main_only
@pytest.mark.parametrize("name,fun,args,want", JAX_GATHERS, ids=[g[0] for g in JAX_GATHERS])
def test_out_of_bounds_indices_give_jax_values(name, fun, args, want):
    got = both_backends(fun, *args)
    want = np.asarray(want)
    assert_close(np.asarray(got), want.astype(np.asarray(got).dtype), rtol=0, atol=0)


# --- 2. a static out-of-bounds integer index clamps, as in JAX --------------------------------

@main_only
def test_static_out_of_bounds_integer_index_clamps_in_jit_and_eagerly():
    five = jnp.arange(5.0)
    assert float(jitviz.jit(lambda x: x[10])(five)) == 4.0  # used to raise IndexError
    assert float(five[10]) == 4.0 and float(five[-10]) == 0.0  # an eager jitviz Array
    assert five[np.array([7, -7])].tolist() == [4.0, 0.0]
    assert jnp.arange(12.0).reshape(3, 4)[10].tolist() == [8.0, 9.0, 10.0, 11.0]
    closed = jitviz.make_jaxpr(lambda x: x[10])(np.zeros(5, f32))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["slice", "squeeze"]
    assert closed.jaxpr.eqns[0].params["start_indices"] == (4,)
    assert list(five) == [0.0, 1.0, 2.0, 3.0, 4.0]  # iteration still stops at the end
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros(0)[10]


# --- the generated CPU kernels under Numba's bounds checking ----------------------------------

BOUNDS_PROGRAMS = {
    "traced indices": (lambda x, i: (x[i], x[:, i], x[i, i], jnp.take(x, i, axis=1),
                                     jnp.take(x, i, mode="wrap"), jnp.take(x, i, mode="clip")),
                       [(X, OUT)]),
    "static indices": (lambda x: (x[np.array([9, -9, 2, -1])], x[:, [7, -7]], x[10],
                                  x[-10, 1], x[1, 10], x[np.array([[2 ** 40], [-3]]), 0]),
                       [(X,)]),
    "traced scalars": (lambda x, k: (x[k], x[:, k], lax.dynamic_slice(x, (k, k), (2, 3)),
                                     lax.dynamic_update_slice(x, jnp.ones((2, 3)), (k, -k))),
                       [(X, 9), (X, -9), (X, -1), (X, 2 ** 31 - 1)]),
    "empty axes": (lambda z, e, w, v, i, k: (z[e], w[:, i], v[i], jnp.take(z, e, axis=0),
                                             lax.dynamic_slice(z, (k, 1), (0, 2)),
                                             lax.scatter(z, f32(1), [i], (0,)),
                                             jitviz.grad(lambda q: q[e].sum())(z),
                                             jitviz.grad(lambda u: lax.scatter(
                                                 z, u, [i], (0,), mode="add").sum())(
                                                 jnp.ones((2, 6)))),
                   [(np.zeros((0, 6), f32), np.zeros(0, i32), np.zeros((0, 5), f32),
                     np.zeros((3, 0), f32), np.array([10, -10], i32), 7)]),
    "scatters": (lambda x, i: (lax.scatter(x, f32(1), [i], (0,), mode="set"),
                               lax.scatter(x, jnp.ones((7, 5)), [i], (0,), mode="max"),
                               lax.scatter(x, f32(2), [i, i], (0, 1), mode="mul"),
                               jitviz.grad(lambda a: a[i].sum() + a[:, i].sum())(x),
                               jitviz.grad(lambda u: lax.scatter(x, u, [i], (0,), mode="add")
                                           .sum())(jnp.ones((7, 5)))),
                 [(X, OUT), (X, np.full(7, -2 ** 31, i32))]),
    "in a loop": (lambda x, i: lax.fori_loop(0, 3, lambda t, c: c + c[i + t * 7].sum(), x),
                  [(V, OUT)]),
}


@in_bounds_child
def test_child_really_checks_bounds():
    """The harness catches what the old gather did on an empty axis (index clamped to -1)."""
    import numba
    from jitviz.backends.cpu import runtime as rt
    assert numba.config.BOUNDSCHECK
    x3, out3 = np.zeros((1, 0, 6), f32), np.zeros((1, 2, 6), f32)
    with pytest.raises(IndexError):
        rt.gather3(x3, np.array([-1, -1], np.int64), out3)


@in_bounds_child
@pytest.mark.parametrize("name", list(BOUNDS_PROGRAMS))
def test_program_in_bounds_matches_interpreter(name):
    fun, calls = BOUNDS_PROGRAMS[name]
    for args in calls:
        both_backends(fun, *args)


@main_only
def test_generated_cpu_kernels_stay_in_bounds(tmp_path):
    out = run_pytest_child(__file__, "-k", "child or in_bounds", NUMBA_BOUNDSCHECK="1",
                           JITVIZ_BOUNDSCHECK_CHILD="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"),
                           JITVIZ_CACHE_DIR=str(tmp_path / "jv"))
    assert f"{len(BOUNDS_PROGRAMS) + 1} passed" in out, out[-3000:]


# --- 4. bad input: a clear error naming the argument and the line -----------------------------

MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])


@main_only
def test_masked_array_argument_is_refused_naming_it():
    """JAX raises ValueError; jitviz used to drop the mask and return 6.0, not 4.0."""
    with pytest.raises(ValueError, match=r"(?s)Argument 'x' is a NumPy masked array.*filled"
                       r".*at .*test_fidelity_safety.py:\d+: .*x\.sum"):
        jitviz.jit(lambda x: x.sum())(MASKED)
    with pytest.raises(ValueError, match=r"Argument \"p\['w'\]\[0\]\" is a NumPy masked"):
        jitviz.jit(lambda p: p["w"][0].sum())({"w": [MASKED]})
    with pytest.raises(ValueError, match="masked array"):
        jitviz.make_jaxpr(lambda x: x + MASKED)(1.0)  # a closed-over constant
    with pytest.raises(ValueError, match="masked array"):
        jnp.asarray(MASKED)
    assert float(jitviz.jit(lambda x: x.sum())(MASKED.filled(0))) == 4.0


@main_only
def test_python_int_outside_int32_names_its_path_and_the_call():
    def f(x):
        return x["w"][0] + 1
    with pytest.raises(OverflowError) as err:
        jitviz.jit(f)({"w": [2 ** 40]})  # the call line
    text = str(err.value)
    assert "Argument \"x['w'][0]\" is the Python int 1099511627776, too large for int32" in text
    assert 'jitviz.jit(f)({"w": [2 ** 40]})  # the call line' in text
    assert err.value.source.code == 'jitviz.jit(f)({"w": [2 ** 40]})  # the call line'
    with pytest.raises(OverflowError, match="Argument 'scale'"):
        jitviz.jit(lambda x, *, scale: x * scale)(1.0, scale=-2 ** 35)


def add_leaves(x):
    return x["w"][0] + x["b"]


def matmul_leaves(p):
    return jnp.tanh(p["a"]) @ p["b"]


def where_leaves(c, x, y):
    return jnp.where(c, x["v"], y)


@main_only
@pytest.mark.parametrize("fun,args,exc,head,names", [
    (add_leaves, ({"w": [np.ones(3, f32)], "b": np.ones(4, f32)},), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,).", ["x['w'][0]", "x['b']"]),
    (matmul_leaves, ({"a": np.ones((2, 3), f32), "b": np.ones((4, 2), f32)},), TypeError,
     "dot_general requires contracting dimensions to have the same shape",
     ["p['a']", "p['b']"]),
    (where_leaves, (np.ones(3, bool), {"v": np.ones(4, f32)}, np.ones(3, f32)), ValueError,
     "Incompatible shapes for broadcasting: shapes=[(3,), (4,), (3,)]", ["c", "x['v']", "y"]),
], ids=["add", "matmul", "where"])
def test_shape_mismatch_names_the_arguments_and_the_line(fun, args, exc, head, names):
    """JAX's exception type and first line, then the user's line and, per operand, the
    argument (its path in the pytree) the value comes from."""
    with pytest.raises(exc) as err:
        jitviz.jit(fun)(*args)
    text = str(err.value)
    assert text.startswith(head)
    assert f"test_fidelity_safety.py:{fun.__code__.co_firstlineno + 1}: return" in text
    for k, name in enumerate(names):
        assert f"operand {k + 1} (" in text and f"comes from the argument {name}\n" in text + "\n"
    assert err.value.depends_on == names


@main_only
def test_matmul_batch_mismatch_names_the_arguments():
    with pytest.raises(ValueError, match=r"(?s)Incompatible shapes for matmul.*comes from the "
                       r"argument x\n.*comes from the argument y"):
        jitviz.jit(lambda x, y: x @ y)(np.ones((2, 3, 4), f32), np.ones((3, 4, 5), f32))
