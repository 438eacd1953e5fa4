// Node versions: package.json engines, the README and CI say the same, and installs on Node 20 are
// quiet (dev packages that declare Node 22 would print one EBADENGINE notice each).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const read = (/** @type {string} */ f) => readFileSync(join(ROOT, f), "utf8");

test("engines, README and CI agree on Node 20+", () => {
  assert.equal(JSON.parse(read("package.json")).engines.node, ">=20");
  assert.match(read("README.md"), /needs Node 20\+/);
  assert.match(read(".ci/run"), /major < 20/);
});

test("npm keeps installs quiet: the project's .npmrc hides engine notices, not errors", () => {
  const npmrc = read(".npmrc");
  assert.match(npmrc, /^loglevel=error$/m);
  assert.match(npmrc, /^engine-strict=false$/m);
  // npm reads it: the effective loglevel in this project is "error"
  const r = spawnSync("npm", ["config", "get", "loglevel"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.stdout.trim(), "error", r.stderr);
});
