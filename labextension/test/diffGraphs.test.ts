import { describe, expect, it } from "vitest";
import { partnersOf, renderDiffGraphs, safeColour } from "../src/diffGraphs";
import type { GraphvizLoader } from "../src/render";
import type { DiffGraphs } from "../src/types";
import { sampleSvg, XSS, XSS_PAYLOADS } from "./fixtures";

const neverLoad = () => Promise.reject(new Error("should not load WebAssembly"));
const COLORS = { changed: ["#fde68a", "#d97706"], added: ["#bbf7d0", "#16a34a"],
  removed: ["#fecaca", "#dc2626"] } as DiffGraphs["colors"];

function graphs(extra: Partial<DiffGraphs> = {}): DiffGraphs {
  return {
    a: { svg: sampleSvg(), dot: "", too_large: false },
    b: { svg: sampleSvg().replace('class="node jv-node jv-equation"', 'class="node jv-node jv-equation jv-diff-changed"'),
      dot: "", too_large: false },
    pairs: [["e0", "e0"], ["in0", "in0"], ["e1", "out0"]], colors: COLORS, ...extra,
  };
}

function mountedGraphs(data: DiffGraphs, loader: GraphvizLoader = neverLoad, labels = { a: "#0 x:f32[3]", b: "#1 x:f32[8]" }) {
  const view = renderDiffGraphs(data, labels, loader);
  document.body.appendChild(view.element);
  return view;
}

const hover = (target: Element) => target.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));

describe("the graphs of a diff", () => {
  it("draws both programs side by side, with their labels and a legend of the table's colours", async () => {
    const view = mountedGraphs(graphs());
    await view.drawn;
    const canvases = Array.from(view.element.querySelectorAll<HTMLElement>(".jv-diff-canvas"));
    expect(canvases.map((c) => [c.dataset.side, c.dataset.state, c.dataset.renderer]))
      .toEqual([["a", "ready", "server"], ["b", "ready", "server"]]);
    expect(canvases.map((c) => c.querySelectorAll("svg g.node").length)).toEqual([6, 6]);
    expect(canvases[1].querySelectorAll("g.jv-diff-changed").length).toBe(1);
    expect(Array.from(view.element.querySelectorAll(".jv-diff-graph-title")).map((t) => t.textContent))
      .toEqual(["a #0 x:f32[3]", "b #1 x:f32[8]"]);
    const chips = Array.from(view.element.querySelectorAll<HTMLElement>(".jv-legend-chip[data-status]"));
    expect(chips.map((c) => [c.textContent, c.getAttribute("style")])).toEqual([
      ["changed", "background:#fde68a;border-color:#d97706"],
      ["added", "background:#bbf7d0;border-color:#16a34a"],
      ["removed", "background:#fecaca;border-color:#dc2626"]]);
    view.destroy();
  });

  it("outlines the matched node in the other graph on hover", async () => {
    const view = mountedGraphs(graphs());
    await view.drawn;
    const [a, b] = Array.from(view.element.querySelectorAll(".jv-diff-canvas svg"));
    hover(a.querySelector("#n-e1 text")!);
    expect(Array.from(a.querySelectorAll(".jv-pair")).map((g) => g.id)).toEqual(["n-e1"]);
    expect(Array.from(b.querySelectorAll(".jv-pair")).map((g) => g.id)).toEqual(["n-out0"]);
    hover(b.querySelector("#n-e0 polygon")!);
    expect(Array.from(a.querySelectorAll(".jv-pair")).map((g) => g.id)).toEqual(["n-e0"]);
    expect(Array.from(b.querySelectorAll(".jv-pair")).map((g) => g.id)).toEqual(["n-e0"]);
    hover(b.querySelector("#n-fx0 text")!); // no match: only itself
    expect(a.querySelectorAll(".jv-pair").length).toBe(0);
    view.element.querySelector(".jv-diff-canvas")!.dispatchEvent(new MouseEvent("mouseleave"));
    view.destroy();
  });

  it("lays the DOT out in the browser without the server's SVG", async () => {
    const seen: string[] = [];
    const loader = async () => ({ renderDot: async (dot: string) => { seen.push(dot); return sampleSvg(); } });
    const view = mountedGraphs(graphs({ a: { svg: "", dot: "digraph a {}", too_large: false },
      b: { svg: "", dot: "digraph b {}", too_large: false } }), loader);
    await view.drawn;
    expect(seen.sort()).toEqual(["digraph a {}", "digraph b {}"]);
    expect(Array.from(view.element.querySelectorAll<HTMLElement>(".jv-diff-canvas")).map((c) => c.dataset.renderer))
      .toEqual(["wasm", "wasm"]);
    view.destroy();
  });

  it("says why a graph is not drawn, and keeps the other", async () => {
    const view = mountedGraphs(graphs({ a: { svg: "", dot: "", too_large: true } }));
    await view.drawn;
    const [a, b] = Array.from(view.element.querySelectorAll<HTMLElement>(".jv-diff-canvas"));
    expect(a.dataset.state).toBe("error");
    expect(a.textContent).toContain("too large to lay out");
    expect(b.dataset.state).toBe("ready");
    view.destroy();
  });

  it("keeps labels and SVG payloads inert", async () => {
    for (const payload of XSS_PAYLOADS) {
      const svg = sampleSvg().replace("</g></svg>", `<script>alert(1)</script><foreignObject>${XSS}</foreignObject></g></svg>`);
      const view = mountedGraphs(graphs({ a: { svg, dot: "", too_large: false },
        colors: { changed: [payload, payload] } }), neverLoad, { a: payload, b: payload });
      await view.drawn;
      for (const tag of ["img", "script", "iframe", "foreignObject", "a", "style"]) {
        expect(view.element.querySelector(tag), `${payload}: <${tag}>`).toBeNull();
      }
      expect(view.element.querySelector(".jv-diff-graph-title")!.textContent).toBe(`a ${payload}`);
      expect(view.element.querySelector(".jv-legend-chip")!.getAttribute("style"))
        .toBe("background:transparent;border-color:transparent");
      view.element.remove();
      view.destroy();
    }
  });

  it("pairs nodes both ways and accepts only hex colours", () => {
    const p = partnersOf([["e0", "e0"], ["e1.unchanged", "e1.unchanged"], ["e1.unchanged", "e5"]]);
    expect(p.a.get("e1.unchanged")).toEqual(["e1.unchanged", "e5"]);
    expect(p.b.get("e5")).toEqual(["e1.unchanged"]);
    expect([safeColour("#abc"), safeColour("#a1b2c3"), safeColour("red;x:url(y)")])
      .toEqual(["#abc", "#a1b2c3", "transparent"]);
  });
});
