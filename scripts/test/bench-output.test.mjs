// `npm run bench` writes bench/results/ (gitignored); dated reference runs live in bench/reference/.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

test("the bench's output folder is ignored by git and a dated reference run is committed", () => {
  const source = readFileSync(join(ROOT, "bench", "run.mjs"), "utf8");
  assert.match(source, /path\.join\(root, "bench", "results", "latest\.json"\)/);
  for (const file of ["bench/results/latest.json", "bench/results/latest.md"]) {
    const r = spawnSync("git", ["check-ignore", "--no-index", "-q", file], { cwd: ROOT });
    assert.equal(r.status, 0, `${file} must be gitignored`);
  }
  assert.ok(readdirSync(join(ROOT, "bench", "reference")).some((f) => /^\d{4}-\d{2}-\d{2}\.md$/.test(f)));
});
