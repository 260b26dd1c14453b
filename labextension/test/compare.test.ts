import { describe, expect, it } from "vitest";
import { renderDiff, visibleRows } from "../src/compare";
import widget from "../src/index";
import type { DiffData, DiffRow } from "../src/types";
import { explorerState, FakeModel, sampleSvg, XSS, XSS_PAYLOADS } from "./fixtures";

function row(status: DiffRow["status"], a: string | null, b: string | null, extra: Partial<DiffRow> = {}): DiffRow {
  return { status, primitive: "sin", a, b, source: null, changes: [], note: "", subs: [], ...extra };
}

/** What widget.py's diff_data sends for branchy(f32[3]) -> branchy(f32[8]). */
function sampleDiff(text = "y = jnp.sin(x) * 2.0"): DiffData {
  const src = (line: number) => ({ file: "f.py", line, function: "branchy", code: text });
  const types = [{ field: "arg[0]", label: "operand 0", before: "f32[3]", after: "f32[8]" },
    { field: "out[0]", label: "result 0", before: "f32[3]", after: "f32[8]" }];
  return {
    a: "#0 x:f32[3] \u00b7 traced", b: "#1 x:f32[8] \u00b7 traced", empty: false,
    summary: { changed: 2, added: 2, removed: 1, unchanged: 0 },
    inputs: [{ field: "input x", label: "input x", before: "f32[3]", after: "f32[8]" }],
    outputs: [], constants: [],
    rows: [
      row("changed", "b:f32[3] = sin a", "b:f32[8] = sin a", { source: src(3), changes: types }),
      row("added", null, "d:f32[8] = cos a", { source: src(5), primitive: "cos" }),
      row("added", null, "e:f32[8] = add c d", { source: src(5), primitive: "add" }),
      row("removed", "z:f32[3] = neg a", null, { source: src(6), note: "its result was unused" }),
      row("changed", "d:f32[3] = add c 1.0", "f:f32[8] = add e 1.0", { source: src(6), changes: types }),
    ],
    cut: 0, a_pick: { specialization: 0, stage: "traced" }, b_pick: { specialization: 1, stage: "traced" },
  };
}

const last = <T>(xs: T[]): T => xs[xs.length - 1];

async function mounted(state = explorerState()) {
  const model = new FakeModel(state);
  const host = document.createElement("div");
  document.body.appendChild(host);
  widget.render({ model, el: host });
  const root = host.querySelector(".jv-explorer") as HTMLElement;
  for (let i = 0; i < 50 && root.dataset.state !== "ready"; i++) await new Promise((r) => setTimeout(r, 10));
  return { model, host, root };
}

describe("diff rendering", () => {
  it("marks changed, added and removed rows side by side, with the fields that differ", () => {
    const view = renderDiff(sampleDiff());
    const rows = Array.from(view.querySelectorAll<HTMLElement>(".jv-diff-row[data-status]"));
    expect(rows.map((r) => r.dataset.status)).toEqual(["changed", "added", "added", "removed", "changed"]);
    expect(rows.map((r) => r.querySelector(".jv-diff-marker")!.textContent)).toEqual(["~", "+", "+", "\u2212", "~"]);
    expect(rows[0].querySelector(".jv-diff-a")!.textContent).toBe("b:f32[3] = sin a");
    expect(rows[0].querySelector(".jv-diff-b")!.textContent).toContain("b:f32[8] = sin a");
    expect(rows[0].querySelector(".jv-diff-changes")!.textContent)
      .toBe("operand 0 f32[3] \u2192 f32[8]; result 0 f32[3] \u2192 f32[8]");
    expect(rows[1].querySelector(".jv-diff-a")!.textContent).toBe("");
    expect(rows[3].querySelector(".jv-diff-a .jv-diff-note")!.textContent).toBe("its result was unused");
    expect(Array.from(view.querySelectorAll(".jv-chip")).map((c) => c.textContent))
      .toEqual(["2 changed", "2 added", "1 removed", "0 unchanged"]);
    expect(view.querySelector(".jv-diff-sig")!.textContent).toBe("~ input x f32[3] \u2192 f32[8]");
    // one source header per line
    expect(Array.from(view.querySelectorAll(".jv-diff-src")).map((s) => s.textContent))
      .toEqual(["line 3 (branchy): y = jnp.sin(x) * 2.0", "line 5 (branchy): y = jnp.sin(x) * 2.0",
        "line 6 (branchy): y = jnp.sin(x) * 2.0"]);
  });

  it("folds runs of unchanged equations away from a difference", () => {
    const same = (i: number) => row("unchanged", `v${i} = sin a`, `v${i} = sin a`);
    const rows = [same(0), same(1), same(2), same(3), row("changed", "x", "y"), same(5), same(6)];
    const kinds = visibleRows(rows).map(([kind, item]) => kind === "fold" ? `fold${(item as DiffRow[]).length}` : kind);
    expect(kinds).toEqual(["fold3", "row", "row", "row", "row"]);
    const data = { ...sampleDiff(), rows, summary: { changed: 1, added: 0, removed: 0, unchanged: 6 } };
    const fold = renderDiff(data).querySelector("details.jv-diff-fold")!;
    expect(fold.querySelector("summary")!.textContent).toBe("\u2026 3 unchanged equations \u2026");
    expect(fold.querySelectorAll(".jv-diff-row").length).toBe(3);
  });

  it("draws the rows of changed bodies, nested", () => {
    const inner = [row("added", null, "q = cos p")];
    const data = { ...sampleDiff(), rows: [row("changed", "c = cond", "c = cond", { subs: [{ title: "branch 1", rows: inner }] })] };
    const sub = renderDiff(data).querySelector(".jv-diff-sub")!;
    expect(sub.querySelector(".jv-diff-sub-title")!.textContent).toBe("branch 1:");
    expect(sub.querySelector(".jv-diff-added .jv-diff-b")!.textContent).toBe("q = cos p");
  });

  it("says when nothing differs, and when rows were cut", () => {
    const view = renderDiff({ ...sampleDiff(), empty: true, rows: [], cut: 12 });
    expect(view.textContent).toContain("no differences");
    expect(view.textContent).toContain("12 more rows not shown");
  });

  it("keeps every payload as text", () => {
    for (const payload of XSS_PAYLOADS) {
      const changes = [{ field: `param:${payload}`, label: `param ${payload}`, before: payload, after: payload }];
      const data: DiffData = {
        ...sampleDiff(payload), a: payload, b: payload,
        inputs: [{ field: `input ${payload}`, label: `input ${payload}`, before: payload, after: payload }],
        rows: [row("changed", payload, payload, { changes, note: payload,
          source: { file: payload, line: 1, function: payload, code: payload },
          subs: [{ title: payload, rows: [row("added", null, payload)] }] })],
      };
      const host = document.createElement("div");
      host.appendChild(renderDiff(data));
      for (const tag of ["img", "script", "svg", "iframe", "image", "a", "style"]) {
        expect(host.querySelector(tag), `${payload}: <${tag}>`).toBeNull();
      }
      expect(Array.from(host.querySelectorAll("*")).some((n) =>
        Array.from(n.attributes).some((a) => a.name.startsWith("on")))).toBe(false);
      expect(host.querySelector(".jv-diff-label")!.textContent).toBe(`a ${payload}`);
      expect(host.querySelector(".jv-diff-row[data-status] .jv-diff-a")!.textContent).toBe(payload);
      expect(host.querySelector(".jv-diff-row[data-status] .jv-diff-note")!.textContent).toBe(payload);
      expect(host.querySelector(".jv-diff-sub-title")!.textContent).toBe(`${payload}:`);
      expect(host.textContent).toContain(`param ${payload} ${payload} \u2192 ${payload}`);
    }
  });
});

describe("compare in the explorer", () => {
  it("asks the kernel for the diff of the picked specializations and draws the answer", async () => {
    const { host, model } = await mounted();
    const panel = host.querySelector(".jv-compare") as HTMLElement;
    expect(panel.hidden).toBe(true);
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click();
    expect(panel.hidden).toBe(false);
    const value = (cls: string) => (host.querySelector(cls) as HTMLSelectElement).value;
    // by default: the one before the shown specialization against it, at the shown stage
    expect([value(".jv-cmp-a-spec"), value(".jv-cmp-a-stage"), value(".jv-cmp-b-spec"), value(".jv-cmp-b-stage")])
      .toEqual(["0", "traced", "1", "traced"]);
    const bStage = host.querySelector(".jv-cmp-b-stage") as HTMLSelectElement;
    bStage.value = "fuse";
    (host.querySelector(".jv-cmp-run") as HTMLButtonElement).click();
    const request = last(model.sent) as { type: string; id: number };
    expect(request).toEqual({ type: "compare", id: request.id,
      a: { specialization: 0, stage: "traced" }, b: { specialization: 1, stage: "fuse" } });
    const view = host.querySelector(".jv-diff-view") as HTMLElement;
    expect(view.dataset.state).toBe("loading");
    model.receive({ type: "diff", id: request.id - 1, diff: sampleDiff() }); // an older answer
    expect(view.dataset.state).toBe("loading");
    model.receive({ type: "diff", id: request.id, diff: sampleDiff() });
    expect(view.dataset.state).toBe("ready");
    expect(view.querySelectorAll(".jv-diff-row.jv-diff-added").length).toBe(2);
    expect(view.querySelectorAll(".jv-diff-row.jv-diff-changed").length).toBe(2);
    expect(view.querySelector(".jv-diff-graphs")).toBeNull(); // no graphs were sent
    expect(model.saved.length).toBe(0); // nothing synced: the diff came as a message
  });

  it("draws the two graphs between the summary and the table", async () => {
    const { host, model } = await mounted();
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click();
    (host.querySelector(".jv-cmp-run") as HTMLButtonElement).click();
    const { id } = last(model.sent) as { id: number };
    const graph = { svg: sampleSvg(), dot: "", too_large: false };
    model.receive({ type: "diff", id, diff: { ...sampleDiff(), graphs: { a: graph, b: graph,
      pairs: [["e0", "e0"]], colors: {} } } });
    const data = host.querySelector(".jv-diff-view .jv-diff-data") as HTMLElement;
    expect(Array.from(data.children).map((c) => c.className))
      .toEqual(["jv-diff-head", "jv-diff-graphs-view", "jv-diff-body"]);
    for (let i = 0; i < 50 && host.querySelectorAll(".jv-diff-canvas[data-state='ready']").length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(host.querySelectorAll(".jv-diff-canvas[data-state='ready'] svg").length).toBe(2);
    // a new request drops the old graphs
    (host.querySelector(".jv-cmp-run") as HTMLButtonElement).click();
    expect(host.querySelector(".jv-diff-canvas")).toBeNull();
  });

  it("opens the diff of a recompile from its reason and from the timeline", async () => {
    const { host, model } = await mounted();
    const button = host.querySelector(".jv-info .jv-diff-previous") as HTMLButtonElement;
    expect(button.closest(".jv-info-line")!.textContent).toContain("recompiled: argument 'x' changed");
    button.click();
    const request = last(model.sent) as { id: number };
    expect(request).toEqual({ type: "compare", id: request.id, previous: 1, stage: "traced" });
    expect((host.querySelector(".jv-compare") as HTMLElement).hidden).toBe(false);
    model.receive({ type: "diff", id: request.id, diff: { ...sampleDiff(), previous: true } });
    expect(host.querySelector(".jv-diff-view")!.getAttribute("data-state")).toBe("ready");
    const events = host.querySelectorAll(".jv-event-diff");
    expect(events.length).toBe(1); // the one recompile event
    (events[0] as HTMLButtonElement).click();
    expect(last(model.sent)).toMatchObject({ type: "compare", previous: 1 });
    expect(model.get("specialization")).toBe(1); // the row's own click did not run
  });

  it("shows the kernel's error, escaped", async () => {
    const { host, model } = await mounted();
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click();
    (host.querySelector(".jv-cmp-run") as HTMLButtonElement).click();
    const { id } = last(model.sent) as { id: number };
    model.receive({ type: "diff", id, error: `no stage ${XSS}` });
    const view = host.querySelector(".jv-diff-view") as HTMLElement;
    expect(view.dataset.state).toBe("error");
    expect(view.textContent).toContain(`could not compare: no stage ${XSS}`);
    expect(host.querySelector("img")).toBeNull();
  });

  it("keeps the picks when the specializations are updated", async () => {
    const { host, model } = await mounted();
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click();
    const aStage = host.querySelector(".jv-cmp-a-stage") as HTMLSelectElement;
    aStage.value = "fuse";
    const specs = [...(model.get("specializations") as object[]),
      { index: 2, signature: "x:f64[4]", hits: 0, backend: "cpu", compiled: true, kernels: 1, reason: "r", diff: [] }];
    model.trigger("specializations", specs);
    expect(Array.from((host.querySelector(".jv-cmp-b-spec") as HTMLSelectElement).options).map((o) => o.value))
      .toEqual(["0", "1", "2"]);
    expect((host.querySelector(".jv-cmp-a-stage") as HTMLSelectElement).value).toBe("fuse");
  });

  it("offers the previous run of a re-run cell, and asks the kernel for that diff", async () => {
    const state = explorerState();
    state.previous_run = { label: `f at cell 3, line 1 (1 specialization: x:f32[3]) ${XSS}`, name: "f",
      where: "cell 3, line 1", signatures: ["x:f32[3]"] };
    const { host, model } = await mounted(state);
    const line = host.querySelector(".jv-info .jv-previous-run") as HTMLElement;
    expect(line.textContent).toContain(`previous run of this cell: f at cell 3, line 1 (1 specialization: x:f32[3]) ${XSS}`);
    expect(host.querySelector("img")).toBeNull();
    (line.querySelector(".jv-compare-previous-run") as HTMLButtonElement).click();
    const request = last(model.sent) as { id: number };
    expect(request).toEqual({ type: "compare", id: request.id, previous_run: true, stage: "traced" });
    const panel = host.querySelector(".jv-compare") as HTMLElement;
    expect(panel.hidden).toBe(false);
    expect(panel.dataset.mode).toBe("previous-run"); // the pickers (this run's) are hidden
    model.receive({ type: "diff", id: request.id, diff: { ...sampleDiff(), a: "previous run (cell 3, line 1): x:f32[3] \u00b7 traced",
      previous_run: true, a_pick: undefined } });
    const view = host.querySelector(".jv-diff-view") as HTMLElement;
    expect(view.dataset.state).toBe("ready");
    expect(view.querySelector(".jv-diff-label")!.textContent).toBe("a previous run (cell 3, line 1): x:f32[3] \u00b7 traced");
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click(); // closes
    (host.querySelector(".jv-compare-toggle") as HTMLButtonElement).click(); // the pickers again
    expect(panel.dataset.mode).toBe("pick");
  });

  it("offers no previous run when none is kept, and shows it once the kernel keeps one", async () => {
    const { host, model } = await mounted();
    expect(host.querySelector(".jv-previous-run")).toBeNull();
    model.trigger("previous_run", { label: "f at f.py:1 (1 specialization: x:f32[3])", name: "f", where: "f.py:1", signatures: [] });
    expect(host.querySelector(".jv-previous-run .jv-compare-previous-run")).not.toBeNull();
  });

  it("has no diff button on a first call", async () => {
    const state = explorerState();
    state.specialization = 0;
    const { host } = await mounted(state);
    expect(host.querySelector(".jv-info .jv-diff-previous")).toBeNull();
  });
});
