"""The explorer's compare view in JupyterLab (headless Chromium, labextension/e2e/compare_lab.mjs):
the graphs of two specializations' diff, then a cell edited and run again, compared with its
previous run. Both graphs must be drawn, coloured by status, readable and on screen; user
strings stay text. Screenshots go to test-artifacts/compare-*.png."""
from __future__ import annotations

import shutil

import nbformat
import pytest

from helpers import XSS, browser_marks
from test_explorer_e2e import ARTIFACTS, jupyterlab, run_driver
from test_explorer_e2e import driver_env  # noqa: F401 - the fixture

pytestmark = browser_marks("end-to-end explorer tests")

SETUP = "import numpy as np\nimport jitviz\nimport jitviz.numpy as jnp"
FIRST = """@jitviz.jit
def branchy(x):
    y = jnp.sin(x) * 2.0
    if x.shape[0] > 4:  # a longer input takes one more line: its recompile adds equations
        y = y + jnp.cos(x)
    z = y * 3.0
    z = z - 1.0
    z = jnp.exp(z)
    return y + z

branchy(np.ones(3, np.float32))
branchy(np.ones(8, np.float32))"""
EDITED = FIRST.replace("    z = jnp.exp(z)\n",
                       f"    z = jnp.exp(z)\n    z = jnp.tanh(z)  # {XSS}\n")
EXPLORE = "jitviz.explore(branchy)"
FILLS = {"added": "#bbf7d0", "changed": "#fde68a", "removed": "#fecaca"}


def notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in (SETUP, FIRST, EXPLORE)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def check_graphs(view, renderer):
    assert view["state"] == "ready", view
    sides = {c["side"]: c for c in view["canvases"]}
    assert sorted(sides) == ["a", "b"]
    for c in sides.values():
        assert c["state"] == "ready" and c["renderer"] == renderer, c
        assert c["nodes"] >= 3 and c["onScreen"] >= 3, c  # drawn, and in view
        assert 11 <= c["fontPx"] <= c["fontPxMax"] <= 17, c  # readable labels
        assert c["width"] > 300 and c["height"] > 250, c
        for status, fills in c["byStatus"].items():
            assert all(f == FILLS[status] for f in fills), (status, fills)
    legend = dict(view["legend"])
    assert legend["added"] == "rgb(187, 247, 208)" and legend["changed"] == "rgb(253, 230, 138)"
    return sides


@pytest.mark.parametrize("renderer", ["server", "wasm"])
def test_compare_view_draws_both_graphs_and_the_previous_run_in_jupyterlab(
        renderer, tmp_path, driver_env):  # noqa: F811 - the fixture imported above
    if renderer == "server" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed (the wasm case still runs)")
    extra = {"JITVIZ_DOT": "none"} if renderer == "wasm" else {}
    path = notebook(tmp_path / "compare.ipynb")
    with jupyterlab(tmp_path, extra, notebook=path) as (base, token):
        result = run_driver("compare_lab.mjs", [base, token, path.name, str(ARTIFACTS),
                                                f"compare-{renderer}"],
                            driver_env, timeout=400, stdin=EDITED)
    assert result["problems"] == [] and result["injected"] == 0 and result["errors"] == []
    # two specializations: f32[3] -> f32[8] adds the cos line, and every type changes
    spec = check_graphs(result["specializations"], renderer)
    assert len(spec["b"]["byStatus"]["added"]) == 2 and spec["a"]["byStatus"]["added"] == []
    assert len(spec["a"]["byStatus"]["changed"]) == len(spec["b"]["byStatus"]["changed"]) >= 5
    assert "added" in result["specializations"]["rows"]
    assert result["paired"] == [1, 1]  # hovering b's node outlines it and its match in a
    assert result["before"] == 0  # nothing to compare with before the cell ran again
    # the cell edited and run again: the new explorer offers its previous run
    assert "previous run of this cell: branchy at cell" in result["previousText"]
    prev = check_graphs(result["previousRun"], renderer)
    assert prev["a"]["byStatus"] == {"added": [], "removed": [], "changed": []}
    assert len(prev["b"]["byStatus"]["added"]) == 1  # the tanh line, nothing else
    assert any(label.startswith("tanh") for label in prev["b"]["labels"])
    assert prev["a"]["folds"] >= 1 and prev["b"]["folds"] >= 1  # unchanged regions folded
    text = result["previousRun"]["text"]
    assert "previous run (cell" in text and f"z = jnp.tanh(z)  # {XSS}" in text
    assert result["previousRun"]["rows"].count("added") == 1
    assert result["previousRun"]["pickersShown"] is False  # this run's pickers do not apply
