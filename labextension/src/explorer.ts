// The explorer view: toolbar (specialization, stage, search, zoom, expand), the graph with
// pan/zoom, hover highlights and selection, the inspector, and the event timeline.

import { renderDiff } from "./compare";
import { type DiffGraphsView, renderDiffGraphs } from "./diffGraphs";
import { append, clear, el } from "./dom";
import { clusterIdOf, expandGraph, GraphIndex, nodeIdOf } from "./graphIndex";
import { renderInspector } from "./inspector";
import { boxInSvg, PanZoom } from "./panzoom";
import { graphvizLoader } from "./graphvizLoader";
import { type GraphvizLoader, renderGraph } from "./render";
import { renderTimeline } from "./timeline";
import type { DiffData, DiffPick, ExplorerModel, Graph, GraphView, JitEvent, SpecializationRow,
  StageRow } from "./types";

/** Above this many nodes "expand all" is refused (lay clusters out one at a time). */
export const EXPAND_ALL_LIMIT = 1500;

export function renderExplorer(model: ExplorerModel, host: HTMLElement,
                               loadGraphviz: GraphvizLoader = graphvizLoader(model)): () => void {
  const ui = buildLayout();
  host.appendChild(ui.root);
  const state = {
    index: null as GraphIndex | null,
    panzoom: null as PanZoom | null,
    svg: null as SVGSVGElement | null,
    elements: new Map<string, Element>(),
    edges: [] as Element[],
    token: 0,
    drawTimer: 0 as unknown as ReturnType<typeof setTimeout>,
    focusAfterDraw: null as string | null,
    matches: [] as string[],
    diffId: 0,
    picked: false, // the compare pickers were set (by the user or a diff): keep them
    diffGraphs: null as DiffGraphsView | null,
  };

  let expanded: { raw: unknown; graph: Graph } | null = null;
  const graph = (): Graph => {
    const raw = model.get("graph");
    if (!raw) return { nodes: [], edges: [], kernels: {} } as unknown as Graph;
    if (!expanded || expanded.raw !== raw) expanded = { raw, graph: expandGraph(raw) };
    return expanded.graph;
  };
  const view = (): GraphView => model.get("view") ?? { nodes: [], clusters: [], edges: [] };
  const collapsed = (): string[] => model.get("collapsed") ?? [];

  function setCollapsed(ids: string[]): void {
    model.set("collapsed", ids);
    model.save_changes();
  }

  function toggleCluster(id: string): void {
    const now = collapsed();
    const isCollapsed = now.includes(id) || !view().clusters.includes(id);
    setCollapsed(isCollapsed ? now.filter((c) => c !== id) : [...now, id]);
    state.focusAfterDraw = id;
  }

  // -- drawing --
  function scheduleDraw(): void {
    clearTimeout(state.drawTimer);
    state.drawTimer = setTimeout(draw, 0);
  }

  async function draw(): Promise<void> {
    const token = ++state.token;
    ui.root.dataset.state = "rendering";
    showStatus("laying out the graph\u2026");
    try {
      const rendered = await renderGraph(model.get("dot") ?? "", model.get("svg") ?? "",
        loadGraphviz);
      if (token !== state.token) return;
      mount(rendered.svg);
      ui.root.dataset.renderer = rendered.renderer;
      ui.root.dataset.renderMs = String(Math.round(rendered.millis));
      ui.badge.textContent = rendered.renderer === "server" ? "Graphviz (server)" : "Graphviz (WebAssembly)";
      ui.root.dataset.state = "ready";
      showStatus("");
    } catch (err) {
      if (token !== state.token) return;
      ui.root.dataset.state = "error";
      showStatus(`could not draw the graph: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  function showStatus(text: string): void {
    ui.status.textContent = text;
    ui.status.hidden = !text;
  }

  function mount(svg: SVGSVGElement): void {
    state.panzoom?.destroy();
    clear(ui.canvas);
    ui.canvas.appendChild(svg);
    state.svg = svg;
    state.index = new GraphIndex(graph(), view());
    state.elements = new Map();
    for (const g of Array.from(svg.querySelectorAll("g.node"))) {
      const id = nodeIdOf(g);
      if (id) state.elements.set(id, g);
    }
    state.edges = Array.from(svg.querySelectorAll("g.edge"));
    state.panzoom = new PanZoom(svg, ui.canvas);
    state.panzoom.readable();
    updateToolbar();
    applySearch(false);
    const focus = state.focusAfterDraw;
    state.focusAfterDraw = null;
    const selected = model.get("selected");
    const cluster = focus && view().clusters.includes(focus)
      ? Array.from(svg.querySelectorAll("g.cluster")).find((g) => clusterIdOf(g) === focus)
      : undefined;
    if (cluster && focus) showCluster(focus, cluster as SVGGraphicsElement);
    else if (focus && state.index.representative(focus)) select(state.index.representative(focus)!, true);
    else if (selected && state.index.node(selected)) select(selected, false);
    else showInspector(undefined);
  }

  /** An expanded cluster: outline it, show its top, inspect it (its Collapse button). */
  function showCluster(id: string, g: SVGGraphicsElement): void {
    for (const s of Array.from(ui.canvas.querySelectorAll(".jv-selected"))) {
      s.classList.remove("jv-selected");
    }
    g.classList.add("jv-selected");
    showInspector(id);
    if (state.panzoom && state.svg && "getBBox" in g) {
      state.panzoom.showTop(boxInSvg(state.svg, g));
    }
  }

  // -- selection and highlighting --
  function select(id: string, centre: boolean): void {
    for (const g of Array.from(ui.canvas.querySelectorAll(".jv-selected"))) {
      g.classList.remove("jv-selected");
    }
    const g = state.elements.get(id);
    g?.classList.add("jv-selected");
    if (model.get("selected") !== id) {
      model.set("selected", id);
      model.save_changes();
    }
    showInspector(id);
    if (centre && g && state.panzoom && state.svg && "getBBox" in g) {
      state.panzoom.show(boxInSvg(state.svg, g as SVGGraphicsElement));
    }
  }

  function showInspector(id: string | undefined): void {
    const node = id ? state.index?.node(id) : undefined;
    clear(ui.inspector);
    ui.inspector.classList.remove("jv-wide"); // an open kernel source widens it again
    ui.inspector.appendChild(renderInspector(node, graph(), {
      toggleCluster,
      isCollapsed: (cid) => !view().clusters.includes(cid),
    }));
  }

  function highlight(id: string | null): void {
    const svg = state.svg;
    if (!svg) return;
    for (const g of Array.from(svg.querySelectorAll(".jv-hl, .jv-hl-producer, .jv-hl-consumer, .jv-hl-edge"))) {
      g.classList.remove("jv-hl", "jv-hl-producer", "jv-hl-consumer", "jv-hl-edge");
    }
    svg.classList.toggle("jv-dimmed", id !== null);
    if (id === null || !state.index) return;
    const around = state.index.neighbours(id);
    state.elements.get(id)?.classList.add("jv-hl");
    for (const p of around.producers) state.elements.get(p)?.classList.add("jv-hl-producer");
    for (const c of around.consumers) state.elements.get(c)?.classList.add("jv-hl-consumer");
    for (const i of around.edges) state.edges[i]?.classList.add("jv-hl-edge");
  }

  // -- search --
  function applySearch(expandHidden: boolean): void {
    const index = state.index;
    for (const g of state.elements.values()) g.classList.remove("jv-match");
    const query = ui.search.value;
    if (!index || !query.trim()) {
      ui.searchInfo.textContent = "";
      state.matches = [];
      return;
    }
    const { nodes: found, mode } = index.searchRanked(query);
    state.matches = found.map((n) => n.id);
    let hidden = 0;
    for (const node of found) {
      const rep = index.representative(node.id);
      if (rep !== node.id) hidden += 1;
      if (rep) state.elements.get(rep)?.classList.add("jv-match");
    }
    ui.searchInfo.textContent = `${found.length} match${found.length === 1 ? "" : "es"}` +
      (mode === "names" || mode === "text" ? "" : ` by ${mode}`) +
      (hidden ? ` (${hidden} in collapsed clusters: Enter expands)` : "");
    ui.searchInfo.title = mode === "names"
      ? "primitives and variable names; type src:TEXT to search source lines, line N for a line"
      : "";
    if (!expandHidden || !found.length) return;
    const toExpand = index.clustersHiding(state.matches.slice(0, 20));
    const first = state.matches.find((m) => index.node(m)?.kind !== "cluster") ?? state.matches[0];
    if (toExpand.length) {
      state.focusAfterDraw = first;
      setCollapsed(collapsed().filter((c) => !toExpand.includes(c)));
    } else {
      const rep = index.representative(first);
      if (rep) select(rep, true);
    }
  }

  // -- toolbar, info and timeline --
  function updateToolbar(): void {
    const stats = graph().stats;
    const tooBig = (stats?.nodes ?? 0) > EXPAND_ALL_LIMIT;
    ui.expandAll.disabled = tooBig;
    ui.expandAll.title = tooBig ? "too large to lay out at once: expand clusters one by one" : "";
    ui.title.textContent = `${model.get("title") ?? ""}`;
    ui.stats.textContent = stats ? `${stats.equations} equations` : "";
  }

  function updateSelects(): void {
    const specs: SpecializationRow[] = model.get("specializations") ?? [];
    fillSelect(ui.specSelect, specs.map((s) => [String(s.index),
      `#${s.index} ${s.signature}${s.hits !== null ? ` \u00b7 ${s.hits} hits` : ""}`]),
      String(model.get("specialization")));
    ui.specLabel.hidden = specs.length < 2;
    const stages: StageRow[] = model.get("stages") ?? [];
    fillSelect(ui.stageSelect, stages.map((s) => [s.name,
      `${s.name} (${s.kernels ? `${s.kernels} kernels` : `${s.equations} eqns`})`]),
      model.get("stage"));
    if (ui.cmpASpec.options.length) fillPickers(pickOf("a"), pickOf("b")); // new lists, same picks
    updateInfo();
  }

  function updatePending(): void {
    const pending = Number(model.get("pending") ?? 0);
    clear(ui.pending);
    ui.pending.hidden = pending <= 0;
    if (pending <= 0) return;
    const show = el("button", { class: "jv-button", type: "button",
      title: "redraw with the calls made after this explorer was shown" }, "show");
    show.addEventListener("click", () => model.send({ type: "refresh" }));
    append(ui.pending, el("span", {},
      `${pending} newer event${pending === 1 ? "" : "s"} since this cell ran ` +
      "(later calls of the function) — "), show);
  }

  function updateInfo(): void {
    clear(ui.info);
    const updated = model.get("updated");
    if (updated) append(ui.info, el("div", { class: "jv-info-line jv-updated" }, String(updated)));
    const specs: SpecializationRow[] = model.get("specializations") ?? [];
    const spec = specs.find((s) => s.index === model.get("specialization"));
    if (spec && (spec.reason || spec.diff.length)) {
      const recompiled = spec.diff.length > 0 || (spec.reason && spec.reason !== "first call");
      const line = el("div", { class: `jv-info-line ${recompiled ? "jv-bad" : ""}` },
        recompiled ? `recompiled: ${spec.reason || "signature changed"}` : spec.reason);
      append(ui.info, line);
      if (recompiled && specs.length > 1) {
        const open = el("button", { class: "jv-button jv-diff-previous", type: "button",
          title: "the diff of this specialization's program against the one it was recompiled from" },
          "diff with previous");
        open.addEventListener("click", () => comparePrevious(spec.index));
        append(line, " ", open);
      }
      if (spec.diff.length) {
        const t = el("table", { class: "jv-table jv-diff" },
          el("tr", {}, el("th", {}, "argument"), el("th", {}, "before"), el("th", {}, "now")));
        for (const d of spec.diff) {
          append(t, el("tr", {}, el("td", {}, d.argument), el("td", { class: "jv-before" }, d.before),
            el("td", { class: "jv-after" }, d.after)));
        }
        append(ui.info, t);
      }
    }
    const previousRun = model.get("previous_run");
    if (previousRun && "label" in previousRun && previousRun.label) {
      const compare = el("button", { class: "jv-button jv-compare-previous-run", type: "button",
        title: "the diff of the previous run of this function's cell (kept when the cell ran again) against this one" },
      "compare with previous run");
      compare.addEventListener("click", compareWithPreviousRun);
      append(ui.info, el("div", { class: "jv-info-line jv-previous-run" },
        `previous run of this cell: ${previousRun.label} `, compare));
    }
    for (const stale of graph().stale ?? []) {
      append(ui.info, el("div", { class: "jv-info-line jv-warn-line" },
        `stale ${stale.kind || "global"} ${stale.name}: ${stale.traced} when traced, now ` +
        `${stale.now} — the compiled code still uses ${stale.traced}`));
    }
    const diff = graph().diff;
    if (diff && (diff.added || diff.removed)) {
      const added = Object.entries(diff.added_by_primitive).map(([p, n]) => `${p}\u00d7${n}`).join(" ");
      const removed = Object.entries(diff.removed_by_primitive).map(([p, n]) => `${p}\u00d7${n}`).join(" ");
      append(ui.info, el("div", { class: "jv-info-line jv-stage-diff" },
        `stage ${model.get("stage")}: ${diff.added} new equation(s) ${added ? `(${added}) ` : ""}` +
        `highlighted, ${diff.removed} removed ${removed ? `(${removed})` : ""}`));
    } else if (diff) {
      append(ui.info, el("div", { class: "jv-info-line" }, `stage ${model.get("stage")}: no change`));
    }
  }

  function updateTimeline(): void {
    const events: JitEvent[] = model.get("events") ?? [];
    renderTimeline(ui.timeline, events, (event) => {
      const specs: SpecializationRow[] = model.get("specializations") ?? [];
      const spec = specs.find((s) => s.signature === event.signature);
      if (spec && spec.index !== model.get("specialization")) {
        model.set("specialization", spec.index);
        model.save_changes();
      }
    }, (event) => {
      const specs: SpecializationRow[] = model.get("specializations") ?? [];
      const spec = specs.find((s) => s.signature === event.signature);
      if (spec) comparePrevious(spec.index);
    });
    ui.timelineTitle.textContent = `Events (${events.length})`;
  }

  // -- compare: two specializations or stages, the diff sent by the kernel on request --
  function stageNames(): string[] {
    return (model.get("stages") ?? []).map((s) => s.name);
  }

  function fillPickers(a?: DiffPick, b?: DiffPick): void {
    const specs: SpecializationRow[] = model.get("specializations") ?? [];
    const current = Number(model.get("specialization") ?? 0);
    const names = stageNames();
    const stage = String(model.get("stage") ?? names[0] ?? "traced");
    if (!a || !b) {
      if (specs.length > 1) {
        const before = current > 0 ? current - 1 : 0;
        a = { specialization: before, stage };
        b = { specialization: before === current ? 1 : current, stage };
      } else {
        const passes = names.filter((n) => n !== "kernels");
        a = { specialization: current, stage: names[0] ?? stage };
        b = { specialization: current, stage: passes[passes.length - 1] ?? stage };
      }
    }
    const specOptions: [string, string][] = specs.map((s) => [String(s.index), `#${s.index} ${s.signature}`]);
    const stageOptions = (pick: DiffPick): [string, string][] =>
      (names.includes(pick.stage) ? names : [...names, pick.stage]).map((n) => [n, n]);
    fillPicker(ui.cmpASpec, specOptions, String(a.specialization));
    fillPicker(ui.cmpAStage, stageOptions(a), a.stage);
    fillPicker(ui.cmpBSpec, specOptions, String(b.specialization));
    fillPicker(ui.cmpBStage, stageOptions(b), b.stage);
  }

  function pickOf(side: "a" | "b"): DiffPick {
    const [spec, stage] = side === "a" ? [ui.cmpASpec, ui.cmpAStage] : [ui.cmpBSpec, ui.cmpBStage];
    return { specialization: Number(spec.value), stage: stage.value };
  }

  function openCompare(): void {
    if (!state.picked) fillPickers();
    ui.compare.hidden = false;
    ui.compareToggle.setAttribute("aria-expanded", "true");
  }

  function requestDiff(content: object, what: string): void {
    openCompare();
    // the pickers name this run's specializations: a previous run's diff does not use them
    ui.compare.dataset.mode = "previous_run" in content ? "previous-run" : "pick";
    state.diffId += 1;
    ui.diffView.dataset.state = "loading";
    dropDiffGraphs();
    clear(ui.diffView);
    append(ui.diffView, el("div", { class: "jv-hint" }, `computing the diff of ${what}\u2026`));
    model.send({ type: "compare", id: state.diffId, ...content });
  }

  function comparePicked(): void {
    state.picked = true;
    const a = pickOf("a");
    const b = pickOf("b");
    requestDiff({ a, b }, `#${a.specialization} ${a.stage} and #${b.specialization} ${b.stage}`);
  }

  function comparePrevious(index: number): void {
    const stage = String(model.get("stage") ?? "traced");
    requestDiff({ previous: index, stage }, `#${index} and the specialization it was recompiled from`);
  }

  function compareWithPreviousRun(): void {
    const stage = String(model.get("stage") ?? "traced");
    requestDiff({ previous_run: true, stage }, "the previous run of this cell and this one");
  }

  const onMessage = (msg: { type?: string; id?: number; diff?: DiffData; error?: string }) => {
    if (msg?.type !== "diff" || msg.id !== state.diffId) return;
    dropDiffGraphs();
    clear(ui.diffView);
    if (msg.error || !msg.diff) {
      ui.diffView.dataset.state = "error";
      append(ui.diffView, el("div", { class: "jv-warning" }, `could not compare: ${msg.error ?? "no diff"}`));
      return;
    }
    state.picked = true;
    fillPickers(msg.diff.a_pick, msg.diff.b_pick);
    const view = renderDiff(msg.diff);
    if (msg.diff.graphs) {
      state.diffGraphs = renderDiffGraphs(msg.diff.graphs, { a: msg.diff.a, b: msg.diff.b }, loadGraphviz);
      view.insertBefore(state.diffGraphs.element, view.querySelector(".jv-diff-body"));
    }
    append(ui.diffView, view);
    ui.diffView.dataset.state = "ready";
  };

  function dropDiffGraphs(): void {
    state.diffGraphs?.destroy();
    state.diffGraphs = null;
  }
  model.on("msg:custom", onMessage);

  // -- wiring --
  const onCanvasClick = (e: Event) => {
    if (state.panzoom?.moved) return;
    const g = (e.target as Element).closest("g.node");
    const id = g ? nodeIdOf(g) : null;
    if (id) select(id, false);
  };
  const onCanvasDblClick = (e: Event) => {
    const target = e.target as Element;
    const g = target.closest("g.node");
    const id = g ? nodeIdOf(g) : null;
    if (id && state.index?.node(id)?.kind === "cluster") {
      toggleCluster(id);
      return;
    }
    const cluster = target.closest("g.cluster");
    const cid = cluster ? clusterIdOf(cluster) : null;
    if (cid) toggleCluster(cid);
  };
  const onOver = (e: Event) => {
    const g = (e.target as Element).closest("g.node");
    highlight(g ? nodeIdOf(g) : null);
  };
  const onLeave = () => highlight(null);
  ui.canvas.addEventListener("click", onCanvasClick);
  ui.canvas.addEventListener("dblclick", onCanvasDblClick);
  ui.canvas.addEventListener("mouseover", onOver);
  ui.canvas.addEventListener("mouseleave", onLeave);

  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  ui.search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => applySearch(false), 120);
  });
  ui.search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") applySearch(true);
    if (e.key === "Escape") {
      ui.search.value = "";
      applySearch(false);
    }
  });
  ui.fit.addEventListener("click", () => state.panzoom?.fit());
  ui.canvas.addEventListener("keydown", (e) => {
    if (e.key === "Escape") highlight(null);
    if (e.key === "+" || e.key === "=") state.panzoom?.zoom(1.3);
    if (e.key === "-") state.panzoom?.zoom(1 / 1.3);
    if (e.key === "0") state.panzoom?.fit();
  });
  ui.zoomIn.addEventListener("click", () => state.panzoom?.zoom(1.3));
  ui.zoomOut.addEventListener("click", () => state.panzoom?.zoom(1 / 1.3));
  ui.expandAll.addEventListener("click", () => setCollapsed([]));
  ui.collapseAll.addEventListener("click", () => setCollapsed(state.index?.clusterIds() ?? []));
  ui.specSelect.addEventListener("change", () => {
    model.set("specialization", Number(ui.specSelect.value));
    model.save_changes();
  });
  ui.stageSelect.addEventListener("change", () => {
    model.set("stage", ui.stageSelect.value);
    model.save_changes();
  });
  ui.compareToggle.addEventListener("click", () => {
    ui.compare.dataset.mode = "pick";
    if (ui.compare.hidden) openCompare();
    else {
      ui.compare.hidden = true;
      ui.compareToggle.setAttribute("aria-expanded", "false");
    }
  });
  ui.cmpRun.addEventListener("click", comparePicked);
  ui.cmpClose.addEventListener("click", () => {
    ui.compare.hidden = true;
    ui.compareToggle.setAttribute("aria-expanded", "false");
  });
  ui.textToggle.addEventListener("click", () => {
    ui.jaxpr.hidden = !ui.jaxpr.hidden;
    ui.jaxpr.textContent = model.get("jaxpr") ?? "";
  });

  const onSelected = () => {
    const id = model.get("selected");
    if (id && state.elements.has(id)) select(id, false);
  };
  const listeners: [string, () => void][] = [
    ["change:dot", scheduleDraw], ["change:svg", scheduleDraw],
    ["change:stages", updateSelects], ["change:stage", updateSelects],
    ["change:specializations", updateSelects], ["change:specialization", updateSelects],
    ["change:graph", updateInfo], ["change:events", updateTimeline],
    ["change:selected", onSelected], ["change:pending", updatePending],
    ["change:updated", updateInfo], ["change:previous_run", updateInfo],
    ["change:jaxpr", () => { ui.jaxpr.textContent = model.get("jaxpr") ?? ""; }],
  ];
  for (const [name, fn] of listeners) model.on(name, fn);

  updateSelects();
  updateTimeline();
  updatePending();
  draw();

  return () => {
    for (const [name, fn] of listeners) model.off(name, fn);
    model.off("msg:custom", onMessage);
    state.panzoom?.destroy();
    dropDiffGraphs();
    clearTimeout(state.drawTimer);
  };
}

function fillSelect(select: HTMLSelectElement, options: [string, string][], value: string): void {
  clear(select);
  for (const [key, text] of options) append(select, el("option", { value: key }, text));
  select.value = value;
  select.disabled = options.length < 2;
}

function fillPicker(select: HTMLSelectElement, options: [string, string][], value: string): void {
  clear(select);
  for (const [key, text] of options) append(select, el("option", { value: key }, text));
  select.value = value;
  select.disabled = options.length < 1;
}

function buildLayout() {
  const title = el("span", { class: "jv-title" });
  const stats = el("span", { class: "jv-stats" });
  const specSelect = el("select", { class: "jv-select jv-spec", "aria-label": "specialization" });
  const specLabel = el("label", { class: "jv-field" }, "specialization ", specSelect);
  const stageSelect = el("select", { class: "jv-select jv-stage", "aria-label": "stage" });
  const search = el("input", { class: "jv-search", type: "search",
    placeholder: "primitive, variable, src:text, line 12", "aria-label": "search" });
  const searchInfo = el("span", { class: "jv-search-info" });
  const button = (text: string, label: string) =>
    el("button", { class: "jv-button", type: "button", title: label, "aria-label": label }, text);
  const fit = button("fit", "fit the graph");
  const zoomIn = button("+", "zoom in");
  const zoomOut = button("\u2212", "zoom out");
  const expandAll = button("expand all", "expand every cluster");
  const collapseAll = button("collapse all", "collapse every cluster");
  const textToggle = button("jaxpr", "show the jaxpr text");
  const compareToggle = button("compare", "compare two specializations or stages (a diff)");
  compareToggle.classList.add("jv-compare-toggle");
  compareToggle.setAttribute("aria-expanded", "false");
  const picker = (cls: string, label: string) =>
    el("select", { class: `jv-select ${cls}`, "aria-label": label });
  const cmpASpec = picker("jv-cmp-a-spec", "compare: specialization a");
  const cmpAStage = picker("jv-cmp-a-stage", "compare: stage a");
  const cmpBSpec = picker("jv-cmp-b-spec", "compare: specialization b");
  const cmpBStage = picker("jv-cmp-b-stage", "compare: stage b");
  const cmpRun = button("show diff", "show the diff of a and b");
  cmpRun.classList.add("jv-cmp-run");
  const cmpClose = button("close", "close the diff");
  const diffView = el("div", { class: "jv-diff-view", "data-state": "empty" },
    el("div", { class: "jv-hint" }, "pick two specializations or two stages, then \u201cshow diff\u201d"));
  const compare = el("div", { class: "jv-compare", role: "region", "aria-label": "compare" },
    el("div", { class: "jv-compare-bar" },
      el("label", { class: "jv-field" }, el("b", { class: "jv-side-a" }, "a"), cmpASpec, cmpAStage),
      el("label", { class: "jv-field" }, el("b", { class: "jv-side-b" }, "b"), cmpBSpec, cmpBStage),
      cmpRun, el("span", { class: "jv-spacer" }), cmpClose),
    diffView);
  compare.hidden = true;
  const badge = el("span", { class: "jv-renderer" });
  const toolbar = el("div", { class: "jv-toolbar" }, title, stats, specLabel,
    el("label", { class: "jv-field" }, "stage ", stageSelect), search, searchInfo,
    el("span", { class: "jv-spacer" }), fit, zoomIn, zoomOut, expandAll, collapseAll,
    compareToggle, textToggle, badge);
  const info = el("div", { class: "jv-info" });
  const pending = el("div", { class: "jv-pending", role: "status" });
  pending.hidden = true;
  const canvas = el("div", { class: "jv-canvas", tabindex: "0" });
  const status = el("div", { class: "jv-status" });
  const jaxpr = el("pre", { class: "jv-jaxpr jv-code" });
  jaxpr.hidden = true;
  const inspector = el("aside", { class: "jv-inspector" });
  const body = el("div", { class: "jv-body" },
    el("div", { class: "jv-canvas-wrap" }, canvas, status), inspector);
  const timelineTitle = el("h4", { class: "jv-timeline-title" });
  const timeline = el("div", { class: "jv-timeline" });
  const root = el("div", { class: "jv-explorer", "data-state": "loading" },
    toolbar, pending, info, compare, body, jaxpr, timelineTitle, timeline);
  return { root, title, stats, specSelect, specLabel, stageSelect, search, searchInfo, fit,
    zoomIn, zoomOut, expandAll, collapseAll, textToggle, badge, info, canvas, status, inspector,
    jaxpr, timeline, timelineTitle, pending, compareToggle, compare, cmpASpec, cmpAStage, cmpBSpec,
    cmpBStage, cmpRun, cmpClose, diffView };
}
