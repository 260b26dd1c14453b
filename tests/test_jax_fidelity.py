"""Pins of the mismatch classes the differential fuzzer against JAX found (tests/jaxdiff):
one test per class, with JAX's answer written out (JAX itself is not needed to run them).

Each result is checked for value, dtype and weak type, the three things JAX is the
reference for, and errors for JAX's exception class."""

import numpy as np
import pytest

import jitviz
import jitviz.lax as lax
import jitviz.numpy as jnp

from helpers import x64_enabled  # noqa: E402

F = np.array([[1.5, -0.0, np.nan], [-2.0, 3.0, 0.5]], np.float32)
I = np.array([3, -1, 0, 2, 5, -7], np.int32)
B = np.array([[True, False, True], [False, False, True]])




def run(f, *args):
    """f under jit on the interpreter and the cpu backend, which must agree."""
    a = jitviz.jit(f, backend="interpret")(*args)
    b = jitviz.jit(f, backend="cpu")(*args)
    for x, y in zip(jitviz.tree.tree_leaves(a), jitviz.tree.tree_leaves(b)):
        assert x.dtype == y.dtype and x.weak_type == y.weak_type
        np.testing.assert_array_equal(x, y)
    return a


def same(x, value, dtype, weak=False):
    assert (x.dtype, bool(x.weak_type)) == (np.dtype(dtype), weak), (x.dtype, x.weak_type)
    np.testing.assert_array_equal(np.asarray(x), np.asarray(value, dtype))


# --- dtypes and weak types ------------------------------------------------------------------

def test_broadcast_arrays_keeps_each_dtype_and_weak_type():
    a, b = run(lambda x, s: jnp.broadcast_arrays(x, s), I[:2], 2.5)
    same(a, [3, -1], np.int32)
    same(b, [2.5, 2.5], np.float32, weak=True)


def test_like_constructors_keep_a_weak_type_without_dtype():
    same(run(lambda s: jnp.ones_like(s), 3), 1, np.int32, weak=True)
    same(run(lambda s: jnp.full_like(s, 3), 2.5), 3.0, np.float32, weak=True)
    same(run(lambda s: jnp.zeros_like(s, dtype=jnp.int32), 2.5), 0, np.int32)


def test_take_of_a_weak_array_stays_weak():
    same(run(lambda s, i: jnp.take(jnp.array(s), i), 2.5, I[:2]), [np.nan, 2.5],
         np.float32, weak=True)
    # a weak bool too: the fill is a select of a's type, not a promoting jnp.where
    f = lambda s: jnp.take(jnp.logical_or(s, 0), jnp.array([2, -1]), axis=None)  # noqa: E731
    same(run(f, 2.5), [True, True], np.bool_, weak=True)


def test_cond_results_are_typed_as_branch_zero():
    """JAX types cond's results as its branch 0 (the false branch; switch's first)."""
    f = lambda p, s: lax.cond(p, lambda a: a - jnp.mean(a), lambda a: a, s)  # noqa: E731
    same(run(f, True, 2.5), 0.0, np.float32, weak=True)
    g = lambda p, s: lax.cond(p, lambda a: a, lambda a: a - jnp.mean(a), s)  # noqa: E731
    same(run(g, True, 2.5), 2.5, np.float32)
    h = lambda k, s: lax.switch(k, [lambda a: a - jnp.mean(a), lambda a: a], s)  # noqa: E731
    same(run(h, 1, 2.5), 2.5, np.float32)


def test_dot_of_int_and_python_float_is_weak():
    same(run(lambda i, s: jnp.vdot(i, s), I[:1], 2.5), 7.5, np.float32, weak=True)
    same(run(lambda i, s: jnp.dot(i, s), I[:2], 2.5), [7.5, -2.5], np.float32, weak=True)


def test_product_of_weak_booleans_is_strong():
    w = lambda s: jnp.broadcast_to(s > 1, (2,))  # noqa: E731
    same(run(lambda s: jnp.vdot(w(s), w(s)), 2.5), True, np.bool_)
    for product in (jnp.dot, jnp.matmul, jnp.inner, lambda a, b: jnp.einsum("i,i", a, b),
                    jnp.convolve, lambda a, b: jnp.tensordot(a, b, 1)):
        assert not bool(run(lambda s: product(w(s), w(s)), 2.5).weak_type)


def test_lax_dot_of_weak_booleans_stays_weak():
    """lax.dot_general types its result by JAX's standard rule, weak when both operands
    are, booleans included (seed 36001921); only jnp's products promote to a strong bool."""
    w = lambda s: jnp.broadcast_to(s > 1, (2,))  # noqa: E731
    same(run(lambda s: lax.dot(w(s), w(s)), 2.5), True, np.bool_, weak=True)
    same(run(lambda s: lax.dot_general(w(s), w(s), (((0,), (0,)), ((), ()))), 2.5), True,
         np.bool_, weak=True)


def test_max_min_initial_takes_the_operand_dtype():
    same(run(lambda i: jnp.max(i, initial=2.5), I), 5, np.int32)
    same(run(lambda b: jnp.max(b, initial=0), B), True, np.bool_)
    same(run(lambda b: jnp.min(b[:, :0], axis=0, initial=7), B), np.zeros(0), np.bool_)


def test_lax_weak_rules():
    """conj of a weak float is a weak complex; dynamic_update_slice is weak only if every
    operand is, its (strong) start indices included."""
    same(run(lambda s: lax.conj(s), 2.5), 2.5, np.complex64, weak=True)
    w = lambda n: jnp.broadcast_to(n, (2,))  # noqa: E731
    same(run(lambda n: lax.dynamic_update_slice(w(n), w(n), (0,)), 3), [3, 3], np.int32)


def test_linspace_default_dtype_is_the_inexact_form_of_its_bounds():
    same(run(lambda i: jnp.linspace(i, 5, 2), np.int32(3)), [3, 5], np.float32)
    with x64_enabled():
        same(run(lambda i: jnp.linspace(i, 5, 2), np.int32(3)), [3, 5], np.float32)
        same(run(lambda: jnp.linspace(0, 5, 2)), [0, 5], np.float64)


def test_logical_lax_reductions_are_strong():
    same(run(lambda n: lax.reduce_or(n, ()), 3), 3, np.int32)
    same(run(lambda n: lax.reduce_and(jnp.broadcast_to(n, (1, 2)), (1,)), 3), [3], np.int32)


def test_builtin_round_gives_the_default_int():
    same(run(lambda x: round(x), F[1]), [-2, 3, 0], np.int32)
    same(run(lambda s: round(s), 2.5), 2, np.int32)
    same(run(lambda x: round(x, 1), F[1]), [-2.0, 3.0, 0.5], np.float32)


def test_var_std_dtype_argument():
    """JAX computes var in `dtype=` (an integer one too) and selects NaN for a count <= 0,
    which promotes an integer result to a weak float; std wants an inexact dtype."""
    same(run(lambda x: jnp.var(x, dtype=jnp.int32), F[1]), 4.0, np.float32, weak=True)
    same(run(lambda x: jnp.var(x, axis=0, ddof=3), F), [np.nan] * 3, np.float32)
    with pytest.raises(ValueError, match="must be inexact"):
        jitviz.jit(lambda i: jnp.std(i, dtype=jnp.int32))(I)


def test_a_64_bit_preferred_element_type_without_x64_is_32_bit_with_a_warning():
    """As JAX (seed 32007971: jitviz returned float64): canonicalized, and the warning
    names dot."""
    x = np.array([[1, 2]], np.int32)
    for pet, want in ((np.float64, np.float32), (np.int64, np.int32)):
        with pytest.warns(UserWarning, match="requested in dot is not available"):
            out = jitviz.jit(lambda x: lax.dot(x, x.T, preferred_element_type=pet))(x)
        same(out, [[5]], want)
    with x64_enabled():
        out = jitviz.jit(lambda x: lax.dot(x, x.T, preferred_element_type=np.float64))(x)
    same(out, [[5]], np.float64)


def test_size_along_axes_as_jax():
    """An int or a tuple of axes (their product); an axis beyond the rank is JAX's
    ValueError (seed 33002383: jitviz raised IndexError)."""
    m = np.ones((2, 3))
    assert jnp.size(m, 1) == 3 and jnp.size(m, -2) == 2 and jnp.size(m, (0, 1)) == 6
    for bad in (2, -3, (0, 2)):
        with pytest.raises(ValueError, match="out of bounds for array of dimension 2"):
            jnp.size(m, bad)
    with pytest.raises(ValueError, match="axis 1 is out of bounds"):
        jitviz.jit(lambda v: v + jnp.size(v, 1))(np.array([False]))


# --- power ----------------------------------------------------------------------------------

def test_integer_power_with_an_array_exponent():
    """JAX's binary exponentiation over the exponent's low 6 bits: 2 ** -1 is 0, 0 ** 0 is 1."""
    same(run(lambda i: jnp.power(i, i), I), [27, -1, 1, 4, 3125, -1626598087], np.int32)
    same(run(lambda i: jnp.power(2, i), I), [8, 0, 1, 4, 32, 0], np.int32)
    same(run(lambda b, i: jnp.power(b, i[:3]), B, I), [[1, 0, 1], [0, 0, 1]], np.int32)


def test_integer_power_of_weak_operands_is_strong():
    same(run(lambda n: n ** n, 3), 27, np.int32)


def test_float_base_with_an_integer_exponent_keeps_its_type():
    same(run(lambda s, i: jnp.power(s, i), 2.5, I[:3]), [15.625, 0.4, 1.0], np.float32)
    same(run(lambda s, n: jnp.power(s, n), 2.5, 3), 15.625, np.float32, weak=True)
    same(run(lambda x, i: lax.pow(x, i), F[1], I[:3]), [-8.0, 1 / 3, 1.0], np.float32)


def test_a_concrete_exponent_is_integer_pow_only_where_operator_index_takes_it():
    """JAX asks `operator.index`: Python ints and bools and 0-d integer arrays become
    `integer_pow`; a NumPy bool (no index in NumPy 2), a concrete bool Array (the fuzzer's
    seed 32001984: `jnp.isneginf` of a bool, folded to a constant) and a float are `pow`."""
    text = str(jitviz.make_jaxpr(lambda x, b: (
        x ** True, x ** np.int32(2), jnp.power(x, np.array(3)), jnp.power(x, np.bool_(True)),
        jnp.power(x, jnp.isneginf(b.min()))))(np.float32(2), np.array([False])))
    assert "integer_pow[y=1]" in text and "integer_pow[y=2]" in text and \
        "integer_pow[y=3]" in text
    assert "pow a 1.0:f32[]" in text and "pow a 0.0:f32[]" in text, text
    same(run(lambda x, b: jnp.power(x, jnp.isneginf(b.min())), F[1], np.array([False])),
         [1.0, 1.0, 1.0], np.float32)


def test_an_integer_rounded_inside_jit_is_not_a_concrete_exponent():
    """JAX's ceil/floor/trunc/round of a Python int convert it with a primitive: inside jit
    a tracer, so `power` computes `pow` (seed 33007720: jitviz took the folded constant
    -2**31 for integer_pow's exponent and raised); outside jit they stay concrete."""
    def f():
        v = jnp.ceil(-2147483648)
        return jnp.pow(v, v)
    same(jitviz.jit(f)(), 1, np.int32)  # JAX's value: the low bits of an even exponent
    for fn in (jnp.floor, jnp.trunc, jnp.round, jnp.positive):
        assert "integer_pow" not in str(jitviz.make_jaxpr(lambda x: x ** fn(2))(np.float32(2)))
    assert "integer_pow[y=2]" in str(jitviz.make_jaxpr(lambda x: x ** 2)(np.float32(2)))
    assert int(jnp.ceil(3)) == 3 and jnp.power(2.0, jnp.ceil(3)) == 8.0  # concrete outside


def test_a_lax_full_inside_jit_is_not_a_concrete_exponent():
    """`lax.full` (and `lax.full_like`) is traced inside jit, as jnp.full is: seed 35005449's
    `v = lax.full((), -8); jnp.pow(v, v)` is `pow` (JAX: 0 for int32), where a folded
    constant made jitviz raise integer_pow's negative-exponent TypeError."""
    def f():
        v = lax.full((), -8)
        return jnp.pow(v, v)
    same(jitviz.jit(f)(), 0, np.int32)
    for full in (lambda x: lax.full((), 2), lambda x: lax.full_like(x, 2)):
        text = str(jitviz.make_jaxpr(lambda x: x ** full(x))(np.float32(2)))
        assert "integer_pow" not in text and "pow" in text, text
    assert int(lax.full((), 3)) == 3  # concrete outside a trace



def test_a_constant_answer_of_a_traced_operand_is_traced():
    """`jnp.isneginf` of an int (JAX: `full_like(x, False)`) is a traced value inside jit,
    so indexing with it is JAX's NonConcreteBooleanIndexError (seed 36000829: jitviz folded
    it to a constant False and selected nothing); isfinite/isinf/imag alike."""
    with pytest.raises(jitviz.errors.NonConcreteBooleanIndexError):
        jitviz.jit(lambda i, y: y[jnp.isneginf(i)])(np.int32(0), np.int32([[0]]))
    for fn in (jnp.isneginf, jnp.isposinf, jnp.isinf, jnp.isfinite, jnp.imag):
        with pytest.raises(jitviz.errors.TracerArrayConversionError):
            jitviz.jit(lambda i: bool(np.asarray(fn(i))))(np.int32(3))


# functions JAX 0.10 wraps in `jit` (or that convert): inside a trace their result is a
# tracer even when they return their operand unchanged, a constant included
PASS_THROUGH = {
    "real": jnp.real, "conj": jnp.conj, "squeeze": jnp.squeeze, "atleast_1d": jnp.atleast_1d,
    "atleast_2d": lambda c: jnp.atleast_2d(np.ones((1, 1), np.int32) * c),
    "nan_to_num": jnp.nan_to_num, "clip": jnp.clip, "pad": lambda c: jnp.pad(c, 0),
    "rint": jnp.rint, "astype": lambda c: jnp.astype(c, jnp.float32),
    "stop_gradient": lax.stop_gradient, "positive": jnp.positive, "ceil": jnp.ceil,
    "broadcast_arrays": lambda c: jnp.broadcast_arrays(c, c)[1],
    "convert_element_type": lambda c: lax.convert_element_type(c, jnp.float32),
    "tril_indices": lambda c: jnp.tril_indices(2)[0] + c,
}


@pytest.mark.parametrize("name", sorted(PASS_THROUGH))
@pytest.mark.parametrize("constant", [3, np.int32(3), jnp.asarray(3)], ids=["python", "numpy",
                                                                         "Array"])
def test_a_jitted_jnp_function_of_a_constant_is_traced(name, constant):
    fn = PASS_THROUGH[name]
    # np.asarray reads a concrete value (JAX's too), and refuses a tracer
    with pytest.raises(jitviz.errors.TracerArrayConversionError):
        jitviz.jit(lambda: int(np.asarray(fn(constant)).ravel()[0]))()
    assert int(np.ravel(fn(constant))[0]) == 3  # concrete, and the value, outside a trace


def test_asarray_and_an_identity_transpose_of_an_array_keep_it_concrete():
    """JAX returns a concrete Array itself from `jnp.asarray` and `lax.transpose` with the
    identity permutation, even inside jit: it stays usable as a static value."""
    table = jnp.asarray([2, 3])
    f = jitviz.jit(lambda x: x * int(np.asarray(jnp.asarray(table))[1])
                   * int(np.asarray(table.T)[0]))
    same(f(np.float32(1)), 6.0, np.float32)
    with pytest.raises(jitviz.errors.TracerArrayConversionError):  # a copy is traced
        jitviz.jit(lambda x: x * int(np.asarray(jnp.array(table))[1]))(np.float32(1))


def test_an_odd_integer_power_beyond_float32_keeps_its_parity():
    """(-2.0) ** (2**31 - 1) is -inf (seed 33009450: the interpreter's NumPy rounded the
    exponent to float32, 2**31, even, and gave inf); -0.0 and negative powers too."""
    x = np.array([-2.0, -0.0, -0.5, 2.0], np.float32)
    for backend in ("interpret", "cpu"):
        got = jitviz.jit(lambda v: (v ** (2**31 - 1), v ** -(2**31 - 1)), backend=backend)(x)
        np.testing.assert_array_equal(got[0], np.float32([-np.inf, -0.0, -0.0, np.inf]))
        np.testing.assert_array_equal(got[1], np.float32([-0.0, -np.inf, -np.inf, 0.0]))
        assert np.signbit(got[0][1]) and np.signbit(got[1][0])


# --- accepted inputs ------------------------------------------------------------------------

def test_a_list_of_floats_into_an_integer_dtype_converts_each_number_as_numpy_does():
    """JAX converts the numbers with NumPy: NaN is a ValueError, an infinity or a number
    beyond int32 an OverflowError (seed 32004103: jitviz cast them to INT_MIN); a float
    array is cast (INT_MIN, as JAX) and finite floats truncate."""
    for bad, error in (([np.nan, np.inf], ValueError), ([1.0, np.inf], OverflowError),
                       ([[1e10]], OverflowError), ((np.float32(np.nan),), ValueError)):
        with pytest.raises(error):
            jnp.array(bad, dtype=jnp.int32)
        with pytest.raises(error):
            jitviz.jit(lambda: jnp.array(bad, dtype=jnp.int32))()
    same(jnp.array([1.5, -2.7], dtype=jnp.int32), [1, -2], np.int32)
    with np.errstate(invalid="ignore"):
        same(jnp.array(np.array([np.nan]), dtype=jnp.int32), [np.iinfo(np.int32).min],
             np.int32)


def test_lax_conj_of_a_real_array_is_complex():
    out = run(lambda x: lax.conj(x), F[1])
    same(out, [-2, 3, 0.5], np.complex64)
    assert not np.signbit(out.imag).any()  # nothing is negated: JAX's +0 imaginary part


def test_lax_round_takes_a_rounding_method():
    same(run(lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), F[1] + 0.5),
         [-2.0, 4.0, 1.0], np.float32)


def test_lax_full_takes_an_int_shape():
    same(run(lambda: lax.full(2, 0.5, jnp.float32)), [0.5, 0.5], np.float32)


def test_numpy_index_array_next_to_an_ellipsis():
    same(run(lambda x: x[np.array([True, False]), ...], F), F[:1], np.float32)
    same(run(lambda x: x[np.array([], np.int32), ...], F), np.zeros((0, 3)), np.float32)


def test_issubdtype_of_an_abstract_category():
    f = lambda x: x * jnp.issubdtype(x.dtype, jnp.unsignedinteger)  # noqa: E731
    same(run(f, I[:2]), [0, 0], np.int32)
    assert jnp.issubdtype(jnp.int32, jnp.integer) and not jnp.issubdtype(jnp.float32,
                                                                         jnp.integer)


def test_nonzero_and_argwhere_with_a_static_size():
    """Padded with zeros (or fill_value) past the count, truncated below it, as in JAX."""
    r, c = run(lambda b: jnp.nonzero(b, size=5), B)
    same(r, [0, 0, 1, 0, 0], np.int32)
    same(c, [0, 2, 2, 0, 0], np.int32)
    r, c = run(lambda b: jnp.nonzero(b, size=4, fill_value=(7, 8)), B)
    same(r, [0, 0, 1, 7], np.int32)
    same(c, [0, 2, 2, 8], np.int32)
    same(run(lambda x: jnp.argwhere(x, size=2), F), [[0, 0], [0, 2]], np.int32)
    same(run(lambda z: jnp.argwhere(z, size=3), F[0, 0]), np.zeros((3, 0)), np.int32)
    same(run(lambda x: x.nonzero(size=1)[1], F), [0], np.int32)


def test_reductions_with_where():
    same(run(lambda x, b: jnp.sum(x, where=b), F, B), np.nan, np.float32)
    same(run(lambda x, b: jnp.mean(x, where=b, axis=1), F, B), [np.nan, 0.5], np.float32)
    same(run(lambda x, b: jnp.max(x, where=b, initial=-1, axis=0), F, B), [1.5, -1.0, np.nan],
         np.float32)
    same(run(lambda i: jnp.prod(i, where=i > 0, keepdims=True), I), [30], np.int32)
    same(run(lambda i: jnp.any(i, where=i > 5), I), False, np.bool_)
    same(run(lambda x, b: jnp.var(x, where=b, axis=1), F, B), [np.nan, 0.0], np.float32)
    with pytest.raises(ValueError, match="does not have an identity"):
        jitviz.jit(lambda x, b: jnp.max(x, where=b))(F, B)


def test_repeat_of_a_0d_array_along_any_axis():
    same(run(lambda z: jnp.repeat(z, 2, axis=-1), F[1, 1]), [3.0, 3.0], np.float32)


def test_take_from_an_empty_axis_with_no_indices_is_the_operand():
    e = np.zeros((1, 0), np.int32)
    same(run(lambda a: jnp.take(a, a, axis=None), e), np.zeros(0), np.int32)


# --- values ---------------------------------------------------------------------------------

def test_trace_reads_only_the_diagonal():
    """A NaN off the diagonal does not count, nor does a diagonal past the edge (0)."""
    same(run(lambda x: jnp.trace(x), F), 4.5, np.float32)
    same(run(lambda x: jnp.trace(x, offset=5), F), 0.0, np.float32)


def test_integer_division_of_int_min():
    """Rounded toward zero without abs() (abs(INT_MIN) overflows in the CPU kernels)."""
    m = np.full(2, -2**31, np.int32)
    same(run(lambda m: jnp.floor_divide(m, 3), m), [-715827883] * 2, np.int32)
    same(run(lambda m: jnp.remainder(m, 3), m), [1, 1], np.int32)
    same(run(lambda m: lax.div(m, 3), m), [-715827882] * 2, np.int32)
    same(run(lambda m: lax.rem(m, -3), m), [-2, -2], np.int32)
    same(run(lambda m: lax.rem(m, -1), m), [0, 0], np.int32)


def test_sign_keeps_a_zeros_sign():
    same(run(lambda x: lax.sign(x), F[0]), [1.0, -0.0, np.nan], np.float32)
    assert np.signbit(run(lambda x: jnp.sign(x), F[0])[1])


def test_float_product_asked_for_as_integers_saturates():
    big = np.full(2, 1e6, np.float32)
    same(run(lambda a: lax.dot(a, a, preferred_element_type=jnp.int32), big), 2**31 - 1,
         np.int32)


def test_isclose_with_infinities():
    """An infinity is close only to the same infinity (|0 - -inf| <= inf is not enough)."""
    same(run(lambda x: jnp.isclose(x, -jnp.inf), np.array([0.0, -np.inf, np.inf],
                                                             np.float32)),
         [False, True, False], np.bool_)


# --- error classes --------------------------------------------------------------------------

@pytest.mark.parametrize("f, exc", [
    (lambda z: jnp.prod(z, axis=0), ValueError),          # no axis 0 in a 0-d array
    (lambda z: jnp.cumsum(z, axis=0), ValueError),
    (lambda z: jnp.nonzero(z, size=1), ValueError),       # nonzero of 0-d
    (lambda z: jnp.reshape(jnp.ones(4), (-1, -1)), TypeError),
    (lambda z: jnp.ones(3)[jnp.ones(1)], TypeError),      # a float indexer
    (lambda z: jnp.round(jnp.int32(35), -1), NotImplementedError),
    (lambda z: jnp.squeeze(z, 0), ValueError),
    (lambda z: jnp.int32(3) ** -2, TypeError),              # integer_pow's class
    (lambda z: lax.cummax(jnp.ones(2, bool)), TypeError),   # numbers only
    (lambda z: jnp.trace(z), ValueError),                   # no axis 0 in a 0-d array
    (lambda z: jnp.ones((5, 3)) == jnp.ones((5, 3, 3)), ValueError),  # rank promotion
    (lambda z: jnp.ones(3) + jnp.ones(4), TypeError),       # one rank: the primitive's
    (lambda z: lax.argmin(z, 0, np.int32), ValueError),     # no axis 0 in a 0-d array
    (lambda z: jnp.ones(3)[z > 0], IndexError),             # a traced 0-d mask
    (lambda z: lax.reduce_prod(z, (0,)), ValueError),       # lax's axis checks
    (lambda z: lax.cummin(z, axis=0), ValueError),
    (lambda z: jnp.ones(2).reshape((3,)), TypeError),       # a size mismatch
    (lambda z: lax.reduce_or(z > 0, (0,)), IndexError),      # the logical reductions'
    (lambda z: jnp.array(2.0).squeeze(0), ValueError),      # a concrete Array's method
])
def test_jax_error_classes(f, exc):
    with pytest.raises(exc):
        jitviz.jit(f)(np.float32(2))


def test_a_sum_of_negative_zeros_is_negative_zero_on_every_backend():
    """-0.0 is the additive identity (README: the sign of a zero sum is not specified, but
    jitviz's backends agree with each other); an empty sum is +0.0."""
    z = -np.zeros((2, 3), np.float32)
    same(run(lambda z: jnp.sum(z, axis=1), z), [-0.0, -0.0], np.float32)
    assert np.signbit(run(lambda z: jnp.sum(z), z))
    assert not np.signbit(run(lambda z: jnp.sum(z[:, :0]), z))


def test_folding_a_cond_keeps_its_result_type():
    """A cond on a known predicate is inlined by the fold pass; the branch it takes may be
    weakly typed where the cond's result (typed as branch 0) is not: the pass converts."""
    def f(x):
        c = jnp.arctan(0)
        v = lax.cond(True, lambda a: jnp.exp(-jnp.abs(a)), lambda a: a - jnp.mean(a),
                     jnp.arccosh(c))  # taken: weak; branch 0: strong (a reduction)
        return jnp.min(v, keepdims=True, initial=0.0) + x
    same(run(f, np.float32(1)), np.nan, np.float32)


def test_operators_of_a_concrete_array_inside_a_trace_follow_jax():
    """A 0-d Array made while tracing stays concrete; its operators promote as JAX's do
    (NumPy's would make bool + 1.5 a float64)."""
    same(run(lambda x: lax.full((), 1.5, jnp.bool_) + -1.5 + x, 0.0), -0.5, np.float32,
         weak=True)
    same(jnp.zeros((), bool) * 2.5, 0.0, np.float32, weak=True)  # outside a trace too
    # and their methods; isinf of an integer is such an Array (not a NumPy scalar)
    same(run(lambda i: jnp.isinf(i).argmax(), np.int32(3)), 0, np.int32)
    same(run(lambda: jnp.array([1.5, 2.5]).sum()), 4.0, np.float32)


def test_max_min_order_zeros_as_ieee():
    """XLA's max/min are IEEE 754-2019's: -0.0 < +0.0 whatever the operands' order."""
    z = np.array([-0.0, 0.0], np.float32)
    assert not np.signbit(run(lambda z: jnp.maximum(z[0], z[1]), z))
    assert not np.signbit(run(lambda z: jnp.maximum(z[1], z[0]), z))
    assert np.signbit(run(lambda z: jnp.minimum(z[1], z[0]), z))
    assert not np.signbit(run(lambda z: jnp.max(z), z))
    assert np.signbit(run(lambda z: jnp.min(z[::-1]), z))


def test_more_dtype_and_input_rules():
    same(run(lambda x: jnp.pow(x, np.bool_(False)), F[1]), [1.0, 1.0, 1.0], np.float32)
    same(run(lambda z: lax.slice(z, (), ()), F[1, 1]), 3.0, np.float32)
    # a weak fill of array shape is converted (strong); a weak scalar type made strong
    same(run(lambda s, x: jnp.full_like(s * x, s * x), 2.0, F[1]), 2 * F[1], np.float32)
    same(run(lambda s: jnp.float32(jnp.sin(s)), 0.0), 0.0, np.float32)
    same(run(lambda n: lax.clamp(np.int32(-1), n, np.int32(1)), 3), 1, np.int32)
    same(run(lambda: round(jnp.array([1.5, 2.5]))), [2, 2], np.int32)
    same(run(lambda x: lax.reshape(x, (3, 2), (1, 0)), F), F.T, np.float32)
    h = np.array([0.1, 0.2], np.float16)  # accumulated in float32, as XLA does
    r = run(lambda h: lax.dot(h, h, preferred_element_type=jnp.float32), h)
    same(r, np.dot(h.astype(np.float32), h.astype(np.float32)), np.float32)


def test_argmax_of_float16():
    """Accepted as JAX accepts it (compared as float32: Numba has no float16 kernels)."""
    h = F.astype(np.float16)
    same(run(lambda h: jnp.argmax(h, axis=1), h), [2, 1], np.int32)
    same(run(lambda h: h.argmin(), h), 2, np.int32)


def test_average_with_weights_along_the_averaged_axes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    w = np.arange(8, dtype=np.float32).reshape(4, 2)  # axes (2, 0): laid along them in order
    avg, total = run(lambda x, w: jnp.average(x, axis=(2, 0), weights=w, returned=True), x, w)
    expected = (x * w.T[:, None, :]).sum((0, 2)) / w.sum()
    np.testing.assert_allclose(avg, expected, rtol=1e-6)
    same(total, np.full(3, 28.0), np.float32)
    one_d = run(lambda x, w: jnp.average(x, axis=0, weights=w, returned=True),
                x[0], np.array([1.0, 2.0, 3.0], np.float32))
    same(one_d[1], np.full(4, 6.0), np.float32)  # JAX broadcasts the sum to the result
    plain = run(lambda x: jnp.average(x, axis=1, returned=True), np.ones((2, 2), np.int32))
    same(plain[1], [2.0, 2.0], np.float32)
    with pytest.raises(ValueError, match="Axis must be specified"):
        jitviz.jit(lambda x, w: jnp.average(x, weights=w))(x, w)
    with pytest.raises(ValueError, match="consistent with shape of a along specified axis"):
        jitviz.jit(lambda x, w: jnp.average(x, axis=1, weights=w))(x, w)


def test_linspace_computes_as_jax_and_floors_for_integer_dtypes():
    same(run(lambda: jnp.linspace(0, -3.0, 5, dtype=jnp.int32)), [0, -1, -2, -3, -3], np.int32)
    same(run(lambda: jnp.linspace(-1, 2, 6, dtype=jnp.uint8)), [0, 0, 0, 0, 1, 2], np.uint8)
    lo, hi = np.zeros((2, 1), np.float32), np.ones(4, np.float32)
    out = run(lambda a, b: jnp.linspace(a, b, 3, axis=1, endpoint=False), lo, hi)
    same(out, np.broadcast_to(np.array([0, 1 / 3, 2 / 3], np.float32)[None, :, None],
                              (2, 3, 4)), np.float32)
    same(run(lambda a, b: jnp.linspace(a, b, 3, axis=-1), lo[:, 0], hi[:2]),
         [[0, 0.5, 1]] * 2, np.float32)
    step = run(lambda: jnp.linspace(0.0, 1.0, 7, endpoint=False, retstep=True)[1])
    same(step, np.float32(1) / np.float32(7), np.float32)


def test_cumulative_ops_check_the_axis_before_the_dtype():
    for op in (lax.cumsum, lax.cumprod, lax.cummax, lax.cummin):
        with pytest.raises(ValueError, match=r"axis 0 is out of bounds for array of shape \(\)"):
            jitviz.jit(lambda x: op(x, axis=0))(True)
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            jitviz.jit(lambda x: op(x, axis=0))(np.array([True]))


def test_indexing_a_concrete_array_inside_a_trace_keeps_its_weak_type():
    same(run(lambda x: jnp.ones_like(x)[None], 2.0), [1.0], np.float32, weak=True)
    table = jnp.arange(3.0)  # made outside: a constant of the trace, indexed as JAX does
    same(run(lambda i: table[1:] * i, np.float32(1)), [1.0, 2.0], np.float32)


def test_lax_concatenate_names_an_out_of_bounds_dimension():
    with pytest.raises(TypeError, match=r"concatenate dimension out of bounds: dimension 0 for "
                                        r"shapes \(\), \(\)\."):
        jitviz.jit(lambda x: lax.concatenate([x, x], 0))(np.int32(0))
    with pytest.raises(TypeError, match="dimension 1 for shapes"):
        jitviz.jit(lambda x: lax.concatenate([x, x], 1))(np.zeros(2, np.float32))


def test_a_boolean_mask_must_match_the_axes_it_indexes():
    x = np.zeros((1, 2, 1), np.int32)
    with pytest.raises(IndexError, match=r"in index 2: got \(1,\), expected \[2\]"):
        jitviz.jit(lambda x: x[:2, None, np.array([True])])(x)  # None takes no axis of x
    same(run(lambda x: x[:2, None, np.array([True, False])], x), [[[[0]]]], np.int32)


def test_quantile_of_a_0d_array_keeps_the_raveled_axis():
    same(run(lambda x: jnp.nanquantile(x, 0.25, axis=None, keepdims=True), np.float32(0)),
         [0.0], np.float32)


def test_a_0d_integer_array_indexes_as_its_integer():
    x = np.arange(3, dtype=np.int32)
    same(run(lambda x: x[np.array(1)], x), 1, np.int32)  # was x itself
    same(run(lambda x: x[jnp.full_like(x[0], 2)], x), 2, np.int32)
    same(run(lambda x: x[np.array(-1), None], x), [2], np.int32)


def test_copy_keeps_the_weak_type():
    same(run(lambda: jnp.imag(-0.0).copy()), 0.0, np.float32, weak=True)
    assert jnp.asarray(1.5).copy().weak_type


# --- boolean scalar indices (a 0-d mask: NumPy's and JAX's new unit axis) --------------------

# index -> the shape JAX 0.10 gives for an (2, 3) operand (NumPy's too)
BOOL_SCALAR_INDICES = [
    (True, (1, 2, 3)), (False, (0, 2, 3)), ((0, True), (1, 3)), ((True, 1), (1, 3)),
    ((slice(None), True), (2, 1, 3)), ((True, True), (1, 2, 3)),
    ((np.array([0, 1]), True), (2, 3)), ((Ellipsis, False), (2, 3, 0)),
    ((np.bool_(False), 1, 2), (0,)), (np.array(True), (1, 2, 3)),
]


@pytest.mark.parametrize("index, shape", BOOL_SCALAR_INDICES, ids=repr)
def test_boolean_scalar_index_adds_a_unit_axis_as_numpy_does(index, shape):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = x[index]
    assert want.shape == shape
    for got in (jnp.asarray(x)[index], run(lambda v: v[index], x)):
        assert got.shape == shape and got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("index", [True, False, (0, True), (True, 1), (1, False)], ids=repr)
@pytest.mark.parametrize("mode", [None, "drop", "clip"])
def test_boolean_scalar_index_in_at_updates(index, mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = x.copy()
    want[index] = 7  # NumPy's assignment selects what JAX's .at[index].set does
    got = run(lambda v: v.at[index].set(7.0, mode=mode), x)
    np.testing.assert_array_equal(got, want)
    assert jnp.asarray(x).at[index].get(mode=mode).shape == x[index].shape


def test_boolean_scalar_index_with_a_mismatched_array_index_is_jax_error():
    x = jnp.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="shape mismatch|broadcast"):
        x[False, np.array([0, 1])]


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint32, np.int8])
def test_right_shifts_keep_every_bit_of_64_bit_integers(dtype, keep_float64):
    # the CPU's shift helper returned float64 for uint64 (its oversized-shift branch mixed in
    # an int64 literal), so large values lost their low bits
    info = np.iinfo(dtype)
    x = np.array([info.max - 5, info.min, 7, info.max // 3], dtype)
    for shift in (0, 3, np.iinfo(dtype).bits - 1, np.iinfo(dtype).bits + 2):
        s = np.asarray(shift, dtype)
        want = jitviz.jit(lambda a: lax.shift_right_arithmetic(a, s), backend="interpret")(x)
        got = jitviz.jit(lambda a: lax.shift_right_arithmetic(a, s), backend="cpu")(x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [
    lambda x, b: x[b],
    lambda x, b: jnp.ones(3)[b],
    lambda x, b: jnp.ones(3).at[b].set(2.0),
    lambda x, b: jnp.ones(3).at[b].get(mode="clip"),
])
def test_a_traced_boolean_scalar_index_is_jax_nonconcrete_error(make):
    # found by the fuzzer (seed 31001569): jitviz indexed with the 0-d mask as an integer
    with pytest.raises(jitviz.errors.NonConcreteBooleanIndexError):
        jitviz.jit(make)(np.float32(1), np.bool_(True))


@pytest.mark.parametrize("make, where", [
    (lambda: lax.iota(np.float64, 4), "broadcasted_iota"),
    (lambda: lax.broadcasted_iota(np.int64, (2, 3), 1), "broadcasted_iota"),
    (lambda: lax.convert_element_type(jnp.ones(2), np.float64), "convert_element_type"),
    (lambda: lax.full((2,), 1.0, np.float64), "convert_element_type"),
    (lambda: lax.full_like(jnp.ones(2), 1, np.float64), "dtype"),
])
def test_a_64_bit_dtype_named_in_lax_is_32_bit_without_x64_with_jax_warning(make, where):
    # found by the fuzzer (seed 31000790): lax.iota(float64, 4) stayed float64 without x64
    assert not jitviz.config.enable_x64
    with pytest.warns(UserWarning, match=f"requested in {where}"):
        out = run(make)
    assert out.dtype.itemsize == 4 and not out.weak_type
    with x64_enabled():
        assert run(make).dtype.itemsize == 8


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_extrema_order_zeros_as_max_and_min_do(reverse):
    # found by the fuzzer (seed 31002253): the interpreter's cummin kept whichever zero came
    # first (NumPy's accumulate), the cpu backend and JAX give -0.0 once a -0.0 was seen
    x = np.array([0.0, -0.0, 0.0, -0.0, 2.0], np.float32)
    running_min = run(lambda v: lax.cummin(v, reverse=reverse), x)
    running_max = run(lambda v: lax.cummax(-v, reverse=reverse), x)
    expected_min = np.array([0.0, -0.0, -0.0, -0.0, -0.0] if not reverse else
                            [-0.0, -0.0, -0.0, -0.0, 2.0], np.float32)
    np.testing.assert_array_equal(np.signbit(running_min), np.signbit(expected_min))
    np.testing.assert_array_equal(running_min, expected_min)
    expected_max = np.array([-0.0, 0.0, 0.0, 0.0, 0.0] if not reverse else
                            [0.0, 0.0, 0.0, 0.0, -2.0], np.float32)  # of -x
    np.testing.assert_array_equal(np.signbit(running_max), np.signbit(expected_max))
    np.testing.assert_array_equal(running_max, expected_max)


@pytest.mark.parametrize("lower, upper", [(0, 5), (np.int16(0), 5), (0, np.int16(5)),
                                          (np.uint8(0), np.uint8(5))])
def test_a_fori_loop_index_is_typed_as_jax_types_it(lower, upper):
    # found by the fuzzer (seed 31002579): `maximum(carry, i)` changed an int32 carry's type
    # because jitviz's index was a strong int; JAX's is a weak int when the bounds are known
    # (the scan starts from the Python int `int(lower)`) and `lower`'s own type otherwise
    body = lambda i, c: jnp.maximum(c, i) + i  # noqa: E731
    known = run(lambda c: lax.fori_loop(lower, upper, body, c), np.int32(0))
    same(known, 11, np.int32)  # 0, 2, 4, 7, 11
    traced = run(lambda lo, hi, c: lax.fori_loop(lo, hi, body, c), lower, upper, np.int32(0))
    assert int(traced) == 11


def test_fori_loop_bounds_of_two_strong_dtypes_are_jax_type_error():
    with pytest.raises(TypeError, match="must have equal types, got int32 and int16"):
        jitviz.jit(lambda c: lax.fori_loop(np.int32(0), np.int16(3), lambda i, c: c, c))(1.0)


def test_filled_arrays_are_traced_inside_a_trace_as_in_jax():
    # found by the fuzzer (seed 31003495): a 0-d jnp.full stayed concrete under jit, so
    # jnp.power took it as a static exponent and raised JAX's eager TypeError
    out = run(lambda: jnp.power(jnp.full((), -1), jnp.full((), -1)))
    same(out, -1, np.int32)  # JAX's integer power of a traced exponent: (-1) ** -1 == -1
    with pytest.raises(TypeError, match="negative powers"):  # eagerly, as JAX
        jnp.power(jnp.full((), -1), jnp.full((), -1))
    with pytest.raises(jitviz.errors.ConcretizationTypeError):
        jitviz.jit(lambda: int(jnp.zeros(())))()


@pytest.mark.parametrize("index, named", [(1.5, "float64"), (np.float32(1), "float32"),
                                          ((0, 1.0), "float64"), (1j, "complex128")])
def test_a_float_index_is_jax_type_error_never_a_view(index, named):
    # x[1.5] returned the whole array (a wrong answer) eagerly
    x = jnp.ones((3, 3))
    for get in (lambda: x[index], lambda: jitviz.jit(lambda a: a[index])(x),
                lambda: x.at[index].set(2.0)):
        with pytest.raises(TypeError, match=f"integer or boolean type, got indexer with "
                                            f"type {named}"):
            get()


def test_the_indexer_type_is_checked_before_the_number_of_indices():
    # found by the fuzzer (seed 31004218): a float indexer of a 0-d array was IndexError
    with pytest.raises(TypeError, match="got indexer with type float32"):
        jitviz.jit(lambda a, b: a[b])(np.array(False), np.zeros((0, 1), np.float32))


def test_rearranging_a_weakly_typed_array_keeps_it_weak():
    # found by the fuzzer (seed 31004187): Array.reshape is NumPy's, which made it strong
    weak = jnp.asarray(2.5)
    for out in (weak.reshape(1, 1), weak.reshape((1,)).ravel(), weak.reshape(1, 1).T,
                weak.reshape(1, 1).transpose(), weak.reshape(1, 1).squeeze(),
                weak.reshape(1, 1).swapaxes(0, 1), weak.reshape(1).flatten()):
        assert out.weak_type and out.dtype == np.float32
    assert not jnp.asarray(np.float32(2.5)).reshape(1).weak_type
    same(run(lambda: jnp.trunc(2).reshape((1, 1))), [[2]], np.int32, weak=True)


@pytest.mark.parametrize("lo, x, hi, expected", [
    (-0.0, 0.0, 10.0, 0.0), (0.0, -0.0, 10.0, 0.0), (-5.0, -0.0, 0.0, -0.0),
    (-5.0, 0.0, -0.0, -0.0), (-0.0, -0.0, 0.0, -0.0), (0.0, 0.0, -0.0, -0.0)])
def test_clamp_orders_zeros_as_max_and_min_do(lo, x, hi, expected):
    # found by the fuzzer (seed 31005235): the interpreter's clamp(-0.0, 0.0, 10.0) was -0.0
    out = run(lax.clamp, np.float32(lo), np.float32(x), np.float32(hi))
    assert np.signbit(out) == np.signbit(expected) and float(out) == expected


def test_mean_with_an_integer_dtype_sums_and_divides_in_integers():
    # found by the fuzzer (seed 31006246): jitviz went through float32 first, losing the low
    # bits of a large int32 (-1626598080 became -1626598144)
    x = np.array([[[-1626598080]], [[7]], [[-3]]], np.int32)
    same(run(lambda v: jnp.mean(v, axis=(0,), dtype=jnp.int32), x), [[-542199358]], np.int32)
    same(run(lambda v: jnp.mean(v, dtype=jnp.int32), np.array([1, 2], np.int32)), 1, np.int32)


@pytest.mark.parametrize("call", [
    lambda: jnp.sum([1, 2, 3]), lambda: jnp.add([1, 2], 1), lambda: jnp.exp((1.0,)),
    lambda: jnp.dot([1, 2], [3, 4]), lambda: jnp.percentile(jnp.ones(3), [10, 90]),
    lambda: jnp.where(True, [1, 2], 0), lambda: jnp.stack([[1], [2]]),
    lambda: jitviz.jit(lambda x: jnp.maximum(x, [0.0, 1.0]))(jnp.ones(2))])
def test_a_list_operand_of_a_jnp_function_is_jax_type_error(call):
    # JAX converts no list or tuple silently (only jnp.array/asarray and sequence-of-arrays
    # parameters take one); the message names the function and the fix
    with pytest.raises(TypeError, match=r"requires ndarray or scalar arguments, got <class "
                                        r"'(list|tuple)'>\. Convert it first: jnp\.asarray"):
        call()


def test_what_takes_sequences_still_does():
    assert jnp.stack([jnp.ones(2), np.zeros(2)]).shape == (2, 2)
    assert jnp.concatenate((jnp.ones(2), jnp.zeros(1))).shape == (3,)
    assert jnp.asarray((1, 2)).tolist() == [1, 2] and jnp.array([[1], [2]]).shape == (2, 1)
    assert jnp.zeros([2, 3]).shape == (2, 3) and jnp.ones(4).reshape([2, 2]).shape == (2, 2)
    assert float(jnp.ones((2, 2)).sum(axis=(0, 1))) == 4.0
    with pytest.warns(DeprecationWarning, match="ndim requires ndarray"):  # as JAX, for now
        assert jnp.ndim((0, 1, 2)) == 1
    assert jnp.exp.__name__ == jnp.exp.__code__.co_name == "exp"  # named in messages


@pytest.mark.parametrize("operand, preferred", [(np.int32, np.int16), (np.uint32, np.uint8),
                                                (np.int16, np.int8)])
def test_a_narrower_integer_preferred_element_type_is_jax_type_error(operand, preferred):
    # found by the fuzzer (seed 31008228): jitviz computed int64 products as int32
    x = np.ones((2, 2), operand)
    with pytest.raises(TypeError, match="must not be narrower than the original type"):
        lax.dot(x, x, preferred_element_type=preferred)


def test_a_narrower_float_preferred_element_type_is_allowed_as_in_jax():
    x = np.ones((2, 2), np.float32)
    assert lax.dot(x, x, preferred_element_type=np.float16).dtype == np.float16


@pytest.mark.parametrize("precision", [lax.Precision.HIGHEST, "highest", "bfloat16",
                                       (lax.Precision.HIGH, lax.Precision.HIGHEST),
                                       ("high", "float32")])
def test_precision_is_jaxs_enum_and_prints_as_jaxs(precision):
    text = str(jitviz.make_jaxpr(lambda a: jnp.dot(a, a, precision=precision))(
        np.ones((2, 2), np.float32)))
    pair = jitviz.lax.canonicalize_precision(precision)
    assert f"precision=({pair[0]!r}, {pair[1]!r})" in text
    assert repr(lax.Precision("highest")) == "Precision.HIGHEST"
    np.testing.assert_allclose(jitviz.jit(lambda a: jnp.matmul(a, a, precision=precision))(
        np.eye(2, dtype=np.float32)), np.eye(2))
    jax = pytest.importorskip("jax")

    def as_jaxs(p):
        return jax.lax.Precision[p.name] if isinstance(p, lax.Precision) else p
    theirs_precision = tuple(map(as_jaxs, precision)) if isinstance(precision, tuple) else \
        as_jaxs(precision)
    theirs = str(jax.make_jaxpr(lambda a: jax.numpy.dot(a, a, precision=theirs_precision))(
        np.ones((2, 2), np.float32)))
    assert text == theirs


@pytest.mark.parametrize("precision", ["extreme", (lax.Precision.HIGH, "float32"), (1, 2)])
def test_an_unknown_precision_is_a_value_error(precision):
    with pytest.raises(ValueError):  # as JAX (a mixed pair too)
        lax.dot(np.ones(2), np.ones(2), precision=precision)


def test_angle_of_a_weak_float_array_stays_weak():
    """JAX's angle converts to the strong default float only an operand that is not inexact
    or a 0-d float: a weak float array stays weak, angle(1.0) and angle(2) are strong."""
    same(run(lambda: jnp.angle(lax.broadcast(2.5, (3,)))), [0.0] * 3, np.float32, weak=True)
    same(run(lambda: jnp.angle(1.0)), 0.0, np.float32)
    same(run(lambda: jnp.angle(2)), 0.0, np.float32)


def test_iota_of_booleans_is_a_type_error():
    """`jnp.arange(True)` asks iota for booleans: JAX's TypeError; a bool bound promoted
    with an int (`arange(0, True)`) is int32."""
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        jitviz.jit(lambda: jnp.arange(True))()
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        lax.iota(np.bool_, 3)
    same(run(lambda: jnp.arange(0, True)), [0], np.int32)


@pytest.mark.parametrize("window", ["bartlett", "blackman", "hamming", "hanning", "kaiser"])
def test_a_window_size_is_truncated_to_an_int(window):
    """JAX takes `int(M)`: a float size truncates, `hamming(3.7)` has 3 points."""
    fn = getattr(jnp, window)
    make = (lambda M: fn(M, 2.0)) if window == "kaiser" else fn
    got = run(lambda: make(3.7))
    np.testing.assert_allclose(got, run(lambda: make(3)), rtol=1e-6)
    assert got.shape == (3,) and run(lambda: make(1.5)).shape == (1,)


def test_convolve_of_weak_operands_stays_weak():
    """JAX pads with `lax.pad`, which keeps the weak type: convolve of an int array and a
    weak float is a weak float32 in every mode (the padding zeros were strong)."""
    for mode in ("full", "same", "valid"):
        got = run(lambda: jnp.convolve(jnp.arange(3), lax.broadcast(2.5, (2,)), mode=mode))
        assert got.dtype == np.float32 and got.weak_type, mode


@pytest.mark.parametrize("name", ["concatenate", "stack", "vstack", "hstack", "dstack",
                                  "column_stack"])
def test_stacking_an_array_takes_its_rows_without_splitting(name):
    """`jnp.vstack(x)` (and the others) of one array take its rows as the sequence, as NumPy
    does, and as JAX without a concatenate: a weak operand stays weak (the scan of weak
    operands found column_stack and dstack of weak booleans strong)."""
    fn = getattr(jnp, name)
    for shape in [(3,), (3, 4), (2, 3, 4), (2, 3, 4, 5)]:
        if name == "concatenate" and len(shape) == 1:
            continue  # rows of 0-d arrays: NumPy's and JAX's ValueError
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(run(lambda v: fn(v), x), getattr(np, name)(x))
        assert run(lambda: fn(jnp.less(lax.broadcast(2, shape), 3))).weak_type, shape
    if name == "concatenate":
        with pytest.raises(ValueError, match="zero-dimensional"):
            jnp.concatenate(np.zeros(3, np.float32))


def test_weak_types_of_pad_diag_diagflat_and_cross():
    """As JAX types them: constant padding takes the operand's weak type; diag of a 1-D
    weak float stays weak at any k, of weak booleans is strong (jnp.where's promotion);
    diagflat writes into strong zeros; a 3-D cross product is stacked with jnp.array
    (strong), a 2-D one is not."""
    w = lambda: lax.broadcast(2.5, (3,))  # noqa: E731
    wb = lambda: jnp.less(lax.broadcast(2, (3,)), 3)  # noqa: E731
    cases = [(lambda: jnp.pad(w(), (1, 0)), True), (lambda: jnp.pad(w(), 1, mode="edge"), True),
             (lambda: jnp.pad(jnp.ones(3), 1, constant_values=2.5), False),
             (lambda: jnp.diag(w(), 1), True), (lambda: jnp.diag(w()), True),
             (lambda: jnp.diag(wb()), False), (lambda: jnp.diag(wb(), 1), False),
             (lambda: jnp.diagflat(w()), False), (lambda: jnp.cross(w(), w()), False),
             (lambda: jnp.cross(w()[:2], w()[:2]), True)]
    for i, (fn, weak) in enumerate(cases):
        assert bool(run(fn).weak_type) == weak, i


def test_diff_of_an_empty_axis_is_empty():
    for n in (1, 2):
        same(run(lambda x: jnp.diff(x, n=n), np.zeros(0, np.float32)), [], np.float32)
    same(run(lambda x: jnp.diff(x, n=5), np.zeros(3, np.float32)), [], np.float32)


# (shape, axis) -> what JAX 0.10 does for (median/quantile, nanmedian/nanquantile): a result
# shape, or an exception class
EMPTY_AXIS_QUANTILES = {
    ((0, 1, 1, 0), -1): (TypeError, (0, 1, 1)),   # seed 36006976, and its nan form
    ((0, 0), (1,)): (TypeError, (0,)),            # seed 40000894 (nanquantile)
    ((3, 0), 1): (TypeError, TypeError),          # a non-empty result from an empty axis
    ((3, 0), None): (TypeError, IndexError),      # every axis reduced
    ((0,), 0): (TypeError, IndexError),
    ((3, 0), 0): ((0,), (0,)),                    # the reduced axis is not empty
}


@pytest.mark.parametrize("name", ["median", "nanmedian", "quantile", "nanquantile"])
def test_a_quantile_over_an_empty_axis_raises_as_jax(name):
    """JAX gathers order statistics with slices of 1 along the axis: TypeError for an empty
    axis even when the result is empty (seed 36006976: zeros((0, 1, 1, 0)), axis=-1). Its
    nan-quantiles index instead: an empty result is fine (seed 40000894), a non-empty one
    is the gather's TypeError, a scalar one (every axis reduced) an IndexError. The table
    is JAX's answers, checked against JAX for 216 cases of shape, axis and function."""
    fn = getattr(jnp, name)
    call = (lambda x, axis: fn(x, axis=axis)) if "median" in name else \
        (lambda x, axis: fn(x, 0.5, axis=axis))
    for (shape, axis), expected in EMPTY_AXIS_QUANTILES.items():
        want = expected[name.startswith("nan")]
        f = jitviz.jit(lambda x: call(x, axis))
        if isinstance(want, tuple):
            assert f(np.zeros(shape, np.float32)).shape == want, (shape, axis)
        else:
            with pytest.raises(want):
                f(np.zeros(shape, np.float32))


@pytest.mark.parametrize("name", ["nanmedian", "nanquantile"])
def test_a_nan_quantile_keeping_dims_of_an_empty_axis_raises_the_gathers_error(name):
    """With keepdims, JAX's nan-quantiles index with the kept axis, a gather: its TypeError
    where the scalar result's index raises IndexError (seed 61000115: nanmedian of an
    empty vector, keepdims=True; JAX's answers for each shape below, checked)."""
    fn = getattr(jnp, name)
    for shape, axis in (((0,), None), ((0,), 0), ((0, 3), None), ((0, 0), None)):
        for keepdims, error in ((False, IndexError), (True, TypeError)):
            args = () if "median" in name else (0.5,)
            f = jitviz.jit(lambda x: fn(x, *args, axis=axis, keepdims=keepdims))
            with pytest.raises(error):
                f(np.zeros(shape, np.float32))


def test_gcd_and_lcm_of_weak_arrays_are_strongly_typed():
    """As JAX types them: gcd and lcm of weak int arrays are strong int32 (its loop body's
    zero is a strong constant), of weak scalars weak (gcd(6, 4))."""
    w = lambda: lax.broadcast(4, (3,))  # noqa: E731
    same(run(lambda: jnp.gcd(w(), 6)), [2, 2, 2], np.int32)
    same(run(lambda: jnp.lcm(w(), 6)), [12, 12, 12], np.int32)
    same(run(lambda: jnp.gcd(6, 4)), 2, np.int32, weak=True)
    same(run(lambda: jnp.lcm(6, 4)), 12, np.int32, weak=True)


def test_eye_sizes_are_integers():
    """JAX's eye takes integer sizes: a float N or M is its TypeError, a float k its
    ValueError (jitviz truncated them)."""
    with pytest.raises(TypeError, match="argument 'N'"):
        jnp.eye(2.5)
    with pytest.raises(TypeError, match="argument 'M'"):
        jnp.eye(2, 2.5)
    with pytest.raises(ValueError, match="k must be a scalar integer"):
        jnp.eye(2, 2, 1.5)
    same(jnp.eye(np.int32(2), k=np.int32(1)), [[0, 1], [0, 0]], np.float32)


def test_gradient_promotes_its_operand_with_the_spacings():
    """As JAX's promote_dtypes_inexact(f, *varargs): the result is weak when f and every
    spacing are (the default spacing is f's own 1), strong otherwise."""
    w = lambda: lax.broadcast(2.5, (3,))  # noqa: E731
    wi = lambda: lax.broadcast(2, (3,))  # noqa: E731
    assert run(lambda: jnp.gradient(w())).weak_type
    assert run(lambda: jnp.gradient(wi(), wi())).weak_type
    assert run(lambda: jnp.gradient(w(), 0.5)).weak_type
    assert not run(lambda: jnp.gradient(w(), np.float32(0.5))).weak_type
    same(run(lambda x: jnp.gradient(x, 2.0), np.float32([1, 2, 4])), [0.5, 0.75, 1.0],
         np.float32)


def test_i0_of_a_weak_float_stays_weak():
    """JAX's i0 is lax arithmetic on its (promoted) operand: weak in, weak out; jitviz's
    series and asymptotic constants were strong."""
    for x in (lambda: lax.broadcast(2.5, (3,)), lambda: lax.broadcast(30.0, (2,)),
              lambda: 2.5, lambda: 3):
        assert run(lambda: jnp.i0(x())).weak_type
    assert not run(lambda v: jnp.i0(v), np.float32([1.0, 30.0])).weak_type


def test_ix_makes_an_empty_index_integer():
    """As NumPy (intp) and JAX (int32 without x64): an empty argument of ix_ is an integer
    index whatever its dtype; the others keep theirs."""
    a, b = jnp.ix_(np.float32([1, 2, 3]), np.zeros(0, np.float32))
    assert (a.dtype, a.shape, b.dtype, b.shape) == (np.float32, (3, 1), np.int32, (1, 0))


def test_isreal_and_iscomplex_of_a_weak_scalar_are_weak():
    """JAX compares the imaginary part with a constant of the dtype: the answer for a weak
    0-d operand (`isreal(2.5)`) is a weak bool, for arrays and strong scalars strong."""
    same(run(lambda: jnp.isreal(2.5)), True, np.bool_, weak=True)
    same(run(lambda: jnp.iscomplex(2)), False, np.bool_, weak=True)
    same(run(lambda: jnp.isreal(lax.broadcast(2.5, (1,)))), [True], np.bool_)
    same(run(lambda x: jnp.isreal(x), np.float32(1)), True, np.bool_)


def test_a_quantile_over_several_axes_flattens_them_in_jaxs_order():
    """JAX swaps the kept axes to the front one by one and flattens the rest as the swaps
    leave them, whatever the order in `axis`; the stable sort keeps that order among equal
    values, so which zero (0.0 or -0.0) is the median follows it (seed 39000710: nanmedian
    over axis=(1, 0, 2) was -0.0 where JAX gives 0.0, and here the other way round)."""
    x = np.array([[[-0.0, -1.0, -0.0], [-0.0, 1.0, 1.0]],
                  [[0.0, 0.0, -1.0], [-1.0, -1.0, 1.0]]], np.float32)
    # 12 values, the median the mean of the 6th and 7th in stable sorted order: -0.0 and
    # -0.0 flattened in array order (JAX's here), -0.0 and 0.0 in (1, 0, 2)'s order
    for fn in (jnp.median, jnp.nanmedian):
        got = run(lambda v: fn(v, axis=(1, 0, 2)), x)
        assert got == 0.0 and np.signbit(got), fn


# --- complex numbers --------------------------------------------------------------------------

C = np.array([1.26 + 2.5j, -0.5 - 1.55j, complex(np.inf, np.nan), complex(2.5, np.inf)],
             np.complex64)


def test_rint_and_round_of_complex_numbers_round_each_part():
    want = np.array([1 + 2j, -2j, complex(np.inf, np.nan), complex(2, np.inf)], np.complex64)
    same(run(jnp.rint, C), want, np.complex64)
    same(run(jnp.round, C), want, np.complex64)
    assert np.signbit(run(jnp.rint, C)[1].real)  # rint(-0.5) is -0.0


def test_lax_complex_keeps_infinite_and_nan_parts_apart():
    x = np.array([1.0, np.inf, np.nan], np.float32)
    y = np.array([np.inf, 2.0, -0.0], np.float32)
    out = run(lax.complex, x, y)
    same(out, [complex(1, np.inf), complex(np.inf, 2), complex(np.nan, -0.0)], np.complex64)
    assert np.signbit(out[2].imag)
    same(run(lambda x: lax.complex(x, 2.0), x[:1]), [1 + 2j], np.complex64)
    with pytest.raises(TypeError, match="complex does not accept dtype int32"):
        jitviz.jit(lax.complex)(I, I)


def test_complex_numbers_are_not_ordered_by_lax_nor_clipped():
    with pytest.raises(TypeError, match="gt does not accept dtype complex64"):
        jitviz.jit(lax.gt)(C, C)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jitviz.jit(jnp.clip)(C, 0.0, 1.0)
