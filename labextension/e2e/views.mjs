// Open explorers backed by real Python widgets (live.html, served by tests/test_explorer_e2e.py),
// act on them as a user would (search + Enter, double-click a cluster, fit, expand a block,
// later calls of the function) and measure, after each step, where the graph is and how big its
// labels are drawn. Usage: node views.mjs BASE_URL OUT_DIR PLAN.json
// PLAN: [{name, steps: [{do: "measure"|"shot"|"search"|"dblclick"|"click"|"fit"|"action"|
//        "pull"|"stage"|"open-kernel"|"compare", ...}]}]. Prints `JITVIZ_RESULT {...}`.
// "compare" opens the compare panel (or clicks `selector`, e.g. the recompile reason's
// "diff with previous"), optionally picks {a, b} ({spec, stage}), clicks "show diff" and records
// the diff view: its rows' statuses and markers, the text, the font size of its rows.
import { launch, report, watchDialogs } from "./common.mjs";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [base, outDir, planPath] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const problems = [];
const results = {};

/** Where the graph is relative to the canvas, and how large its labels are on screen. */
function measure(root) {
  const canvas = root.querySelector(".jv-canvas");
  const c = canvas.getBoundingClientRect();
  const meets = (r) => r.right > c.left && r.left < c.right && r.bottom > c.top && r.top < c.bottom;
  let box = null;
  let visible = 0;
  const nodes = Array.from(canvas.querySelectorAll("g.node"));
  for (const g of nodes) {
    const r = g.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    box = box ? { left: Math.min(box.left, r.left), top: Math.min(box.top, r.top),
      right: Math.max(box.right, r.right), bottom: Math.max(box.bottom, r.bottom) }
      : { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    if (meets(r)) visible += 1;
  }
  const sizes = [];
  const heights = [];
  for (const t of Array.from(canvas.querySelectorAll("g.node text"))) {
    const m = t.getScreenCTM();
    const size = parseFloat(t.getAttribute("font-size") || getComputedStyle(t).fontSize);
    if (m && size) sizes.push(size * Math.hypot(m.a, m.b));
    const r = t.getBoundingClientRect();
    if (r.height && meets(r)) heights.push(r.height);
  }
  const median = (xs) => xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : 0;
  const selected = canvas.querySelector("g.jv-selected");
  const sr = selected?.getBoundingClientRect();
  return {
    state: root.dataset.state, nodes: nodes.length, visible,
    graphBox: box, canvasBox: { left: c.left, top: c.top, right: c.right, bottom: c.bottom },
    intersects: !!box && meets(box),
    fontPx: +median(sizes).toFixed(2), fontPxMin: +Math.min(...sizes).toFixed(2),
    fontPxMax: +Math.max(...sizes).toFixed(2), textHeightPx: +median(heights).toFixed(2),
    selected: selected?.id ?? null, selectedVisible: !!sr && meets(sr),
    matches: Array.from(canvas.querySelectorAll("g.jv-match")).map((g) =>
      Array.from(g.querySelectorAll("text")).map((t) => t.textContent).join(" | ")),
    searchInfo: root.querySelector(".jv-search-info")?.textContent ?? "",
    info: root.querySelector(".jv-info")?.textContent ?? "",
    pending: root.querySelector(".jv-pending")?.textContent ?? "",
    specOptions: Array.from(root.querySelectorAll(".jv-spec option")).map((o) => o.textContent),
    events: root.querySelectorAll("li.jv-event").length,
  };
}

async function settle(page) {
  await page.waitForFunction(() => !window.jitvizBusy &&
    document.querySelector(".jv-explorer")?.dataset.state === "ready", null, { timeout: 30000 });
  await page.waitForTimeout(150);
}

const browser = await launch({ width: 1360, height: 900 });
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  watchDialogs(page, problems);
  page.setDefaultTimeout(30000);
  for (const scenario of plan) {
    const out = (results[scenario.name] = { steps: [] });
    try {
      await page.goto(`${base}/live.html?w=${encodeURIComponent(scenario.name)}`);
      await settle(page);
      const root = page.locator(".jv-explorer");
      for (const step of scenario.steps) {
        const record = { ...step };
        if (step.do === "search") {
          await page.locator(".jv-search").fill(step.text);
          await page.waitForTimeout(200);
          if (step.enter) await page.locator(".jv-search").press("Enter");
        } else if (step.do === "dblclick" || step.do === "click") {
          const target = page.locator(step.selector).nth(step.nth ?? 0);
          if (step.do === "dblclick") await target.dblclick({ position: step.position });
          else await target.click({ position: step.position });
        } else if (step.do === "fit") {
          await page.locator(".jv-button", { hasText: /^fit$/ }).click();
        } else if (step.do === "stage") {
          await page.locator(".jv-stage").selectOption(step.value);
        } else if (step.do === "action") {
          await page.evaluate(async ([n, a]) => {
            await fetch(`/live/${encodeURIComponent(n)}/action`, { method: "POST", body: a });
            await new Promise((r) => setTimeout(r, 600)); // the widget's live refresh (0.25 s)
            await window.jitvizPull();
          }, [scenario.name, step.action]);
        } else if (step.do === "compare") {
          if (step.selector) {
            await page.locator(step.selector).first().click();
          } else {
            if (await page.locator(".jv-compare").isHidden()) await page.locator(".jv-compare-toggle").click();
            for (const side of ["a", "b"]) {
              const pick = step[side];
              if (!pick) continue;
              if (pick.spec !== undefined) await page.locator(`.jv-cmp-${side}-spec`).selectOption(String(pick.spec));
              if (pick.stage !== undefined) await page.locator(`.jv-cmp-${side}-stage`).selectOption(pick.stage);
            }
            await page.locator(".jv-cmp-run").click();
          }
          await page.waitForSelector(".jv-diff-view[data-state=ready], .jv-diff-view[data-state=error]", { timeout: 20000 });
          record.diff = await page.locator(".jv-diff-view").evaluate((v) => {
            const rows = Array.from(v.querySelectorAll(".jv-diff-row[data-status]"));
            const sizes = rows.map((r) => parseFloat(getComputedStyle(r.querySelector(".jv-diff-b")).fontSize));
            const box = v.getBoundingClientRect();
            return { state: v.dataset.state, text: v.textContent,
              statuses: rows.map((r) => r.dataset.status),
              markers: rows.map((r) => r.querySelector(".jv-diff-marker").textContent),
              chips: Array.from(v.querySelectorAll(".jv-chip")).map((c) => c.textContent),
              fontPx: sizes.length ? Math.min(...sizes) : 0, fontPxMax: sizes.length ? Math.max(...sizes) : 0,
              height: box.height, width: box.width,
              picks: Array.from(document.querySelectorAll(".jv-compare select")).map((s) => s.value) };
          });
        } else if (step.do === "open-kernel") {
          await page.locator(".jv-inspector .jv-kernel summary").click();
          // <details> fires "toggle" after the click returns: wait for the widening it causes
          await page.waitForSelector(".jv-inspector.jv-wide", { timeout: 5000 });
          const pre = page.locator(".jv-inspector .jv-kernel pre");
          record.kernel = await pre.evaluate((p) => {
            const style = getComputedStyle(p);
            const lines = p.textContent.split("\n").length;
            return { whiteSpace: style.whiteSpace, scrollWidth: p.scrollWidth,
              clientWidth: p.clientWidth, scrollHeight: p.scrollHeight, lines,
              lineHeight: parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize),
              inspectorWidth: p.closest(".jv-inspector").getBoundingClientRect().width,
              text: p.textContent.slice(0, 2000) };
          });
          record.where = await page.locator(".jv-inspector").innerText();
        }
        if (!["measure", "shot", "open-kernel", "compare"].includes(step.do)) await settle(page);
        if (step.do !== "shot") record.m = await root.evaluate(measure);
        if (step.shot || step.do === "shot") {
          const file = join(outDir, `${scenario.name}-${step.shot ?? step.label ?? out.steps.length}.png`);
          await root.screenshot({ path: file });
          record.screenshot = file;
        }
        out.steps.push(record);
      }
    } catch (err) {
      out.fatal = String(err && err.stack || err);
      try { await page.screenshot({ path: join(outDir, `${scenario.name}-failure.png`) }); } catch {}
    }
  }
  const injected = await page.locator("img[src='x']").count();
  report({ results, problems, injected });
} catch (err) {
  report({ fatal: String(err && err.stack || err), problems, results });
  process.exitCode = 1;
} finally {
  await browser.close();
}
