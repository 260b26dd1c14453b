// The compare view: the diff of two specializations or stages (jitviz.diff), drawn from the data
// the kernel sends on request. Side by side: a's equation, b's, a marker (~ changed, + added,
// − removed), the fields that differ; runs of unchanged equations folded.

import { append, el } from "./dom";
import type { DiffChange, DiffData, DiffRow, DiffStatus } from "./types";

const MARKERS: Record<DiffStatus, string> = { changed: "~", added: "+", removed: "\u2212", unchanged: "" };
const ORDER: DiffStatus[] = ["changed", "added", "removed", "unchanged"];

export function changeText(c: DiffChange): string {
  const label = c.label ?? c.field;
  return c.before ? `${label} ${c.before} \u2192 ${c.after}` : `${label}: ${c.after}`;
}

export function sourceText(src: NonNullable<DiffRow["source"]>): string {
  const where = src.where ?? `line ${src.line}`;
  const code = (src.code ?? "").trim();
  return `${where} (${src.function})${code ? `: ${code}` : ""}`;
}

/** ["row", row] for rows within `context` of a difference, ["fold", rows] for the runs of
 *  unchanged rows between them (as jitviz.diff's HTML). */
export function visibleRows(rows: DiffRow[], context = 1): (["row", DiffRow] | ["fold", DiffRow[]])[] {
  const keep = new Set<number>();
  rows.forEach((r, i) => {
    if (r.status !== "unchanged") for (let k = i - context; k <= i + context; k++) keep.add(k);
  });
  const out: (["row", DiffRow] | ["fold", DiffRow[]])[] = [];
  let run: DiffRow[] = [];
  const flush = () => {
    if (run.length === 1) out.push(["row", run[0]]);
    else if (run.length) out.push(["fold", run]);
    run = [];
  };
  rows.forEach((row, i) => {
    if (keep.has(i)) {
      flush();
      out.push(["row", row]);
    } else run.push(row);
  });
  flush();
  return out;
}

export function renderDiff(data: DiffData): HTMLElement {
  const chips = el("div", { class: "jv-diff-counts" });
  for (const status of ORDER) {
    append(chips, el("span", { class: `jv-chip jv-chip-${status}`, "data-status": status },
      `${data.summary?.[status] ?? 0} ${status}`));
  }
  const head = el("div", { class: "jv-diff-head" },
    el("div", { class: "jv-diff-label" }, el("b", { class: "jv-side-a" }, "a "), data.a),
    el("div", { class: "jv-diff-label" }, el("b", { class: "jv-side-b" }, "b "), data.b),
    chips);
  for (const c of [...(data.inputs ?? []), ...(data.outputs ?? []), ...(data.constants ?? [])]) {
    append(head, el("div", { class: "jv-diff-sig" }, `~ ${changeText(c)}`));
  }
  const body = el("div", { class: "jv-diff-body" });
  if (data.empty) {
    append(body, el("div", { class: "jv-hint" }, "no differences"));
  } else {
    append(body, el("div", { class: "jv-diff-row jv-diff-titles" }, el("span", {}, ""),
      el("div", {}, `a: ${data.a}`), el("div", {}, `b: ${data.b}`)));
    renderLevel(body, data.rows ?? []);
  }
  if (data.cut) {
    append(body, el("div", { class: "jv-hint" }, `\u2026 ${data.cut} more rows not shown (print jitviz.diff for all)`));
  }
  return el("div", { class: "jv-diff-data" }, head, body);
}

function renderLevel(host: HTMLElement, rows: DiffRow[]): void {
  let lastSource: string | null = null;
  for (const item of visibleRows(rows)) {
    if (item[0] === "fold") {
      const n = item[1].length;
      const fold = el("details", { class: "jv-diff-fold" },
        el("summary", {}, `\u2026 ${n} unchanged equation${n === 1 ? "" : "s"} \u2026`));
      for (const row of item[1]) append(fold, rowElement(row));
      append(host, fold);
      lastSource = null;
      continue;
    }
    const row = item[1];
    const key = row.source ? `${row.source.file}:${row.source.line}` : null;
    if (row.source && key !== lastSource) append(host, el("div", { class: "jv-diff-src" }, sourceText(row.source)));
    lastSource = key;
    append(host, rowElement(row));
    if (row.status !== "unchanged") {
      for (const sub of row.subs ?? []) {
        const nested = el("div", { class: "jv-diff-sub" }, el("div", { class: "jv-diff-sub-title" }, `${sub.title}:`));
        renderLevel(nested, sub.rows);
        append(host, nested);
      }
    }
  }
}

function rowElement(row: DiffRow): HTMLElement {
  const b = el("div", { class: "jv-diff-b" }, row.b ?? "");
  const a = el("div", { class: "jv-diff-a" }, row.a ?? "");
  if (row.changes?.length) {
    append(b, el("div", { class: "jv-diff-changes" }, row.changes.map(changeText).join("; ")));
  }
  if (row.note) append(row.status === "removed" ? a : b, el("div", { class: "jv-diff-note" }, row.note));
  return el("div", { class: `jv-diff-row jv-diff-${row.status}`, "data-status": row.status,
    title: row.status }, el("span", { class: "jv-diff-marker" }, MARKERS[row.status]), a, b);
}
