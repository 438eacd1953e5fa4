// Node versions: installs run on the machine's Node 20 or later (package.json engines, the README,
// CI), and bring Node 24 LTS from the npm registry for every npm script; installs stay quiet (dev
// packages that declare Node 22 would print one EBADENGINE notice each on Node 20).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const read = (/** @type {string} */ f) => readFileSync(join(ROOT, f), "utf8");

test("engines, README and CI agree: install on Node 20+, scripts on the installed Node 24", () => {
  const pkg = JSON.parse(read("package.json"));
  assert.equal(pkg.engines.node, ">=20");
  assert.match(pkg.devDependencies.node, /^24\.\d+\.\d+$/, "the `node` dev dependency pins a Node 24 LTS release");
  assert.match(read("README.md"), /needs Node 20 or later/);
  assert.match(read("README.md"), /Node 24 LTS/);
  assert.match(read(".ci/run"), /major < 20/);
  assert.match(read(".ci/run"), /major < 22/);
});

test("npm scripts run on the installed Node 24, not the machine's", () => {
  const r = spawnSync("npm", ["exec", "--", "node", "-p", "process.versions.node"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout.trim(), /^24\./);
});

test("npm keeps installs quiet: the project's .npmrc hides engine notices, not errors", () => {
  const npmrc = read(".npmrc");
  assert.match(npmrc, /^loglevel=error$/m);
  assert.match(npmrc, /^engine-strict=false$/m);
  // npm reads it: the effective loglevel in this project is "error"
  const r = spawnSync("npm", ["config", "get", "loglevel"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.stdout.trim(), "error", r.stderr);
});
