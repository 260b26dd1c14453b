"""The tracing examples of the five tutorials (README.md, "The tutorials"), as tests.

The expected jaxpr texts were printed by JAX 0.10.2 (`print(jax.make_jaxpr(f)(*args))`); the
seeds themselves show older JAX formats (`xla_call`, untyped literals). Error examples must
raise JAX's error classes; their working alternatives must compute the seeds' values.
The `jit` wrapper is tested elsewhere: here everything goes through make_jaxpr + eval_jaxpr.
"""
from __future__ import annotations

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import errors, lax

from helpers import eval_closed, trace_and_check

global_list = []
squared_numbers = []
g = 0


def f_poly(x):
    global_list.append(x)  # side-effect
    print(x)  # side-effect
    return 2 * x * x + 3 * x + 3


def log2(x):
    global_list.append(x)
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


def log2_if_rank_2(x):
    if x.ndim == 2:
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2
    else:
        return x


def impure_uses_globals(x):
    return x + g


def number_squared(num):
    print("Received: ", num)
    return num ** 2


def number_squared_global(num):
    global squared_numbers
    squared = num ** 2
    squared_numbers.append(squared)
    return squared


@pytest.fixture(autouse=True)
def _clear_globals():
    global_list.clear()
    squared_numbers.clear()
    yield
    global_list.clear()
    squared_numbers.clear()


# --- printed jaxprs, exactly as JAX 0.10.2 prints them -------------------------------------

POLY_INT = """\
{ lambda ; a:i32[]. let
    b:i32[] = mul 2:i32[] a
    c:i32[] = mul b a
    d:i32[] = mul 3:i32[] a
    e:i32[] = add c d
    f:i32[] = add e 3:i32[]
  in (f,) }"""

POLY_FLOAT = """\
{ lambda ; a:f32[]. let
    b:f32[] = mul 2.0:f32[] a
    c:f32[] = mul b a
    d:f32[] = mul 3.0:f32[] a
    e:f32[] = add c d
    f:f32[] = add e 3.0:f32[]
  in (f,) }"""

LOG2 = """\
{ lambda ; a:f32[]. let
    b:f32[] = log a
    c:f32[] = log 2.0:f32[]
    d:f32[] = div b c
  in (d,) }"""

LOG2_RANK1 = "{ lambda ; a:i32[3]. let  in (a,) }"

LOG2_RANK2 = """\
{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = log a
    c:f32[] = log 2.0:f32[]
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    e:f32[2,2] = div b d
  in (e,) }"""


def test_poly_at_3_prints_as_jax(capsys):
    closed = trace_and_check(f_poly, 3, expected=np.int32(30), eager=False)
    assert str(closed) == POLY_INT
    # the side effects happened once, while tracing: the print shows the tracer
    assert capsys.readouterr().out == \
        "Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>\n"
    assert len(global_list) == 1 and isinstance(global_list[0], jitviz.core.trace.Tracer)


def test_poly_at_3_0_prints_as_jax(capsys):
    closed = trace_and_check(f_poly, 3.0, expected=np.float32(30.0), eager=False)
    assert str(closed) == POLY_FLOAT


def test_log2_prints_as_jax_and_global_list_gets_the_tracer():
    closed = trace_and_check(log2, 3.0, expected=np.float32(np.log2(3.0)), eager=False)
    assert str(closed) == LOG2
    assert len(global_list) == 1
    assert repr(global_list[0]) == \
        "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace>"


def test_log2_if_rank_2_on_a_vector_is_the_identity():
    x = jnp.array([1, 2, 3])
    closed = trace_and_check(log2_if_rank_2, x, expected=np.array([1, 2, 3], np.int32))
    assert str(closed) == LOG2_RANK1


def test_log2_if_rank_2_on_a_matrix():
    x = jnp.array([[1.0, 2.0], [1.0, 2.0]])
    closed = trace_and_check(log2_if_rank_2, x,
                             expected=np.log2(np.array([[1, 2], [1, 2]], np.float32)))
    assert str(closed) == LOG2_RANK2


def test_global_read_is_baked_in_as_a_literal_named_g():
    closed = trace_and_check(impure_uses_globals, 3, expected=np.int32(3))
    assert str(closed) == "{ lambda ; a:i32[]. let b:i32[] = add a 0:i32[] in (b,) }"
    lit = closed.jaxpr.eqns[0].invars[1]
    assert (lit.origin.kind, lit.origin.name) == ("global", "g")


def test_number_squared_prints_the_tracer_and_records_integer_pow(capsys):
    closed = trace_and_check(number_squared, 2, expected=np.int32(4), eager=False)
    assert str(closed) == "{ lambda ; a:i32[]. let b:i32[] = integer_pow[y=2] a in (b,) }"
    assert capsys.readouterr().out == \
        "Received:  Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>\n"


def test_number_squared_global_list_keeps_the_tracer_not_the_jaxpr():
    closed = trace_and_check(number_squared_global, 2, expected=np.int32(4), eager=False)
    assert str(closed) == "{ lambda ; a:i32[]. let b:i32[] = integer_pow[y=2] a in (b,) }"
    assert [repr(t) for t in squared_numbers] == \
        ["Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>"]


def test_apply_activation_and_dot_product():
    z = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    closed = trace_and_check(lambda x: jnp.maximum(0.0, x), z, expected=np.maximum(0, z))
    assert str(closed) == "{ lambda ; a:f32[3,4]. let b:f32[3,4] = max 0.0:f32[] a in (b,) }"
    w = np.ones((3, 4), np.float32)
    closed = trace_and_check(lambda a, b: jnp.dot(a, b), w, z.T.copy(), expected=w @ z.T)
    assert str(closed) == """\
{ lambda ; a:f32[3,4] b:f32[4,3]. let
    c:f32[3,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""


def test_tanh_from_the_jax_readme():
    def tanh(x):
        y = jnp.exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)
    closed = trace_and_check(tanh, 1.0, expected=np.float32(np.tanh(1.0)))
    assert str(closed) == """\
{ lambda ; a:f32[]. let
    b:f32[] = mul -2.0:f32[] a
    c:f32[] = exp b
    d:f32[] = sub 1.0:f32[] c
    e:f32[] = add 1.0:f32[] c
    f:f32[] = div d e
  in (f,) }"""


def test_jit_tutorial_functions():
    x = np.full((5, 5), 2.0, np.float32)
    closed = trace_and_check(lambda x: x * x + x * 2.0, x, expected=x * x + x * 2)
    assert str(closed) == """\
{ lambda ; a:f32[5,5]. let
    b:f32[5,5] = mul a a
    c:f32[5,5] = mul a 2.0:f32[]
    d:f32[5,5] = add b c
  in (d,) }"""
    closed = trace_and_check(lambda x: jnp.sin(x) + jnp.cos(x), 2,
                             expected=np.float32(np.sin(2) + np.cos(2)))
    assert str(closed) == """\
{ lambda ; a:i32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a
    c:f32[] = sin b
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a
    e:f32[] = cos d
    f:f32[] = add c e
  in (f,) }"""
    closed = trace_and_check(lambda x, y: x + y - x, jnp.array(1.0), jnp.array(0.001),
                             expected=np.float32(1.0) + np.float32(0.001) - np.float32(1.0))
    assert str(closed) == \
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b; d:f32[] = sub c a in (d,) }"


def test_selu():
    def selu(x, alpha=1.67, lambda_=1.05):
        return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    ref = np.float32(1.05) * np.where(x > 0, x, np.float32(1.67) * np.exp(x) - np.float32(1.67))
    closed = trace_and_check(selu, x, expected=ref)
    # JAX 0.10 wraps jnp.where's select_n in `jit[name=_where ...]`; jitviz inlines jnp's
    # helpers, so the select_n sits at the top level. Everything else is JAX's text.
    assert str(closed) == """\
{ lambda ; a:f32[9]. let
    b:bool[9] = gt a 0.0:f32[]
    c:f32[9] = exp a
    d:f32[9] = mul 1.6699999570846558:f32[] c
    e:f32[9] = sub d 1.6699999570846558:f32[]
    f:f32[9] = select_n b e a
    g:f32[9] = mul 1.0499999523162842:f32[] f
  in (g,) }"""


def test_python_loop_with_static_trip_count_unrolls():
    def f_loop(x):
        y = 0.
        for i in range(10):
            y = y + x
        return y
    closed = trace_and_check(f_loop, 2, expected=np.float32(20.0))
    assert closed.jaxpr.eqns[1].primitive.name == "add"
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("add") == 10


def test_norm_matches_numpy():
    x = np.random.default_rng(1701).random((50, 10)).astype(np.float32)

    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)
    ref = (x - x.mean(0)) / x.std(0)
    trace_and_check(norm, x, expected=ref, rtol=1e-5, atol=1e-5)


# --- the error examples ----------------------------------------------------------------------

def f_piecewise(x):
    if x < 3:
        return 3. * x ** 2
    else:
        return -4 * x


def g_while(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


def f_loop_n(x, n):
    y = 0.
    for i in range(n):
        y = y + x
    return y


def f_shape(x):
    return x.reshape(jnp.array(x.shape).prod())


def get_negatives(x):
    return x[x < 0]


def example_fun(length):
    return jnp.ones((length,))


def myabs(x):
    if x > 0:
        return x
    else:
        return -x


def square_or_cube(x):
    if x % 2 == 0:
        return x ** 2
    else:
        return x * x * x


def multiply_n_times(x, n):
    count = 0
    res = 1
    while count < n:
        res = res * x
        count += 1
    return res


def sum_up_to_py(x):
    s = 0.0
    n = 1
    while n < x:
        s = s + n
        n = n + 1
    return s


def f_if_positive(x):
    if x > 0:
        return x
    else:
        return 2 * x


ERROR_EXAMPLES = [
    (f_piecewise, (2,), errors.ConcretizationTypeError),
    (f_piecewise, (2,), errors.TracerBoolConversionError),
    (f_if_positive, (10,), errors.TracerBoolConversionError),
    (g_while, (10, 20), errors.TracerBoolConversionError),
    (f_loop_n, (2, 10), errors.TracerIntegerConversionError),
    (f_shape, (jnp.ones((2, 3)),), errors.ConcretizationTypeError),
    (get_negatives, (jnp.array(np.random.default_rng(0).standard_normal(10)),),
     errors.NonConcreteBooleanIndexError),
    (example_fun, (5,), errors.ConcretizationTypeError),
    (myabs, (jnp.array(-2),), errors.TracerBoolConversionError),
    (square_or_cube, (2,), errors.TracerBoolConversionError),
    (multiply_n_times, (2, 5), errors.TracerBoolConversionError),
    (sum_up_to_py, (jnp.array(5),), errors.TracerBoolConversionError),
]


@pytest.mark.parametrize("fun,args,cls", ERROR_EXAMPLES,
                         ids=[f"{f.__name__}-{c.__name__}" for f, _, c in ERROR_EXAMPLES])
def test_error_examples_raise_their_class(fun, args, cls):
    with pytest.raises(cls) as e:
        jitviz.make_jaxpr(fun)(*args)
    assert fun.__name__ in str(e.value)


def test_error_classes_are_arranged_as_in_jax():
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.ConcretizationTypeError, TypeError)
    assert issubclass(errors.TracerIntegerConversionError, TypeError)
    assert issubclass(errors.TracerArrayConversionError, TypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    assert issubclass(errors.UnexpectedTracerError, TypeError)


def test_example_fun_is_a_type_error_about_shapes():
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        jitviz.make_jaxpr(example_fun)(5)


# --- their working alternatives --------------------------------------------------------------

def test_static_argnums_turn_the_piecewise_function_into_a_constant():
    closed = jitviz.make_jaxpr(f_piecewise, static_argnums=(0,))(2)
    assert str(closed) == "{ lambda ; . let  in (12.0:f32[],) }"
    assert eval_closed(closed) == [np.float32(12.0)]
    closed = jitviz.make_jaxpr(f_piecewise, static_argnums=(0,))(4)
    assert str(closed) == "{ lambda ; . let  in (-16:i32[],) }"
    assert eval_closed(closed) == [np.int32(-16)]


def test_static_n_makes_the_python_loops_work():
    c = trace_and_check(g_while, 10, 20, static_argnums=(1,), expected=np.int32(30))
    assert len(c.jaxpr.invars) == 1
    trace_and_check(f_loop_n, 2, 10, static_argnums=1, expected=np.float32(20.0))
    trace_and_check(f_loop_n, 2, 11, static_argnums=1, expected=np.float32(22.0))
    trace_and_check(multiply_n_times, 2, 5, static_argnums=(1,), expected=np.int32(32))
    trace_and_check(f_if_positive, 10, static_argnums=(0,), expected=np.int32(10))


def test_static_argnames_by_position():
    trace_and_check(g_while, 10, 20, static_argnames=("n",), expected=np.int32(30))


def test_static_argnames_by_keyword():
    trace_and_check(g_while, 10, n=20, static_argnames=("n",), expected=np.int32(30))


def test_fori_loop_replaces_range_over_a_traced_bound():
    def f_loop(x, n):
        return lax.fori_loop(0, n, lambda i, y: y + x, 0.)
    closed = trace_and_check(f_loop, jnp.array(2), 15, expected=np.float32(30.0))
    assert str(closed) == """\
{ lambda ; a:i32[] b:i32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:i32[] g:f32[]. let
          h:i32[] = add e 1:i32[]
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d
          j:f32[] = add g i
        in (h, f, j) }
      body_nconsts=1
      cond_jaxpr={ lambda ; k:i32[] l:i32[] m:f32[]. let
          n:bool[] = lt k l
        in (n,) }
      cond_nconsts=0
    ] a 0:i32[] b 0.0:f32[]
  in (c,) }"""


def test_while_loop_sum_up_to_is_55():
    def sum_up_to(x):
        return lax.while_loop(
            lambda c: c[1] <= x,
            lambda c: (c[0] + c[1], c[1] + 1),
            (0, 1)
        )[0]
    closed = trace_and_check(sum_up_to, jnp.array(10), expected=np.int32(55))
    assert closed.out_avals[0] == jitviz.ShapedArray((), np.int32, True)  # weak, as in JAX
    assert str(closed) == """\
{ lambda ; a:i32[]. let
    b:i32[] _:i32[] = while[
      body_jaxpr={ lambda ; c:i32[] d:i32[]. let
          e:i32[] = add c d
          f:i32[] = add d 1:i32[]
        in (e, f) }
      body_nconsts=0
      cond_jaxpr={ lambda ; g:i32[] h:i32[] i:i32[]. let
          j:bool[] = le i g
        in (j,) }
      cond_nconsts=1
    ] a 0:i32[] 1:i32[]
  in (b,) }"""


def test_cond_myabs_is_2():
    def myabs_cond(x):
        return lax.cond(
            x > 0,  # condition
            lambda _: x,  # if true
            lambda _: -x,  # if false
            None  # operands to pass to the lambda functions (nothing here)
        )
    closed = trace_and_check(myabs_cond, jnp.array(-2), expected=np.int32(2))
    assert str(closed) == """\
{ lambda ; a:i32[]. let
    b:bool[] = gt a 0:i32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:i32[] = cond[
      branches=(
        { lambda ; e:i32[]. let f:i32[] = neg e in (f,) }
        { lambda ; g:i32[]. let  in (g,) }
      )
    ] c a
  in (d,) }"""
    trace_and_check(myabs_cond, jnp.array(3), expected=np.int32(3))


def test_reshape_with_np_prod_of_the_static_shape():
    def f(x):
        return x.reshape((np.prod(x.shape),))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    closed = trace_and_check(f, x, expected=x.reshape(6))
    assert str(closed) == """\
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
  in (b,) }"""


def test_shape_is_static_and_jnp_array_of_it_is_traced(capsys):
    def f(x):
        print(f"x.shape = {x.shape}")
        print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")
        return x
    jitviz.make_jaxpr(f)(jnp.ones((2, 3)))
    assert capsys.readouterr().out == (
        "x.shape = (2, 3)\n"
        "jnp.array(x.shape).prod() = Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>\n")
