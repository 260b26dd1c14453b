"""Plain HTML/SVG/text building blocks for notebook and terminal reports (`jitviz.bench`,
the magics' monitor, error and jaxpr views).

No IPython and no widgets here: strings in, strings out. Every user-controlled string (function
names, reprs, source code, messages) goes through `esc` before it reaches HTML or SVG; `Raw`
marks the few strings that are already safe markup.
"""
from __future__ import annotations

import html
import math

__all__ = ["Raw", "esc", "fmt_time", "html_table", "text_table", "svg_bars", "svg_stacked",
           "code_excerpt", "box"]

FONT = "font-family:var(--jp-code-font-family,monospace);font-size:12px"
COLORS = {"trace": "#6a8fd6", "compile": "#d08a3e", "run": "#5aa469", "baseline": "#9a9a9a",
          "bar": "#4c78a8", "warn": "#b7791f", "error": "#c53030", "hit": "#2f855a"}


class Raw(str):
    """A string that is already HTML (built here from escaped parts)."""


def esc(value) -> str:
    if isinstance(value, Raw):
        return value
    return html.escape(str(value), quote=True)


def fmt_time(seconds, precision: int = 3) -> str:
    """`12.3 ms`, `845 ns` — three significant digits, as %timeit prints."""
    if seconds is None:
        return "—"
    if seconds != seconds or math.isinf(seconds):
        return str(seconds)
    units = [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)]
    for unit, scale in units:
        if abs(seconds) >= scale or unit == "ns":
            value = seconds / scale
            digits = max(precision - 1 - int(math.floor(math.log10(abs(value)))) if value else 0,
                         0)
            return f"{value:.{digits}f} {unit}"
    return f"{seconds:.3g} s"  # pragma: no cover


def html_table(headers, rows, align=None, caption=None) -> Raw:
    align = align or ["left"] * len(headers)
    th = "".join(f'<th style="text-align:{a};padding:2px 8px">{esc(h)}</th>'
                 for h, a in zip(headers, align))
    body = []
    for row in rows:
        tds = "".join(f'<td style="text-align:{a};padding:2px 8px">{esc(c)}</td>'
                      for c, a in zip(row, align))
        body.append(f"<tr>{tds}</tr>")
    cap = f'<caption style="text-align:left">{esc(caption)}</caption>' if caption else ""
    return Raw(f'<table style="border-collapse:collapse;{FONT}">{cap}<thead><tr>{th}</tr>'
               f'</thead><tbody>{"".join(body)}</tbody></table>')


def text_table(headers, rows, align=None, indent: str = "  ") -> str:
    align = align or ["left"] * len(headers)
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    for r in cells:
        parts = [c.rjust(w) if a == "right" else c.ljust(w)
                 for c, w, a in zip(r, widths, align)]
        out.append((indent + "  ".join(parts)).rstrip())
    return "\n".join(out)


def svg_bars(items, title: str = "", width: int = 520, unit_label: str = "per call") -> Raw:
    """Horizontal bars. `items`: (label, value_s, lo_s, hi_s, color); lo/hi draw a whisker."""
    items = [it for it in items if it[1] is not None]
    if not items:
        return Raw("")
    label_w = max(80, int(7.3 * max(len(str(it[0])) for it in items)) + 12)
    value_w, row_h = 90, 22
    plot_w = width - label_w - value_w
    top = 22 if title else 6
    vmax = max(max(it[1], it[3] or 0) for it in items) or 1.0
    height = top + row_h * len(items) + 6
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" style="{FONT}">']
    if title:
        parts.append(f'<text x="0" y="14" font-weight="bold">{esc(title)}</text>')
    for i, (label, value, lo, hi, color) in enumerate(items):
        y = top + i * row_h
        w = max(plot_w * value / vmax, 1.0)
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{esc(label)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" '
                     f'fill="{esc(color)}"><title>{esc(label)}: {esc(fmt_time(value))} '
                     f'{esc(unit_label)}</title></rect>')
        if lo is not None and hi is not None and hi > lo:
            x0, x1 = label_w + plot_w * lo / vmax, label_w + plot_w * hi / vmax
            ym = y + row_h / 2 - 1
            parts.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{ym}" y2="{ym}" '
                         'stroke="#333" stroke-width="1"/>')
        end = max(w, plot_w * hi / vmax if hi is not None else 0.0)
        parts.append(f'<text x="{label_w + end + 4:.1f}" y="{y + 14}">'
                     f'{esc(fmt_time(value))}</text>')
    parts.append("</svg>")
    return Raw("".join(parts))


def svg_stacked(label: str, segments, width: int = 520, title: str = "") -> Raw:
    """One horizontal bar split into `segments`: (name, seconds, color)."""
    segments = [(n, s, c) for n, s, c in segments if s and s > 0]
    total = sum(s for _, s, _ in segments)
    if total <= 0:
        return Raw("")
    label_w = max(80, int(7.3 * len(label)) + 12)
    legend_w = sum(13 + 7.2 * len(f"{n} {fmt_time(s)}") + 12 for n, s, _ in segments)
    width = int(max(width, label_w + legend_w + 10))
    plot_w, top = width - label_w - 10, (22 if title else 6)
    height = top + 44
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" style="{FONT}">']
    if title:
        parts.append(f'<text x="0" y="14" font-weight="bold">{esc(title)}</text>')
    parts.append(f'<text x="{label_w - 6}" y="{top + 14}" text-anchor="end">{esc(label)}</text>')
    x = float(label_w)
    legend_x = float(label_w)
    for name, s, color in segments:
        w = plot_w * s / total
        parts.append(f'<rect x="{x:.1f}" y="{top + 3}" width="{max(w, 1):.1f}" height="14" '
                     f'fill="{esc(color)}"><title>{esc(name)}: {esc(fmt_time(s))}</title></rect>')
        x += w
        parts.append(f'<rect x="{legend_x:.1f}" y="{top + 26}" width="10" height="10" '
                     f'fill="{esc(color)}"/>')
        text = f"{name} {fmt_time(s)}"
        parts.append(f'<text x="{legend_x + 13:.1f}" y="{top + 35}">{esc(text)}</text>')
        legend_x += 13 + 7.2 * len(text) + 12
    parts.append("</svg>")
    return Raw("".join(parts))


def code_excerpt(lines, highlight: int, first: int, html_mode: bool):
    """Source lines numbered from `first`, the line numbered `highlight` marked."""
    width = len(str(first + len(lines) - 1))
    if not html_mode:
        out = []
        for i, text in enumerate(lines):
            n = first + i
            mark = "-->" if n == highlight else "   "
            out.append(f"{mark} {str(n).rjust(width)} | {text.rstrip()}")
        return "\n".join(out)
    rows = []
    for i, text in enumerate(lines):
        n = first + i
        style = ("background:#fde2e1;font-weight:bold" if n == highlight else "")
        mark = "→" if n == highlight else "&nbsp;"
        rows.append(f'<div style="{style}">{mark} {esc(str(n).rjust(width))} │ '
                    f'{esc(text.rstrip())}</div>')
    return Raw(f'<div style="{FONT};white-space:pre">{"".join(rows)}</div>')


def box(inner_html: str, color: str = "#888") -> Raw:
    return Raw(f'<div style="border-left:3px solid {esc(color)};padding:4px 10px;margin:4px 0">'
               f'{inner_html}</div>')
