// Lookups over the graph model and the current view: who produces and consumes a node,
// which clusters enclose it, what a search matches.

import type { AnyNodeFields, Graph, GraphNode, GraphView, SourceLine } from "./types";

export interface Neighbours {
  producers: string[];
  consumers: string[];
  edges: number[]; // indexes into view.edges
}

export class GraphIndex {
  readonly byId = new Map<string, GraphNode>();
  private readonly incoming = new Map<string, number[]>();
  private readonly outgoing = new Map<string, number[]>();
  private readonly visible: Set<string>;

  constructor(readonly graph: Graph, readonly view: GraphView) {
    for (const node of graph.nodes) this.byId.set(node.id, node);
    view.edges.forEach(([source, target], i) => {
      push(this.outgoing, source, i);
      push(this.incoming, target, i);
    });
    this.visible = new Set(view.nodes);
  }

  node(id: string): GraphNode | undefined {
    return this.byId.get(id);
  }

  isVisible(id: string): boolean {
    return this.visible.has(id);
  }

  /** Enclosing clusters, outermost first. */
  ancestors(id: string): string[] {
    const chain: string[] = [];
    let parent = this.byId.get(id)?.cluster ?? null;
    while (parent !== null && this.byId.has(parent)) {
      chain.push(parent);
      parent = this.byId.get(parent)!.cluster;
    }
    return chain.reverse();
  }

  /** The visible node that stands for `id` (itself, or the collapsed cluster hiding it). */
  representative(id: string): string | null {
    if (this.visible.has(id)) return id;
    for (const cluster of this.ancestors(id)) if (this.visible.has(cluster)) return cluster;
    return null;
  }

  neighbours(id: string): Neighbours {
    const edges = [...(this.incoming.get(id) ?? []), ...(this.outgoing.get(id) ?? [])];
    return {
      producers: (this.incoming.get(id) ?? []).map((i) => this.view.edges[i][0]),
      consumers: (this.outgoing.get(id) ?? []).map((i) => this.view.edges[i][1]),
      edges,
    };
  }

  /** Nodes matching `query`, best first (see `searchRanked`). */
  search(query: string): GraphNode[] {
    return this.searchRanked(query).nodes;
  }

  /** Search, ranked: an exact primitive or variable name first, then names that contain the
   * query (primitives, labels, variables, constants' names, kernels), in graph order. Other
   * text (values, printed text, params) only when no name matches. Source lines only when
   * asked: `src:TEXT` (source code containing TEXT) or `line 12` (that line). */
  searchRanked(query: string): SearchResult {
    const q = query.trim().toLowerCase();
    if (!q) return { nodes: [], mode: "names" };
    const nodes = this.graph.nodes;
    const line = /^(?:line|l)\s*:?\s*(\d+)$/.exec(q);
    if (line) {
      const n = Number(line[1]);
      return { nodes: nodes.filter((node) => sourceOf(node)?.line === n), mode: "line" };
    }
    const src = /^(?:src|source)\s*:\s*(.*)$/.exec(q);
    if (src) {
      const text = src[1].trim();
      return { nodes: text ? nodes.filter((node) =>
        (sourceOf(node)?.code ?? "").toLowerCase().includes(text)) : [], mode: "source" };
    }
    if (!this.keys) this.keys = nodes.map(searchKeys);
    const exact: GraphNode[] = [];
    const partial: GraphNode[] = [];
    const other: GraphNode[] = [];
    nodes.forEach((node, i) => {
      const keys = this.keys![i];
      if (keys.exact.includes(q)) exact.push(node);
      else if (keys.consumes.includes(q) || keys.names.some((name) => name.includes(q))) {
        partial.push(node);
      } else if (keys.other.includes(q)) other.push(node);
    });
    if (exact.length || partial.length) return { nodes: [...exact, ...partial], mode: "names" };
    return { nodes: other, mode: "text" };
  }

  private keys: SearchKeys[] | null = null;

  /** Clusters to expand so that every node in `ids` is visible. */
  clustersHiding(ids: string[]): string[] {
    const hidden = new Set<string>();
    for (const id of ids) {
      for (const cluster of this.ancestors(id)) {
        if (!this.view.clusters.includes(cluster)) hidden.add(cluster);
      }
    }
    return [...hidden];
  }

  clusterIds(): string[] {
    return this.graph.nodes.filter((n) => n.kind === "cluster").map((n) => n.id);
  }
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export interface SearchResult {
  nodes: GraphNode[];
  mode: "names" | "text" | "source" | "line";
}

interface SearchKeys {
  exact: string[]; // primitive, variable names it defines, constant names
  consumes: string[]; // variable names it reads
  names: string[]; // what a name search looks into (substrings)
  other: string; // everything else but the source line
}

function lower(values: unknown[]): string[] {
  return values.filter((v) => v !== undefined && v !== null && v !== "")
    .map((v) => String(v).toLowerCase());
}

/** The user's source line of a node, for the kinds that have one. */
export function sourceOf(node: GraphNode): SourceLine | null | undefined {
  return "source" in node ? node.source : undefined;
}

export function searchKeys(graphNode: GraphNode): SearchKeys {
  const node: AnyNodeFields = graphNode; // every kind's fields, absent ones undefined
  const outputs = (node.outputs ?? []).map((o) => o.name);
  const inputs = (node.inputs ?? []).filter((o) => !o.literal).map((o) => o.name);
  const exact = lower([node.primitive, node.var, node.name, ...outputs,
    node.kind === "cluster" ? undefined : node.label]);
  const names = lower([node.label, node.primitive, node.var, node.name, node.kernel, ...outputs]);
  const other = lower([node.value, node.text, node.summary, node.effect,
    ...Object.values(node.params ?? {})]).join("\n");
  return { exact, consumes: lower(inputs), names, other };
}

/** Everything searchable about a node, source line included (for `src:`). */
export function searchText(graphNode: GraphNode): string {
  const node: AnyNodeFields = graphNode;
  const parts: unknown[] = [node.label, node.primitive, node.var, node.name, node.value,
    node.text, node.kernel, node.source?.code, node.source?.line && `line ${node.source.line}`,
    ...(node.outputs ?? []).map((o) => o.name), ...(node.inputs ?? []).map((o) => o.name)];
  return parts.filter(Boolean).join("\n").toLowerCase();
}

/** The graph as the widget syncs it (jitviz/explorer/graph.py, `compact_graph`: source lines
 * and operand types stored once, referred to by index) back in the shape the views read. */
export function expandGraph(raw: any): Graph {
  if (typeof raw === "string") raw = JSON.parse(raw); // how the widget syncs it
  if (!raw || raw.format !== 2) return raw as Graph;
  const sources: unknown[] = raw.sources ?? [];
  const types: Record<string, unknown>[] = raw.types ?? [];
  const operand = ([name, t, extra]: [string, number, Record<string, unknown>?]) =>
    ({ name, ...(types[t] ?? {}), ...(extra ?? {}) });
  const nodes = (raw.nodes as any[]).map((node) => {
    const out: any = { ...node, cluster: node.cluster ?? null };
    if (typeof node.source === "number") out.source = sources[node.source];
    if (node.inputs) out.inputs = node.inputs.map(operand);
    if (node.outputs) out.outputs = node.outputs.map(operand);
    return out as GraphNode;
  });
  return { ...raw, nodes, edges: raw.edges ?? [] } as Graph;
}

/** Node ids inside SVG elements are `n-<id>`. */
export function nodeIdOf(element: Element): string | null {
  const id = element.getAttribute("id");
  return id && id.startsWith("n-") ? id.slice(2) : null;
}

/** Edge ids inside SVG elements are `x-<index into view.edges>`. */
export function edgeIndexOf(element: Element): number | null {
  const id = element.getAttribute("id");
  if (!id || !id.startsWith("x-")) return null;
  const n = Number(id.slice(2));
  return Number.isInteger(n) ? n : null;
}

/** Cluster subgraphs are `c-<id>`. */
export function clusterIdOf(element: Element): string | null {
  const id = element.getAttribute("id");
  return id && id.startsWith("c-") ? id.slice(2) : null;
}
