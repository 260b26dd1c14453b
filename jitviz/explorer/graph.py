"""The explorer's graph model: a traced program as JSON-ready nodes and edges.

`build_graph(closed, ...)` turns a `ClosedJaxpr` into a dict the widget syncs to the browser
and `dot.py` lays out:

- `nodes`: each with `id`, `kind` (input, output, constant, equation, effect, cluster),
  `label`, `cluster` (the id of the cluster it sits in, or None) and, by kind: `primitive`,
  `params`, `inputs`/`outputs` (name, shape, dtype), `shape`, `dtype`, `source` (file, line,
  function, code), `kernel`, `changed`; constants carry `name`, `value`, `origin`, `stale`;
  effects carry `effect`, `text`, `skipped`.
- `edges`: `source` -> `target` with `kind` (data, constant, effect) and the variable `label`.

Equations with sub-jaxprs (cond, while, scan, jit, fused) are cluster nodes; the equations of
their bodies sit inside. Large programs get extra "block" clusters of consecutive equations so
they can open collapsed. Strings are kept raw here: escaping is the renderer's job.
"""
from __future__ import annotations

import collections
import functools
import json
import re
from typing import Any

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var, format_scalar
from ..core.jaxpr_util import all_eqns, holds_jaxprs, jaxpr_params, open_jaxpr
from ..core.pretty import format_param
from ..core.fused import fused_p

#: Above this many nodes the explorer opens with every cluster collapsed.
COLLAPSE_NODE_THRESHOLD = 300
#: Programs with more top-level equations than this get "block" clusters.
BLOCK_THRESHOLD = 250
#: Roughly how many blocks a long program is cut into.
TARGET_BLOCKS = 40
MAX_TEXT = 2000
MAX_KERNEL_SOURCE = 20_000


# --- small helpers ---------------------------------------------------------------------------

def shorten(text: str, limit: int = MAX_TEXT) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def aval_fields(aval) -> dict:
    return {"shape": list(aval.shape), "dtype": str(aval.dtype), "type": aval.str_short()}


def source_fields(source) -> dict | None:
    if source is None:
        return None
    fields = {"file": source.file, "line": source.line, "function": source.function,
              "code": shorten(source.code, 400)}
    cell = notebook_cell(source.file)
    if cell:
        fields["where"] = f"{cell}, line {source.line}"
    return fields


@functools.lru_cache(maxsize=4096)
def notebook_cell(path: str) -> str | None:
    """`cell 3` for the file IPython compiled a notebook cell into, else None."""
    from ..diagnostics import describe_line
    where = describe_line(path, 0)
    return where.rsplit(",", 1)[0] if where.startswith("cell ") else None


def value_summary(value) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8, precision=4, edgeitems=2)
        return shorten(f"{value.dtype}{list(value.shape)} {text}", 300)
    return shorten(repr(value), 300)


def param_text(params: dict) -> dict:
    """Params without sub-jaxprs, each as the jaxpr printer writes it."""
    out = {}
    for key, value in params.items():
        if holds_jaxprs(value):
            continue
        out[str(key)] = shorten(format_param(value), 300)
    return out


def titled_sub_jaxprs(eqn) -> list[tuple[str, str, Jaxpr]]:
    """(display name, param name, jaxpr) of each sub-jaxpr in an equation's params."""
    return [(_sub_name(eqn, key, i, len(items)), key, open_jaxpr(j))
            for key, items in jaxpr_params(eqn) for i, j in enumerate(items)]


def _sub_name(eqn, key, index, count) -> str:
    if key == "branches":
        return f"branch {index}"
    return key if count == 1 else f"{key} {index}"


def printed_names(jaxpr: Jaxpr) -> dict[int, str]:
    """var id -> the name `print(jaxpr)` gives it (the printer's own naming, so the graph and
    the text always agree; tests/test_explorer_graph.py checks it)."""
    from ..core import pretty
    return pretty.printed_names(jaxpr)


class _Names:
    def __init__(self, jaxpr: Jaxpr):
        self.printed = printed_names(jaxpr)
        self.extra: dict[int, str] = {}

    def __call__(self, var: Var) -> str:
        name = self.printed.get(var.id) or self.extra.get(var.id)
        if name is None:
            name = self.extra[var.id] = f"v{len(self.extra)}"
        return name


# --- operand routing into and out of sub-jaxprs ------------------------------------------------

def inner_operands(eqn, key: str, sub: Jaxpr) -> list:
    """The outer atoms that feed `sub`'s invars, in order (None where unknown)."""
    ops = eqn.primitive.sub_io(eqn.params, eqn.invars, eqn.outvars, key)[0]
    return ops if len(ops) == len(sub.invars) else [None] * len(sub.invars)


def inner_results(eqn, key: str, sub: Jaxpr) -> list:
    """The outer vars that `sub`'s outvars become, in order (None where unknown)."""
    outs = eqn.primitive.sub_io(eqn.params, eqn.invars, eqn.outvars, key)[1]
    return outs if len(outs) == len(sub.outvars) else [None] * len(sub.outvars)


def effect_label(effect: str, times: int, cache_hits: int | None) -> str:
    """`print — ran at trace only, skipped on 12 cache hits`."""
    repeat = f" \u00d7{times}" if times > 1 else ""
    if cache_hits:
        skipped = f"skipped on {cache_hits} cache hit{'s' if cache_hits != 1 else ''}"
    else:
        skipped = "skipped on every cache hit"
    return f"{effect}{repeat} \u2014 ran at trace only, {skipped}"


def compact_graph(graph: dict) -> dict:
    """The graph as the widget syncs it (and notebooks save it): edges left out (the view has
    the drawn ones), empty fields dropped, source lines and operand types stored once in
    `sources` and `types` and referred to by index, operands as `[name, type index]` (plus a
    dict of extras such as `literal`). The front end expands it back
    (labextension/src/graphIndex.ts, `expandGraph`)."""
    if not graph:
        return {}
    sources: list[dict] = []
    source_index: dict[str, int] = {}
    types: list[dict] = []
    type_index: dict[tuple, int] = {}

    def source_ref(source: dict) -> int:
        key = json.dumps(source, sort_keys=True)
        if key not in source_index:
            source_index[key] = len(sources)
            sources.append(source)
        return source_index[key]

    def operand(op: dict) -> dict:
        key = (op.get("type"), tuple(op.get("shape") or ()), op.get("dtype"))
        if key not in type_index:
            type_index[key] = len(types)
            types.append({"type": op.get("type"), "shape": op.get("shape"),
                          "dtype": op.get("dtype")})
        extra = {k: v for k, v in op.items()
                 if k not in ("name", "type", "shape", "dtype") and v not in (None, False)}
        return [op.get("name"), type_index[key]] + ([extra] if extra else [])

    nodes = []
    for node in graph["nodes"]:
        out = {}
        for key, value in node.items():
            if value is None and key != "cluster" or value in ({}, [], ""):
                continue
            if key == "source":
                value = source_ref(value)
            elif key in ("inputs", "outputs"):
                value = [operand(op) for op in value]
            elif node["kind"] == "equation" and key in ("shape", "dtype", "type"):
                continue  # the outputs say it
            out[key] = value
        nodes.append(out)
    compact = {k: v for k, v in graph.items() if k not in ("nodes", "edges")}
    compact.update(format=2, nodes=nodes, sources=sources, types=types)
    return compact


def with_cache_hits(graph: dict, cache_hits: int) -> dict:
    """The graph with its effect nodes recounted for `cache_hits` (a new dict)."""
    nodes = [dict(n, label=effect_label(n["effect"], n.get("times", 1), cache_hits),
                  skipped=cache_hits) if n["kind"] == "effect" else n for n in graph["nodes"]]
    return dict(graph, nodes=nodes)


# --- the builder ---------------------------------------------------------------------------

class _Scope:
    """var id -> the node ids that produce it (a cluster's result comes from one output
    node per branch)."""

    def __init__(self):
        self.producers: dict[int, list[str]] = {}

    def set(self, var, *node_ids: str):
        self.producers[var.id] = list(node_ids)

    def producer(self, var) -> list[str]:
        return self.producers.get(var.id, [])


class GraphBuilder:
    def __init__(self, closed: ClosedJaxpr, *, kernels=(), report=None, cache_hits=None,
                 stale: dict | None = None, previous: ClosedJaxpr | None = None,
                 group_kernels: bool = False, title: str = ""):
        self.closed = closed
        self.jaxpr = closed.jaxpr
        self.report = report if report is not None else closed.report
        self.cache_hits = cache_hits
        self.stale = stale or {}
        self.group_kernels = group_kernels
        self.title = title or (self.report.function if self.report is not None else "")
        self.names = _Names(self.jaxpr)
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.by_id: dict[str, dict] = {}
        self.kernels = list(kernels)
        self.kernel_of = _kernel_index(self.kernels)
        self.changes = _StageDiff(previous, closed) if previous is not None else None
        self.global_constants: dict[tuple, str] = {}
        self.line_eqn: dict[tuple, str] = {}  # (file, line) -> first top-level eqn node

    # -- nodes and edges --
    def add_node(self, node_id: str, kind: str, label: str, cluster: str | None, **fields):
        node = {"id": node_id, "kind": kind, "label": label, "cluster": cluster}
        node.update(fields)
        self.nodes.append(node)
        self.by_id[node_id] = node
        return node

    def add_edge(self, source: str | None, target: str | None, kind: str = "data",
                 label: str = ""):
        if source is None or target is None or source == target:
            return
        self.edges.append({"id": f"x{len(self.edges)}", "source": source, "target": target,
                           "kind": kind, "label": label})

    # -- the whole program --
    def build(self) -> dict:
        top = _Scope()
        self._inputs(top)
        self._equations(self.jaxpr, top, prefix="", cluster=None, top_level=True)
        self._outputs(top)
        self._effects()
        if self.group_kernels:
            self._kernel_clusters()
        elif len(self.jaxpr.eqns) > BLOCK_THRESHOLD:
            self._blocks()
        return self._result()

    def _inputs(self, scope: _Scope):
        names = list(getattr(self.closed, "arg_names", None) or [])
        for i, (var, value) in enumerate(zip(self.jaxpr.constvars, self.closed.consts)):
            self._constvar(i, var, value, scope)
        for i, var in enumerate(self.jaxpr.invars):
            node_id = f"in{i}"
            arg = names[i] if i < len(names) and names[i] else f"arg{i}"
            self.add_node(node_id, "input", f"{arg}", None, name=arg, var=self.names(var),
                          **aval_fields(var.aval))
            scope.set(var, node_id)

    def _constvar(self, index: int, var: Var, value, scope: _Scope):
        origin = var.origin
        name = origin.name if origin is not None and origin.name else f"const{index}"
        node_id = f"const{index}"
        self.add_node(node_id, "constant", name, None, name=name, var=self.names(var),
                      value=value_summary(value), origin=origin.kind if origin else "computed",
                      source=source_fields(origin.source) if origin else None,
                      **self._stale_fields(name, origin), **aval_fields(var.aval))
        scope.set(var, node_id)

    def _stale_fields(self, name, origin) -> dict:
        if origin is None or origin.kind not in ("global", "closure") or name not in self.stale:
            return {"stale": False}
        return {"stale": True, "now": shorten(self.stale[name], 300)}

    def _outputs(self, scope: _Scope):
        for i, atom in enumerate(self.jaxpr.outvars):
            node_id = f"out{i}"
            self.add_node(node_id, "output", f"out {i}", None,
                          var=self._atom_text(atom), **aval_fields(atom.aval))
            self._connect(atom, node_id, scope)

    def _atom_text(self, atom) -> str:
        if isinstance(atom, Literal):
            return format_scalar(atom.val)
        return self.names(atom)

    def _connect(self, atom, target: str, scope: _Scope):
        if isinstance(atom, Literal):
            constant = self._global_literal(atom)
            if constant is not None:
                self.add_edge(constant, target, "constant", format_scalar(atom.val))
            return
        for source in scope.producer(atom):
            self.add_edge(source, target, "data", self.names(atom))

    def _global_literal(self, lit: Literal) -> str | None:
        """A constant node for a literal that came from a global or a closure."""
        origin = lit.origin
        if origin is None or origin.kind not in ("global", "closure") or not origin.name:
            return None
        key = (origin.kind, origin.name, origin.fingerprint)
        node_id = self.global_constants.get(key)
        if node_id is None:
            node_id = f"lit{len(self.global_constants)}"
            self.global_constants[key] = node_id
            self.add_node(node_id, "constant", origin.name, None, name=origin.name,
                          value=format_scalar(lit.val), origin=origin.kind,
                          source=source_fields(origin.source),
                          **self._stale_fields(origin.name, origin), **aval_fields(lit.aval))
        return node_id

    # -- equations --
    def _equations(self, jaxpr: Jaxpr, scope: _Scope, prefix: str, cluster, top_level=False):
        for i, eqn in enumerate(jaxpr.eqns):
            node_id = f"{prefix}e{i}"
            subs = titled_sub_jaxprs(eqn)
            node = self._equation_node(eqn, node_id, cluster, "cluster" if subs else "equation")
            if top_level and eqn.source is not None:
                self.line_eqn.setdefault((eqn.source.file, eqn.source.line), node_id)
            if not subs:
                for atom in eqn.invars:
                    self._connect(atom, node_id, scope)
                for var in eqn.outvars:
                    scope.set(var, node_id)
                continue
            node["size"] = 0
            results = self._sub_jaxprs(eqn, node, subs, scope)
            for var in eqn.outvars:
                scope.set(var, *(results.get(var.id) or [node_id]))

    def _equation_node(self, eqn, node_id, cluster, kind) -> dict:
        prim = eqn.primitive.name
        inputs = [self._operand(a) for a in eqn.invars]
        outputs = [{"name": self.names(v), **aval_fields(v.aval)} for v in eqn.outvars]
        first = eqn.outvars[0].aval if eqn.outvars else None
        fields = dict(primitive=prim, params=param_text(eqn.params), inputs=inputs,
                      outputs=outputs, source=source_fields(eqn.source),
                      kernel=self.kernel_of.get(id(eqn)) or self._fused_kernel(eqn),
                      changed=self.changes.status(eqn) if self.changes else None)
        if first is not None:
            fields.update(shape=list(first.shape), dtype=str(first.dtype))
        return self.add_node(node_id, kind, self._equation_label(eqn), cluster, **fields)

    def _fused_kernel(self, eqn) -> str | None:
        name = eqn.params.get("name") if eqn.primitive is fused_p else None
        known = {k.name for k in self.kernels}
        return str(name) if name is not None and str(name) in known else None

    def _operand(self, atom) -> dict:
        entry = aval_fields(atom.aval)
        if isinstance(atom, Literal):
            entry.update(name=format_scalar(atom.val), literal=True)
            if atom.origin is not None and atom.origin.kind in ("global", "closure"):
                entry["origin"] = f"{atom.origin.kind} {atom.origin.name}"
        else:
            entry["name"] = self.names(atom)
        return entry

    def _equation_label(self, eqn) -> str:
        prim = eqn.primitive.name
        if prim in ("jit", "fused") and "name" in eqn.params:
            return f"{prim} {eqn.params['name']}"
        literals = [format_scalar(a.val) for a in eqn.invars if isinstance(a, Literal)]
        if literals and len(eqn.invars) <= 3:
            args = ", ".join(format_scalar(a.val) if isinstance(a, Literal) else "\u00b7"
                             for a in eqn.invars)
            return f"{prim}({args})"
        return prim

    def _sub_jaxprs(self, eqn, node, subs, outer: _Scope) -> dict[int, list[str]]:
        """Lay out each body inside the cluster; returns outer var id -> inner output nodes."""
        single = len(subs) == 1
        fed = set()  # operand positions that reach a body input
        results: dict[int, list[str]] = collections.defaultdict(list)
        for k, (title, key, sub) in enumerate(subs):
            prefix = f"{node['id']}.j{k}."
            cluster = node["id"]
            if not single:
                cluster = f"{node['id']}.j{k}"
                self.add_node(cluster, "cluster", title, node["id"], size=0, role="body")
            scope = _Scope()
            for i, (var, atom) in enumerate(zip(sub.invars, inner_operands(eqn, key, sub))):
                inner_id = f"{prefix}in{i}"
                self.add_node(inner_id, "input", self.names(var), cluster, var=self.names(var),
                              inner=True, **aval_fields(var.aval))
                scope.set(var, inner_id)
                if atom is not None:
                    fed.update(j for j, a in enumerate(eqn.invars) if a is atom)
                    self._connect(atom, inner_id, outer)
            self._equations(sub, scope, prefix, cluster)
            for i, (atom, result) in enumerate(zip(sub.outvars, inner_results(eqn, key, sub))):
                inner_id = f"{prefix}out{i}"
                self.add_node(inner_id, "output", self._atom_text(atom), cluster,
                              var=self._atom_text(atom), inner=True, **aval_fields(atom.aval))
                self._connect(atom, inner_id, scope)
                if result is not None:
                    results[result.id].append(inner_id)
        for j, atom in enumerate(eqn.invars):
            if j not in fed:  # e.g. the branch index of a cond
                self._connect(atom, node["id"], outer)
        return results

    # -- effects seen while tracing --
    def _effects(self):
        if self.report is None:
            return
        groups: dict[tuple, dict] = {}
        for record in self.report.prints:
            self._effect_group(groups, "print", record.source, record.text)
        for record in self.report.mutations:
            self._effect_group(groups, "mutation", record.source, record.detail)
        for record in self.report.tracer_leaks:
            self._effect_group(groups, "tracer leak", record.source,
                               f"a tracer was left in {record.name}")
        for record in getattr(self.report, "nondeterministic", []):
            self._effect_group(groups, "nondeterministic read", record.source, record.call)
        for i, group in enumerate(groups.values()):
            self._effect_node(f"fx{i}", group)

    def _effect_group(self, groups, effect, source, text):
        key = (effect, source.file if source else None, source.line if source else None)
        group = groups.setdefault(key, {"effect": effect, "source": source, "texts": []})
        group["texts"].append(str(text))

    def _effect_node(self, node_id, group):
        effect, source, texts = group["effect"], group["source"], group["texts"]
        self.add_node(node_id, "effect", effect_label(effect, len(texts), self.cache_hits),
                      None, effect=effect, times=len(texts),
                      text=shorten("".join(texts) if effect == "print" else "\n".join(texts)),
                      skipped=self.cache_hits or 0, source=source_fields(source))
        self.add_edge(node_id, self._eqn_near(source), "effect", "")

    def _eqn_near(self, source) -> str | None:
        """The first top-level equation at the effect's line, else the next line after it."""
        if source is None:
            return None
        exact = self.line_eqn.get((source.file, source.line))
        if exact is not None:
            return exact
        later = [(line, node) for (file, line), node in self.line_eqn.items()
                 if file == source.file and line > source.line]
        return min(later)[1] if later else None

    # -- grouping clusters --
    def _kernel_clusters(self):
        clusters: dict[str, str] = {}
        for node in self.nodes:
            if node["cluster"] is None and node["kind"] in ("equation", "cluster") \
                    and node.get("kernel"):
                name = node["kernel"]
                if name not in clusters:
                    clusters[name] = f"kernel{len(clusters)}"
                node["cluster"] = clusters[name]
        for name, cluster_id in clusters.items():
            self.add_node(cluster_id, "cluster", f"kernel {name}", None, role="kernel",
                          kernel=name, size=0)

    def _blocks(self):
        top = [n for n in self.nodes if n["cluster"] is None
               and n["kind"] in ("equation", "cluster") and "." not in n["id"]]
        for k, members in enumerate(_cut_blocks(top)):
            block_id = f"block{k}"
            first, last = members[0], members[-1]
            lines = [m["source"]["line"] for m in members if m.get("source")]
            counts = collections.Counter(m["primitive"] for m in members)
            summary = " ".join(f"{p}\u00d7{n}" for p, n in counts.most_common(4))
            where = f", lines {min(lines)}\u2013{max(lines)}" if lines else ""
            label = f"equations {first['id'][1:]}\u2013{last['id'][1:]}{where}"
            for m in members:
                m["cluster"] = block_id
            self.add_node(block_id, "cluster", label, None, role="block", summary=summary,
                          size=0)

    # -- result --
    def _result(self) -> dict:
        self._count_sizes()
        clusters = [n["id"] for n in self.nodes if n["kind"] == "cluster"]
        collapsed = clusters if len(self.nodes) > COLLAPSE_NODE_THRESHOLD else []
        return {
            "title": self.title,
            "nodes": self.nodes,
            "edges": self.edges,
            "kernels": {k.name: _kernel_fields(k) for k in self.kernels},
            "collapsed": collapsed,
            "stats": {"equations": sum(n["kind"] == "equation" for n in self.nodes),
                      "nodes": len(self.nodes), "edges": len(self.edges)},
            "diff": self.changes.summary() if self.changes else None,
            "stale": self._stale_list(),
        }

    def _stale_list(self) -> list[dict]:
        """Captured globals/closure variables that changed since the trace (whether or not a
        constant node shows them)."""
        captured = getattr(self.report, "captured", {}) if self.report is not None else {}
        return [{"name": name, "now": shorten(now, 300),
                 "traced": shorten(captured[name].summary, 300) if name in captured else "",
                 "kind": captured[name].kind if name in captured else ""}
                for name, now in self.stale.items()]

    def _count_sizes(self):
        for node in self.nodes:
            if node["kind"] != "equation":
                continue
            parent = node["cluster"]
            while parent is not None:
                cluster = self.by_id[parent]
                cluster["size"] = cluster.get("size", 0) + 1
                parent = cluster["cluster"]


# --- kernels, blocks and stage differences ---------------------------------------------------

def _kernel_index(kernels) -> dict[int, str]:
    index = {}
    for kernel in kernels:
        for eqn in getattr(kernel, "eqns", ()) or ():
            index.setdefault(id(eqn), kernel.name)
    return index


_CELL_FILE = re.compile(r"(?:[A-Za-z]:)?[\\/][^\s:'\"]*?ipykernel_\d+[\\/]\d+\.py")


def cell_names(text: str) -> str:
    """`text` with the files IPython compiles notebook cells into (`/tmp/ipykernel_1/2.py`)
    written as `cell N` (or `a notebook cell` when this kernel does not know it)."""
    def name(match):
        cell = notebook_cell(match.group(0))
        return cell or "a notebook cell"
    return _CELL_FILE.sub(name, text)


def _kernel_fields(kernel) -> dict:
    lines = [source_fields(s) for s in list(getattr(kernel, "source_lines", []))[:20]]
    return {"name": kernel.name, "source": cell_names(shorten(getattr(kernel, "source", ""),
                                                              MAX_KERNEL_SOURCE)),
            "equations": len(getattr(kernel, "eqns", ()) or ()),
            "reused": bool(getattr(kernel, "reused", False)), "lines": lines}


def _cut_blocks(nodes: list[dict]) -> list[list[dict]]:
    """Consecutive runs of about len/TARGET_BLOCKS equations, cut preferably where the
    source line goes back (the start of an unrolled loop's next iteration)."""
    target = max(25, -(-len(nodes) // TARGET_BLOCKS))
    blocks, current, last_line = [], [], None
    for node in nodes:
        line = (node.get("source") or {}).get("line")
        loops_back = line is not None and last_line is not None and line < last_line
        if current and (len(current) >= 2 * target or (len(current) >= target and loops_back)):
            blocks.append(current)
            current = []
        current.append(node)
        last_line = line if line is not None else last_line
    if current:
        blocks.append(current)
    return blocks


def _eqn_key(eqn) -> tuple:
    line = eqn.source.line if eqn.source is not None else None
    return (eqn.primitive.name, tuple(sorted(param_text(eqn.params).items())),
            tuple(a.aval.str_short() for a in eqn.invars),
            tuple(v.aval.str_short() for v in eqn.outvars), line)


class _StageDiff:
    """Which equations of a stage are new relative to the stage before it: by identity, then
    by content (primitive, params, types, source line) for passes that rebuild equations."""

    def __init__(self, previous: ClosedJaxpr, current: ClosedJaxpr):
        before = list(all_eqns(previous.jaxpr))
        now_ids = {id(e) for e in all_eqns(current.jaxpr)}
        self.before_ids = {id(e) for e in before}
        self.unmatched = collections.Counter(_eqn_key(e) for e in before if id(e) not in now_ids)
        self.added: collections.Counter = collections.Counter()

    def status(self, eqn) -> str | None:
        if id(eqn) in self.before_ids:
            return None
        key = _eqn_key(eqn)
        if self.unmatched[key] > 0:
            self.unmatched[key] -= 1
            return None
        self.added[eqn.primitive.name] += 1
        return "added"

    def summary(self) -> dict:
        removed = collections.Counter()
        for key, n in self.unmatched.items():
            if n > 0:
                removed[key[0]] += n
        return {"added": sum(self.added.values()), "removed": sum(removed.values()),
                "added_by_primitive": dict(self.added),
                "removed_by_primitive": dict(removed)}


# --- public entry points -------------------------------------------------------------------

def stale_bindings(report, globals_dict: dict | None = None) -> dict[str, str]:
    """name -> current value summary of each captured global/closure that changed since
    the trace."""
    if report is None:
        return {}
    from ..core.report import fingerprint
    globs = globals_dict if globals_dict is not None else getattr(report, "globals_ref", None)
    out = {}
    for binding in getattr(report, "captured", {}).values():
        value = _current_value(binding, globs)
        if value is _MISSING:
            continue
        fp, summary = fingerprint(value)
        if fp != binding.fingerprint:
            out[binding.name] = summary
    return out


_MISSING = object()


def _current_value(binding, globs):
    if binding.cell is not None:
        try:
            return binding.cell.cell_contents
        except ValueError:
            return _MISSING
    if globs is None or binding.name not in globs:
        return _MISSING
    return globs[binding.name]


def build_graph(closed: ClosedJaxpr, *, kernels=(), report=None, cache_hits: int | None = None,
                stale: dict | None = None, previous: ClosedJaxpr | None = None,
                group_kernels: bool = False, title: str = "") -> dict[str, Any]:
    """The graph model of `closed` (see the module docstring).

    kernels: compiled kernels (`.name .source .eqns`) to attach to equations; report: the
    trace report (defaults to `closed.report`) for ghost effect nodes; cache_hits: how many
    calls skipped those effects; stale: name -> current value of captured globals that
    changed; previous: the stage before, to mark what this stage changed; group_kernels:
    one cluster per kernel."""
    builder = GraphBuilder(closed, kernels=kernels, report=report, cache_hits=cache_hits,
                           stale=stale, previous=previous, group_kernels=group_kernels,
                           title=title)
    return builder.build()
