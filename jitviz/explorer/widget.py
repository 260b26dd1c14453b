"""The explorer widgets: `Explorer` (one function's graph, stages, specializations and events)
and `MonitorWidget` (live jit events), anywidgets whose front end is `jitviz/static/explorer.js`,
built from `labextension/`.
"""
from __future__ import annotations

import functools
import json
import pathlib
import threading
import time
import weakref

import anywidget
import traitlets

from .. import staging
from ..cache_keys import nearest
from ..diagnostics import subscribe
from ..jit import JitFunction
from ..passes import lower_stages
from . import dot as dotlib
from . import history
from .graph import build_graph, compact_graph, stale_bindings, with_cache_hits

STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"
BUNDLE = STATIC / "explorer.js"
STYLES = STATIC / "explorer.css"
GRAPHVIZ_WASM = STATIC / "graphviz.js"  # sent to the browser only when it has to lay out
MAX_EVENTS = 500
LIVE_REFRESH_S = 0.25
#: The text fallback of a saved explorer keeps this many lines of the jaxpr.
MAX_TEXT_LINES = 400
#: A compare reply lists at most this many rows (all levels together); the rest is cut.
MAX_DIFF_ROWS = 4000

_MISSING_BUNDLE_ESM = """
export default { render({ el }) {
  el.textContent = "jitviz explorer: the front end bundle (jitviz/static/explorer.js) is " +
    "missing. Build it with `npm ci && npm run build` in labextension/, or reinstall jitviz.";
} };
"""


def _front_end(path: pathlib.Path, fallback: str):
    return path if path.is_file() else fallback


# --- what is being explored ------------------------------------------------------------------

class Specialization:
    """One traced version of the function: a jit cache entry, or a trace made for exploring."""

    def __init__(self, signature, stages, kernels=(), report=None, hits=None, key=None,
                 paths=(), backend="", compiled=True, created=None, compiled_stage=None):
        self.signature = signature
        self.created = created
        self.stages = list(stages)
        self.kernels = list(kernels)
        self.report = report if report is not None else self.stages[0][1].report
        self.hits = hits
        self.key = key
        self.paths = list(paths)
        self.backend = backend
        self.compiled = compiled
        self.compiled_stage = compiled_stage  # the stage the backend compiled, as jit recorded

    def compiled_index(self) -> int:
        """The index in `stages` of the stage the backend compiled."""
        return [name for name, _ in self.stages].index(self.compiled_stage)

    @classmethod
    def from_entry(cls, entry):
        kernels = getattr(entry.executable, "kernels", ()) or ()
        return cls(entry.signature, entry.stages, kernels, entry.report, entry.hits, entry.key,
                   entry.paths, entry.backend, created=getattr(entry, "created", None),
                   compiled_stage=entry.executable.stage)

    def arguments(self) -> dict[str, str]:
        if self.key is None:
            return {}
        out = {str(p): a.str_short() + ("~" if a.weak_type else "")
               for p, a in zip(self.paths, self.key.avals)}
        out.update({str(name): repr(value) for name, value in self.key.statics})
        return out


def signature_diff(before: Specialization | None, after: Specialization) -> list[dict]:
    """What changed in the arguments from one specialization to the next."""
    if before is None:
        return []
    old, new = before.arguments(), after.arguments()
    return [{"argument": name, "before": old.get(name, "(absent)"),
             "after": new.get(name, "(absent)")}
            for name in dict.fromkeys(list(old) + list(new)) if old.get(name) != new.get(name)]


class Subject:
    """A function to explore: its specializations and its event log."""

    def __init__(self, fun, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.fun = fun
        self.jitted = fun if isinstance(fun, JitFunction) else None
        self.name = getattr(getattr(fun, "__wrapped__", fun), "__name__", None) or "fun"
        self.globals = getattr(getattr(fun, "__wrapped__", fun), "__globals__", None)
        self.args, self.kwargs = args, kwargs
        self.extra: Specialization | None = None  # traced here, not (yet) in the jit cache
        if self.jitted is None:
            closed = staging.make_jaxpr(fun)(*args, **kwargs)
            self.extra = Specialization("traced for explore()", lower_stages(closed),
                                        compiled=False)
        elif args or kwargs:
            self.wanted = self._key_of(args, kwargs)
            if self.wanted not in self.jitted._cache.entries:
                lowered = self.jitted.lower(*args, **kwargs)
                self.extra = Specialization("lowered by explore() (not called yet)",
                                            lowered.stages, compiled=False)

    def _key_of(self, args, kwargs):
        split = staging.split_args(self.jitted._spec, args, kwargs)
        return self.jitted._key(split)

    def specializations(self) -> list[Specialization]:
        out = []
        if self.jitted is not None:
            entries = list(self.jitted._cache.entries.values())
            order = self._trace_order()
            entries.sort(key=lambda e: order.get(e.signature, len(order)))
            out = [Specialization.from_entry(e) for e in entries]
        if self.extra is not None:
            out.append(self.extra)
        return out

    def preferred(self, specs: list[Specialization]) -> int:
        """The specialization to show first: the one for the given arguments, else the most
        recently used."""
        if not specs:
            return -1
        if self.extra is not None:
            return len(specs) - 1
        wanted = getattr(self, "wanted", None)
        if wanted is not None:
            for i, spec in enumerate(specs):
                if spec.key == wanted:
                    return i
        mru = next(reversed(self.jitted._cache.entries.values()), None)
        for i, spec in enumerate(specs):
            if mru is not None and spec.key == mru.key:
                return i
        return len(specs) - 1

    def _trace_order(self) -> dict[str, int]:
        order = {}
        for event in self.events_raw():
            if event.kind == "trace" and event.signature not in order:
                order[event.signature] = len(order)
        return order

    def events_raw(self):
        return list(self.jitted.events) if self.jitted is not None else []

    def recompile_reasons(self) -> dict[str, str]:
        return {e.signature: e.details.get("reason", e.message)
                for e in self.events_raw() if e.kind == "recompile"}

    def events(self) -> list[dict]:
        return [_event_json(i, e) for i, e in enumerate(self.events_raw()[-MAX_EVENTS:])]

    def event_count(self) -> int:
        """Events so far, repeats included (a cache hit repeated 5 times counts 5)."""
        return sum(getattr(e, "count", 1) for e in self.events_raw())


def _event_json(index, event) -> dict:
    out = event.to_dict()
    out["index"] = index
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in out.items()}


# --- the explorer widget ------------------------------------------------------------------------

def _locked(method):
    """Run under the widget's lock: live updates come from a timer thread."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return run


class _JitvizWidget(anywidget.AnyWidget):
    """What the jitviz widgets share: the front end bundle and its styles (set here, on a
    class, where anywidget looks for them), which of the bundle's views draws the widget
    (`widget`, from each subclass's `_view`), and a `title`."""

    _esm = _front_end(BUNDLE, _MISSING_BUNDLE_ESM)
    _css = _front_end(STYLES, "")
    _view = ""

    widget = traitlets.Unicode().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    @traitlets.default("widget")
    def _default_widget(self):
        return self._view


def _json_text(value, widget=None) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _from_json_text(value, widget=None):
    return json.loads(value) if isinstance(value, str) else value


class Explorer(_JitvizWidget):
    """The jaxpr of a function as an interactive graph (see `jitviz.explore`).

    It shows the function as it was when the explorer was created (its cell ran): calls made
    later are counted in `pending` ("N newer events — show") and drawn only when the user asks
    (the front end's "show", or `refresh()`); `updated` then says so.

    Synced state is kept small (it is saved in notebooks): the graph goes in a compact form
    (`compact_graph`), `dot` only when there is no server SVG, and Graphviz's WebAssembly only
    on request, as a message.
    """

    _view = "explorer"

    # compact_graph(self.full_graph), synced (and saved) as one JSON string: a saved notebook
    # indents JSON lists one item a line, which tripled the size of a large graph
    graph = traitlets.Dict().tag(sync=True, to_json=_json_text, from_json=_from_json_text)
    view = traitlets.Dict().tag(sync=True)
    dot = traitlets.Unicode("").tag(sync=True)  # only when svg is empty (browser lays out)
    svg = traitlets.Unicode("").tag(sync=True)
    renderer = traitlets.Unicode("").tag(sync=True)  # "dot" (server SVG) or "wasm"
    jaxpr = traitlets.Unicode("").tag(sync=True)
    stages = traitlets.List().tag(sync=True)
    stage = traitlets.Unicode("").tag(sync=True)
    specializations = traitlets.List().tag(sync=True)
    specialization = traitlets.Int(-1).tag(sync=True)
    events = traitlets.List().tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    pending = traitlets.Int(0).tag(sync=True)  # jit events since what is shown
    # the previous run of the cell that defines the function (history.previous_run), if kept
    previous_run = traitlets.Dict().tag(sync=True)
    updated = traitlets.Unicode("").tag(sync=True)  # "updated after the cell ran: ..."

    def __init__(self, subject: Subject, **kwargs):
        super().__init__(**kwargs)
        self._lock = threading.RLock()
        self._subject = subject
        self._specs: list[Specialization] = []
        self._busy = False
        self.full_graph: dict = {}
        self.dot_text = ""
        self.title = subject.name
        self.on_msg(_answer_front_end)
        self._created_events = subject.event_count()
        self._shown_events = self._created_events
        self._load_specializations(select=None)
        self._remember_run()
        self._unsubscribe = None
        if subject.jitted is not None:
            self._live = _Throttle(LIVE_REFRESH_S, _weak_call(self, "_refresh_live"))
            self._unsubscribe = subject.jitted.events.subscribe(
                _weak_event_callback(self, self._live))

    # -- specializations and stages --
    @_locked
    def _load_specializations(self, select: int | None):
        specs = self._subject.specializations()
        self._specs = specs
        reasons = self._subject.recompile_reasons()
        rows = []
        for i, spec in enumerate(specs):
            before = self.previous_of(i)  # the one its recompile reason names
            rows.append({"index": i, "signature": spec.signature, "hits": spec.hits,
                         "backend": spec.backend, "compiled": spec.compiled,
                         "kernels": len(spec.kernels),
                         "reason": reasons.get(spec.signature, "first call" if i == 0 and
                                               spec.compiled else ""),
                         "diff": signature_diff(None if before is None else specs[before],
                                                spec)})
        self.events = self._subject.events()
        self.specializations = rows
        index = self._subject.preferred(specs) if select is None else select
        self._select_specialization(index)

    @_locked
    def _select_specialization(self, index: int):
        self._busy = True
        try:
            self.specialization = index
            spec = self._specs[index] if 0 <= index < len(self._specs) else None
            names = [name for name, _ in spec.stages] if spec else []
            rows = [{"name": stage.name, "equations": len(stage.jaxpr.eqns),
                     "changed": stage.changed} for stage in (spec.stages if spec else [])]
            if spec is not None and spec.kernels:
                compiled = spec.stages[spec.compiled_index()][1]
                rows.append({"name": "kernels", "equations": len(compiled.jaxpr.eqns),
                             "kernels": len(spec.kernels)})
                names.append("kernels")
            self.stages = rows
            stage = self.stage if self.stage in names else (names[0] if names else "")
            self.stage = stage
        finally:
            self._busy = False
        self._show_stage()

    @_locked
    def _show_stage(self):
        spec = self._current()
        if spec is None:
            self.full_graph, self.dot_text = {}, ""
            self.graph, self.dot, self.svg, self.view = {}, "", "", {}
            return
        names = [name for name, _ in spec.stages]
        group_kernels = self.stage == "kernels"
        if group_kernels:
            index = spec.compiled_index()
        else:
            index = names.index(self.stage) if self.stage in names else 0
        closed = spec.stages[index][1]
        previous = spec.stages[index - 1][1] if index > 0 and not group_kernels else None
        stale = stale_bindings(spec.report, self._subject.globals)
        graph = build_graph(closed, kernels=spec.kernels, report=spec.report,
                            cache_hits=spec.hits, stale=stale, previous=previous,
                            group_kernels=group_kernels, title=self._subject.name)
        self._busy = True
        try:
            with self.hold_sync():
                self.full_graph = graph
                self.graph = compact_graph(graph)
                self.jaxpr = str(closed)
                self.collapsed = list(graph["collapsed"])
                self.selected = ""
                self._render()
        finally:
            self._busy = False

    def _current(self) -> Specialization | None:
        i = self.specialization
        return self._specs[i] if 0 <= i < len(self._specs) else None

    def _render(self):
        graph = self.full_graph
        v = dotlib.view(graph, self.collapsed)
        if len(v.nodes) > dotlib.MAX_VISIBLE_NODES:
            self.collapsed = [n["id"] for n in graph["nodes"] if n["kind"] == "cluster"]
            v = dotlib.view(graph, self.collapsed)
        text = dotlib.to_dot(graph, the_view=v)
        svg = dotlib.render_svg(text)
        self.view = v.to_json()
        self.dot_text = text
        self.dot = "" if svg else text  # the browser needs the DOT only to lay it out itself
        self.svg = svg
        self.renderer = "dot" if svg else "wasm"

    @traitlets.validate("stage")
    def _valid_stage(self, proposal):
        """Stage names as listed; "optimized" means the last pass, "kernels" falls back to
        it when nothing was compiled."""
        names = [row["name"] for row in self.stages]
        value = proposal["value"]
        if value in names or not names:
            return value
        passes = [n for n in names if n != "kernels"]
        if value in ("optimized", "kernels"):
            return passes[-1]
        return names[0]

    @traitlets.observe("collapsed")
    def _on_collapsed(self, change):
        if not self._busy and self.full_graph:
            with self._lock, self.hold_sync():
                self._render()

    @traitlets.observe("stage")
    def _on_stage(self, change):
        if not self._busy:
            self._show_stage()

    @traitlets.observe("specialization")
    def _on_specialization(self, change):
        if not self._busy:
            self._select_specialization(change["new"])

    # -- compare: a diff of two specializations or stages, sent on request --
    def compare(self, a: tuple[int, str], b: tuple[int, str]):
        """`jitviz.diff` of two (specialization index, stage name) of this explorer, e.g.
        `explorer.compare((0, "traced"), (1, "traced"))`; "kernels" is the compiled stage."""
        with self._lock:
            (a_label, a_closed), (b_label, b_closed) = self._program(*a), self._program(*b)
        from ..diff import compare
        return compare(a_closed, b_closed, a_label, b_label)

    # -- the previous run of a re-run cell (a new function object of the same definition) --
    @_locked
    def _remember_run(self):
        history.remember(self._subject.fun, self._specs)
        run = history.previous_run(self._subject.fun)
        self.previous_run = {} if run is None else {
            "label": run.describe(), "name": run.name, "where": run.where(),
            "signatures": [s.signature for s in run.specializations]}

    def compare_previous_run(self, stage: str = "traced", index: int | None = None):
        """`jitviz.diff` of the previous run of this function's cell (its specialization with
        the same argument types, else its newest) against specialization `index` (default:
        the one shown) of this run, at `stage` ("kernels": each one's compiled stage). None
        when no previous run is kept (`history`)."""
        with self._lock:
            run = history.previous_run(self._subject.fun)
            index = self.specialization if index is None else index
            if run is None:
                return None
            b_label, b_closed = self._program(index, stage)
            a_label, a_closed = _kept_program(run, self._specs[index], stage)
        from ..diff import compare
        return compare(a_closed, b_closed, a_label, f"this run: {b_label}")

    def previous_of(self, index: int) -> int | None:
        """The specialization that `index` was recompiled from (as `jitviz.diff_with_previous`
        picks it: the nearest earlier one by argument types and static values), or None."""
        target = self._specs[index] if 0 <= index < len(self._specs) else None
        if target is None or target.created is None or target.key is None:
            return None
        earlier = [i for i, s in enumerate(self._specs)
                   if s.created is not None and s.key is not None and s.created < target.created]
        if not earlier:
            return None
        earlier.sort(key=lambda i: self._specs[i].created)
        return nearest(earlier, target.key, key_of=lambda i: self._specs[i].key)

    def _program(self, index, stage):
        if not isinstance(index, int) or not 0 <= index < len(self._specs):
            raise ValueError(f"no specialization #{index}")
        spec = self._specs[index]
        names = [name for name, _ in spec.stages]
        if stage == "kernels" and spec.kernels:
            closed = spec.stages[spec.compiled_index()][1]
        elif stage in names:
            closed = spec.stages[names.index(stage)][1]
        else:
            raise ValueError(f"specialization #{index} has no stage {stage!r}; its stages "
                             f"are {', '.join(names)}")
        return f"#{index} {spec.signature} \u00b7 {stage}", closed

    def _answer_compare(self, content: dict):
        """Answer a front end's compare request with a `diff` message: `{a: {specialization,
        stage}, b: {...}}`, or `{previous: index, stage}` (the recompile behind `index`)."""
        reply = {"type": "diff", "id": content.get("id")}
        try:
            stage = content.get("stage") or "traced"
            if content.get("previous_run"):
                reply["diff"] = self._previous_run_data(stage)
                self.send(reply)
                return reply
            if "previous" in content:
                index = content["previous"]
                before = self.previous_of(index)
                if before is None:
                    raise ValueError(f"specialization #{index} was not recompiled from one "
                                     "still in the cache")
                a, b = (before, stage), (index, stage)
            else:
                a = (content["a"]["specialization"], content["a"].get("stage") or stage)
                b = (content["b"]["specialization"], content["b"].get("stage") or stage)
            d = self.compare(a, b)
            data = diff_data(d)
            data["a_pick"] = {"specialization": a[0], "stage": a[1]}
            data["b_pick"] = {"specialization": b[0], "stage": b[1]}
            data["previous"] = "previous" in content
            reply["diff"] = data
        except (KeyError, TypeError, ValueError) as err:
            reply["error"] = str(err)
        self.send(reply)
        return reply

    def _previous_run_data(self, stage: str) -> dict:
        d = self.compare_previous_run(stage)
        if d is None:
            why = history.why_not_kept(self._subject.fun)
            raise ValueError("no previous run of this function is kept" +
                             (f": {why}" if why else ""))
        data = diff_data(d)
        data["previous_run"] = True
        data["b_pick"] = {"specialization": self.specialization, "stage": stage}
        return data

    # -- later calls: counted, and drawn when asked --
    @_locked
    def _refresh_live(self):
        """A jit event arrived (throttled): count what the explorer does not show yet."""
        self.pending = max(0, self._subject.event_count() - self._shown_events)

    @_locked
    def refresh(self):
        """Show the function as it is now: the specializations, hits and events of calls made
        after the explorer was created."""
        now = self._subject.event_count()
        later = now - self._created_events
        if self.pending or now != self._shown_events:
            self._refresh_state()
            self._remember_run()
        self._shown_events = now
        self.pending = 0
        if later > 0:
            self.updated = (f"updated after the cell ran: showing {later} later "
                            f"event{'s' if later != 1 else ''} (calls made after this explorer "
                            "was created)")

    def _refresh_state(self):
        known = [s.signature for s in self._specs if s.compiled]
        current = [e.signature for e in self._subject.jitted._cache.entries.values()]
        if sorted(known) != sorted(current):
            self._load_specializations(select=None)
            return
        self.events = self._subject.events()
        for row, spec in zip(self.specializations, self._specs):
            entry = self._subject.jitted._cache.entries.get(spec.key)
            if entry is not None:
                spec.hits = entry.hits
        self.specializations = [dict(row, hits=spec.hits)
                                for row, spec in zip(self.specializations, self._specs)]
        current = self._current()
        shown = next((n["skipped"] for n in self.full_graph.get("nodes", ())
                      if n["kind"] == "effect"), None)
        if current is not None and shown is not None and shown != (current.hits or 0):
            with self.hold_sync():
                self.full_graph = with_cache_hits(self.full_graph, current.hits or 0)
                self.graph = compact_graph(self.full_graph)
                self._render()

    def close(self):
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()

    # -- saved notebooks, nbconvert, GitHub --
    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and for every place that cannot run it (an untrusted notebook,
        nbconvert, GitHub): the jaxpr as text/plain and the graph as image/svg+xml. No
        text/html: sanitized (untrusted), an SVG in HTML shrinks to a run-on list of node ids."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {k: v for k, v in dict(data).items() if k != "text/html"}
        data["text/plain"] = static_text(self.title, self.stage, self.jaxpr)
        if self.svg:
            data["image/svg+xml"] = self.svg
        return data, metadata


def _kept_program(run, current: Specialization, stage: str):
    """(label, ClosedJaxpr) of the previous run's specialization matching `current` (same
    argument types and static values, else the same signature, else its newest), at `stage`
    (its compiled stage for "kernels"; its traced stage when it lacks `stage`)."""
    specs = run.specializations
    kept = next((s for s in specs if current.key is not None and s.key == current.key), None) \
        or next((s for s in specs if s.signature == current.signature), None) or specs[-1]
    names = [name for name, _ in kept.stages]
    wanted = kept.compiled_stage if stage == "kernels" else stage
    shown = wanted if wanted in names else names[0]
    label = f"previous run ({run.where()}): {kept.signature} \u00b7 {shown}"
    return label, kept.stages[names.index(shown)][1]


def diff_data(d) -> dict:
    """What the front end draws of a `ProgramDiff`: `to_dict()` without its text, change
    fields named in words, at most `MAX_DIFF_ROWS` rows (`cut` counts the rest), and both
    programs' graphs coloured by status (`graphs`: `jitviz.diff.views.graph_data`)."""
    from ..diff.views import graph_data
    data = d.to_dict()
    data.pop("text", None)
    budget = [MAX_DIFF_ROWS]

    def trim(rows):
        kept = []
        for row in rows:
            if budget[0] <= 0:
                break
            budget[0] -= 1
            for c in row["changes"]:
                c["label"] = _change_label(c["field"])
            for sub in row["subs"]:
                sub["rows"] = trim(sub["rows"])
            kept.append(row)
        return kept
    total = sum(1 for _ in d.root.walk())
    data["rows"] = trim(data["rows"])
    data["cut"] = max(0, total - MAX_DIFF_ROWS)
    for key in ("inputs", "outputs", "constants"):
        for c in data[key]:
            c["label"] = _change_label(c["field"])
    data["graphs"] = graph_data(d)
    return data


def _change_label(field: str) -> str:
    from ..diff import Change
    return Change(field, "", "").label


def static_text(title: str, stage: str, jaxpr: str, max_lines: int = MAX_TEXT_LINES) -> str:
    """The explorer without the widget, as text: a header and the jaxpr (its first
    `max_lines` lines for a very long program)."""
    lines = jaxpr.splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"  ... ({len(lines) - max_lines} more lines of the jaxpr)"]
    return f"jitviz explorer: {title} ({stage} stage)\n" + "\n".join(lines)


# --- the monitor widget -------------------------------------------------------------------------

class MonitorWidget(_JitvizWidget):
    """Jit events as they happen, for the given functions or all of them (`jitviz.monitor`)."""

    _view = "monitor"

    events = traitlets.List().tag(sync=True)
    functions = traitlets.List().tag(sync=True)

    def __init__(self, fns=(), **kwargs):
        super().__init__(**kwargs)
        self._caches = [f._cache for f in fns if isinstance(f, JitFunction)]
        names = ", ".join(c.name for c in self._caches)
        self.title = f"jit events: {names}" if names else "jit events: every jitted function"
        self._events: list = []
        self._started = time.time()
        self._lock = threading.Lock()
        self._live = _Throttle(LIVE_REFRESH_S, _weak_call(self, "_flush"))
        self._unsubscribe = subscribe(_weak_global_callback(self))
        self._flush()

    def _watching(self, cache) -> bool:
        return not self._caches or any(cache is c for c in self._caches)

    def _on_event(self, cache, event):
        if not self._watching(cache):
            return
        with self._lock:
            if not any(e is event for e, _ in self._events[-50:]):
                self._events.append((event, cache.name))
                del self._events[:-MAX_EVENTS]
        self._live.poke()

    def _flush(self):
        with self._lock:
            rows = [dict(_event_json(i, e), function=name)
                    for i, (e, name) in enumerate(self._events)]
        caches = self._caches or [c for c in _registry_caches()]
        self.functions = [{"name": c.name, **c.info()._asdict()} for c in caches]
        self.events = rows

    def close(self):
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and the function table and the events as text/plain for places
        that cannot run it (an untrusted notebook, nbconvert, GitHub)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {k: v for k, v in dict(data).items() if k != "text/html"}
        self._flush()
        data["text/plain"] = monitor_text(self.title, self.functions, self.events)
        return data, metadata


def monitor_text(title: str, functions: list[dict], events: list[dict],
                 max_events: int = 60) -> str:
    """The monitor as a text table: one row per function, then the events, newest last."""
    out = [title]
    head = ("function", "cache hits", "misses", "entries", "traces", "compiles")
    rows = [head] + [(f["name"], *(str(f.get(k, "")) for k in
                                   ("hits", "misses", "entries", "traces", "compiles")))
                     for f in functions]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out.append(f"events ({len(events)}):" if events else "events: none yet")
    shown = events[-max_events:]
    if len(events) > len(shown):
        out.append(f"  ... {len(events) - len(shown)} earlier events")
    for e in shown:
        times = f" x{e['count']}" if e.get("count", 1) > 1 else ""
        detail = e.get("reason") if e["kind"] == "recompile" and e.get("reason") else e["message"]
        out.append(f"  {e['kind'].replace('_', ' ')}{times}  {e.get('function', '')}"
                   f"({e['signature']}): {detail}")
    return "\n".join(out)


def _answer_front_end(widget, content, buffers):
    """The browser asks for Graphviz compiled to WebAssembly when the kernel sent no SVG, for
    the calls made after the explorer was created ("show"), and for a diff ("compare")."""
    if isinstance(content, dict) and content.get("type") == "refresh":
        refresh = getattr(widget, "refresh", None)
        if refresh is not None:
            refresh()
        return
    if isinstance(content, dict) and content.get("type") == "compare":
        answer = getattr(widget, "_answer_compare", None)
        if answer is not None:
            answer(content)
        return
    if isinstance(content, dict) and content.get("type") == "graphviz":
        if GRAPHVIZ_WASM.is_file():
            widget.send({"type": "graphviz"}, [GRAPHVIZ_WASM.read_bytes()])
        else:
            widget.send({"type": "graphviz"}, [])


def _registry_caches():
    from ..jit import registry
    return registry()


# --- throttled, weakly held callbacks ---------------------------------------------------------

class _Throttle:
    """Runs `action` at most once per `interval` seconds, and once more after the last poke."""

    def __init__(self, interval: float, action):
        self.interval = interval
        self.action = action
        self.last = 0.0
        self.timer: threading.Timer | None = None
        self.lock = threading.Lock()

    def poke(self):
        with self.lock:
            wait = self.last + self.interval - time.monotonic()
            if wait <= 0 and self.timer is None:
                self.last = time.monotonic()
                run_now = True
            else:
                run_now = False
                if self.timer is None:
                    self.timer = threading.Timer(max(wait, 0.01), self._fire)
                    self.timer.daemon = True
                    self.timer.start()
        if run_now:
            self.action()

    def _fire(self):
        with self.lock:
            self.timer = None
            self.last = time.monotonic()
        self.action()


def _weak_call(obj, method: str):
    ref = weakref.ref(obj)

    def call():
        target = ref()
        if target is not None and getattr(target, "comm", None) is not None:
            getattr(target, method)()
    return call


def _weak_event_callback(widget, throttle: _Throttle):
    ref = weakref.ref(widget)

    def on_event(event):
        if ref() is not None:
            throttle.poke()
    return on_event


def _weak_global_callback(widget: MonitorWidget):
    ref = weakref.ref(widget)

    def on_event(cache, event):
        target = ref()
        if target is not None:
            target._on_event(cache, event)
    return on_event


# --- entry points ---------------------------------------------------------------------------

def explore(fun, *args, **kwargs) -> Explorer:
    """The explorer for `fun` at `args`: a plain function is traced; a `jitviz.jit` function
    shows its cache entries (the one for `args`, lowered if not called yet)."""
    if not callable(fun):
        raise TypeError(f"explore expects a function, got {type(fun).__name__}")
    return Explorer(Subject(fun, args, kwargs))


def monitor(*fns) -> MonitorWidget:
    """Live jit events of `fns` (jitted functions), or of every jitted function."""
    for f in fns:
        if not isinstance(f, JitFunction):
            raise TypeError(f"monitor expects jitviz.jit functions, got {f!r}")
    return MonitorWidget(fns)
