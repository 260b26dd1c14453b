// The event timeline: cache hits green, recompiles red with their reason, side effects and
// stale globals amber, traces and compiles blue.

import { append, clear, el } from "./dom";
import type { JitEvent } from "./types";

export type Tone = "good" | "bad" | "warn" | "info" | "muted";

const TONES: Record<string, Tone> = {
  cache_hit: "good",
  recompile: "bad",
  error: "bad",
  side_effect_lost: "warn",
  stale_global: "warn",
  tracer_leak: "warn",
  retrace_churn: "warn",
  unrolled_loop: "warn",
  trace: "info",
  compile: "info",
  eviction: "muted",
};

export function toneOf(kind: string): Tone {
  return TONES[kind] ?? "muted";
}

export function eventTitle(event: JitEvent): string {
  const times = event.count > 1 ? ` ×${event.count}` : "";
  const kind = event.kind.replace(/_/g, " ");
  const detail = event.kind === "recompile" && event.reason ? String(event.reason) : event.message;
  return `${kind}${times} (${event.signature}): ${detail}`;
}

export function renderTimeline(host: HTMLElement, events: JitEvent[],
                               onPick?: (event: JitEvent) => void,
                               onDiff?: (event: JitEvent) => void): void {
  clear(host);
  if (!events.length) {
    append(host, el("div", { class: "jv-hint" }, "No jit events (a plain function was traced)."));
    return;
  }
  const strip = el("div", { class: "jv-strip", role: "list" });
  const list = el("ol", { class: "jv-events" });
  for (const event of events) {
    const tone = toneOf(event.kind);
    const mark = el("button", { class: `jv-mark jv-tone-${tone}`, type: "button",
      title: eventTitle(event), "data-kind": event.kind },
      event.count > 1 ? String(event.count) : "");
    const row = el("li", { class: `jv-event jv-tone-${tone}`, "data-kind": event.kind },
      el("span", { class: "jv-event-kind" }, event.kind.replace(/_/g, " ")),
      event.count > 1 ? el("span", { class: "jv-count" }, `×${event.count}`) : null,
      el("span", { class: "jv-event-sig" }, event.signature),
      el("span", { class: "jv-event-msg" },
        event.kind === "recompile" && event.reason ? String(event.reason) : event.message));
    if (onDiff && event.kind === "recompile") {
      const open = el("button", { class: "jv-button jv-event-diff", type: "button",
        title: "the diff of this recompile's program against the one it was recompiled from" }, "diff");
      open.addEventListener("click", (e) => {
        e.stopPropagation();
        onDiff(event);
      });
      append(row, open);
    }
    if (onPick) {
      mark.addEventListener("click", () => onPick(event));
      row.addEventListener("click", () => onPick(event));
    }
    append(strip, mark);
    append(list, row);
  }
  append(host, strip, list);
}
