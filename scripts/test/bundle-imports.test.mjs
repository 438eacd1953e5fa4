// The Worker bundle has a size limit (docs/benchmarks.md). `import { z } from "zod"` binds zod's
// whole namespace as a value, which keeps every locale zod ships (~250 KiB minified) in the
// bundle; `import * as z from "zod"` lets esbuild keep only what is used.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../lib/local.mjs";

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) yield p;
  }
}

test("Worker code imports zod as a namespace, never the `z` value", () => {
  const offenders = [];
  for (const file of sources(join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    // A value import of `z` (or zod's default export); type-only imports are erased.
    if (/^import\s+(?!type\b)[^;]*\{[^}]*(?<!type\s)\bz\b[^}]*\}\s*from\s*"zod(\/v4)?"/m.test(text) || /^import\s+z\s+from\s*"zod/m.test(text)) {
      offenders.push(relative(ROOT, file));
    }
  }
  assert.deepEqual(offenders, [], `use \`import * as z from "zod"\` in: ${offenders.join(", ")}`);
});
