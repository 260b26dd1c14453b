"""One set of promotion rules (issue 14): operators on concrete `jitviz.Array`s (eager `jnp`
results, results of jitted functions) follow JAX's promotion and weak types, the same as
under a trace, and 64-bit types stay opt-in (x64) as in JAX, with `keep_float64` as jitviz's
one switch to keep NumPy's 64-bit inputs.

The grid tests run every operator over dtypes x weak/strong x Python and NumPy scalars, with
x64 on and off, against real JAX (skipped where it is not installed); the others need only
jitviz."""
import contextlib
import itertools
import operator
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import random

from helpers import float64_kept, x64_enabled  # noqa: E402

try:
    import jax
    import jax.numpy as jax_jnp
    HAVE_JAX = True
except ImportError:  # pragma: no cover - the jax extra is not installed
    HAVE_JAX = False

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is not installed")

BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "lt": operator.lt, "eq": operator.eq, "ge": operator.ge,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "matmul": operator.matmul,
}
UNARY = {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs,
         "invert": operator.invert}
ARRAY_DTYPES = ("bool", "int8", "uint8", "int32", "uint32", "int64", "float16", "float32",
                "float64", "complex64")
# (name, how to make it: from the jnp module of either library)
WEAK_ARRAYS = (("weak int", lambda m: m.asarray(2)), ("weak float", lambda m: m.asarray(2.5)))
SCALARS = (True, 3, 2.5, 1.5j, np.float32(2), np.float64(0.5), np.int64(2), np.int32(3))


def _array(module, dtype):
    """[1, 2, 3] (or booleans) as an eager array of `dtype`, made by jnp.asarray."""
    values = np.array([True, False, True]) if dtype == "bool" else np.array([1, 2, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return module.asarray(values.astype(dtype))


def _operands(module):
    out = [(dt, _array(module, dt)) for dt in ARRAY_DTYPES]
    return out + [(name, make(module)) for name, make in WEAK_ARRAYS]


def _outcome(fn, *args):
    """(dtype, weak_type, values) of fn(*args), or the exception class's name."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return np.dtype(out.dtype), bool(getattr(out, "weak_type", False)), np.asarray(out)


def _same(ours, theirs, what):
    if isinstance(theirs, str) or isinstance(ours, str):
        assert isinstance(ours, str) == isinstance(theirs, str), f"{what}: {ours} vs {theirs}"
        return
    assert ours[:2] == theirs[:2], f"{what}: jitviz {ours[:2]}, JAX {theirs[:2]}"
    if len(ours) > 2:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=2e-3, equal_nan=True, err_msg=what)


def _binary_cases(dtypes=ARRAY_DTYPES, weak=WEAK_ARRAYS, scalars=SCALARS):
    """(description, jitviz operands, JAX operands) of the grid: array . array, array .
    scalar and scalar . array (the reflected operators)."""
    ours = [(dt, _array(jnp, dt)) for dt in dtypes] + [(n, m(jnp)) for n, m in weak]
    theirs = [(dt, _array(jax_jnp, dt)) for dt in dtypes] + [(n, m(jax_jnp)) for n, m in weak]
    for (name_a, a), (_, ja) in zip(ours, theirs):
        for (name_b, b), (_, jb) in zip(ours, theirs):
            yield f"{name_a} . {name_b}", (a, b), (ja, jb)
        for s in scalars:
            yield f"{name_a} . {s!r}", (a, s), (ja, s)
            yield f"{s!r} . {name_a}", (s, a), (s, ja)


def _jax_type(op, *args):
    """JAX's (dtype, weak_type) of op(*args) without compiling it (jax.eval_shape), or the
    exception class's name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = jax.eval_shape(op, *args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return np.dtype(out.dtype), bool(out.weak_type)


def _type_only(outcome):
    return outcome if isinstance(outcome, str) else outcome[:2]


@needs_jax
@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_concrete_operators_type_as_jax(x64):
    """Every operator over the whole grid: the dtype and weak type JAX gives (checked with
    jax.eval_shape, which compiles nothing). `x ** y` is checked on values below: JAX's
    eager power keeps a weak type that its traced power does not."""
    with _x64_in_both(x64):
        for what, ours, theirs in _binary_cases():
            for op_name, op in BINARY.items():
                if op_name != "pow":
                    _same(_type_only(_outcome(op, *ours)), _jax_type(op, *theirs),
                          f"{what} {op_name}")
        for (name, a), (_, ja) in zip(_operands(jnp), _operands(jax_jnp)):
            for op_name, op in UNARY.items():
                _same(_type_only(_outcome(op, a)), _jax_type(op, ja), f"{op_name} {name}")


@needs_jax
def test_concrete_operators_compute_as_jax():
    """Values, dtypes and weak types of eager JAX (which compiles each case: a smaller grid)."""
    ops = {name: BINARY[name] for name in ("add", "truediv", "floordiv", "mod", "pow", "lt")}
    with _x64_in_both(False):
        for what, ours, theirs in _binary_cases(("uint8", "int32", "float32"), WEAK_ARRAYS,
                                                (3, 2.5, np.float32(2))):
            for op_name, op in ops.items():
                _same(_outcome(op, *ours), _outcome(op, *theirs), f"{what} {op_name}")


@needs_jax
@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_numpy_inputs_are_canonicalized_as_jax(x64):
    """NumPy 64-bit arrays and scalars meeting Arrays, and jnp functions of them: 32-bit
    without x64 (JAX's canonical dtypes), 64-bit with it."""
    inputs = [np.ones(2, dt) for dt in ("float64", "int64", "uint64", "complex128",
                                        "float32")] + [np.float64(2), np.int64(3)]
    with _x64_in_both(x64):
        for x in inputs:
            what = f"{type(x).__name__} {x.dtype}"
            _same(_outcome(jnp.asarray, x), _outcome(jax_jnp.asarray, x), f"asarray {what}")
            _same(_outcome(jnp.sin, x), _outcome(jax_jnp.sin, x), f"sin {what}")
            for dt in ("int32", "float32"):
                a, ja = _array(jnp, dt), _array(jax_jnp, dt)
                _same(_outcome(operator.add, x, a), _outcome(operator.add, x, ja),
                      f"{what} + {dt}")
                _same(_outcome(operator.mul, a, x), _outcome(operator.mul, ja, x),
                      f"{dt} * {what}")


@needs_jax
@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_requested_64_bit_dtypes_are_narrowed_with_jaxs_warning(x64):
    cases = [(lambda m: m.zeros(2, m.float64)), (lambda m: m.arange(3).astype(m.int64)),
             (lambda m: m.float64(1.5)), (lambda m: m.array([1, 2], dtype=m.int64)),
             (lambda m: m.ones(2).sum(dtype=m.float64))]
    with _x64_in_both(x64):
        for i, make in enumerate(cases):
            with warnings.catch_warnings(record=True) as ours_w:
                warnings.simplefilter("always")
                ours = make(jnp)
            with warnings.catch_warnings(record=True) as theirs_w:
                warnings.simplefilter("always")
                theirs = make(jax_jnp)
            assert ours.dtype == theirs.dtype, i
            warned = [("not available" in str(w.message)) for w in ours_w]
            assert any(warned) == any("not available" in str(w.message) for w in theirs_w), i
        key_ours, key_theirs = random.PRNGKey(0), jax.random.PRNGKey(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ours = random.uniform(key_ours, (3,), dtype=jnp.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = jax.random.uniform(key_theirs, (3,), dtype=jax_jnp.float64)
        assert ours.dtype == theirs.dtype
        assert any("not available" in str(m.message) for m in w) == (not x64)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


@needs_jax
def test_jitted_results_compute_on_as_jax_arrays():
    """What a jitted function returns, used by later eager code: JAX's promotion."""
    f = jitviz.jit(lambda x: x * 2, backend="interpret")
    jf = jax.jit(lambda x: x * 2)
    x = np.arange(3, dtype=np.int32)
    for ours, theirs in ((f(x), jf(x)), (f(2), jf(2))):
        for other in (1.5, np.float32(2), np.int8(3), True):
            _same(_outcome(operator.add, ours, other), _outcome(operator.add, theirs, other),
                  f"jit result + {other!r}")


# --- without JAX ---------------------------------------------------------------------------

@contextlib.contextmanager
def _x64_in_both(on: bool):
    """x64 on (or off) in jitviz and in JAX inside the block, both restored after it."""
    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", on)
    try:
        if on:
            with x64_enabled():
                yield
        else:
            yield
    finally:
        jax.config.update("jax_enable_x64", before)


def test_eager_and_traced_operators_give_the_same_types():
    """One set of rules: each operator's eager result has the type of its traced result
    (jitviz's interpreter backend runs the traced program). Not `x ** y`: JAX's eager power
    of a concrete integer exponent keeps the weak type, its traced power does not."""
    for (name_a, a), (name_b, b) in itertools.product(_operands(jnp)[::3], repeat=2):
        for op_name, op in BINARY.items():
            if op_name == "pow":
                continue
            eager = _outcome(op, a, b)
            traced = _outcome(jitviz.jit(op, backend="interpret"), a, b)
            _same(eager, traced, f"{name_a} {op_name} {name_b}")


def test_numpy_ufuncs_on_arrays_compute_with_numpy():
    """`np.exp(x)` of a JAX array is NumPy's computation, returning a NumPy array; so is it
    for a jitviz Array (and writing into an Array with out= is refused: it is immutable)."""
    x = jnp.arange(3, dtype=jnp.float32)
    out = np.exp(x)
    assert type(out) is np.ndarray and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.exp(np.arange(3, dtype=np.float32)))
    assert type(np.add(x, np.ones(3))) is np.ndarray
    with pytest.raises(TypeError, match="immutable"):
        np.add(x, 1, out=x)


def test_a_numpy_scalar_on_the_left_computes_as_the_array_operator():
    x = jnp.arange(3, dtype=jnp.float32)
    assert (np.float64(2) * x).dtype == np.float32
    assert (np.sqrt(2.0) * x).dtype == np.float32
    assert (np.int64(2) + jnp.arange(3, dtype=jnp.int8)).dtype == np.int32
    assert isinstance(np.float32(2) > x, jitviz.Array)


def test_a_jitted_64_bit_argument_is_narrowed_with_one_diagnostic_naming_it():
    f = jitviz.jit(lambda data, n: data * n)
    with pytest.warns(jitviz.X64ConversionWarning) as caught:
        out = f(np.linspace(0, 1, 4), 3)
    assert out.dtype == np.float32
    message = str(caught[0].message)
    assert "argument 'data' is float64" in message and "float32" in message
    assert 'jitviz.config.update("enable_x64", True)' in message
    assert 'jitviz.config.update("keep_float64", True)' in message
    events = f.events.of_kind("x64_conversion")
    assert [e.argument for e in events] == ["data"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning is given once per function and argument
        f(np.linspace(0, 1, 5), 3)
        f(np.ones(4, np.float32), 3)  # a float32 argument: nothing to say
    assert len(f.events.of_kind("x64_conversion")) == 2  # the new shape's trace says it too


def test_a_jitted_64_bit_argument_is_converted_on_every_call():
    """The compiled code gets the 32-bit values (a cache hit converts too)."""
    f = jitviz.jit(lambda x: x + 1)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = f(np.array([0.1, 2**40 + 0.5]))
        np.testing.assert_array_equal(out, np.array([0.1, 2**40 + 0.5], np.float32) + 1)


def test_the_diagnostic_can_be_switched_off():
    jitviz.config.update("warn_x64_conversion", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            jitviz.jit(lambda x: -x)(np.ones(2))
    finally:
        jitviz.config.update("warn_x64_conversion", True)


def test_keep_float64_keeps_numpy_64_bit_inputs_and_named_dtypes():
    with float64_kept():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing is narrowed, so nothing warns
            out = jitviz.jit(lambda x: x * 2 + 1)(np.full(2, 0.1))
            named = jnp.zeros(2, jnp.int64)
            eager = jnp.asarray(np.ones(2)) + jnp.arange(2, dtype=jnp.float32)
        assert out.dtype == np.float64 and out[0] == 0.1 * 2 + 1
        assert named.dtype == np.int64 and eager.dtype == np.float64
    out = jitviz.jit(lambda x: x * 2 + 1)  # off again: the cache follows the switch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert out(np.full(2, 0.1)).dtype == np.float32
    with float64_kept():
        assert out(np.full(2, 0.1)).dtype == np.float64


def test_switching_x64_after_a_call_retypes_the_next_call():
    """The fast cache key includes the dtype switches: a Python float is float32, then
    float64 once x64 is on, for the same jitted function."""
    f = jitviz.jit(lambda x: x * 2)
    assert f(1.5).dtype == np.float32
    with x64_enabled():
        assert f(1.5).dtype == np.float64
    assert f(1.5).dtype == np.float32


def test_keep_float64_is_a_known_option():
    assert jitviz.config.keep_float64 is False  # off: a JAX notebook gets JAX's behaviour
    with pytest.raises(AttributeError, match="keep_float64"):
        jitviz.config.update("keep_floats64", True)


class _Opaque:
    pass


NOT_ARRAYS = [None, [1, None], ((None,),), object(), _Opaque(), "abc", (1, "x"), {"a": 1},
              {1, 2}, b"x", slice(1), Ellipsis, np.array([None]), np.array(["a"]),
              [1, [2, 3]], [[1, 2], [3]]]


@needs_jax
def _stable_id(value):
    """A test id without memory addresses (pytest-xdist workers must collect the same ids)."""
    text = repr(value)
    return type(value).__name__ if " at 0x" in text else text


@pytest.mark.parametrize("value", NOT_ARRAYS, ids=_stable_id)
@pytest.mark.parametrize("name", ["array", "asarray"])
def test_what_jnp_array_rejects_raises_jax_s_class(name, value):
    """None (anywhere in nested lists) and ragged lists are ValueErrors, other non-numbers
    TypeErrors, as JAX's jnp.array; the messages are jitviz's own."""
    with pytest.raises((TypeError, ValueError)) as theirs:
        getattr(jax_jnp, name)(value)
    with pytest.raises(theirs.type):
        getattr(jnp, name)(value)


def test_none_in_jnp_array_says_what_to_do():
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array.*pytree"):
        jnp.asarray([1.0, None])
