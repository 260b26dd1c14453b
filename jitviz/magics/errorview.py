"""A jitviz error shown as the user needs it: the error, the offending line of *their* cell
highlighted in context, and jitviz's explanation — not a 40-frame traceback.

`ErrorView(err)` renders as HTML in notebooks and as text in terminals. `location(file, line)`
names an IPython cell as `Cell In[7], line 4` (the numbering the notebook shows).
"""
from __future__ import annotations

import linecache

from ..core.source import notebook_cell_of
from ..html_blocks import COLORS, code_excerpt, esc

__all__ = ["ErrorView", "jitviz_error_types", "location"]


def jitviz_error_types() -> tuple:
    """The exceptions shown compactly: jitviz's tracing and compilation errors."""
    from .. import errors
    return (errors.JAXTypeError, errors.JAXIndexError, errors.JitvizError)


def location(file: str, line: int, shell=None) -> str:
    cell = notebook_cell_of(file, shell)
    return f"{file}, line {line}" if cell is None else f"Cell In[{cell}], line {line}"


class ErrorView:
    def __init__(self, error: BaseException, context: int = 2, shell=None,
                 hint: str = "%tb shows the full traceback"):
        self.error = error
        self.source = getattr(error, "source", None)
        self.hint = hint
        self.where = None
        self.lines, self.first = [], 0
        src = self.source
        if src is not None and getattr(src, "file", None) and getattr(src, "line", None):
            self.where = location(src.file, src.line, shell)
            all_lines = linecache.getlines(src.file)
            if all_lines:
                lo = max(src.line - context, 1)
                hi = min(src.line + context, len(all_lines))
                self.lines, self.first = all_lines[lo - 1:hi], lo
            elif getattr(src, "code", ""):
                self.lines, self.first = [src.code], src.line

    @property
    def title(self) -> str:
        fn = getattr(self.source, "function", None)
        head = type(self.error).__name__
        if fn and fn != "<module>":
            head += f" in {fn}"
        if self.where:
            head += f" — {self.where}"
        return head

    def __repr__(self) -> str:
        out = [self.title]
        if self.lines:
            out.append(code_excerpt(self.lines, self.source.line, self.first, html_mode=False))
        out.append("")
        out.append(str(self.error))
        if self.hint:
            out.append(f"({self.hint})")
        return "\n".join(out)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))

    def _repr_html_(self) -> str:
        parts = [f'<div style="font-weight:bold;color:{COLORS["error"]}">{esc(self.title)}</div>']
        if self.lines:
            parts.append(code_excerpt(self.lines, self.source.line, self.first, html_mode=True))
        generated = getattr(self.error, "generated_source", None)
        message = self.error.summary if generated else str(self.error)
        parts.append('<pre style="white-space:pre-wrap;margin:6px 0">'
                     f'{esc(message)}</pre>')
        if generated:
            parts.append(_generated_source_html(generated,
                                                getattr(self.error, "failing_line", None)))
        if self.hint:
            parts.append(f'<div style="color:#777;font-size:11px">{esc(self.hint)}</div>')
        return (f'<div class="jitviz-error" style="border-left:3px solid {COLORS["error"]};'
                f'padding:4px 10px;background:#fff8f8">{"".join(parts)}</div>')


def _generated_source_html(text: str, failing_line: int | None) -> str:
    """The generated code, folded: one click away, unwrapped, the failing line marked."""
    rows = []
    for i, line in enumerate(text.split("\n"), 1):
        mark = ' style="background:#fdd"' if i == failing_line else ""
        rows.append(f'<span{mark}>{i:4d}  {esc(line)}</span>')
    n = len(rows)
    return ('<details class="jitviz-generated-source"><summary style="cursor:pointer">'
            f'generated source ({n} lines)</summary><pre style="overflow-x:auto;'
            f'white-space:pre;margin:4px 0">{chr(10).join(rows)}</pre></details>')
