"""The previous run of a re-run cell: what the explorer compares a function with when the cell
that defines it ran again (a new function object of the same name).

A notebook user edits a cell and runs it again: the function is a new object with an empty
jit cache, and the old one is usually garbage collected with its traces. So the explorer keeps,
per definition (module and qualified name; lambdas also by their line), the traces of the
latest runs (`Run`: each a function object's specializations, their stages and signatures,
not their compiled code), and `previous_run(fun)` gives the newest run of another function
object of the same definition.

Runs are recorded when an explorer is made, and in IPython after every cell
(`post_run_cell`, registered when jitviz is imported into a shell, or by `watch_cells`), for
the jitted functions whose traces changed since the last look. Bounded: `MAX_DEFINITIONS`
definitions (least recently recorded dropped first), `RUNS_PER_DEFINITION` runs each,
`SPECIALIZATIONS_PER_RUN` specializations per run (the newest), and at most `MAX_KEPT_BYTES`
of constants baked into kept programs (the oldest runs go first; a run larger than that alone
is not kept, and `why_not_kept` says so).
"""
from __future__ import annotations

import collections
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

MAX_DEFINITIONS = 64
RUNS_PER_DEFINITION = 2
SPECIALIZATIONS_PER_RUN = 4
MAX_KEPT_BYTES = 64 * 2**20


@dataclass
class KeptSpecialization:
    """One specialization of a past run: enough to diff it (no executable)."""
    signature: str
    key: object
    stages: list  # (name, ClosedJaxpr)
    compiled_stage: str | None
    created: float | None


@dataclass
class Run:
    """One function object's traces (one run of the cell that defined it)."""
    name: str
    location: str  # file:line of the definition
    owner: object  # weakref to the function object
    specializations: list = field(default_factory=list)  # KeptSpecialization, oldest first
    recorded: float = field(default_factory=time.perf_counter)
    nbytes: int = 0

    @property
    def started(self) -> float:
        """When its first kept specialization was traced (jit entries' `created` clock,
        perf_counter), else when it was recorded: runs are ordered by it."""
        times = [s.created for s in self.specializations if s.created is not None]
        return min(times) if times else self.recorded

    def is_of(self, fun) -> bool:
        return self.owner() is fun

    def where(self) -> str:
        """`cell 3, line 1` in a notebook, else `file.py:12`."""
        import os
        from ..core.source import notebook_cell_of
        file, _, line = self.location.rpartition(":")
        cell = notebook_cell_of(file) if file else None
        return f"cell {cell}, line {line}" if cell else f"{os.path.basename(file)}:{line}"

    def describe(self) -> str:
        n = len(self.specializations)
        return (f"{self.name} at {self.where()} ({n} specialization{'s' if n != 1 else ''}: "
                + ", ".join(s.signature for s in self.specializations) + ")")


_lock = threading.RLock()
_runs: "collections.OrderedDict[tuple, list[Run]]" = collections.OrderedDict()
_seen_traces: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # cache -> traces
_skipped: dict[tuple, tuple] = {}  # definition -> (owner weakref, why it was not kept)


def definition_of(fun) -> tuple | None:
    """The definition a function object comes from: (module, qualified name), and the line for
    a lambda (many lambdas share a name). None for what has no code."""
    from ..core.source import function_location
    target = getattr(fun, "__wrapped__", fun)
    qualname = getattr(target, "__qualname__", None)
    if qualname is None or getattr(target, "__code__", None) is None:
        return None
    key = (getattr(target, "__module__", None), qualname)
    if "<lambda>" in qualname:
        key += (function_location(target),)
    return key


def remember(fun, specializations) -> Run | None:
    """Record `fun`'s specializations (objects with `.signature .key .stages .compiled_stage
    .created`: jit cache entries or the explorer's) as its run; returns the run kept."""
    target = getattr(fun, "__wrapped__", fun)
    definition = definition_of(target)
    if definition is None:
        return None
    try:
        owner = weakref.ref(target)
    except TypeError:
        return None
    from ..core.source import function_location, function_name
    kept = [KeptSpecialization(_signature(s), getattr(s, "key", None), list(s.stages),
                               getattr(s, "compiled_stage", None), getattr(s, "created", None))
            for s in list(specializations)[-SPECIALIZATIONS_PER_RUN:] if s.stages]
    if not kept:
        return None
    run = Run(function_name(target), function_location(target), owner, kept)
    run.nbytes = _constant_bytes(kept)
    with _lock:
        runs = [r for r in _runs.pop(definition, []) if not r.is_of(target)]
        if run.nbytes > MAX_KEPT_BYTES:
            _skipped[definition] = (owner, (
                f"its programs hold {_size(run.nbytes)} of constants, more than the "
                f"{_size(MAX_KEPT_BYTES)} kept (jitviz.explorer.history.MAX_KEPT_BYTES)"))
            if runs:
                _runs[definition] = runs
            return None
        if definition in _skipped and _skipped[definition][0]() is target:
            del _skipped[definition]
        # a function object seen late (alive, but first traced before) is not the newest
        ordered = sorted(runs + [run], key=lambda r: r.started)
        _runs[definition] = ordered[-RUNS_PER_DEFINITION:]
        _enforce_bounds(keep=run)
    return run


def previous_run(fun) -> Run | None:
    """The newest kept run of another function object of `fun`'s definition."""
    target = getattr(fun, "__wrapped__", fun)
    definition = definition_of(target)
    with _lock:
        runs = _runs.get(definition, [])
        others = [r for r in runs if not r.is_of(target)]
    return others[-1] if others else None


def why_not_kept(fun) -> str | None:
    """Why the previous run of `fun`'s definition was not kept (too large), if it was not."""
    target = getattr(fun, "__wrapped__", fun)
    owner, why = _skipped.get(definition_of(target), (lambda: target, None))
    return why if owner() is not target else None


def forget() -> None:
    """Drop every kept run and what was seen (tests; or to free the memory)."""
    forget_runs()
    with _lock:
        _seen_traces.clear()


def forget_runs() -> None:
    """Drop every kept run; the functions seen so far stay seen (not recorded again until
    they trace again)."""
    with _lock:
        _runs.clear()
        _skipped.clear()


def remember_live() -> int:
    """Record the run of every live jitted function traced since the last look; returns how
    many were recorded. What `post_run_cell` calls."""
    from ..jit import registry
    recorded = 0
    for cache in registry():
        fun = cache.fun
        if fun is None or not cache.entries or _seen_traces.get(cache) == cache.traces:
            continue
        _seen_traces[cache] = cache.traces
        with cache.lock:
            entries = sorted(cache.entries.values(), key=lambda e: e.created)
        specs = [_EntryView(e) for e in entries]
        if remember(fun, specs) is not None:
            recorded += 1
    return recorded


def watch_cells(shell=None) -> bool:
    """Record live runs after every cell of `shell` (default: the running IPython, if any);
    registered once per shell. Returns whether a shell is watched."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "events"):
        return False
    if not getattr(shell, "_jitviz_watches_runs", False):
        shell.events.register("post_run_cell", _after_cell)
        shell._jitviz_watches_runs = True
    return True


def _after_cell(result=None):
    try:
        remember_live()
    except Exception:  # noqa: BLE001 - keeping history must never break a user's cell
        pass


class _EntryView:
    """A jit cache entry as `remember` reads it (its executable's compiled stage)."""

    def __init__(self, entry):
        self.signature, self.key, self.stages = entry.signature, entry.key, entry.stages
        self.created = getattr(entry, "created", None)
        self.compiled_stage = getattr(getattr(entry, "executable", None), "stage", None)


def _signature(spec) -> str:
    """A jit entry's signature; for a trace the explorer made itself (not a cache entry),
    its argument types."""
    if getattr(spec, "compiled", True):
        return spec.signature
    from ..diff.printing import signature_of
    return signature_of(spec.stages[0][1])


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB"


def _constant_bytes(specs) -> int:
    seen, total = set(), 0
    for spec in specs:
        for _, closed in spec.stages:
            for value in getattr(closed, "consts", ()):
                if id(value) not in seen:
                    seen.add(id(value))
                    total += value.nbytes if isinstance(value, np.ndarray) else 0
    return total


def _enforce_bounds(keep: Run) -> None:
    while len(_runs) > MAX_DEFINITIONS:
        _runs.popitem(last=False)
    total = sum(r.nbytes for runs in _runs.values() for r in runs)
    for definition in list(_runs):
        if total <= MAX_KEPT_BYTES:
            break
        runs = _runs[definition]
        while runs and total > MAX_KEPT_BYTES and runs[0] is not keep:
            total -= runs.pop(0).nbytes
        if not runs:
            del _runs[definition]
