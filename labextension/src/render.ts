// Turn the widget's DOT/SVG into a sanitized SVG element: the server's SVG when it sent one
// (Graphviz's `dot` was there), otherwise Graphviz compiled to WebAssembly, in the browser.

import { parseSvg } from "./sanitize";

export type RendererName = "server" | "wasm";

export interface Rendered {
  svg: SVGSVGElement;
  renderer: RendererName;
  millis: number;
}

type VizInstance = { renderString(dot: string, options?: object): string };
let vizPromise: Promise<VizInstance> | null = null;

async function viz(): Promise<VizInstance> {
  if (!vizPromise) {
    vizPromise = import("@viz-js/viz").then((m) => m.instance() as Promise<VizInstance>);
  }
  return vizPromise;
}

export async function renderGraph(dot: string, serverSvg: string): Promise<Rendered> {
  const start = performance.now();
  if (serverSvg) {
    const svg = parseSvg(serverSvg);
    if (svg) return { svg, renderer: "server", millis: performance.now() - start };
  }
  if (!dot) throw new Error("nothing to draw");
  const text = (await viz()).renderString(dot, { format: "svg", engine: "dot" });
  const svg = parseSvg(text);
  if (!svg) throw new Error("Graphviz (WebAssembly) returned no SVG");
  return { svg, renderer: "wasm", millis: performance.now() - start };
}
