"""The explorer's graph model (jitviz/explorer/graph.py) and its DOT (jitviz/explorer/dot.py)."""
from __future__ import annotations

import re
import shutil
import types

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.explorer import dot as dotlib
from jitviz.explorer.graph import BLOCK_THRESHOLD, build_graph, stale_bindings

from helpers import XSS, XSS_PAYLOADS, assert_inert, dot_strings, unrolled, xss_function, \
    xss_program

pytestmark = pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning")

has_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot binary")

OFFSET = 0.5
WEIGHTS = np.arange(6.0).reshape(2, 3)
printed_log = []


def nodes_of(graph, kind=None):
    return [n for n in graph["nodes"] if kind is None or n["kind"] == kind]


def node(graph, node_id):
    return next(n for n in graph["nodes"] if n["id"] == node_id)


def edges_between(graph):
    return {(e["source"], e["target"]) for e in graph["edges"]}


def polynomial(x):
    return 2 * x * x + 3 * x + OFFSET


def with_effects(x):
    print("tracing with", x)
    printed_log.append(x.shape)
    return jnp.sin(x) * 2


def with_control_flow(x):
    y = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, x)
    return lax.fori_loop(0, 3, lambda i, c: c + 1.0, y)


def test_one_node_per_equation_with_dataflow_inputs_and_outputs():
    closed = jitviz.make_jaxpr(polynomial)(np.float32(3))
    graph = build_graph(closed)
    eqns = nodes_of(graph, "equation")
    assert [n["primitive"] for n in eqns] == [e.primitive.name for e in closed.eqns]
    assert [n["id"] for n in nodes_of(graph, "input")] == ["in0"]
    assert node(graph, "in0")["label"] == "x"
    assert [n["id"] for n in nodes_of(graph, "output")] == ["out0"]
    edges = edges_between(graph)
    assert ("in0", "e0") in edges and ("e0", "e1") in edges and ("e4", "out0") in edges
    assert graph["stats"]["equations"] == len(closed.eqns)


def shared_body(x):
    body = lambda i, c: c * 2.0 + jnp.sin(c) - jnp.cos(c) + c * c + 1.0 + jnp.exp(c) * 0.5
    y = lax.fori_loop(0, 2, body, x)
    return lax.fori_loop(0, 3, body, y) + jitviz.jit(lambda v: v - 1)(x)


@pytest.mark.parametrize("fun", [polynomial, with_control_flow, shared_body])
def test_variable_names_match_the_printed_jaxpr(fun):
    closed = jitviz.make_jaxpr(fun)(np.ones(3, np.float32))
    graph = build_graph(closed)
    text = str(closed)
    for n in nodes_of(graph, "equation") + nodes_of(graph, "cluster"):
        if "outputs" not in n:
            continue
        names = " ".join(f"{o['name']}:{o['type']}" for o in n["outputs"])
        assert re.search(rf"(^|\s){re.escape(names)} = {n['primitive']}\b", text, re.M), \
            (names, n["primitive"], text)
    inputs = " ".join(f"{n['var']}:{n['type']}" for n in nodes_of(graph, "input")
                      if not n.get("inner"))
    assert f"; {inputs}. let" in text


def test_equations_carry_params_types_and_source_line():
    closed = jitviz.make_jaxpr(lambda x: jnp.sum(x, axis=0))(np.ones((2, 3), np.float32))
    (eqn,) = nodes_of(build_graph(closed), "equation")
    assert eqn["primitive"] == "reduce_sum"
    assert eqn["params"]["axes"] == "(0,)"
    assert eqn["inputs"][0]["shape"] == [2, 3] and eqn["inputs"][0]["dtype"] == "float32"
    assert eqn["outputs"][0]["shape"] == [3]
    assert eqn["source"]["line"] > 0
    assert "jnp.sum(x, axis=0)" in eqn["source"]["code"]
    assert eqn["source"]["file"] == __file__


def test_literals_show_in_the_label():
    closed = jitviz.make_jaxpr(lambda x: x * 2.0)(np.float32(1))
    (eqn,) = nodes_of(build_graph(closed), "equation")
    assert eqn["label"] == "mul(\u00b7, 2.0)"
    assert eqn["inputs"][1]["literal"] is True


def test_global_scalar_becomes_a_named_constant_and_is_marked_stale():
    global OFFSET
    closed = jitviz.make_jaxpr(polynomial)(3.0)
    graph = build_graph(closed)
    (const,) = nodes_of(graph, "constant")
    assert (const["name"], const["value"], const["origin"]) == ("OFFSET", "0.5", "global")
    assert const["stale"] is False
    assert (const["id"], "e4") in edges_between(graph)
    OFFSET = 1.5
    try:
        stale = stale_bindings(closed.report, globals())
        assert stale == {"OFFSET": "1.5"}
        (const,) = nodes_of(build_graph(closed, stale=stale), "constant")
        assert const["stale"] is True and const["now"] == "1.5"
    finally:
        OFFSET = 0.5


def test_captured_array_is_a_constant_with_its_value():
    closed = jitviz.make_jaxpr(lambda x: WEIGHTS @ x)(np.ones(3))
    consts = nodes_of(build_graph(closed), "constant")
    weights = next(c for c in consts if c["name"] == "WEIGHTS")
    assert weights["origin"] == "global"
    assert "[2, 3]" in weights["value"] and "5." in weights["value"]
    assert weights["shape"] == [2, 3]


def test_side_effects_are_ghost_nodes_at_their_line():
    printed_log.clear()
    closed = jitviz.make_jaxpr(with_effects)(np.ones(3, np.float32))
    graph = build_graph(closed, cache_hits=12)
    effects = {n["effect"]: n for n in nodes_of(graph, "effect")}
    assert effects["print"]["label"] == "print \u2014 ran at trace only, skipped on 12 cache hits"
    assert "tracing with" in effects["print"]["text"]
    assert effects["print"]["source"]["code"] == 'print("tracing with", x)'
    assert "mutation" in effects
    sin = next(n for n in nodes_of(graph, "equation") if n["primitive"] == "sin")
    assert (effects["print"]["id"], sin["id"]) in edges_between(graph)
    uncounted = build_graph(closed)
    assert "skipped on every cache hit" in nodes_of(uncounted, "effect")[0]["label"]


def test_cond_and_loops_are_clusters_with_their_bodies_inside():
    closed = jitviz.make_jaxpr(with_control_flow)(np.ones(3, np.float32))
    graph = build_graph(closed)
    clusters = {n["id"]: n for n in nodes_of(graph, "cluster")}
    cond = next(n for n in clusters.values() if n.get("primitive") == "cond")
    branches = [n for n in clusters.values() if n["cluster"] == cond["id"]]
    assert sorted(b["label"] for b in branches) == ["branch 0", "branch 1"]
    assert cond["size"] == 2
    inner_eqns = [n for n in nodes_of(graph, "equation") if n["cluster"] in {b["id"] for b in branches}]
    assert sorted(n["primitive"] for n in inner_eqns) == ["mul", "sub"]
    # the operand x feeds both branches' inputs; the branch index feeds the cluster itself
    inner_inputs = [n["id"] for n in nodes_of(graph, "input") if n.get("inner")
                    and n["cluster"] in {b["id"] for b in branches}]
    assert all(("in0", i) in edges_between(graph) for i in inner_inputs)
    assert any(t == cond["id"] for _, t in edges_between(graph))
    loop = next(n for n in clusters.values() if n.get("primitive") in ("scan", "while"))
    assert loop["size"] >= 1


def test_nested_jit_is_a_cluster_named_after_the_function():
    inner = jitviz.jit(lambda v: v + 1)
    closed = jitviz.make_jaxpr(lambda x: inner(x) * 2)(np.ones(3, np.float32))
    (cluster,) = nodes_of(build_graph(closed), "cluster")
    assert cluster["primitive"] == "jit" and cluster["label"].startswith("jit ")


@pytest.fixture(scope="module")
def big_graph():
    closed = jitviz.make_jaxpr(unrolled)(np.ones(4, np.float32))
    assert len(closed.eqns) == 5000
    return build_graph(closed)


def test_a_5000_equation_program_opens_collapsed_in_blocks(big_graph):
    blocks = [n for n in nodes_of(big_graph, "cluster") if n["role"] == "block"]
    assert 20 <= len(blocks) <= 60
    assert sum(b["size"] for b in blocks) == 5000
    assert sorted(big_graph["collapsed"]) == sorted(b["id"] for b in blocks)
    assert "mul" in blocks[0]["summary"] and "lines" in blocks[0]["label"]
    v = dotlib.view(big_graph, big_graph["collapsed"])
    assert len(v.nodes) < 100
    assert len(v.edges) < 200
    text = dotlib.to_dot(big_graph)
    assert text.count("jv-collapsed") == len(blocks)


def test_expanding_one_block_shows_its_equations(big_graph):
    collapsed = [c for c in big_graph["collapsed"] if c != "block3"]
    v = dotlib.view(big_graph, collapsed)
    assert "block3" in v.clusters
    inside = [n for n in v.nodes if node(big_graph, n)["cluster"] == "block3"]
    assert len(inside) == node(big_graph, "block3")["size"]


def test_small_programs_get_no_blocks():
    closed = jitviz.make_jaxpr(lambda x: jnp.sin(x) + 1)(np.ones(3, np.float32))
    graph = build_graph(closed)
    assert not nodes_of(graph, "cluster") and graph["collapsed"] == []
    assert BLOCK_THRESHOLD > 2


def test_stage_diff_marks_new_equations():
    closed = jitviz.make_jaxpr(lambda x: jnp.sin(x) * 2 + 1)(np.ones(3, np.float32))
    rewritten = closed.replace_jaxpr(closed.jaxpr.replace(eqns=closed.jaxpr.eqns[:1] + tuple(
        e.replace() for e in closed.jaxpr.eqns[1:])))
    graph = build_graph(rewritten, previous=closed)
    assert graph["diff"]["added"] == 0  # rebuilt but equal equations are not "new"
    dropped = closed.replace_jaxpr(closed.jaxpr.replace(
        eqns=closed.jaxpr.eqns[:2], outvars=closed.jaxpr.eqns[1].outvars))
    graph = build_graph(closed, previous=dropped)
    assert graph["diff"]["added"] == 1
    assert [n["primitive"] for n in nodes_of(graph, "equation") if n["changed"] == "added"] == ["add"]
    assert build_graph(dropped, previous=closed)["diff"]["removed_by_primitive"] == {"add": 1}


def test_kernels_attach_to_their_equations_and_group_into_clusters():
    closed = jitviz.make_jaxpr(lambda x: jnp.sin(x) * 2 + 1)(np.ones(3, np.float32))
    eqns = closed.jaxpr.eqns
    kernels = [types.SimpleNamespace(name="k_sin", eqns=[eqns[0]], source="def k_sin(a): ...",
                                     reused=False, source_lines=[eqns[0].source]),
               types.SimpleNamespace(name="k_rest", eqns=list(eqns[1:]), source=XSS,
                                     reused=True, source_lines=[])]
    graph = build_graph(closed, kernels=kernels)
    assert [n["kernel"] for n in nodes_of(graph, "equation")] == ["k_sin", "k_rest", "k_rest"]
    assert graph["kernels"]["k_rest"]["source"] == XSS
    assert graph["kernels"]["k_sin"]["equations"] == 1
    grouped = build_graph(closed, kernels=kernels, group_kernels=True)
    clusters = {n["label"]: n for n in nodes_of(grouped, "cluster")}
    assert set(clusters) == {"kernel k_sin", "kernel k_rest"}
    assert clusters["kernel k_rest"]["size"] == 2


# --- views and DOT ----------------------------------------------------------------------------

def test_collapsed_cluster_stands_for_its_contents():
    closed = jitviz.make_jaxpr(with_control_flow)(np.ones(3, np.float32))
    graph = build_graph(closed)
    cond = next(n["id"] for n in nodes_of(graph, "cluster") if n.get("primitive") == "cond")
    v = dotlib.view(graph, [cond])
    assert cond in v.nodes and cond not in v.clusters
    assert not any(node(graph, n)["cluster"] == cond for n in v.nodes)
    assert ("in0", cond, "data") in v.edges
    assert len(v.edges) == len(set(v.edges))
    expanded = dotlib.view(graph, [])
    assert cond in expanded.clusters and expanded.anchors[cond] is not None


def test_dot_escapes_user_strings():
    assert dotlib.label_text(XSS, 'say "hi" \\N') == \
        '<img src=x onerror=alert(1)>\\nsay "hi" \\\\N'
    graph = {"nodes": [{"id": "e0", "kind": "equation", "label": XSS, "cluster": None,
                        "outputs": [{"name": 'a"b', "type": "f32[]"}]}], "edges": []}
    text = dotlib.to_dot(graph, [])
    assert 'label="<img src=x onerror=alert(1)>\\na\\"b:f32[]"' in text


def xss_graph(index):
    """The graph of `xss_program`: the payload in the function's name (the title), a dict key
    and a keyword name (input nodes), printed text (an effect node), the source lines and the
    nested jit's name (a cluster)."""
    payload = XSS_PAYLOADS[index]
    fun, args, kwargs = xss_program(payload, index)
    closed = jitviz.make_jaxpr(fun)(*args, **kwargs)
    return payload, build_graph(closed)


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_every_user_text_field_reaches_graph_and_dot_as_text(index):
    payload, graph = xss_graph(index)
    assert graph["title"] == payload
    inputs = [n["label"] for n in nodes_of(graph, "input")]
    assert f"d[{payload!r}]" in inputs and payload in inputs
    # the printed payload is an effect node's text (other effects of the worker's earlier
    # tests may be recorded too: only this one is asserted)
    assert any(payload in e["text"] for e in nodes_of(graph, "effect"))
    assert any(payload in (n.get("source") or {}).get("code", "") for n in graph["nodes"])
    assert any(n["label"] == f"jit {payload}" for n in nodes_of(graph, "cluster"))
    for collapsed in ([], None):  # expanded, and the default view
        strings, outside = dot_strings(dotlib.to_dot(graph, collapsed))
        assert "alert" not in outside and "label=<" not in outside.replace(" ", "")
        labels = "\n".join(strings).replace("&amp;", "&")  # DOT's entity escape, undone
        assert f"d[{payload!r}]" in labels and f"jit {payload}" in labels


@has_dot
def test_svg_from_dot_has_ids_and_no_live_markup(monkeypatch):
    monkeypatch.delenv(dotlib.DOT_ENV, raising=False)
    closed = jitviz.make_jaxpr(xss_function())(np.ones(3, np.float32))
    graph = build_graph(closed, title=XSS)
    svg = dotlib.render_svg(dotlib.to_dot(graph))
    assert svg.startswith("<svg")
    assert 'id="n&#45;e0"' in svg or 'id="n-e0"' in svg
    assert "<img" not in svg and "&lt;img src=x onerror=alert(1)&gt;" in svg



PRE_ESCAPED = XSS_PAYLOADS.index("&lt;img src=x onerror=alert(1)&gt;")


@has_dot
@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_svg_of_every_payload_is_inert(index, monkeypatch):
    monkeypatch.delenv(dotlib.DOT_ENV, raising=False)
    payload, graph = xss_graph(index)
    svg = dotlib.render_svg(dotlib.to_dot(graph, []))
    assert svg.startswith("<svg")
    assert_inert(svg, payload)


@has_dot
def test_pre_escaped_text_is_drawn_as_typed(monkeypatch):
    """Graphviz decodes entities in plain labels: `&lt;img` typed by the user must not be
    drawn as `<img` (text, but not what the user wrote)."""
    monkeypatch.delenv(dotlib.DOT_ENV, raising=False)
    payload, graph = xss_graph(PRE_ESCAPED)
    svg = dotlib.render_svg(dotlib.to_dot(graph, []))
    assert "&amp;lt;img" in svg


def test_no_svg_when_dot_is_switched_off(monkeypatch):
    monkeypatch.setenv(dotlib.DOT_ENV, "none")
    assert dotlib.dot_binary() is None
    assert dotlib.render_svg("digraph { a -> b }") == ""
