"""jitviz.jit: JAX-faithful caching semantics, the cache key, and the public surface."""
import functools
import gc
import threading
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import jit, lax

BACKENDS = ["interpret", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(autouse=True)
def _quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitviz.JitvizWarning)
        yield


def kinds(f):
    return [e.kind for e in f.events]


def test_usable_as_call_decorator_and_partial(backend):
    def f(x, n):
        return x * n

    g = jit(f, static_argnums=1, backend=backend)
    assert g(np.float32(2), 3) == 6

    @jit(backend=backend)
    def h(x):
        return x + 1
    assert h(1) == 2

    @functools.partial(jit, static_argnums=(1,), backend=backend)
    def k(x, n):
        return x * n
    assert k(2.0, 4) == 8.0
    assert k.__wrapped__.__name__ == "k"
    assert h.__name__ == "h"


def test_second_call_runs_compiled_code_only(backend, capsys):
    calls = []

    @jit(backend=backend)
    def f(x):
        calls.append(1)
        print("tracing")
        return x * 2

    assert f(np.ones(3, np.float32)).tolist() == [2, 2, 2]
    assert f(np.full(3, 5, np.float32)).tolist() == [10, 10, 10]
    assert len(calls) == 1
    assert capsys.readouterr().out.count("tracing") == 1
    assert kinds(f)[:3] == ["trace", "compile", "cache_hit"]
    info = f.cache_info()
    assert (info.hits, info.misses, info.entries, info.traces, info.compiles) == (1, 1, 1, 1, 1)


def test_a_run_of_hits_on_one_entry_is_one_cache_hit_event(backend):
    """Consecutive hits on one specialization count in one cache_hit event; a hit on another
    specialization, or any other event between, starts a new one."""
    f = jit(lambda x: x + 1, backend=backend)
    a, b = np.ones(3, np.float32), np.ones(4, np.float32)
    f(a)
    for _ in range(3):
        f(a)
    f(b)  # a new specialization: trace, compile
    f(a)
    f(b)
    f(b)
    f(a)
    hits = [(e.signature, e.count) for e in f.events if e.kind == "cache_hit"]
    assert hits == [("x:f32[3]", 3), ("x:f32[3]", 1), ("x:f32[4]", 2), ("x:f32[3]", 1)], hits
    assert [e.kind for e in f.events][-5:] == ["trace", "compile"] + ["cache_hit"] * 3
    f.clear_cache()
    f(a)
    f(a)
    assert [(e.kind, e.count) for e in f.events][-3:] == [("trace", 1), ("compile", 1),
                                                        ("cache_hit", 1)]


def test_same_function_shares_cache_across_jit_calls(backend):
    def body(i):
        return i + 1
    a, b = jit(body, backend=backend), jit(body, backend=backend)
    a(1)
    b(2)
    assert b.cache_info().misses == 1 and b.cache_info().hits == 1
    assert a.events is b.events


def test_key_includes_shape_dtype_weak_type_and_statics(backend):
    f = jit(lambda x: x + 1, backend=backend)
    f(np.zeros(3, np.float32))
    f(np.zeros(4, np.float32))
    f(np.zeros(4, np.int32))
    f(1.0)
    f(np.float32(1.0))
    reasons = [e.reason for e in f.events.of_kind("recompile")]
    assert reasons[0] == "argument 'x' changed from f32[3] to f32[4]"
    assert reasons[1] == "argument 'x' changed from f32[4] to i32[4]"
    assert reasons[3] == "argument 'x' changed from weakly typed f32[] to f32[]"
    assert f.cache_info().entries == 5


def test_static_argument_recompile_reason(backend):
    @functools.partial(jit, static_argnums=(1,), backend=backend)
    def f_loop(x, n):
        y = 0.
        for _ in range(n):
            y = y + x
        return y
    assert float(f_loop(2, 10)) == 20.0
    assert float(f_loop(2, 11)) == 22.0
    (rec,) = f_loop.events.of_kind("recompile")
    assert rec.reason == "static argument 'n' changed from 10 to 11"


def test_switching_x64_retraces_instead_of_reusing_the_other_modes_program(backend):
    # the body's named dtypes and Python scalars depend on the switch, the arguments do not:
    # the 64-bit mode is part of the key (as JAX's trace context), and the miss says why
    f = jit(lambda x: x + lax.iota(np.float64, 3) + jnp.arange(3), backend=backend)
    x = np.ones(3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # JAX's narrowing warning
        assert f(x).dtype == np.float32
    before = jitviz.config.enable_x64
    jitviz.config.update("enable_x64", True)
    try:
        assert f(x).dtype == np.float64
    finally:
        jitviz.config.update("enable_x64", before)
    (rec,) = f.events.of_kind("recompile")
    assert rec.reason == ("the 64-bit switches changed from enable_x64=False, keep_float64=False "
                          "to enable_x64=True, keep_float64=False")
    assert rec.details["kinds"] == ("dtype_mode",)
    assert f(x).dtype == np.float32 and f.cache_info().hits == 1  # each mode keeps its entry


def test_static_argnames_and_kwargs(backend):
    f = jit(lambda x, *, scale: x * scale, static_argnames="scale", backend=backend)
    assert float(f(2.0, scale=3)) == 6.0
    assert float(f(2.0, scale=4)) == 8.0
    assert f.cache_info().misses == 2


def test_pytree_structure_change_reason(backend):
    f = jit(lambda d: d["a"] + d.get("b", 0), backend=backend)
    f({"a": 1.0})
    f({"a": 1.0, "b": 2.0})
    (rec,) = f.events.of_kind("recompile")
    assert rec.reason.startswith("pytree structure of the arguments changed")
    assert "'b'" in rec.reason


def test_unhashable_static_argument_names_it(backend):
    f = jit(lambda x, shape: x.reshape(shape), static_argnums=1, backend=backend)
    with pytest.raises(ValueError, match="static argument 'shape'.*not hashable"):
        f(np.zeros(6), [2, 3])
    assert f(np.zeros(6), (2, 3)).shape == (2, 3)


@pytest.mark.parametrize("bad, kind", [("abc", "str"), (np.array(["a"]), "dtype"),
                                       (object(), "object")])
def test_bad_arguments_raise_type_error_naming_argument(backend, bad, kind):
    f = jit(lambda x: x, backend=backend)
    with pytest.raises(TypeError, match="argument 'x'"):
        f(bad)


def test_outputs_are_arrays_with_weak_type(backend):
    f = jit(lambda x: x * 2, backend=backend)
    out = f(2.0)
    assert isinstance(out, jitviz.Array)
    assert out.weak_type and out.dtype == np.float32
    out = f(np.float32(2.0))
    assert not out.weak_type
    assert out.block_until_ready() is out


def test_pytree_outputs_and_inputs(backend):
    f = jit(lambda p: {"sum": p[0] + p[1], "pair": (p[0], p[1] * 2)}, backend=backend)
    out = f((np.float32(1), np.float32(2)))
    assert float(out["sum"]) == 3.0 and float(out["pair"][1]) == 4.0


def test_lambda_is_freed_with_its_entries(backend):
    f = jit(lambda x: x + 1, backend=backend)
    f(1.0)
    fun_ref = __import__("weakref").ref(f.__wrapped__)
    cache_ref = __import__("weakref").ref(f._cache)
    del f
    gc.collect()
    assert fun_ref() is None
    assert cache_ref() is None


def test_lru_bound_evicts_with_event(backend):
    jitviz.config.update("jit_cache_size", 2)
    try:
        f = jit(lambda x: x + 1, backend=backend)
        for n in (1, 2, 3):
            f(np.zeros(n, np.float32))
        assert f.cache_info().entries == 2
        (ev,) = f.events.of_kind("eviction")
        assert "x:f32[1]" in ev.signature
    finally:
        jitviz.config.reset()


def test_clear_cache(backend):
    f = jit(lambda x: x * 3, backend=backend)
    f(1.0)
    f.clear_cache()
    f(1.0)
    assert f.cache_info().traces == 2


def test_two_threads_same_new_key_compile_once(backend):
    barrier = threading.Barrier(4)
    traced = []

    def body(x):
        traced.append(1)
        return x + 1

    f = jit(body, backend=backend)
    results = []

    def worker():
        barrier.wait()
        results.append(float(f(np.float32(1))))
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [2.0] * 4
    assert len(traced) == 1
    assert f.cache_info().compiles == 1


def test_nested_jit_records_jit_equation():
    inner = jit(lambda x: x * 2)
    closed = jitviz.make_jaxpr(lambda x: inner(x) + 1)(np.float32(1))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit", "add"]
    assert closed.jaxpr.eqns[0].params["name"] == "<lambda>"


def test_make_jaxpr_of_jitted_function_prints_jit_eqn():
    def f(x):
        return 2 * x * x + 3 * x + 3
    text = str(jitviz.make_jaxpr(jit(f))(3))
    assert text == (
        "{ lambda ; a:i32[]. let\n"
        "    b:i32[] = jit[\n"
        "      name=f\n"
        "      jaxpr={ lambda ; a:i32[]. let\n"
        "          c:i32[] = mul 2:i32[] a\n"
        "          d:i32[] = mul c a\n"
        "          e:i32[] = mul 3:i32[] a\n"
        "          f:i32[] = add d e\n"
        "          b:i32[] = add f 3:i32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }")


def test_static_jaxprs_of_the_seed():
    def f(x):
        if x < 3:
            return 3. * x ** 2
        return -4 * x
    static_f = jit(f, static_argnums=(0,))
    assert str(jitviz.make_jaxpr(static_f, static_argnums=(0,))(2)) == (
        "{ lambda ; . let\n"
        "    a:f32[] = jit[name=f jaxpr={ lambda ; . let  in (12.0:f32[],) }] \n"
        "  in (a,) }")
    assert "(-16:i32[],)" in str(jitviz.make_jaxpr(static_f, static_argnums=(0,))(4))


def test_lower_and_compile(backend):
    f = jit(lambda x, y: jnp.sin(x) * y, backend=backend)
    lowered = f.lower(np.ones(3, np.float32), np.float32(2))
    assert lowered.stages[0][0] == "traced"
    assert "sin" in lowered.as_text("traced")
    compiled = lowered.compile()
    out = compiled(np.zeros(3, np.float32), np.float32(2))
    assert out.tolist() == [0, 0, 0]
    assert compiled.kernels and all(k.name for k in compiled.kernels)


@pytest.mark.parametrize("name", ["cpu", "cuda", "interpret"])
def test_lower_runs_the_backends_own_pipeline(name, monkeypatch):
    """The stages are the backend's pipeline (`Backend.pipeline`), e.g. one without fusion."""
    from jitviz.backends import get_backend
    from jitviz.passes import SHARED
    backend = get_backend(name)
    monkeypatch.setattr(type(backend), "pipeline", SHARED)
    stages = jit(lambda x: jnp.sin(x) * 2.0, backend=name).lower(np.ones(3, np.float32)).stages
    assert [s.name for s in stages] == ["traced"] + [p.name for p in SHARED
                                                     if not p.fastmath_only]


def test_the_executable_records_the_stage_it_compiled(backend):
    f = jit(lambda x: jnp.sin(x) * 2.0, backend=backend)
    f(np.ones(3, np.float32))
    (entry,) = f.specializations
    compiled = "traced" if backend == "interpret" else entry.stages[-1].name
    assert entry.executable.stage == compiled
    assert entry.executable.jaxpr is dict(entry.stages)[compiled]
    assert f.lower(np.ones(3, np.float32)).compile().executable.stage == compiled


def test_block_until_ready_on_pytrees():
    tree = {"a": jnp.ones(3), "b": (1.0, jnp.zeros(2))}
    assert jitviz.block_until_ready(tree) is tree


def test_debug_print_runs_every_call(backend, capsys):
    @jit(backend=backend)
    def f(x):
        jitviz.debug.print("x is {}", x)
        return x + 1
    f(np.float32(1))
    f(np.float32(2))
    out = capsys.readouterr().out
    assert "x is 1.0" in out and "x is 2.0" in out
    assert not f.events.of_kind("side_effect_lost")


def test_jit_of_jit_unwraps(backend):
    f = jit(jit(lambda x: x + 1, backend=backend), backend=backend)
    assert float(f(1.0)) == 2.0


def test_seed_control_flow_examples(backend):
    @jit(backend=backend)
    def f_loop(x, n):
        return lax.fori_loop(0, n, lambda i, y: y + x, 0.)
    out = f_loop(jnp.array(2), 15)
    assert float(out) == 30.0 and out.dtype == np.float32 and out.weak_type

    @jit(backend=backend)
    def sum_up_to(x):
        return lax.while_loop(lambda c: c[1] <= x, lambda c: (c[0] + c[1], c[1] + 1),
                              (0, 1))[0]
    out = sum_up_to(jnp.array(10))
    assert int(out) == 55 and out.dtype == np.int32

    @jit(backend=backend)
    def myabs(x):
        return lax.cond(x > 0, lambda _: x, lambda _: -x, None)
    assert int(myabs(jnp.array(-2))) == 2


def test_norm_seed_matches_eager(backend):
    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)
    rng = np.random.default_rng(1701)
    X = jnp.array(rng.random((100, 10)), dtype=jnp.float32)
    np.testing.assert_allclose(norm(X), jit(norm, backend=backend)(X), atol=1e-6)


def test_precision_seed_is_ieee_exact_without_fastmath(backend):
    def f(x, y):
        return x + y - x
    x, y = jnp.array(1.0, dtype=jnp.float32), jnp.array(0.001, dtype=jnp.float32)
    assert float(jit(f, backend=backend)(x, y)) == float(np.float32(1) + np.float32(0.001)
                                                         - np.float32(1))


def test_repeated_calls_with_static_values_pick_the_right_entry(backend):
    f = jit(lambda x, n: x * n, static_argnums=1, backend=backend)
    for _ in range(3):  # the second round takes the dispatch shortcut
        assert [float(f(np.float32(2), n)) for n in (1, 2, 3)] == [2.0, 4.0, 6.0]
        assert float(f(np.float32(2), 2.5)) == 5.0  # 2.5 is a different static value
    assert f.cache_info().misses == 4
    with pytest.raises(ValueError, match="not hashable"):
        f(np.float32(2), [1])


# --- the cache hit's hot path (Entry.run_host) ----------------------------------------------

def _fast_flags(f):
    return sorted(host for _, _, host in f._cache.fast.values())


def test_a_hit_with_host_arrays_calls_the_driver_and_wraps_like_run():
    """A hit whose arguments are all NumPy arrays or jitviz Arrays goes straight to the CPU
    driver (`Entry.run_host`); its results are the same Arrays, weak types and pytree that
    the general path gives, for inputs the driver must convert (float64 without x64, a
    strided view) as for those it takes as they are."""
    f = jit(lambda x, y: {"p": x * y, "s": (x + y, y * 2.0)})
    x, y = np.arange(6, dtype=np.float32), np.linspace(0, 1, 6)  # y: float64 -> float32
    weak = jnp.asarray(3.0)  # a weakly typed 0-d Array
    g = jit(lambda w: w * 2.0)
    for _ in range(3):  # a miss, then hits
        out = f(x, y[::1])
        assert type(out["p"]) is jitviz.Array and out["p"].dtype == np.float32
        np.testing.assert_array_equal(out["p"], x * y.astype(np.float32))
        np.testing.assert_array_equal(out["s"][1], (y * 2.0).astype(np.float32))
        strided = f(x[::-1], y)["p"]
        np.testing.assert_array_equal(strided, x[::-1] * y.astype(np.float32))
        w = g(weak)
        assert type(w) is jitviz.Array and w.weak_type and float(w) == 6.0
    assert _fast_flags(f) == [True] and _fast_flags(g) == [True]  # (a layout is no key)
    assert f._cache.hits == 5 and g._cache.hits == 2


def test_hits_with_scalars_statics_or_refs_keep_the_converting_path():
    """Python and NumPy scalars go through `run`'s conversions (a Python int too big for
    int32 is JAX's OverflowError there), as do static arguments and Refs."""
    f = jit(lambda x, n: x * n)
    f(np.ones(3, np.float32), 2)
    f(np.ones(3, np.float32), np.float32(2))
    h = jit(lambda x, n: x * n, static_argnums=1)
    h(np.ones(3, np.float32), 2)
    assert _fast_flags(f) == [False, False] and _fast_flags(h) == [False]
    with pytest.raises(OverflowError):
        f(np.ones(3, np.float32), 2 ** 40)

    def bump(r):
        r[...] = r[...] + 1.0
    ref, k = jitviz.new_ref(np.zeros(3, np.float32)), jit(bump)
    k(ref)
    k(ref)
    assert _fast_flags(k) == [False]
    np.testing.assert_array_equal(np.asarray(ref[...]), np.full(3, 2, np.float32))


def test_debug_nans_checks_a_hit_on_the_hot_path():
    f = jit(lambda x: jnp.log(x))
    f(np.ones(3, np.float32))  # compiled; the next call is a hit with host arrays
    jitviz.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(-np.ones(3, np.float32))
    finally:
        jitviz.config.update("jax_debug_nans", False)
    assert _fast_flags(f) == [True]


def test_a_device_array_has_its_own_fast_key():
    """A device array and a host Array of one shape and dtype must not share a fast key: the
    Array's entry would send the device array to the host driver."""
    from jitviz.cache_keys import fast_key

    class Foreign:  # as a CuPy array
        shape, dtype = (4,), np.dtype(np.float32)
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False),
                                    "version": 3}
    host = np.zeros(4, np.float32).view(jitviz.Array)
    assert fast_key((Foreign(),)) != fast_key((host,))


def test_a_hit_with_concrete_arrays_inside_a_trace_is_staged():
    """A jitted function called inside another trace with concrete arrays whose fast key it
    has cached records a `jit` equation, as JAX's pjit does, rather than running: the hit's
    shortcut checks for a current trace."""
    inner = jit(lambda v: v * 2.0)
    c = np.ones(3, np.float32)
    inner(c)
    inner(c)  # the fast key is cached
    closed = jitviz.make_jaxpr(lambda x: inner(c) + x)(np.ones(3, np.float32))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit", "add"]
