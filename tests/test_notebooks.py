"""Execute every demo notebook top to bottom, as a user would, in a fresh `python3` kernel.

New notebooks in demo_notebooks/ are picked up automatically. A cell that raises fails the test
with that cell's source and traceback. Notebooks catch the exceptions they mean to show.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
from nbclient.exceptions import CellExecutionError, CellTimeoutError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "demo_notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = int(os.environ.get("JITVIZ_NOTEBOOK_CELL_TIMEOUT", "120"))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_notebooks_exist():
    names = {p.name for p in NOTEBOOKS}
    assert {"00_tour.ipynb", "01_tracing.ipynb"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_valid(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name", "python3") == "python3"
    assert any(c.cell_type == "code" for c in nb.cells), "notebook has no code"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    # The kernel must import jitviz from this checkout, whatever the interpreter's installed copy.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        startup_timeout=120,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    failure = None
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as err:
        # The exception text carries the failing cell's source and its traceback.
        failure = _ANSI.sub("", str(err))
    finally:
        # Keep the executed notebook for a human to open when something went wrong.
        nbformat.write(nb, tmp_path / path.name)
    if failure is not None:
        pytest.fail(f"{path.name} failed (kernel python3, {CELL_TIMEOUT_S} s per cell; executed "
                    f"copy: {tmp_path / path.name}):\n{failure}", pytrace=False)

    errors = [o for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors


def test_kernel_imports_this_checkout(monkeypatch):
    """The `python3` kernelspec runs an interpreter that can import jitviz (from this checkout)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import jitviz, sys; print(jitviz.__file__); print(sys.prefix)")])
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT_S,
                            startup_timeout=120).execute()
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert str(ROOT / "jitviz" / "__init__.py") in text, text
    # ... and runs in this environment: a kernelspec left by another install (a user-level
    # `python3` pointing at the system Python) would hide a missing dependency
    assert text.split("\n")[1] == sys.prefix, (text, sys.prefix)


def _readme_quickstart():
    """The README's Quickstart: its ```python blocks (one program) and the ``` output blocks."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", section, flags=re.S | re.M)
    code = [body for lang, body in blocks if lang == "python"]
    output = [body for lang, body in blocks if lang == ""]
    return code, output


def test_readme_quickstart_prints_what_the_readme_says(tmp_path):
    """The README shows the exact output of its quickstart; keep them in step."""
    code, output = _readme_quickstart()
    assert code and output
    script = tmp_path / "quickstart.py"
    script.write_text("\n".join(code), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "quickstart.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = proc.stdout.replace(str(tmp_path) + os.sep, "")
    assert got == "".join(output), (
        "README.md's Quickstart output is out of date; it now prints:\n" + got)


def _user_facing_texts():
    """(where, text) for what users read: README, the notebooks, jitviz's sources."""
    yield "README.md", (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            yield f"{path.name} cell {i}", cell.source
    for path in sorted((ROOT / "jitviz").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("phrase", ["shared/seeds", "being built", "Coming here",
                                    "not available yet", "until the cpu backend lands"])
def test_user_facing_text_has_no_private_paths_or_stale_promises(phrase):
    """Users have no `shared/` folder (the tutorials are cited by title), and what has landed
    is not announced as coming."""
    hits = [where for where, text in _user_facing_texts() if phrase.lower() in text.lower()]
    assert not hits, f"{phrase!r} in {hits}"
