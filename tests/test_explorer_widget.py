"""The explorer widgets (jitviz/explorer/widget.py), without a browser: what they sync."""
from __future__ import annotations

import pathlib
import shutil
import time

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.explorer import bundle, widget
from jitviz.explorer import dot as dotlib

from helpers import XSS_PAYLOADS, assert_inert, xss_function, xss_program

pytestmark = pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning")

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCALE = 2.0


def wait_for(predicate, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def server_svg(monkeypatch):
    if shutil.which("dot") is None:
        pytest.skip("needs Graphviz's dot binary")
    monkeypatch.delenv(dotlib.DOT_ENV, raising=False)


@pytest.fixture
def no_dot(monkeypatch):
    monkeypatch.setenv(dotlib.DOT_ENV, "none")


def make_jitted():
    def scaled_sine(x):
        print("tracing scaled_sine")
        return jnp.sin(x) * SCALE + 1
    return jitviz.jit(scaled_sine, backend="interpret")


def call_with_specializations(f):
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))
    f(np.ones((2, 2), np.float32))
    f(np.ones(3, np.float64))


def test_plain_function(server_svg):
    w = jitviz.explore(lambda x, y: x @ y + 1, np.ones((2, 3)), np.ones((3, 4)))
    assert w.title == "<lambda>"
    assert [s["name"] for s in w.stages][0] == "traced"
    assert w.stage == "traced"
    assert len(w.specializations) == 1 and not w.specializations[0]["compiled"]
    assert w.events == []
    prims = [n["primitive"] for n in w.graph["nodes"] if n["kind"] == "equation"]
    assert prims == ["dot_general", "add"]
    assert w.dot.startswith("digraph") and w.svg.startswith("<svg") and w.renderer == "dot"
    assert w.graphviz_wasm == b""  # the browser needs no Graphviz of its own
    assert "dot_general" in w.jaxpr
    w.stage = "kernels"  # nothing compiled: the last stage there is
    assert w.stage == w.stages[-1]["name"]


def test_without_dot_the_browser_lays_out(no_dot):
    w = jitviz.explore(lambda x: jnp.sin(x), np.ones(3))
    assert w.svg == "" and w.renderer == "wasm"
    assert w.graphviz_wasm == widget.GRAPHVIZ_WASM.read_bytes()
    assert "jv-equation" in w.dot


def test_jitted_function_lists_specializations_with_reasons():
    f = make_jitted()
    call_with_specializations(f)
    w = jitviz.explore(f)
    rows = w.specializations
    assert [r["signature"] for r in rows] == ["x:f32[3]", "x:f32[2,2]", "x:f64[3]"]
    assert rows[0]["reason"] == "first call" and rows[0]["hits"] == 2
    assert "changed from f32[3] to f32[2,2]" in rows[1]["reason"]
    assert rows[1]["diff"] == [{"argument": "x", "before": "f32[3]", "after": "f32[2,2]"}]
    assert rows[2]["diff"] == [{"argument": "x", "before": "f32[2,2]", "after": "f64[3]"}]
    assert w.specialization == 2  # the most recently used
    kinds = [e["kind"] for e in w.events]
    assert "recompile" in kinds and "cache_hit" in kinds and "side_effect_lost" in kinds
    w.specialization = 0
    assert w.graph["nodes"][0]["dtype"] == "float32"
    effect = next(n for n in w.graph["nodes"] if n["kind"] == "effect")
    assert effect["label"] == "print \u2014 ran at trace only, skipped on 2 cache hits"


def test_explore_with_arguments_selects_their_specialization():
    f = make_jitted()
    call_with_specializations(f)
    w = jitviz.explore(f, np.ones((2, 2), np.float32))
    assert w.specializations[w.specialization]["signature"] == "x:f32[2,2]"
    fresh = jitviz.explore(f, np.ones(7, np.int32))
    current = fresh.specializations[fresh.specialization]
    assert not current["compiled"] and "not called yet" in current["signature"]
    assert len(f._cache.entries) == 3  # exploring does not add a cache entry


def test_stages_and_kernels():
    f = make_jitted()
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    names = [s["name"] for s in w.stages]
    assert names[0] == "traced"
    assert names[-1] == "kernels"
    for name in names:
        w.stage = name
        assert w.graph["nodes"] and w.dot.startswith("digraph")
    w.stage = "optimized"  # %jaxpr --stage optimized: the last pass
    assert w.stage == [n for n in names if n != "kernels"][-1]
    w.stage = "kernels"
    assert any(n["kind"] == "cluster" and n.get("role") == "kernel" for n in w.graph["nodes"])
    assert any(n.get("kernel") for n in w.graph["nodes"])
    assert all(k["source"] for k in w.graph["kernels"].values())


def test_collapsing_redraws():
    f = make_jitted()
    f(np.ones(3, np.float32))
    w = jitviz.explore(jitviz.jit(lambda x: jitviz.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)),
                       np.ones(3))
    cond = next(n["id"] for n in w.graph["nodes"] if n.get("primitive") == "cond")
    assert cond in w.view["clusters"]
    w.collapsed = [cond]
    assert cond in w.view["nodes"] and "jv-collapsed" in w.dot
    w.collapsed = []
    assert cond in w.view["clusters"]


def test_stale_global_is_marked():
    global SCALE
    f = make_jitted()
    f(np.ones(3, np.float32))
    SCALE = 5.0
    try:
        w = jitviz.explore(f)
        assert [(s["name"], s["traced"], s["now"]) for s in w.graph["stale"]] == \
            [("SCALE", "2.0", "5.0")]
        scalar = jitviz.jit(lambda x: x * SCALE, backend="interpret")
        scalar(3.0)
        SCALE = 6.0
        constants = [n for n in jitviz.explore(scalar).graph["nodes"] if n["kind"] == "constant"]
        assert [(n["name"], n["stale"], n["now"]) for n in constants] == [("SCALE", True, "6.0")]
    finally:
        SCALE = 2.0


def test_live_events_reach_the_widget():
    f = make_jitted()
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    before = len(w.events)
    f(np.ones(5, np.float32))  # a recompile: new specialization
    assert wait_for(lambda: len(w.specializations) == 2)
    assert len(w.events) > before
    for _ in range(5):
        f(np.ones(5, np.float32))
    assert wait_for(lambda: w.specializations[1]["hits"] == 5)
    effect = next(n for n in w.graph["nodes"] if n["kind"] == "effect")
    assert wait_for(lambda: "skipped on 5 cache hits" in next(
        n for n in w.graph["nodes"] if n["kind"] == "effect")["label"]), effect
    assert wait_for(lambda: "skipped on 5 cache hits" in w.dot)
    w.close()


def test_kernel_source_names_notebook_cells(monkeypatch):
    from jitviz.explorer import graph as graph_model
    monkeypatch.setattr(graph_model, "notebook_cell",
                        lambda path: "cell 12" if path.endswith("/4567.py") else None)
    text = ("#   exp   /tmp/ipykernel_123/4567.py:4: y = jnp.exp(x)\n"
            "#   sin   /tmp/ipykernel_123/999.py:2: z\n#   mul   /home/me/model.py:3: w")
    assert graph_model.cell_names(text) == (
        "#   exp   cell 12:4: y = jnp.exp(x)\n#   sin   a notebook cell:2: z\n"
        "#   mul   /home/me/model.py:3: w")


def test_monitor_collects_events_of_its_functions():
    f, g = make_jitted(), jitviz.jit(lambda x: x + 1, backend="interpret")
    m = jitviz.monitor(f)
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))
    g(np.ones(3, np.float32))
    assert wait_for(lambda: any(e["kind"] == "cache_hit" for e in m.events))
    assert {e["function"] for e in m.events} == {"scaled_sine"}
    assert m.functions[0]["name"] == "scaled_sine" and m.functions[0]["hits"] >= 1
    everything = jitviz.monitor()
    g(np.ones(4, np.float32))
    assert wait_for(lambda: any(e["function"] == "<lambda>" for e in everything.events))
    with pytest.raises(TypeError):
        jitviz.monitor(lambda x: x)
    m.close()
    everything.close()


def test_saved_notebook_fallbacks_escape_user_strings(server_svg):
    w = jitviz.explore(xss_function(), np.ones(3))
    data, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["image/svg+xml"].startswith("<svg")
    for text in (data["text/html"], data["image/svg+xml"]):
        assert "<img" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in data["text/html"]
    assert "sin" in data["text/plain"]


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_saved_notebook_fallback_keeps_every_payload_inert(index, server_svg):
    """The static HTML (the title and the SVG) of a function carrying the payload in its
    name, a dict key, a keyword name, printed text, its source and a nested jit's name."""
    payload = XSS_PAYLOADS[index]
    fun, args, kwargs = xss_program(payload, index)
    w = jitviz.explore(jitviz.jit(fun, backend="interpret"), *args, **kwargs)
    html = w._repr_mimebundle_()[0]["text/html"]
    # Graphviz draws '&lt;' in a label as '<' (as text): see test_svg_of_every_payload_is_inert
    pre_escaped = payload.startswith("&lt;")
    assert_inert(html, payload, shown=not pre_escaped,
                 also=[] if pre_escaped else [f"jit {payload}", f"d[{payload!r}]"])


def test_saved_notebook_fallback_without_dot_is_the_jaxpr_text(no_dot):
    w = jitviz.explore(xss_function(), np.ones(3))
    data, _ = w._repr_mimebundle_()
    assert "image/svg+xml" not in data
    assert "<pre>" in data["text/html"] and "sin" in data["text/html"]
    assert "<img" not in data["text/html"]


def test_explore_rejects_non_functions():
    with pytest.raises(TypeError):
        jitviz.explore(42)


# --- the front-end bundle ----------------------------------------------------------------------

def test_the_browser_gets_graphviz_webassembly_on_request(no_dot):
    w = jitviz.explore(lambda x: jnp.sin(x), np.ones(3))
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    widget._answer_front_end(w, {"type": "graphviz"}, [])
    widget._answer_front_end(w, {"type": "something else"}, [])
    ((content, buffers),) = sent
    assert content == {"type": "graphviz"}
    assert buffers[0] == widget.GRAPHVIZ_WASM.read_bytes() and b"renderDot" in buffers[0]


def test_widgets_load_the_built_bundle():
    assert widget.BUNDLE.is_file() and widget.STYLES.is_file() and widget.GRAPHVIZ_WASM.is_file()
    assert widget.BUNDLE.stat().st_size < 200_000  # WebAssembly Graphviz is loaded on demand
    assert "render" in widget.BUNDLE.read_text()
    assert "jitviz explorer" not in str(widget.Explorer._esm)  # not the missing-bundle stub


@pytest.mark.skipif(not (ROOT / "labextension" / "package.json").is_file(),
                    reason="installed without the TypeScript sources")
def test_bundle_is_built_from_the_current_sources():
    assert bundle.bundle_is_current(ROOT / "labextension", ROOT / "jitviz" / "static"), (
        "jitviz/static/explorer.js is out of date with labextension/: run "
        "`cd labextension && npm ci && npm run build` and commit the result")


def test_nbconvert_html_shows_the_static_graph_without_widget_state(server_svg):
    """A saved notebook without widget state (JupyterLab's default) still shows the graph."""
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    w = jitviz.explore(xss_function(), np.ones(3))
    data, metadata = w._repr_mimebundle_()
    cell = nbformat.v4.new_code_cell("jitviz.explore(probe, np.ones(3))", outputs=[
        nbformat.v4.new_output("display_data", data=data, metadata=metadata)])
    nb = nbformat.v4.new_notebook(cells=[cell])
    html, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert 'class="jitviz-static"' in html and 'id="jv-graph"' in html
    assert "<img src=x" not in html
