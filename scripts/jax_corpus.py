"""Run JAX notebooks cell by cell under real JAX and under jitviz (imports swapped) and compare.

    python scripts/jax_corpus.py NOTEBOOK_OR_DIR... [--json out.json] [--markdown out.md]
                                 [--timeout 60] [--show-diffs]

A notebook is a `.ipynb` or a MyST `.md` (jupytext, ```{code-cell} blocks); a directory is
searched for both (a `.md` paired with an `.ipynb` of the same name is read once). Each
notebook runs twice, each time in a fresh child process: once as written (`import jax`), once
with only its import lines changed (`import jitviz as jax`, `import jitviz.numpy as jnp`,
`from jitviz import lax, random, ...`): the promise in the README. A cell's outcome is what it
printed plus the repr of its last expression, or the class of the exception it raised. Cells
are classed as

    same          both ran and gave the same text (numbers within rtol 1e-4 / atol 1e-6)
    differs       both ran, different text
    jitviz-raises JAX ran it, jitviz raised
    both-raise    both raised, jitviz's exception an instance of JAX's class (so the notebook's
                  `except` clauses behave the same); another class counts as differs
    jax-raises    only JAX raised (a cell written to fail; jitviz did not)
    unstable      JAX itself printed something else when the notebook ran again (unseeded
                  NumPy randomness, memory addresses, timings, and the cells computed from
                  them): no reference to compare with, so not counted either way
    skipped       cell magics (%%...), shell escapes, or a cell that JAX itself could not run
                  for lack of a package

IPython line magics are dropped (`%timeit f(x)` runs `f(x)`'s line as a statement instead).
The corpus is the user's to choose and lives outside this project: this script is how jitviz
measures the promise on code its authors did not write.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import traceback
from pathlib import Path

# --- reading notebooks ------------------------------------------------------------------------

_FENCE = re.compile(r"^```\{code-cell\}")


def myst_cells(text: str) -> list[str]:
    """Code cells of a jupytext MyST markdown file, without their option lines."""
    cells, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        i += 1
        if i < len(lines) and lines[i].strip() == "---":  # a YAML options block
            i += 1
            while i < len(lines) and lines[i].strip() != "---":
                i += 1
            i += 1
        while i < len(lines) and lines[i].startswith(":"):  # `:tags: [...]` options
            i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        cells.append("\n".join(body).strip("\n"))
        i += 1
    return cells


def ipynb_cells(text: str) -> list[str]:
    nb = json.loads(text)
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def read_cells(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return ipynb_cells(text) if path.suffix == ".ipynb" else myst_cells(text)


def find_notebooks(paths) -> list[Path]:
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            md = sorted(p.rglob("*.md"))
            nbs = [q for q in sorted(p.rglob("*.ipynb")) if q.with_suffix(".md") not in md]
            found += [q for q in md + nbs
                      if q.suffix == ".ipynb" or "code-cell" in q.read_text(errors="ignore")]
        else:
            found.append(p)
    return found


# --- the import swap ------------------------------------------------------------------------

_SWAPS = [
    (re.compile(r"^(\s*)import jax\.numpy as (\w+)"), r"\1import jitviz.numpy as \2"),
    (re.compile(r"^(\s*)import jax\.([\w.]+) as (\w+)"), r"\1import jitviz.\2 as \3"),
    (re.compile(r"^(\s*)import jax\s*$"), r"\1import jitviz as jax"),
    (re.compile(r"^(\s*)import jax as (\w+)"), r"\1import jitviz as \2"),
    (re.compile(r"^(\s*)from jax import "), r"\1from jitviz import "),
    (re.compile(r"^(\s*)from jax\.([\w.]+) import "), r"\1from jitviz.\2 import "),
]


JITVIZ_ONLY = "# jitviz only"

_UNSWAPS = [
    (re.compile(r"^(\s*)import jitviz\.numpy as (\w+)"), r"\1import jax.numpy as \2"),
    (re.compile(r"^(\s*)import jitviz as (\w+)"), r"\1import jax as \2"),
    (re.compile(r"^(\s*)from jitviz import "), r"\1from jax import "),
    (re.compile(r"^(\s*)from jitviz\.([\w.]+) import "), r"\1from jax.\2 import "),
    (re.compile(r"^(\s*)import jitviz\.([\w.]+) as (\w+)"), r"\1import jax.\2 as \3"),
]


def unswap_imports(source: str) -> str:
    """A notebook written for jitviz with JAX's imports (to run the same cells on JAX)."""
    return _substitute(source, _UNSWAPS)


def swap_imports(source: str) -> str:
    """`source` with its JAX import lines pointing at jitviz (nothing else changes)."""
    return _substitute(source, _SWAPS)


def _substitute(source, rules):
    out = []
    for line in source.splitlines():
        for pattern, repl in rules:
            new = pattern.sub(repl, line)
            if new != line:
                line = new
                break
        out.append(line)
    return "\n".join(out)


# --- running cells (in the child) -----------------------------------------------------------

def _strip_magics(cell: str) -> str | None:
    if cell.lstrip().startswith("%%"):
        return None
    lines = []
    for line in cell.splitlines():
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith("!"):
            return None
        if stripped.startswith("%"):
            # `%timeit -n 10 f(x).block_until_ready()` -> the statement; other magics go
            m = re.match(r"%+time(?:it)?\s+(?:-\w+\s+\d+\s+)*(.*)", stripped)
            stripped = m.group(1) if m and m.group(1) else "pass"
        lines.append(indent + stripped)
    return "\n".join(lines)


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("cell ran past the time limit")


def run_cells(cells, timeout) -> list[dict]:
    """Each cell's outcome, run in order in one namespace (the child's work)."""
    import warnings
    warnings.simplefilter("ignore")
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace = {"__name__": "__main__"}
    signal.signal(signal.SIGALRM, _on_alarm)
    results = []
    for k, cell in enumerate(cells):
        source = None if cell is None else _strip_magics(cell)
        if source is None:
            results.append({"status": "skipped", "why": "cell magic, shell escape or a "
                                                        "'# jitviz only' cell"})
            continue
        results.append(_run_one(source, namespace, f"<cell {k}>", timeout))
    return results


def _run_one(source, namespace, name, timeout):
    out = io.StringIO()
    signal.alarm(timeout)
    try:
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(tree, name, "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
                if value is not None:
                    print(repr(value))
        return {"status": "ok", "text": out.getvalue()}
    except BaseException as e:  # noqa: BLE001 -- a cell's failure is its outcome
        if isinstance(e, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{f.name}:{f.lineno}" for f in reversed(tb)
                      if "jitviz" in f.filename), "")
        return {"status": "raised", "error": type(e).__name__,
                "classes": [c.__name__ for c in type(e).__mro__],
                "message": str(e).splitlines()[0][:300] if str(e) else "",
                "where": where, "text": out.getvalue()}
    finally:
        signal.alarm(0)


def run_notebook(path: Path, library: str, timeout: int) -> list[dict]:
    """Run the notebook at `path` in a child process with `library` ('jax' or 'jitviz')."""
    cells = read_cells(path)
    if library == "jitviz":
        cells = [swap_imports(c) for c in cells]
    else:  # a jitviz notebook's own cells (its explanations) have no JAX version
        cells = [None if c.lstrip().startswith(JITVIZ_ONLY) else unswap_imports(c)
                 for c in cells]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, __file__, "--child", str(timeout)],
                          input=json.dumps(cells), capture_output=True, text=True, env=env,
                          timeout=timeout * max(len(cells), 1) + 120)
    try:
        return json.loads(proc.stdout.splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        crash = {"status": "raised", "error": "ChildCrashed",
                 "message": (proc.stderr or "").strip().splitlines()[-1:] or [""], "text": ""}
        crash["message"] = crash["message"][0][:300]
        return [crash] * len(cells)


# --- comparing ------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|-?inf")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_SPACE = re.compile(r"\s+")


def _normalize(text: str) -> str:
    return _ADDRESS.sub("", text).replace("jitviz", "jax").strip()


def same_text(a: str, b: str, rtol=1e-4, atol=1e-6) -> bool:
    """Equal apart from numbers that agree within the tolerances (float32 printing)."""
    a, b = _normalize(a), _normalize(b)
    if a == b:
        return True
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    # NumPy pads columns to the widest number: layout may differ where digits do
    if len(na) != len(nb) or _SPACE.sub("", _NUMBER.sub("#", a)) != \
            _SPACE.sub("", _NUMBER.sub("#", b)):
        return False
    for x, y in zip(na, nb):
        fx, fy = float(x), float(y)
        if math.isnan(fx) and math.isnan(fy):
            continue
        if not (fx == fy or abs(fx - fy) <= atol + rtol * abs(fy)):
            return False
    return True


_MISSING_PACKAGE = ("ModuleNotFoundError", "ImportError")


def classify(jax_out: dict, viz_out: dict, jax_again: dict | None = None) -> str:
    if jax_out["status"] == "skipped":
        return "skipped"
    if jax_again is not None and not _same_outcome(jax_out, jax_again):
        return "unstable"
    if jax_out["status"] == "raised":
        if jax_out["error"] in _MISSING_PACKAGE:
            return "skipped"
        if viz_out["status"] == "raised":
            # the same class, or a subclass of JAX's (an `except` written for JAX catches it)
            caught = jax_out["error"] in viz_out.get("classes", [viz_out["error"]])
            return "both-raise" if caught else "differs"
        return "jax-raises"
    if viz_out["status"] == "raised":
        return "jitviz-raises"
    return "same" if same_text(jax_out["text"], viz_out["text"]) else "differs"


def _same_outcome(a: dict, b: dict) -> bool:
    if a["status"] != b["status"]:
        return False
    if a["status"] == "raised":
        return a["error"] == b["error"]
    return a["status"] != "ok" or same_text(a["text"], b["text"])


CLASSES = ["same", "both-raise", "differs", "jitviz-raises", "jax-raises", "unstable",
           "skipped"]


def compare(paths, timeout):
    rows = []
    for path in find_notebooks(paths):
        cells = read_cells(path)
        jax_res, viz_res = run_notebook(path, "jax", timeout), run_notebook(path, "jitviz",
                                                                            timeout)
        jax_again = run_notebook(path, "jax", timeout)  # what JAX itself does not repeat
        for k, (cell, a, b, a2) in enumerate(zip(cells, jax_res, viz_res, jax_again)):
            rows.append({"notebook": str(path), "cell": k, "class": classify(a, b, a2),
                         "source": cell, "jax": a, "jitviz": b})
        counts = {c: sum(r["class"] == c for r in rows if r["notebook"] == str(path))
                  for c in CLASSES}
        print(f"{path}: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n),
              file=sys.stderr, flush=True)
    return rows


def summary(rows) -> str:
    ran = [r for r in rows if r["class"] not in ("skipped", "unstable")]
    counts = {c: sum(r["class"] == c for r in rows) for c in CLASSES}
    agree = counts["same"] + counts["both-raise"]
    lines = [f"{len(ran)} cells compared ({counts['skipped']} skipped, {counts['unstable']} "
             f"whose JAX output changes from run to run): {agree} agree "
             f"({counts['same']} same output, {counts['both-raise']} raise the same class), "
             f"{counts['differs']} differ, {counts['jitviz-raises']} raise only on jitviz, "
             f"{counts['jax-raises']} raise only on JAX"]
    return "\n".join(lines)


def markdown(rows, show_diffs) -> str:
    out = ["# JAX notebooks under jitviz", "", summary(rows), ""]
    for r in rows:
        if r["class"] in ("same", "both-raise", "skipped", "unstable"):
            continue
        out.append(f"## {Path(r['notebook']).name} cell {r['cell']}: {r['class']}")
        out.append("```python\n" + r["source"][:1500] + "\n```")
        for lib in ("jax", "jitviz"):
            o = r[lib]
            said = (f"{o['error']}: {o['message']} ({o.get('where', '')})"
                    if o["status"] == "raised" else o["text"][:800 if show_diffs else 300])
            out.append(f"- {lib}: `{said.strip()}`" if "\n" not in said.strip()
                       else f"- {lib}:\n```\n{said.strip()}\n```")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--show-diffs", action="store_true")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:  # the child: cells on stdin, outcomes as the last line
        cells = json.loads(sys.stdin.read())
        print(json.dumps(run_cells(cells, args.child)))
        return 0
    rows = compare(args.paths, args.timeout)
    print(summary(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, args.show_diffs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
