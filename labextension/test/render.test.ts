import { describe, expect, it } from "vitest";
import { graphvizLoader } from "../src/graphvizLoader";
import { renderGraph } from "../src/render";
import { FakeModel, sampleSvg } from "./fixtures";

describe("renderGraph", () => {
  const neverLoad = () => Promise.reject(new Error("should not load WebAssembly"));

  it("uses the server's SVG when there is one", async () => {
    const out = await renderGraph("digraph {}", sampleSvg(), neverLoad);
    expect(out.renderer).toBe("server");
    expect(out.svg.querySelectorAll("g.node").length).toBe(6);
  });

  it("lays the DOT out in the browser otherwise, and sanitizes the result", async () => {
    const seen: string[] = [];
    const loader = async () => ({
      renderDot: async (dot: string) => {
        seen.push(dot);
        return sampleSvg().replace("<g id=\"jv-graph\"", "<script>alert(1)</script><g id=\"jv-graph\"");
      },
    });
    const out = await renderGraph("digraph { a }", "", loader);
    expect(seen).toEqual(["digraph { a }"]);
    expect(out.renderer).toBe("wasm");
    expect(out.svg.querySelector("script")).toBeNull();
  });

  it("fails clearly with nothing to draw", async () => {
    await expect(renderGraph("", "", neverLoad)).rejects.toThrow(/nothing to draw/);
  });
});

describe("graphvizLoader", () => {
  it("asks the kernel for the module and fails clearly when none comes", async () => {
    delete (globalThis as any).__jitvizGraphviz;
    const model = new FakeModel({});
    const load = graphvizLoader(model, 50);
    const pending = load();
    expect(model.sent).toEqual([{ type: "graphviz" }]);
    await expect(pending).rejects.toThrow(/did not send/);
  });

  it("reports a kernel without the module", async () => {
    delete (globalThis as any).__jitvizGraphviz;
    const model = new FakeModel({});
    const handlers: ((...a: unknown[]) => void)[] = [];
    model.on = (event: string, fn: (...a: unknown[]) => void) => { if (event === "msg:custom") handlers.push(fn); };
    const pending = graphvizLoader(model, 1000)();
    for (const fn of handlers) fn({ type: "graphviz" }, []);
    await expect(pending).rejects.toThrow(/no Graphviz module/);
  });
});
