// Bundle the front end into the Python package: jitviz/static/explorer.{js,css}, plus
// explorer.build.json recording a hash of the sources it was built from (checked by
// tests/test_explorer_widget.py and by setup.py's build step).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const out = join(here, "..", "jitviz", "static");
mkdirSync(out, { recursive: true });

/** Files that define the bundle; jitviz/explorer/bundle.py hashes the same list. */
export function sourceFiles() {
  const files = ["build.mjs", "package.json", "package-lock.json"];
  const walk = (dir) => {
    for (const name of readdirSync(join(here, dir))) {
      const path = join(dir, name);
      if (statSync(join(here, path)).isDirectory()) walk(path);
      else files.push(path.split(sep).join("/"));
    }
  };
  walk("src");
  return files.sort();
}

export function sourcesHash() {
  const hash = createHash("sha256");
  for (const file of sourceFiles()) {
    hash.update(file + "\0");
    hash.update(readFileSync(join(here, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

await build({
  entryPoints: { explorer: join(here, "src", "index.ts"), graphviz: join(here, "src", "graphviz.ts") },
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  outdir: out,
  logLevel: "warning",
});
await build({
  entryPoints: { explorer: join(here, "src", "explorer.css") },
  bundle: true,
  minify: true,
  outdir: out,
  logLevel: "warning",
});
const stamp = { sources_sha256: sourcesHash(), files: sourceFiles() };
writeFileSync(join(out, "explorer.build.json"), JSON.stringify(stamp, null, 2) + "\n");
console.log(`built ${relative(process.cwd(), join(out, "explorer.js"))} from ${stamp.files.length} files`);
