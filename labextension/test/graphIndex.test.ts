import { describe, expect, it } from "vitest";
import { clusterIdOf, edgeIndexOf, GraphIndex, nodeIdOf } from "../src/graphIndex";
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

  it("searches labels, primitives, variables and source", () => {
    expect(index.search("sin").map((n) => n.id)).toEqual(["e0"]);
    expect(index.search("z = y").map((n) => n.id)).toEqual(["e1.j0.e0"]);
    expect(index.search("line 8").map((n) => n.id)).toEqual(["e1.j0.e0"]);
    expect(index.search("   ")).toEqual([]);
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
