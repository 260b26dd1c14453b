"""End to end: the explorer's front end in Chromium, driven by playwright-core from Node.

- JupyterLab, headless, runs demo_notebooks/05_explorer.ipynb; the driver
  (labextension/e2e/jupyterlab.mjs) clicks an equation node and reads the inspector. Twice:
  with Graphviz's `dot` (the server's SVG) and with `dot` hidden (JITVIZ_DOT=none: Graphviz
  compiled to WebAssembly lays the graph out in the browser).
- The bundle on its own (labextension/e2e/harness.html) with the state of a 5,000-equation
  program: it must open and answer a click within 3 s.

Screenshots go to test-artifacts/. Skips only when Chromium or Node is missing; installs
labextension/'s npm packages (playwright-core) when they are not there yet.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import numpy as np
import pytest

import jitviz.numpy as jnp

from helpers import (XSS, browser_marks, playwright_env, unrolled,  # noqa: E402
                     xss_function, xss_program)

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = ROOT / "labextension"
E2E = LABEXTENSION / "e2e"
ARTIFACTS = ROOT / "test-artifacts"
NOTEBOOK = ROOT / "demo_notebooks" / "05_explorer.ipynb"
pytestmark = browser_marks("end-to-end explorer tests")


@pytest.fixture(scope="module")
def driver_env():
    """Environment for the Node drivers, with playwright-core installed."""
    ARTIFACTS.mkdir(exist_ok=True)
    return playwright_env(LABEXTENSION)


def run_driver(script: str, args: list[str], env: dict, timeout: float,
               stdin: str = "") -> dict:
    proc = subprocess.run(["node", str(E2E / script), *args], cwd=E2E, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("JITVIZ_RESULT ")]
    assert lines, f"{script} printed no result (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(lines[-1][len("JITVIZ_RESULT "):])
    name = Path(args[-1]).stem if script in ("standalone.mjs", "views.mjs") else str(result.get("label"))
    (ARTIFACTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    assert "fatal" not in result, f"{script} failed: {result['fatal']}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, proc.stderr
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- JupyterLab ------------------------------------------------------------------------------

@contextlib.contextmanager
def jupyterlab(tmp_path: Path, extra_env: dict, notebook: Path = NOTEBOOK):
    """A headless JupyterLab on a free localhost port with a token, serving a copy of the
    notebook (the demo notebook by default; so autosave never touches the repository)."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(notebook, root / notebook.name)
    settings = tmp_path / "settings"
    for plugin, values in {
        "notebook-extension/tracker": {"windowingMode": "none"},  # every cell in the DOM
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = free_port(), uuid.uuid4().hex
    env = {**os.environ, **extra_env, "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    # the kernel must import jitviz (and its front end) from this checkout, whatever the
    # interpreter's installed copy (an editable install of another clone)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
               f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
               "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = open(tmp_path / "jupyterlab.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                              cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(base, token, server, tmp_path / "jupyterlab.log")
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def wait_for_server(base, token, server, log_path, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited early:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not start within {timeout} s:\n{log_path.read_text()[-3000:]}")


EXPECTED_TITLES = ["f", "selu", "bad_f", "impure_uses_globals", "myabs_then_smooth",
                   "unrolled", XSS]


@pytest.mark.parametrize("renderer", ["server", "wasm"])
def test_notebook_in_jupyterlab(renderer, tmp_path, driver_env):
    if renderer == "server" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed (the wasm case still runs)")
    extra = {"JITVIZ_DOT": "none"} if renderer == "wasm" else {}
    with jupyterlab(tmp_path, extra) as (base, token):
        result = run_driver("jupyterlab.mjs", [base, token, NOTEBOOK.name, str(ARTIFACTS),
                                               f"lab-{renderer}", "return 2*x*x + 3*x + 3"],
                            driver_env, timeout=300)
    assert result["problems"] == [], result["problems"]
    assert result["injected"] == 0
    states = result["states"]
    assert [s["title"] for s in states] == EXPECTED_TITLES
    assert all(s["state"] == "ready" and s["nodes"] > 0 for s in states), states
    assert {s["renderer"] for s in states} == {renderer}
    assert result["errors"] == [] and result["tracebacks"] == 0
    # clicking an equation of f shows its source line in the inspector
    assert result["selected"] == 1
    assert "return 2*x*x + 3*x + 3" in result["inspector"]
    assert "line 6" in result["inspector"]
    # selu: several specializations, producers/consumers highlighted, kernels with source
    assert len(result["specOptions"]) >= 3
    # ... the three of its cell: cell [9]'s calls (f32[5], f32[6]) are offered, not merged
    assert [o.split(" ")[1] for o in result["specOptions"]] == \
        ["x:f32[1000]", "x:f32[10]", "x:i32[1000]"], result["specOptions"]
    assert "newer events since this cell ran" in result["pendingText"]
    assert len(result["specOptionsShown"]) == 5
    assert "updated after the cell ran" in result["updatedText"]
    # a recompile's "diff" in the timeline: asked of the kernel, drawn when it answers
    compare = result["compare"]
    assert compare["state"] == "ready" and "changed" in compare["statuses"], compare
    assert "x:f32[1000]" in compare["text"] and "x:f32[10]" in compare["text"], compare["text"]
    assert result["highlighted"] >= 2
    assert result["stages"][0] == "traced"
    if "kernels" in result["stages"]:
        assert result["kernelSource"].strip()
    kinds = {kind: colour for kind, colour in result["timeline"]}
    assert kinds["cache_hit"] == "rgb(22, 163, 74)" and kinds["recompile"] == "rgb(220, 38, 38)"
    # bad_f ran 4 times (3 cache hits) in its cell; the monitor's cell calls it once more
    assert any(re.search(r"ran at trace only.*skipped on 3 cache hits", t)
               for t in result["effectText"]), result["effectText"]
    assert "stale global g" in result["staleText"]
    assert result["bigNodes"] > 50  # a block of the 5,000 equations expanded
    assert result["monitorEvents"] > 0
    assert result["probeTitle"] == XSS
    assert any(XSS in t for t in result["probeEffect"])


# --- the bundle on its own: a 5,000-equation program (helpers.unrolled) --------------------

def widget_state(w) -> dict:
    names = ["widget", "title", "graph", "view", "dot", "svg", "renderer", "jaxpr", "stages",
             "stage", "specializations", "specialization", "events", "collapsed", "selected",
             "error"]
    return {name: getattr(w, name) for name in names}  # graphviz_wasm: harness.html fetches it


@contextlib.contextmanager
def static_server(directory: Path):
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.parametrize("renderer", ["server", "wasm"])
def test_5000_equations_open_within_3_seconds(renderer, tmp_path, driver_env, monkeypatch):
    import jitviz
    if renderer == "server" and shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed (the wasm case still runs)")
    monkeypatch.setenv("JITVIZ_DOT", "none" if renderer == "wasm" else "dot")
    w = jitviz.explore(unrolled, np.ones(4, np.float32))
    assert w.graph["stats"]["equations"] == 5000
    for name in ("explorer.js", "explorer.css", "graphviz.js"):
        shutil.copy(ROOT / "jitviz" / "static" / name, tmp_path / name)
    shutil.copy(E2E / "harness.html", tmp_path / "harness.html")
    (tmp_path / "state.json").write_text(json.dumps(widget_state(w)))
    with static_server(tmp_path) as base:
        result = run_driver("standalone.mjs", [f"{base}/harness.html",
                                               str(ARTIFACTS / f"unrolled-5000-{renderer}.png")],
                            driver_env, timeout=120)
    assert result["problems"] == []
    assert result["state"] == "ready" and result["renderer"] == renderer
    assert result["nodes"] > 20
    assert result["openMs"] < 3000, result
    assert result["clickMs"] < 1500, result
    assert "block of consecutive equations" in result["inspector"]
    assert "sin" in result["searchInfo"] or "match" in result["searchInfo"]


def test_escaping_in_the_browser(tmp_path, driver_env, monkeypatch):
    """A function named and printing <img src=x onerror=alert(1)>, drawn by WebAssembly."""
    import jitviz
    monkeypatch.setenv("JITVIZ_DOT", "none")
    w = jitviz.explore(xss_function(), np.ones(3))
    for name in ("explorer.js", "explorer.css", "graphviz.js"):
        shutil.copy(ROOT / "jitviz" / "static" / name, tmp_path / name)
    shutil.copy(E2E / "harness.html", tmp_path / "harness.html")
    (tmp_path / "state.json").write_text(json.dumps(widget_state(w)))
    with static_server(tmp_path) as base:
        result = run_driver("standalone.mjs", [f"{base}/harness.html",
                                               str(ARTIFACTS / "xss-probe-wasm.png")],
                            driver_env, timeout=120)
    assert result["problems"] == [] and result["injected"] == 0
    assert result["state"] == "ready"
    assert XSS in result["inspector"]  # the source line of sin is in a function named so


# --- the front end's unit tests and types ----------------------------------------------------

def test_front_end_unit_tests_and_types(driver_env):
    """labextension/test/*.test.ts (vitest, happy-dom) and `tsc --noEmit`."""
    bin_dir = LABEXTENSION / "node_modules" / ".bin"
    for command in ([str(bin_dir / "vitest"), "run"], [str(bin_dir / "tsc"), "--noEmit"]):
        proc = subprocess.run(command, cwd=LABEXTENSION, env={**driver_env, "CI": "true"},
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{' '.join(command)} failed:\n{proc.stdout[-5000:]}\n{proc.stderr[-3000:]}"


# --- explorers backed by live Python widgets: where the graph is, how big its labels are ----

def _tanh(x):
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def _selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def _myabs_then_smooth(x):
    from jitviz import lax
    W = np.eye(3) * 0.5
    y = lax.cond(x.sum() > 0, lambda v: v, lambda v: -v, x)
    return lax.fori_loop(0, 3, lambda i, c: c + W @ c, y)


def _tiny(x):
    return jnp.sin(x)


def _branchy(x):
    y = jnp.sin(x) * 2.0
    if x.shape[0] > 4:  # a longer input takes one more line: its recompile adds equations
        y = y + jnp.cos(x)
    return y + 1.0


SKIP_STATE = {"graphviz_wasm", "_esm", "_css", "layout", "_dom_classes", "tabbable", "tooltip"}


def live_state(w) -> dict:
    state = {}
    for name in w.keys:
        if name in SKIP_STATE or name.startswith("_"):
            continue
        value = getattr(w, name)
        if isinstance(value, (bytes, memoryview)):
            continue
        state[name] = value
    return state


class LiveHandler(QuietHandler):
    """Static files, plus /live/NAME/{state,save,msg,action} answered by the Python widgets."""
    widgets: dict = {}
    actions: dict = {}

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) == 3 and parts[0] == "live" and parts[2] == "state":
            return self._json(live_state(self.widgets[parts[1]]))
        return super().do_GET()

    def do_POST(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        w = self.widgets[parts[1]]
        if parts[2] == "save":
            for key, value in json.loads(body or "{}").items():
                setattr(w, key, value)
        elif parts[2] == "msg":  # the messages the widget sends back go with its state
            sent = []
            w.send = lambda content, buffers=None: sent.append(content)
            try:
                w._handle_custom_msg(json.loads(body or "{}"), [])
            finally:
                del w.send
            return self._json({**live_state(w), "__messages": sent})
        elif parts[2] == "action":
            self.actions[(parts[1], body)]()
        return self._json(live_state(w))

    def _json(self, value):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def live_explorers(tmp_path: Path) -> tuple[dict, dict, list]:
    """The widgets, the actions the driver may trigger, and the plan of steps."""
    import jitviz
    selu = jitviz.jit(_selu)
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    selu(x)
    live = jitviz.jit(_selu)
    live(x)
    branchy = jitviz.jit(_branchy)
    branchy(np.ones(3, np.float32))
    branchy(np.ones(8, np.float32))
    fun, args, kwargs = xss_program(XSS)
    xss = jitviz.jit(fun, backend="interpret")
    xss(*args, **kwargs)
    xss({XSS: np.ones(5, np.float32)}, **kwargs)
    widgets = {
        "tiny": jitviz.explore(_tiny, np.ones(3, np.float32)),
        "grad-tanh": jitviz.explore(jitviz.grad(_tanh), 1.0),
        "unrolled": jitviz.explore(unrolled, np.ones(4, np.float32)),
        "smooth": jitviz.explore(_myabs_then_smooth, np.arange(3.0)),
        "tour-fused": jitviz.explore(_selu, x),
        "selu-live": jitviz.explore(live),
        "selu-kernel": jitviz.explore(selu),
        "branchy-compare": jitviz.explore(branchy),
        "xss-compare": jitviz.explore(xss),
    }
    widgets["tour-fused"].stage = "optimized"
    widgets["selu-kernel"].stage = "kernels"
    actions = {("selu-live", "later calls"): lambda: (live(x[:10]), live(x[:10]), live(x[:7]))}
    m, shot = {"do": "measure"}, lambda label: {"do": "measure", "shot": label}
    cluster_label = ".jv-canvas g.cluster > text"
    plan = [
        {"name": "tiny", "steps": [shot("initial"), {"do": "fit", "shot": "fit"}]},
        {"name": "grad-tanh", "steps": [
            shot("initial"), {"do": "search", "text": "exp", "shot": "search-exp"},
            {"do": "search", "text": "exp", "enter": True, "shot": "search-enter"},
            {"do": "search", "text": "src:exp", "shot": "search-src"},
            {"do": "fit", "shot": "fit"}]},
        {"name": "unrolled", "steps": [
            shot("initial"),
            {"do": "dblclick", "selector": ".jv-canvas g.node.jv-cluster", "nth": 2,
             "shot": "expanded"},
            {"do": "fit", "shot": "expanded-fit"},
            {"do": "search", "text": "sin", "enter": True, "shot": "search-enter"}]},
        {"name": "smooth", "steps": [
            shot("initial"), {"do": "dblclick", "selector": cluster_label, "shot": "collapsed"},
            {"do": "search", "text": "cond", "enter": True, "shot": "search-enter"}]},
        {"name": "tour-fused", "steps": [
            shot("initial"), {"do": "dblclick", "selector": cluster_label, "shot": "collapsed"}]},
        {"name": "selu-live", "steps": [
            shot("initial"), {"do": "action", "action": "later calls", "shot": "later-calls"},
            {"do": "click", "selector": ".jv-pending button", "shot": "shown"}]},
        {"name": "selu-kernel", "steps": [
            m, {"do": "click", "selector": ".jv-canvas g.node.jv-equation"},
            {"do": "open-kernel", "shot": "kernel-source"}]},
        {"name": "branchy-compare", "steps": [
            {"do": "compare", "a": {"spec": 0, "stage": "traced"},
             "b": {"spec": 1, "stage": "traced"}, "shot": "specializations"},
            {"do": "compare", "a": {"spec": 1, "stage": "traced"},
             "b": {"spec": 1, "stage": "fuse"}, "shot": "stages"},
            {"do": "compare", "selector": ".jv-diff-previous", "shot": "recompile-reason"}]},
        {"name": "xss-compare", "steps": [
            {"do": "compare", "selector": ".jv-event-diff", "shot": "diff"}]},
    ]
    return widgets, actions, plan


def test_views_stay_on_screen_and_readable(tmp_path, driver_env):
    """After each action the graph's bounding box meets the canvas; labels are 11-16 px."""
    widgets, actions, plan = live_explorers(tmp_path)
    for name in ("explorer.js", "explorer.css", "graphviz.js"):
        shutil.copy(ROOT / "jitviz" / "static" / name, tmp_path / name)
    shutil.copy(E2E / "live.html", tmp_path / "live.html")
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    LiveHandler.widgets, LiveHandler.actions = widgets, actions
    handler = functools.partial(LiveHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_driver("views.mjs", [f"http://127.0.0.1:{server.server_address[1]}",
                                          str(ARTIFACTS), str(tmp_path / "plan.json"),
                                          "views"], driver_env, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
        for w in widgets.values():
            w.close()
    (ARTIFACTS / "views-summary.json").write_text(json.dumps(
        {n: [{k: s.get(k) for k in ("do", "text", "shot")} | {
            k: s.get("m", {}).get(k) for k in ("intersects", "fontPx", "textHeightPx",
                                               "visible", "nodes", "selectedVisible")}
            for s in r["steps"]] for n, r in result["results"].items()}, indent=1))
    res = result["results"]
    assert result["problems"] == [] and result["injected"] == 0
    for name, r in res.items():
        assert "fatal" not in r, f"{name}: {r['fatal']}"
        for step in r["steps"]:
            if "m" in step:
                assert step["m"]["intersects"], (name, step["do"], step["m"])
    steps = {name: {s.get("shot") or s["do"]: s.get("m", s) for s in r["steps"]}
             for name, r in res.items()}
    # readable by default: 3 nodes, ~30 nodes (grad(tanh)), 5,000 equations (and a block of it)
    for name, label in [("tiny", "initial"), ("grad-tanh", "initial"), ("unrolled", "initial"),
                        ("unrolled", "expanded"), ("smooth", "initial")]:
        assert 11 <= steps[name][label]["fontPx"] <= 16, (name, label, steps[name][label])
    assert steps["grad-tanh"]["initial"]["nodes"] >= 20
    assert steps["tiny"]["fit"]["fontPx"] <= 16  # fit does not blow 3 nodes up
    assert steps["unrolled"]["expanded-fit"]["fontPx"] >= 4  # not a 1-px sliver
    # the node a search or a double-click focused is on screen
    for name, label in [("grad-tanh", "search-enter"), ("unrolled", "expanded"),
                        ("unrolled", "search-enter"), ("smooth", "collapsed"),
                        ("smooth", "search-enter"), ("tour-fused", "collapsed")]:
        assert steps[name][label]["selectedVisible"], (name, label, steps[name][label])
    # search ranks primitive and variable names; source text only with src:
    exp = steps["grad-tanh"]["search-exp"]
    assert exp["matches"] and all("exp" in m for m in exp["matches"]), exp["matches"]
    assert len(steps["grad-tanh"]["search-src"]["matches"]) > len(exp["matches"])
    # the explorer shows its cell's state; later calls are offered, not silently merged
    later = steps["selu-live"]["later-calls"]
    assert len(later["specOptions"]) <= 1 and "newer" in later["pending"], later
    shown = steps["selu-live"]["shown"]
    assert len(shown["specOptions"]) == 3 and "after" in shown["info"], shown
    # kernel source unwrapped, with a horizontal scrollbar
    kernel = next(s for s in res["selu-kernel"]["steps"] if s["do"] == "open-kernel")["kernel"]
    assert kernel["whiteSpace"] == "pre", kernel
    assert kernel["scrollHeight"] <= kernel["lines"] * kernel["lineHeight"] + 20, kernel
    assert kernel["scrollWidth"] > kernel["clientWidth"]  # long lines scroll, not wrap
    # the inspector widened for the code; the graph kept its scale
    assert kernel["inspectorWidth"] > 500, kernel["inspectorWidth"]
    assert 11 <= steps["selu-kernel"]["kernel-source"]["fontPx"] <= 16
    # compare: two specializations, two stages, the recompile reason's diff; escaped
    diffs = {s["shot"]: s["diff"] for r in ("branchy-compare", "xss-compare")
             for s in res[r]["steps"] if s["do"] == "compare"}
    spec = diffs["specializations"]
    assert spec["state"] == "ready", spec
    assert spec["statuses"] == ["changed", "changed", "added", "added", "changed"], spec
    assert spec["markers"] == ["~", "~", "+", "+", "~"], spec
    assert spec["chips"] == ["3 changed", "2 added", "0 removed", "0 unchanged"], spec
    assert "#0 x:f32[3] \u00b7 traced" in spec["text"] and "input x f32[3] \u2192 f32[8]" in spec["text"]
    assert "cos" in spec["text"] and "operand 0 f32[3] \u2192 f32[8]" in spec["text"]
    assert 11 <= spec["fontPx"] <= spec["fontPxMax"] <= 16, spec
    stages = diffs["stages"]
    assert stages["state"] == "ready" and "added" in stages["statuses"], stages
    assert "#1 x:f32[8] \u00b7 fuse" in stages["text"], stages["text"][:300]
    previous = diffs["recompile-reason"]
    assert previous["statuses"] == spec["statuses"] and previous["picks"][:4] == \
        ["0", "traced", "1", "traced"], previous
    xss_diff = diffs["diff"]
    assert xss_diff["state"] == "ready" and XSS in xss_diff["text"], xss_diff
    assert "changed" in xss_diff["statuses"], xss_diff
