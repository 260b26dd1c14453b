"""Benchmark a function the way `%jitbench` does, without IPython.

    from jitviz.bench import jitbench
    r = jitbench(selu, x, backends=("interpret",))
    print(r)                 # the report: cold call, steady state, baseline, speedup, break-even
    r.timings["baseline"].median, r.cold.compile_s, r.break_even_calls, r.to_dict()

What it measures, in order, for each backend:

1. **The cold call** on a jit with its own, fresh cache (see `isolated_jit`: the user's cache,
   counters and events are left as they are), split into trace, compile and first-run time from
   the events of that call. When the backend took compiled kernels from its kernel cache, the
   report says so instead of calling it a compile; `cold=True` asks the backend to skip that
   cache (see `bypass_kernel_cache`).
2. `warmup` more calls, then autorange like `%timeit` on warm calls only: the number of loops
   is chosen so that one repeat takes at least 0.2 s (or `n`), then `r` repeats.
   `block_until_ready` is called on every result inside the timed region; the garbage collector
   is off while timing, as in `timeit`.
3. The baseline: the original Python function, run eagerly (jitviz.numpy executes op by op).
4. Speedup (baseline median / jit median) and the break-even call count: the number of calls
   after which jit, cold call included, has cost less in total than the baseline:
   ceil((cold total - jit per call) / (baseline per call - jit per call)); `math.inf` ("never")
   when the jitted function is not faster per call.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import io
import itertools
import math
import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .backends import check_backend_name, get_backend
from .errors import JitvizWarning
from .html_blocks import (COLORS, Raw, box, esc, fmt_time, html_table, svg_bars, svg_stacked,
                          text_table)

__all__ = ["jitbench", "BenchResult", "Timing", "ColdCall", "autorange", "isolated_jit",
           "bypass_kernel_cache", "forget_compiles", "backend_list", "check_backend_available",
           "MIN_REPEAT_S", "SPREAD_WARNING"]

MIN_REPEAT_S = 0.2  # autorange: loops so that one repeat takes at least this long
SPREAD_WARNING = 1.5  # warn when the slowest repeat is this many times the fastest


# --- results ---------------------------------------------------------------------------------

@dataclass
class Timing:
    """Steady-state timing of one label (a backend name or "baseline"), seconds per call."""
    label: str
    loops: int
    repeats: int
    per_call: list[float]  # every repeat's time divided by `loops`

    @property
    def median(self) -> float:
        return statistics.median(self.per_call)

    @property
    def min(self) -> float:
        return min(self.per_call)

    @property
    def max(self) -> float:
        return max(self.per_call)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.per_call)

    @property
    def iqr(self) -> float:
        """Interquartile range (q3 - q1, inclusive method); 0 for a single repeat."""
        if len(self.per_call) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.per_call, n=4, method="inclusive")
        return q3 - q1

    @property
    def spread(self) -> float:
        """max / min over the repeats (1.0 = perfectly steady)."""
        return self.max / self.min if self.min > 0 else math.inf

    def to_dict(self) -> dict:
        return {"label": self.label, "loops": self.loops, "repeats": self.repeats,
                "per_call": list(self.per_call), "median": self.median, "min": self.min,
                "max": self.max, "mean": self.mean, "iqr": self.iqr}


@dataclass
class ColdCall:
    """The first call with an empty cache, split using the events of that call."""
    backend: str
    trace_s: float
    compile_s: float
    run_s: float  # everything else: key building, dispatch, the first run, block_until_ready
    total_s: float
    kernels_built: int = 0
    kernels_reused: int = 0  # taken from the backend's kernel cache instead of compiled
    equations: int | None = None
    forced: bool = False  # cold=True: the kernel cache was bypassed
    bypass: str | None = None  # how (None: the backend offers no way)

    @property
    def from_kernel_cache(self) -> bool:
        return self.kernels_reused > 0

    def to_dict(self) -> dict:
        return {"backend": self.backend, "trace_s": self.trace_s, "compile_s": self.compile_s,
                "run_s": self.run_s, "total_s": self.total_s,
                "kernels_built": self.kernels_built, "kernels_reused": self.kernels_reused,
                "equations": self.equations, "forced": self.forced, "bypass": self.bypass}


@dataclass
class BenchResult:
    """What `jitbench` measured. `.cold`, `.speedup` and `.break_even_calls` are those of the
    first backend; `.colds`, `.speedups`, `.break_evens` hold every backend's."""
    function: str
    call: str
    signature: str
    backends: list[str]
    baseline: str  # "python" or "none"
    colds: dict[str, ColdCall] = field(default_factory=dict)
    timings: dict[str, Timing] = field(default_factory=dict)
    speedups: dict[str, float | None] = field(default_factory=dict)
    break_evens: dict[str, float | None] = field(default_factory=dict)  # inf: never
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def cold(self) -> ColdCall | None:
        return self.colds.get(self.backends[0]) if self.backends else None

    @property
    def speedup(self) -> float | None:
        """Baseline median / jit median for the first backend (None without a baseline)."""
        return self.speedups.get(self.backends[0]) if self.backends else None

    @property
    def break_even_calls(self) -> float | None:
        """Calls until jit (cold call included) pays off: an int, `math.inf` for "never",
        None without a baseline."""
        return self.break_evens.get(self.backends[0]) if self.backends else None

    def to_dict(self) -> dict:
        """Plain JSON-able data (break-even "never" as the string "never")."""
        def be(v):
            return "never" if v is not None and math.isinf(v) else v
        return {"function": self.function, "call": self.call, "signature": self.signature,
                "backends": list(self.backends), "baseline": self.baseline,
                "cold": self.cold.to_dict() if self.cold else None,
                "colds": {k: v.to_dict() for k, v in self.colds.items()},
                "timings": {k: v.to_dict() for k, v in self.timings.items()},
                "speedup": self.speedup, "break_even_calls": be(self.break_even_calls),
                "speedups": dict(self.speedups),
                "break_evens": {k: be(v) for k, v in self.break_evens.items()},
                "warnings": list(self.warnings), "notes": list(self.notes)}

    # -- reports ---------------------------------------------------------------------------
    def report(self) -> "BenchReport":
        """The displayable report (HTML with an SVG chart in notebooks, text elsewhere)."""
        return BenchReport(self)

    def __str__(self) -> str:
        return _text_report(self)

    def __repr__(self) -> str:
        parts = [f"<BenchResult {self.call}:"]
        for b in self.backends:
            t = self.timings.get(b)
            if t is not None:
                parts.append(f"{b} {fmt_time(t.median)}/call,")
        if self.speedup is not None:
            parts.append(f"{self.speedup:.2f}x vs baseline, break-even "
                         f"{_fmt_calls(self.break_even_calls)}")
        return " ".join(parts).rstrip(",") + ">"


class BenchReport:
    """Rich display of a `BenchResult`: `_repr_html_` (tables, SVG bars) and plain text."""

    def __init__(self, result: BenchResult):
        self.result = result

    def __repr__(self):
        return _text_report(self.result)

    def _repr_pretty_(self, p, cycle):
        p.text(_text_report(self.result))

    def _repr_html_(self):
        return _html_report(self.result)


# --- the isolated jit --------------------------------------------------------------------------

_isolated_counter = itertools.count(1)


def _jit_module():
    return importlib.import_module("jitviz.jit")  # `jitviz.jit` the attribute is the function


class isolated_jit:
    """A `jit` of `fun` with a private cache, for measuring and inspecting without touching the
    user's: `jitviz.jit` shares one cache (and event log, and counters) between every `jit` of
    the same function object, so a benchmark on `jit(f)` would find the user's compiled entry
    (no cold call to measure) or leave its own entries and events behind.

    How: `fun` is called through a new wrapper function object whose code object is unique
    (a fresh `co_name`), with `__wrapped__ = fun`, so that jit keys a brand-new cache on it while
    the trace, its names, globals, closure and error messages are still `fun`'s. A unique code
    object also keeps jit's per-code retrace-churn bookkeeping (`RetraceWarning` for "jit of a
    lambda in a loop") from counting these copies; `release()` (or leaving the `with` block)
    drops that bookkeeping for the copy.

        with isolated_jit(f, backend="interpret") as jf:
            jf(x); jf.events; jf.cache_info()

    `fun` may be a jitted function: its static arguments, backend, fastmath and parallel are
    the defaults, and keyword arguments here override them.
    """

    def __init__(self, fun, **options):
        from .jit import JitFunction, jit
        base, defaults = unwrap_jit(fun)
        defaults.update({k: v for k, v in options.items() if v is not None})
        n = next(_isolated_counter)

        def isolated(*args, **kwargs):
            return base(*args, **kwargs)

        isolated.__code__ = isolated.__code__.replace(co_name=f"_jitviz_isolated_{n}")
        isolated.__name__ = getattr(base, "__name__", "fun")
        isolated.__qualname__ = getattr(base, "__qualname__", isolated.__name__)
        isolated.__doc__ = getattr(base, "__doc__", None)
        isolated.__module__ = getattr(base, "__module__", None)
        isolated.__wrapped__ = base  # inspect.signature, jit's names and globals follow it
        self._code = isolated.__code__
        self.fun = base
        self.jitted: JitFunction = jit(isolated, **defaults)

    def __enter__(self):
        return self.jitted

    def __exit__(self, *exc):
        self.release()

    def release(self) -> None:
        _jit_module().forget_compile_records(self._code)


def forget_compiles(fun) -> int:
    """Drop jit's per-code-object compile records of the function under `fun` (plain or
    jitted); returns how many were dropped.

    jit counts, per code object, the function objects it compiled, to diagnose "jit of a
    lambda inside a loop" (`retrace_churn`, `RetraceWarning`) and to explain a first compile as
    "a new function object for the same code". Re-running a notebook cell that defines `f`
    makes a new function object with equal code every time, which is not that mistake:
    `%%jit` calls this for the definition it replaces. (The only other place that touches
    these records is `isolated_jit.release`.)
    """
    base = unwrap_jit(fun)[0]
    code = getattr(base, "__code__", None)
    if code is None:
        return 0
    return _jit_module().forget_compile_records(code, only=base)


def unwrap_jit(fun) -> tuple[Callable, dict]:
    """(the Python function, the jit options to reproduce) for a plain or a jitted function."""
    from .jit import JitFunction
    if isinstance(fun, JitFunction):
        spec = getattr(fun, "_spec", None)
        opts = {"backend": fun.backend, "fastmath": fun.fastmath, "parallel": fun.parallel}
        if spec is not None:
            opts["static_argnums"] = tuple(spec.static_argnums)
            opts["static_argnames"] = tuple(spec.static_argnames)
        return fun.__wrapped__, opts
    return fun, {}


def bypass_kernel_cache(backend_name: str):
    """(context manager, description): run a compile with the backend's kernel cache off.

    The protocol, for backends to implement: a method `bypass_kernel_cache()` on the backend
    object returning a context manager (aliases looked for: `no_kernel_cache`,
    `disable_kernel_cache`), or a `kernel_cache` attribute with a `disabled()` context manager.
    (None as the description: this backend offers no way; the compile may still reuse kernels.)
    """
    backend = get_backend(backend_name)
    for attr in ("bypass_kernel_cache", "no_kernel_cache", "disable_kernel_cache"):
        fn = getattr(backend, attr, None)
        if callable(fn):
            return fn(), f"{type(backend).__name__}.{attr}()"
    cache = getattr(backend, "kernel_cache", None)
    if cache is not None and callable(getattr(cache, "disabled", None)):
        return cache.disabled(), f"{type(backend).__name__}.kernel_cache.disabled()"
    return contextlib.nullcontext(), None


# --- timing ------------------------------------------------------------------------------------

class _Discard(io.TextIOBase):
    """stdout while timing: a function that prints would flood the output a million times."""

    def __init__(self):
        self.chars = 0

    def writable(self):
        return True

    def write(self, s):
        self.chars += len(s)
        return len(s)


def time_loops(call: Callable[[], Any], loops: int, timer: Callable[[], float]) -> float:
    """Seconds for `loops` calls of `call`, with the garbage collector off (as timeit)."""
    it = itertools.repeat(None, loops)
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        t0 = timer()
        for _ in it:
            call()
        t1 = timer()
    finally:
        if gc_was_on:
            gc.enable()
    return t1 - t0


@contextlib.contextmanager
def _quiet_stdout(result: "BenchResult", label: str):
    sink = _Discard()
    with contextlib.redirect_stdout(sink):
        yield
    if sink.chars:
        result.notes.append(f"{label}: the timed calls printed {sink.chars:,} characters "
                            "(not shown)")


def autorange(call: Callable[[], Any], timer: Callable[[], float] = time.perf_counter,
              min_time: float = MIN_REPEAT_S, max_loops: int = 10 ** 9) -> tuple[int, float]:
    """(loops, seconds): the smallest loop count in 1, 2, 5, 10, 20, 50, ... for which one
    repeat takes at least `min_time` (the calibration runs are warm calls, then discarded)."""
    for i in itertools.count():
        for j in (1, 2, 5):
            loops = j * 10 ** i
            took = time_loops(call, loops, timer)
            if took >= min_time or loops >= max_loops:
                return loops, took
    raise AssertionError("unreachable")  # pragma: no cover


def measure(call: Callable[[], Any], label: str, *, n: int | None, r: int,
            timer: Callable[[], float] = time.perf_counter,
            min_time: float = MIN_REPEAT_S) -> Timing:
    loops = n if n is not None else autorange(call, timer, min_time)[0]
    per_call = [time_loops(call, loops, timer) / loops for _ in range(r)]
    return Timing(label, loops, r, per_call)


# --- the benchmark -----------------------------------------------------------------------------

def jitbench(fn, *args, n: int | None = None, r: int = 7, warmup: int = 1,
             backends: Sequence[str] | str | None = None, baseline: str = "python",
             cold: bool = False, kwargs: dict | None = None,
             static_argnums=None, static_argnames=None,
             timer: Callable[[], float] = time.perf_counter, min_time: float = MIN_REPEAT_S,
             call: str | None = None) -> BenchResult:
    """Benchmark `fn(*args, **kwargs)` jitted on each of `backends` against the baseline.

    `fn` is a plain or a jitted function (its static arguments and options are kept; the
    Python function underneath is the baseline). `backends`: names, or "cpu,interpret"; default:
    the jitted function's backend, else "cpu". `n`: loops per repeat (default: autorange to
    `min_time` seconds); `r`: repeats; `warmup`: warm calls before timing; `baseline`: "python"
    (the original function run eagerly) or "none"; `cold`: bypass the kernel cache for the cold
    call. `timer` is for tests. Returns a `BenchResult` (`print` it for the report).
    """
    from .jit import block_until_ready
    kwargs = dict(kwargs or {})
    if r < 1:
        raise ValueError(f"r (repeats) must be at least 1, got {r}")
    if n is not None and n < 1:
        raise ValueError(f"n (loops per repeat) must be at least 1, got {n}")
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0, got {warmup}")
    if baseline not in ("python", "none"):
        raise ValueError(f"baseline must be 'python' or 'none', got {baseline!r}")
    base, jit_opts = unwrap_jit(fn)
    if static_argnums is not None:
        jit_opts["static_argnums"] = static_argnums
    if static_argnames is not None:
        jit_opts["static_argnames"] = static_argnames
    backends = backend_list(backends, jit_opts.get("backend"))
    name = getattr(base, "__name__", "fun")
    result = BenchResult(function=name, call=call or f"{name}(...)", signature="",
                         backends=backends, baseline=baseline)

    with warnings.catch_warnings():
        # the copies' diagnostics would repeat the user's (lost prints, ...): report, not warn
        warnings.simplefilter("ignore", JitvizWarning)
        for b in backends:
            iso = isolated_jit(base, **{**jit_opts, "backend": b})
            jf = iso.jitted
            try:
                result.colds[b] = _cold_call(jf, args, kwargs, cold, timer, result)

                def run(jf=jf):
                    return block_until_ready(jf(*args, **kwargs))
                misses = jf.cache_info().misses
                with _quiet_stdout(result, b):
                    for _ in range(warmup):
                        run()
                    result.timings[b] = measure(run, b, n=n, r=r, timer=timer,
                                                min_time=min_time)
                _note_events(jf, b, misses, result)
            finally:
                iso.release()

    if baseline == "python":
        def run_base():
            return block_until_ready(base(*args, **kwargs))
        with _quiet_stdout(result, "baseline"):
            try:
                for _ in range(max(warmup, 1)):
                    run_base()
            except Exception as err:  # noqa: BLE001 - reported, the jit timings still stand
                result.warnings.append(f"the baseline (the Python function run eagerly) "
                                       f"failed: {type(err).__name__}: {err}")
            else:
                result.timings["baseline"] = measure(run_base, "baseline", n=n, r=r,
                                                     timer=timer, min_time=min_time)

    _derive(result)
    return result


def backend_list(backends, default) -> list[str]:
    """The backends to measure: `backends` (names, or "cpu,interpret"), else `default`, else
    "cpu"; each one checked to exist and to run here."""
    if backends is None:
        backends = [default or "cpu"]
    elif isinstance(backends, str):
        backends = [b.strip() for b in backends.split(",") if b.strip()]
    out = list(dict.fromkeys(backends))
    if not out:
        raise ValueError("no backend given")
    for b in out:
        check_backend_name(b)
        check_backend_available(b)
    return out


def check_backend_available(name: str) -> None:
    """Raise ValueError, saying why, unless backend `name` can compile on this machine."""
    try:
        backend = get_backend(name)
    except (ImportError, ValueError) as err:
        raise ValueError(f"backend {name!r} is not available here ({err}); try "
                         "backend='interpret'") from err
    ok, why = backend.available()
    if not ok:
        raise ValueError(f"backend {name!r} is not available here: {why}")


def _cold_call(jf, args, kwargs, force: bool, timer, result: BenchResult) -> ColdCall:
    from .jit import block_until_ready
    bypass_cm, how = bypass_kernel_cache(jf.backend) if force else (contextlib.nullcontext(),
                                                                   None)
    start = len(jf.events)
    with bypass_cm:
        t0 = timer()
        block_until_ready(jf(*args, **kwargs))
        total = timer() - t0
    events = list(jf.events)[start:]
    trace = next((e for e in events if e.kind == "trace"), None)
    comp = next((e for e in events if e.kind == "compile"), None)
    trace_s = trace.duration_s if trace is not None else 0.0
    compile_s = comp.duration_s if comp is not None else 0.0
    if not result.signature and (trace or comp):
        result.signature = (trace or comp).signature
        result.call = result.call if not result.call.endswith("(...)") else \
            f"{result.function}({result.signature})"
    cold = ColdCall(backend=jf.backend, trace_s=trace_s, compile_s=compile_s,
                    run_s=max(total - trace_s - compile_s, 0.0), total_s=total,
                    kernels_built=getattr(comp, "details", {}).get("kernels_built", 0)
                    if comp else 0,
                    kernels_reused=getattr(comp, "details", {}).get("kernels_reused", 0)
                    if comp else 0,
                    equations=trace.details.get("equations") if trace else None,
                    forced=force, bypass=how)
    if force and how is None:
        msg = (f"--cold: the {jf.backend} backend offers no way to bypass its kernel cache "
               "(jitviz.bench.bypass_kernel_cache)")
        if cold.kernels_reused:
            result.warnings.append(msg + f"; {cold.kernels_reused} kernel(s) were still reused")
        else:
            result.notes.append(msg + "; nothing was reused this time")
    if cold.kernels_reused and not (force and how):
        if cold.kernels_built == 0:
            result.notes.append(
                f"{jf.backend}: the cold call compiled nothing: all {cold.kernels_reused} "
                "kernel(s) came from the kernel cache (use --cold / cold=True to force a "
                "compile)")
        else:
            result.notes.append(
                f"{jf.backend}: {cold.kernels_reused} kernel(s) came from the kernel cache, "
                f"{cold.kernels_built} were compiled")
    for e in events:
        if e.kind in ("unrolled_loop", "tracer_leak"):
            result.notes.append(f"{jf.backend}: {e.message}")
    return cold


def _note_events(jf, backend, misses_before, result: BenchResult) -> None:
    info = jf.cache_info()
    if info.misses > misses_before:
        reasons = [e.reason for e in jf.events.of_kind("recompile")]
        why = f": {reasons[-1]}" if reasons else ""
        result.warnings.append(
            f"{backend}: {info.misses - misses_before} recompile(s) happened during timing"
            f"{why}; the timings include tracing and compiling")
    lost = jf.events.of_kind("side_effect_lost")
    if lost:
        result.notes.append(f"{backend}: {lost[0].message}")
    stale = jf.events.of_kind("stale_global")
    if stale:
        result.warnings.append(f"{backend}: {stale[-1].message}")


def _derive(result: BenchResult) -> None:
    base = result.timings.get("baseline")
    for b in result.backends:
        t = result.timings.get(b)
        cold = result.colds.get(b)
        if t is None:
            continue
        if t.spread > SPREAD_WARNING:
            result.warnings.append(
                f"{b}: the slowest repeat took {t.spread:.1f}x as long as the fastest: the "
                "machine was busy or the loops too short; treat the numbers with care")
        if base is None:
            result.speedups[b] = None
            result.break_evens[b] = None
            continue
        result.speedups[b] = base.median / t.median if t.median > 0 else math.inf
        saved = base.median - t.median
        if saved <= 0 or cold is None:
            result.break_evens[b] = math.inf
        else:
            result.break_evens[b] = max(1, math.ceil((cold.total_s - t.median) / saved))
    if base is not None and base.spread > SPREAD_WARNING:
        result.warnings.append(
            f"baseline: the slowest repeat took {base.spread:.1f}x as long as the fastest")


# --- rendering -----------------------------------------------------------------------------------

def _fmt_calls(v) -> str:
    if v is None:
        return "—"
    if math.isinf(v):
        return "never"
    return f"{int(v):,} call{'s' if v != 1 else ''}"


def _cold_line(c: ColdCall) -> str:
    if c.kernels_reused and not c.kernels_built:
        comp = f"kernel cache {fmt_time(c.compile_s)} ({c.kernels_reused} kernel(s) reused, " \
               "nothing compiled)"
    elif c.kernels_reused:
        comp = f"compile {fmt_time(c.compile_s)} ({c.kernels_built} built, {c.kernels_reused} " \
               "from the kernel cache)"
    else:
        comp = f"compile {fmt_time(c.compile_s)}"
    forced = " [kernel cache bypassed]" if c.forced and c.bypass else ""
    return (f"{fmt_time(c.total_s)} = trace {fmt_time(c.trace_s)} + {comp} + first run "
            f"{fmt_time(c.run_s)}{forced}")


def _timing_rows(result: BenchResult):
    rows = []
    for label in list(result.backends) + ["baseline"]:
        t = result.timings.get(label)
        if t is None:
            continue
        shown = "baseline (python)" if label == "baseline" else f"jit ({label})"
        sp = result.speedups.get(label)
        rows.append([shown, fmt_time(t.median), fmt_time(t.min), fmt_time(t.iqr),
                     f"{t.loops:,} x {t.repeats}",
                     "" if label == "baseline" or sp is None else f"{sp:.2f}x",
                     "" if label == "baseline" else _fmt_calls(result.break_evens.get(label))])
    return rows


_HEADERS = ["", "median", "min", "IQR", "loops x repeats", "speedup", "break-even"]
_ALIGN = ["left", "right", "right", "right", "right", "right", "right"]


def _title(result: BenchResult) -> str:
    if result.signature and result.signature not in result.call:
        return f"{result.call}   [{result.signature}]"
    return result.call


def _verdicts(result: BenchResult):
    """(backend, speedup, break-even calls as text, or None for never) per timed backend."""
    for b in result.backends:
        sp, be = result.speedups.get(b), result.break_evens.get(b)
        if sp is not None:
            yield b, sp, None if be is not None and math.isinf(be) else _fmt_calls(be)


def _text_report(result: BenchResult) -> str:
    lines = [f"jitbench {_title(result)}"]
    for b, c in result.colds.items():
        lines.append(f"  cold call ({b}, fresh cache): {_cold_line(c)}")
    lines.append("  per call (warm):")
    lines.append(text_table(_HEADERS, _timing_rows(result), _ALIGN, indent="    "))
    for b, sp, calls in _verdicts(result):
        if calls is None:
            lines.append(f"  {b}: {sp:.2f}x the baseline's speed: jit does not pay off here, "
                         "break-even never (the compiled call is not faster)")
        else:
            lines.append(f"  {b}: {sp:.2f}x faster than the baseline; pays for its cold call "
                         f"after {calls}")
    for n in result.notes:
        lines.append(f"  note: {n}")
    for w in result.warnings:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)


def _html_report(result: BenchResult) -> str:
    parts = [f'<div><b>jitbench</b> <code>{esc(_title(result))}</code></div>']
    for b, c in result.colds.items():
        parts.append(f"<div>cold call (<b>{esc(b)}</b>, fresh cache): {esc(_cold_line(c))}</div>")
    parts.append(html_table(_HEADERS, _timing_rows(result), _ALIGN,
                            caption="per call, warm (block_until_ready included)"))
    summary = []
    for b, sp, calls in _verdicts(result):
        if calls is None:
            summary.append(f"<b>{esc(b)}</b>: {sp:.2f}x the baseline — jit does not pay off "
                           "here: break-even <b>never</b>")
        else:
            summary.append(f"<b>{esc(b)}</b>: <b>{sp:.2f}x</b> faster than the baseline; pays "
                           f"for its cold call after <b>{esc(calls)}</b>")
    if summary:
        parts.append("<div>" + "<br>".join(summary) + "</div>")
    items = []
    for label in list(result.backends) + ["baseline"]:
        t = result.timings.get(label)
        if t is not None:
            items.append((label, t.median, t.min, t.max,
                          COLORS["baseline"] if label == "baseline" else COLORS["bar"]))
    charts = [svg_bars(items, title="median time per call (whisker: min–max)")]
    for b, c in result.colds.items():
        step = "kernel cache" if c.kernels_reused and not c.kernels_built else "compile"
        charts.append(svg_stacked(f"cold call ({b})", [("trace", c.trace_s, COLORS["trace"]),
                                                       (step, c.compile_s, COLORS["compile"]),
                                                       ("first run", c.run_s, COLORS["run"])]))
    parts.append("<div>" + "".join(charts) + "</div>")
    for n in result.notes:
        parts.append(box(esc(f"note: {n}"), "#888"))
    for w in result.warnings:
        parts.append(box(Raw("⚠ " + esc(w)), COLORS["warn"]))
    return '<div class="jitviz-bench">' + "".join(parts) + "</div>"
