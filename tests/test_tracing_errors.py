"""Tracing errors: JAX's classes and first lines, and what JAX leaves out.

Every message must name the function being traced (and where it is defined), the
argument(s) the value depends on (pytree paths such as `d['a'][1]`), the user's offending
line in this file (never a frame inside jitviz), and the fix.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import errors, lax

from helpers import line_of

HERE = __file__


def raises(cls, fun, *args, **kwargs):
    """Trace `fun` and return the error (which must be exactly of class `cls`)."""
    with pytest.raises(cls) as info:
        jitviz.make_jaxpr(fun, **kwargs.pop("_make", {}))(*args, **kwargs)
    assert type(info.value) is cls, type(info.value)
    return info.value


def assert_points_at(err, fun, marker):
    """The message and `err.source` name the user's line (in this file) and the function."""
    line = line_of(fun, marker)
    msg = str(err)
    assert f'File "{HERE}", line {line}' in msg, msg
    assert err.source.file == HERE and err.source.line == line
    assert "jitviz/core" not in msg and "jitviz/numpy" not in msg


def where_traced(fun, purpose="jit"):
    code = fun.__code__
    return (f"The error occurred while tracing the function {fun.__name__} at "
            f"{code.co_filename}:{code.co_firstlineno} for {purpose}.")


# --- bool / int / float / array conversions ---------------------------------------------------

def f_bool(x):
    if x > 0:  # MARK
        return x
    return -x


def test_if_on_a_traced_value():
    err = raises(errors.TracerBoolConversionError, f_bool, 1.0)
    msg = str(err)
    assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].\n")
    assert where_traced(f_bool) in msg
    assert "depends on the value of the argument x." in msg
    assert_points_at(err, f_bool, "# MARK")
    assert "lax.cond" in msg and "jnp.where" in msg
    assert "static_argnums=(0,)" in msg and "static_argnames=('x',)" in msg
    assert err.depends_on == ["x"]
    assert isinstance(err, errors.ConcretizationTypeError) and isinstance(err, TypeError)


def g_while(x, n):
    i = 0
    while i < n:  # MARK
        i += 1
    return x + i


def test_while_on_a_traced_bound_suggests_static_n_and_while_loop():
    err = raises(errors.TracerBoolConversionError, g_while, 10, 20)
    msg = str(err)
    assert where_traced(g_while) in msg
    assert "depends on the value of the argument n." in msg
    assert "static_argnums=(1,)" in msg and "static_argnames=('n',)" in msg
    assert "lax.while_loop" in msg and "lax.fori_loop" in msg
    assert_points_at(err, g_while, "# MARK")


def f_range(x, n):
    y = 0.
    for i in range(n):  # MARK
        y = y + x
    return y


def test_range_of_a_traced_value():
    err = raises(errors.TracerIntegerConversionError, f_range, 2, 10)
    msg = str(err)
    assert msg.startswith("The __index__() method was called on traced array with shape "
                          "int32[]")
    assert "depends on the value of the argument n." in msg
    assert "lax.fori_loop" in msg and "static_argnums=(1,)" in msg
    assert_points_at(err, f_range, "# MARK")


def f_index_list(x, n):
    return x * [1, 2, 3][n]  # MARK


def test_indexing_a_python_list_with_a_tracer():
    err = raises(errors.TracerIntegerConversionError, f_index_list, 1.0, 2)
    assert_points_at(err, f_index_list, "# MARK")
    assert "static_argnums=(1,)" in str(err)


@pytest.mark.parametrize("convert", ["int", "float", "complex"])
def test_python_number_conversions(convert):
    def f(x):
        return {"int": int, "float": float, "complex": complex}[convert](x)  # MARK
    err = raises(errors.ConcretizationTypeError, f, 3.0)
    msg = str(err)
    assert msg.startswith("Abstract tracer value encountered where concrete value is expected: "
                          "traced array with shape float32[]\n")
    assert f"The problem arose with the `{convert}` function." in msg
    assert_points_at(err, f, "# MARK")


@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist(method):
    def f(x):
        return getattr(x, method)()  # MARK
    err = raises(errors.ConcretizationTypeError, f, np.ones(3, np.float32))
    assert_points_at(err, f, "# MARK")


def f_np(x):
    return np.asarray(x)  # MARK


def test_numpy_conversion_of_a_tracer():
    err = raises(errors.TracerArrayConversionError, f_np, np.ones(3, np.float32))
    msg = str(err)
    assert msg.startswith("The numpy.ndarray conversion method __array__() was called on "
                          "traced array with shape float32[3]")
    assert_points_at(err, f_np, "# MARK")
    assert "jitviz.numpy" in msg


def test_tracers_are_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        jitviz.make_jaxpr(lambda x: {x: 1})(1.0)


# --- shapes -------------------------------------------------------------------------------

def f_shape(x):
    return x.reshape(jnp.array(x.shape).prod())  # MARK


def test_shape_computed_with_jnp_suggests_np_prod():
    err = raises(errors.ConcretizationTypeError, f_shape, jnp.ones((2, 3)))
    msg = str(err)
    assert "np.prod(x.shape)" in msg
    assert "jnp.reshape" in msg
    assert "reduce_prod" in msg  # the operation that made the value a tracer
    assert_points_at(err, f_shape, "# MARK")
    assert err.depends_on == []


def example_fun(length):
    return jnp.ones((length,))  # MARK


def test_traced_shape_is_a_type_error_of_the_family():
    err = raises(errors.ConcretizationTypeError, example_fun, 5)
    msg = str(err)
    assert "Shapes must be 1D sequences of concrete values of integer type" in msg
    assert "static_argnums=(0,)" in msg and "depends on the value of the argument length" in msg
    assert_points_at(err, example_fun, "# MARK")


def f_arange(n):
    return jnp.arange(n)  # MARK


def test_traced_arange_bound():
    err = raises(errors.ConcretizationTypeError, f_arange, 3)
    assert "It arose in the jnp.arange argument 'stop'" in str(err)
    assert_points_at(err, f_arange, "# MARK")


def get_negatives(x):
    return x[x < 0]  # MARK


def test_boolean_mask_of_a_tracer():
    err = raises(errors.NonConcreteBooleanIndexError, get_negatives, np.ones(3, np.float32))
    msg = str(err)
    assert msg.startswith("Array boolean indices must be concrete; got bool[3]\n")
    assert where_traced(get_negatives) in msg
    assert "jnp.where(mask, x, 0)" in msg
    assert_points_at(err, get_negatives, "# MARK")
    assert isinstance(err, IndexError)


def test_nonzero_of_a_tracer():
    def f(x):
        return jnp.nonzero(x)  # MARK
    err = raises(errors.ConcretizationTypeError, f, np.ones(3))
    assert "jnp.nonzero" in str(err)
    assert_points_at(err, f, "# MARK")


# --- which arguments ------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


def f_tree(d):
    if d['a'][1] > 0:  # MARK
        return 1
    return 0


def f_list(xs):
    if xs[0] + xs[2] > 0:
        return 1
    return 0


def f_star(*args):
    if args[1] > 0:
        return 1
    return 0


def f_kw(x, *, scale):
    if scale > 0:
        return x
    return x


def f_nested(p):
    if p['w']['b'] > 0:
        return 1
    return 0


def f_point(p):
    if p.y > 0:
        return 1
    return 0


def f3(x, y, z):
    if x + y + z > 0:
        return x
    return y


def f2(x, y):
    if x.sum() > y:
        return x
    return -x


@pytest.mark.parametrize("fun,args,kwargs,says", [
    (f_tree, ({'a': (1.0, 2.0)},), {}, "the value of the argument d['a'][1]."),
    (f_list, ([1.0, 2.0, 3.0],), {}, "the values of the arguments xs[0] and xs[2]."),
    (f_star, (1.0, 2.0), {}, "the value of the argument args[1]."),
    (f_kw, (1.0,), {"scale": 2.0}, "the value of the argument scale."),
    (f_nested, ({'w': {'b': 1.0, 'a': 2.0}},), {}, "the value of the argument p['w']['b']."),
    (f_point, (Point(1.0, 2.0),), {}, "the value of the argument p.y."),
    (f3, (1.0, 2.0, 3.0), {}, "the values of the arguments x, y, and z."),
    (f2, (np.ones(3, np.float32), 2.0), {}, "the values of the arguments x and y."),
], ids=lambda v: getattr(v, "__name__", None))
def test_error_names_the_arguments_the_value_depends_on(fun, args, kwargs, says):
    err = raises(errors.TracerBoolConversionError, fun, *args, **kwargs)
    assert f"because it depends on {says}" in str(err)
    assert where_traced(fun) in str(err)


def test_static_fix_for_a_keyword_only_argument_uses_static_argnames():
    msg = str(raises(errors.TracerBoolConversionError, f_kw, 1.0, scale=2.0))
    assert "static_argnames=('scale',)" in msg and "static_argnums" not in msg


def test_value_not_depending_on_static_arguments():
    def f(x, n):
        if x > n:  # MARK
            return x
        return n
    err = raises(errors.TracerBoolConversionError, f, 1.0, 2, _make={"static_argnums": (1,)})
    assert "depends on the value of the argument x." in str(err)
    assert_points_at(err, f, "# MARK")


# --- inside control flow --------------------------------------------------------------------

def f_scan(x):
    def body(c, a):
        if c > 0:  # MARK
            return c, a
        return c, a
    return lax.scan(body, x, jnp.ones(3))


def test_error_in_a_scan_body_names_the_body_and_its_carry():
    err = raises(errors.TracerBoolConversionError, f_scan, 1.0)
    msg = str(err)
    body_line = line_of(f_scan, "def body")
    assert (f"while tracing the function body at {HERE}:{body_line} for scan. This concrete "
            "value was not available in Python because it depends on the value of the "
            "argument c.") in msg
    assert f"inside the function f_scan at {HERE}:" in msg
    assert 'line ' + str(line_of(f_scan, "# MARK")) in msg


def f_cond_closure(x):
    return lax.cond(x > 0, lambda: int(x), lambda: 0)  # MARK


def test_error_on_a_closed_over_value_in_a_cond_branch_names_the_outer_argument():
    err = raises(errors.ConcretizationTypeError, f_cond_closure, 1.0)
    assert where_traced(f_cond_closure) in str(err)
    assert "depends on the value of the argument x." in str(err)
    assert_points_at(err, f_cond_closure, "# MARK")


def f_while_body(x):
    def body(c):
        i, v = c
        if v > 100:  # MARK
            return i + 1, v
        return i + 1, v * 2
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))


def test_error_in_a_while_body_names_the_carry_path():
    err = raises(errors.TracerBoolConversionError, f_while_body, 1.0)
    assert "for while_body" in str(err)
    assert "depends on the value of the argument c[1]." in str(err)


def f_fori(x):
    def step(i, acc):
        if acc > 3:  # MARK
            return acc
        return acc + i
    return lax.fori_loop(0, 3, step, x)


def test_error_in_a_fori_loop_body_names_the_users_function():
    err = raises(errors.TracerBoolConversionError, f_fori, 1.0)
    assert f"tracing the function step at {HERE}:" in str(err)
    assert "for fori_loop" in str(err) and "argument acc." in str(err)


# --- leaked tracers -------------------------------------------------------------------------

leaked = []


def leak(x):
    y = x * 2  # MARK made
    leaked.append(y)  # MARK stored
    return x


def test_leaked_tracer_used_later_raises_unexpected_tracer_error():
    leaked.clear()
    jitviz.make_jaxpr(leak)(1.0)
    assert len(leaked) == 1

    def later(x):
        return x + leaked[0]  # MARK
    err = raises(errors.UnexpectedTracerError, later, 1.0)
    msg = str(err)
    assert msg.startswith("Encountered an unexpected tracer.")
    assert f"the function leak at {HERE}:{leak.__code__.co_firstlineno}" in msg
    assert f"at line {line_of(leak, '# MARK made')}" in msg  # where it was created
    assert f"leaked[0] at line {line_of(leak, '# MARK stored')}" in msg  # where it was left
    assert_points_at(err, later, "# MARK")
    with pytest.raises(errors.UnexpectedTracerError, match="function leak"):
        leaked[0] + 1  # eager use of a leaked tracer
    leaked.clear()


def test_tracer_leaked_out_of_a_cond_branch():
    kept = []

    def f(x):
        def branch(v):
            kept.append(v * 3)
            return v
        return lax.cond(True, branch, branch, x)
    jitviz.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jitviz.make_jaxpr(lambda y: y + kept[0])(1.0)


def test_errors_keep_their_class_when_raised_in_nested_traces():
    def f(x):
        return lax.cond(x.sum() > 0, lambda v: v[v > 0], lambda v: v, x)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        jitviz.make_jaxpr(f)(np.ones(3, np.float32))
