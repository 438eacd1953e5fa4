// The house rule "files under 500 lines (outside data)" for the gateway's code and its scripts: a
// file past it is split by concept (as src/db/schema/ and scripts/lib/browser-*.mjs are).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const LIMIT = 500;
/** Data a generator writes, not code anyone edits by hand. */
const DATA = [/^src\/catalog\/generated\//];
const CODE = /\.(ts|tsx|mjs|js)$/;

/** @param {string} dir @returns {string[]} */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : CODE.test(e.name) ? [join(dir, e.name)] : []));
}

test(`every file of src/ and scripts/ has at most ${LIMIT} lines (generated data aside)`, () => {
  const long = [...files(join(ROOT, "src")), ...files(join(ROOT, "scripts"))]
    .map((f) => ({ path: relative(ROOT, f).split("\\").join("/"), lines: readFileSync(f, "utf8").split("\n").length - 1 }))
    .filter((f) => f.lines > LIMIT && !DATA.some((re) => re.test(f.path)));
  assert.deepEqual(long, []);
});
