"""Each source line's fate: `jitviz.annotate(fun, *args)` and `%%jit -a`.

Like Cython's `%%cython -a`, but read off what jit really did for one specialization: every
line of the function gets the fates below (several may apply; the first in FATES colours it),
the equations it produced, the kernels they went into and a note in words.

Where each fate comes from:
  kernel        the line's equations are among a compiled kernel's (Kernel.eqns)
  host          final-stage equations of the line that no kernel covers: BLAS calls,
                host-driven loops (or every equation, on the interpreter); and host
                callbacks (pure_callback, io_callback, debug.callback) wherever they run
  control_flow  the line made a cond / while / scan region
  unrolled      the line made `unrolled_loop_threshold` or more equations (a Python loop)
  constant      a global or closure (or a value computed from one) baked in on this line
  effect        a print, a mutation or a leaked tracer recorded while tracing
  static        code that made no equation: Python-only work (shape arithmetic, control
                over static values)
  dead          equations of the line that a pass removed: the per-line equation count of
                each stage is compared with the stage before, so the pass is named
  recompile     the line declaring an argument (or static value) whose change caused a
                retrace of this function
"""
from __future__ import annotations

import collections
import dataclasses
import html
import inspect
import linecache
import re
from dataclasses import dataclass, field

from .config import config
from .core.pretty import NameContext, pp_eqn, render

#: colouring precedence: the first fate of a line in this order gives its colour
FATES = ("effect", "recompile", "unrolled", "constant", "control_flow", "host", "kernel",
         "dead", "static")
LEGEND = {
    "kernel": ("#d8f0d8", "fused into compiled kernel(s)"),
    "host": ("#fde8c8", "runs outside kernels (BLAS call, host-driven loop, callback)"),
    "control_flow": ("#dde6fb", "a lax loop or branch region"),
    "unrolled": ("#f7d0d0", "a Python loop traced over and over: many equations"),
    "constant": ("#efe0f7", "a global or closure baked in as a constant"),
    "effect": ("#ffc9c9", "ran only while tracing: lost on every later call"),
    "static": ("#f1f1f1", "Python-only work: produced no equations"),
    "dead": ("#e4e4e4", "equations removed by the optimizer"),
    "recompile": ("#ffe08a", "an argument whose change caused a retrace"),
}

#: generated lines listed under one source line in the HTML view (the data keeps them all)
MAX_GENERATED_SHOWN = 12


@dataclass(frozen=True)
class LineAnnotation:
    file: str
    line: int
    code: str
    fates: tuple = ()
    equations: tuple = ()  # the traced equations of the line, printed
    kernels: tuple = ()  # names of the kernels its equations went into
    time_share: float | None = None  # share of a call's time (annotate(..., profile=True))
    note: str = ""
    kernel_lines: tuple = ()  # (kernel, line of its source, text) computing this line

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "code": self.code,
                "fates": list(self.fates), "equations": list(self.equations),
                "kernels": list(self.kernels), "time_share": self.time_share,
                "note": self.note,
                "kernel_lines": [list(k) for k in self.kernel_lines]}


@dataclass
class Annotation:
    """The fates of one specialization's source lines (`.lines`), with its kernels' sources."""
    function: str
    signature: str
    backend: str
    lines: list = field(default_factory=list)
    kernel_sources: dict = field(default_factory=dict)
    # profile=True: seconds per call, calls measured, and the share of a call's time that
    # no timed unit covers (the driver, allocations, host work such as BLAS calls)
    seconds_per_call: float | None = None
    calls_measured: int = 0
    untimed_share: float | None = None

    def fate_of(self, line: int) -> tuple:
        return next((a.fates for a in self.lines if a.line == line), ())

    def to_dict(self) -> dict:
        return {"function": self.function, "signature": self.signature,
                "backend": self.backend, "lines": [a.to_dict() for a in self.lines],
                "kernels": dict(self.kernel_sources),
                "seconds_per_call": self.seconds_per_call,
                "calls_measured": self.calls_measured, "untimed_share": self.untimed_share}

    def __str__(self):
        width = max((len(",".join(a.fates)) for a in self.lines), default=0)
        rows = [f"{self.function}({self.signature}) on {self.backend}"]
        rows += [f"{a.line:5d} {','.join(a.fates):<{width}}  {a.code}" for a in self.lines]
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        return render_html(self)


# --- building ---------------------------------------------------------------------------------

def annotate(fun, *args, backend: str | None = None, specialization: int = -1,
             profile: bool = False, min_time: float = 0.2, **kwargs):
    """The fate of each line of `fun` for one specialization.

    `fun` is a plain function (traced and compiled at `args` with `backend`, "cpu" by
    default) or a jitted one: with arguments it is lowered at them, without it is read from
    `fun.specializations[specialization]` (the latest by default).

    `profile=True` (needs the arguments) runs a copy compiled with per-kernel timers for
    `min_time` seconds and gives each line its share of a call's time (`time_share`): a
    kernel's time is split between the lines of its equations by their count."""
    from .jit import JitFunction, jit
    jf = fun if isinstance(fun, JitFunction) else jit(fun, backend=backend or "cpu")
    if args or kwargs:
        entry = jf.specialization_for(*args, **kwargs)
    elif jf.specializations:
        entry = jf.specializations[specialization]
    else:
        raise TypeError(f"annotate({jf.__name__}) needs example arguments: the function has "
                        "not been called yet, so there is no specialization to read")
    annotation = _build(jf, entry)
    if profile:
        if not (args or kwargs):
            raise TypeError("annotate(..., profile=True) runs the function: pass example "
                            "arguments")
        _add_time_shares(annotation, *jf.time_kernels(*args, min_time=min_time, **kwargs))
    return annotation


def _add_time_shares(annotation, timings, seconds_per_call, calls):
    """Each line's share of a call: the time of the timed units (kernels, or equations on
    the interpreter) split between the lines of their equations by count."""
    file = annotation.lines[0].file if annotation.lines else None
    per_line = collections.Counter()
    timed = 0.0
    for eqns, seconds, _ in timings.units.values():
        timed += seconds
        counts = collections.Counter(_line_of(e, file) for e in eqns)
        for line, n in counts.items():
            per_line[line] += seconds * n / sum(counts.values())
    total = seconds_per_call * calls
    annotation.lines = [dataclasses.replace(a, time_share=per_line.get(a.line, 0.0) / total)
                        for a in annotation.lines]
    annotation.seconds_per_call, annotation.calls_measured = seconds_per_call, calls
    annotation.untimed_share = max(total - timed, 0.0) / total


def _build(jf, entry) -> Annotation:
    fun = inspect.unwrap(jf.__wrapped__)
    file, first, code_lines = _source_of(fun)
    kernels = entry.executable.kernels
    facts = _Facts(jf, entry.closed, entry.stages, entry.executable, file)
    lines = [facts.line(file, first + k, text) for k, text in enumerate(code_lines)]
    return Annotation(getattr(fun, "__qualname__", jf.__name__), entry.signature,
                      jf.backend, lines, {k.name: k.source for k in kernels})


def _source_of(fun):
    try:
        code_lines, first = inspect.getsourcelines(fun)
    except (OSError, TypeError):
        code = fun.__code__
        first = code.co_firstlineno
        code_lines = [linecache.getline(code.co_filename, first)]
    return fun.__code__.co_filename, first, [t.rstrip("\n") for t in code_lines]


class _Facts:
    """What jit recorded, grouped by source line."""

    def __init__(self, jf, closed, stages, executable, file):
        from .core.jaxpr_util import all_eqns
        kernels = executable.kernels
        self.file = file
        self.traced = _by_line(_leaf_eqns(all_eqns(closed.jaxpr)), file)
        self.regions = _by_line([e for e in all_eqns(closed.jaxpr)
                                 if _is_region(e.primitive)], file)
        # what the backend ran: the last stage, or the traced jaxpr on the interpreter
        final = list(_leaf_eqns(all_eqns(executable.jaxpr.jaxpr)))
        covered = _covered(kernels)
        self.kernels = collections.defaultdict(list)
        for e, name in covered.values():
            line = _line_of(e, file)
            if line is not None and name not in self.kernels[line]:
                self.kernels[line].append(name)
        # by (line, primitive), not identity: CUDA plans from re-inlined copies of the
        # equations, so its kernels hold other objects than the stage it compiled
        in_kernels = {(_line_of(e, file), e.primitive) for e, _ in covered.values()}
        self.host = collections.Counter(_line_of(e, file) for e in final
                                        if (_line_of(e, file), e.primitive) not in in_kernels)
        # host callbacks, wherever they run (a Numba region leaves nopython mode for them)
        from .callbacks import CALLBACK_PRIMITIVES
        self.callbacks = _by_line([e for e in final if e.primitive in CALLBACK_PRIMITIVES], file)
        self.kernel_lines = _generated_lines(kernels, file)
        self.removed = _removed_by_pass(stages, file)
        self.report = closed.report
        self.constants = _constants_by_line(closed, file)
        self.recompiles = _recompiled_arguments(jf)
        self.threshold = config.unrolled_loop_threshold

    def line(self, file, line, code) -> LineAnnotation:
        fates, notes = [], []
        eqns = self.traced.get(line, [])
        checks = [self._effects, self._recompile, self._unrolled, self._constant,
                  self._control_flow, self._host, self._kernel, self._dead]
        for check in checks:
            found = check(line, code, eqns)
            if found:
                fates.append(found[0])
                notes.append(found[1])
        if not eqns and not fates and _is_code(code):
            fates.append("static")
            notes.append("no equations: Python-only work")
        ordered = tuple(f for f in FATES if f in fates)
        return LineAnnotation(file, line, code, ordered, tuple(_printed(eqns)),
                              tuple(self.kernels.get(line, ())), None,
                              "; ".join(n for n in notes if n),
                              tuple(self.kernel_lines.get(line, ())))

    # one method per fate: (fate, note) or None
    def _effects(self, line, code, eqns):
        r = self.report
        if r is None:
            return None
        said = [f"print wrote {p.text.strip()[:40]!r}" for p in r.prints if _at(p, line, self)]
        said += [m.detail for m in r.mutations if _at(m, line, self)]
        said += [f"a tracer was left in {t.name}" for t in r.tracer_leaks if _at(t, line, self)]
        if said:
            return "effect", "ran only while tracing (" + "; ".join(said) + \
                "), lost on every later call"
        return None

    def _recompile(self, line, code, eqns):
        names = [n for n in self.recompiles if re.search(rf"\b{re.escape(n)}\b", code)]
        if names and re.match(r"\s*(async\s+)?def\b", code):
            return "recompile", "; ".join(self.recompiles[n] for n in names)
        return None

    def _unrolled(self, line, code, eqns):
        if len(eqns) >= self.threshold and self.report is not None and \
                self.report.is_loop((eqns[0].source.file, eqns[0].source.line,
                                     eqns[0].source.code)):
            return "unrolled", f"{len(eqns)} equations from one line (a Python loop traced " \
                               "over and over): use lax.fori_loop or lax.scan"
        return None

    def _constant(self, line, code, eqns):
        consts = self.constants.get(line)
        if consts:
            return "constant", "baked in: " + ", ".join(consts)
        return None

    def _control_flow(self, line, code, eqns):
        regions = self.regions.get(line)
        if regions:
            kinds = sorted({e.primitive.name for e in regions})
            return "control_flow", "a " + "/".join(kinds) + " region"
        return None

    def _host(self, line, code, eqns):
        n = self.host.get(line, 0)
        calls = sorted({f"{e.params['callback'].name} ({e.primitive.name})"
                        for e in self.callbacks.get(line, ())})
        notes = [f"calls {', '.join(calls)} on the host, on every call"] if calls else []
        if n:
            notes.append(f"{n} equation(s) run outside kernels")
        return ("host", "; ".join(notes)) if notes else None

    def _kernel(self, line, code, eqns):
        names = self.kernels.get(line)
        if names:
            return "kernel", "in " + ", ".join(names)
        return None

    def _dead(self, line, code, eqns):
        removed = self.removed.get(line)
        if removed:
            return "dead", "removed by " + ", ".join(f"{p} ({n})" for p, n in removed.items())
        return None


def _is_container(prim) -> bool:
    """A call (`jit`) or a fusion group: it only holds other equations, whose own lines and
    counts are what a line's fate is about."""
    from .core.fused import fused_p
    return prim is fused_p or getattr(prim, "call_param", None) is not None


def _is_region(prim) -> bool:
    """cond / while / scan: control flow that is not a mere call."""
    return prim.kind == "control" and not _is_container(prim)


def _leaf_eqns(eqns):
    return (e for e in eqns if not _is_container(e.primitive))


def _line_of(eqn, file):
    src = eqn.source
    return src.line if src is not None and src.file == file else None


def _at(record, line, facts):
    src = record.source
    return src is not None and src.file == facts.file and src.line == line


def _by_line(eqns, file) -> dict:
    out = collections.defaultdict(list)
    for e in eqns:
        line = _line_of(e, file)
        if line is not None:
            out[line].append(e)
    return out


def _covered(kernels) -> dict:
    """id(eqn) -> (eqn, kernel name) for every equation a kernel runs."""
    return {id(e): (e, k.name) for k in kernels for e in k.all_eqns()}


def _generated_lines(kernels, file) -> dict:
    """source line -> (kernel, line, text) of the generated lines computing its equations
    (where the backend records them: Kernel.line_eqns; a line that also computes its
    equation's operand, Kernel.combined, is listed under that operand's line too)."""
    out = collections.defaultdict(list)
    for k in kernels:
        text = k.source.splitlines()
        for n, e in sorted(k.line_eqns.items()):
            if n > len(text):
                continue
            also = k.combined.get(n)
            lines = {_line_of(x, file) for x in (e, also) if x is not None} - {None}
            for line in sorted(lines):
                out[line].append((k.name, n, text[n - 1].strip()))
    return out


def _removed_by_pass(stages, file) -> dict:
    """line -> {pass: equations it removed}, from the per-line counts of consecutive stages."""
    from .core.jaxpr_util import all_eqns
    counts = [(name, collections.Counter(_line_of(e, file)
                                         for e in _leaf_eqns(all_eqns(st.jaxpr))))
              for name, st in stages]
    out = collections.defaultdict(dict)
    for (_, before), (name, after) in zip(counts, counts[1:]):
        for line, n in before.items():
            gone = n - after.get(line, 0)
            if line is not None and gone > 0:
                out[line][name] = out[line].get(name, 0) + gone
    return out


def _constants_by_line(closed, file) -> dict:
    """line -> descriptions of the constants baked in there: arrays (constvars) and the
    globals or closure variables inlined as scalar literals; a changed one is marked stale."""
    from .core.report import changed_bindings
    from .core.jaxpr_util import all_eqns
    stale = changed_bindings(closed.report)
    out = collections.defaultdict(list)

    def note(origin, nbytes):
        if origin is None or origin.source is None or origin.source.file != file:
            return
        what = f"{origin.name or origin.kind} ({nbytes} bytes)"
        if origin.name in stale:
            what += f", stale: the value is now {stale[origin.name]}"
        if what not in out[origin.source.line]:
            out[origin.source.line].append(what)

    for var, value in zip(closed.jaxpr.constvars, closed.consts):
        note(var.origin, getattr(value, "nbytes", 0))
    for e in all_eqns(closed.jaxpr):
        for a in e.invars:
            origin = getattr(a, "origin", None)
            if origin is not None and origin.kind in ("global", "closure") and \
                    not hasattr(a, "id"):  # a literal (constvars are listed above)
                note(origin, a.aval.dtype.itemsize)
    return out


def _recompiled_arguments(jf) -> dict:
    """argument name -> the reason of the latest recompile it caused."""
    out = {}
    for e in jf.events:
        if e.kind == "recompile":
            for name in re.findall(r"argument '([^']+)'", e.reason):
                out[name.split("[")[0].split(".")[0]] = e.reason
    return out


def _printed(eqns):
    ctx = NameContext()
    return [render(pp_eqn(e, ctx)) for e in eqns]


def _is_code(text: str) -> bool:
    s = text.strip()
    return bool(s) and not s.startswith(("#", "@", "def ", "async def ", '"""', "'''")) \
        and not re.match(r"^[rubf]*['\"]", s)


# --- HTML ---------------------------------------------------------------------------------

STYLE = """
.jv-annot{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#1b1b1b}
.jv-annot .jv-legend span{display:inline-block;margin:0 6px 4px 0;padding:1px 6px;
  border-radius:3px;font-size:12px}
.jv-annot details{margin:0}
.jv-annot summary{list-style:none;cursor:pointer;white-space:pre;padding:0 6px}
.jv-annot summary::-webkit-details-marker{display:none}
.jv-annot .jv-no{display:inline-block;width:3.5em;color:#777;text-align:right;margin-right:1em}
.jv-annot .jv-badge{float:right;color:#555;font-size:11px}
.jv-annot .jv-more{margin:2px 0 6px 4.5em;padding:4px 8px;border-left:3px solid #bbb;
  background:#fafafa;white-space:pre;overflow-x:auto}
.jv-annot a.jv-back{color:inherit;text-decoration:none;background:#d8f0d8}
.jv-annot .jv-kl:target,.jv-annot summary:target{outline:2px solid #e08a00}
"""


def render_html(a: Annotation) -> str:
    e = html.escape
    legend = "".join(f"<span style='background:{LEGEND[f][0]}' title='{e(LEGEND[f][1])}'>"
                     f"{e(f)}</span>" for f in FATES)
    rows = "".join(_row_html(line) for line in a.lines)
    back = {(k, n): line.line for line in a.lines for k, n, _ in line.kernel_lines}
    kernels = "".join(f"<details id='jv-kernel-{e(name)}'><summary>kernel {e(name)}</summary>"
                      f"<div class='jv-more'>{_kernel_html(name, src, back)}</div></details>"
                      for name, src in a.kernel_sources.items())
    measured = "" if a.seconds_per_call is None else (
        f" \u00b7 profiled: {a.seconds_per_call * 1e6:.1f} \u00b5s per call over "
        f"{a.calls_measured} calls, {a.untimed_share:.0%} of it outside the timed kernels "
        "(driver, allocations, host work)")
    return (f"<div class='jv-annot'><style>{STYLE}</style>"
            f"<div><b>{e(a.function)}</b>({e(a.signature)}) on {e(a.backend)}{measured}</div>"
            f"<div class='jv-legend'>{legend}</div>{rows}"
            f"<div style='margin-top:8px'>{kernels}</div></div>")


def _kernel_html(name, source, back) -> str:
    """The kernel's source, one anchor per line; a line computing a source line's equation
    links back to it."""
    e = html.escape
    out = []
    for n, text in enumerate(source.splitlines(), 1):
        target = back.get((name, n))
        body = e(text) if target is None else \
            f"<a class='jv-back' href='#jv-line-{target}' title='source line {target}'>{e(text)}</a>"
        out.append(f"<span class='jv-kl' id='jv-k-{e(name)}-{n}'>{body}</span>")
    return "\n".join(out)


def _row_html(a: LineAnnotation) -> str:
    e = html.escape
    colour = LEGEND[a.fates[0]][0] if a.fates else "transparent"
    share = f" \u00b7 {a.time_share:.1%}" if a.time_share else ""
    badge = f"<span class='jv-badge'>{e(' '.join(a.fates))}{share}</span>" \
        if a.fates or share else ""
    head = (f"<summary id='jv-line-{a.line}' style='background:{colour}'>"
            f"<span class='jv-no'>{a.line}</span>{e(a.code)}{badge}</summary>")
    details = []
    if a.note:
        details.append(e(a.note))
    details += [e(q) for q in a.equations]
    details += [f"\u2192 <a href='#jv-kernel-{e(k)}'>kernel {e(k)}</a>" for k in a.kernels]
    shown = a.kernel_lines[:MAX_GENERATED_SHOWN]
    details += [f"<a class='jv-gen' href='#jv-k-{e(k)}-{n}'>{e(k)}:{n}</a>  {e(text)}"
                for k, n, text in shown]
    if len(a.kernel_lines) > len(shown):
        details.append(f"... and {len(a.kernel_lines) - len(shown)} more generated lines")
    body = f"<div class='jv-more'>{'<br>'.join(details)}</div>" if details else ""
    return f"<details>{head}{body}</details>"
