"""Events and warnings: what `jit` did and why, in plain words, as it happens.

Every jitted function keeps an `EventLog` (`f.events`). Listeners subscribed with
`subscribe()` (the notebook monitor) get each event as it is recorded. Python warnings
mirror the events once per function and cause; `jitviz.config` switches them off.
"""
from __future__ import annotations

import threading
import time
import warnings
import weakref
from typing import Any, Callable

from .config import config
from .core.source import notebook_cell_of
from .errors import (JitvizWarning, RetraceWarning, SideEffectWarning, StaleGlobalWarning,
                     TracerLeakWarning, UnrolledLoopWarning, X64ConversionWarning)

KINDS = ("trace", "compile", "cache_hit", "recompile", "side_effect_lost", "stale_global",
         "tracer_leak", "retrace_churn", "unrolled_loop", "eviction", "error", "key_reuse",
         "x64_conversion")

_WARNING_OF_KIND = {
    "side_effect_lost": (SideEffectWarning, "warn_side_effects"),
    "stale_global": (StaleGlobalWarning, "warn_stale_globals"),
    "retrace_churn": (RetraceWarning, "warn_retrace"),
    "unrolled_loop": (UnrolledLoopWarning, "warn_unrolled_loops"),
    "tracer_leak": (TracerLeakWarning, "warn_side_effects"),
    "x64_conversion": (X64ConversionWarning, "warn_x64_conversion"),
}


class Event:
    """One thing jit did: `.kind`, `.time`, `.signature`, `.message`, and details as attributes
    (`.reason`, `.duration_s`, `.backend`, `.count`, ...)."""

    __slots__ = ("kind", "time", "signature", "function", "message", "details", "count")

    def __init__(self, kind: str, signature: str, function: str, message: str, **details):
        assert kind in KINDS, kind
        self.kind = kind
        self.time = time.time()
        self.signature = signature
        self.function = function
        self.message = message
        self.details = details
        self.count = 1

    def __getattr__(self, name):
        try:
            return self.details[name]
        except KeyError:
            raise AttributeError(f"{self.kind} event has no {name!r}") from None

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "time": self.time, "signature": self.signature,
               "function": self.function, "message": self.message, "count": self.count}
        out.update({k: v for k, v in self.details.items() if _jsonable(v)})
        return out

    def __repr__(self):
        n = f" x{self.count}" if self.count > 1 else ""
        return f"<{self.kind}{n} {self.function}({self.signature}): {self.message}>"


def _jsonable(v):
    return isinstance(v, (str, int, float, bool, type(None), list, tuple))


_listeners: list[Callable[[Any, Event], None]] = []
_listeners_lock = threading.Lock()


def subscribe(callback: Callable[[Any, Event], None]) -> Callable[[], None]:
    """Call `callback(jitted_function_cache, event)` on every event; returns `unsubscribe`."""
    with _listeners_lock:
        _listeners.append(callback)

    def unsubscribe():
        with _listeners_lock:
            if callback in _listeners:
                _listeners.remove(callback)
    return unsubscribe


class EventLog:
    """The events of one jitted function (shared by every `jit` of the same function)."""

    def __init__(self, owner, limit: int = 10_000):
        self._owner = weakref.ref(owner)
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._limit = limit
        self._local: list[Callable] = []
        self.warned: set = set()
        self.recorded = 0  # events recorded so far (jit's `_hit` reads it: any event since?)

    def __iter__(self):
        return iter(list(self._events))

    def __len__(self):
        return len(self._events)

    def __getitem__(self, i):
        return self._events[i]

    def __repr__(self):
        return "EventLog([\n  " + ",\n  ".join(map(repr, self._events)) + "\n])"

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self._events if e.kind == kind]

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        self._local.append(callback)
        return lambda: self._local.remove(callback) if callback in self._local else None

    def record(self, event: Event, warn_key=None, stacklevel: int = 4, warn: bool = True):
        with self._lock:
            self._events.append(event)
            self.recorded += 1
            if len(self._events) > self._limit:
                del self._events[: len(self._events) - self._limit]
        self._notify(event)
        if warn:
            self._maybe_warn(event, warn_key, stacklevel)
        return event

    def bump(self, event: Event) -> None:
        """Count a repeat of `event` (a cache hit, a lost side effect) without a new entry."""
        event.count += 1
        event.time = time.time()
        if _listeners or self._local:
            self._notify(event)

    def _notify(self, event):
        owner = self._owner()
        for cb in list(self._local):
            cb(event)
        for cb in list(_listeners):
            cb(owner, event)

    def _maybe_warn(self, event, warn_key, stacklevel):
        spec = _WARNING_OF_KIND.get(event.kind)
        if spec is None:
            return
        cls, switch = spec
        if not getattr(config, switch):
            return
        key = (event.kind, warn_key if warn_key is not None else event.message)
        if key in self.warned:
            return
        self.warned.add(key)
        _warn_at_user_line(cls(event.message))


def _warn_at_user_line(warning: Warning):
    """Issue `warning` attributed to the user's line that called into jitviz."""
    import sys
    from .core.source import user_frame
    frame = user_frame(sys._getframe(1))
    if frame is None:
        warnings.warn(warning, stacklevel=2)
        return
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(warning, type(warning), frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__", "__main__"),
                           registry=registry)


def describe_code_location(code) -> str:
    """`<lambda> at cell 4, line 3` in a notebook, else `name at file:line`."""
    cell = notebook_cell_of(code.co_filename)
    where = f"{code.co_filename}:{code.co_firstlineno}" if cell is None else \
        f"cell {cell}, line {code.co_firstlineno}"
    return f"{code.co_name} at {where}"


def describe_line(file: str, line: int) -> str:
    cell = notebook_cell_of(file)
    return f"line {line}" if cell is None else f"cell {cell}, line {line}"


__all__ = ["Event", "EventLog", "subscribe", "JitvizWarning", "describe_code_location"]
