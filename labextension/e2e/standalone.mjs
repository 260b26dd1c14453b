// Open the explorer bundle on its own (harness.html + a state.json written by the Python
// widget), measure how long the first drawing takes, hover and click a node, take a
// screenshot. Usage: node standalone.mjs URL SCREENSHOT.png
import { launch, report, watchDialogs } from "./common.mjs";

const [url, screenshot] = process.argv.slice(2);
const problems = [];
const browser = await launch();
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  watchDialogs(page, problems);
  const started = Date.now();
  await page.goto(url);
  const root = page.locator(".jv-explorer");
  await page.waitForSelector(".jv-explorer[data-state=ready], .jv-explorer[data-state=error]",
    { timeout: 30000 });
  const openMs = Date.now() - started;
  const state = await root.getAttribute("data-state");
  const renderer = await root.getAttribute("data-renderer");
  const nodes = await page.locator(".jv-canvas g.node").count();
  // responsiveness: hover then click the first equation-like node, time until the inspector shows it
  const target = page.locator(".jv-canvas g.node.jv-equation, .jv-canvas g.node.jv-cluster").first();
  const t0 = Date.now();
  await target.hover();
  await target.click();
  await page.waitForSelector(".jv-inspector .jv-inspector-title", { timeout: 5000 });
  const clickMs = Date.now() - t0;
  const inspector = await page.locator(".jv-inspector").innerText();
  const search = page.locator(".jv-search");
  const t1 = Date.now();
  await search.fill("sin");
  await page.waitForFunction(() => document.querySelector(".jv-search-info")?.textContent !== "");
  const searchMs = Date.now() - t1;
  const searchInfo = await page.locator(".jv-search-info").innerText();
  await page.screenshot({ path: screenshot, fullPage: true });
  const injected = await page.locator("img[src='x'], .jv-canvas script").count();
  report({ state, renderer, nodes, openMs, clickMs, searchMs, searchInfo, inspector, injected,
    problems });
} finally {
  await browser.close();
}
