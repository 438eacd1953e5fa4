// `npm run soak`'s dev server: the snapshot holds everything the dev script and the Worker load,
// and a runtime restart in the server log is recognised (it makes a run inconclusive).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";
import { SNAPSHOT, reloadsIn } from "../lib/soak-server.mjs";

/** Files reached from `file` through relative imports (the dev script's own module graph). */
function relativeImports(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = resolve(dirname(file), m[1] ?? "");
    if (existsSync(target) && /\.(mjs|js)$/.test(target)) relativeImports(target, seen);
  }
  return seen;
}

const inSnapshot = (/** @type {string} */ path) => SNAPSHOT.some((entry) => path === entry || path.startsWith(`${entry}/`));

test("the snapshot holds the dev script's module graph and what wrangler builds from", () => {
  const outside = [...relativeImports(join(ROOT, "scripts", "dev.mjs"))].map((f) => relative(ROOT, f)).filter((f) => !inSnapshot(f));
  assert.deepEqual(outside, []);
  const config = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  // public/: the dashboard's static files, which the dev script turns into a module (scripts/static-files.mjs).
  for (const path of [/"main":\s*"([^"]+)"/.exec(config)?.[1], "public", /"migrations_dir":\s*"([^"]+)"/.exec(config)?.[1]]) {
    assert.ok(path && inSnapshot(path), `${path} is in the snapshot`);
  }
});

test("a runtime restart in the server log is counted", () => {
  assert.equal(reloadsIn(["+1.0s [wrangler:info] GET / 200 OK (5ms)"]), 0);
  assert.equal(reloadsIn(["+90.2s ⎔ Reloading local server...", "+91.0s ⎔ Local server updated and ready"]), 1);
});
