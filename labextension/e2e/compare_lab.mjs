// Drive JupyterLab through the explorer's compare view: run a notebook whose jitted function
// recompiled, open "compare" and measure both graphs of the diff (coloured nodes, label size,
// on screen); then edit the function's cell, run it and the explorer's cell again, and open
// "compare with previous run". Screenshots of each step.
// Usage: node compare_lab.mjs BASE_URL TOKEN NOTEBOOK OUT_DIR LABEL  (EDITED_CELL on stdin)
// Prints one line `JITVIZ_RESULT {...}` for the Python test to check.
import { launch, report, watchDialogs } from "./common.mjs";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [base, token, notebook, outDir, label] = process.argv.slice(2);
const edited = readFileSync(0, "utf8");
const problems = [];
const shot = (name) => join(outDir, `${label}-${name}.png`);

/** What the compare view shows: per graph its state, coloured nodes, fills, label size, box. */
function measureCompare(explorer) {
  return explorer.evaluate((root) => {
    const view = root.querySelector(".jv-diff-view");
    const canvases = Array.from(root.querySelectorAll(".jv-diff-canvas")).map((canvas) => {
      const box = canvas.getBoundingClientRect();
      const svg = canvas.querySelector("svg");
      const nodes = svg ? Array.from(svg.querySelectorAll("g.node")) : [];
      const fill = (g) => g.querySelector("polygon, path, ellipse")?.getAttribute("fill");
      const byStatus = {};
      for (const status of ["added", "removed", "changed"]) {
        byStatus[status] = nodes.filter((g) => g.classList.contains(`jv-diff-${status}`)).map(fill);
      }
      const texts = svg ? Array.from(svg.querySelectorAll("g.node text")) : [];
      const heights = texts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0);
      const onScreen = texts.filter((t) => {
        const r = t.getBoundingClientRect();
        return r.bottom > box.top && r.top < box.bottom && r.right > box.left && r.left < box.right;
      }).length;
      return { side: canvas.dataset.side, state: canvas.dataset.state, renderer: canvas.dataset.renderer,
        nodes: nodes.length, byStatus, folds: nodes.filter((g) => g.classList.contains("jv-unchanged-run")).length,
        labels: texts.map((t) => t.textContent), fontPx: heights.length ? Math.min(...heights) : 0,
        fontPxMax: heights.length ? Math.max(...heights) : 0, onScreen, width: box.width, height: box.height };
    });
    return { state: view?.dataset.state, canvases,
      legend: Array.from(root.querySelectorAll(".jv-legend-chip")).map((c) => [c.textContent, getComputedStyle(c).backgroundColor]),
      rows: Array.from(root.querySelectorAll(".jv-diff-row[data-status]")).map((r) => r.dataset.status),
      text: (view?.textContent ?? "").slice(0, 3000) };
  });
}

async function waitForGraphs(page, explorer) {
  await page.waitForFunction((root) => {
    const c = root.querySelectorAll(".jv-diff-canvas[data-state='ready'], .jv-diff-canvas[data-state='error']");
    return c.length === 2;
  }, await explorer.elementHandle(), { timeout: 60000 });
}

async function waitIdle(page) {
  await page.waitForSelector(".jp-Notebook-ExecutionIndicator[data-status='idle']", { timeout: 90000 });
}

const browser = await launch({ width: 1500, height: 1200 });
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  watchDialogs(page, problems);
  page.setDefaultTimeout(60000);
  await page.goto(`${base}/lab/tree/${encodeURIComponent(notebook)}?token=${token}`);
  await page.waitForSelector(".jp-NotebookPanel .jp-Cell");
  const accept = page.locator(".jp-Dialog .jp-mod-accept");
  try { await accept.waitFor({ timeout: 5000 }); await accept.click(); } catch { /* no dialog */ }
  await page.locator(".jp-StatusBar-TextItem", { hasText: /\| Idle$/ }).first().waitFor({ timeout: 90000 });
  await page.locator(".lm-MenuBar-itemLabel", { hasText: /^Run$/ }).click();
  await page.locator(".lm-Menu-itemLabel", { hasText: /^Run All Cells$/ }).click();
  await page.waitForSelector(".jv-explorer[data-state='ready']", { timeout: 150000 });
  await waitIdle(page);

  // 1. two specializations of one function
  let explorer = page.locator(".jv-explorer").first();
  await explorer.locator(".jv-compare-toggle").click();
  await explorer.locator(".jv-cmp-run").click();
  await waitForGraphs(page, explorer);
  await explorer.locator(".jv-diff-canvas").first().scrollIntoViewIfNeeded();
  const specializations = await measureCompare(explorer);
  await explorer.screenshot({ path: shot("specializations") });
  // hovering a changed node outlines its match in the other graph
  const changed = explorer.locator(".jv-diff-canvas[data-side='b'] g.node.jv-diff-changed");
  if (await changed.count()) await changed.first().hover();
  const paired = await explorer.evaluate((root) => Array.from(root.querySelectorAll(".jv-diff-canvas")).map(
    (c) => c.querySelectorAll("g.jv-pair").length));
  await explorer.locator(".jv-diff-graphs").screenshot({ path: shot("specializations-graphs") });
  const before = await explorer.locator(".jv-previous-run").count();

  // 2. the function's cell edited and run again, then the explorer's cell
  const cell = page.locator(".jp-Notebook .jp-Cell").nth(1);
  await cell.locator(".cm-content").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(edited);
  await page.keyboard.press("Shift+Enter");
  await waitIdle(page);
  await page.keyboard.press("Shift+Enter");
  await page.waitForFunction(() => document.querySelector(".jv-explorer[data-state='ready'] .jv-previous-run"),
    null, { timeout: 90000 });
  await waitIdle(page);
  explorer = page.locator(".jv-explorer").first();
  const previousText = await explorer.locator(".jv-previous-run").innerText();
  await explorer.locator(".jv-compare-previous-run").click();
  await waitForGraphs(page, explorer);
  await explorer.locator(".jv-diff-canvas").first().scrollIntoViewIfNeeded();
  const previousRun = await measureCompare(explorer);
  previousRun.pickersShown = await explorer.locator(".jv-cmp-a-spec").isVisible();
  await explorer.screenshot({ path: shot("previous-run") });
  await explorer.locator(".jv-diff-graphs").screenshot({ path: shot("previous-run-graphs") });
  await page.mouse.move(0, 0);
  await explorer.locator(".jv-compare").screenshot({ path: shot("previous-run-compare") });
  const injected = await page.locator("img[src='x']").count();
  const errors = await page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").allInnerTexts();
  report({ label, specializations, paired, before, previousText, previousRun, injected, errors, problems });
} catch (err) {
  try { await browser.pages()[0]?.screenshot({ path: shot("failure"), fullPage: false }); } catch {}
  report({ label, fatal: String(err && err.stack || err), problems });
  process.exitCode = 1;
} finally {
  await browser.close();
}
