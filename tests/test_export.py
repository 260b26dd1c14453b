"""`jitviz.export`: one self-contained offline HTML file and its JSON twin."""
from __future__ import annotations

import html
import json
import re
import sys
import types

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.explorer.dot import dot_binary

from helpers import XSS, float64_kept

B = "interpret"
f32, f64 = np.float32, np.float64


@pytest.fixture(autouse=True, scope="module")
def _float64_as_given():
    """A dtype change from float32 to float64 makes the second specialization here: jitviz's
    keep_float64 switch keeps a NumPy float64 argument float64 without x64."""
    with float64_kept():
        yield


def scaled(x, n):
    y = jnp.sin(x) * n
    return jnp.sum(y)


def compiled_twice():
    """A jitted function with two specializations (a dtype change) and a cache hit."""
    f = jitviz.jit(scaled, static_argnums=1, backend=B)
    f.clear_cache()  # jit caches are shared by every jit of one function
    f(np.ones(3, f32), 2)
    f(np.ones(3, f64), 2)
    f(np.ones(3, f64), 2)
    return f


def read(paths):
    html_path, json_path = paths
    return html_path.read_text(encoding="utf-8"), json.loads(json_path.read_text())


def assert_self_contained(page: str):
    """Nothing the page would fetch: no script, no external resource, no link but to itself,
    no URL in any tag or style (escaped user text may mention anything)."""
    tags = re.findall(r"<[a-zA-Z][^<>]*>", page)
    assert not [t for t in tags
                if re.match(r"<(script|link|img|iframe|object|embed|base|use)\b", t, re.I)]
    targets = [v for t in tags for v in re.findall(r"\b(?:src|href)\s*=\s*['\"]?([^'\" >]*)", t)]
    assert all(v.startswith("#") for v in targets), targets
    styles = re.findall(r"<style>(.*?)</style>", page, re.S) + \
        re.findall(r"style='([^']*)'", page)
    for code in tags + styles:
        assert not re.search(r"https?:|url\(|@import", code, re.I), code


@pytest.fixture
def no_annotate(monkeypatch):
    """As if jitviz/annotate.py did not exist (yet)."""
    monkeypatch.setitem(sys.modules, "jitviz.annotate", None)


def test_export_of_a_jitted_function_writes_html_and_json_with_the_same_parts(
        tmp_path, no_annotate):
    f = compiled_twice()
    paths = jitviz.export(f, tmp_path / "report.html")
    assert paths == (tmp_path / "report.html", tmp_path / "report.json")
    page, data = read(paths)
    specs = f.specializations
    assert data["kind"] == "jit_function" and data["title"] == "jitviz report: scaled"
    assert [s["signature"] for s in data["specializations"]] == [s.signature for s in specs]
    assert [s["jaxpr"] for s in data["specializations"]] == [str(s.closed) for s in specs]
    assert [s["hits"] for s in data["specializations"]] == [0, 1]
    assert [st["name"] for st in data["specializations"][0]["stages"]] == \
        [name for name, _ in specs[0].stages]
    assert [e["kind"] for e in data["events"]] == [e.kind for e in f.events]
    (row,) = data["ledger"]["rows"]
    assert (row["name"], row["compiles"], row["hits"]) == ("scaled", 2, 1)
    (d,) = data["diffs"]
    expected = jitviz.diff(*specs)
    assert d["summary"] == expected.summary() and d["text"] == expected.text()
    (recompile,) = f.events.of_kind("recompile")
    assert d["reason"] == recompile.reason
    assert "annotation" not in data
    for spec in specs:  # the HTML shows what the JSON holds
        assert html.escape(str(spec.closed), quote=False) in page
        assert html.escape(spec.signature) in page
    assert html.escape(recompile.reason) in page
    assert page.count("<section") == 4 and "Source annotation" not in page


def test_each_recompile_is_diffed_against_the_specialization_it_came_from(
        tmp_path, no_annotate):
    f = compiled_twice()
    f(np.ones(3, f32), 3)  # a new static value: nearest to the first specialization
    first, second, third = f.specializations
    _, data = read(jitviz.export(f, tmp_path / "f.html"))
    assert [(d["a"], d["b"]) for d in data["diffs"]] == [
        (first.signature, second.signature), (first.signature, third.signature)]
    assert data["diffs"][1]["reason"] == "static argument 'n' changed from 2 to 3"


def test_exported_html_is_self_contained(tmp_path, no_annotate):
    f = compiled_twice()
    page, _ = read(jitviz.export(f, tmp_path / "f.html"))
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert ("<svg" in page) == bool(dot_binary())  # graphs drawn inline when dot exists
    assert_self_contained(page)
    assert not re.search(r"https?:", page)  # not even as text: SVG namespaces are dropped


def test_export_of_a_diff_or_a_ledger_is_that_view_alone(tmp_path):
    f = compiled_twice()
    d = jitviz.diff(*f.specializations)
    page, data = read(jitviz.export(d, tmp_path / "diff.html"))
    assert data["kind"] == "diff"
    assert data["diff"] == json.loads(json.dumps(d.to_dict()))
    assert page.count("<section") == 1 and "class='jv-changed'" in page
    assert_self_contained(page)
    ledger = jitviz.ledger()
    page, data = read(jitviz.export(ledger, tmp_path / "ledger.html"))
    assert data["kind"] == "ledger"
    assert [r["name"] for r in data["ledger"]["rows"]] == [r.name for r in ledger.rows]
    assert "jit ledger" in page
    assert_self_contained(page)


class FakeAnnotation:
    """What jitviz/annotate.py's Annotation offers the export."""

    def __init__(self, f):
        self.name = f.__name__

    def _repr_html_(self):
        return f"<div class='fake-annotation'>{html.escape(self.name)}: 2 lines fused</div>"

    def to_dict(self):
        return {"function": self.name, "lines": [{"line": 4, "fate": "fused"}]}


FakeAnnotation.__name__ = "Annotation"


def test_export_adds_the_source_annotation_when_jitviz_annotate_exists(tmp_path,
                                                                        monkeypatch):
    module = types.ModuleType("jitviz.annotate")
    module.annotate = FakeAnnotation
    monkeypatch.setitem(sys.modules, "jitviz.annotate", module)
    f = compiled_twice()
    page, data = read(jitviz.export(f, tmp_path / "f.html"))
    assert data["annotation"] == {"function": "scaled",
                                  "lines": [{"line": 4, "fate": "fused"}]}
    assert "<div class='fake-annotation'>scaled: 2 lines fused</div>" in page
    page, data = read(jitviz.export(FakeAnnotation(f), tmp_path / "a.html"))
    assert data["kind"] == "annotation" and data["annotation"]["function"] == "scaled"
    assert page.count("<section") == 1


def test_a_failing_annotation_is_reported_and_the_rest_exported(tmp_path, monkeypatch):
    module = types.ModuleType("jitviz.annotate")

    def annotate(f):
        raise RuntimeError(XSS)
    module.annotate = annotate
    monkeypatch.setitem(sys.modules, "jitviz.annotate", module)
    page, data = read(jitviz.export(compiled_twice(), tmp_path / "f.html"))
    assert data["annotation"] == {"error": f"RuntimeError: {XSS}"}
    assert len(data["specializations"]) == 2
    assert "<img" not in page


def test_export_escapes_user_strings(tmp_path, no_annotate):
    def tagged(x, tag):
        return x * 2  # <img src=x onerror=alert(1)>
    f = jitviz.jit(tagged, static_argnums=1, backend=B)
    f(np.ones(3, f32), XSS)
    f(np.ones(3, f32), XSS + "!")
    page, data = read(jitviz.export(f, tmp_path / "f.html"))
    assert "<img" not in page and html.escape(XSS) in page
    assert XSS in data["specializations"][0]["signature"]  # the data keeps it as it is


def test_export_refuses_what_it_cannot_show(tmp_path):
    with pytest.raises(TypeError, match="cannot export a int"):
        jitviz.export(3, tmp_path / "x.html")
    with pytest.raises(ValueError, match="give the HTML file's name"):
        jitviz.export(jitviz.ledger(), tmp_path / "x.json")
