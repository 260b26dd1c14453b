"""`python -m tests.jaxdiff --n 10000 --seed S --report out.json --markdown out.md`

Runs generated programs under jax.jit and jitviz.jit in child processes (restarted after a
crash, as the pytest entry runs them), prints failures as they come, and writes a JSON report
(one record per program) and a categorised Markdown report. See driver.py.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

CHUNK = 100  # programs per child run: progress is printed after each


def _set_flags():
    """XLA reads XLA_FLAGS when its CPU client starts: set the fast flags before that."""
    from .driver import FAST_XLA_FLAGS
    if "XLA_FLAGS" not in os.environ and "jax" not in sys.modules:
        os.environ["XLA_FLAGS"] = FAST_XLA_FLAGS
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    _set_flags()
    from . import driver, report
    if argv[:1] == ["child"]:
        driver.child_main(argv[1], argv[2])
        return 0
    if argv[:1] == ["examples"]:
        driver.examples_main(argv[1])
        return 0
    if argv[:1] == ["jax-only"]:
        driver.jax_only_main(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser("python -m tests.jaxdiff")
    ap.add_argument("--n", type=int, default=200, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--x64", choices=["mix", "on", "off"], default="mix",
                    help="mix: every third program with x64 on")
    ap.add_argument("--backends", default="interpret,cpu")
    ap.add_argument("--cpu-every", type=int, default=1,
                    help="run the cpu backend on every k-th program (cold Numba compiles)")
    ap.add_argument("--time-budget", type=float, default=None, help="stop after SECONDS")
    ap.add_argument("--jsonl", default=None, help="records, one a line (default: next to "
                                                  "--report, or in the run's temporary "
                                                  "folder)")
    ap.add_argument("--report", default=None, help="JSON report")
    ap.add_argument("--markdown", default=None, help="Markdown report")
    a = ap.parse_args(argv)
    cases = driver.plan(a.n, a.seed, a.x64, a.cpu_every, tuple(a.backends.split(",")))
    work = Path(tempfile.mkdtemp(prefix="jaxdiff-"))
    jsonl = a.jsonl or ((a.report + "l") if a.report and a.report.endswith(".json")
                        else str(work / "jaxdiff.jsonl"))
    t0 = time.perf_counter()
    counts = {}
    with open(jsonl, "w") as out:
        for start in range(0, len(cases), CHUNK):
            if a.time_budget is not None and time.perf_counter() - t0 > a.time_budget:
                break
            chunk = cases[start:start + CHUNK]
            results = driver.run_in_children(chunk, work / f"chunk{start}")
            for c in chunk:
                rec = results[c.id]
                out.write(json.dumps(rec) + "\n")
                v, fails, _ = driver.verdict(rec)
                counts[v] = counts.get(v, 0) + 1
                if v == "fail":
                    print(f"--- {rec['id']}: {rec.get('status')}")
                    for m in fails:
                        print(driver.describe(m, with_program=True))
                    if rec.get("error"):
                        print(rec["error"][-1500:])
            out.flush()
            el = time.perf_counter() - t0
            done = start + len(chunk)
            print(f"[{done}/{len(cases)}] {el:.0f} s, {el / done:.2f} s/program, {counts}",
                  flush=True)
    recs = [json.loads(line) for line in open(jsonl) if line.strip()]
    el = time.perf_counter() - t0
    print(f"{len(recs)} programs in {el:.0f} s ({el / max(1, len(recs)):.2f} s/program): "
          f"{counts}")
    if a.report:
        json.dump({"records": recs, "seconds": el}, open(a.report, "w"), indent=1)
    if a.markdown:
        open(a.markdown, "w").write(report.markdown(recs, seconds=el))
    return 1 if counts.get("fail") else 0


if __name__ == "__main__":
    sys.exit(main())
