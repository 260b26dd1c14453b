"""`jitviz.export(obj, "report.html")`: one self-contained offline HTML file, and its JSON twin.

    jitviz.export(f, "f.html")              # a jitted function: everything jitviz knows of it
    jitviz.export(jitviz.diff(a, b), "d.html")
    jitviz.export(jitviz.ledger(), "ledger.html")

The HTML needs no kernel, no network and no script: inline CSS, inline SVG, no URL. Next to it,
`report.json` (the same name with `.json`) holds the same parts as data (`to_dict()` of each).
For a jitted function the parts are: its ledger row, its specializations (jaxpr of every
stage), for each recompile the diff from the specialization it was recompiled from (with the
reason), its event log, and the source-fate annotation when `jitviz.annotate` is available.
"""
from __future__ import annotations

import datetime
import html
import importlib
import json
import pathlib
from dataclasses import dataclass, field

__all__ = ["export", "Report", "Section"]

PAGE_STYLE = """
body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: #1e293b; margin: 16px 20px; }
h1 { font-size: 19px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 22px 0 6px; border-bottom: 1px solid #e2e8f0; }
h3 { font-size: 13px; margin: 12px 0 4px; }
.meta { color: #64748b; }
nav a { margin-right: 12px; color: #1d4ed8; }
pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
      background: #f8fafc; border: 1px solid #e2e8f0; padding: 6px 8px; overflow: auto;
      white-space: pre; margin: 4px 0; }
table.events { border-collapse: collapse; font-size: 12.5px; width: 100%; }
table.events td, table.events th { border-top: 1px solid #e2e8f0; padding: 2px 6px;
      text-align: left; vertical-align: top; }
table.events td.kind { white-space: nowrap; font-weight: 600; }
summary { cursor: pointer; color: #334155; }
.note { color: #64748b; font-style: italic; }
"""


@dataclass
class Section:
    """One part of a report: its HTML (escaped, static) and its data (JSON-ready)."""
    key: str
    title: str
    html: str
    data: object


@dataclass
class Report:
    title: str
    kind: str
    sections: list = field(default_factory=list)
    subtitle: str = ""

    def to_dict(self) -> dict:
        from . import __version__
        out = {"title": self.title, "kind": self.kind, "jitviz_version": __version__}
        out.update({s.key: s.data for s in self.sections})
        return out

    def to_html(self) -> str:
        e = html.escape
        nav = "".join(f"<a href='#{s.key}'>{e(s.title)}</a>" for s in self.sections)
        body = "".join(f"<section id='{s.key}'><h2>{e(s.title)}</h2>{s.html}</section>"
                       for s in self.sections)
        when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                f"<title>{e(self.title)}</title><style>{PAGE_STYLE}</style></head><body>"
                f"<h1>{e(self.title)}</h1><div class='meta'>{e(self.subtitle)}"
                f"{' · ' if self.subtitle else ''}exported by jitviz on {when}</div>"
                f"<nav>{nav}</nav>{body}</body></html>\n")


def export(obj, path, *, title: str | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """Write `obj` (a jitted function, a `ProgramDiff`, a `Ledger`, an `Annotation`) to `path`
    as self-contained offline HTML, and its data to the same name with `.json`. Returns the
    two paths."""
    html_path = pathlib.Path(path)
    json_path = html_path.with_suffix(".json")
    if json_path == html_path:
        raise ValueError(f"export writes HTML to {path!r} and JSON next to it: give the HTML "
                         "file's name (report.html)")
    report = report_of(obj)
    if title:
        report.title = title
    html_path.write_text(report.to_html(), encoding="utf-8")
    json_path.write_text(json.dumps(report.to_dict(), indent=1, default=str, allow_nan=True),
                         encoding="utf-8")
    return html_path, json_path


def report_of(obj) -> Report:
    from .diff import ProgramDiff
    from .jit import JitFunction
    from .ledger import Ledger
    if isinstance(obj, JitFunction):
        return _function_report(obj)
    if isinstance(obj, ProgramDiff):
        return Report(f"jitviz diff: {obj.a_label} \u2192 {obj.b_label}", "diff",
                      [_diff_section("diff", "diff", obj)])
    if isinstance(obj, Ledger):
        return Report("jitviz ledger", "ledger", [_ledger_section(obj)])
    if _is_annotation(obj):
        return Report("jitviz source annotation", "annotation", [_annotation_section(obj)])
    raise TypeError(f"jitviz.export cannot export a {type(obj).__name__}: pass a jitted "
                    "function, a jitviz.diff(...) result, jitviz.ledger() or an annotation")


# --- a jitted function -----------------------------------------------------------------------

def _function_report(f) -> Report:
    cache = f._cache
    specs = f.specializations
    sections = [_ledger_section(_ledger_of(cache)), _specializations_section(specs),
                _diffs_section(f, specs), _events_section(f.events)]
    annotation = _annotation_section_of(f)
    if annotation is not None:
        sections.append(annotation)
    info = f.cache_info()
    subtitle = (f"{cache.location} · backend {f.backend} · {info.entries} specialization(s), "
                f"{info.hits} cache hit(s), {info.compiles} compile(s)")
    return Report(f"jitviz report: {cache.name}", "jit_function", sections, subtitle)


def _ledger_of(cache):
    from .ledger import Ledger, _row_of
    row = _row_of(cache)
    return Ledger([row] if row is not None else [])


def _specializations_section(specs) -> Section:
    e = html.escape
    parts, data = [], []
    if not specs:
        parts.append("<p class='note'>no specialization is cached (not called yet, or the "
                     "cache was cleared)</p>")
    for i, spec in enumerate(specs):
        stages = [(name, str(closed)) for name, closed in spec.stages]
        later = "".join(f"<details><summary>after pass <b>{e(name)}</b></summary>"
                        f"<pre>{e(text)}</pre></details>" for name, text in stages[1:])
        parts.append(f"<h3>#{i} <code>{e(spec.signature)}</code> "
                     f"<span class='meta'>{spec.hits} cache hit(s), "
                     f"{len(spec.closed.jaxpr.eqns)} equations</span></h3>"
                     f"<pre>{e(str(spec.closed))}</pre>{later}")
        data.append({"signature": spec.signature, "hits": spec.hits,
                     "backend": getattr(spec, "backend", ""), "jaxpr": str(spec.closed),
                     "stages": [{"name": n, "jaxpr": t} for n, t in stages]})
    return Section("specializations", "Specializations", "".join(parts), data)


def _diffs_section(f, specs) -> Section:
    """Each specialization against the one it was recompiled from (the nearest earlier one,
    which the recompile reason describes: for two, simply the first)."""
    from .diff import diff_with_previous
    reasons = {ev.signature: ev.details.get("reason", ev.message)
               for ev in f.events if ev.kind == "recompile"}
    parts, data = [], []
    for index, spec in enumerate(specs[1:], start=1):
        d = diff_with_previous(f, index)
        reason = reasons.get(spec.signature, "")
        parts.append(f"<h3><code>{html.escape(d.a_label)}</code> \u2192 "
                     f"<code>{html.escape(d.b_label)}</code></h3>"
                     + (f"<div>recompiled because {html.escape(reason)}</div>" if reason
                        else "") + d.html())
        data.append(dict(d.to_dict(), reason=reason))
    if not data:
        parts.append("<p class='note'>one specialization or none: nothing to compare</p>")
    return Section("diffs", "Recompiles: what each new specialization changed",
                   "".join(parts), data)


def _events_section(events) -> Section:
    e = html.escape
    rows = list(events)
    start = rows[0].time if rows else 0.0
    body = "".join(
        f"<tr><td>+{ev.time - start:.3f} s</td><td class='kind'>{e(ev.kind)}"
        f"{f' ×{ev.count}' if ev.count > 1 else ''}</td><td><code>{e(ev.signature)}</code>"
        f"</td><td>{e(ev.message)}</td></tr>" for ev in rows)
    table = ("<table class='events'><tr><th>time</th><th>event</th><th>signature</th>"
             f"<th>what happened</th></tr>{body}</table>") if rows else \
        "<p class='note'>no events</p>"
    return Section("events", "Event log", table, [ev.to_dict() for ev in rows])


# --- ledger, diff and annotation parts ------------------------------------------------------------

def _ledger_section(ledger) -> Section:
    return Section("ledger", "Ledger", ledger._repr_html_(),
                   {"total_seconds": ledger.total_seconds,
                    "rows": [_ledger_row_dict(r) for r in ledger.rows]})


def _ledger_row_dict(row) -> dict:
    return {"name": row.name, "location": row.location, "seconds": row.seconds,
            "trace_s": row.trace_s, "compile_s": row.compile_s, "compiles": row.compiles,
            "traces": row.traces, "hits": row.hits, "recompiles": row.recompiles,
            "reasons": [{"kind": g.kind, "name": g.name, "count": g.count,
                         "examples": list(g.examples), "call_sites": dict(g.call_sites),
                         "fix": g.fix} for g in row.reasons]}


def _diff_section(key, title, d) -> Section:
    return Section(key, title, d.html(), d.to_dict())


def _is_annotation(obj) -> bool:
    return type(obj).__name__ == "Annotation" and hasattr(obj, "to_dict") and \
        hasattr(obj, "_repr_html_")


def _annotation_section(annotation) -> Section:
    return Section("annotation", "Source annotation", annotation._repr_html_(),
                   annotation.to_dict())


def _annotation_section_of(f) -> Section | None:
    """The source-fate annotation of `f`, when jitviz/annotate.py exists (it is optional)."""
    try:
        module = importlib.import_module("jitviz.annotate")
    except ImportError:
        return None
    annotate = getattr(module, "annotate", None)
    if annotate is None:
        return None
    try:
        annotation = annotate(f)
    except Exception as err:  # noqa: BLE001 - one missing part must not lose the others
        return Section("annotation", "Source annotation",
                       f"<p class='note'>no annotation: {html.escape(type(err).__name__)}: "
                       f"{html.escape(str(err))}</p>", {"error": f"{type(err).__name__}: {err}"})
    return _annotation_section(annotation)
