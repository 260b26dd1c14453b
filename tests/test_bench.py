"""jitviz.bench: the plain benchmarking API behind %jitbench (no IPython needed).

No assertion depends on how fast anything is: only on structure and on relations that always
hold. The autorange rule is checked with a fake clock."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import bench
from jitviz.backends import get_backend
from jitviz.backends.base import Backend
from jitviz.bench import BenchResult, ColdCall, Timing, autorange, isolated_jit, jitbench

B = "interpret"


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def tiny(x, y):
    return x + y


class FakeClock:
    """`timer()` reads the clock; each call of the benchmarked function advances it by `dt`."""

    def __init__(self, dt):
        self.now = 0.0
        self.dt = dt
        self.calls = 0

    def __call__(self):
        return self.now

    def tick(self):
        self.calls += 1
        self.now += self.dt


@pytest.mark.parametrize("dt", [0.3, 0.07, 0.03, 1e-3, 3e-7])
def test_autorange_picks_the_first_loop_count_reaching_the_minimum(dt):
    clock = FakeClock(dt)
    loops, took = autorange(clock.tick, timer=clock, min_time=0.2)
    assert took == pytest.approx(loops * dt)
    assert loops * dt >= 0.2
    # the candidate before it (1, 2, 5, 10, 20, 50, ...) was too short
    candidates = [j * 10 ** i for i in range(12) for j in (1, 2, 5)]
    k = candidates.index(loops)
    assert k == 0 or candidates[k - 1] * dt < 0.2


def test_measure_with_a_fake_clock():
    clock = FakeClock(0.01)
    t = bench.measure(clock.tick, "x", n=None, r=4, timer=clock, min_time=0.2)
    assert t.loops == 20 and t.repeats == 4 and len(t.per_call) == 4
    assert all(p == pytest.approx(0.01) for p in t.per_call)
    t = bench.measure(clock.tick, "x", n=3, r=2, timer=clock)
    assert t.loops == 3 and len(t.per_call) == 2


def test_timing_statistics():
    t = Timing("cpu", loops=10, repeats=5, per_call=[5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.min, t.median, t.max) == (1.0, 3.0, 5.0)
    assert t.iqr == pytest.approx(2.0)  # q1 = 2, q3 = 4 (inclusive quartiles)
    assert t.spread == 5.0
    assert Timing("x", 1, 1, [2.0]).iqr == 0.0
    json.dumps(t.to_dict())


def test_jitbench_structure_and_relations():
    x = jnp.arange(1000.0)
    r = jitbench(selu, x, n=5, r=3, warmup=2, backends=B)
    assert isinstance(r, BenchResult)
    assert r.backends == [B] and set(r.timings) == {B, "baseline"}
    for t in r.timings.values():
        assert (t.loops, t.repeats, len(t.per_call)) == (5, 3, 3)
        assert 0 < t.min <= t.median <= t.max and t.iqr >= 0
    c = r.cold
    assert isinstance(c, ColdCall) and c.backend == B
    assert c.trace_s > 0 and c.compile_s >= 0 and c.run_s >= 0
    assert c.total_s >= c.trace_s + c.compile_s
    assert c.kernels_built >= 1 and c.kernels_reused == 0 and c.equations == 6
    assert r.signature == "x:f32[1000]"
    j, b = r.timings[B].median, r.timings["baseline"].median
    assert r.speedup == pytest.approx(b / j)
    if b > j:
        assert r.break_even_calls == max(1, math.ceil((c.total_s - j) / (b - j)))
    else:
        assert r.break_even_calls == math.inf
    d = json.loads(json.dumps(r.to_dict()))
    assert d["cold"]["trace_s"] == c.trace_s and d["timings"][B]["loops"] == 5
    assert d["break_even_calls"] == ("never" if r.break_even_calls == math.inf
                                     else r.break_even_calls)
    text = str(r)
    assert "cold call (interpret, fresh cache)" in text and "baseline (python)" in text
    html = r.report()._repr_html_()
    assert "<svg" in html and html.count("<table") == 1


def test_jitbench_never_pays_off_reports_never():
    r = BenchResult("f", "f(x)", "x:f32[]", [B], "python",
                    colds={B: ColdCall(B, 1e-3, 1e-3, 1e-5, 2.01e-3)},
                    timings={B: Timing(B, 10, 3, [2e-6] * 3),
                             "baseline": Timing("baseline", 10, 3, [1e-6] * 3)})
    bench._derive(r)
    assert r.speedup == pytest.approx(0.5) and r.break_even_calls == math.inf
    assert r.to_dict()["break_even_calls"] == "never"
    assert "never" in str(r) and "never" in r.report()._repr_html_()
    r2 = BenchResult("f", "f(x)", "x:f32[]", [B], "python",
                     colds={B: ColdCall(B, 60.0, 40.0, 0.25, 100.25)},
                     timings={B: Timing(B, 10, 3, [0.25] * 3),
                              "baseline": Timing("baseline", 10, 3, [0.5] * 3)})
    bench._derive(r2)
    # 400 calls: 100.25 + 399 * 0.25 == 400 * 0.5
    assert r2.speedup == 2.0 and r2.break_even_calls == 400


def test_spread_and_recompile_warnings():
    r = BenchResult("f", "f(x)", "", [B], "none",
                    timings={B: Timing(B, 1, 2, [1e-3, 2e-3])})
    bench._derive(r)
    assert any("1.5" in w or "2.0x" in w for w in r.warnings)
    assert r.speedup is None and r.break_even_calls is None

    with isolated_jit(tiny, backend=B) as jf:
        jf(1.0, 2.0)
        misses = jf.cache_info().misses
        jf(np.ones(3, np.float32), 2.0)  # a recompile "during timing"
        r = BenchResult("tiny", "tiny(...)", "", [B], "none")
        bench._note_events(jf, B, misses, r)
    assert len(r.warnings) == 1 and "recompile" in r.warnings[0]
    assert "changed from" in r.warnings[0]


def test_jitbench_leaves_the_users_cache_and_diagnostics_alone():
    f = jitviz.jit(selu, backend=B)
    x = jnp.arange(10.0)
    f(x)
    before, n_events = f.cache_info(), len(f.events)
    records = getattr(__import__("jitviz.jit", fromlist=["_"]), "_compiles_by_code")
    n_codes = len(records)
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitviz.RetraceWarning)
        for _ in range(4):
            jitbench(f, x, n=2, r=2, baseline="none")
    assert f.cache_info() == before and len(f.events) == n_events
    assert len(records) == n_codes  # the isolated copies left no bookkeeping behind
    # a fresh jit of the same function is a first compile, not "a new function object"
    g = jitviz.jit(tiny, backend=B)
    for _ in range(4):
        jitbench(tiny, 1.0, 2.0, n=2, r=1, backends=B, baseline="none")
    g(1.0, 2.0)
    assert not g.events.of_kind("recompile")


def test_isolated_jit_traces_as_the_users_function():
    def piecewise(x):
        if x < 3:
            return x
        return -x

    with isolated_jit(piecewise, backend=B) as jf:
        assert jf.__name__ == "piecewise"
        with pytest.raises(jitviz.errors.TracerBoolConversionError) as info:
            jf(1.0)
    assert info.value.source.function == "piecewise"
    assert info.value.source.code == "if x < 3:"
    assert "piecewise" in str(info.value)

    def loop(x, n):
        for _ in range(n):
            x = x + 1
        return x
    with isolated_jit(jitviz.jit(loop, static_argnames="n", backend=B)) as jf:
        assert float(jf(1.0, 3)) == 4.0  # the jitted function's static argument is kept
        assert jf.backend == B


def test_jitbench_keeps_static_arguments_and_kwargs():
    def scaled(x, n, scale=1.0):
        y = x
        for _ in range(n):
            y = y * scale
        return y
    f = jitviz.jit(scaled, static_argnums=1, backend=B)
    r = jitbench(f, np.ones(3, np.float32), 4, kwargs={"scale": 2.0}, n=2, r=2)
    assert r.backends == [B]
    assert "n=4" in r.signature


def test_jitbench_printing_function_prints_once_and_says_so(capsys):
    def loud(x):
        print("hello from loud")
        return x * 2
    r = jitbench(loud, 1.0, n=3, r=2, backends=B)
    out = capsys.readouterr().out
    assert out.count("hello from loud") == 1  # the trace; timed calls are not echoed
    assert any("printed" in n for n in r.notes)
    assert any("ran once while tracing" in n for n in r.notes)


def test_jitbench_baseline_failure_and_none():
    def only_traced(x):
        if type(x) is float:  # a tracer while tracing; the float itself when run eagerly
            raise RuntimeError("eager call")
        return x + 1
    r = jitbench(only_traced, 1.0, n=2, r=2, backends=B)
    assert "baseline" not in r.timings and r.speedup is None
    assert any("baseline" in w and "eager call" in w for w in r.warnings)
    r = jitbench(tiny, 1.0, 2.0, n=2, r=2, backends=B, baseline="none")
    assert set(r.timings) == {B} and r.break_even_calls is None


def test_jitbench_argument_errors():
    for kw in ({"r": 0}, {"n": 0}, {"warmup": -1}, {"baseline": "numpy"},
               {"backends": "nope"}, {"backends": ""}):
        with pytest.raises(ValueError):
            jitbench(tiny, 1.0, 2.0, **{"backends": B, **kw})


class ReusingBackend(Backend):
    """The interpreter, claiming its kernels came from a kernel cache unless bypassed."""
    name = B

    def __init__(self, inner):
        self.inner = inner
        self.bypassed = 0
        self._off = False

    def compile(self, closed, **kw):
        exe = self.inner.compile(closed, **kw)
        for k in exe.kernels:
            k.reused = not self._off
        return exe

    def bypass_kernel_cache(self):
        import contextlib

        @contextlib.contextmanager
        def cm():
            self._off = True
            self.bypassed += 1
            try:
                yield
            finally:
                self._off = False
        return cm()


def test_kernel_cache_reuse_is_reported_and_cold_bypasses_it(monkeypatch):
    from jitviz import backends
    fake = ReusingBackend(get_backend(B))
    monkeypatch.setitem(backends._BACKENDS, B, fake)
    r = jitbench(tiny, 1.0, 2.0, n=2, r=1, backends=B, baseline="none")
    assert r.cold.kernels_reused == 1 and r.cold.kernels_built == 0
    assert r.cold.from_kernel_cache and not r.cold.forced
    assert any("kernel cache" in n for n in r.notes)
    assert "from the kernel cache" in str(r)
    r = jitbench(tiny, 1.0, 2.0, n=2, r=1, backends=B, baseline="none", cold=True)
    assert fake.bypassed == 1
    assert r.cold.kernels_reused == 0 and r.cold.kernels_built == 1
    assert r.cold.forced and r.cold.bypass == "ReusingBackend.bypass_kernel_cache()"


def test_cold_without_a_bypass_says_so():
    r = jitbench(tiny, 1.0, 2.0, n=2, r=1, backends=B, baseline="none", cold=True)
    assert r.cold.forced and r.cold.bypass is None
    assert any("no way to bypass" in m for m in r.notes + r.warnings)


def _cpu_available():
    try:
        return get_backend("cpu").available()[0]
    except Exception:  # noqa: BLE001 - not there yet, or Numba missing
        return False


@pytest.mark.skipif(not _cpu_available(), reason="the Numba CPU backend is not available")
def test_cpu_kernel_cache_reuse_is_reported_and_cold_forces_a_compile():
    def poly(x):
        return 2 * x * x + 3 * x + 3
    x = np.ones(4, np.float32)
    first = jitbench(poly, x, n=2, r=1, backends="cpu", baseline="none")
    assert first.cold.kernels_built + first.cold.kernels_reused >= 1
    again = jitbench(poly, x, n=2, r=1, backends="cpu", baseline="none")
    # the same kernel text again: the backend's kernel cache has it
    assert again.cold.kernels_reused >= 1 and again.cold.kernels_built == 0
    assert "nothing compiled" in str(again)
    cold = jitbench(poly, x, n=2, r=1, backends="cpu", baseline="none", cold=True)
    assert cold.cold.forced and cold.cold.bypass is not None
    assert cold.cold.kernels_reused == 0 and cold.cold.kernels_built >= 1
    # and the shared kernel cache was not replaced by the temporary one
    after = jitbench(poly, x, n=2, r=1, backends="cpu", baseline="none")
    assert after.cold.kernels_reused >= 1
