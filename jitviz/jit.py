"""`jitviz.jit`: trace once per abstract signature, compile, cache — and say what happened.

Semantics follow `jax.jit`: a call with a new cache key runs the Python body once (its prints
and mutations happen then), compiles and runs; a call with a known key runs only the compiled
code. The key is the function object, the pytree structure, each leaf's (shape, dtype,
weak_type) and the static argument values. Every trace, compile, cache hit and recompile is an
event (`f.events`), with the reason; lost side effects, stale globals, leaked tracers, retrace
churn and unrolled loops are diagnosed as they happen.
"""
from __future__ import annotations

import collections
import contextlib
import functools
import threading
import time
import types
import weakref
from typing import NamedTuple

import numpy as np

from . import budget, debug_nans, dtypes
from .array import Array
from .backends import check_backend_name
from .cache_keys import (Key, check_hashable, describe_key_change, dtype_mode, fast_key,
                         key_change_kinds, nearest, signature_text)
from .config import config
from .core.report import TraceReport, fingerprint, read_binding
from .core.source import function_location, function_name, user_source_info
from .core.trace import JaxprTrace, current_trace, host_array, is_device_array, \
    push_trace, to_array
from .diagnostics import Event, EventLog, describe_code_location, describe_line
from .staging import ArgSpec, SplitArgs, arg_spec, leaf_avals, merge_static, split_args, \
    trace_to_jaxpr
from .state import NestedRefWrite, Ref
from .stages import Compiled, Lowered, Traced, _compile, _lower  # noqa: F401 (jitviz.Compiled)
from .tree import tree_flatten, tree_unflatten


class CacheInfo(NamedTuple):
    """`f.cache_info()`: calls that hit and missed the cache, cached entries, traces,
    compiles, kernels the backend reused from its kernel cache, and seconds spent compiling."""
    hits: int
    misses: int
    entries: int
    traces: int
    compiles: int
    kernels_reused: int
    compile_seconds: float


# --- cache entries -------------------------------------------------------------------------

class _BindingCheck(NamedTuple):
    name: str
    kind: str
    read: object  # () -> current value
    traced_id: int
    traced_fp: str
    summary: str


class Entry:
    """One specialization: the traced jaxpr, the pipeline's stages and the executable."""

    def __init__(self, key, paths, closed, stages, executable, backend_name):
        self.key = key
        self.paths = paths
        self.signature = signature_text(paths, key.avals, key.statics)
        self.closed = closed
        self.stages = stages
        self.executable = executable
        self.backend = backend_name
        self.in_avals = key.avals
        self.out_avals = closed.jaxpr.out_avals
        self.out_tree = closed.out_tree
        self.report: TraceReport = closed.report
        self.hits = 0
        # the executable's driver where it takes host arrays as they come and converts them
        # itself (the CPU's): `run_host` calls it with no conversion of its own
        self.host_driver = executable.host_driver if closed.refs is None else None
        self.created = time.perf_counter()  # orders f.specializations
        self.side_effect_event: Event | None = None
        self.stale_events: dict[str, tuple[str, Event]] = {}
        self.checks = _binding_checks(closed.report)
        self.needs_attention = bool(self.checks) or closed.report.has_side_effects
        self.single_output = self.out_tree is not None and self.out_tree.kind is None
        # a host driver's outputs have their avals' dtypes and shapes (it allocates them so):
        # one non-weak output needs only the view `_wrap` would make, which is one step where
        # `_wrap`'s checks cost 7-9 us of a call after a large kernel (caches cold)
        self.view_output = self.single_output and self.host_driver is not None and \
            not self.out_avals[0].weak_type
        self.name = "?"  # the function's, set by the cache that builds it

    def run(self, leaves):
        refs = self.closed.refs
        if refs is None:
            outs = _call_executable(self.executable, leaves, self.in_avals, self.out_avals)
        else:  # Refs' current values go in; their final values are written back in place
            inputs = refs.inputs(leaves)
            outs = _call_executable(self.executable, inputs, self.closed.jaxpr.in_avals,
                                    self.out_avals)
        if config.debug_nans or config.debug_infs:
            debug_nans.check_jitted(self.name, self.closed, leaves if refs is None else inputs,
                                    outs)
        if refs is not None:
            outs = refs.write_back(leaves, outs)
        if self.single_output:
            return outs[0]
        return tree_unflatten(self.out_tree, outs)

    def run_host(self, leaves):
        """`run` for leaves that are all NumPy arrays or jitviz Arrays, on an entry with a
        `host_driver`: the cache hit's hot path. Each call after a large kernel runs with
        the caches cold, where every step costs 5-10 times what it costs warm; so no step
        here that the driver repeats (its `_prep_array` converts what `run` would)."""
        outs = self.host_driver(*leaves)
        if config.debug_nans or config.debug_infs:
            debug_nans.check_jitted(self.name, self.closed, leaves, outs)
        if self.view_output:
            return outs[0].view(Array)
        if self.single_output:
            return _wrap(outs[0], self.out_avals[0])
        return tree_unflatten(self.out_tree, [_wrap(o, av) for o, av in zip(outs, self.out_avals)])


def _call_executable(executable, leaves, in_avals, out_avals):
    """Run a backend's executable on argument leaves; outputs as jitviz arrays.

    A backend that keeps results on a device (CUDA) has `wrap_outputs` and takes device
    arrays as they are; the others get host arrays. Arrays and NumPy scalars of the right
    dtype pass untouched (the hot path); Python scalars become NumPy values of the jaxpr's
    dtype.
    """
    wrap = getattr(executable, "wrap_outputs", None)
    args = [leaf if _passes_as_is(leaf, av, wrap) else host_array(leaf, av.dtype)
            for leaf, av in zip(leaves, in_avals)]
    raw = executable(*args)
    if wrap is not None:
        return wrap(raw, out_avals)
    return [_wrap(o, av) for o, av in zip(raw, out_avals)]


def _passes_as_is(leaf, aval, wrap) -> bool:
    t = type(leaf)
    if t is np.ndarray or t is Array:
        return leaf.dtype == aval.dtype  # else converted (float64 is float32 without x64)
    if isinstance(leaf, np.generic):
        return leaf.dtype == aval.dtype
    return wrap is not None and is_device_array(leaf)


def _wrap(value, aval):
    """A backend's output as a jitviz Array of the exact abstract type (cheap when it is)."""
    if type(value) is np.ndarray and value.dtype == aval.dtype and value.shape == aval.shape:
        out = value.view(Array)
        if aval.weak_type:
            out.weak_type = True
        return out
    return to_array(value, aval)


def _binding_checks(report: TraceReport):
    return [_BindingCheck(b.name, b.kind, functools.partial(read_binding, b, _MISSING),
                          b.value_id, b.fingerprint, b.summary)
            for b in report.captured.values()]


_MISSING = object()


# --- per-function caches ---------------------------------------------------------------------

_caches: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()
_registry: "weakref.WeakSet[FunctionCache]" = weakref.WeakSet()
# Keyed by the identity of code objects: code objects compare equal by value, and a notebook
# cell run twice makes equal (but distinct) code that is not retrace churn.
_compiles_by_code: dict = {}  # id(code) -> (code, [(weakref to function, key, jit options)])
_churn_reported: set = set()  # ids of code objects already warned about (once per cause)


class FunctionCache:
    """Compiled specializations of one function (shared by every `jit` of it with the same
    options), its event log and counters."""

    def __init__(self, fun, options):
        self._fun = weakref.ref(fun) if _weakrefable(fun) else (lambda f=fun: f)
        self.name = function_name(fun)
        self.location = function_location(fun)
        self.options = options
        self.entries: "collections.OrderedDict[Key, Entry]" = collections.OrderedDict()
        self.pending: dict[Key, threading.Event] = {}
        # see fast_key: (key, entry, whether every argument is a host array: `run_host`)
        self.fast: dict[tuple, tuple[Key, "Entry", bool]] = {}
        self.lock = threading.RLock()
        self.events = EventLog(self)
        self.hits = self.misses = self.traces = self.compiles = self.kernels_reused = 0
        self.compile_seconds = 0.0
        self.mru = None  # the most recently used entry (skips LRU bookkeeping on repeats)
        self.hit_streak = None  # (entry, its cache_hit event, events.recorded then): `_hit`
        _registry.add(self)
        # when this cache is collected, the ledger keeps its row (not its events)
        weakref.finalize(self, _retire, self.name, self.location, self.events).atexit = False

    fun = property(lambda self: self._fun())

    def clear(self) -> None:
        """Forget every compiled specialization (counters and events stay)."""
        with self.lock:
            self.entries.clear()
            self.fast.clear()
            self.hit_streak = None
            self.mru = None

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, len(self.entries), self.traces, self.compiles,
                         self.kernels_reused, self.compile_seconds)

    def __repr__(self):
        return f"<jit cache of {self.name}: {self.info()}>"


def _retire(name, location, events):
    from .ledger import retire
    retire(name, location, events)


def _weakrefable(f):
    try:
        weakref.ref(f)
        return True
    except TypeError:
        return False


def _cache_for(fun, options) -> FunctionCache:
    if not _weakrefable(fun) or isinstance(fun, types.MethodType):
        return FunctionCache(fun, options)  # bound methods are new objects on every access
    with _caches_lock:
        per_fun = _caches.get(fun)
        if per_fun is None:
            per_fun = _caches[fun] = {}
        cache = per_fun.get(options)
        if cache is None:
            cache = per_fun[options] = FunctionCache(fun, options)
        return cache


def forget_compile_records(code, only=None) -> int:
    """Drop the retrace-churn records of `code` (of the function `only`, if given); returns
    how many were dropped. Used by tools that compile private copies (`%jitbench`)."""
    entry = _compiles_by_code.get(id(code))
    if entry is None or entry[0] is not code:
        return 0
    records = entry[1]
    kept = [rec for rec in records if only is not None and rec[0]() is not only]
    dropped = len(records) - len(kept)
    if kept:
        records[:] = kept
    else:
        del _compiles_by_code[id(code)]
        _churn_reported.discard(id(code))
    return dropped


def clear_caches() -> None:
    """`jax.clear_caches()`: every jitted function forgets its compiled specializations (the
    next call traces and compiles again; the disk kernel cache is kept)."""
    for cache in list(_registry):
        cache.clear()


def registry() -> list[FunctionCache]:
    """Every live jitted function's cache (for monitors)."""
    return sorted(_registry, key=lambda c: c.name)


# --- the jitted function -------------------------------------------------------------------

class JitFunction:
    """What `jit(fun, ...)` returns: calls `fun` through a cache of compiled specializations
    (see `jit` for the options and what it offers)."""

    def __init__(self, fun, *, static_argnums=(), static_argnames=(), backend="cpu",
                 fastmath=False, parallel=None, max_compiles=None, strict=False):
        if isinstance(fun, JitFunction):
            fun = fun.__wrapped__
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.__wrapped__ = fun
        check_backend_name(backend)
        self._spec: ArgSpec = arg_spec(fun, static_argnums, static_argnames)
        self.backend = backend
        self.fastmath = bool(fastmath)
        self.parallel = None if parallel is None else bool(parallel)
        if max_compiles is not None and (not isinstance(max_compiles, int) or max_compiles < 0):
            raise ValueError(f"max_compiles must be a count >= 0 (or None), got {max_compiles!r}")
        self.max_compiles, self.strict = max_compiles, bool(strict)
        options = (self._spec.static_argnums, self._spec.static_argnames, backend,
                   self.fastmath, self.parallel)
        self._cache = _cache_for(fun, options)
        # calls with only plain array/scalar positional arguments (and hashable static
        # values at non-negative positions) take a shortcut
        self._static_pos = frozenset(self._spec.static_argnums)
        self._fast_ok = all(i >= 0 for i in self._static_pos)

    # -- public surface --------------------------------------------------------------------
    @property
    def events(self) -> EventLog:
        return self._cache.events

    def cache_info(self) -> CacheInfo:
        return self._cache.info()

    @property
    def specializations(self) -> list[Entry]:
        """The cached specializations, oldest first: each has .signature, .closed (the traced
        jaxpr), .stages (every pass) and .hits. `jitviz.diff(a, b)` compares two of them."""
        with self._cache.lock:  # entries are added under the lock
            return sorted(self._cache.entries.values(), key=lambda e: e.created)

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self):
        return f"<jitviz.jit of {self._cache.name} ({self.backend})>"

    def __get__(self, obj, objtype=None):  # jit on a method: bind like a function
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if config.disable_jit:  # jax.disable_jit(): plain Python, op by op
            return self.__wrapped__(*args, **kwargs)
        if not kwargs and self._fast_ok:
            hit = self._cache.fast.get(fast_key(args, self._static_pos))  # (None: no hit)
            if hit is not None and current_trace() is None:
                key, entry, host_arrays = hit
                self._hit(entry, key)
                if host_arrays:
                    return entry.run_host(args)
                if self._static_pos:
                    args = [a for i, a in enumerate(args) if i not in self._static_pos]
                return entry.run(args)
        if current_trace() is not None:
            return self._call_in_trace(args, kwargs)
        split = split_args(self._spec, args, kwargs)
        key = self._key(split)
        cache = self._cache
        entry = cache.entries.get(key)
        if entry is None:
            entry = self._miss(key, split, args, kwargs)
        else:
            self._hit(entry, key)
        if not kwargs and self._fast_ok:
            fast = fast_key(args, self._static_pos)
            if fast is not None:
                host_arrays = entry.host_driver is not None and not self._static_pos and \
                    all(type(a) is np.ndarray or type(a) is Array for a in args)
                cache.fast[fast] = (entry.key, entry, host_arrays)
        return entry.run(split.dyn_leaves)

    def specialization_for(self, *args, **kwargs) -> Entry:
        """The specialization these arguments select: traced and compiled if it is new, as a
        call would (events included), without running it."""
        split = split_args(self._spec, args, kwargs)
        key = self._key(split)
        entry = self._cache.entries.get(key)
        return entry if entry is not None else self._miss(key, split, args, kwargs)

    def time_kernels(self, *args, min_time: float = 0.2, **kwargs):
        """Run the specialization these arguments select on a copy compiled with per-kernel
        timers (the cached one keeps none), for `min_time` seconds (at least 3 calls) after
        a warm-up. Returns (Timings, seconds per call, calls)."""
        entry = self.specialization_for(*args, **kwargs)
        exe = _compile(self.backend, entry.stages, self.fastmath, self.parallel, profile=True)
        leaves = split_args(self._spec, args, kwargs).dyn_leaves
        in_avals = entry.in_avals
        if entry.closed.refs is not None:  # Refs' current values; timing writes none back
            leaves, in_avals = entry.closed.refs.inputs(leaves), entry.closed.jaxpr.in_avals

        def call():
            block_until_ready(_call_executable(exe, leaves, in_avals, entry.out_avals))
        call()  # compiles lazily-built parts, fills caches
        exe.timings.reset()
        total, calls = 0.0, 0
        while calls < 3 or (total < min_time and calls < 10_000):
            t0 = time.perf_counter()
            call()
            total += time.perf_counter() - t0
            calls += 1
        return exe.timings, total / calls, calls

    def trace(self, *args, **kwargs) -> "Traced":
        """`jax.jit(f).trace(*args)`: the traced program (`.jaxpr`) and its output types
        (`.out_info`), without optimizing or compiling; `.lower()` goes on. Reuses the
        cached trace of these argument types if there is one."""
        split = split_args(self._spec, args, kwargs)
        key = self._key(split)
        entry = self._cache.entries.get(key)
        if entry is not None:
            return Traced(self, entry.closed, entry.stages)
        closed = trace_to_jaxpr(self.__wrapped__, self._spec, args, kwargs, purpose="jit",
                                split=split, avals=list(key.avals))
        return Traced(self, closed)

    def lower(self, *args, **kwargs) -> "Lowered":
        """Trace (or reuse the cached trace) and run the optimization pipeline."""
        return self.trace(*args, **kwargs).lower()

    # -- cache hits ------------------------------------------------------------------------
    def _key(self, split: SplitArgs) -> Key:
        if split.statics:
            check_hashable(split.statics, self.__wrapped__)
        return Key(split.treedef, tuple(leaf_avals(split)), split.statics, dtype_mode())

    def _hit(self, entry: Entry, key: Key):
        cache = self._cache
        cache.hits += 1
        entry.hits += 1
        if cache.mru is not entry:
            cache.entries.move_to_end(key)
            cache.mru = entry
        # one cache_hit event per run of hits on one entry with no other event between them:
        # the cache keeps the entry, its event and the log's count of records then (few
        # objects to read: each call after a large kernel finds them out of the caches)
        log, streak = cache.events, cache.hit_streak
        if streak is not None and streak[0] is entry and streak[2] == log.recorded:
            log.bump(streak[1])
        else:
            event = log.record(Event("cache_hit", entry.signature, cache.name,
                                     "ran the compiled code", entry=entry))
            cache.hit_streak = (entry, event, log.recorded)
        if entry.needs_attention:
            self._check_entry(entry)

    def _check_entry(self, entry: Entry):
        report = entry.report
        if report.has_side_effects:
            if entry.side_effect_event is None:
                entry.side_effect_event = self._record(Event(
                    "side_effect_lost", entry.signature, self._cache.name,
                    _side_effect_message(report), effects=report.side_effect_lines()),
                    warn_key=("side_effects", id(report)))
            elif entry.hits > 1:
                self._cache.events.bump(entry.side_effect_event)
        for check in entry.checks:
            _check_binding(self, entry, check)

    def _record(self, event, warn_key=None):
        return self._cache.events.record(event, warn_key, stacklevel=5)

    # -- cache misses ----------------------------------------------------------------------
    def _miss(self, key: Key, split: SplitArgs, args, kwargs) -> Entry:
        cache = self._cache
        with cache.lock:
            entry = cache.entries.get(key)
            if entry is not None:
                self._hit(entry, key)
                return entry
            pending = cache.pending.get(key)
            owner = pending is None
            if owner:
                pending = cache.pending[key] = threading.Event()
        if not owner:  # another thread is compiling this very key: wait for it
            pending.wait()
            entry = cache.entries.get(key)
            if entry is None:
                return self._miss(key, split, args, kwargs)
            self._hit(entry, key)
            return entry
        try:
            entry = self._build(key, split, args, kwargs)
            with cache.lock:
                cache.entries[key] = entry
                self._evict()
            return entry
        finally:
            with cache.lock:
                cache.pending.pop(key, None)
            pending.set()

    def _build(self, key: Key, split: SplitArgs, args, kwargs) -> Entry:
        cache = self._cache
        cache.misses += 1
        fun = self.__wrapped__
        signature = signature_text(split.leaf_paths, key.avals, key.statics)
        reason, kinds = self._recompile_reason(key, split)
        call_site = user_source_info()
        budget.charge(self, signature, reason, kinds, call_site)
        if reason is not None:
            self._record(Event("recompile", signature, cache.name, reason, reason=reason,
                               kinds=kinds, call_site=call_site))
        if config.explain_cache_misses:
            _explain_cache_miss(cache, signature, reason, call_site)
        t0 = time.perf_counter()
        with self._failure_recorded("trace", signature):
            closed = trace_to_jaxpr(fun, self._spec, args, kwargs, purpose="jit", split=split,
                                    avals=list(key.avals))
        trace_s = time.perf_counter() - t0
        cache.traces += 1
        self._record(Event("trace", signature, cache.name,
                           f"traced in {trace_s * 1e3:.1f} ms "
                           f"({len(closed.jaxpr.eqns)} equations)",
                           duration_s=trace_s, equations=len(closed.jaxpr.eqns),
                           call_site=call_site, kinds=kinds))
        stages = _lower(closed, self.backend, self.fastmath)
        t1 = time.perf_counter()
        with self._failure_recorded("compile", signature):
            executable = _compile(self.backend, stages, self.fastmath, self.parallel)
        compile_s = time.perf_counter() - t1
        reused = sum(1 for k in executable.kernels if k.reused)
        built = len(executable.kernels) - reused
        cache.compiles += 1
        cache.kernels_reused += reused
        cache.compile_seconds += compile_s
        self._record(Event("compile", signature, cache.name,
                           _compile_message(self.backend, compile_s, built, reused),
                           duration_s=compile_s, backend=self.backend, kernels_built=built,
                           kernels_reused=reused))
        entry = Entry(key, split.leaf_paths, closed, stages, executable, self.backend)
        entry.name = cache.name
        self._report_narrowed_arguments(entry, split)
        self._after_trace(entry, trace_s, compile_s)
        return entry

    @contextlib.contextmanager
    def _failure_recorded(self, stage: str, signature: str):
        """An exception while tracing or compiling is an `error` event too (the monitor and
        the explorer then show why a function has no compiled version), then propagates."""
        try:
            yield
        except Exception as err:
            first = (str(err).strip().split("\n") or [""])[0]
            src = getattr(err, "source", None)
            where = f" (line {src.line}: {src.code})" if getattr(src, "line", None) else ""
            self._record(Event("error", signature, self._cache.name,
                               f"{stage} failed: {type(err).__name__}: {first}{where}",
                               stage=stage, error=type(err).__name__))
            raise

    def _recompile_reason(self, key: Key, split: SplitArgs):
        """(why this call misses the cache, its kinds) or (None, ("first",))."""
        entries = list(self._cache.entries.values())
        if entries:
            # the nearest entry; among equals, the most recently used
            closest = nearest(entries, key)
            return (describe_key_change(closest.key, key, closest.paths, split.leaf_paths),
                    key_change_kinds(closest.key, key))
        if self._cache.compiles:
            return ("the cache entry was evicted or cleared", ("evicted",))
        code = getattr(self.__wrapped__, "__code__", None)
        opts = self._cache.options
        others = [r for r, k, o in _compiles_by_code.get(id(code), (None, []))[1]
                  if r() is not self.__wrapped__ and o == opts]
        if code is not None and others:
            return ("a new function object for the same code "
                    f"({describe_code_location(code)}): jit caches per function object",
                    ("new_function_object",))
        return None, ("first",)

    def _report_narrowed_arguments(self, entry: Entry, split: SplitArgs):
        """JAX converts a float64/int64 NumPy argument to 32 bits without x64, silently;
        jitviz says so, once per function and argument, naming the argument and the fix."""
        for path, leaf, aval in zip(split.leaf_paths, split.dyn_leaves, entry.in_avals):
            raw = getattr(leaf, "dtype", None) if isinstance(leaf, (np.ndarray, np.generic)) \
                else None
            if raw is None or raw.itemsize != 8 or raw == aval.dtype:
                continue
            self._record(Event(
                "x64_conversion", entry.signature, self._cache.name,
                f"argument '{path}' is {raw.name}, and without x64 jit computes with it as "
                f"{aval.dtype.name} (as JAX does, silently): its precision and range are those "
                f"of {aval.dtype.name} from here on. To keep {raw.name}, "
                f"{dtypes.narrowing_fix()}; or pass {aval.dtype.name} yourself to silence this.",
                argument=path, dtype=raw.name, converted_to=aval.dtype.name),
                warn_key=("x64", path))

    def _after_trace(self, entry: Entry, trace_s: float, compile_s: float):
        report, cache = entry.report, self._cache
        for leak in report.tracer_leaks:
            where = f" at {describe_line(leak.source.file, leak.source.line)}" \
                if leak.source else ""
            self._record(Event(
                "tracer_leak", entry.signature, cache.name,
                f"a tracer was left in {leak.name}{where}: using it after this trace raises "
                "UnexpectedTracerError; return the value instead of storing it",
                where=leak.name), warn_key=("leak", leak.name))
        for src, prev, msg in getattr(report, "key_reuses", ()):
            # jitviz.random warned while tracing; the event keeps it in the log
            self._cache.events.record(Event("key_reuse", entry.signature, cache.name, msg,
                                            line=src.line if src else None), warn=False)
        threshold = config.unrolled_loop_threshold
        total = max(len(entry.closed.jaxpr.eqns), 1)
        for (file, line, code), n in report.hot_lines(threshold):
            cost = (trace_s + compile_s) * n / total
            self._record(Event(
                "unrolled_loop", entry.signature, cache.name,
                f"{describe_line(file, line)} ({code!r}) produced {n} equations: a Python "
                f"loop is being unrolled into the program, costing about "
                f"{cost * 1e3:.0f} ms of trace and compile time (and more for every new "
                "signature). Use lax.fori_loop(lower, upper, body_fun, init_val) or "
                "lax.scan to trace the body once.",
                line=line, equations=n, cost_s=cost), warn_key=("unrolled", file, line))
        self._note_compile(entry)

    def _note_compile(self, entry: Entry):
        fun = self.__wrapped__
        code = getattr(fun, "__code__", None)
        if code is None:
            return
        records = _compiles_by_code.setdefault(id(code), (code, []))[1]
        if _weakrefable(fun):
            # dead refs stay: a lambda made in a loop is gone by the next iteration
            records.append((weakref.ref(fun), entry.key, self._cache.options))
            del records[:-256]
        opts = self._cache.options
        n = len({id(r) for r, k, o in records if k == entry.key and o == opts})
        if n >= config.retrace_churn_threshold:
            first = id(code) not in _churn_reported
            _churn_reported.add(id(code))
            self._cache.events.record(Event(
                "retrace_churn", entry.signature, self._cache.name,
                f"{describe_code_location(code)} has been traced and compiled {n} times for "
                "the same signature, each time for a new function object (jit of a lambda or "
                "a nested def inside a loop or function): jit's cache is keyed by the function "
                "object, so nothing is reused. Define the function once, jit it once outside "
                "the loop, and call that.", compilations=n),
                warn_key=("churn", code), stacklevel=5, warn=first)

    def _evict(self):
        cache = self._cache
        limit = max(int(config.jit_cache_size), 1)
        while len(cache.entries) > limit:
            key, old = cache.entries.popitem(last=False)
            cache.fast.clear()
            self._record(Event("eviction", old.signature, cache.name,
                               f"evicted the least recently used entry (cache size {limit})"))

    # -- inside another trace -------------------------------------------------------------
    def _call_in_trace(self, args, kwargs):
        """Called while tracing: record a `jit[name=... jaxpr={...}]` equation."""
        from .lax.control_flow import bind_jit_call
        fun = self.__wrapped__
        split = split_args(self._spec, args, kwargs)
        if split.statics:
            check_hashable(split.statics, fun)
        if any(isinstance(leaf, Ref) for leaf in split.dyn_leaves):
            # a Ref argument reads and writes the enclosing trace's state: inlined, as if
            # the call were not jitted (a nested jit is inlined by compilation anyway)
            return fun(*args, **kwargs)
        avals = leaf_avals(split)
        name = function_name(fun)
        parent = current_trace()
        # within one outer trace, calls with the same signature share one traced jaxpr (JAX
        # prints such a jaxpr once, as `let name = {...} in`)
        staged = parent.__dict__.setdefault("_staged_jit_calls", {})
        key = (id(self._cache), split.treedef, tuple(avals), split.statics)
        hit = staged.get(key)
        if hit is not None:
            jaxpr, hoisted, out_tree = hit
            return tree_unflatten(out_tree, bind_jit_call(name, jaxpr, hoisted,
                                                          split.dyn_leaves))
        trace = JaxprTrace(parent, fun_name=name, fun_location=function_location(fun),
                           purpose="jit")
        trace.static_hints = split.static_hints
        trace.arg_order = list(split.leaf_paths)
        try:
            with push_trace(trace):
                tracers = [trace.new_arg(av, p) for av, p in zip(avals, split.leaf_paths)]
                a, k = merge_static(self._spec, split, tracers, len(args))
                out = fun(*a, **k)
        except NestedRefWrite:
            # it writes a Ref of the enclosing trace: inlined instead (the same program)
            return fun(*args, **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        jaxpr, hoisted = trace.finish_hoisted(out_leaves)
        staged[key] = (jaxpr, hoisted, out_tree)
        outs = bind_jit_call(name, jaxpr, hoisted, split.dyn_leaves)
        return tree_unflatten(out_tree, outs)


def _check_binding(jf: JitFunction, entry: Entry, check: _BindingCheck):
    now = check.read()
    if now is _MISSING:
        return
    if id(now) == check.traced_id and not _compare_by_value(now):
        entry.stale_events.pop(check.name, None)
        return
    fp, summary = fingerprint(now)
    if fp == check.traced_fp:
        return
    seen = entry.stale_events.get(check.name)
    if seen is not None and seen[0] == fp:
        jf._cache.events.bump(seen[1])
        return
    kind = "global" if check.kind == "global" else "closed-over variable"
    event = jf._record(Event(
        "stale_global", entry.signature, jf._cache.name,
        f"{kind} '{check.name}' was {check.summary} when traced and is now {summary}: the "
        f"compiled code still uses {check.summary}; pass it as an argument or call "
        f"{jf._cache.name}.clear_cache()", name=check.name, traced=check.summary, now=summary),
        warn_key=("stale", check.name, fp))
    entry.stale_events[check.name] = (fp, event)


def _explain_cache_miss(cache: FunctionCache, signature: str, reason, call_site):
    """JAX's `jax_explain_cache_misses`, with jitviz's reasons: one warning per trace."""
    import warnings
    from .errors import CacheMissWarning
    where = f" at {call_site.short()}" if call_site else ""
    why = reason or f"never seen function {cache.name} defined at {cache.location}"
    warning = CacheMissWarning(f"TRACING CACHE MISS{where}: {cache.name}({signature}) because: "
                               f"{why}")
    # a fresh registry: every miss is shown, not only the first one from this line
    frame_file, frame_line = (call_site.file, call_site.line) if call_site else ("<jit>", 0)
    warnings.warn_explicit(warning, CacheMissWarning, frame_file, frame_line, registry={})


def _compare_by_value(value) -> bool:
    """Small arrays can change in place: compare their contents, not just their identity."""
    return isinstance(value, np.ndarray) and value.size <= config.stale_check_max_elements


def _side_effect_message(report: TraceReport) -> str:
    parts = []
    for p in report.prints:
        where = describe_line(p.source.file, p.source.line) if p.source else "an unknown line"
        parts.append(f"print(...) at {where}")
    for m in report.mutations:
        where = f" at {describe_line(m.source.file, m.source.line)}" if m.source else ""
        parts.append(f"{m.detail}{where}")
    what = ", ".join(dict.fromkeys(parts)) or "a side effect"
    return (f"{what} ran once while tracing and is skipped on this and every later call; "
            "use jitviz.debug.print to print every call, and return values instead of "
            "mutating globals")


def jit(fun=None, *, static_argnums=(), static_argnames=(), backend="cpu", fastmath=False,
        parallel=None, max_compiles=None, strict=False):
    """Compile `fun`, as `jax.jit`: `jit(f)`, `@jit`, or `functools.partial(jit, ...)`.

    The first call with a new signature (pytree structure, each array's shape, dtype and
    weak type, the static values) runs `fun` once to trace it, optimizes the traced program,
    compiles it and runs the result; later calls with that signature run only the compiled
    code. Options (all keyword-only):

    static_argnums: positions (an int or a sequence; negative counts from the end) of
        arguments that are Python values, not traced: each new value (compared by `==` and
        type, so it must be hashable) is a new specialization, traced and compiled anew.
    static_argnames: the same by parameter name; each of the two implies the other where the
        signature of `fun` names the position.
    backend: "cpu" (Numba, the default), "cuda" (Numba CUDA) or "interpret" (NumPy, op by op,
        on the traced program: the reference the others are tested against); the names are
        `jitviz.backends.BACKEND_NAMES`.
    fastmath: let the compiler reassociate floating-point arithmetic (and simplify `x + y - x`
        to `y`): faster, not bit-identical to NumPy. Default False.
    parallel: None (the default) runs a CPU kernel's outer loop on every core (Numba's
        prange) when the kernel is big enough to pay for waking the threads (about
        `jitviz.config.parallel_min_ops` operations, 2**23), and on one core otherwise; True
        threads every kernel that can be split, False none. Each kernel's source says which
        it got and why. Results do not depend on it: a reduction never splits its own axis.
    max_compiles: a compile budget: warn (`CompileBudgetWarning`, once) when the function is
        about to compile more than this many times (None, the default: no budget).
        `jitviz.expect_compiles(n)` sets such a budget for a block of code instead.
    strict: with `max_compiles`, raise `UnexpectedCompileError` instead of warning.

    The result calls like `fun` and has `.events` (every trace, compile, cache hit, recompile
    with its reason, lost side effect, stale global), `.cache_info()`, `.clear_cache()`,
    `.specializations`, `.lower(*args)` (a `Lowered`: the optimizer's stages, then
    `.compile()`) and `.time_kernels(*args)`. Inside another trace (`jit`, `grad`, `vmap`) it
    is staged as one `jit` equation. Under `jitviz.disable_jit()` it runs `fun` as plain Python.
    """
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   backend=backend, fastmath=fastmath, parallel=parallel,
                   max_compiles=max_compiles, strict=strict)
    if fun is None:
        return functools.partial(jit, **options)
    return JitFunction(fun, **options)


def block_until_ready(x):
    """Wait for every array in the pytree `x` (a no-op on CPU results)."""
    for leaf in tree_flatten(x)[0]:
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()
    return x


def _compile_message(backend: str, seconds: float, built: int, reused: int) -> str:
    """What a compile did, in the words %jitbench uses: when every kernel came from the kernel
    cache nothing was compiled (the time went to loading them and building the driver)."""
    ms = f"{seconds * 1e3:.1f} ms"
    if built == 0 and reused:
        return f"loaded for {backend} in {ms}: {reused} kernel(s) from the kernel cache, " \
               "nothing compiled"
    if reused:
        return f"compiled for {backend} in {ms}: {built} kernel(s) built, {reused} from the " \
               "kernel cache"
    return f"compiled for {backend} in {ms}: {built} kernel(s) built"
