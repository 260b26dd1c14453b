// Turn the widget's DOT/SVG into a sanitized SVG element: the server's SVG when it sent one
// (Graphviz's `dot` was there), otherwise Graphviz compiled to WebAssembly, in the browser.

import { parseSvg } from "./sanitize";

export type RendererName = "server" | "wasm";

export interface Rendered {
  svg: SVGSVGElement;
  renderer: RendererName;
  millis: number;
}

/** The WebAssembly Graphviz module (jitviz/static/graphviz.js), however it is fetched. */
export interface GraphvizModule {
  renderDot(dot: string): Promise<string>;
}

export type GraphvizLoader = () => Promise<GraphvizModule>;

export async function renderGraph(dot: string, serverSvg: string,
                                  loadGraphviz: GraphvizLoader): Promise<Rendered> {
  const start = performance.now();
  if (serverSvg) {
    const svg = parseSvg(serverSvg);
    if (svg) return { svg, renderer: "server", millis: performance.now() - start };
  }
  if (!dot) throw new Error("nothing to draw");
  const text = await (await loadGraphviz()).renderDot(dot);
  const svg = parseSvg(text);
  if (!svg) throw new Error("Graphviz (WebAssembly) returned no SVG");
  return { svg, renderer: "wasm", millis: performance.now() - start };
}
