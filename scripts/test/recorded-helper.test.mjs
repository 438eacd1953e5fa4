// Tests read what the fake upstream recorded (`/__recorded/<tag>`) through one helper,
// test/helpers/recorded.ts, instead of each keeping its own copy of the fetch and its own idea of
// the record's shape.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const HELPER = "test/helpers/recorded.ts";

/** @param {string} dir @returns {string[]} */
function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
}

test("only test/helpers/recorded.ts fetches the fake upstream's /__recorded/", () => {
  const copies = [...tsFiles(join(ROOT, "src")), ...tsFiles(join(ROOT, "test"))]
    .map((f) => relative(ROOT, f).split("\\").join("/"))
    .filter((f) => f !== HELPER && !f.startsWith("test/fake-upstream/") && readFileSync(join(ROOT, f), "utf8").includes("/__recorded/"));
  assert.deepEqual(copies, []);
});
