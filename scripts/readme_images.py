"""Writes the README's pictures of the source-fate view, the ledger and a recompile's diff
(docs/images/*.png): small programs with the tutorials' pitfalls, exported with jitviz.export
and photographed in Chromium by labextension/e2e/reports.mjs (playwright-core, as the tests);
and of the explorer's compare view (docs/images/compare.png): a notebook in a headless
JupyterLab whose cell is edited and run again, driven by labextension/e2e/compare_lab.mjs.

    python scripts/readme_images.py
"""
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from functools import partial

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import jitviz  # noqa: E402
import jitviz.numpy as jnp  # noqa: E402

warnings.simplefilter("ignore", jitviz.JitvizWarning)
scale, W, seen = 2.0, np.ones((8, 8), np.float32), []


@partial(jitviz.jit, static_argnums=(1,))
def pitfalls(x, n):
    print("tracing pitfalls")        # runs once, while tracing
    seen.append(x.shape)             # a mutation lost on every later call
    y = (x @ W) * scale              # BLAS on the host; W and scale baked in
    for i in range(n):               # a Python loop: unrolled n times
        y = y + jnp.sin(y)
    half = x.shape[0] // 2           # shape arithmetic: no equations
    unused = jnp.cos(x)              # noqa: F841  (removed by dead-code elimination)
    return y[:half].sum()


def main():
    x = np.ones((4, 8), np.float32)
    pitfalls(x, 2)
    pitfalls(x, 3)
    out = tempfile.mkdtemp()
    annotation, _ = jitviz.export(jitviz.annotate(pitfalls), os.path.join(out, "a.html"))
    report, _ = jitviz.export(pitfalls, os.path.join(out, "f.html"))
    proc = subprocess.run(["node", os.path.join(ROOT, "labextension", "e2e", "reports.mjs"),
                           annotation, report, os.path.join(out, "shot")],
                          cwd=os.path.join(ROOT, "labextension", "e2e"), capture_output=True,
                          text=True)
    if proc.returncode or "fatal" in proc.stdout:
        sys.exit(f"reports.mjs failed:\n{proc.stdout}\n{proc.stderr}")
    images = os.path.join(ROOT, "docs", "images")
    os.makedirs(images, exist_ok=True)
    for view in ("annotation", "ledger", "diffs"):
        shutil.copy(os.path.join(out, f"shot-section-{view}.png"),
                    os.path.join(images, f"{view}.png"))
        print(os.path.join("docs", "images", f"{view}.png"))
    compare_picture(out, os.path.join(images, "compare.png"))
    print(os.path.join("docs", "images", "compare.png"))


# --- the explorer's compare view: a cell edited and run again, in JupyterLab ------------------

CELLS = ["import numpy as np\nimport jitviz\nimport jitviz.numpy as jnp", """@jitviz.jit
def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

x = np.linspace(-3, 3, 1000, dtype=np.float32)
selu(x)""", "jitviz.explore(selu)"]
EDITED = CELLS[1].replace("alpha * jnp.exp(x) - alpha", "alpha * jnp.expm1(x)")


def compare_picture(out, target):
    import nbformat
    root = os.path.join(out, "lab")
    os.makedirs(root)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, os.path.join(root, "compare.ipynb"))
    settings = os.path.join(out, "settings", "@jupyterlab", "notebook-extension")
    os.makedirs(settings)
    with open(os.path.join(settings, "tracker.jupyterlab-settings"), "w") as f:
        json.dump({"windowingMode": "none"}, f)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": os.path.join(out, "config"),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
               "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0",
               f"--LabApp.user_settings_dir={os.path.join(out, 'settings')}",
               f"--LabApp.workspaces_dir={os.path.join(out, 'workspaces')}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    base = f"http://127.0.0.1:{port}"
    with open(os.path.join(out, "lab.log"), "w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
        try:
            _wait_for(f"{base}/api/status?token={token}", server)
            proc = subprocess.run(
                ["node", os.path.join(ROOT, "labextension", "e2e", "compare_lab.mjs"), base,
                 token, "compare.ipynb", out, "readme"], input=EDITED, capture_output=True,
                text=True, cwd=os.path.join(ROOT, "labextension", "e2e"), timeout=400)
        finally:
            server.terminate()
            server.wait(timeout=30)
    if proc.returncode or "fatal" in proc.stdout:
        sys.exit(f"compare_lab.mjs failed:\n{proc.stdout}\n{proc.stderr}")
    shutil.copy(os.path.join(out, "readme-previous-run-compare.png"), target)


def _wait_for(url, server, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("JupyterLab exited early")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    sys.exit(f"JupyterLab did not start within {timeout} s")


if __name__ == "__main__":
    main()
