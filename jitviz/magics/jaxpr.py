"""What `%jaxpr` shows, as a plain API: `jaxpr_view(f, *args, stage=...)`.

Traces without running compiled code: a jitted function's own `lower()` (which reuses its
cached trace when there is one), else a jit with a private cache (`jitviz.bench.isolated_jit`),
so the user's caches, counters and events are untouched. Stages: `traced` (the jaxpr as
traced), `optimized` (after the optimization passes), `kernels` (the compiled kernels and their
generated source; compiling is not running).
"""
from __future__ import annotations

from ..html_blocks import esc

__all__ = ["JaxprView", "jaxpr_view", "lower", "STAGES"]

STAGES = ("traced", "optimized", "kernels")


class JaxprView:
    def __init__(self, title: str, stage: str, text: str, kernels=(), notes=()):
        self.title = title
        self.stage = stage
        self.text = text
        self.kernels = list(kernels)  # (name, number of equations, source)
        self.notes = list(notes)

    def __str__(self) -> str:
        out = [f"# {self.title} — {self.stage}"]
        out += [f"# note: {n}" for n in self.notes]
        if self.stage == "kernels":
            for name, n_eqns, source in self.kernels:
                out.append(f"# kernel {name} ({n_eqns} equations)")
                out.append(source.rstrip())
        else:
            out.append(self.text)
        return "\n".join(out)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    def _repr_html_(self) -> str:
        parts = [f'<div><b>{esc(self.title)}</b> <span style="color:#777">— '
                 f'{esc(self.stage)}</span></div>']
        parts += [f'<div style="color:#777">{esc(n)}</div>' for n in self.notes]
        if self.stage == "kernels":
            for name, n_eqns, source in self.kernels:
                parts.append(f"<div>kernel <code>{esc(name)}</code> ({n_eqns} equations)</div>"
                             f"<pre>{esc(source)}</pre>")
        else:
            parts.append(f"<pre>{esc(self.text)}</pre>")
        return f'<div class="jitviz-jaxpr">{"".join(parts)}</div>'


def _jitted_for(fn, static=(), backend=None):
    """(a JitFunction to lower, a release callback)."""
    from ..bench import isolated_jit, unwrap_jit
    from ..jit import JitFunction
    if isinstance(fn, JitFunction) and not static and (backend is None or
                                                       backend == fn.backend):
        return fn, (lambda: None)
    base, opts = unwrap_jit(fn)
    names = tuple(dict.fromkeys(tuple(opts.get("static_argnames", ())) + tuple(static)))
    if backend is not None:
        opts["backend"] = backend
    opts["static_argnames"] = names
    if not callable(base):
        raise TypeError(f"%jaxpr needs a function call, and {base!r} is not callable")
    iso = isolated_jit(base, **opts)
    return iso.jitted, iso.release


def lower(fn, *args, static=(), backend=None, **kwargs):
    """`Lowered` for `fn(*args, **kwargs)` without touching the user's cache."""
    jf, release = _jitted_for(fn, static, backend)
    try:
        return jf.lower(*args, **kwargs)
    finally:
        release()


def jaxpr_view(fn, *args, stage: str = "traced", static=(), backend=None, kwargs=None,
               title: str | None = None) -> JaxprView:
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}; got {stage!r}")
    kwargs = kwargs or {}
    jf, release = _jitted_for(fn, static, backend)
    try:
        lowered = jf.lower(*args, **kwargs)
        title = title or f"{getattr(jf, '__name__', 'fun')}"
        notes = []
        if stage == "traced":
            return JaxprView(title, stage, str(lowered.stages[0][1]))
        if stage == "optimized":
            names = [n for n, _ in lowered.stages[1:]]
            if not names:
                notes.append("no optimization passes ran (jitviz.passes is not available "
                             "yet): this is the traced jaxpr")
            else:
                notes.append("passes: " + ", ".join(names))
            return JaxprView(title, stage, str(lowered.stages[-1][1]), notes=notes)
        from ..backends import get_backend
        try:
            get_backend(jf.backend)
        except (ImportError, ValueError) as err:
            raise ValueError(f"backend {jf.backend!r} is not available here ({err}); pass "
                             "--backend interpret") from err
        compiled = lowered.compile()
        kernels = [(k.name, len(k.eqns), k.source or "") for k in compiled.kernels]
        notes.append(f"{len(kernels)} kernel(s) for the {jf.backend} backend")
        return JaxprView(title, stage, "", kernels=kernels, notes=notes)
    finally:
        release()
