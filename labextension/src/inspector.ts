// The side panel for the selected node: what it computes, its operands' shapes and dtypes,
// the user's source line, and the kernel it was compiled into (with the generated source).

import { append, el } from "./dom";
import { sourceOf } from "./graphIndex";
import type { ClusterNode, ConstantNode, EffectNode, EquationNode, Graph, GraphNode, KernelInfo,
  Operand, SourceLine } from "./types";

export interface InspectorActions {
  toggleCluster?: (id: string) => void;
  isCollapsed?: (id: string) => boolean;
}

export function renderInspector(node: GraphNode | undefined, graph: Graph,
                                actions: InspectorActions = {}): HTMLElement {
  const panel = el("div", { class: "jv-inspector-body" });
  if (!node) {
    append(panel, el("p", { class: "jv-hint" },
      "Click a node to inspect it. Drag or scroll to pan, Ctrl+scroll to zoom, double-click " +
      "a cluster to expand or collapse it."));
    return panel;
  }
  append(panel, el("h3", { class: "jv-inspector-title" }, node.label));
  append(panel, el("div", { class: `jv-badge jv-badge-${node.kind}` }, kindText(node)));
  const operation = node.kind === "equation" || node.kind === "cluster" ? node : undefined;
  if (operation?.changed === "added") {
    append(panel, el("div", { class: "jv-badge jv-badge-added" }, "new in this stage"));
  }
  if (node.kind === "cluster") append(panel, clusterSection(node, actions));
  if (node.kind === "constant") append(panel, constantSection(node));
  if (node.kind === "effect") append(panel, effectSection(node));
  if (node.kind === "input" || node.kind === "output") {
    append(panel, table([["variable", node.var ?? ""], ["type", node.type ?? ""],
      ["shape", shapeText(node.shape)], ["dtype", node.dtype ?? ""]]));
  }
  if (operation) append(panel, ...operationSections(operation));
  const source = sourceOf(node);
  if (source) append(panel, sourceSection(source));
  const kernel = kernelOf(node, graph);
  if (kernel) append(panel, kernelSection(kernel));
  return panel;
}

function kindText(node: GraphNode): string {
  if (node.kind === "equation") return `equation · ${node.primitive ?? ""}`;
  if (node.kind === "cluster") {
    if (node.role === "block") return "block of consecutive equations";
    if (node.role === "kernel") return "compiled kernel";
    if (node.role === "body") return "sub-jaxpr";
    return `cluster · ${node.primitive ?? ""}`;
  }
  if (node.kind === "constant") return `${node.origin ?? ""} constant`;
  if (node.kind === "effect") return `side effect · ${node.effect ?? ""}`;
  return node.inner ? `${node.kind} of a sub-jaxpr` : node.kind;
}

/** An equation's (or a cluster's) params and operands. */
function operationSections(node: EquationNode | ClusterNode): HTMLElement[] {
  const sections: HTMLElement[] = [];
  if (node.params && Object.keys(node.params).length) {
    sections.push(section("Params", table(Object.entries(node.params))));
  }
  if (node.inputs?.length) sections.push(section("Inputs", operandTable(node.inputs)));
  if (node.outputs?.length) sections.push(section("Outputs", operandTable(node.outputs)));
  return sections;
}

function section(title: string, body: Node): HTMLElement {
  return el("section", { class: "jv-section" }, el("h4", {}, title), body);
}

function table(rows: [string, string][]): HTMLTableElement {
  const t = el("table", { class: "jv-table" });
  for (const [key, value] of rows) append(t, el("tr", {}, el("th", {}, key), el("td", {}, value)));
  return t;
}

function operandTable(operands: Operand[]): HTMLTableElement {
  const t = el("table", { class: "jv-table jv-operands" },
    el("tr", {}, el("th", {}, "name"), el("th", {}, "shape"), el("th", {}, "dtype")));
  for (const op of operands) {
    const name = op.literal ? `${op.name} (literal${op.origin ? `, ${op.origin}` : ""})` : op.name;
    append(t, el("tr", {}, el("td", {}, name), el("td", {}, shapeText(op.shape)),
      el("td", {}, op.dtype)));
  }
  return t;
}

export function shapeText(shape: number[] | undefined): string {
  return shape ? `(${shape.join(", ")}${shape.length === 1 ? "," : ""})` : "";
}

function sourceSection(src: SourceLine): HTMLElement {
  const where = (src.where ?? `${shortFile(src.file)}, line ${src.line}`) +
    (src.function ? ` in ${src.function}` : "");
  return section("Source", el("div", { class: "jv-source" },
    el("div", { class: "jv-source-where", title: src.file }, where),
    el("pre", { class: "jv-code" }, el("span", { class: "jv-lineno" }, `${src.line}  `),
      src.code || "(source not available)")));
}

export function shortFile(path: string): string {
  if (!path) return "";
  if (/[\\/]ipykernel_\d+[\\/]\d+\.py$/.test(path)) return "a notebook cell";
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

function constantSection(node: ConstantNode): HTMLElement {
  const rows: [string, string][] = [["name", node.name ?? node.label],
    ["origin", node.origin ?? ""], ["value baked in", node.value ?? ""],
    ["type", node.type ?? ""]];
  const body = el("div", {}, table(rows));
  if (node.stale) {
    append(body, el("div", { class: "jv-warning" },
      `Stale: ${node.name ?? node.label} is now ${node.now ?? "different"}, but the compiled ` +
      "code still uses the value baked in when it was traced."));
  }
  return section("Constant", body);
}

function effectSection(node: EffectNode): HTMLElement {
  return section("What happened while tracing", el("div", {},
    el("p", { class: "jv-warning" }, node.label),
    el("pre", { class: "jv-code" }, node.text ?? "")));
}

function clusterSection(node: ClusterNode, actions: InspectorActions): HTMLElement {
  const body = el("div", {}, table([["equations inside", String(node.size ?? 0)]]));
  if (node.summary) append(body, el("p", {}, node.summary));
  if (actions.toggleCluster) {
    const collapsed = actions.isCollapsed?.(node.id) ?? true;
    const button = el("button", { class: "jv-button", type: "button" },
      collapsed ? "Expand" : "Collapse");
    button.addEventListener("click", () => actions.toggleCluster!(node.id));
    append(body, button);
  }
  return section("Cluster", body);
}

export function kernelOf(node: GraphNode, graph: Graph): KernelInfo | undefined {
  const name = node.kind === "equation" || node.kind === "cluster" ? node.kernel : undefined;
  return name ? graph.kernels?.[name] : undefined;
}

function kernelSection(kernel: KernelInfo): HTMLElement {
  const facts = `${kernel.equations} equation${kernel.equations === 1 ? "" : "s"}` +
    (kernel.reused ? ", reused from the kernel cache" : "");
  return section(`Kernel ${kernel.name}`, el("div", {},
    el("p", {}, facts),
    widening(el("details", { class: "jv-kernel" }, el("summary", {}, "generated source"),
      el("pre", { class: "jv-code jv-code-wide" }, kernel.source || "(no source)")))));
}

/** An open <details> of code widens the inspector it is in (the code is not wrapped). */
function widening(details: HTMLDetailsElement): HTMLDetailsElement {
  details.addEventListener("toggle", () => {
    details.closest(".jv-inspector")?.classList.toggle("jv-wide", details.open);
  });
  return details;
}
