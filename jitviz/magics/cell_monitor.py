"""The live event view under a `%%jit` cell: a plain Python object, no widget.

`CellMonitor(*jitted_functions)` subscribes to the functions' event logs. It renders as HTML in
notebooks (`_repr_html_`) and as text in terminals (`_repr_pretty_`, `__repr__`); after
`display()` it keeps the display handle and `update()` redraws it in place — from any later
cell that calls the functions. Redraws are throttled (`interval`), and `flush()` (called after
each cell by the extension) draws whatever is pending, so a loop of a million calls costs a few
redraws, not a million. The explorer's widget (`jitviz.explorer.monitor`) can stand in for it:
the magic shows that in a live kernel.

It reads everything from the functions themselves (`cache_info()`, `events`) at render time,
so it never disagrees with them.
"""
from __future__ import annotations

import time
import weakref

from ..html_blocks import COLORS, esc, fmt_time, html_table, text_table

__all__ = ["CellMonitor", "summarize"]

_FLAG_KINDS = {
    "side_effect_lost": "side effect lost",
    "stale_global": "stale global",
    "tracer_leak": "tracer leak",
    "retrace_churn": "retrace churn",
    "unrolled_loop": "unrolled loop",
    "x64_conversion": "float64 made float32",
}
_KIND_COLOR = {
    "trace": COLORS["trace"], "compile": COLORS["compile"], "cache_hit": COLORS["hit"],
    "recompile": COLORS["error"], "side_effect_lost": COLORS["warn"],
    "stale_global": COLORS["warn"], "tracer_leak": COLORS["warn"],
    "retrace_churn": COLORS["warn"], "unrolled_loop": COLORS["warn"],
    "x64_conversion": COLORS["warn"],
    "eviction": "#777",
    "error": COLORS["error"],
}


def summarize(name: str, fn) -> dict:
    """One function's state, from its counters and events."""
    info = fn.cache_info()
    events = list(fn.events)
    recompiles = [e for e in events if e.kind == "recompile"]
    flags = {}
    for e in events:
        if e.kind in _FLAG_KINDS:
            flags[_FLAG_KINDS[e.kind]] = flags.get(_FLAG_KINDS[e.kind], 0) + e.count
    return {"name": name, "backend": getattr(fn, "backend", "?"), "entries": info.entries,
            "traces": info.traces, "compiles": info.compiles,
            "compile_s": info.compile_seconds, "hits": info.hits,
            "kernels_reused": info.kernels_reused, "recompiles": len(recompiles),
            "last_reason": recompiles[-1].reason if recompiles else None, "flags": flags}


class CellMonitor:
    """Live summary and event log of some jitted functions (see the module docstring)."""

    def __init__(self, *fns, names=None, title: str = "%%jit monitor", live: bool = True,
                 interval: float = 0.5, max_events: int = 12):
        self.title = title
        self.live = live
        self.interval = interval
        self.max_events = max_events
        self.notes: list[str] = []
        self.closed = False
        self.handle = None
        self._fns: list[tuple[str, object]] = []
        self._unsubscribe = []
        self._dirty = False
        self._last_draw = 0.0
        self.redraws = 0
        names = list(names) if names is not None else [None] * len(fns)
        for fn, name in zip(fns, names):
            self.add(fn, name)

    # -- functions -------------------------------------------------------------------------
    def add(self, fn, name: str | None = None) -> None:
        name = name or getattr(fn, "__name__", "fun")
        self._fns.append((name, fn))
        ref = weakref.ref(self)

        def on_event(event, ref=ref):
            mon = ref()
            if mon is not None:
                mon._on_event(event)
        self._unsubscribe.append(fn.events.subscribe(on_event))
        self._dirty = True

    @property
    def functions(self) -> dict:
        return dict(self._fns)

    def _on_event(self, event) -> None:
        self._dirty = True
        if self.live and self.handle is not None and \
                time.monotonic() - self._last_draw >= self.interval:
            self.update()

    # -- display ---------------------------------------------------------------------------
    def display(self):
        """Show it (IPython) and keep the handle for `update()`; returns the handle."""
        from IPython.display import display
        self.handle = display(self, display_id=True)
        self._last_draw = time.monotonic()
        self._dirty = False
        return self.handle

    def update(self) -> None:
        """Redraw in place (no-op before `display()`). Never raises into the caller's jit."""
        self._dirty = False
        self._last_draw = time.monotonic()
        if self.handle is None:
            return
        try:
            self.handle.update(self)
            self.redraws += 1
        except Exception:  # noqa: BLE001 - a display problem must not break the user's call
            pass

    def flush(self) -> None:
        """Redraw if something happened since the last redraw."""
        if self._dirty and self.live:
            self.update()

    def close(self, note: str | None = None) -> None:
        """Stop following the functions (after a final redraw carrying `note`)."""
        if self.closed:
            return
        if note:
            self.notes.append(note)
        for unsub in self._unsubscribe:
            unsub()
        self._unsubscribe.clear()
        self.closed = True
        self.update()

    # -- content ---------------------------------------------------------------------------
    def summaries(self) -> list[dict]:
        return [summarize(name, fn) for name, fn in self._fns]

    def recent_events(self):
        evs = [(name, e) for name, fn in self._fns for e in fn.events]
        evs.sort(key=lambda p: p[1].time)
        return evs[-self.max_events:]

    def _row(self, s):
        flags = ", ".join(f"{k}" + (f" x{v}" if v > 1 else "") for k, v in s["flags"].items())
        reason = f" (last: {s['last_reason']})" if s["last_reason"] else ""
        return [s["name"], s["backend"], s["traces"],
                f"{s['compiles']} ({fmt_time(s['compile_s'])})" if s["compiles"] else "0",
                s["hits"], f"{s['recompiles']}{reason}", flags or "—"]

    _headers = ["function", "backend", "traces", "compiles (time)", "cache hits",
                "recompiles", "flags"]

    def _status(self):
        return "stopped" if self.closed else "live" if self.live and self.handle else ""

    def __repr__(self) -> str:
        lines = [f"{self.title}" + (f" [{self._status()}]" if self._status() else "")]
        sums = self.summaries()
        if not sums:
            lines.append("  (no functions)")
        else:
            lines.append(text_table(self._headers, [self._row(s) for s in sums]))
        events = self.recent_events()
        if events:
            lines.append("  recent events:")
            for name, e in events:
                n = f" x{e.count}" if e.count > 1 else ""
                lines.append(f"    {e.kind}{n} {name}({e.signature}): {e.message}")
        elif sums:
            lines.append("  nothing traced yet")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))

    def _repr_html_(self) -> str:
        status = self._status()
        badge = (f' <span style="color:{COLORS["hit"] if status == "live" else "#777"}">'
                 f'● {esc(status)}</span>') if status else ""
        parts = [f'<div style="font-weight:bold">{esc(self.title)}{badge}</div>']
        sums = self.summaries()
        parts.append(html_table(self._headers, [self._row(s) for s in sums]))
        events = self.recent_events()
        if events:
            items = []
            for name, e in events:
                color = _KIND_COLOR.get(e.kind, "#333")
                n = f" ×{e.count}" if e.count > 1 else ""
                items.append(
                    f'<li><span style="color:{color};font-weight:bold">{esc(e.kind)}{esc(n)}'
                    f'</span> <code>{esc(name)}({esc(e.signature)})</code>: {esc(e.message)}'
                    "</li>")
            parts.append('<ul style="margin:2px 0;padding-left:18px;font-size:12px">'
                         + "".join(items) + "</ul>")
        elif sums:
            parts.append('<div style="color:#777">nothing traced yet</div>')
        for note in self.notes:
            parts.append(f'<div style="color:{COLORS["warn"]}">{esc(note)}</div>')
        return ('<div class="jitviz-monitor" style="border-left:3px solid #4c78a8;'
                f'padding:4px 10px">{"".join(parts)}</div>')
