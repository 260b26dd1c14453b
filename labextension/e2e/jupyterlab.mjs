// Drive JupyterLab: open a notebook, run all cells, wait for every explorer to draw, click an
// equation node and read the inspector, take screenshots.
// Usage: node jupyterlab.mjs BASE_URL TOKEN NOTEBOOK OUT_DIR LABEL EXPECTED_CODE
// Prints one line `JITVIZ_RESULT {...}` for the Python test to check.
import { launch, report, watchDialogs } from "./common.mjs";
import { join } from "node:path";

const [base, token, notebook, outDir, label, expectedCode] = process.argv.slice(2);
const EXPLORERS = Number(process.env.JITVIZ_E2E_EXPLORERS || "7");
const problems = [];
const timings = {};
const shot = (name) => join(outDir, `${label}-${name}.png`);
const clock = () => Date.now();

/** JupyterLab may ask which kernel to start: take the one it proposes. */
async function acceptKernelDialog(page) {
  const accept = page.locator(".jp-Dialog .jp-mod-accept");
  try {
    await accept.waitFor({ timeout: 5000 });
    await accept.click();
  } catch {
    // no dialog: the notebook's kernel started by itself
  }
}

const browser = await launch({ width: 1500, height: 1100 });
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  watchDialogs(page, problems);
  page.setDefaultTimeout(60000);
  let t = clock();
  await page.goto(`${base}/lab/tree/${encodeURIComponent(notebook)}?token=${token}`);
  await page.waitForSelector(".jp-NotebookPanel .jp-Cell");
  await acceptKernelDialog(page);
  await page.locator(".jp-StatusBar-TextItem", { hasText: /\| Idle$/ }).first()
    .waitFor({ timeout: 90000 });
  timings.openNotebookMs = clock() - t;

  t = clock();
  await page.locator(".lm-MenuBar-itemLabel", { hasText: /^Run$/ }).click();
  await page.locator(".lm-Menu-itemLabel", { hasText: /^Run All Cells$/ }).click();
  await page.waitForFunction((n) => document.querySelectorAll(
    ".jv-explorer[data-state='ready'], .jv-explorer[data-state='error']").length >= n,
  EXPLORERS, { timeout: 150000 });
  await page.waitForSelector(".jp-Notebook-ExecutionIndicator[data-status='idle']", { timeout: 60000 });
  timings.runAllMs = clock() - t;

  const explorers = page.locator(".jv-explorer");
  const states = await explorers.evaluateAll((els) => els.map((e) => ({
    state: e.getAttribute("data-state"), renderer: e.getAttribute("data-renderer"),
    renderMs: Number(e.getAttribute("data-render-ms")),
    title: e.querySelector(".jv-title")?.textContent ?? "",
    nodes: e.querySelectorAll(".jv-canvas g.node").length })));
  const errors = await page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").allInnerTexts();
  const tracebacks = await page.locator(".jp-OutputArea-output .ansi-red-fg, .jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count();

  // the first explorer: click the last equation, check the inspector shows its source line
  const first = explorers.first();
  await first.scrollIntoViewIfNeeded();
  const equation = first.locator(".jv-canvas g.node.jv-equation").last();
  await equation.click();
  await first.locator(".jv-inspector .jv-source").waitFor();
  const inspector = await first.locator(".jv-inspector").innerText();
  const selected = await first.locator(".jv-canvas g.jv-selected").count();
  await first.screenshot({ path: shot("explorer-f") });

  // the jitted function with specializations: hover a node, switch stage to the kernels
  const selu = explorers.nth(1);
  await selu.scrollIntoViewIfNeeded();
  const specOptions = await selu.locator(".jv-spec option").allInnerTexts();
  await selu.locator(".jv-canvas g.node.jv-equation, .jv-canvas g.node.jv-cluster").first().hover();
  const highlighted = await selu.locator(".jv-hl, .jv-hl-producer, .jv-hl-consumer").count();
  await selu.screenshot({ path: shot("explorer-selu-traced") });
  const stages = await selu.locator(".jv-stage option").evaluateAll((os) => os.map((o) => o.value));
  let kernelSource = "";
  if (stages.includes("kernels")) {
    const before = await selu.getAttribute("data-render-ms");
    await selu.locator(".jv-stage").selectOption("kernels");
    await page.waitForFunction((el) => el.querySelector(".jv-canvas g.node.jv-equation") &&
      el.getAttribute("data-state") === "ready" &&
      el.querySelector(".jv-canvas g.cluster.kernel"), await selu.elementHandle(), { timeout: 30000 });
    await selu.locator(".jv-canvas g.node.jv-equation").first().click();
    await selu.locator(".jv-inspector .jv-kernel").waitFor({ timeout: 10000 });
    await selu.locator(".jv-inspector .jv-kernel summary").click();
    kernelSource = await selu.locator(".jv-inspector .jv-kernel pre").innerText();
    await selu.screenshot({ path: shot("explorer-selu-kernels") });
    void before;
  }
  const timeline = await selu.locator(".jv-event").evaluateAll((rows) => rows.map((r) =>
    [r.getAttribute("data-kind"), getComputedStyle(r).borderLeftColor]));

  // selu's explorer shows its cell; the later cell's calls are offered ("N newer events")
  const pendingText = await selu.locator(".jv-pending").innerText().catch(() => "");
  let specOptionsShown = [];
  let updatedText = "";
  if (await selu.locator(".jv-pending button").count()) {
    await selu.locator(".jv-pending button").click();
    await page.waitForFunction((el) => el.querySelector(".jv-updated") &&
      el.getAttribute("data-state") === "ready", await selu.elementHandle(), { timeout: 30000 });
    specOptionsShown = await selu.locator(".jv-spec option").allInnerTexts();
    updatedText = await selu.locator(".jv-updated").innerText();
    await selu.screenshot({ path: shot("explorer-selu-updated") });
  }

  // compare through the kernel: a recompile's "diff" in the timeline asks for the diff by a
  // custom message; the kernel answers with it
  let compare = { state: "", statuses: [], text: "" };
  if (await selu.locator(".jv-event-diff").count()) {
    await selu.locator(".jv-event-diff").first().click();
    await selu.locator(".jv-diff-view[data-state='ready'], .jv-diff-view[data-state='error']")
      .waitFor({ timeout: 30000 });
    compare = await selu.locator(".jv-diff-view").evaluate((v) => ({ state: v.dataset.state,
      statuses: Array.from(v.querySelectorAll(".jv-diff-row[data-status]")).map((r) => r.dataset.status),
      text: v.textContent.slice(0, 2000) }));
    await selu.screenshot({ path: shot("explorer-selu-compare") });
  }

  // the print that only ran once, the stale global, control flow, the 5,000 equations
  for (const [i, name] of [[2, "bad-f"], [3, "stale-global"], [4, "control-flow"], [5, "unrolled"]]) {
    const ex = explorers.nth(i);
    await ex.scrollIntoViewIfNeeded();
    await ex.screenshot({ path: shot(`explorer-${name}`) });
  }
  const svgTexts = (locator) => locator.evaluateAll((els) => els.map((e) =>
    Array.from(e.querySelectorAll("text")).map((t) => t.textContent).join(" ")));
  const effectText = await svgTexts(explorers.nth(2).locator(".jv-canvas g.node.jv-effect"));
  const staleText = await explorers.nth(3).locator(".jv-info").innerText();

  // the 5,000-equation graph: expand one block, time it
  const big = explorers.nth(5);
  t = clock();
  await big.locator(".jv-canvas g.node.jv-cluster").nth(2).dblclick();
  await page.waitForFunction((el) => el.getAttribute("data-state") === "ready" &&
    el.querySelectorAll(".jv-canvas g.node.jv-equation").length > 0,
  await big.elementHandle(), { timeout: 30000 });
  timings.expandBlockMs = clock() - t;
  const bigNodes = await big.locator(".jv-canvas g.node").count();
  await big.screenshot({ path: shot("explorer-unrolled-expanded") });

  const monitor = page.locator(".jv-monitor");
  await monitor.scrollIntoViewIfNeeded();
  await monitor.screenshot({ path: shot("monitor") });
  const monitorEvents = await monitor.locator(".jv-event").count();

  const probe = explorers.nth(6);
  await probe.scrollIntoViewIfNeeded();
  await probe.screenshot({ path: shot("explorer-xss-probe") });
  const probeTitle = await probe.locator(".jv-title").innerText();
  const probeEffect = await svgTexts(probe.locator(".jv-canvas g.node.jv-effect"));
  const injected = await page.locator("img[src='x']").count();
  await page.screenshot({ path: shot("page"), fullPage: false });

  report({ label, states, errors, tracebacks, inspector, selected, expectedCode,
    specOptions, highlighted, stages, kernelSource: kernelSource.slice(0, 400), timeline,
    pendingText, specOptionsShown, updatedText, compare,
    effectText, staleText, bigNodes, monitorEvents, probeTitle, probeEffect, injected, problems,
    timings });
} catch (err) {
  try { await browser.pages()[0]?.screenshot({ path: shot("failure"), fullPage: false }); } catch {}
  report({ label, fatal: String(err && err.stack || err), problems, timings });
  process.exitCode = 1;
} finally {
  await browser.close();
}
