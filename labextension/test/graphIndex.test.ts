import { describe, expect, it } from "vitest";
import { clusterIdOf, edgeIndexOf, expandGraph, GraphIndex, nodeIdOf } from "../src/graphIndex";
import type { EquationNode, Graph } from "../src/types";
import { sampleGraph, sampleView } from "./fixtures";

describe("GraphIndex", () => {
  const index = new GraphIndex(sampleGraph(), sampleView());

  it("finds producers and consumers in the view", () => {
    const around = index.neighbours("e0");
    expect(around.producers.sort()).toEqual(["in0", "lit0"]);
    expect(around.consumers).toEqual(["e1"]);
    expect(around.edges.sort()).toEqual([0, 1, 3]);
  });

  it("maps hidden nodes to the collapsed cluster that stands for them", () => {
    expect(index.representative("e1.j0.e0")).toBe("e1");
    expect(index.representative("e0")).toBe("e0");
    expect(index.ancestors("e1.j0.e0")).toEqual(["e1"]);
    expect(index.clustersHiding(["e1.j0.e0", "e0"])).toEqual(["e1"]);
  });

  it("searches primitives and variables; source lines only when asked", () => {
    expect(index.search("sin").map((n) => n.id)).toEqual(["e0"]);
    expect(index.search("z = y").map((n) => n.id)).toEqual([]);
    expect(index.search("src:z = y").map((n) => n.id)).toEqual(["e1.j0.e0"]);
    expect(index.searchRanked("source: Y = JNP").mode).toBe("source");
    expect(index.search("line 8").map((n) => n.id)).toEqual(["e1.j0.e0"]);
    expect(index.search("   ")).toEqual([]);
  });

  it("ranks an exact primitive before names containing it, and ignores the shared line", () => {
    const line = { file: "f.py", line: 3, function: "f", code: "y = jnp.exp(-2.0 * x)" };
    const graph = {
      ...sampleGraph(),
      nodes: [
        { id: "a", kind: "equation", label: "mul(-2.0, \u00b7)", cluster: null, primitive: "mul",
          outputs: [{ name: "b", type: "f32[]", shape: [], dtype: "float32" }], source: line },
        { id: "c", kind: "equation", label: "expand_dims", cluster: null, primitive: "expand_dims",
          outputs: [{ name: "d", type: "f32[1]", shape: [1], dtype: "float32" }], source: line },
        { id: "e", kind: "equation", label: "exp", cluster: null, primitive: "exp",
          inputs: [{ name: "b", type: "f32[]", shape: [], dtype: "float32" }],
          outputs: [{ name: "f", type: "f32[]", shape: [], dtype: "float32" }], source: line },
      ],
    } as Graph;
    const idx = new GraphIndex(graph, { nodes: ["a", "c", "e"], clusters: [], edges: [] });
    expect(idx.search("exp").map((n) => n.id)).toEqual(["e", "c"]);
    expect(idx.search("src:exp").map((n) => n.id)).toEqual(["a", "c", "e"]);
    expect(idx.search("line 3").map((n) => n.id)).toEqual(["a", "c", "e"]);
    // a variable: its producer first, then its consumers
    expect(idx.search("b").map((n) => n.id)).toEqual(["a", "e"]);
  });

  it("expands the compact graph the widget syncs", () => {
    const g = expandGraph({
      format: 2, title: "t", kernels: {}, collapsed: [], stats: { equations: 1, nodes: 1, edges: 0 },
      diff: null, sources: [{ file: "f.py", line: 2, function: "f", code: "y = x" }],
      types: [{ type: "f32[3]", shape: [3], dtype: "float32" }],
      nodes: [{ id: "e0", kind: "equation", label: "sin", primitive: "sin", source: 0,
        inputs: [["a", 0], ["2.0", 0, { literal: true }]], outputs: [["b", 0]] }],
    });
    const eqn = g.nodes[0] as EquationNode;
    expect(eqn.kind).toBe("equation");
    expect(eqn.cluster).toBeNull();
    expect(eqn.source!.code).toBe("y = x");
    expect(eqn.inputs![0]).toEqual({ name: "a", type: "f32[3]", shape: [3], dtype: "float32" });
    expect(eqn.inputs![1].literal).toBe(true);
    expect(g.edges).toEqual([]);
    expect(expandGraph(JSON.stringify(sampleGraph()))
      .nodes.length).toBe(sampleGraph().nodes.length);
  });

  it("reads ids off Graphviz's SVG elements", () => {
    const g = document.createElementNS("http://www.w3.org/2000/svg", "g");
    g.setAttribute("id", "n-e1.j0.e0");
    expect(nodeIdOf(g)).toBe("e1.j0.e0");
    g.setAttribute("id", "x-12");
    expect(edgeIndexOf(g)).toBe(12);
    expect(nodeIdOf(g)).toBeNull();
    g.setAttribute("id", "c-e1");
    expect(clusterIdOf(g)).toBe("e1");
  });
});
