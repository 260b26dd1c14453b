"""Plans of cases, the run loop (one JSON line per program), the child-process protocol used by
the pytest entry, and the classification of results against known.py."""
from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import generator as G
from . import known
from . import runner as R

HERE = Path(__file__).resolve().parent

# XLA's CPU compiler is the fuzzer's bottleneck (about 0.3 s per program by default); without
# LLVM optimisations and with the classic elemental emitter it compiles 3x faster. Both are
# code-generation settings: the operations' semantics (and XLA's math approximations) stay.
FAST_XLA_FLAGS = ("--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false "
                  "--xla_llvm_disable_expensive_passes=true")


@dataclasses.dataclass(frozen=True)
class Case:
    seed: int
    x64: bool
    backends: tuple

    @property
    def id(self):
        return f"s{self.seed}-{'x64' if self.x64 else 'x32'}-{'+'.join(self.backends)}"


def plan(n, seed0=0, x64="mix", cpu_every=1, backends=R.BACKENDS):
    """n cases from seed0: a third with x64 on when x64 == "mix"; the cpu backend on every
    `cpu_every`-th case (the interpreter on all): Numba compiles each new kernel cold."""
    out = []
    for k in range(n):
        s = seed0 + k
        x = {"on": True, "off": False}.get(x64, k % 3 == 2)
        bs = tuple(b for b in backends if b != "cpu" or (cpu_every and k % cpu_every == 0))
        out.append(Case(s, x, bs))
    return out


def daily_seed(date=None):
    d = date or datetime.datetime.now(datetime.timezone.utc).date()
    return 1_000_000 + int(d.strftime("%Y%m%d")) % 1_000_000 * 1000


# --- one case -------------------------------------------------------------------------------

def annotate(m: R.Mismatch):
    k = known.known_difference(m)
    m.known = k.name if k else None
    return m


def run_case(case: Case, do_minimize=False, minimize_budget=45.0, minimized_keys=None):
    t0 = time.perf_counter()
    try:
        p = G.generate(case.seed, case.x64)
    except Exception as e:  # noqa: BLE001
        return {"id": case.id, "seed": case.seed, "x64": case.x64, "status": "generator-error",
                "error": f"{type(e).__name__}: {e}", "mismatches": [], "seconds": 0.0}
    res = R.check(p, backends=case.backends)
    ms = [annotate(m) for m in res.mismatches]
    for m in ms:
        if do_minimize and minimized_keys is not None and m.key not in minimized_keys \
                and not m.known and not m.reference_quirk:
            minimized_keys.add(m.key)
            m.minimized = minimized_record(p, m, minimize_budget)
            annotate(m)  # an entry may recognise the minimised program (its arguments)
    rec = {
        "id": case.id, "seed": case.seed, "x64": case.x64, "backends": list(case.backends),
        "n_stmts": len(p.stmts), "ops": p.ops(), "jax_error": res.jax.error,
        "jax_seconds": round(res.jax.seconds, 4),
        "backend_seconds": {b: round(o.seconds, 4) for b, o in res.outcomes.items()},
        "seconds": round(time.perf_counter() - t0, 4),
        "status": "mismatch" if ms else "ok",
        "mismatches": [m.to_json() for m in ms],
    }
    return rec


def minimized_record(p, m, budget):
    t0 = time.perf_counter()
    q = R.minimize(p, m, budget)
    ref = R._run(q, "jax")
    got = R._run(q, m.backend)
    d = R.compare(ref, got)
    return {"source": q.source(), "args": q.args_source(), "x64": q.x64,
            "reproducer": q.reproducer(m.backend), "seconds": round(time.perf_counter() - t0, 1),
            "still_differs": d is not None, "kind": d.kind if d else None,
            "detail": d.detail if d else "", "jax": d.jax if d else R._outcome_text(ref),
            "jitviz": d.jitviz if d else R._outcome_text(got)}


def run_cases(cases, out, *, do_minimize=False):
    """Run `cases` in order, one JSON line each to the file object `out` (flushed); each
    class of failure is minimised once."""
    keys = set()
    for c in cases:
        out.write(json.dumps(run_case(c, do_minimize=do_minimize, minimized_keys=keys)) + "\n")
        out.flush()


# --- the child process (pytest entry) -------------------------------------------------------

def child_env():
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", FAST_XLA_FLAGS)
    env.setdefault("JAX_PLATFORMS", "cpu")
    # this checkout's jitviz (the repository root) before any installed one, and jaxdiff
    paths = [str(HERE.parent.parent), str(HERE.parent), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _child(args, log, timeout):
    return subprocess.run([sys.executable, "-m", "jaxdiff", *args], cwd=str(HERE.parent),
                          env=child_env(), stdout=log, stderr=subprocess.STDOUT,
                          timeout=timeout).returncode


def run_in_children(cases, workdir: Path, timeout_per_case=300):
    """Run cases in a child process (`python -m jaxdiff child`), restarting it after a crash;
    returns {case.id: record}. A case during which the child died is recorded as crashed,
    or as "jax-crashed" when JAX alone, run on its program in another child, dies too (XLA's
    compiler has crashed on constant integer division by zero: not jitviz's doing)."""
    workdir.mkdir(parents=True, exist_ok=True)
    results = {}
    todo = list(cases)
    attempt = 0
    while todo:
        attempt += 1
        plan_file = workdir / f"plan{attempt}.json"
        out_file = workdir / f"out{attempt}.jsonl"
        plan_file.write_text(json.dumps([dataclasses.asdict(c) for c in todo]))
        with open(workdir / f"child{attempt}.log", "w") as log:
            rc = _child(["child", str(plan_file), str(out_file)], log,
                        timeout_per_case * len(todo) + 120)
        done = []
        if out_file.exists():
            for line in out_file.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    results[rec["id"]] = rec
                    done.append(rec["id"])
        rest = [c for c in todo if c.id not in results]
        if not rest:
            break
        if rc == 0 and not done:
            raise RuntimeError(f"jaxdiff child made no progress: see {workdir}")
        # the first unfinished case is the one the child died in
        dead = rest[0]
        log_tail = (workdir / f"child{attempt}.log").read_text()[-3000:]
        with open(workdir / f"probe{attempt}.log", "w") as log:
            jax_rc = _child(["jax-only", str(dead.seed), str(int(dead.x64))], log,
                            timeout_per_case)
        results[dead.id] = {"id": dead.id, "seed": dead.seed, "x64": dead.x64,
                            "backends": list(dead.backends),
                            "status": "crashed" if jax_rc == 0 else "jax-crashed",
                            "error": f"child exited with {rc}:\n{log_tail}",
                            "mismatches": []}
        todo = rest[1:]
    return results


def examples_main(out_file):
    """Check each known difference's example (README's deliberate differences) as the
    programs are checked: {entry name: [(backend, known entry name or None, description)]}."""
    out = {}
    for e in known.KNOWN_DIFFERENCES:
        res = R.check(known.example_program(e))
        out[e.name] = [(m.backend, annotate(m).known, describe(m)) for m in res.mismatches]
    Path(out_file).write_text(json.dumps(out))


def run_examples_in_child(workdir: Path):
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "examples.json"
    with open(workdir / "examples.log", "w") as log:
        rc = _child(["examples", str(out)], log, 600)
    if rc != 0:
        raise RuntimeError(f"the examples child failed ({rc}): "
                           f"{(workdir / 'examples.log').read_text()[-3000:]}")
    return json.loads(out.read_text())


def jax_only_main(seed, x64):
    """Run one program under JAX only, as checking it does: whole, then returning every
    statement's value (localisation). Does the reference itself crash?"""
    p = G.generate(int(seed), bool(int(x64)))
    R._run(p, "jax")
    R._run(p, "jax", returns=p.all_vars())


def child_main(plan_file, out_file):
    cases = [Case(d["seed"], d["x64"], tuple(d["backends"]))
             for d in json.loads(Path(plan_file).read_text())]
    _self_check()
    with open(out_file, "a") as out:
        # minimising costs time only where a program fails: its report then shows the
        # smallest program that still differs in the same way
        run_cases(cases, out, do_minimize=True)


def _self_check():
    """The 64-bit switch works at run time in this process, in both libraries."""
    import jax
    import jax.numpy as jjnp
    import jitviz
    import jitviz.numpy as vjnp
    for on in (False, True, False):
        with G.x64_mode(on):
            want = "float64" if on else "float32"
            a = jax.jit(lambda: jjnp.asarray(1.0) + 0)().dtype.name
            b = jitviz.jit(lambda x: vjnp.asarray(1.0) + x, backend="interpret")(0).dtype.name
            if a != want or b != want:
                raise RuntimeError(f"x64={on}: jax gives {a}, jitviz {b}, want {want}")


# --- summaries ------------------------------------------------------------------------------

def mismatch_objects(rec):
    ms = [R.Mismatch(**{k: v for k, v in m.items() if k in R.Mismatch.__dataclass_fields__})
          for m in rec.get("mismatches", [])]
    return [annotate(m) for m in ms if not R.tolerated(m)]


def verdict(rec):
    """('ok' | 'known' | 'quirk' | 'fail', mismatches that fail, known ones (README's
    deliberate differences, and JAX-jit-vs-op-by-op quirks))."""
    if rec.get("status") in ("crashed", "generator-error"):
        return "fail", [], []
    if rec.get("status") == "jax-crashed":
        return "quirk", [], []
    ms = mismatch_objects(rec)
    fails = [m for m in ms if not m.known and not m.reference_quirk]
    knowns = [m for m in ms if m.known or m.reference_quirk]
    if fails:
        return "fail", fails, knowns
    if knowns:
        return ("known" if any(m.known for m in knowns) else "quirk"), fails, knowns
    return "ok", fails, knowns


def describe(m: R.Mismatch, with_program=True):
    lines = [f"[{m.backend}] {m.key}",
             f"  statement: {m.stmt}", f"  operands:  {m.operands}", f"  {m.detail}",
             f"  JAX:    {m.jax}", f"  jitviz: {m.jitviz}"]
    if with_program and m.program:
        lines += ["  program (x64=%s):" % m.program.get("x64")]
        lines += ["    " + l for l in m.program["source"].splitlines()]
        lines += ["    " + m.program["args"]]
    if m.minimized:
        lines += ["  minimised:"] + ["    " + l for l in m.minimized["reproducer"].splitlines()]
    return "\n".join(lines)
