import { describe, expect, it } from "vitest";
import widget from "../src/index";
import { explorerState, FakeModel, XSS } from "./fixtures";

async function mounted(state = explorerState()) {
  const model = new FakeModel(state);
  const host = document.createElement("div");
  document.body.appendChild(host);
  const cleanup = widget.render({ model, el: host });
  const root = host.querySelector(".jv-explorer") as HTMLElement;
  for (let i = 0; i < 50 && root.dataset.state !== "ready"; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return { model, host, root, cleanup };
}

describe("explorer view", () => {
  it("draws the server's SVG and escapes the title", async () => {
    const { host, root } = await mounted();
    expect(root.dataset.state).toBe("ready");
    expect(root.dataset.renderer).toBe("server");
    expect(host.querySelectorAll(".jv-canvas g.node").length).toBe(6);
    expect(host.querySelector(".jv-title")!.textContent).toBe(XSS);
    expect(host.querySelector("img")).toBeNull();
  });

  it("opens the inspector on click, with the source line", async () => {
    const { host, model } = await mounted();
    const node = host.querySelector("#n-e0")!;
    node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(model.get("selected")).toBe("e0");
    expect(host.querySelector(".jv-inspector")!.textContent).toContain("line 7");
    expect(node.classList.contains("jv-selected")).toBe(true);
  });

  it("highlights producers and consumers on hover", async () => {
    const { host } = await mounted();
    host.querySelector("#n-e0 text")!.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    expect(host.querySelector("#n-e0")!.classList.contains("jv-hl")).toBe(true);
    expect(host.querySelector("#n-in0")!.classList.contains("jv-hl-producer")).toBe(true);
    expect(host.querySelector("#n-e1")!.classList.contains("jv-hl-consumer")).toBe(true);
    expect(host.querySelector("#x-1")!.classList.contains("jv-hl-edge")).toBe(true);
    expect(host.querySelector("#x-2")!.classList.contains("jv-hl-edge")).toBe(false);
  });

  it("expands a collapsed cluster on double-click", async () => {
    const { host, model } = await mounted();
    host.querySelector("#n-e1")!.dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    expect(model.get("collapsed")).toEqual([]);
    expect(model.saved.length).toBeGreaterThan(0);
  });

  it("searches, and expands clusters hiding matches on Enter", async () => {
    const { host, model } = await mounted();
    const search = host.querySelector(".jv-search") as HTMLInputElement;
    search.value = "mul";
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(host.querySelector("#n-e1")!.classList.contains("jv-match")).toBe(true);
    expect(host.querySelector(".jv-search-info")!.textContent).toContain("1 match");
    expect(model.get("collapsed")).toEqual([]);
  });

  it("shows the recompile reason and signature diff of the specialization", async () => {
    const { host } = await mounted();
    const info = host.querySelector(".jv-info")!.textContent!;
    expect(info).toContain("recompiled: argument 'x' changed from f32[3] to f32[4]");
    expect(host.querySelector(".jv-after")!.textContent).toBe("f32[4]");
  });

  it("warns about stale globals", async () => {
    const state = explorerState();
    (state.graph as any).stale = [{ name: XSS, kind: "global", traced: "1.0", now: "2.0" }];
    const { host } = await mounted(state);
    const line = host.querySelector(".jv-warn-line")!;
    expect(line.textContent).toContain(`stale global ${XSS}: 1.0 when traced, now 2.0`);
    expect(host.querySelector("img")).toBeNull();
  });

  it("switches stage and specialization through the model", async () => {
    const { host, model } = await mounted();
    const stage = host.querySelector(".jv-stage") as HTMLSelectElement;
    stage.value = "fuse";
    stage.dispatchEvent(new Event("change"));
    expect(model.get("stage")).toBe("fuse");
    const rows = host.querySelectorAll("li.jv-event");
    (rows[0] as HTMLElement).click(); // a trace of x:f32[3] selects specialization 0
    expect(model.get("specialization")).toBe(0);
  });

  it("matches source text only with src:", async () => {
    const { host } = await mounted();
    const search = host.querySelector(".jv-search") as HTMLInputElement;
    search.value = "jnp";
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(host.querySelectorAll(".jv-match").length).toBe(0);
    search.value = "src:jnp";
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(host.querySelector("#n-e0")!.classList.contains("jv-match")).toBe(true);
    expect(host.querySelector(".jv-search-info")!.textContent).toContain("by source");
  });

  it("offers the calls made after its cell ran instead of merging them", async () => {
    const { host, model } = await mounted({ ...explorerState(), pending: 3 });
    const bar = host.querySelector(".jv-pending") as HTMLElement;
    expect(bar.hidden).toBe(false);
    expect(bar.textContent).toContain("3 newer events since this cell ran");
    (bar.querySelector("button") as HTMLButtonElement).click();
    expect(model.sent).toContainEqual({ type: "refresh" });
    model.trigger("pending", 0);
    expect(bar.hidden).toBe(true);
    model.trigger("updated", `updated after the cell ran: showing 3 later events ${XSS}`);
    expect(host.querySelector(".jv-updated")!.textContent).toContain("updated after the cell ran");
    expect(host.querySelector("img")).toBeNull();
  });

  it("redraws when the model's SVG changes", async () => {
    const { host, model, root } = await mounted();
    model.trigger("svg", (model.get("svg") as string).replace(/<g id="n-fx0"[^]*?<\/g>/, ""));
    await new Promise((r) => setTimeout(r, 20));
    expect(root.dataset.state).toBe("ready");
    expect(host.querySelectorAll(".jv-canvas g.node").length).toBe(5);
  });
});

describe("monitor view", () => {
  it("lists functions and events", () => {
    const model = new FakeModel({
      widget: "monitor", title: "jit events", events: explorerState().events,
      functions: [{ name: XSS, hits: 3, misses: 2, entries: 2, traces: 2, compiles: 2 }],
    });
    const host = document.createElement("div");
    widget.render({ model, el: host });
    expect(host.querySelector(".jv-functions")!.textContent).toContain(XSS);
    expect(host.querySelectorAll("li.jv-event").length).toBe(4);
    expect(host.querySelector("img")).toBeNull();
  });
});
