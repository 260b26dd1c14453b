"""What happened while a function was traced, beyond the jaxpr.

While tracing, a `TraceMonitor` watches the tracing thread: writes to stdout/stderr
(the prints still happen, as in JAX), calls that mutate the globals and closed-over
containers the function can see, stores into globals, reads of nondeterministic sources
(time, random, np.random) and tracers left behind in containers. The result is a
`TraceReport`, kept on the `ClosedJaxpr` for the diagnostics (`jitviz.jit`) and the explorer.
"""
from __future__ import annotations

import builtins
import collections
import dis
import hashlib
import os
import random as _random
import sys
import sysconfig
import threading
import time as _time
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .ir import SourceInfo
from .jaxpr_util import all_eqns
from .source import source_info_of_frame, user_frame

_MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
    "update", "setdefault", "popitem", "add", "discard", "difference_update",
    "intersection_update", "symmetric_difference_update", "appendleft", "extendleft",
    "popleft", "rotate", "__setitem__", "__delitem__", "__iadd__"})
_CONTAINERS = (list, dict, set, collections.deque, bytearray)
_NONDETERMINISTIC_FUNCS = {
    _time.time: "time.time", _time.time_ns: "time.time_ns",
    _time.perf_counter: "time.perf_counter", _time.monotonic: "time.monotonic",
    _time.process_time: "time.process_time", os.urandom: "os.urandom",
}
_RANDOM_OWNERS = (_random.Random, np.random.RandomState, np.random.Generator)
_JITVIZ_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass
class PrintRecord:
    stream: str  # "stdout" | "stderr"
    text: str
    source: SourceInfo | None


@dataclass
class MutationRecord:
    kind: str  # "container" | "global_store"
    name: str  # the global or closure name
    detail: str  # e.g. "global_list.append(...)"
    source: SourceInfo | None
    size_before: int | None = None  # the container's length before the call


@dataclass
class TracerLeakRecord:
    name: str  # where the tracer was left: "global_list[0]"
    tracer_repr: str
    source: SourceInfo | None


@dataclass
class NondeterministicRead:
    call: str  # "time.time()" / "np.random.RandomState.rand()"
    source: SourceInfo | None


@dataclass
class CapturedBinding:
    """A global or closure variable the traced code can read, as it was when traced."""
    name: str
    kind: str  # "global" | "closure"
    value_id: int
    fingerprint: str  # repr for scalars/small arrays, a type+id for the rest
    summary: str  # short human text of the value
    cell: Any = None  # the closure cell (to re-read it cheaply)
    namespace: Any = None  # the globals dict a global was read from (its function's module)


@dataclass
class TraceReport:
    function: str
    file: str
    line: int
    prints: list[PrintRecord] = field(default_factory=list)
    mutations: list[MutationRecord] = field(default_factory=list)
    tracer_leaks: list[TracerLeakRecord] = field(default_factory=list)
    nondeterministic: list[NondeterministicRead] = field(default_factory=list)
    eqns_per_line: collections.Counter = field(default_factory=collections.Counter)
    # how many separate calls into jitviz each line made: a Python loop calls again and
    # again; one library call that builds a big program (random.gamma) calls once
    calls_per_line: collections.Counter = field(default_factory=collections.Counter)
    captured: dict[str, CapturedBinding] = field(default_factory=dict)
    duration_s: float = 0.0
    # why the profile hook (C-method mutations, nondeterministic reads) did not watch the
    # trace, or "" when it did
    unwatched_because: str = ""

    @property
    def has_side_effects(self) -> bool:
        return bool(self.prints or self.mutations or self.tracer_leaks)

    def side_effect_lines(self) -> list[str]:
        """One sentence per side effect, for warnings and the explorer."""
        out = []
        for p in self.prints:
            where = f"line {p.source.line}" if p.source else "an unknown line"
            out.append(f"print(...) at {where} wrote {p.text.strip()[:60]!r}")
        for m in self.mutations:
            where = f" at line {m.source.line}" if m.source else ""
            out.append(f"{m.detail}{where}")
        for leak in self.tracer_leaks:
            out.append(f"a tracer was left in {leak.name}")
        return out

    def hot_lines(self, threshold: int):
        """(SourceInfo-key, count) of lines that produced `threshold` or more equations over
        more than one call (a loop, not one call that builds a big program)."""
        return [(k, n) for k, n in self.eqns_per_line.most_common()
                if n >= threshold and self.is_loop(k)]

    def is_loop(self, key) -> bool:
        return self.calls_per_line.get(key, 0) > 1


def _in_installed_package(filename: str) -> bool:
    return "site-packages" in filename or "dist-packages" in filename


def _library_code(filename: str) -> bool:
    """Whether code from `filename` is jitviz's or an installed package's: its globals are
    the library's, not values the user bakes into a trace."""
    return filename.startswith(_JITVIZ_DIR) or _in_installed_package(filename)


def fingerprint(value, max_elements: int = 64) -> tuple[str, str]:
    """(fingerprint, summary): compared on every call by stale-global checks, so cheap."""
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        r = repr(value)
        return r, r
    if isinstance(value, np.generic):
        r = repr(value.item())
        return f"{value.dtype}:{r}", r
    if isinstance(value, np.ndarray):
        head = f"{value.dtype}{list(value.shape)}"
        if value.size <= max_elements and value.dtype != object:
            digest = hashlib.blake2b(np.ascontiguousarray(value).tobytes(), digest_size=8).hexdigest()
            return f"{head}:{digest}", np.array2string(value, threshold=8, precision=4)
        return f"{head}@{id(value):x}", f"array {head}"
    return f"{type(value).__qualname__}@{id(value):x}", f"<{type(value).__name__}>"


def referenced_bindings(fun, max_depth: int = 3) -> dict[str, CapturedBinding]:
    """Globals and closure cells `fun` (and the functions it names) can read, where they are
    the user's: a library's functions (jitviz's own, `jnp.log`, or an installed package's)
    are not looked into, though a library function's closure is followed (a transform's
    wrapper holds the user's function). Every cache hit checks each binding (jit.py
    `_check_binding`): 22 module globals of `jnp.log`'s module cost 6.5-7 us per call of
    `jit(jnp.log)`, a third of the call on 64K values."""
    out: dict[str, CapturedBinding] = {}
    seen_codes: set[int] = set()

    def visit(f, depth):
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen_codes or depth > max_depth:
            return
        seen_codes.add(id(code))
        if _library_code(code.co_filename):
            # a library's wrapper (a transform's closure) may hold the user's function
            for cell in getattr(f, "__closure__", None) or ():
                try:
                    val = cell.cell_contents
                except ValueError:  # not yet bound
                    continue
                if isinstance(val, types.FunctionType):
                    visit(val, depth + 1)
            return
        globs = getattr(f, "__globals__", {})
        for name in _global_names(code):
            if name in globs and name not in out:
                val = globs[name]
                if isinstance(val, types.ModuleType):
                    continue
                fp, summary = fingerprint(val)
                out[name] = CapturedBinding(name, "global", id(val), fp, summary,
                                            namespace=globs)
                if isinstance(val, types.FunctionType):
                    visit(val, depth + 1)
        for name, cell in zip(code.co_freevars, getattr(f, "__closure__", None) or ()):
            try:
                val = cell.cell_contents
            except ValueError:  # not yet bound
                continue
            if name in out or isinstance(val, types.ModuleType):
                continue
            fp, summary = fingerprint(val)
            out[name] = CapturedBinding(name, "closure", id(val), fp, summary, cell)
            if isinstance(val, types.FunctionType):
                visit(val, depth + 1)

    visit(getattr(fun, "__wrapped__", fun), 0)
    return out


def _global_names(code):
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "LOAD_NAME", "STORE_NAME"):
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _global_stores(code, out=None):
    """name -> (line, function) of each STORE_GLOBAL in code and nested code."""
    out = {} if out is None else out
    for ins in dis.get_instructions(code):
        if ins.opname == "STORE_GLOBAL" and ins.argval not in out:
            line = ins.positions.lineno if ins.positions else code.co_firstlineno
            out[ins.argval] = (code.co_filename, line, code.co_name)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _global_stores(const, out)
    return out


class _Tee:
    """Forwards writes to the real stream; records those made by the tracing thread."""

    def __init__(self, stream, name, monitor):
        self._stream, self._name, self._monitor = stream, name, monitor

    def write(self, s):
        if threading.get_ident() == self._monitor.thread_id and s:
            self._monitor.record_write(self._name, s)
        return self._stream.write(s)

    def __getattr__(self, k):
        return getattr(self._stream, k)


class TraceMonitor:
    """Context manager active while the root trace of a function runs."""

    def __init__(self, fun, report: TraceReport, is_our_tracer):
        self.fun = fun
        self.report = report
        self.is_our_tracer = is_our_tracer
        self.thread_id = threading.get_ident()
        self.bindings = referenced_bindings(fun)
        report.captured = self.bindings
        self.globs = getattr(getattr(fun, "__wrapped__", fun), "__globals__", {})
        self.watched = {}  # id(container) -> name
        for b in self.bindings.values():
            val = self._value_of(b)
            if isinstance(val, _CONTAINERS):
                self.watched[id(val)] = b.name
        self._pending_print: PrintRecord | None = None

    def _value_of(self, b: CapturedBinding):
        return read_binding(b, None)

    # -- prints --------------------------------------------------------------------------
    def record_write(self, stream, s):
        src = source_info_of_frame(user_frame(skip_stdlib=True))
        pending = self._pending_print
        if pending is not None and pending.stream == stream and pending.source == src \
                and not pending.text.endswith("\n"):
            pending.text += s
            return
        self._pending_print = PrintRecord(stream, s, src)
        self.report.prints.append(self._pending_print)

    # -- profile hook: mutations of watched containers, nondeterministic reads ----------
    def _profile(self, frame, event, arg):
        if event == "c_call" and not frame.f_code.co_filename.startswith(_JITVIZ_DIR):
            owner = getattr(arg, "__self__", None)
            if owner is not None and id(owner) in self.watched and \
                    getattr(arg, "__name__", "") in _MUTATING_METHODS:
                name = self.watched[id(owner)]
                src = source_info_of_frame(user_frame(frame, skip_stdlib=True))
                self.report.mutations.append(MutationRecord(
                    "container", name, f"{name}.{arg.__name__}(...)", src, _len(owner)))
            elif config_record_nondeterminism() and (
                    arg in _NONDETERMINISTIC_FUNCS or isinstance(owner, _RANDOM_OWNERS)) and \
                    not _in_installed_package(frame.f_code.co_filename):
                # (an installed library's own reads, e.g. a GC callback that times itself
                # while the trace runs, are not the traced program's)
                label = _NONDETERMINISTIC_FUNCS.get(arg) or \
                    f"{type(owner).__module__.split('.')[0]}.{type(owner).__name__}.{arg.__name__}"
                src = source_info_of_frame(user_frame(frame, skip_stdlib=True))
                if not any(r.source == src and r.call == label + "()"
                           for r in self.report.nondeterministic):
                    self.report.nondeterministic.append(NondeterministicRead(label + "()", src))
        if self._prev_profile is not None:
            self._prev_profile(frame, event, arg)

    def __enter__(self):
        self._old_out, self._old_err = sys.stdout, sys.stderr
        sys.stdout = _Tee(sys.stdout, "stdout", self)
        sys.stderr = _Tee(sys.stderr, "stderr", self)
        self._t0 = _time.perf_counter()
        self._prev_profile = sys.getprofile()
        # A C-level profiler (cProfile, IPython's %prun) shows up here as a non-callable
        # object that cannot be chained from Python: replacing it would silence the user's
        # profile and restoring it afterwards would install a non-callable hook. Leave it
        # alone and say what this trace did not watch.
        self._hooked = self._prev_profile is None or callable(self._prev_profile)
        if self._hooked:
            sys.setprofile(self._profile)
        else:
            self.report.unwatched_because = (
                f"another profiler ({type(self._prev_profile).__module__}."
                f"{type(self._prev_profile).__name__}) was active")
        self._before = {name: id(read_binding(b, _MISSING)) for name, b in self.bindings.items()}
        self._container_sizes = {cid: _size(self._value_by_id(cid)) for cid in self.watched}
        code = getattr(getattr(self.fun, "__wrapped__", self.fun), "__code__", None)
        self._stores = _global_stores(code) if code is not None else {}
        self._subscript_stores = _subscript_stores(code) if code is not None else {}
        return self

    def _value_by_id(self, cid):
        name = self.watched[cid]
        return self._value_of(self.bindings[name])

    def __exit__(self, *exc):
        if self._hooked:
            sys.setprofile(self._prev_profile)
        if isinstance(sys.stdout, _Tee) and sys.stdout._monitor is self:
            sys.stdout = self._old_out
        if isinstance(sys.stderr, _Tee) and sys.stderr._monitor is self:
            sys.stderr = self._old_err
        self.report.duration_s = _time.perf_counter() - self._t0
        self._diff_after()
        return False

    def _diff_after(self):
        recorded = {m.name for m in self.report.mutations}
        # stores into globals (`global g; g = ...`), found by identity change
        for name, b in self.bindings.items():
            if b.kind != "global":
                continue
            now = read_binding(b, _MISSING)
            if id(now) != self._before[name] and name not in recorded:
                file, line, func = self._stores.get(name, (None, None, None))
                src = SourceInfo(file, line, func, _line_text(file, line)) if file else None
                self.report.mutations.append(MutationRecord(
                    "global_store", name, f"global {name} = ...", src))
        for name in self._stores:  # a global created by the trace
            if name not in self.bindings and name in self.globs and name not in recorded:
                file, line, func = self._stores[name]
                self.report.mutations.append(MutationRecord(
                    "global_store", name, f"global {name} = ...",
                    SourceInfo(file, line, func, _line_text(file, line))))
        # containers changed without a method call (`d[k] = v`, `lst[0] = v`)
        for cid, name in self.watched.items():
            val = self._value_by_id(cid)
            if name not in recorded and val is not None and id(val) == cid and \
                    _size(val) != self._container_sizes[cid]:
                file, line, func = self._subscript_stores.get(name, (None, None, None))
                src = SourceInfo(file, line, func, _line_text(file, line)) if file else None
                detail = f"{name}[...] = ..." if file else f"{name} was modified"
                self.report.mutations.append(MutationRecord("container", name, detail, src))
        self._find_leaks()

    def _find_leaks(self):
        for name, b in self.bindings.items():
            val = self._value_of(b)
            for path, item, slot in _walk_shallow(val, name):
                if self.is_our_tracer(item):
                    src = self._source_of_store(name, slot)
                    self.report.tracer_leaks.append(TracerLeakRecord(path, repr(item), src))
        for name in self._stores:
            if name not in self.bindings and self.is_our_tracer(self.globs.get(name)):
                self.report.tracer_leaks.append(
                    TracerLeakRecord(name, repr(self.globs[name]), None))


    def _source_of_store(self, name, slot):
        """The line that put the item at `slot` (a list index) into container `name`."""
        mine = [m for m in self.report.mutations if m.name == name]
        for m in mine:
            if slot is not None and m.size_before == slot and m.detail.endswith(
                    (".append(...)", ".insert(...)", ".appendleft(...)")):
                return m.source
        return mine[-1].source if mine else None

    def note_constants(self, closed):
        """Constants whose line calls a nondeterministic source (np.random, a Generator,
        time, random) were read while tracing: NumPy's random methods are Cython, invisible
        to the profile hook, so resolve the calls on those lines by name."""
        from .ir import Literal
        atoms = list(closed.jaxpr.constvars)
        for eqn in all_eqns(closed.jaxpr):
            atoms.extend(a for a in eqn.invars if isinstance(a, Literal))
        atoms.extend(a for a in closed.jaxpr.outvars if isinstance(a, Literal))
        seen = {(r.source, r.call) for r in self.report.nondeterministic}
        for atom in atoms:
            origin = getattr(atom, "origin", None)
            src = origin.source if origin is not None else None
            if src is None or not src.code:
                continue
            for label in self._nondeterministic_calls(src.code):
                if (src, label) not in seen:
                    seen.add((src, label))
                    self.report.nondeterministic.append(NondeterministicRead(label, src))

    def _nondeterministic_calls(self, code_text):
        import re
        for chain in re.findall(r"([A-Za-z_][\w.]*)\s*\(", code_text):
            root, *attrs = chain.split(".")
            obj = self._resolve(root)
            for a in attrs:
                obj = getattr(obj, a, None)
            if obj is None:
                continue
            owner = getattr(obj, "__self__", None)
            if _is_clock_or_entropy(obj) or isinstance(owner, _RANDOM_OWNERS):
                yield f"{chain}()"

    def _resolve(self, name):
        b = self.bindings.get(name)
        if b is not None:
            return self._value_of(b)
        return self.globs.get(name, getattr(builtins, name, None))


def _is_clock_or_entropy(obj) -> bool:
    """Whether `obj` is one of _NONDETERMINISTIC_FUNCS; an unhashable object (a dataclass
    module called on the line, an array named before a parenthesis in a comment) is not."""
    try:
        return obj in _NONDETERMINISTIC_FUNCS
    except TypeError:
        return False


def _len(obj):
    try:
        return len(obj)
    except TypeError:
        return None


def _subscript_stores(code, out=None):
    """name -> (file, line, function) of each `name[k] = v` in code and nested code."""
    out = {} if out is None else out
    line_loads: dict = {}
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions else None
        if ins.opname in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF"):
            line_loads.setdefault(line, []).append(ins.argval)
        elif ins.opname == "STORE_SUBSCR":
            for name in reversed(line_loads.get(line, [])):
                out.setdefault(name, (code.co_filename, line, code.co_name))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _subscript_stores(const, out)
    return out


_MISSING = object()


def read_binding(b: CapturedBinding, missing):
    """The current value of a captured global or closure variable (`missing` if unbound)."""
    if b.kind == "closure":
        try:
            return b.cell.cell_contents
        except ValueError:
            return missing
    namespace = b.namespace if b.namespace is not None else {}
    return namespace.get(b.name, missing)


def changed_bindings(report) -> dict:
    """name -> summary of the current value, for each global or closure variable the trace
    captured whose value has changed since."""
    missing = object()
    out = {}
    for b in getattr(report, "captured", {}).values():
        value = read_binding(b, missing)
        if value is not missing:
            fp, summary = fingerprint(value)
            if fp != b.fingerprint:
                out[b.name] = summary
    return out


def config_record_nondeterminism() -> bool:
    from ..config import config
    return config.record_nondeterminism


def _size(val):
    try:
        return (len(val), id(val))
    except TypeError:
        return (None, id(val))


def _walk_shallow(val, name, depth=0, slot=None):
    """(path, item, top-level slot) for a value and the items of containers, two levels
    deep; the slot is the index or key in the outermost container."""
    if depth > 2:
        return
    yield name, val, slot
    if isinstance(val, (list, tuple, collections.deque)):
        for i, item in enumerate(list(val)[:1000]):
            yield from _walk_shallow(item, f"{name}[{i}]", depth + 1, i if depth == 0 else slot)
    elif isinstance(val, dict):
        for k, item in list(val.items())[:1000]:
            yield from _walk_shallow(item, f"{name}[{k!r}]", depth + 1, k if depth == 0 else slot)
    elif isinstance(val, set):
        for item in list(val)[:1000]:
            yield f"an element of {name}", item, slot


def _line_text(file, line):
    import linecache
    return linecache.getline(file, line).strip() if file and line else ""
