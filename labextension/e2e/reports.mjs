// Open jitviz's exported HTML reports from disk, with every network request refused (they
// must work offline), click through the source-fate view, take screenshots.
// Usage: node reports.mjs ANNOTATION.html FUNCTION_REPORT.html OUT_PREFIX
import { launch, report, watchDialogs } from "./common.mjs";

const [annotationFile, functionFile, outPrefix] = process.argv.slice(2);
const problems = [];
const network = [];
const browser = await launch({ width: 1200, height: 900 });
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  watchDialogs(page, problems);
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:")) return route.continue();
    network.push(url);
    return route.abort();
  });

  await page.goto(`file://${annotationFile}`);
  const rows = await page.locator(".jv-annot summary[id^=jv-line-]").count();
  // the colour of a kernel line, and of a dead one, as rendered
  const colourOf = (code) => page.locator(".jv-annot summary", { hasText: code }).first()
    .evaluate((el) => getComputedStyle(el).backgroundColor);
  const kernelColour = await colourOf("jnp.sin(y)");
  const deadColour = await colourOf("unused =");
  const fontPx = await page.locator(".jv-annot summary").first()
    .evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  // click a kernel line: its equations and generated lines appear
  const line = page.locator(".jv-annot summary", { hasText: "jnp.sin(y)" }).first();
  await line.click();
  const opened = await line.evaluate((el) => el.parentElement.open);
  const details = await line.evaluate((el) => el.parentElement.innerText);
  await page.screenshot({ path: `${outPrefix}-line.png` });
  // follow a generated line into the kernel's source (its <details> opened by hand here)...
  const gen = page.locator(".jv-annot details[open] a.jv-gen").first();  // the clicked line's
  const genTarget = (await gen.getAttribute("href")).slice(1);
  await page.evaluate((id) => { document.getElementById(id).closest("details").open = true; },
    genTarget);
  await gen.click();
  const hashAfterGen = await page.evaluate(() => location.hash);
  const targetOutline = await page.evaluate((id) =>
    getComputedStyle(document.getElementById(id)).outlineStyle, genTarget);
  await page.screenshot({ path: `${outPrefix}-kernel.png` });
  // ...and back from the kernel line to the source line
  await page.locator(`#${genTarget} a.jv-back`).click();
  const hashAfterBack = await page.evaluate(() => location.hash);

  await page.goto(`file://${functionFile}`);
  const sections = await page.locator("section h2").allInnerTexts();
  const diffSvgs = await page.locator("section#diffs svg, section[id^=diff] svg").count();
  await page.screenshot({ path: `${outPrefix}-function.png`, fullPage: false });
  const injected = await page.locator("img[src='x'], script[src]").count();
  // one picture per view, for the README (test-artifacts/reports-section-*.png)
  for (const id of ["ledger", "diffs", "annotation"]) {
    const section = page.locator(`section#${id}`);
    if (await section.count()) {
      await section.screenshot({ path: `${outPrefix}-section-${id}.png` });
    }
  }

  report({ rows, kernelColour, deadColour, fontPx, opened, details, genTarget, hashAfterGen,
    targetOutline, hashAfterBack, sections, diffSvgs, injected, network, problems });
} catch (err) {
  report({ fatal: String(err?.stack || err), problems, network });
} finally {
  await browser.close();
}
