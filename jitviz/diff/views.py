"""The views of a `ProgramDiff`: text (a unified diff), static HTML (side by side, with the
graphs coloured by status), and JSON-ready data."""
from __future__ import annotations

import collections
import html
import re
from typing import TYPE_CHECKING

from ..explorer.dot import DIFF_COLORS
from .printing import eqn_parts, eqn_text, names_of

if TYPE_CHECKING:
    from .result import Change, EqnDiff, JaxprDiff, ProgramDiff


def escape(text) -> str:
    return html.escape(str(text), quote=True)


# --- views: text -----------------------------------------------------------------------------

MARKS = {"unchanged": " ", "changed": "~", "added": "+", "removed": "-"}


def diff_text(d: ProgramDiff, context: int) -> str:
    lines = [f"--- a: {d.a_label}", f"+++ b: {d.b_label}"]
    lines += [f"~ {c}" for c in d.inputs + d.outputs + d.consts]
    counts = d.summary()
    if not d:
        lines.append(f"no differences ({counts['unchanged']} equations)")
        return "\n".join(lines)
    lines.append(", ".join(f"{counts[s]} {s}" for s in ("changed", "added", "removed",
                                                         "unchanged")))
    _text_level(d.root, (names_of(d.a), names_of(d.b)), context, "", lines)
    return "\n".join(lines)


def _text_level(level: JaxprDiff, names, context, indent, lines):
    last_source = None
    for kind, item in _visible(level.rows, context):
        if kind == "skip":
            lines.append(f"{indent}  ... {_n_unchanged(len(item))} ...")
            last_source = None
            continue
        row = item
        if row.source is not None and _source_key(row.source) != last_source:
            last_source = _source_key(row.source)
            lines.append(f"{indent}@@ {source_text(row.source)} @@")
        lines += [indent + line for line in _row_text(row, names)]
        for title, sub in row.subs if row.status != "unchanged" else ():
            lines.append(f"{indent}    {title}:")
            _text_level(sub, names, context, indent + "    ", lines)


def _row_text(row: EqnDiff, names) -> list[str]:
    note = f"   # {row.note}" if row.note else ""
    if row.status == "changed":
        what = "; ".join(str(c) for c in row.changes)
        return [f"~ {eqn_text(row.a, names[0])}",
                f"  \u2192 {eqn_text(row.b, names[1])}   [{what}]"]
    if row.status == "added":
        return [f"+ {eqn_text(row.b, names[1])}{note}"]
    if row.status == "removed":
        return [f"- {eqn_text(row.a, names[0])}{note}"]
    return [f"  {eqn_text(row.b, names[1])}"]


def _visible(rows, context):
    """("row", row) for rows within `context` of a difference, ("skip", [rows]) for the
    runs of unchanged rows between them."""
    differ = [i for i, r in enumerate(rows) if r.status != "unchanged"]
    keep = {k for i in differ for k in range(i - context, i + context + 1)}
    out, skipped = [], []
    for i, row in enumerate(rows):
        if i in keep:
            if skipped:
                out.append(("skip", skipped))
                skipped = []
            out.append(("row", row))
        else:
            skipped.append(row)
    if skipped:
        out.append(("skip", skipped))
    return out


def _n_unchanged(n: int) -> str:
    return f"{n} unchanged equation{'s' if n != 1 else ''}"


def _source_key(src):
    return (src.file, src.line)


def source_text(src) -> str:
    """`line 4 (f): y = x * 2`, with the notebook cell when there is one."""
    from ..diagnostics import describe_line
    return f"{describe_line(src.file, src.line)} ({src.function}): {src.code.strip()}"


# --- views: HTML -------------------------------------------------------------------------------

FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px"
COLUMNS = "display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);column-gap:8px"
ROW_STYLE = {
    "unchanged": ("", ""),
    "changed": ("background:#fef3c7", "background:#fef3c7"),
    "added": ("background:#f8fafc", "background:#dcfce7"),
    "removed": ("background:#fee2e2", "background:#f8fafc"),
}
MARK_STYLE = "background:#fbbf24;border-radius:2px;padding:0 1px"
CELL = "padding:1px 6px;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:3px"
GRAPH_COLORS = DIFF_COLORS  # status -> (fill, border): the table's colours


def diff_html(d: ProgramDiff, graphs: bool, context: int) -> str:
    names = (names_of(d.a), names_of(d.b))
    counts = d.summary()
    head = [
        f"<div style='{FONT};color:#334155;margin-bottom:6px'>",
        f"<div><b style='color:#b91c1c'>a</b> {escape(d.a_label)}</div>",
        f"<div><b style='color:#15803d'>b</b> {escape(d.b_label)}</div>",
        "<div style='margin-top:4px'>" + _count_chips(counts) + "</div>"]
    head += [f"<div>~ {_change_html(c)}</div>" for c in d.inputs + d.outputs + d.consts]
    head.append("</div>")
    if not d:
        body = f"<div style='{FONT}'><i>no differences</i></div>"
    else:
        titles = (f"<div style='{CELL};font-weight:bold'>a: {escape(d.a_label)}</div>"
                  f"<div style='{CELL};font-weight:bold'>b: {escape(d.b_label)}</div>")
        body = (f"<div style='{COLUMNS};{FONT}'>{titles}</div>"
                + _html_level(d.root, names, context))
    graph_html = _graphs_html(d) if graphs and d else ""
    return (f"<div class='jitviz-diff' style='{FONT};line-height:1.45'>"
            + "".join(head) + body + graph_html + "</div>")


def _count_chips(counts) -> str:
    colours = {"changed": "#fde68a", "added": "#bbf7d0", "removed": "#fecaca",
               "unchanged": "#e2e8f0"}
    return " ".join(f"<span style='background:{colours[s]};border-radius:8px;padding:0 7px'>"
                    f"{counts[s]} {s}</span>" for s in ("changed", "added", "removed",
                                                        "unchanged"))


def _change_html(c: Change) -> str:
    if not c.before:
        return f"<b>{escape(c.label)}</b>: {escape(c.after)}"
    return (f"<b>{escape(c.label)}</b> {escape(c.before)} \u2192 "
            f"<b>{escape(c.after)}</b>")


def _html_level(level: JaxprDiff, names, context) -> str:
    out, last_source = [], None
    for kind, item in _visible(level.rows, context):
        if kind == "skip":
            out.append(_collapsed_html(item, names))
            last_source = None
            continue
        row = item
        if row.source is not None and _source_key(row.source) != last_source:
            last_source = _source_key(row.source)
            out.append(_source_html(row.source))
        out.append(_row_html(row, names))
        for title, sub in row.subs if row.status != "unchanged" else ():
            out.append(f"<div style='margin-left:18px;border-left:2px solid #cbd5e1;"
                       f"padding-left:6px'><div style='color:#64748b'>{escape(title)}:</div>"
                       + _html_level(sub, names, context) + "</div>")
    return "".join(out)


def _collapsed_html(rows, names) -> str:
    inner = "".join(_row_html(r, names) for r in rows)
    return (f"<details style='margin:2px 0'><summary style='color:#64748b;cursor:pointer'>"
            f"\u2026 {_n_unchanged(len(rows))} \u2026</summary>{inner}</details>")


def _source_html(src) -> str:
    return (f"<div style='color:#64748b;background:#f1f5f9;padding:1px 6px;margin-top:4px'>"
            f"{escape(source_text(src))}</div>")


def _row_html(row: EqnDiff, names) -> str:
    left_style, right_style = ROW_STYLE[row.status]
    marked = {_part_of(f) for f in row.fields}
    left = _eqn_html(row.a, names[0], marked, "\u2212 " if row.status == "removed" else "")
    right = _eqn_html(row.b, names[1], marked, "+ " if row.status == "added" else "")
    if row.changes:
        right += ("<div style='font-size:11.5px;color:#92400e'>"
                  + "; ".join(_change_html(c) for c in row.changes) + "</div>")
    note = f"<div style='font-size:11.5px;color:#64748b'><i>{escape(row.note)}</i></div>" \
        if row.note else ""
    if row.status == "removed":
        left += note
    else:
        right += note
    return (f"<div class='jv-{row.status}' style='{COLUMNS};margin:1px 0'>"
            f"<div style='{CELL};{left_style}'>{left}</div>"
            f"<div style='{CELL};{right_style}'>{right}</div></div>")


def _part_of(field_name: str) -> str:
    if field_name.startswith(("body:", "arity", "outputs")):
        return "primitive"
    return field_name


def _eqn_html(eqn, names, marked, prefix) -> str:
    if eqn is None:
        return ""
    pieces = [escape(prefix)]
    for part, text in eqn_parts(eqn, names):
        if part is not None and part in marked:
            pieces.append(f"<mark style='{MARK_STYLE}'>{escape(text)}</mark>")
        else:
            pieces.append(escape(text))
    return "".join(pieces)


# --- views: graphs -----------------------------------------------------------------------------

def _graphs_html(d: ProgramDiff) -> str:
    try:
        graphs = status_graphs(d)
    except Exception:  # noqa: BLE001 - the graphs are an extra: the table stands alone
        graphs = {}
    svgs = [_side_svg(graphs[side], side) if graphs else "" for side in ("a", "b")]
    if not any(svgs):
        return ("<div style='color:#64748b;margin-top:8px'><i>graphs: Graphviz's dot is not "
                "installed (or the programs are too large to lay out)</i></div>")
    legend = " ".join(
        f"<span style='background:{fill};border:1px solid {line};padding:0 6px'>{status}</span>"
        for status, (fill, line) in GRAPH_COLORS.items())
    cells = "".join(
        f"<div style='min-width:0'><div style='font-weight:bold'>{side}: "
        f"{escape(label)}</div><div style='overflow-x:auto;"
        f"border:1px solid #e2e8f0'>{svg or '<i>not drawn</i>'}</div></div>"
        for side, label, svg in (("a", d.a_label, svgs[0]), ("b", d.b_label, svgs[1])))
    return (f"<div style='margin-top:12px'><div style='margin-bottom:4px'>graphs {legend}</div>"
            f"<div style='{COLUMNS}'>{cells}</div></div>")


#: Runs of at least this many unchanged equations of one level fold into one node in the
#: graphs of a diff (so what changed is what the eye meets).
MIN_FOLDED_RUN = 3


def status_graphs(d: ProgramDiff) -> dict[str, dict]:
    """The explorer's graph model of both programs ("a", "b") for a diff: every equation
    node that differs carries `diff` (its status); clusters with no difference inside are
    collapsed; runs of `MIN_FOLDED_RUN` or more unchanged equations of one level are folded
    into a collapsed cluster (`role: "unchanged"`) that says what it hides, except the
    equations that feed or use a difference (on either side: a matched pair stays visible
    in both graphs), which are the difference's context."""
    from ..explorer import graph as graph_model
    graphs, by_ids, context = {}, {}, {}
    for side in ("a", "b"):
        graph = graphs[side] = graph_model.build_graph(d.a if side == "a" else d.b)
        by_id = by_ids[side] = {n["id"]: n for n in graph["nodes"]}
        statuses = d.node_status(side)
        for node_id, status in statuses.items():
            by_id[node_id]["diff"] = status
        context[side] = _neighbours(graph, by_id, set(statuses))
    pairs = d.node_pairs()
    context["a"] |= {a for a, b in pairs if b in context["b"]}
    context["b"] |= {b for a, b in pairs if a in context["a"]}
    for side, graph in graphs.items():
        differ = _clusters_holding(d.node_status(side), by_ids[side])
        _fold_unchanged_runs(graph, by_ids[side], differ, context[side])
        graph["collapsed"] = [n["id"] for n in graph["nodes"]
                              if n["kind"] == "cluster" and n["id"] not in differ]
    return graphs


def _neighbours(graph: dict, by_id: dict, differing: set) -> set[str]:
    """The equation nodes one edge away from a differing node."""
    out = set()
    for edge in graph["edges"]:
        for here, there in ((edge["source"], edge["target"]), (edge["target"], edge["source"])):
            if here in differing and "primitive" in by_id.get(there, {}):
                out.add(there)
    return out - differing


def _clusters_holding(statuses: dict, by_id: dict) -> set[str]:
    """Every cluster with a differing node somewhere inside."""
    out = set()
    for node_id in statuses:
        parent = by_id[node_id]["cluster"]
        while parent is not None and parent not in out:
            out.add(parent)
            parent = by_id[parent]["cluster"]
    return out


def _fold_unchanged_runs(graph: dict, by_id: dict, differ: set, keep: set):
    """Move each run of unchanged equations (consecutive in their level, none in `keep`)
    into a new collapsed cluster."""
    levels: dict = {}
    for node in graph["nodes"]:
        if "primitive" in node:  # an equation (a cluster when it has bodies)
            levels.setdefault(node["cluster"], []).append(node)
    for parent, eqns in levels.items():
        run: list = []
        for node in eqns + [None]:
            if node is not None and "diff" not in node and node["id"] not in differ \
                    and node["id"] not in keep:
                run.append(node)
                continue
            if len(run) >= MIN_FOLDED_RUN:
                _fold(graph, by_id, parent, run)
            run = []


def _fold(graph: dict, by_id: dict, parent, run: list):
    fold_id = f"{run[0]['id']}.unchanged"
    size = sum(1 if n["kind"] == "equation" else n.get("size", 0) + 1 for n in run)
    counts = collections.Counter(n["primitive"] for n in run)
    summary = " ".join(f"{p}\u00d7{k}" for p, k in counts.most_common(4))
    node = {"id": fold_id, "kind": "cluster", "label": "unchanged", "cluster": parent,
            "role": "unchanged", "size": size, "summary": summary}
    for member in run:
        member["cluster"] = fold_id
    graph["nodes"].append(node)
    by_id[fold_id] = node


def status_dot(d: ProgramDiff, side: str) -> str | None:
    """DOT of program `side`'s graph for a diff (`status_graphs`: nodes coloured by status,
    unchanged regions collapsed). None when too large to lay out."""
    return _status_dot(status_graphs(d)[side])


def _status_dot(graph: dict) -> str | None:
    """DOT of a status graph; when its differences are too many to lay out expanded, every
    cluster collapsed instead, each coloured by what it holds (`_collapse_everything`)."""
    from ..explorer import dot
    the_view = dot.view(graph, graph["collapsed"])
    if len(the_view.nodes) > dot.MAX_VISIBLE_NODES:
        _collapse_everything(graph)
        the_view = dot.view(graph, graph["collapsed"])
        if len(the_view.nodes) > dot.MAX_VISIBLE_NODES:
            return None
    return dot.to_dot(graph, the_view=the_view)


def _collapse_everything(graph: dict):
    """Collapse every cluster; one that holds differences takes their status (`changed`
    when they are of several kinds), so a large diff still shows where it is."""
    by_id = {n["id"]: n for n in graph["nodes"]}
    held: dict[str, set] = collections.defaultdict(set)
    for node in graph["nodes"]:
        if "diff" in node:
            parent = node["cluster"]
            while parent is not None:
                held[parent].add(node["diff"])
                parent = by_id[parent]["cluster"]
    for cluster_id, statuses in held.items():
        by_id[cluster_id].setdefault("diff", statuses.pop() if len(statuses) == 1 else "changed")
    graph["collapsed"] = [n["id"] for n in graph["nodes"] if n["kind"] == "cluster"]


def graph_data(d: ProgramDiff) -> dict:
    """Both graphs of a diff for a front end: per side (`a`, `b`) the SVG of its status
    graph (`status_graphs`) from Graphviz's `dot`, or without `dot` the DOT text for the
    browser to lay out (`too_large` when neither can be drawn), the legend's colours, and
    `pairs` (see `node_pairs`)."""
    from ..explorer.dot import render_svg
    graphs = status_graphs(d)
    out = {"pairs": node_pairs(d, graphs),
           "colors": {status: list(colours) for status, colours in DIFF_COLORS.items()}}
    for side, graph in graphs.items():
        text = _status_dot(graph)
        svg = render_svg(text) if text else ""
        out[side] = {"svg": svg, "dot": "" if svg or not text else text,
                     "too_large": text is None}
    return out


def node_pairs(d: ProgramDiff, graphs: dict) -> list[list[str]]:
    """[a node id, b node id] of the matched equations, as the two `status_graph`s `graphs`
    ({"a": ..., "b": ...}) show them (an equation inside a fold or a collapsed cluster is
    represented by it), without repeats: what the front end links when one is hovered."""
    from ..explorer.dot import representative
    shown = {}
    for side, graph in graphs.items():
        by_id = {n["id"]: n for n in graph["nodes"]}
        collapsed = set(graph["collapsed"])
        shown[side] = {node_id: representative(node, by_id, collapsed)
                       for node_id, node in by_id.items()}
    out = []
    for a_id, b_id in d.node_pairs():
        pair = [shown["a"].get(a_id), shown["b"].get(b_id)]
        if None not in pair and pair not in out:
            out.append(pair)
    return out


def status_svg(d: ProgramDiff, side: str) -> str:
    """Inline SVG of `status_dot` ("" without Graphviz): ids prefixed by the side (two graphs
    share a page), namespace URLs dropped (HTML needs none, and an offline page should
    name no URL)."""
    try:
        graph = status_graphs(d)[side]
    except Exception:  # noqa: BLE001 - the graph is an extra: the table stands alone
        return ""
    return _side_svg(graph, side)


def _side_svg(graph: dict, side: str) -> str:
    from ..explorer.dot import render_svg
    source = _status_dot(graph)
    svg = render_svg(source) if source else ""
    if not svg:
        return ""
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\bid="', f'id="{side}-', svg)
    return svg.replace("<svg ", "<svg style='max-width:100%;height:auto' ", 1)


# --- views: JSON -------------------------------------------------------------------------------
def diff_dict(d: ProgramDiff) -> dict:
    names = (names_of(d.a), names_of(d.b))
    return {
        "a": d.a_label, "b": d.b_label, "empty": not d, "summary": d.summary(),
        "inputs": [_change_dict(c) for c in d.inputs],
        "outputs": [_change_dict(c) for c in d.outputs],
        "constants": [_change_dict(c) for c in d.consts],
        "rows": [_row_dict(r, names) for r in d.root.rows],
        "text": d.text(),
    }


def _change_dict(c: Change) -> dict:
    return {"field": c.field, "before": c.before, "after": c.after}


def _row_dict(row: EqnDiff, names) -> dict:
    src = row.source
    return {
        "status": row.status, "primitive": row.primitive,
        "a": eqn_text(row.a, names[0]) if row.a is not None else None,
        "b": eqn_text(row.b, names[1]) if row.b is not None else None,
        "source": None if src is None else {"file": src.file, "line": src.line,
                                            "function": src.function, "code": src.code},
        "changes": [_change_dict(c) for c in row.changes], "note": row.note,
        "subs": [{"title": title, "rows": [_row_dict(r, names) for r in sub.rows]}
                 for title, sub in row.subs],
    }
