// A small graph model and its Graphviz SVG, shaped like what jitviz/explorer writes.
import type { AnyModel } from "@anywidget/types";
import type { Graph, GraphView } from "../src/types";

export const XSS = "<img src=x onerror=alert(1)>";

/** tests/helpers.py's XSS_PAYLOADS (test_explorer_widget.py checks they are the same). */
export const XSS_PAYLOADS: string[] = [
  "<img src=x onerror=alert(1)>",
  "<script>alert(1)</script>",
  "\"><svg onload=alert(1)>",
  "'><iframe src=\"javascript:alert(1)\">",
  "</title><script>alert(1)</script>",
  "</text><image href=x onerror=alert(1)/>",
  "<!--<img src=x onerror=alert(1)>-->",
  "]]><img src=x onerror=alert(1)>",
  "&lt;img src=x onerror=alert(1)&gt;",
  "\\\" onmouseover=\"alert(1)",
  "<a href=javascript:alert(1) onclick=alert(1)>x</a><style>*{}</style>",
  "\"]; x [label=<<img src=x onerror=alert(1)>>]; \""
]; // end of XSS_PAYLOADS

export function sampleGraph(): Graph {
  return {
    title: XSS,
    nodes: [
      { id: "in0", kind: "input", label: "x", cluster: null, var: "a", type: "f32[3]", shape: [3], dtype: "float32" },
      { id: "lit0", kind: "constant", label: "g", cluster: null, name: "g", value: "0.5", origin: "global", stale: true, now: "2.0", type: "f32[]" },
      { id: "e0", kind: "equation", label: "sin", cluster: null, primitive: "sin", params: { accuracy: "None" },
        inputs: [{ name: "a", type: "f32[3]", shape: [3], dtype: "float32" }],
        outputs: [{ name: "b", type: "f32[3]", shape: [3], dtype: "float32" }],
        source: { file: "/tmp/ipykernel_1/123.py", line: 7, function: XSS, code: `y = jnp.sin(x)  # ${XSS}` },
        kernel: "k0" },
      { id: "e1", kind: "cluster", label: "cond", cluster: null, primitive: "cond", size: 1 },
      { id: "e1.j0.e0", kind: "equation", label: "mul", cluster: "e1", primitive: "mul",
        source: { file: "f.py", line: 8, function: "f", code: "z = y * 2" } },
      { id: "out0", kind: "output", label: "out 0", cluster: null, var: "c", type: "f32[3]" },
      { id: "fx0", kind: "effect", label: `print — ran at trace only, skipped on 3 cache hits`, cluster: null,
        effect: "print", text: XSS, skipped: 3, source: { file: "f.py", line: 6, function: "f", code: `print("${XSS}")` } },
    ],
    edges: [
      { id: "x0", source: "in0", target: "e0", kind: "data", label: "a" },
      { id: "x1", source: "e0", target: "e1.j0.e0", kind: "data", label: "b" },
      { id: "x2", source: "e1.j0.e0", target: "out0", kind: "data", label: "c" },
      { id: "x3", source: "lit0", target: "e0", kind: "constant", label: "0.5" },
    ],
    kernels: { k0: { name: "k0", source: `def k0(a):\n    return np.sin(a)  # ${XSS}`, equations: 1, reused: false, lines: [] } },
    collapsed: ["e1"],
    stats: { equations: 2, nodes: 7, edges: 4 },
    diff: null,
  };
}

/** The view with cluster e1 collapsed: edges rerouted to it. */
export function sampleView(): GraphView {
  return {
    nodes: ["in0", "lit0", "e0", "e1", "out0", "fx0"],
    clusters: [],
    edges: [["in0", "e0", "data"], ["e0", "e1", "data"], ["e1", "out0", "data"], ["lit0", "e0", "constant"]],
  };
}

function node(id: string, kind: string, text: string): string {
  return `<g id="n-${id}" class="node jv-node jv-${kind}"><title>${id}</title>` +
    `<polygon points="0,0 10,0 10,10 0,10"/><text>${text}</text></g>`;
}

export function sampleSvg(): string {
  return `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="200pt" height="300pt" viewBox="0 0 200 300">` +
    `<g id="jv-graph" class="graph">` +
    node("in0", "input", "x") + node("lit0", "constant", "g") + node("e0", "equation", "sin") +
    node("e1", "cluster", "cond") + node("out0", "output", "c") +
    node("fx0", "effect", "&lt;img src=x onerror=alert(1)&gt;") +
    `<g id="x-0" class="edge"><path d="M0,0L1,1"/></g><g id="x-1" class="edge"><path d="M0,0L1,1"/></g>` +
    `<g id="x-2" class="edge"><path d="M0,0L1,1"/></g><g id="x-3" class="edge"><path d="M0,0L1,1"/></g>` +
    `</g></svg>`;
}

type Handler = (...args: any[]) => void;

/** A stand-in for anywidget's model (of any widget's traits: `get` returns `any`). */
export class FakeModel implements AnyModel {
  readonly widget_manager = { get_model: () => Promise.reject(new Error("no widget manager in tests")) };
  readonly saved: Record<string, unknown>[] = [];
  private readonly handlers = new Map<string, Handler[]>();
  constructor(public state: Record<string, any>) {}
  get(name: string): any {
    return this.state[name];
  }
  set(name: string, value: unknown) {
    this.state[name] = value;
  }
  save_changes() {
    this.saved.push({ ...this.state });
  }
  on(event: string, fn: Handler) {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), fn]);
  }
  off(event: string, fn: Handler) {
    this.handlers.set(event, (this.handlers.get(event) ?? []).filter((f) => f !== fn));
  }
  readonly sent: object[] = [];
  send(content: object) {
    this.sent.push(content);
  }
  /** A custom message from the kernel (msg:custom). */
  receive(content: object, buffers: ArrayBuffer[] = []) {
    for (const fn of this.handlers.get("msg:custom") ?? []) fn(content, buffers);
  }
  trigger(name: string, value: unknown) {
    this.state[name] = value;
    for (const fn of this.handlers.get(`change:${name}`) ?? []) fn();
  }
}

export function explorerState(): Record<string, unknown> {
  return {
    widget: "explorer", title: XSS, graph: sampleGraph(), view: sampleView(), dot: "digraph {}",
    svg: sampleSvg(), renderer: "dot", jaxpr: "{ lambda ; a:f32[3]. let b = sin a in (b,) }",
    stages: [{ name: "traced", equations: 2 }, { name: "fuse", equations: 1 }], stage: "traced",
    specializations: [
      { index: 0, signature: "x:f32[3]", hits: 3, backend: "cpu", compiled: true, kernels: 1, reason: "first call", diff: [] },
      { index: 1, signature: "x:f32[4]", hits: 0, backend: "cpu", compiled: true, kernels: 1,
        reason: "argument 'x' changed from f32[3] to f32[4]", diff: [{ argument: "x", before: "f32[3]", after: "f32[4]" }] },
    ],
    specialization: 1,
    events: [
      { index: 0, kind: "trace", time: 1, signature: "x:f32[3]", function: "f", message: "traced", count: 1 },
      { index: 1, kind: "cache_hit", time: 2, signature: "x:f32[3]", function: "f", message: "ran", count: 3 },
      { index: 2, kind: "recompile", time: 3, signature: "x:f32[4]", function: "f", message: "m", count: 1, reason: "argument 'x' changed from f32[3] to f32[4]" },
      { index: 3, kind: "side_effect_lost", time: 4, signature: "x:f32[3]", function: "f", message: XSS, count: 2 },
    ],
    collapsed: ["e1"], selected: "", error: "",
  };
}
