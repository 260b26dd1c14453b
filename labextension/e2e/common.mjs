// Shared by the end-to-end drivers: launching Debian's Chromium through playwright-core.
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.JITVIZ_CHROMIUM || "/usr/bin/chromium";

/** A browser context on a fresh profile directory (Playwright's --user-data-dir). */
export async function launch(viewport = { width: 1360, height: 1000 }) {
  const profile = mkdtempSync(join(tmpdir(), "jitviz-chromium-"));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** Fail on any alert/confirm/prompt: the XSS probe must never fire. */
export function watchDialogs(page, problems) {
  page.on("dialog", async (dialog) => {
    problems.push(`a ${dialog.type()} dialog opened: ${dialog.message()}`);
    await dialog.dismiss();
  });
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
}

export function report(result) {
  process.stdout.write(`JITVIZ_RESULT ${JSON.stringify(result)}\n`);
}
