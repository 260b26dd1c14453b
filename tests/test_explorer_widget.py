"""The explorer widgets (jitviz/explorer/widget.py), without a browser: what they sync."""
from __future__ import annotations

import html
import json
import pathlib
import shutil
import time

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.explorer import bundle, widget
from jitviz.explorer import dot as dotlib

from helpers import XSS, XSS_PAYLOADS, assert_inert, float64_kept, xss_function, xss_program


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """A float64 argument makes a specialization of its own here (a dtype change): jitviz's
    keep_float64 switch keeps it float64 without x64."""
    with float64_kept():
        yield

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
    assert w.svg.startswith("<svg") and w.renderer == "dot"
    assert w.dot == "" and w.dot_text.startswith("digraph")  # the SVG is enough to sync
    assert "graphviz_wasm" not in w.keys  # the browser needs no Graphviz of its own
    assert "dot_general" in w.jaxpr
    w.stage = "kernels"  # nothing compiled: the last stage there is
    assert w.stage == w.stages[-1]["name"]


def test_without_dot_the_browser_lays_out(no_dot):
    w = jitviz.explore(lambda x: jnp.sin(x), np.ones(3))
    assert w.svg == "" and w.renderer == "wasm"
    assert "jv-equation" in w.dot
    # Graphviz's WebAssembly (1.5 MB) is not synced (nor saved in notebooks): it is sent when
    # the browser asks (test_the_browser_gets_graphviz_webassembly_on_request)
    assert "graphviz_wasm" not in w.keys


def test_jitted_function_lists_specializations_with_reasons():
    f = make_jitted()
    call_with_specializations(f)
    w = jitviz.explore(f)
    rows = w.specializations
    assert [r["signature"] for r in rows] == ["x:f32[3]", "x:f32[2,2]", "x:f64[3]"]
    assert rows[0]["reason"] == "first call" and rows[0]["hits"] == 2
    assert "changed from f32[3] to f32[2,2]" in rows[1]["reason"]
    assert rows[1]["diff"] == [{"argument": "x", "before": "f32[3]", "after": "f32[2,2]"}]
    # the table compares with the specialization the recompile reason names (the nearest
    # earlier one by argument types: f32[3], not the previous in the list)
    assert "changed from f32[3] to f64[3]" in rows[2]["reason"]
    assert rows[2]["diff"] == [{"argument": "x", "before": "f32[3]", "after": "f64[3]"}]
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
        assert w.graph["nodes"] and w.dot_text.startswith("digraph")
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
    assert cond in w.view["nodes"] and "jv-collapsed" in w.dot_text
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


def test_later_calls_are_offered_not_merged():
    """An explorer shows the state when its cell ran: later calls are counted in `pending`
    (the front end's "N newer events — show") and drawn only on request, which `updated`
    then says."""
    f = make_jitted()
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    before = (list(w.events), list(w.specializations), w.svg)
    assert w.pending == 0 and w.updated == ""
    created = w._subject.event_count()
    f(np.ones(5, np.float32))  # a recompile: a new specialization
    for _ in range(5):
        f(np.ones(5, np.float32))
    later = w._subject.event_count() - created  # recompile, trace, compile, hits, lost prints
    assert later >= 8
    assert wait_for(lambda: w.pending == later)
    assert (w.events, w.specializations, w.svg) == before  # nothing merged silently
    w._handle_custom_msg({"type": "refresh"}, [])  # the front end's "show"
    assert w.pending == 0 and len(w.specializations) == 2
    assert w.specializations[1]["hits"] == 5 and len(w.events) > len(before[0])
    assert w.updated.startswith("updated after the cell ran")
    assert f"{later} later events" in w.updated
    w.specialization = 1
    effect = next(n for n in w.graph["nodes"] if n["kind"] == "effect")
    assert "skipped on 5 cache hits" in effect["label"]
    f(np.ones(5, np.float32))
    assert wait_for(lambda: w.pending >= 1)
    w.refresh()
    assert "skipped on 6 cache hits" in w.dot_text and w.pending == 0
    w.close()


def test_synced_graph_is_compact_and_complete():
    from helpers import unrolled
    w = jitviz.explore(unrolled, np.ones(4, np.float32))
    full, synced = w.full_graph, w.graph
    assert "edges" not in synced and synced["format"] == 2
    assert len(synced["nodes"]) == len(full["nodes"])
    assert len(synced["sources"]) <= 10 and len(synced["types"]) <= 5  # 4 lines, 2 types
    sizes = {name: len(json.dumps(g)) for name, g in (("full", full), ("synced", synced))}
    assert sizes["synced"] < sizes["full"] / 3, sizes
    node = next(n for n in synced["nodes"] if n.get("primitive") == "sin")
    source = synced["sources"][node["source"]]
    assert source["code"] == "x = jnp.sin(x)"
    name, t = node["outputs"][0]
    assert synced["types"][t] == {"type": "f32[4]", "shape": [4], "dtype": "float32"}


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
    # no text/html: sanitized in an untrusted notebook, an SVG in HTML is a run-on of node ids
    assert "text/html" not in data
    assert "<img" not in data["image/svg+xml"]
    assert data["text/plain"].startswith(f"jitviz explorer: {XSS} (traced stage)")
    assert "{ lambda" in data["text/plain"] and "sin" in data["text/plain"]


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_saved_notebook_fallback_keeps_every_payload_inert(index, server_svg):
    """The static SVG of a function carrying the payload in its name, a dict key, a keyword
    name, printed text, its source and a nested jit's name."""
    payload = XSS_PAYLOADS[index]
    fun, args, kwargs = xss_program(payload, index)
    w = jitviz.explore(jitviz.jit(fun, backend="interpret"), *args, **kwargs)
    svg = w._repr_mimebundle_()[0]["image/svg+xml"]
    # Graphviz draws '&lt;' in a label as '<' (as text): see test_svg_of_every_payload_is_inert
    pre_escaped = payload.startswith("&lt;")
    assert_inert(svg, payload, shown=not pre_escaped,
                 also=[] if pre_escaped else [f"jit {payload}", f"d[{payload!r}]"])


def test_saved_notebook_fallback_without_dot_is_the_jaxpr_text(no_dot):
    w = jitviz.explore(xss_function(), np.ones(3))
    data, _ = w._repr_mimebundle_()
    assert "image/svg+xml" not in data and "text/html" not in data
    assert "{ lambda" in data["text/plain"] and "sin" in data["text/plain"]


def test_long_jaxpr_text_fallback_is_cut():
    from helpers import unrolled
    w = jitviz.explore(unrolled, np.ones(4, np.float32))
    text = w._repr_mimebundle_()[0]["text/plain"]
    assert len(text.splitlines()) <= widget.MAX_TEXT_LINES + 2
    assert "more lines of the jaxpr" in text


def test_monitor_text_fallback_is_the_event_table():
    f = make_jitted()
    m = jitviz.monitor(f)
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))
    f(np.ones(4, np.float32))
    data, _ = m._repr_mimebundle_()
    text = data["text/plain"]
    assert "object at 0x" not in text and "text/html" not in data
    assert text.splitlines()[0] == "jit events: scaled_sine"
    assert "cache hits" in text.splitlines()[1] and text.splitlines()[2].startswith("scaled_sine")
    assert "recompile" in text and "changed from f32[3] to f32[4]" in text
    m.close()


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
    assert 'src="data:image/svg+xml;base64,' in html  # nbconvert draws the SVG as an image
    assert "<img src=x" not in html


EXECUTED_CELLS = [
    "import numpy as np, jitviz, jitviz.numpy as jnp",
    "def selu(x, alpha=1.67, lambda_=1.05):\n"
    "    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)\n"
    "f = jitviz.jit(selu)\nx = np.linspace(-3, 3, 100, dtype=np.float32)\nf(x); f(x)\n"
    "jitviz.explore(f)",
    "m = jitviz.monitor(f)\nm",
    "f(x[:10])\nf(x[:10])",
    "def unrolled(x):\n    for _ in range(1250):\n        x = x * 1.0001\n        x = x + 0.5\n"
    "        x = jnp.sin(x)\n        x = x - 0.25\n    return x\n"
    "jitviz.explore(unrolled, np.ones(4, np.float32))",
]


@pytest.mark.parametrize("renderer", ["server", "wasm"])
def test_executed_notebook_is_small_and_readable_without_the_widget(renderer, tmp_path,
                                                                     monkeypatch):
    """A notebook run by nbclient (widget state saved, as "Save Widget State" does): the
    outputs read without the widget (text/plain jaxpr and event table, image/svg+xml), and
    the saved state holds no Graphviz WebAssembly and no duplicated graph."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nbconvert = pytest.importorskip("nbconvert")
    if renderer == "server" and shutil.which("dot") is None:
        pytest.skip("needs Graphviz's dot binary")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv(dotlib.DOT_ENV, "dot" if renderer == "server" else "none")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in EXECUTED_CELLS])
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120, startup_timeout=120,
                            store_widget_state=True).execute()
    path = tmp_path / f"executed-{renderer}.ipynb"
    nbformat.write(nb, path)
    size = path.stat().st_size
    state = json.dumps(nb.metadata.get("widgets", {}))
    # before: 22.6 MB without dot (Graphviz's WebAssembly in every explorer's state), 5.6 MB
    # with it (the 5,000-equation graph as an indented JSON tree, the SVG twice, DOT and SVG)
    assert size < 1_700_000, (size, len(state))
    assert "graphviz_wasm" not in state and len(state) < size  # no Graphviz WebAssembly
    outputs = [o for c in nb.cells for o in c.get("outputs", [])
               if o.get("output_type") in ("display_data", "execute_result")
               and "application/vnd.jupyter.widget-view+json" in o["data"]]
    explorer, monitor, big = outputs
    for out in outputs:
        assert "application/vnd.jupyter.widget-view+json" in out["data"]
        assert "text/html" not in out["data"]
        assert "object at 0x" not in out["data"]["text/plain"]
    assert "{ lambda" in explorer["data"]["text/plain"] and "select_n" in explorer["data"][
        "text/plain"]
    assert "function" in monitor["data"]["text/plain"]
    assert "more lines of the jaxpr" in big["data"]["text/plain"]
    if renderer == "server":
        assert explorer["data"]["image/svg+xml"].startswith("<svg")
        stateless = nbformat.from_dict(json.loads(json.dumps(nb)))
        stateless.metadata.pop("widgets", None)  # saved without widget state: the static SVG
        html, _ = nbconvert.HTMLExporter().from_notebook_node(stateless)
        assert html.count('src="data:image/svg+xml;base64,') >= 2
    # the explorer kept the state of its cell: the later calls are pending, not merged
    models = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    selu_state = next(m["state"] for m in models.values() if m["state"].get("title") == "selu")
    assert isinstance(selu_state["graph"], str)  # one JSON string, not an indented tree
    # mostly the front end's code (_esm, 36 kB); the kernels' sources are in it too, and a
    # kernel that runs exp blockwise (without AVX-512) has its tail's tested variants since
    # 2026-11-27 (64,512 bytes on an AVX2 CPU): a duplicated graph would be far more
    assert len(json.dumps(selu_state)) < 68_000
    assert len(selu_state["specializations"]) == 1 and selu_state["pending"] >= 3


# --- compare: a diff of two specializations or stages, sent on request ---------------------------

def make_branchy():
    def branchy(x):
        y = jnp.sin(x) * 2.0
        if x.shape[0] > 4:  # a longer input adds a line's equations
            y = y + jnp.cos(x)
        return y + 1.0
    return jitviz.jit(branchy, backend="interpret")


def ask(w, content):
    """Send the front end's message; the widget's answers."""
    sent = []
    w.send = lambda reply, buffers=None: sent.append(reply)
    widget._answer_front_end(w, content, [])
    del w.send
    return sent


def statuses(rows):
    return [r["status"] for r in rows]


def test_compare_two_specializations_answers_with_their_diff():
    f = make_branchy()
    f(np.ones(3, np.float32))
    f(np.ones(8, np.float32))
    w = jitviz.explore(f)
    before = {k: getattr(w, k) for k in w.keys}
    (reply,) = ask(w, {"type": "compare", "id": 7, "a": {"specialization": 0, "stage": "traced"},
                       "b": {"specialization": 1, "stage": "traced"}})
    assert reply["type"] == "diff" and reply["id"] == 7 and "error" not in reply
    d = reply["diff"]
    assert d["a"] == "#0 x:f32[3] \u00b7 traced" and d["b"] == "#1 x:f32[8] \u00b7 traced"
    assert d["summary"] == {"unchanged": 0, "changed": 3, "added": 2, "removed": 0}
    assert statuses(d["rows"]) == ["changed", "changed", "added", "added", "changed"]
    assert [r["primitive"] for r in d["rows"] if r["status"] == "added"] == ["cos", "add"]
    assert d["inputs"] == [{"field": "input x", "before": "f32[3]", "after": "f32[8]",
                            "label": "input x"}]
    sin = d["rows"][0]
    assert sin["a"] == "b:f32[3] = sin a" and sin["b"] == "b:f32[8] = sin a"
    assert {"field": "out[0]", "before": "f32[3]", "after": "f32[8]",
            "label": "result 0"} in sin["changes"]
    assert d["a_pick"] == {"specialization": 0, "stage": "traced"} and d["cut"] == 0
    assert "text" not in d  # the front end draws the rows; no second copy
    graphs = d["graphs"]  # both graphs, coloured by the same matching
    for side in ("a", "b"):
        drawn = graphs[side]["svg"] or graphs[side]["dot"]
        assert drawn and not graphs[side]["too_large"]
    drawn_b = html.unescape(graphs["b"]["svg"]) + graphs["b"]["dot"]  # dot writes - as &#45;
    assert drawn_b.count("jv-diff-added") == 2
    assert ["e0", "e0"] in graphs["pairs"]  # sin, matched: hovering one shows the other
    json.dumps(reply)  # JSON-ready
    # the diff is a message, not synced state: nothing synced changed
    assert {k: getattr(w, k) for k in w.keys} == before
    w.close()


def test_compare_previous_is_diff_with_previous():
    f = make_branchy()
    f(np.ones(3, np.float32))
    f(np.ones(8, np.float32))
    f(np.ones(3, np.float64))  # nearer to #0 (one dtype) than to #1 (shape and dtype)
    w = jitviz.explore(f)
    for index, expected_a in [(1, 0), (2, 0)]:
        (reply,) = ask(w, {"type": "compare", "id": index, "previous": index, "stage": "traced"})
        d = reply["diff"]
        assert d["previous"] is True
        assert d["a_pick"] == {"specialization": expected_a, "stage": "traced"}
        assert d["b_pick"] == {"specialization": index, "stage": "traced"}
        reference = jitviz.diff_with_previous(f, index)
        assert d["summary"] == reference.summary()
        assert [r["b"] for r in d["rows"]] == [r["b"] for r in reference.to_dict()["rows"]]
    (first,) = ask(w, {"type": "compare", "id": 0, "previous": 0})
    assert "diff" not in first and "not recompiled" in first["error"]
    w.close()


def test_compare_two_stages_of_one_specialization():
    f = make_branchy()
    f(np.ones(8, np.float32))
    w = jitviz.explore(f)
    last = [s["name"] for s in w.stages if s["name"] != "kernels"][-1]
    (reply,) = ask(w, {"type": "compare", "id": 1, "a": {"specialization": 0, "stage": "traced"},
                       "b": {"specialization": 0, "stage": last}})
    d = reply["diff"]
    assert d["b"].endswith(f"\u00b7 {last}")
    reference = jitviz.diff(*[s for s in f.specializations[0].stages if s[0] in ("traced", last)])
    assert d["summary"] == reference.summary() and not d["empty"]
    assert w.compare((0, "traced"), (0, last)).summary() == d["summary"]  # the Python API
    (same,) = ask(w, {"type": "compare", "id": 2, "a": {"specialization": 0, "stage": "traced"},
                      "b": {"specialization": 0, "stage": "traced"}})
    assert same["diff"]["empty"] and same["diff"]["summary"]["unchanged"] == 5
    w.close()


@pytest.mark.parametrize("content, error", [
    ({"a": {"specialization": 5, "stage": "traced"}, "b": {"specialization": 0}},
     "no specialization #5"),
    ({"a": {"specialization": 0, "stage": "nope"}, "b": {"specialization": 0}}, "no stage 'nope'"),
    ({"a": {"specialization": 0}}, "'b'"),
    ({"a": {"specialization": "0"}, "b": {"specialization": 0}}, "no specialization #0"),
])
def test_a_bad_compare_request_is_answered_with_an_error(content, error):
    f = make_branchy()
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    (reply,) = ask(w, {"type": "compare", "id": 3, **content})
    assert reply["id"] == 3 and "diff" not in reply and error in reply["error"]
    w.close()


def test_a_long_diff_is_cut(monkeypatch):
    from helpers import unrolled
    monkeypatch.setattr(widget, "MAX_DIFF_ROWS", 50)
    f = jitviz.jit(unrolled, backend="interpret")
    f(np.ones(4, np.float32))
    f(np.ones(5, np.float32))
    w = jitviz.explore(f)
    (reply,) = ask(w, {"type": "compare", "id": 1, "previous": 1})
    d = reply["diff"]
    assert len(d["rows"]) == 50 and d["cut"] > 1000
    w.close()


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)), ids=lambda i: f"payload{i}")
def test_compare_reply_carries_every_payload_as_text(index):
    """The diff goes to the front end as data: the payload (function name, dict key, keyword,
    printed text, source, nested jit) reaches it verbatim, for the front end to show as text
    (labextension/test/compare.test.ts draws every payload, kept in step below)."""
    payload = XSS_PAYLOADS[index]
    fun, args, kwargs = xss_program(payload, index)
    f = jitviz.jit(fun, backend="interpret")
    f(*args, **kwargs)
    f({payload: np.ones(5, np.float32)}, **kwargs)
    w = jitviz.explore(f)
    (reply,) = ask(w, {"type": "compare", "id": 1, "previous": 1})
    text = json.dumps(reply["diff"], ensure_ascii=False)
    assert json.dumps(payload, ensure_ascii=False)[1:-1] in text
    assert reply["diff"]["summary"]["changed"] > 0
    w.close()


def test_front_end_payload_list_matches_the_python_one():
    fixtures = (ROOT / "labextension" / "test" / "fixtures.ts").read_text()
    start = fixtures.index("export const XSS_PAYLOADS")
    end = fixtures.index("; // end of XSS_PAYLOADS", start)
    listed = json.loads(fixtures[fixtures.index("= [", start) + 2:end])
    assert listed == XSS_PAYLOADS


@pytest.mark.parametrize("backend, compiled", [("cpu", "fuse"), ("interpret", "traced")])
def test_the_kernels_stage_is_the_stage_jit_compiled(no_dot, backend, compiled):
    f = jitviz.jit(lambda x: jnp.sin(x) * 2.0 + 1.0, backend=backend)
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    spec = w._specs[w.specialization]
    assert spec.compiled_stage == compiled == f.specializations[0].executable.stage
    names = [s["name"] for s in w.stages]
    assert names == ["traced", "inline", "fold", "cse", "dce", "fuse", "kernels"]
    assert w.stages[-1]["equations"] == w.stages[names.index(compiled)]["equations"]
    w.stage = "kernels"
    assert w.jaxpr == str(dict(spec.stages)[compiled])


def test_a_stage_that_changed_nothing_says_so(no_dot):
    w = jitviz.explore(lambda x: jnp.sin(x) + jnp.sin(x), np.ones(3, np.float32))
    changed = {s["name"]: s["changed"] for s in w.stages}
    assert changed["inline"] is False  # no nested jit calls
    assert changed["cse"] is True  # the second sin is the first one's result
