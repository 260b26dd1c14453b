"""`jitviz.diff`: matching the equations of two programs and classifying each one."""
from __future__ import annotations

import html
import importlib.util
import json
import re
import textwrap

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz import lax
from jitviz.diff import Change, ProgramDiff, diff_with_previous
from jitviz.explorer.dot import dot_binary

from helpers import XSS, float64_kept

B = "interpret"  # the diff is about programs, not backends
f32, f64 = np.float32, np.float64


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """A dtype change from float32 to float64 makes the second specialization here: jitviz's
    keep_float64 switch keeps a NumPy float64 argument float64 without x64."""
    with float64_kept():
        yield


def two_paths(x, y):
    a = jnp.sin(x) * 2
    b = jnp.cos(y) + 1
    c = jnp.sum(b)
    return a, c


def unrolled(x, n):
    a = x * 2
    for _ in range(n):
        a = a * 0.5 + 1  # the loop line
    return jnp.sum(a)


def jitted(fun, **options):
    """`jit(fun)` with an empty cache: jit caches are shared by every jit of one function."""
    f = jitviz.jit(fun, backend=B, **options)
    f.clear_cache()
    return f


def prims(rows):
    return [r.primitive for r in rows]


def load_module(tmp_path, name, source):
    """A function from its own file, as a notebook cell re-run after an edit would be."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- classification -----------------------------------------------------------------------

def test_identical_programs_give_an_empty_diff():
    f = jitted(two_paths)
    x = np.ones(3, f32)
    f(x, x)
    (spec,) = f.specializations
    for d in (jitviz.diff(spec, spec), jitviz.diff(two_paths, two_paths, args=(x, x))):
        assert not d
        assert d.changed == [] and d.added == [] and d.removed == []
        assert len(d.unchanged) == len(spec.closed.jaxpr.eqns)
        assert d.inputs == [] and d.outputs == [] and d.consts == []
        assert "no differences (5 equations)" in d.text()


def test_a_dtype_change_marks_exactly_the_equations_whose_types_changed():
    f = jitted(two_paths)
    f(np.ones(3, f32), np.ones(3, f32))
    f(np.ones(3, f64), np.ones(3, f32))
    a, b = f.specializations
    d = jitviz.diff(a, b)
    eqns_a, eqns_b = a.closed.jaxpr.eqns, b.closed.jaxpr.eqns
    assert len(eqns_a) == len(eqns_b)  # the same program but for the types
    expected = {i for i, (ea, eb) in enumerate(zip(eqns_a, eqns_b))
                if [v.aval for v in ea.invars + ea.outvars]
                != [v.aval for v in eb.invars + eb.outvars]}
    assert expected and len(expected) < len(eqns_a)  # some changed, some did not
    assert {eqns_a.index(r.a) for r in d.changed} == expected
    assert {eqns_b.index(r.b) for r in d.changed} == expected
    assert d.added == [] and d.removed == []
    assert d.inputs == [Change("input x", "f32[3]", "f64[3]")]
    for row in d.changed:
        assert "out[0]" in row.fields  # each says which field changed
    sin = next(r for r in d.changed if r.primitive == "sin")
    assert sin.changes == [Change("arg[0]", "f32[3]", "f64[3]"),
                           Change("out[0]", "f32[3]", "f64[3]")]


def test_a_shape_change_on_one_input_changes_its_uses_only():
    def f(x, y):
        s = jnp.sum(x * 2)
        return s, y + 1
    jf = jitviz.jit(f, backend=B)
    jf(np.ones(3, f32), np.ones(2, f32))
    jf(np.ones(4, f32), np.ones(2, f32))
    d = jitviz.diff(*jf.specializations)
    assert prims(d.changed) == ["mul", "reduce_sum"]
    mul, reduce_sum = d.changed
    assert mul.fields == ["arg[0]", "out[0]"]
    assert reduce_sum.fields == ["arg[0]"]  # f32[4] -> f32[]: only its operand changed
    assert prims(d.unchanged) == ["add"]
    assert str(mul.changes[1]) == "result 0 f32[3] \u2192 f32[4]"


def test_an_edited_cell_shows_the_added_operation_and_the_edited_constant(tmp_path):
    before = load_module(tmp_path, "cell_v1", """
        import jitviz.numpy as jnp

        def f(x, y):
            a = jnp.sin(x) * 2
            b = jnp.cos(y) + 1
            return a * b
        """)
    after = load_module(tmp_path, "cell_v2", """
        import jitviz.numpy as jnp

        def f(x, y):
            # a new line moves every line below it
            a = jnp.sin(x) * 3
            b = jnp.cos(y) + 1
            b = jnp.exp(b)
            return a * b
        """)
    x = np.ones(3, f32)
    d = jitviz.diff(before.f, after.f, args=(x, x))
    assert prims(d.added) == ["exp"] and d.removed == []
    (mul,) = d.changed
    assert mul.changes == [Change("arg[1]", "2.0:f32[]", "3.0:f32[]")]
    assert prims(d.unchanged) == ["sin", "cos", "add", "mul"]  # matched across files/lines
    assert "cell_v1.py" in d.a_label and "cell_v2.py" in d.b_label
    text = d.text()
    assert re.search(r"^\+ \w+:f32\[3\] = exp \w+$", text, re.M)
    assert re.search(r"^~ \w+:f32\[3\] = mul \w+ 2\.0:f32\[\]$", text, re.M)
    assert "@@ line 8 (f): b = jnp.exp(b) @@" in text  # b's line number


def test_a_static_value_that_unrolls_differently_adds_one_iteration():
    f = jitted(unrolled, static_argnums=1)
    x = np.ones(3, f32)
    f(x, 2)
    f(x, 3)
    d = jitviz.diff(*f.specializations)
    assert prims(d.added) == ["mul", "add"]
    assert {r.source.code for r in d.added} == {"a = a * 0.5 + 1  # the loop line"}
    new_eqns = f.specializations[1].closed.jaxpr.eqns
    assert [d.status_of(e) for e in new_eqns].count("added") == 2
    assert d.changed == [] and d.removed == []
    assert len(d.unchanged) == len(f.specializations[0].closed.jaxpr.eqns)


def test_sub_jaxprs_are_diffed_recursively():
    def before(x):
        return lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: -v, x)

    def after(x):
        return lax.cond(jnp.sum(x) > 0, lambda v: v * 3, lambda v: -v, x)
    d = jitviz.diff(before, after, args=(np.ones(3, f32),))
    (cond,) = [r for r in d.root.rows if r.primitive == "cond"]
    assert cond.status == "changed"
    assert cond.fields == ["body:branch 1"]
    branches = dict(cond.subs)
    assert branches["branch 0"].is_empty()
    (mul,) = [r for r in branches["branch 1"].rows]
    assert mul.status == "changed" and mul.changes == [Change("arg[1]", "2.0:f32[]",
                                                              "3.0:f32[]")]
    assert d.changed == [cond, mul]


def test_reordered_equations_are_matched_by_dataflow():
    def f(x, y):
        a = jnp.sin(x)
        b = jnp.cos(y)
        return a, b

    def g(x, y):
        b = jnp.cos(y)
        a = jnp.sin(x)
        return a, b
    x = np.ones(3, f32)
    d = jitviz.diff(f, g, args=(x, x))
    assert not d, d.text()


def test_a_rewired_operand_is_a_change_of_that_operand():
    def f(x, y, swap):
        a, b = (y, x) if swap else (x, y)
        return a - b
    jf = jitviz.jit(f, static_argnums=2, backend=B)
    x = np.ones(3, f32)
    jf(x, x, False)
    jf(x, x, True)
    (sub,) = jitviz.diff(*jf.specializations).changed
    assert sub.fields == ["arg[0]", "arg[1]"]
    assert sub.changes[0].before == "f32[3] (rewired)"


def test_the_same_primitive_on_other_inputs_is_removed_and_added_not_changed():
    def f(x, y):
        return x * 2

    def g(x, y):
        return y * 3
    x = np.ones(3, f32)
    d = jitviz.diff(f, g, args=(x, x))
    assert (prims(d.removed), prims(d.added), d.changed) == (["mul"], ["mul"], [])


# --- what diff accepts --------------------------------------------------------------------

def test_stage_to_stage_diffs_show_what_dce_and_fusion_did():
    def f(x, y):
        a = jnp.sin(x) * 2
        unused = x * 3  # noqa: F841
        return jnp.sum(a + y)
    x = np.ones(3, f32)
    lowered = jitviz.jit(f, backend=B).lower(x, x)
    stages = dict(lowered.stages)
    dce = jitviz.diff(("traced", stages["traced"]), ("dce", stages["dce"]))
    (removed,) = dce.removed
    assert removed.primitive == "mul" and removed.source.code.startswith("unused = x * 3")
    assert removed.note == "its result was unused"
    assert dce.changed == [] and dce.added == []
    fused = jitviz.diff(lowered.stages[0], lowered.stages[-1])
    kernels = [r for r in fused.root.rows if r.status == "added" and r.primitive == "fused"]
    assert kernels, fused.text()
    names = {f"fused into {r.b.params['name']}" for r in kernels}
    notes = {r.primitive: r.note for r in fused.removed}
    assert set(notes.values()) <= names | {"its result was unused"}
    assert sum(note in names for note in notes.values()) >= 3
    assert all(r.note.startswith("fuses ") for r in kernels)


def test_diff_accepts_lowered_jaxprs_and_jitted_functions():
    f = jitted(two_paths)
    x = np.ones(3, f32)
    with pytest.raises(ValueError, match="no compiled specialization"):
        jitviz.diff(f, f)
    f(x, x)
    lowered = f.lower(x, x)
    closed = lowered.jaxpr
    for a, b in [(lowered, closed), (closed.jaxpr, closed), (f, closed),
                 (f, jitviz.make_jaxpr(two_paths)(x, x))]:
        assert not jitviz.diff(a, b)
    assert jitviz.diff(f, f, args=(x, x), stage="optimized").a_label.endswith("(a)")
    with pytest.raises(TypeError, match="cannot compare a int"):
        jitviz.diff(1, closed)


def test_diff_with_previous_compares_a_recompile_with_its_nearest_specialization():
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 2)
    assert diff_with_previous(f) is None
    f(np.ones(3, f64), 2)  # dtype
    f(np.ones(3, f32), 3)  # static value: nearest to the first, not to the second
    first, _, third = f.specializations
    d = diff_with_previous(f)
    assert (d.a_label, d.b_label) == (first.signature, third.signature)
    assert prims(d.added) == ["mul", "add"] and d.changed == []
    recompile = f.events.of_kind("recompile")[-1]
    assert diff_with_previous(f._cache, recompile).b_label == third.signature
    assert diff_with_previous(f, 1).a_label == first.signature
    assert diff_with_previous(f, "no such signature") is None


# --- views --------------------------------------------------------------------------------

def test_text_marks_rows_and_collapses_unchanged_runs():
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 6)
    f(np.ones(3, f32), 7)
    text = jitviz.diff(*f.specializations).text()
    assert text.splitlines()[:3] == ["--- a: x:f32[3], n=6", "+++ b: x:f32[3], n=7",
                                     "0 changed, 2 added, 0 removed, 14 unchanged"]
    assert "  ... 12 unchanged equations ...\n" in text  # one row of context is kept
    assert len(re.findall(r"^\+ ", text, re.M)) == 2


def test_html_colours_each_row_by_status_and_marks_changed_fields():
    f = jitted(two_paths)
    f(np.ones(3, f32), np.ones(3, f32))
    f(np.ones(3, f64), np.ones(3, f32))
    d = jitviz.diff(*f.specializations)
    page = d.html(graphs=False)
    assert page.count("class='jv-changed'") == len(d.changed)
    assert page.count("class='jv-unchanged'") == len(d.unchanged)
    assert page.count("<details") == 1  # the unchanged run is collapsed
    assert "<mark" in page and "<script" not in page
    f2 = jitted(unrolled, static_argnums=1)
    f2(np.ones(3, f32), 2)
    f2(np.ones(3, f32), 3)
    d2 = jitviz.diff(*f2.specializations)
    assert d2.html(graphs=False).count("class='jv-added'") == len(d2.added) == 2


@pytest.mark.skipif(dot_binary() is None, reason="needs Graphviz's dot")
def test_html_draws_both_graphs_with_nodes_coloured_by_status():
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 2)
    f(np.ones(3, f32), 3)
    d = jitviz.diff(*f.specializations)
    assert d.node_status("a") == {}
    added = d.node_status("b")
    assert sorted(added.values()) == ["added", "added"]
    page = d.html()
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(svgs) == 2
    assert "#bbf7d0" not in svgs[0] and svgs[1].count('fill="#bbf7d0"') == 2
    ids = [re.findall(r'\bid="([^"]*)"', svg) for svg in svgs]  # ids don't clash
    assert ids[0] and all(i.startswith("a-") for i in ids[0])
    assert ids[1] and all(i.startswith("b-") for i in ids[1])
    # the unchanged equations before the new iteration are folded, in both graphs
    assert all("unchanged" in svg and "equations (collapsed)" in svg for svg in svgs)
    assert not re.search(r"https?:", page)


# --- the graphs of a diff (what the explorer's compare view draws) ----------------------------

def eqn_nodes(graph):
    return {n["id"]: n for n in graph["nodes"] if "primitive" in n}


def test_identical_programs_give_graphs_with_nothing_coloured_and_everything_folded():
    from jitviz.diff.views import MIN_FOLDED_RUN, graph_data, status_graphs
    f = jitted(two_paths)
    x = np.ones(3, f32)
    f(x, x)
    (spec,) = f.specializations
    d = jitviz.diff(spec, spec)
    graphs = status_graphs(d)
    for graph in graphs.values():
        eqns = eqn_nodes(graph)
        assert len(eqns) == 5 >= MIN_FOLDED_RUN and not any("diff" in n for n in eqns.values())
        folds = [n for n in graph["nodes"] if n.get("role") == "unchanged"]
        assert len(folds) == 1 and folds[0]["size"] == 5  # one unchanged region
        assert {n["cluster"] for n in eqns.values()} == {folds[0]["id"]}
        assert graph["collapsed"] == [folds[0]["id"]]
    assert graph_data(d)["pairs"] == [[folds[0]["id"], folds[0]["id"]]]


def test_a_dtype_change_colours_exactly_the_nodes_of_the_equations_whose_types_changed():
    from jitviz.diff.views import graph_data, status_graphs
    f = jitted(two_paths)
    f(np.ones(3, f32), np.ones(3, f32))
    f(np.ones(3, f64), np.ones(3, f32))
    a, b = f.specializations
    d = jitviz.diff(a, b)
    graphs = status_graphs(d)
    for side, spec in (("a", a), ("b", b)):
        eqns = eqn_nodes(graphs[side])
        coloured = {i for i, n in eqns.items() if "diff" in n}
        typed = [e for e in spec.closed.jaxpr.eqns]
        expected = {f"e{typed.index(r.a if side == 'a' else r.b)}" for r in d.changed}
        assert coloured == expected == {"e0", "e1"}  # sin and mul of x; y's path is the same
        assert {eqns[i]["diff"] for i in coloured} == {"changed"}
        # y's three unchanged equations are one folded node, out of the way
        folded = {i for i, n in eqns.items() if n["cluster"] is not None}
        assert folded == {"e2", "e3", "e4"}
    data = graph_data(d)
    assert ["e0", "e0"] in data["pairs"] and ["e1", "e1"] in data["pairs"]
    if dot_binary() is not None:
        svg = html.unescape(data["b"]["svg"])  # dot writes - as &#45;
        fill = data["colors"]["changed"][0]
        assert svg.count(f'fill="{fill}"') == 2 and 'jv-node jv-equation jv-diff-changed"' in svg
        assert data["b"]["dot"] == ""  # the browser needs no layout
    else:
        assert data["b"]["svg"] == "" and "jv-diff-changed" in data["b"]["dot"]


def test_the_graphs_keep_the_equations_next_to_a_difference_in_both_programs():
    from jitviz.diff.views import status_graphs
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 5)
    f(np.ones(3, f32), 6)
    d = jitviz.diff(*f.specializations)
    graphs = status_graphs(d)
    added = [i for i, n in eqn_nodes(graphs["b"]).items() if n.get("diff") == "added"]
    assert len(added) == 2
    visible_b = {i for i, n in eqn_nodes(graphs["b"]).items() if n["cluster"] is None}
    visible_a = {i for i, n in eqn_nodes(graphs["a"]).items() if n["cluster"] is None}
    assert set(added) < visible_b  # the new iteration, and what it feeds and is fed by
    assert len(visible_b) >= 4 and len(visible_a) == len(visible_b) - 2  # the same context
    for graph in graphs.values():
        assert any(n.get("role") == "unchanged" and n["size"] >= 8 for n in graph["nodes"])


def test_a_diff_too_large_to_expand_is_drawn_with_its_blocks_coloured(monkeypatch):
    from jitviz.diff.views import graph_data
    from jitviz.explorer import dot as dotlib
    from helpers import unrolled as long_program  # 5,000 equations, cut into blocks
    monkeypatch.setenv("JITVIZ_DOT", "none")  # the DOT is what is checked
    f = jitted(long_program)
    f(np.ones(4, f32))
    f(np.ones(5, f32))  # every equation's types change
    data = graph_data(jitviz.diff(*f.specializations))
    for side in ("a", "b"):
        text = data[side]["dot"]
        assert not data[side]["too_large"] and text.startswith("digraph")
        drawn = text.count("jv-node jv-")
        assert 30 <= drawn <= dotlib.MAX_VISIBLE_NODES  # blocks, not 5,000 nodes
        assert text.count("jv-collapsed jv-diff-changed") >= 30  # every block holds changes


def test_without_dot_the_graphs_go_as_dot_for_the_browser(monkeypatch):
    from jitviz.diff.views import graph_data
    monkeypatch.setenv("JITVIZ_DOT", "none")
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 2)
    f(np.ones(3, f32), 3)
    data = graph_data(jitviz.diff(*f.specializations))
    for side in ("a", "b"):
        assert data[side]["svg"] == "" and data[side]["dot"].startswith("digraph")
    assert data["b"]["dot"].count("jv-diff-added") == 2 and "jv-unchanged-run" in data["a"]["dot"]


def test_without_graphviz_the_html_says_so_and_keeps_the_table(monkeypatch):
    monkeypatch.setenv("JITVIZ_DOT", "none")
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 2)
    f(np.ones(3, f32), 3)
    page = jitviz.diff(*f.specializations).html()
    assert "<svg" not in page and "Graphviz's dot is not installed" in page
    assert page.count("class='jv-added'") == 2


def test_every_user_string_is_escaped():
    def helper(x):
        return x + 1

    helper.__name__ = XSS  # shows up as a `jit[name=...]` param

    def f(x, tag):
        y = jitviz.jit(helper)(x)
        return y * 2 if tag else y  # <img src=x onerror=alert(1)>
    jf = jitviz.jit(f, static_argnums=1, backend=B)
    jf(np.ones(3, f32), XSS)
    jf(np.ones(3, f32), "")
    a, b = jf.specializations
    d = jitviz.diff((XSS, a.closed), (XSS + "!", b.closed))
    assert d.changed or d.removed
    text = d.text()
    assert XSS in text  # plain text keeps it as it is
    for page in (d.html(), a_and_b_html(jitviz.diff(a, b))):
        assert "<img" not in page and "onerror=alert(1)>" not in page
        assert html.escape(XSS) in page


def a_and_b_html(d: ProgramDiff) -> str:
    return d._repr_html_()


def test_to_dict_is_json_and_matches_the_diff():
    f = jitted(unrolled, static_argnums=1)
    f(np.ones(3, f32), 2)
    f(np.ones(3, f32), 3)
    d = jitviz.diff(*f.specializations)
    data = json.loads(json.dumps(d.to_dict()))
    assert data["summary"] == d.summary() and data["empty"] is False
    added = [r for r in data["rows"] if r["status"] == "added"]
    assert [r["primitive"] for r in added] == ["mul", "add"]
    assert added[0]["source"]["code"].startswith("a = a * 0.5 + 1")
    assert data["text"] == d.text()
