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

from helpers import XSS, unrolled, xss_function

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = ROOT / "labextension"
E2E = LABEXTENSION / "e2e"
ARTIFACTS = ROOT / "test-artifacts"
NOTEBOOK = ROOT / "demo_notebooks" / "05_explorer.ipynb"
CHROMIUM = os.environ.get("JITVIZ_CHROMIUM", "/usr/bin/chromium")

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists() and shutil.which("chromium") is None,
                       reason="end-to-end explorer tests need Chromium (apt-get install chromium)"),
    pytest.mark.skipif(shutil.which("node") is None,
                       reason="end-to-end explorer tests need Node.js to run playwright-core"),
    pytest.mark.filterwarnings("ignore::jitviz.JitvizWarning"),
]


@pytest.fixture(scope="module")
def driver_env():
    """Environment for the Node drivers, with playwright-core installed."""
    if not (LABEXTENSION / "node_modules" / "playwright-core").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install playwright-core for the end-to-end tests"
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=LABEXTENSION,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"npm ci failed:\n{proc.stdout}\n{proc.stderr}"
    env = dict(os.environ)
    env["JITVIZ_CHROMIUM"] = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    ARTIFACTS.mkdir(exist_ok=True)
    return env


def run_driver(script: str, args: list[str], env: dict, timeout: float) -> dict:
    proc = subprocess.run(["node", str(E2E / script), *args], cwd=E2E, env=env,
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("JITVIZ_RESULT ")]
    assert lines, f"{script} printed no result (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(lines[-1][len("JITVIZ_RESULT "):])
    name = Path(args[-1]).stem if script == "standalone.mjs" else str(result.get("label"))
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
def jupyterlab(tmp_path: Path, extra_env: dict):
    """A headless JupyterLab on a free localhost port with a token, serving a copy of the
    demo notebook (so autosave never touches the repository)."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
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
    assert result["highlighted"] >= 2
    assert result["stages"][0] == "traced"
    if "kernels" in result["stages"]:
        assert result["kernelSource"].strip()
    kinds = {kind: colour for kind, colour in result["timeline"]}
    assert kinds["cache_hit"] == "rgb(22, 163, 74)" and kinds["recompile"] == "rgb(220, 38, 38)"
    # bad_f ran 4 times (3 cache hits), then once more in the monitor's cell: live recount
    assert any(re.search(r"ran at trace only.*skipped on [34] cache hits", t)
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
