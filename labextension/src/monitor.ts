// The live monitor: per-function counters and the event timeline, updated as jit works.

import { append, clear, el } from "./dom";
import { renderTimeline } from "./timeline";
import type { MonitorModel } from "./types";

export function renderMonitor(model: MonitorModel, host: HTMLElement): () => void {
  const title = el("h4", { class: "jv-title" });
  const table = el("table", { class: "jv-table jv-functions" });
  const timeline = el("div", { class: "jv-timeline" });
  const root = el("div", { class: "jv-monitor", "data-state": "ready" }, title, table, timeline);
  host.appendChild(root);

  const update = () => {
    title.textContent = model.get("title") ?? "jit events";
    clear(table);
    append(table, el("tr", {}, ...["function", "cache hits", "misses", "entries", "traces",
      "compiles"].map((h) => el("th", {}, h))));
    for (const f of model.get("functions") ?? []) {
      append(table, el("tr", {}, el("td", {}, f.name), el("td", { class: "jv-good" }, String(f.hits)),
        el("td", { class: f.misses > 1 ? "jv-bad" : "" }, String(f.misses)),
        el("td", {}, String(f.entries)), el("td", {}, String(f.traces)),
        el("td", {}, String(f.compiles))));
    }
    const events = model.get("events") ?? [];
    renderTimeline(timeline, events.map((e) => ({ ...e, signature: `${e.function}(${e.signature})` })));
  };
  model.on("change:events", update);
  model.on("change:functions", update);
  update();
  return () => {
    model.off("change:events", update);
    model.off("change:functions", update);
  };
}
