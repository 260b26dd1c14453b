"""The diagnostics of jit: every pitfall of the seeds produces its event and warning."""
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import errors, jit

g = 0.
squared_numbers = []
global_list = []


def impure_uses_globals(x):
    return x + g


def test_stale_global_seed_example():
    global g
    g = 0.
    jit_f = jit(impure_uses_globals, backend="interpret")
    assert float(jit_f(3.)) == 3.0
    g = 10.
    with pytest.warns(jitviz.StaleGlobalWarning, match="global 'g' was 0.0 when traced and "
                      "is now 10.0: the compiled code still uses 0.0; pass it as an argument "
                      "or call impure_uses_globals.clear_cache()"):
        assert float(jit_f(4.)) == 4.0  # JAX semantics: the old value is baked in
    (ev,) = jit_f.events.of_kind("stale_global")
    assert ev.name == "g" and ev.traced == "0.0" and ev.now == "10.0"
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.StaleGlobalWarning)
        jit_f(5.)  # warned once per cause: no second warning
    assert ev.count == 2
    assert jit_f(jnp.array([4.])).tolist() == [14.0]  # a new shape retraces with g = 10
    g = 0.


def test_stale_closure_variable_and_small_array():
    weights = np.array([1.0, 2.0])

    def f(x):
        return x * weights
    jf = jit(f, backend="interpret")
    jf(np.float32(1.0))
    weights[0] = 5.0  # mutated in place: a small array is compared by value
    with pytest.warns(jitviz.StaleGlobalWarning, match="closed-over variable 'weights'"):
        assert jf(np.float32(1.0)).tolist() == [1.0, 2.0]


def test_bad_f_side_effect_lost(capsys):
    @jit(backend="interpret")
    def bad_f(x):
        print("I have side effects!")
        return jnp.sin(x) + jnp.cos(x) + x

    first = bad_f(2)
    assert capsys.readouterr().out == "I have side effects!\n"
    with pytest.warns(jitviz.SideEffectWarning, match=r"print\(\.\.\.\) at line \d+ ran once "
                      "while tracing and is skipped on this and every later call; use "
                      "jitviz.debug.print to print every call"):
        second = bad_f(2)
    assert capsys.readouterr().out == ""
    assert float(first) == float(second) == pytest.approx(2.4931505)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bad_f(2)
    (ev,) = bad_f.events.of_kind("side_effect_lost")
    assert ev.count == 2  # later hits are counted, not repeated


def test_number_squared_global_list_mutation_and_leak():
    squared_numbers.clear()

    def number_squared(num):
        global squared_numbers
        squared = num ** 2
        squared_numbers.append(squared)
        return squared

    f = jit(number_squared, backend="interpret")
    with pytest.warns(jitviz.JitvizWarning):
        for num in (4, 8, 16):
            f(num)
    assert [int(f(n)) for n in (4, 8)] == [16, 64]
    assert len(squared_numbers) == 1  # the append ran once, while tracing
    leak = f.events.of_kind("tracer_leak")
    assert leak and "squared_numbers[0]" in leak[0].message
    (lost,) = f.events.of_kind("side_effect_lost")
    assert "squared_numbers.append(...)" in lost.message
    with pytest.raises(errors.UnexpectedTracerError, match="number_squared"):
        squared_numbers[0] + 1


def test_global_store_is_a_lost_side_effect():
    def f(x):
        global counter
        counter = 1
        return x
    jf = jit(f, backend="interpret")
    jf(1.0)
    with pytest.warns(jitviz.SideEffectWarning, match="global counter"):
        jf(1.0)


def unjitted_loop_body(prev_i):
    return prev_i + 1


def test_jit_of_lambda_in_loop_is_retrace_churn():
    def g_inner_jitted_lambda(x):
        i = 0
        while i < 20:
            i = jit(lambda x: unjitted_loop_body(x), backend="interpret")(i)
        return x + i

    with pytest.warns(jitviz.RetraceWarning, match="compiled 3 times for the same signature"):
        assert g_inner_jitted_lambda(10) == 30


def test_jit_of_named_function_in_loop_reuses_cache():
    def g_inner_jitted_normal(x):
        i = 0
        while i < 20:
            i = jit(unjitted_loop_body, backend="interpret")(i)
        return x + i
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.RetraceWarning)
        assert g_inner_jitted_normal(10) == 30
    info = jit(unjitted_loop_body, backend="interpret").cache_info()
    assert info.compiles == 1 and info.hits >= 19


def test_new_function_object_for_same_code_reason():
    def make():
        return lambda x: x + 1
    jit(make(), backend="interpret")(1.0)
    second = jit(make(), backend="interpret")
    second(1.0)
    (rec,) = second.events.of_kind("recompile")
    assert rec.reason.startswith("a new function object for the same code (<lambda> at ")


def test_unrolled_python_loop_is_flagged():
    def f(x):
        y = x
        for _ in range(250):
            y = y + 1.0
        return y
    jf = jit(f, backend="interpret")
    with pytest.warns(jitviz.UnrolledLoopWarning, match="produced 250 equations.*lax.fori_loop"):
        jf(np.float32(0))
    (ev,) = jf.events.of_kind("unrolled_loop")
    assert ev.equations == 250 and ev.cost_s >= 0


def test_warnings_can_be_switched_off():
    jitviz.config.update("warn_side_effects", False)
    try:
        @jit(backend="interpret")
        def f(x):
            print("trace time")
            return x
        f(1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            f(1.0)
        assert f.events.of_kind("side_effect_lost")  # the event is still recorded
    finally:
        jitviz.config.reset()


def test_subscribe_sees_events_as_they_happen():
    seen = []
    unsubscribe = jitviz.subscribe(lambda cache, ev: seen.append((cache.name, ev.kind)))
    try:
        f = jit(lambda x: x * 2, backend="interpret")
        f(1.0)
        f(1.0)
    finally:
        unsubscribe()
    assert ("<lambda>", "trace") in seen and ("<lambda>", "cache_hit") in seen
    assert any(c.name == "<lambda>" for c in jitviz.registry())


def test_event_objects_have_kind_time_signature():
    f = jit(lambda x: x + 1, backend="interpret")
    f(np.zeros(2, np.float32))
    ev = f.events[0]
    assert ev.kind == "trace" and ev.time > 0 and ev.signature == "x:f32[2]"
    assert ev.duration_s >= 0 and ev.to_dict()["kind"] == "trace"
    comp = f.events.of_kind("compile")[0]
    assert comp.backend == "interpret" and comp.kernels_built >= 1


def test_rerunning_a_cell_is_not_retrace_churn():
    source = "def f(x):\n    return x * 3\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.RetraceWarning)
        for _ in range(4):  # a notebook cell run four times: equal code, new code objects
            ns = {}
            exec(compile(source, "<cell>", "exec"), ns)
            jit(ns["f"], backend="interpret")(1.0)


def test_static_argname_passed_by_keyword():
    f = jit(lambda x, n: x * n, static_argnums=(1,), backend="interpret")
    assert float(f(2.0, n=3)) == 6.0
    assert float(f(2.0, n=4)) == 8.0
    assert [e.reason for e in f.events.of_kind("recompile")] == [
        "static argument 'n' changed from 3 to 4"]


def test_reusing_a_random_key_is_an_event():
    import jitviz.random as jr

    def f(key):
        a = jr.uniform(key, (2,))
        b = jr.uniform(key, (2,))  # the same key again: correlated numbers
        return a + b
    jf = jit(f, backend="interpret")
    with pytest.warns(jitviz.JitvizWarning, match="key"):
        jf(jr.PRNGKey(0))
    (ev,) = jf.events.of_kind("key_reuse")
    assert "key" in ev.message and ev.line is not None


def test_get_negatives_under_jit_names_the_mask():
    @jit(backend="interpret")
    def get_negatives(x):
        return x[x < 0]

    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        get_negatives(jnp.array(np.random.default_rng(0).standard_normal(10)))
    msg = str(info.value)
    assert msg.startswith("Array boolean indices must be concrete; got bool[10]")
    assert "argument x" in msg and "return x[x < 0]" in msg and "jnp.where" in msg
    assert not get_negatives.cache_info().entries  # nothing was cached


def test_example_fun_traced_length_is_a_type_error():
    @jit(backend="interpret")
    def example_fun(length):
        return jnp.ones((length,))
    with pytest.raises(TypeError, match="static_argnums=\\(0,\\)"):
        example_fun(5)
    assert jit(example_fun.__wrapped__, static_argnums=0, backend="interpret")(5).shape == (5,)


helper_scale = 2.0
tanh_alias = jnp.tanh  # a global of the user's module naming a library function


def _scaled_tanh(x):
    return tanh_alias(x) * helper_scale


def test_the_checked_bindings_are_the_users_not_a_librarys():
    """Each cache hit checks every global and closure variable the trace could have baked in
    (stale_global). The user's are checked, their helpers' too (`helper_scale`, read by
    `_scaled_tanh`); a library's functions are not looked into (jitviz's: `jnp.log` named
    22 module globals of jitviz.numpy, checked on every call of `jit(jnp.log)`)."""
    f = jit(jnp.log, backend="interpret")
    f.clear_cache()  # (jit's cache is per function: other tests jit jnp.log too)
    f(np.float32(2.0))
    (entry,) = f._cache.entries.values()
    assert entry.checks == []
    g = jit(lambda x: _scaled_tanh(x) + 1, backend="interpret")
    g(np.float32(0.5))
    (entry,) = g._cache.entries.values()
    assert {c.name for c in entry.checks} == {"_scaled_tanh", "tanh_alias", "helper_scale"}
    # a library's wrapper (a transform's closure) holding the user's function: followed,
    # with no `__wrapped__` to lead there
    batched = jitviz.vmap(_scaled_tanh)
    vars(batched).pop("__wrapped__", None)
    h = jit(batched, backend="interpret")
    h(np.ones(2, np.float32))
    (entry,) = h._cache.entries.values()
    assert {c.name for c in entry.checks} == {"tanh_alias", "helper_scale"}
    global helper_scale
    helper_scale = 3.0
    try:
        with pytest.warns(jitviz.StaleGlobalWarning, match="global 'helper_scale' was 2.0"):
            g(np.float32(0.5))
    finally:
        helper_scale = 2.0


def test_globals_of_helpers_from_other_modules_are_read_in_their_own_module():
    # `run` lives in another module and reads that module's globals (UNARY, BINARY, ...):
    # the traced lambda's module has no such names, which is not a global store
    from test_hypothesis_programs import run
    program = [("u", "sin", (0,), ())]
    f = jit(lambda x: run(program, jnp, [x])[0], backend="interpret")
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.SideEffectWarning)
        f(np.float32(1.0))
        f(np.float32(2.0))
    assert not f.events.of_kind("side_effect_lost")


def test_a_failing_trace_is_an_error_event_naming_the_line():
    def piecewise(x):
        if x < 3:  # the failing line
            return 3.0 * x ** 2
        return -4 * x
    f = jit(piecewise, backend="interpret")
    with pytest.raises(errors.TracerBoolConversionError):
        f(2.0)
    (ev,) = f.events.of_kind("error")
    assert ev.stage == "trace" and ev.error == "TracerBoolConversionError"
    assert "if x < 3:  # the failing line" in ev.message
    assert not f.events.of_kind("compile")


def test_compile_events_say_nothing_was_compiled_when_every_kernel_was_reused():
    def make():
        def body(x):
            return jnp.sin(x) * 2.5 + 1.25
        return body
    x = np.linspace(0, 1, 7, dtype=np.float32)
    first = jit(make(), backend="cpu")
    first(x)
    (built,) = first.events.of_kind("compile")
    # a new function object of the same code: a cache of its own, whose compile finds every
    # kernel in the kernel cache
    again = jit(make(), backend="cpu")
    again(x)
    (loaded,) = again.events.of_kind("compile")
    assert loaded.kernels_built == 0 and loaded.kernels_reused >= 1
    assert "nothing compiled" in loaded.message and "kernel cache" in loaded.message
    assert not loaded.message.startswith("compiled")
    if built.kernels_built:  # a cold cache: the first one did compile
        assert built.message.startswith("compiled for cpu")


def test_one_library_call_that_builds_a_big_program_is_not_an_unrolled_loop():
    # jitviz.random.gamma makes over a thousand equations from the user's one line: a single
    # call, not a Python loop, so no unrolled-loop warning (a loop of calls still warns)
    from jitviz import random
    f = jitviz.jit(lambda key: random.gamma(key, 2.5, (10,)))
    f(random.PRNGKey(0))
    assert max(f.specializations[0].report.eqns_per_line.values()) >= \
        jitviz.config.unrolled_loop_threshold
    assert not f.events.of_kind("unrolled_loop")

    def loop(x):
        for _ in range(250):
            x = x + 1
        return x
    g = jitviz.jit(loop)
    g(1.0)
    assert len(g.events.of_kind("unrolled_loop")) == 1
