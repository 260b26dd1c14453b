import { describe, expect, it, vi } from "vitest";
import { renderInspector, shapeText, shortFile } from "../src/inspector";
import type { EquationNode } from "../src/types";
import { sampleGraph, XSS } from "./fixtures";

describe("inspector", () => {
  const graph = sampleGraph();
  const byId = (id: string) => graph.nodes.find((n) => n.id === id);

  it("shows an equation's primitive, params, operand shapes, source line and kernel", () => {
    const panel = renderInspector(byId("e0"), graph);
    const text = panel.textContent!;
    expect(text).toContain("equation · sin");
    expect(text).toContain("accuracy");
    expect(text).toContain("(3,)");
    expect(text).toContain("float32");
    expect(text).toContain("a notebook cell, line 7");
    expect(text).toContain("y = jnp.sin(x)");
    expect(text).toContain("Kernel k0");
    expect(panel.querySelector(".jv-kernel pre")!.textContent).toContain("np.sin(a)");
  });

  it("widens the inspector while a kernel's source is open", () => {
    const host = document.createElement("aside");
    host.className = "jv-inspector";
    host.appendChild(renderInspector(byId("e0"), graph));
    const details = host.querySelector(".jv-kernel") as HTMLDetailsElement;
    expect(details.querySelector("pre")!.classList.contains("jv-code-wide")).toBe(true);
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
    expect(host.classList.contains("jv-wide")).toBe(true);
    details.open = false;
    details.dispatchEvent(new Event("toggle"));
    expect(host.classList.contains("jv-wide")).toBe(false);
  });

  it("never turns user strings into markup", () => {
    for (const node of graph.nodes) {
      const panel = renderInspector(node, graph);
      expect(panel.querySelector("img")).toBeNull();
    }
    expect(renderInspector(byId("fx0"), graph).textContent).toContain(XSS);
  });

  it("names the notebook cell when there is one", () => {
    const eqn = byId("e0") as EquationNode;
    const cell = { ...eqn, source: { ...eqn.source!, where: "cell 4, line 7" } };
    expect(renderInspector(cell, graph).textContent).toContain("cell 4, line 7 in");
  });

  it("warns about stale constants", () => {
    const text = renderInspector(byId("lit0"), graph).textContent!;
    expect(text).toContain("Stale");
    expect(text).toContain("now 2.0");
  });

  it("offers to expand a collapsed cluster", () => {
    const toggle = vi.fn();
    const panel = renderInspector(byId("e1"), graph, { toggleCluster: toggle, isCollapsed: () => true });
    const button = panel.querySelector("button")!;
    expect(button.textContent).toBe("Expand");
    button.click();
    expect(toggle).toHaveBeenCalledWith("e1");
  });

  it("formats shapes and file names", () => {
    expect(shapeText([3])).toBe("(3,)");
    expect(shapeText([2, 3])).toBe("(2, 3)");
    expect(shapeText([])).toBe("()");
    expect(shortFile("/a/b/c.py")).toBe("c.py");
    expect(shortFile("/tmp/ipykernel_4242/1234567.py")).toBe("a notebook cell");
  });
});
