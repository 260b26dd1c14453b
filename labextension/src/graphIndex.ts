// Lookups over the graph model and the current view: who produces and consumes a node,
// which clusters enclose it, what a search matches.

import type { Graph, GraphNode, GraphView } from "./types";

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

  /** Nodes whose label, primitive, variable names, source or value contain `query`. */
  search(query: string): GraphNode[] {
    const q = query.trim().toLowerCase();
    if (!q) return [];
    if (!this.texts) this.texts = this.graph.nodes.map(searchText);
    return this.graph.nodes.filter((_, i) => this.texts![i].includes(q));
  }

  private texts: string[] | null = null;

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

export function searchText(node: GraphNode): string {
  const parts: unknown[] = [node.label, node.primitive, node.var, node.name, node.value,
    node.text, node.kernel, node.source?.code, node.source?.line && `line ${node.source.line}`,
    ...(node.outputs ?? []).map((o) => o.name), ...(node.inputs ?? []).map((o) => o.name)];
  return parts.filter(Boolean).join("\n").toLowerCase();
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
