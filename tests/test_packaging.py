"""The installed distribution's metadata, and a wheel built from this checkout.

scripts/test.sh installs jitviz with `pip install -e ".[test,lab]"`; these tests read what pip
recorded (importlib.metadata), so a dependency or extra dropped from pyproject.toml is caught.
"""
from __future__ import annotations

import importlib.metadata as md
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RUNTIME = {"numpy", "numba", "scipy", "ipython", "ipywidgets", "anywidget", "graphviz"}
EXTRAS = {
    "test": {"pytest", "hypothesis", "nbclient", "nbformat", "ipykernel", "pytest-xdist"},
    "jax": {"jax"},
    "cuda": {"numba-cuda"},
    "lab": {"jupyterlab"},
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements():
    """[(name, extras of the requirement, marker text)] from the installed metadata."""
    out = []
    for req in md.requires("jitviz") or []:
        spec, _, marker = req.partition(";")
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[([^\]]*)\])?", spec)
        assert m, req
        extras = {e.strip() for e in (m.group(3) or "").split(",") if e.strip()}
        out.append((_norm(m.group(1)), extras, marker.strip()))
    return out


def _extra_of(marker: str) -> str | None:
    m = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
    return _norm(m.group(1)) if m else None


@pytest.fixture(scope="module")
def dist():
    try:
        return md.distribution("jitviz")
    except md.PackageNotFoundError:  # pragma: no cover - scripts/test.sh installs it
        pytest.fail("jitviz is not installed: run `pip install -e .` (scripts/test.sh does)")


def test_name_version_and_python(dist):
    import jitviz

    assert dist.metadata["Name"] == "jitviz"
    assert dist.version == jitviz.__version__
    assert dist.metadata["Requires-Python"].replace(" ", "") == ">=3.10"


def test_runtime_dependencies(dist):
    unconditional = {name for name, _, marker in _requirements() if not marker}
    assert RUNTIME <= unconditional, RUNTIME - unconditional


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_extras(dist, extra):
    assert extra in {_norm(e) for e in dist.metadata.get_all("Provides-Extra") or []}
    names = {name for name, _, marker in _requirements() if _extra_of(marker) == extra}
    assert EXTRAS[extra] <= names, EXTRAS[extra] - names


def test_cuda_extra_brings_the_cuda13_toolkit(dist):
    reqs = [(n, ex) for n, ex, marker in _requirements() if _extra_of(marker) == "cuda"]
    assert ("numba-cuda", {"cu13"}) in reqs, reqs


def test_imported_jitviz_is_this_checkout():
    import jitviz

    assert Path(jitviz.__file__).resolve().is_relative_to(ROOT), (
        f"tests run against {jitviz.__file__}, not the checkout at {ROOT}")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_wheel_builds_with_every_subpackage(tmp_path):
    """`pip wheel .` works and ships every package under jitviz/ (and no tests)."""
    src = tmp_path / "src"
    # Build from the tracked and untracked-but-not-ignored files only, as a fresh clone would.
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
        capture_output=True, text=True).stdout.split()
    for rel in files:
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("jitviz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    packages = sorted(str(p.parent.relative_to(src)) for p in (src / "jitviz").rglob("__init__.py"))
    missing = [p for p in packages if f"{p}/__init__.py" not in names]
    assert not missing, f"packages missing from the wheel: {missing}"
    assert not any(n.startswith("tests/") for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Provides-Extra: cuda" in text and "Requires-Python: >=3.10" in text


# The distribution behind each module jitviz imports, where the names differ (or where the
# module comes with a declared dependency); modules others import on our behalf.
DIST_OF = {"llvmlite": "numba", "traitlets": "ipython", "IPython": "ipython",
           "numba_cuda": "numba-cuda", "cuda": "numba-cuda"}
OPTIONAL = {"platformdirs"}  # cpu/cache.py falls back to ~/.cache/jitviz without it
IMPORTED_FOR_US = {"scipy": "Numba compiles np.dot in nopython code with scipy's BLAS"}


def _third_party_imports() -> dict:
    """{top-level module: first file importing it} over jitviz/'s sources."""
    import ast
    found = {}
    for path in sorted((ROOT / "jitviz").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("jitviz", "__future__"):
                    found.setdefault(top, path.relative_to(ROOT))
    return found


def test_every_imported_module_is_a_declared_dependency(dist):
    """A fresh virtualenv has only what pyproject.toml declares (this machine's Python may
    have more: that is how a missing SciPy once hid behind a green suite)."""
    declared = {name for name, _, _ in _requirements()}
    for module, where in _third_party_imports().items():
        if module not in OPTIONAL:
            dist_name = DIST_OF.get(module, module)
            assert _norm(dist_name) in declared, (
                f"{where} imports {module!r}: declare {dist_name!r} in pyproject.toml")
    for module, why in IMPORTED_FOR_US.items():
        assert _norm(module) in declared, f"{module} must be a dependency: {why}"
