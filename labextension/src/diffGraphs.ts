// The two graphs of a diff, side by side: each program's graph with its added / removed /
// changed nodes coloured and its unchanged regions folded (jitviz.diff.views.status_graphs
// decides that; the kernel sends the server's SVG, or the DOT for Graphviz in WebAssembly).
// Hovering a node outlines it and its matched node in the other graph.

import { append, clear, el } from "./dom";
import { nodeIdOf } from "./graphIndex";
import { PanZoom } from "./panzoom";
import { type GraphvizLoader, renderGraph } from "./render";
import type { DiffGraphs, DiffStatus } from "./types";

export type Side = "a" | "b";
const SIDES: Side[] = ["a", "b"];
const LEGEND: DiffStatus[] = ["changed", "added", "removed"];

export interface DiffGraphsView {
  element: HTMLElement;
  /** Resolves when both graphs are drawn (or failed: the panel says why). */
  drawn: Promise<void>;
  destroy(): void;
}

/** Node id -> the matched node ids of the other side, for each side. */
export function partnersOf(pairs: [string, string][]): Record<Side, Map<string, string[]>> {
  const out = { a: new Map<string, string[]>(), b: new Map<string, string[]>() };
  for (const [a, b] of pairs) {
    out.a.set(a, [...(out.a.get(a) ?? []), b]);
    out.b.set(b, [...(out.b.get(b) ?? []), a]);
  }
  return out;
}

export function renderDiffGraphs(graphs: DiffGraphs, labels: Record<Side, string>,
                                 loadGraphviz: GraphvizLoader): DiffGraphsView {
  const legend = el("div", { class: "jv-diff-legend" }, "graphs ");
  for (const status of LEGEND) {
    const [fill, line] = graphs.colors?.[status] ?? ["", ""];
    append(legend, el("span", { class: `jv-legend-chip jv-diff-${status}`, "data-status": status,
      style: `background:${safeColour(fill)};border-color:${safeColour(line)}` }, status));
  }
  append(legend, el("span", { class: "jv-legend-chip jv-legend-unchanged" }, "unchanged (folded)"),
    el("span", { class: "jv-hint" }, " \u2014 hover a node to find its match in the other graph"));
  const panels = el("div", { class: "jv-diff-graphs" });
  const canvases = {} as Record<Side, HTMLElement>;
  const zooms: PanZoom[] = [];
  const svgs: Partial<Record<Side, SVGSVGElement>> = {};
  for (const side of SIDES) {
    canvases[side] = el("div", { class: "jv-diff-canvas", "data-side": side, "data-state": "loading" },
      el("div", { class: "jv-hint" }, "laying out\u2026"));
    append(panels, el("div", { class: "jv-diff-graph" },
      el("div", { class: "jv-diff-graph-title" }, el("b", { class: `jv-side-${side}` }, `${side} `), labels[side]),
      canvases[side]));
  }
  const partners = partnersOf(graphs.pairs ?? []);

  function outline(side: Side, id: string | null): void {
    for (const s of SIDES) {
      for (const g of Array.from(svgs[s]?.querySelectorAll(".jv-pair") ?? [])) g.classList.remove("jv-pair");
    }
    if (!id) return;
    const other: Side = side === "a" ? "b" : "a";
    const mark = (s: Side, nodeId: string) =>
      Array.from(svgs[s]?.querySelectorAll("g.node") ?? []).find((g) => nodeIdOf(g) === nodeId)
        ?.classList.add("jv-pair");
    mark(side, id);
    for (const match of partners[side].get(id) ?? []) mark(other, match);
  }

  async function draw(side: Side): Promise<void> {
    const canvas = canvases[side];
    const graph = graphs[side];
    try {
      if (!graph || graph.too_large) throw new Error("too large to lay out (the table below lists every row)");
      const rendered = await renderGraph(graph.dot ?? "", graph.svg ?? "", loadGraphviz);
      clear(canvas);
      canvas.appendChild(rendered.svg);
      svgs[side] = rendered.svg;
      const zoom = new PanZoom(rendered.svg, canvas);
      zoom.readable();
      zooms.push(zoom);
      canvas.addEventListener("mouseover", (e) => {
        const g = (e.target as Element).closest("g.node");
        outline(side, g ? nodeIdOf(g) : null);
      });
      canvas.addEventListener("mouseleave", () => outline(side, null));
      canvas.dataset.renderer = rendered.renderer;
      canvas.dataset.state = "ready";
    } catch (err) {
      clear(canvas);
      append(canvas, el("div", { class: "jv-hint" },
        `graph not drawn: ${err instanceof Error ? err.message : String(err)}`));
      canvas.dataset.state = "error";
    }
  }

  const element = el("div", { class: "jv-diff-graphs-view" }, legend, panels);
  const drawn = Promise.all(SIDES.map(draw)).then(() => undefined);
  return { element, drawn, destroy: () => { for (const z of zooms) z.destroy(); } };
}

/** A colour from the kernel, only if it is a plain hex colour (it goes into a style). */
export function safeColour(value: string): string {
  return /^#[0-9a-fA-F]{3,8}$/.test(value) ? value : "transparent";
}
