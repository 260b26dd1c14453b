"""The recompile ledger: every jitted function of the session, ranked by the time it has
cost in tracing and compiling, with why each compile happened, where it was called from and
what to do about it.

    jitviz.ledger()            # a table in a notebook, text elsewhere
    jitviz.ledger().rows[0]    # LedgerRow: name, location, seconds, compiles, hits, reasons
    %jitledger [--live]        # the magic (jitviz.magics)

Built from the events jit already records (`f.events`): nothing is measured twice.
"""
from __future__ import annotations

import collections
import html
from dataclasses import dataclass, field

from .budget import FIXES, _where

__all__ = ["ledger", "Ledger", "LedgerRow", "ReasonGroup"]

# the order reasons are listed in, and their names in the table
KIND_NAMES = {
    "first": "first compile", "shape": "shape", "dtype": "dtype", "weak_type": "weak type",
    "static": "static value", "pytree": "pytree structure",
    "new_function_object": "new function object", "captured_global": "captured global",
    "evicted": "evicted / cleared", "dtype_mode": "64-bit switches",
}


@dataclass
class ReasonGroup:
    """The compiles (or stale-global hits) of one function that share a kind of cause."""
    kind: str
    count: int = 0
    examples: list = field(default_factory=list)  # reason texts, at most 3
    call_sites: collections.Counter = field(default_factory=collections.Counter)

    @property
    def name(self) -> str:
        return KIND_NAMES.get(self.kind, self.kind)

    @property
    def fix(self) -> str:
        return FIXES.get(self.kind, "")


@dataclass
class LedgerRow:
    name: str
    location: str
    trace_s: float
    compile_s: float
    compiles: int
    traces: int
    hits: int
    reasons: list  # ReasonGroup, most frequent first

    @property
    def seconds(self) -> float:
        return self.trace_s + self.compile_s

    @property
    def recompiles(self) -> int:
        return sum(g.count for g in self.reasons if g.kind not in ("first", "captured_global"))


class Ledger:
    def __init__(self, rows):
        self.rows = sorted(rows, key=lambda r: (-r.seconds, r.name))

    @property
    def total_seconds(self) -> float:
        return sum(r.seconds for r in self.rows)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        if not self.rows:
            return "jit ledger: no function has been compiled yet"
        out = [f"jit ledger: {len(self.rows)} function(s), "
               f"{self.total_seconds * 1e3:.1f} ms tracing + compiling"]
        for r in self.rows:
            out.append(f"{r.name} ({r.location}): {r.seconds * 1e3:.1f} ms, "
                       f"{r.compiles} compile(s), {r.hits} hit(s)")
            for g in r.reasons:
                sites = ", ".join(f"{s} ×{n}" if n > 1 else s
                                  for s, n in g.call_sites.most_common(3))
                out.append(f"  {g.name} ×{g.count}" + (f" — {g.examples[0]}" if g.examples
                                                        else "")
                           + (f"\n    called at {sites}" if sites else "")
                           + (f"\n    fix: {g.fix}" if g.kind != "first" else ""))
        return "\n".join(out)

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<div class='jitviz-ledger'><i>jit ledger: no function has been compiled " \
                   "yet</i></div>"
        head = ("<tr><th>function</th><th>trace + compile</th><th>compiles</th><th>hits</th>"
                "<th>why it compiled</th></tr>")
        body = "".join(_row_html(r) for r in self.rows)
        return ("<div class='jitviz-ledger'><div style='font-weight:bold'>jit ledger: "
                f"{len(self.rows)} function(s), {self.total_seconds * 1e3:.1f} ms tracing + "
                "compiling</div><table style='border-collapse:collapse;font-size:12px'>"
                f"{head}{body}</table></div>")


def _row_html(r: LedgerRow) -> str:
    e = html.escape
    reasons = "<br>".join(
        f"<b>{e(g.name)}</b> ×{g.count}"
        + (f": {e(g.examples[0])}" if g.examples else "")
        + "".join(f"<br><span style='color:#666'>at {e(s)}"
                  + (f" ×{n}" if n > 1 else "") + "</span>"
                  for s, n in g.call_sites.most_common(3))
        + (f"<br><span style='color:#2f6f3e'>fix: {e(g.fix)}</span>"
           if g.kind != "first" else "")
        for g in r.reasons)
    return (f"<tr style='border-top:1px solid #ddd;vertical-align:top'>"
            f"<td><code>{e(r.name)}</code><br><span style='color:#666'>{e(r.location)}"
            f"</span></td><td>{r.seconds * 1e3:.1f} ms</td><td>{r.compiles}</td>"
            f"<td>{r.hits}</td><td>{reasons}</td></tr>")


def _row_of(cache) -> LedgerRow | None:
    return _row_of_events(cache.name, cache.location, cache.events)


def _row_of_events(name, location, events) -> LedgerRow | None:
    """A function's ledger row, from its event log alone (so it can be kept when the
    function is gone: a lambda jitted in a loop is the pattern the ledger must show)."""
    groups: dict[str, ReasonGroup] = {}
    trace_s = compile_s = 0.0
    traces = compiles = hits = 0
    for ev in events:
        if ev.kind == "trace":
            traces += 1
            trace_s += ev.details.get("duration_s", 0.0)
            kinds = ev.details.get("kinds") or ("first",)
            if kinds == ("first",):  # recompiles are counted by their recompile event
                _add(groups, "first", None, ev.details.get("call_site"))
        elif ev.kind == "compile":
            compiles += 1
            compile_s += ev.details.get("duration_s", 0.0)
        elif ev.kind == "cache_hit":
            hits += ev.count
        elif ev.kind == "recompile":
            for kind in ev.details.get("kinds") or ("evicted",):
                _add(groups, kind, ev.message, ev.details.get("call_site"))
        elif ev.kind == "stale_global":
            _add(groups, "captured_global", ev.message, None, ev.count)
    if not groups and not compiles:
        return None
    reasons = sorted(groups.values(), key=lambda g: (g.kind != "first", -g.count))
    return LedgerRow(name, _location(location), trace_s, compile_s, compiles, traces, hits,
                     reasons)


def _merge(a: LedgerRow, b: LedgerRow) -> LedgerRow:
    """Two rows of the same code (function objects made anew from one definition)."""
    groups = {g.kind: ReasonGroup(g.kind, g.count, list(g.examples), g.call_sites.copy())
              for g in a.reasons}
    for g in b.reasons:
        mine = groups.setdefault(g.kind, ReasonGroup(g.kind))
        mine.count += g.count
        mine.examples = (mine.examples + [e for e in g.examples
                                          if e not in mine.examples])[:3]
        mine.call_sites.update(g.call_sites)
    reasons = sorted(groups.values(), key=lambda g: (g.kind != "first", -g.count))
    return LedgerRow(a.name, a.location, a.trace_s + b.trace_s, a.compile_s + b.compile_s,
                     a.compiles + b.compiles, a.traces + b.traces, a.hits + b.hits, reasons)


# Rows of functions that are gone (garbage collected with their caches), merged by code:
# (name, location) -> LedgerRow. Bounded: the oldest definitions go first.
_retired: "collections.OrderedDict[tuple, LedgerRow]" = collections.OrderedDict()
_RETIRED_LIMIT = 512


def retire(name: str, location: str, events) -> None:
    """Called when a jitted function's cache is collected: keep its row, not its events."""
    row = _row_of_events(name, location, events)
    if row is None:
        return
    key = (name, location)
    old = _retired.pop(key, None)
    _retired[key] = row if old is None else _merge(old, row)
    while len(_retired) > _RETIRED_LIMIT:
        _retired.popitem(last=False)


def _add(groups, kind, example, call_site, n=1):
    g = groups.setdefault(kind, ReasonGroup(kind))
    g.count += n
    if example and example not in g.examples and len(g.examples) < 3:
        g.examples.append(example)
    if call_site is not None:
        g.call_sites[_where(call_site)] += n


def _location(loc: str) -> str:
    """`file:line` of a definition, as a cell number in a notebook."""
    from .core.source import notebook_cell_of
    file, _, line = loc.rpartition(":")
    cell = notebook_cell_of(file) if file else None
    return loc if cell is None else f"cell {cell}, line {line}"


def ledger() -> Ledger:
    """Every jitted function that has traced or compiled in this process (those already
    garbage collected too, merged by definition), most costly first."""
    from .jit import registry
    rows = dict(_retired)
    for cache in registry():
        row = _row_of(cache)
        if row is None:
            continue
        key = (cache.name, cache.location)
        rows[key] = row if key not in rows else _merge(rows[key], row)
    return Ledger(rows.values())


class LiveLedger:
    """A ledger display that redraws itself as jit works (`%jitledger --live`): on every
    trace, compile, recompile and stale global at once, on cache hits at most once a second.
    `.stop()` (or a new live ledger) ends it."""

    _current: "LiveLedger | None" = None
    HIT_INTERVAL_S = 1.0
    _REDRAW_ON = {"trace", "compile", "recompile", "stale_global", "eviction", "error"}

    def __init__(self):
        from IPython.display import display
        from .diagnostics import subscribe
        if LiveLedger._current is not None:
            LiveLedger._current.stop()
        LiveLedger._current = self
        self._last = 0.0
        self.handle = display(ledger(), display_id=True)
        self._unsubscribe = subscribe(self._on_event)

    def _on_event(self, cache, event):
        import time
        now = time.monotonic()
        if event.kind in self._REDRAW_ON or now - self._last >= self.HIT_INTERVAL_S:
            self._last = now
            self.handle.update(ledger())

    def stop(self):
        self._unsubscribe()
        if LiveLedger._current is self:
            LiveLedger._current = None
