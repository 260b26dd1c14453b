"""The explorer keeps the previous run of a re-run cell (jitviz/explorer/history.py): a new
function object of the same definition is compared with the traces of the old one, which is
usually gone by then."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import jitviz
import jitviz.numpy as jnp
from jitviz.explorer import history

from helpers import XSS

ROOT = Path(__file__).resolve().parent.parent
# written for NumPy 64-bit operands that stay 64-bit (jitviz's keep_float64 switch);
# JAX's own 32-bit narrowing is tests/test_array_promotion.py's
pytestmark = [pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning"),
              pytest.mark.usefixtures("keep_float64")]


@pytest.fixture(autouse=True)
def fresh_history():
    gc.collect()  # functions of earlier tests are not runs of these
    history.forget()
    # what earlier tests left alive counts as seen (in a notebook the hook looks after every
    # cell): otherwise the first look here records all of it, and past 64 definitions the
    # bound evicts this test's own function (as it did in CI, with other files' functions)
    history.remember_live()
    history.forget_runs()
    yield
    history.forget()


def test_live_functions_before_the_first_look_do_not_crowd_out_later_runs():
    keep = []
    for i in range(history.MAX_DEFINITIONS + 10):  # more live functions than the bound
        namespace = {}
        exec(f"def g{i}(x):\n    return x * {i}", namespace)
        keep.append(jitviz.jit(namespace[f"g{i}"]))
        keep[-1](np.float32(1.0))
    history.remember_live()
    history.forget_runs()
    old = define(V1)
    old(np.ones(3, np.float32))
    assert history.remember_live() == 1  # only f was traced since the last look
    assert [r.name for r in history._runs[("cellmod", "f")]] == ["f"]


def define(source: str, name: str = "f", module: str = "cellmod"):
    """Run `source` as a cell would (a fresh namespace of module `module`) and return `name`."""
    namespace = {"__name__": module, "jnp": jnp, "jitviz": jitviz}
    exec(compile(textwrap.dedent(source), f"<cell {module}>", "exec"), namespace)
    return namespace[name]


def ask(w, content):
    sent = []
    w.send = lambda msg, buffers=None: sent.append(msg)
    try:
        w._handle_custom_msg(content, [])
    finally:
        del w.send
    return sent


V1 = """
@jitviz.jit
def f(x):
    y = jnp.sin(x) * 2.0
    return y + 1.0
"""
V2 = """
@jitviz.jit
def f(x):
    y = jnp.sin(x) * 2.0
    y = y * jnp.cos(x)
    return y + 1.0
"""


def test_a_rerun_cell_in_ipython_is_compared_with_its_previous_run():
    """The notebook flow, in a fresh process: jitviz is imported in the shell (that is what
    starts keeping runs), the cell runs, is edited and runs again, then the explorer."""
    script = textwrap.dedent('''
        import gc, json
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_cell("import numpy as np, jitviz, jitviz.numpy as jnp")
        cell = "@jitviz.jit\\ndef f(x):\\n    y = jnp.sin(x) * 2\\n    return y{}\\nf(np.ones(3, np.float32))"
        ip.run_cell(cell.format(""), store_history=True)
        ip.run_cell(cell.format(" + 1"), store_history=True)   # edited and run again
        gc.collect()
        ip.run_cell("w = jitviz.explore(f)", store_history=True)
        import jitviz
        w = ip.user_ns["w"]
        d = w.compare_previous_run()
        print("RESULT " + json.dumps({
            "live": [c.name for c in jitviz.registry()], "previous": w.previous_run,
            "summary": d.summary(), "added": [r.primitive for r in d.added], "a": d.a_label}))
    ''')
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    out = json.loads(line[len("RESULT "):])
    assert out["live"] == ["f"]  # the first f is gone: only its kept trace remains
    assert out["previous"]["signatures"] == ["x:f32[3]"]
    assert out["previous"]["where"].startswith("cell ") and "f at cell" in out["previous"]["label"]
    assert out["summary"] == {"unchanged": 2, "changed": 0, "added": 1, "removed": 0}
    assert out["added"] == ["add"] and out["a"].startswith("previous run (cell ")


def test_the_previous_run_outlives_its_function_and_is_diffed_on_request():
    old = define(V1)
    old(np.ones(3, np.float32))
    history.remember_live()  # what the shell does after the cell
    assert [r.name for r in history._runs[("cellmod", "f")]] == ["f"]
    del old
    gc.collect()
    new = define(V2)
    new(np.ones(3, np.float32))
    w = jitviz.explore(new)
    assert w.previous_run["signatures"] == ["x:f32[3]"] and w.previous_run["name"] == "f"
    (reply,) = ask(w, {"type": "compare", "id": 4, "previous_run": True, "stage": "traced"})
    d = reply["diff"]
    assert reply["id"] == 4 and d["previous_run"] is True
    assert d["summary"] == {"unchanged": 3, "changed": 0, "added": 2, "removed": 0}
    assert [r["primitive"] for r in d["rows"] if r["status"] == "added"] == ["cos", "mul"]
    added = html_unescaped(d["graphs"]["b"])
    assert added.count("jv-diff-added") == 2  # the same coloured graphs as any compare
    assert d["a"].startswith("previous run (") and d["b"].startswith("this run: #0 x:f32[3]")
    w.close()


def html_unescaped(graph) -> str:
    import html
    return html.unescape(graph["svg"]) + graph["dot"]


def test_an_identical_rerun_gives_an_empty_diff_and_a_dtype_change_marks_the_typed_equations():
    old = define(V1)
    old(np.ones(3, np.float32))
    old(np.ones(3, np.float64))
    history.remember_live()
    new = define(V1)  # the same cell run again: a new function object
    new(np.ones(3, np.float32))
    w = jitviz.explore(new)
    same = w.compare_previous_run()
    assert not same and same.summary()["unchanged"] == 3  # matched to the f32 one, not f64
    new(np.ones(3, np.float64))
    w.refresh()
    f64 = w.compare_previous_run(index=1)
    assert "x:f64[3]" in f64.a_label and not f64  # the previous run's f64 specialization
    w.close()
    typed = define("""
        @jitviz.jit
        def f(x):
            y = jnp.sin(x.astype(jnp.float64)) * 2.0
            return y + 1.0
        """)
    typed(np.ones(3, np.float32))
    w = jitviz.explore(typed)
    d = w.compare_previous_run()
    assert [r.primitive for r in d.added] == ["convert_element_type"]
    assert {r.primitive for r in d.changed} == {"sin", "mul", "add"}  # f32 -> f64 results
    for row in d.changed:
        assert [c.field for c in row.changes if c.field.startswith("out")] == ["out[0]"]
    w.close()


def test_a_plain_function_explored_again_after_an_edit():
    x = np.ones(4, np.float32)
    old = define("def g(x):\n    return jnp.sin(x)\n", name="g")
    w_old = jitviz.explore(old, x)
    assert w_old.previous_run == {}
    new = define("def g(x):\n    return jnp.sin(x) + jnp.cos(x)\n", name="g")
    w = jitviz.explore(new, x)
    assert w.previous_run["signatures"] == ["x:f32[4]"]
    d = w.compare_previous_run()
    assert sorted(r.primitive for r in d.added) == ["add", "cos"] and not d.removed
    w.close()
    w_old.close()


def test_without_a_previous_run_the_request_says_so():
    f = define(V1)
    f(np.ones(3, np.float32))
    w = jitviz.explore(f)
    assert w.previous_run == {} and w.compare_previous_run() is None
    (reply,) = ask(w, {"type": "compare", "id": 1, "previous_run": True})
    assert "diff" not in reply and "no previous run of this function is kept" in reply["error"]
    w.close()


def test_only_functions_traced_since_the_last_look_are_recorded():
    f = define(V1, module="onlymod")
    f(np.ones(3, np.float32))
    history.remember_live()
    (run,) = history._runs[("onlymod", "f")]
    f(np.ones(3, np.float32))  # a cache hit: nothing new
    history.remember_live()
    assert history._runs[("onlymod", "f")] == [run]  # not recorded again
    f(np.ones(5, np.float32))
    history.remember_live()
    (again,) = history._runs[("onlymod", "f")]  # the same run (function object), updated
    assert again is not run and [s.signature for s in again.specializations] == \
        ["x:f32[3]", "x:f32[5]"]


def test_kept_runs_are_bounded(monkeypatch):
    monkeypatch.setattr(history, "MAX_DEFINITIONS", 3)
    monkeypatch.setattr(history, "SPECIALIZATIONS_PER_RUN", 2)
    keep = []
    for k in range(5):  # five definitions: the two oldest are dropped
        f = define(V1, module=f"mod{k}")
        for n in (2, 3, 4):
            f(np.ones(n, np.float32))
        history.remember_live()
        keep.append(f)
    assert [d[0] for d in history._runs] == ["mod2", "mod3", "mod4"]
    run = history._runs[("mod4", "f")][-1]
    assert [s.signature for s in run.specializations] == ["x:f32[3]", "x:f32[4]"]  # newest two
    for _ in range(3):  # runs of one definition: the current one and the one before it
        f = define(V1, module="mod4")
        f(np.ones(2, np.float32))
        history.remember_live()
        keep.append(f)
    assert len(history._runs[("mod4", "f")]) == history.RUNS_PER_DEFINITION == 2


def test_large_constants_are_not_kept_beyond_the_budget(monkeypatch):
    monkeypatch.setattr(history, "MAX_KEPT_BYTES", 10_000)
    table = np.arange(4000, dtype=np.float32)  # 16 kB baked into the program
    big = define("""
        @jitviz.jit
        def f(x):
            return x + TABLE
        """, module="bigmod")
    big.__wrapped__.__globals__["TABLE"] = table
    big(np.ones(4000, np.float32))
    history.remember_live()
    assert ("bigmod", "f") not in history._runs
    new = define(V1, module="bigmod")
    new(np.ones(3, np.float32))
    w = jitviz.explore(new)
    (reply,) = ask(w, {"type": "compare", "id": 1, "previous_run": True})
    assert reply["error"] == (
        "no previous run of this function is kept: its programs hold 15.6 KiB of constants, "
        "more than the 9.8 KiB kept (jitviz.explorer.history.MAX_KEPT_BYTES)")
    w.close()
    small = [define(V1, module=f"small{k}") for k in range(12)]
    for f in small:
        f(np.ones(3, np.float32))
    history.remember_live()
    assert sum(r.nbytes for runs in history._runs.values() for r in runs) <= 10_000


def test_the_previous_run_label_is_data_for_the_front_end_to_escape():
    old = define(V1)
    old(np.ones(3, np.float32))
    history.remember_live()
    new = define(V1)
    new.__wrapped__.__name__ = XSS
    new(np.ones(3, np.float32))
    w = jitviz.explore(new)
    json.dumps(w.previous_run)
    assert w.previous_run["name"] == "f"  # the old function's name, verbatim
    w.close()


def test_a_jit_magic_cell_run_again_after_an_edit():
    """`%%jit` cells: each run defines new jitted functions; the shell watched by
    `watch_cells` keeps the previous run's traces."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    ip = InteractiveShell.instance()
    assert history.watch_cells(ip) and history.watch_cells(ip)  # registered once
    assert ip.events.callbacks["post_run_cell"].count(history._after_cell) == 1
    ip.run_line_magic("load_ext", "jitviz")
    with capture_output():
        ip.run_cell("import numpy as np\nimport jitviz\nimport jitviz.numpy as jnp")
        ip.run_cell("%%jit --backend interpret -q\ndef norm(x):\n    return jnp.sqrt((x * x).sum())"
                    "\nnorm(np.ones(4, np.float32))", store_history=True)
        ip.run_cell("%%jit --backend interpret -q\ndef norm(x):\n"
                    "    return jnp.sqrt((x * x).sum() + 1e-6)\nnorm(np.ones(4, np.float32))",
                    store_history=True)
    gc.collect()
    w = jitviz.explore(ip.user_ns["norm"])
    assert w.previous_run["signatures"] == ["x:f32[4]"]
    d = w.compare_previous_run()
    assert [r.primitive for r in d.added] == ["add"] and not d.removed and not d.changed
    w.close()
