// Graphviz compiled to WebAssembly (@viz-js/viz), bundled on its own into
// jitviz/static/graphviz.js: the explorer loads it only when the kernel has no `dot` binary.

import { instance } from "@viz-js/viz";

export async function renderDot(dot: string): Promise<string> {
  const viz = await instance();
  return viz.renderString(dot, { format: "svg", engine: "dot" });
}
