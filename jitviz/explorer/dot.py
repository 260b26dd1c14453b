"""Graphviz DOT for the explorer's graph model, and SVG from the `dot` binary when it exists.

`view(graph, collapsed)` decides what is drawn: a collapsed cluster is one node that stands
for everything inside it; an expanded one is a DOT `cluster_` subgraph. Edges are rerouted to
the node that stands for their ends and deduplicated. `to_dot` writes that view with the
`graphviz` package; every user string goes through `graphviz.escape` (no HTML-like labels,
no backslash escapes from user text). `render_svg` runs `dot -Tsvg`, or returns "" when the
binary is absent or switched off with `JITVIZ_DOT=none` (the browser then lays the DOT out
with Graphviz compiled to WebAssembly).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

import graphviz

DOT_ENV = "JITVIZ_DOT"
RENDER_TIMEOUT_S = 60
#: More visible nodes than this are not laid out (the view stays collapsed).
MAX_VISIBLE_NODES = 2500

COLORS = {
    "input": "#dbeafe", "output": "#dcfce7", "constant": "#fef3c7", "stale": "#fecaca",
    "equation": "#ffffff", "added": "#ffedd5", "effect": "#f5f5f4", "cluster": "#ede9fe",
}
#: A node's status in the graphs of a diff (`jitviz.diff`): (fill, border), the table's colours.
DIFF_COLORS = {
    "added": ("#bbf7d0", "#16a34a"), "removed": ("#fecaca", "#dc2626"),
    "changed": ("#fde68a", "#d97706"),
}


# --- what is visible ------------------------------------------------------------------------

@dataclass
class View:
    nodes: list[str] = field(default_factory=list)  # visible node ids (collapsed clusters too)
    clusters: list[str] = field(default_factory=list)  # expanded clusters, drawn as subgraphs
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (source, target, kind)
    anchors: dict[str, str] = field(default_factory=dict)  # expanded cluster -> a node inside

    def to_json(self) -> dict:
        return {"nodes": self.nodes, "clusters": self.clusters,
                "edges": [list(e) for e in self.edges]}


def view(graph: dict, collapsed=()) -> View:
    by_id = {n["id"]: n for n in graph["nodes"]}
    collapsed = {c for c in collapsed if by_id.get(c, {}).get("kind") == "cluster"}
    members = _members(graph)
    collapsed |= {c for c, inside in members.items() if not inside}  # empty: draw as a node
    rep = {n["id"]: representative(n, by_id, collapsed) for n in graph["nodes"]}
    out = View()
    for node in graph["nodes"]:
        node_id = node["id"]
        if rep[node_id] != node_id:
            continue
        if node["kind"] == "cluster" and node_id not in collapsed:
            out.clusters.append(node_id)
        else:
            out.nodes.append(node_id)
    visible = set(out.nodes)
    out.anchors = {c: _anchor(c, members, rep, visible) for c in out.clusters}
    seen = set()
    for edge in graph["edges"]:
        source, target = rep[edge["source"]], rep[edge["target"]]
        key = (source, target, edge["kind"])
        if source != target and key not in seen and not _is_ancestor(source, target, by_id) \
                and not _is_ancestor(target, source, by_id):
            seen.add(key)
            out.edges.append(key)
    return out


def _members(graph) -> dict[str, list[str]]:
    inside: dict[str, list[str]] = {n["id"]: [] for n in graph["nodes"] if n["kind"] == "cluster"}
    for node in graph["nodes"]:
        if node["cluster"] is not None and node["cluster"] in inside:
            inside[node["cluster"]].append(node["id"])
    return inside


def _ancestors(node, by_id) -> list[str]:
    """Enclosing clusters, outermost first."""
    chain, parent = [], node["cluster"]
    while parent is not None and parent in by_id:
        chain.append(parent)
        parent = by_id[parent]["cluster"]
    return chain[::-1]


def representative(node, by_id, collapsed) -> str:
    """The id of what stands for `node` when `collapsed` clusters are drawn as one node."""
    for cluster in _ancestors(node, by_id):
        if cluster in collapsed:
            return cluster
    return node["id"]


def _is_ancestor(cluster_id, node_id, by_id) -> bool:
    node = by_id.get(node_id)
    return node is not None and cluster_id in _ancestors(node, by_id)


def _anchor(cluster_id, members, rep, visible) -> str | None:
    """A visible node inside an expanded cluster, for edges that end at the cluster itself."""
    todo = list(members.get(cluster_id, []))
    while todo:
        node_id = todo.pop(0)
        if node_id in visible and rep[node_id] == node_id:
            return node_id
        todo.extend(members.get(node_id, []))
    return None


# --- DOT ---------------------------------------------------------------------------------------

def label_text(*lines: str) -> str:
    """A safe DOT label: each user line escaped, joined by DOT line breaks. Graphviz decodes
    HTML entities even in plain labels, so `&` is escaped too (`&lt;` stays as typed)."""
    return graphviz.nohtml("\\n".join(graphviz.escape(str(line)).replace("&", "&amp;")
                                     for line in lines if line))


def svg_id(node_id: str) -> str:
    return f"n-{node_id}"


def node_lines(node: dict) -> list[str]:
    kind = node["kind"]
    if kind == "equation":
        outs = ", ".join(f"{o['name']}:{o['type']}" for o in node.get("outputs", [])[:3])
        return [node["label"], _shorten(outs, 48)]
    if kind in ("input", "output"):
        name = node.get("var") or node["label"]
        head = name if node.get("inner") else node["label"]
        return [head if head == name else f"{head} ({name})", node.get("type", "")]
    if kind == "constant":
        lines = [f"{node['label']} = {_shorten(node.get('value', ''), 40)}",
                 f"{node.get('origin', '')} constant, {node.get('type', '')}"]
        if node.get("stale"):
            lines.append(f"STALE: now {_shorten(node.get('now', ''), 30)}")
        return lines
    if kind == "effect":
        head, _, tail = node["label"].partition(" \u2014 ")
        ran, _, skipped = tail.partition(", ")
        text = (node.get("text") or "").strip().splitlines()
        return [f"\u26a0 {head}: {ran}", skipped, _shorten(text[0], 32) if text else ""]
    if kind == "cluster":
        n = node.get("size", 0)
        lines = [node["label"], f"{n} equation{'s' if n != 1 else ''} (collapsed)"]
        if node.get("summary"):
            lines.append(_shorten(node["summary"], 48))
        return lines
    return [node["label"]]


def _shorten(text: str, limit: int) -> str:
    text = str(text).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def node_attrs(node: dict) -> dict:
    kind = node["kind"]
    classes = ["jv-node", f"jv-{kind}"]
    attrs = {"id": svg_id(node["id"]), "shape": "box", "style": "rounded,filled",
             "fillcolor": COLORS.get(kind, "#ffffff")}
    if kind in ("input", "output"):
        attrs.update(shape="ellipse", style="filled")
    elif kind == "constant":
        attrs.update(shape="note", style="filled")
        if node.get("stale"):
            attrs.update(fillcolor=COLORS["stale"], color="#dc2626", penwidth="2")
            classes.append("jv-stale")
    elif kind == "effect":
        attrs.update(style="rounded,dashed,filled", color="#b45309", fontcolor="#78350f")
    elif kind == "cluster":
        attrs.update(shape="box3d", style="filled")
        classes.append("jv-collapsed")
    if node.get("changed") == "added":
        attrs.update(fillcolor=COLORS["added"], color="#ea580c", penwidth="2")
        classes.append("jv-added")
    if node.get("role") == "unchanged":
        attrs.update(shape="box", style="rounded,dashed,filled", fillcolor="#f1f5f9",
                     color="#94a3b8", fontcolor="#475569")
        classes.append("jv-unchanged-run")
    if node.get("diff") in DIFF_COLORS:
        fill, line = DIFF_COLORS[node["diff"]]
        attrs.update(fillcolor=fill, color=line, penwidth="2")
        classes.append(f"jv-diff-{node['diff']}")
    attrs["class"] = " ".join(classes)
    return attrs


def cluster_attrs(node: dict) -> dict:
    role = node.get("role", "")
    label = node["label"]
    if node.get("primitive"):
        label = f"{label}  ({node.get('size', 0)} equations)"
    attrs = {"label": label_text(label), "id": f"c-{node['id']}", "class": f"jv-cluster {role}",
             "style": "rounded,dashed" if role != "kernel" else "rounded,filled",
             "color": "#7c3aed" if role != "kernel" else "#0369a1",
             "fillcolor": "#f0f9ff", "fontname": "Helvetica", "fontsize": "11",
             "labeljust": "l"}
    if node.get("changed") == "added":
        attrs.update(color="#ea580c", penwidth="2", fontcolor="#c2410c")
        attrs["class"] += " jv-added"
    if node.get("diff") in DIFF_COLORS:
        attrs.update(color=DIFF_COLORS[node["diff"]][1], penwidth="2")
        attrs["class"] += f" jv-diff-{node['diff']}"
    return attrs


def to_dot(graph: dict, collapsed=None, the_view: View | None = None) -> str:
    """DOT text of the graph with `collapsed` clusters drawn as single nodes."""
    if collapsed is None:
        collapsed = graph.get("collapsed", [])
    v = the_view if the_view is not None else view(graph, collapsed)
    by_id = {n["id"]: n for n in graph["nodes"]}
    root = graphviz.Digraph("jaxpr", graph_attr={
        "rankdir": "TB", "compound": "true", "fontname": "Helvetica", "nodesep": "0.25",
        "ranksep": "0.35", "bgcolor": "transparent", "id": "jv-graph"},
        node_attr={"fontname": "Helvetica", "fontsize": "10", "margin": "0.08,0.04",
                   "height": "0.3"},
        edge_attr={"arrowsize": "0.6", "color": "#64748b"})
    expanded = set(v.clusters)
    subgraphs = {c: graphviz.Digraph(f"cluster_{c}", graph_attr=cluster_attrs(by_id[c]))
                 for c in v.clusters}
    for node_id in v.nodes:
        node = by_id[node_id]
        target = _container(node, by_id, expanded, subgraphs, root)
        target.node(node_id, label_text(*node_lines(node)), **node_attrs(node))
    _nest_subgraphs(v.clusters, by_id, subgraphs, root)
    for i, (source, target, kind) in enumerate(v.edges):
        root.edge(*_edge_ends(source, target, v), **_edge_attrs(i, kind, source, target, v))
    return root.source


def _container(node, by_id, expanded, subgraphs, root):
    parent = node["cluster"]
    return subgraphs[parent] if parent in expanded else root


def _nest_subgraphs(clusters, by_id, subgraphs, root):
    """Attach inner subgraphs to outer ones, innermost first (a subgraph is copied when
    attached)."""
    depth = {c: len(_ancestors(by_id[c], by_id)) for c in clusters}
    for cluster in sorted(clusters, key=lambda c: -depth[c]):
        parent = by_id[cluster]["cluster"]
        (subgraphs[parent] if parent in subgraphs else root).subgraph(subgraphs[cluster])


def _edge_ends(source, target, v: View) -> tuple[str, str]:
    return v.anchors.get(source) or source, v.anchors.get(target) or target


def _edge_attrs(index, kind, source, target, v: View) -> dict:
    attrs = {"id": f"x-{index}", "class": f"jv-edge jv-edge-{kind}"}
    if kind == "effect":
        attrs.update(style="dashed", color="#b45309", arrowhead="none")
    elif kind == "constant":
        attrs.update(color="#ca8a04")
    if source in v.anchors:
        attrs["ltail"] = f"cluster_{source}"
    if target in v.anchors:
        attrs["lhead"] = f"cluster_{target}"
    return attrs


# --- SVG ---------------------------------------------------------------------------------------

def dot_binary() -> str | None:
    """Path of Graphviz's `dot`, or None when absent or switched off (JITVIZ_DOT=none)."""
    setting = os.environ.get(DOT_ENV, "").strip()
    if setting.lower() in ("none", "off", "0", "false", "no"):
        return None
    if setting:
        return setting if os.path.exists(setting) else shutil.which(setting)
    return shutil.which("dot")


def render_svg(dot_text: str, timeout: float = RENDER_TIMEOUT_S) -> str:
    """SVG from the `dot` binary, or "" when there is none (or it fails)."""
    binary = dot_binary()
    if binary is None:
        return ""
    try:
        proc = subprocess.run([binary, "-Tsvg"], input=dot_text.encode(), capture_output=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if proc.returncode != 0:
        return ""
    svg = proc.stdout.decode("utf-8", "replace")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
