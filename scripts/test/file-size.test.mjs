// The house rule "files under 500 lines (outside data)" for the gateway's code, its scripts, its
// tests and its bench: a file past it is split by concept (as src/db/schema/,
// scripts/lib/browser-*.mjs, test/oauth/ and bench/run.mjs's modules are); tests by what they test.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

const LIMIT = 500;
/** Data a generator writes, not code anyone edits by hand; and a bench run's output (gitignored). */
const DATA = [/^src\/catalog\/generated\//, /^src\/dashboard\/generated\//, /^bench\/results\//];
/** The trees the rule covers. */
const TREES = ["src", "scripts", "test", "bench"];
const CODE = /\.(ts|tsx|mjs|js)$/;

/** @param {string} dir @returns {string[]} */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === "node_modules" ? [] : files(join(dir, e.name))) : CODE.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test(`every file of ${TREES.map((t) => `${t}/`).join(", ")} has at most ${LIMIT} lines (generated data aside)`, () => {
  const long = TREES.flatMap((t) => files(join(ROOT, t)))
    .map((f) => ({ path: relative(ROOT, f).split("\\").join("/"), lines: readFileSync(f, "utf8").split("\n").length - 1 }))
    .filter((f) => f.lines > LIMIT && !DATA.some((re) => re.test(f.path)));
  assert.deepEqual(long, []);
});
