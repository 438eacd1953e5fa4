// The dashboard's static files are served by the Worker from a module generated out of public/
// (scripts/static-files.mjs), and the Worker has no static-assets directory: with one, every API
// request first passes the assets router (docs/benchmarks.md measures what that cost).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";
import { OUTPUT, renderStaticModule } from "../static-files.mjs";

test("the generated static-files module matches public/ (else: node scripts/static-files.mjs)", () => {
  assert.equal(readFileSync(join(ROOT, OUTPUT), "utf8"), renderStaticModule(ROOT));
});

test("wrangler.jsonc configures no static-assets directory", () => {
  const config = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
  assert.doesNotMatch(config, /^\s*"assets"\s*:/m);
});
