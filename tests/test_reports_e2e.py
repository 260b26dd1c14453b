"""End to end: the exported reports (`jitviz.export`) in Chromium, offline.

The source-fate view of a function with every fate and a jitted function's whole report (ledger,
specializations, the diff of its recompile, the annotation) are written to disk and opened from
`file://` with every network request refused; labextension/e2e/reports.mjs clicks a kernel line,
follows a generated line into the kernel's source and back, and takes screenshots
(test-artifacts/reports-*.png). Skips only when Chromium or Node is missing.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import jitviz

from helpers import browser_marks, playwright_env  # noqa: E402
from test_annotate import everything  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABEXTENSION = ROOT / "labextension"
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = browser_marks("browser tests")


@pytest.fixture(scope="module")
def browsed(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    f = jitviz.jit(everything, static_argnums=(1,))
    x = np.ones((2, 4), np.float32)
    f(x, 3)
    f(x, 4)
    annotation, _ = jitviz.export(jitviz.annotate(f), out / "annotation.html")
    function, _ = jitviz.export(f, out / "function.html")
    ARTIFACTS.mkdir(exist_ok=True)
    proc = subprocess.run(["node", str(LABEXTENSION / "e2e" / "reports.mjs"), str(annotation),
                           str(function), str(ARTIFACTS / "reports")],
                          cwd=LABEXTENSION / "e2e", env=playwright_env(LABEXTENSION),
                          capture_output=True, text=True, timeout=180)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("JITVIZ_RESULT ")]
    assert lines, f"reports.mjs printed no result:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(lines[-1][len("JITVIZ_RESULT "):])
    (ARTIFACTS / "reports.json").write_text(json.dumps(result, indent=1))
    assert "fatal" not in result, result["fatal"]
    return result


def test_reports_open_offline_without_errors(browsed):
    assert browsed["network"] == [] and browsed["problems"] == [] and browsed["injected"] == 0


def test_annotation_renders_readable_and_coloured(browsed):
    assert browsed["rows"] == len(jitviz.annotate(everything, np.ones((2, 4), np.float32),
                                                  3).lines)
    assert 11 <= browsed["fontPx"] <= 16
    assert browsed["kernelColour"] == "rgb(216, 240, 216)"  # LEGEND["kernel"]
    assert browsed["deadColour"] == "rgb(228, 228, 228)"  # LEGEND["dead"]


def test_clicking_a_line_shows_its_equations_and_kernel_lines(browsed):
    assert browsed["opened"] is True
    assert re.search(r"\b(np|rt)\.sin", browsed["details"])  # the generated line itself
    # a generated line is a link into the kernel's source, highlighted there, and back
    assert browsed["hashAfterGen"] == "#" + browsed["genTarget"]
    assert browsed["targetOutline"] == "solid"
    assert browsed["hashAfterBack"].startswith("#jv-line-")


def test_function_report_has_every_section(browsed):
    titles = " | ".join(browsed["sections"])
    for part in ("Recompiles", "Source annotation"):
        assert part in titles
    assert browsed["diffSvgs"] > 0  # the recompile's diff draws both programs' graphs
