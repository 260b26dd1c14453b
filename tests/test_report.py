"""`ClosedJaxpr.report`: what happened while tracing, beyond the jaxpr.

Prints (line and text; the print still happens), mutations of global and closed-over
containers and `global` stores, tracers left in such containers, reads of nondeterministic
sources, and the number of equations each source line produced.
"""
from __future__ import annotations

import dataclasses
import inspect
import random
import sys
import time

import numpy as np

import jitviz
import jitviz.numpy as jnp
from jitviz import lax

from helpers import line_of

HERE = __file__


# --- prints ----------------------------------------------------------------------------------

def noisy(x):
    print("tracing", x.shape)  # MARK out
    print("to stderr", file=sys.stderr)  # MARK err
    return x * 2


def test_prints_are_recorded_and_still_happen(capsys):
    closed = jitviz.make_jaxpr(noisy)(np.ones(3, np.float32))
    out = capsys.readouterr()
    assert out.out == "tracing (3,)\n" and out.err == "to stderr\n"
    prints = closed.report.prints
    assert [(p.stream, p.text) for p in prints] == [("stdout", "tracing (3,)\n"),
                                                    ("stderr", "to stderr\n")]
    assert prints[0].source.file == HERE and prints[0].source.line == line_of(noisy, "MARK out")
    assert prints[1].source.line == line_of(noisy, "MARK err")
    assert prints[0].source.function == "noisy"
    assert closed.report.has_side_effects
    assert any("print(...)" in s for s in closed.report.side_effect_lines())


def test_print_inside_a_loop_body_is_recorded_once(capsys):
    def f(x):
        def body(c, a):
            print("body sees", c)  # MARK
            return c + a, None
        return lax.scan(body, x, jnp.ones(4))[0]
    closed = jitviz.make_jaxpr(f)(1.0)
    assert capsys.readouterr().out.count("body sees") == 1
    (p,) = closed.report.prints
    assert p.source.line == line_of(f, "# MARK") and "Traced<" in p.text


def test_a_pure_function_has_an_empty_report():
    closed = jitviz.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0)
    r = closed.report
    assert not (r.prints or r.mutations or r.tracer_leaks or r.nondeterministic)
    assert not r.has_side_effects and r.side_effect_lines() == []


# --- mutations and leaks ------------------------------------------------------------------------

log = []
counter = 0
settings = {}


def mutating(x):
    global counter
    log.append("called")  # MARK append
    counter = counter + 1  # MARK global
    log.append(x * 2)  # MARK leak
    return x


def test_global_list_mutation_global_store_and_leaked_tracer():
    log.clear()
    closed = jitviz.make_jaxpr(mutating)(1.0)
    muts = closed.report.mutations
    appends = [m for m in muts if m.kind == "container" and m.name == "log"]
    assert [m.source.line for m in appends] == [line_of(mutating, "MARK append"),
                                                line_of(mutating, "MARK leak")]
    assert all(m.detail == "log.append(...)" for m in appends)
    stores = [m for m in muts if m.kind == "global_store"]
    assert [(m.name, m.source.line) for m in stores] == [("counter",
                                                          line_of(mutating, "MARK global"))]
    (leak,) = closed.report.tracer_leaks
    assert leak.name == "log[1]" and leak.tracer_repr.startswith("Traced<ShapedArray(float32[]")
    assert any("tracer was left in log[1]" in s for s in closed.report.side_effect_lines())
    log.clear()


def test_leaked_tracer_points_at_the_line_that_stored_it():
    log.clear()
    closed = jitviz.make_jaxpr(mutating)(1.0)
    (leak,) = closed.report.tracer_leaks
    log.clear()
    assert leak.source.line == line_of(mutating, "MARK leak")


def _closure_over_a_dict():
    state = {}

    def f(x):
        state["last"] = x  # MARK
        return x + 1
    return f, state


def test_closed_over_dict_store_and_leak_are_recorded():
    f, state = _closure_over_a_dict()
    closed = jitviz.make_jaxpr(f)(1.0)
    assert [(m.kind, m.name) for m in closed.report.mutations] == [("container", "state")]
    assert [leak.name for leak in closed.report.tracer_leaks] == ["state['last']"]


def test_closed_over_dict_store_records_its_line():
    f, _ = _closure_over_a_dict()
    closed = jitviz.make_jaxpr(f)(1.0)
    (m,) = closed.report.mutations
    assert m.source is not None and m.source.line == line_of(f, "# MARK")


def test_global_dict_method_mutation():
    def f(x):
        settings.update(scale=2)  # MARK
        return x
    settings.clear()
    closed = jitviz.make_jaxpr(f)(1.0)
    (m,) = closed.report.mutations
    assert (m.name, m.detail, m.source.line) == ("settings", "settings.update(...)",
                                                 line_of(f, "# MARK"))
    settings.clear()


# --- nondeterminism ------------------------------------------------------------------------------

def reads_clock_and_random(x):
    t = time.time()  # MARK time
    r = random.random()  # MARK random
    return x * t + r


def test_reads_of_time_and_random_are_recorded():
    closed = jitviz.make_jaxpr(reads_clock_and_random)(1.0)
    reads = [(r.call, r.source.line) for r in closed.report.nondeterministic]
    assert ("time.time()", line_of(reads_clock_and_random, "MARK time")) in reads
    assert any(call.startswith("random.") and line == line_of(reads_clock_and_random,
                                                             "MARK random")
               for call, line in reads)
    # the values were baked into the jaxpr as constants
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul", "add"]


def test_reads_of_numpy_random_are_recorded():
    def f(x):
        return x + np.random.rand()  # MARK
    closed = jitviz.make_jaxpr(f)(1.0)
    assert [r.source.line for r in closed.report.nondeterministic] == [line_of(f, "# MARK")]


@dataclasses.dataclass
class _Dense:  # eq=True without frozen: unhashable, as many users' modules are
    w: np.ndarray

    def __call__(self, x):
        return x @ self.w


_LAYER = _Dense(np.ones((3, 2), np.float32))
_SCALE = np.full(2, 2.0, np.float32)
_BIAS = np.ones(2, np.float32)


def test_unhashable_callables_and_arrays_on_a_constants_line_are_not_reads():
    """The scan for clock and entropy calls looks up each `name(` on a constant's line: an
    unhashable module called there, or an array named before a parenthesis in a comment,
    crashed the trace with TypeError until 2026-11-27."""
    def f(x):
        return _LAYER(x) * _SCALE + _BIAS  # scaled by _BIAS (the bias)
    closed = jitviz.make_jaxpr(f)(np.ones(3, np.float32))
    assert not closed.report.nondeterministic
    np.testing.assert_array_equal(jitviz.jit(f)(np.ones(3, np.float32)), [7.0, 7.0])


# --- equations per line ----------------------------------------------------------------------

def unrolled(x):
    for i in range(300):
        x = x * 1.01 + i  # MARK
    return x


def test_equations_per_source_line_flag_unrolled_loops():
    closed = jitviz.make_jaxpr(unrolled)(1.0)
    key = (HERE, line_of(unrolled, "# MARK"), "x = x * 1.01 + i  # MARK")
    assert closed.report.eqns_per_line[key] >= 600  # a mul and an add per iteration
    (hot,) = closed.report.hot_lines(300)
    assert hot[0] == key and hot[1] == len(closed.jaxpr.eqns)


def test_a_structured_loop_is_one_equation_per_line():
    def f(x):
        return lax.fori_loop(0, 300, lambda i, v: v * 1.01 + i, x)
    closed = jitviz.make_jaxpr(f)(1.0)
    assert max(closed.report.eqns_per_line.values()) < 10
    assert closed.report.hot_lines(200) == []


# --- provenance: equations point at the user's line, constants say where they came from ------

W_GLOBAL = np.arange(12, dtype=np.float32).reshape(3, 4)
W_INT = np.arange(12, dtype=np.int32).reshape(3, 4)
OFFSET = 3


def uses_globals(x):
    y = x @ W_GLOBAL + OFFSET  # MARK globals
    return y + x @ W_INT + 2.5  # MARK converted


def test_constants_name_their_global():
    from helpers import trace_and_check
    x = np.ones((2, 3), np.float32)
    ref = (x @ W_GLOBAL + 3 + x @ W_INT.astype(np.float32) + 2.5).astype(np.float32)
    closed = trace_and_check(uses_globals, x, expected=ref, eager=False)
    origins = {(v.origin.kind, v.origin.name) for v in closed.jaxpr.constvars}
    assert origins == {("global", "W_GLOBAL"), ("global", "W_INT")}  # W_INT was converted
    literals = {str(a): a.origin for e in closed.jaxpr.eqns for a in e.invars
                if isinstance(a, jitviz.Literal)}
    assert (literals["3.0:f32[]"].kind, literals["3.0:f32[]"].name) == ("global", "OFFSET")
    assert literals["2.5:f32[]"].kind == "literal"
    w = next(v for v in closed.jaxpr.constvars if v.origin.name == "W_GLOBAL")
    assert w.origin.source.line == line_of(uses_globals, "MARK globals")
    assert "W_GLOBAL" in w.origin.describe()


def test_closure_constants_name_their_variable():
    def make():
        scale = np.full(4, 2, np.float32)
        return lambda x: x * scale
    closed = jitviz.make_jaxpr(make())(np.ones(4, np.float32))
    (v,) = closed.jaxpr.constvars
    assert (v.origin.kind, v.origin.name) == ("closure", "scale")


def test_arrays_computed_while_tracing_are_marked_computed():
    closed = jitviz.make_jaxpr(lambda x: x + np.arange(3.0))(np.ones(3))
    (v,) = closed.jaxpr.constvars
    assert v.origin.kind == "computed" and v.origin.source.file == HERE


def provenance(x):
    a = jnp.sin(x)  # MARK sin
    b = np.cos(a) + a[0]  # MARK numpy
    c = b.sum() * 2  # MARK method
    return lax.fori_loop(0, 3, lambda i, v: v * 2 + i, c)  # MARK loop


def test_every_equation_points_at_the_users_line():
    from helpers import all_eqns
    closed = jitviz.make_jaxpr(provenance)(np.ones(3, np.float32))
    lines = {}
    for eqn in all_eqns(closed):
        assert eqn.source.file == HERE, (eqn, eqn.source)
        lines.setdefault(eqn.source.line, set()).add(eqn.primitive.name)
        assert eqn.source.code == inspect.getsource(provenance).splitlines()[
            eqn.source.line - provenance.__code__.co_firstlineno].strip()
    assert lines[line_of(provenance, "MARK sin")] == {"sin"}
    assert {"cos", "slice", "squeeze", "add"} <= lines[line_of(provenance, "MARK numpy")]
    assert {"reduce_sum", "mul"} <= lines[line_of(provenance, "MARK method")]
    assert {"scan", "mul", "add"} <= lines[line_of(provenance, "MARK loop")]


# --- another profiler is running (cProfile, IPython's %prun) -----------------------------------

def test_tracing_under_cprofile_keeps_the_users_profile_and_says_what_it_did_not_watch():
    import cProfile
    import pstats

    log = []

    def appends(x):
        log.append(1)  # a C-method mutation the profile hook would have seen
        return jnp.sin(x) * 2

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        out = jitviz.jit(appends)(np.float32(0.5))
        still_ours = sys.getprofile() is profiler
    finally:
        profiler.disable()
    assert still_ours  # tracing neither replaced nor broke the user's profiler
    assert float(out) == np.float32(np.sin(np.float32(0.5)) * 2)
    profiled = {fn for (_, _, fn) in pstats.Stats(profiler).stats}
    assert "appends" in profiled  # the traced function was profiled, not hidden
    report = jitviz.make_jaxpr(appends)(np.float32(0.5)).report
    assert report.unwatched_because == ""  # without cProfile, the hook watches
    assert [m.detail for m in report.mutations] == ["log.append(...)"]


def test_a_trace_under_cprofile_reports_why_it_was_not_watched():
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        report = jitviz.make_jaxpr(lambda x: x + 1)(1.0).report
    finally:
        profiler.disable()
    assert "cProfile" in report.unwatched_because or "_lsprof" in report.unwatched_because
