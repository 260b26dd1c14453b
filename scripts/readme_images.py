"""Writes the README's pictures of the source-fate view, the ledger and a recompile's diff
(docs/images/*.png): small programs with the tutorials' pitfalls, exported with jitviz.export
and photographed in Chromium by labextension/e2e/reports.mjs (playwright-core, as the tests).

    python scripts/readme_images.py
"""
import os
import shutil
import subprocess
import sys
import tempfile
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


if __name__ == "__main__":
    main()
