"""A categorised Markdown report of a run: mismatch classes, counts, one reproducer each."""
from __future__ import annotations

import collections
import statistics

from . import driver, known

_ENTRIES = {e.name: e for e in known.KNOWN_DIFFERENCES}


def _versions():
    out = []
    for mod in ("jax", "jaxlib", "numpy", "numba", "jitviz"):
        try:
            m = __import__(mod)
            out.append(f"{mod} {getattr(m, '__version__', '?')}")
        except Exception:  # noqa: BLE001
            pass
    return ", ".join(out)


def _fence(text, lang=""):
    return f"```{lang}\n{text.rstrip()}\n```"


def markdown(recs, seconds=None, title="jaxdiff: jitviz vs JAX, differential run"):
    n = len(recs)
    x64 = sum(1 for r in recs if r.get("x64"))
    n_cpu = sum(1 for r in recs if "cpu" in r.get("backends", []))
    errs = sum(1 for r in recs if r.get("jax_error"))
    verdicts = collections.Counter()
    by_class = collections.OrderedDict()
    for r in recs:
        v, fails, knowns = driver.verdict(r)
        verdicts[v] += 1
        if r.get("status") == "crashed":
            by_class.setdefault(("crash", "crashed child process", None, None),
                                []).append((r, None))
        for m in fails + knowns:
            label = m.known and "known" or m.reference_quirk and "quirk" or "NEW"
            group = m.known or m.key
            by_class.setdefault((label, group, m.kind, m.key if label != "NEW" else None),
                                []).append((r, m))
    lines = [f"# {title}", ""]
    lines.append(f"- {_versions()}")
    lines.append(f"- {n} programs: {n - x64} with x64 off, {x64} with x64 on; backends: "
                 f"interpret on all, cpu on {n_cpu}; {errs} error programs (JAX raises)")
    if recs:
        secs = [r.get("seconds", 0) for r in recs]
        js = [r.get("jax_seconds", 0) for r in recs if "jax_seconds" in r]
        it = [r["backend_seconds"].get("interpret", 0) for r in recs
              if "interpret" in r.get("backend_seconds", {})]
        cp = [r["backend_seconds"].get("cpu", 0) for r in recs
              if "cpu" in r.get("backend_seconds", {})]
        lines.append(f"- time per program: mean {statistics.mean(secs):.2f} s in all "
                     f"(generation, runs, localisation, minimisation); JAX jit "
                     f"{statistics.mean(js) if js else 0:.2f} s, interpret "
                     f"{statistics.mean(it) if it else 0:.2f} s, cpu (cold Numba) "
                     f"{statistics.mean(cp) if cp else 0:.2f} s" +
                     (f"; wall {seconds:.0f} s" if seconds else ""))
    lines.append(f"- programs by verdict: " + ", ".join(f"{k} {v}" for k, v in
                                                        verdicts.most_common()))
    lines.append("")
    # group by class name (open/known entry, or key for new ones)
    merged = collections.OrderedDict()
    for (label, group, kind, key), items in by_class.items():
        merged.setdefault((label, group), []).append((kind, key, items))
    order = {"NEW": 0, "crash": 0, "quirk": 2, "known": 3}
    rows = sorted(merged.items(), key=lambda kv: (order.get(kv[0][0], 3),
                                                  -sum(len(i) for _, _, i in kv[1])))
    lines += ["## Classes", "",
              "Status: NEW = not covered by known.py (fails the test), "
              "quirk = JAX's jit result differs from JAX op by op "
              "and jitviz matches the latter (not counted against jitviz), known = README's "
              "deliberate differences (KNOWN_DIFFERENCES). A mismatch is one backend of one "
              "program.", "",
              "| status | class | mismatches | programs | backends |",
              "|---|---|---|---|---|"]
    for (label, group), subs in rows:
        items = [it for _, _, its in subs for it in its]
        progs = len({r["id"] for r, _ in items})
        bks = sorted({m.backend for _, m in items if m is not None})
        cell = str(group).replace("|", "\\|")
        lines.append(f"| {label} | {cell} | {len(items)} | {progs} | {', '.join(bks)} |")
    lines.append("")
    for (label, group), subs in rows:
        items = [it for _, _, its in subs for it in its]
        lines.append(f"## [{label}] {group}")
        lines.append("")
        e = _ENTRIES.get(group)
        if e is not None:
            lines.append(e.reason)
            lines.append("")
        keys = collections.Counter(m.key for _, m in items if m is not None)
        if keys:
            lines.append("Localised keys (kind | operation | operand types): " +
                         "; ".join(f"`{k}` ×{c}" for k, c in keys.most_common(8)) +
                         (" ..." if len(keys) > 8 else ""))
            lines.append("")
        rec, m = _exemplar(items)
        if m is None:
            lines.append(_fence(rec.get("error", "")[-2000:]))
            lines.append("")
            continue
        lines.append(f"Example: seed {rec['seed']}, x64={rec['x64']}, backend {m.backend}: "
                     f"`{m.stmt}`")
        lines.append("")
        if m.minimized and m.minimized.get("still_differs"):
            mm = m.minimized
            lines.append("Minimised reproducer:")
            lines.append(_fence(mm["reproducer"], "python"))
            lines.append(f"- difference: {mm['kind']}: {mm['detail']}")
            lines.append(f"- JAX:    `{mm['jax']}`")
            lines.append(f"- jitviz: `{mm['jitviz']}`")
        else:
            lines.append("Program (not minimised):")
            lines.append(_fence(m.program["source"] + m.program["args"], "python"))
            lines.append(f"- difference: {m.kind}: {m.detail}")
            lines.append(f"- JAX:    `{m.jax}`")
            lines.append(f"- jitviz: `{m.jitviz}`")
        if m.reference_quirk:
            lines.append(f"- {m.reference_quirk}")
        lines.append("")
    return "\n".join(lines) + "\n"


def _exemplar(items):
    """The smallest minimised example, else the shortest program."""
    best = None
    for r, m in items:
        if m is None:
            return r, None
        score = (0 if (m.minimized and m.minimized.get("still_differs")) else 1,
                 len((m.minimized or {}).get("source", "")) or len(m.program["source"]))
        if best is None or score < best[0]:
            best = (score, r, m)
    return best[1], best[2]
