// The bench instruments enter the request path through one seam (docs/architecture.md): the
// Worker's entry wraps the bindings, one middleware hands out the probe and stamps the headers.
// The pipeline holds the probe (src/lib/probe.ts), never the bench modules themselves.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { importGraph } from "../lib/layers.mjs";
import { ROOT } from "../lib/local.mjs";

const edges = importGraph(ROOT);

test("only the Worker's entry and the instruments middleware import the world-bench module", () => {
  const from = edges.filter((e) => e.to === "lib/debug-world.ts").map((e) => e.from).sort();
  assert.deepEqual(from, ["index.ts", "routes/middleware/instruments.ts"]);
});

test("outside the budget objects, only the instruments middleware reads the object-call counter", () => {
  const from = edges.filter((e) => e.to === "durable-objects/debug-latency.ts" && !e.from.startsWith("durable-objects/")).map((e) => e.from);
  assert.deepEqual(from, ["routes/middleware/instruments.ts"]);
});

// The deployed bundle (wrangler.jsonc's `define`) is built without the instruments; the bench's
// and the dev server's builds (`--define __BENCH_INSTRUMENTS__:true`) with them.
test("a deployed bundle carries none of the instruments; the bench's build carries them", () => {
  const marks = ["x-gateway-path-timing", "x-gateway-do-calls", "DO_LATENCY_MS", "D1_PRIMARY_LATENCY_MS"];
  const bundle = (/** @type {string[]} */ extra) => {
    const outdir = mkdtempSync(join(tmpdir(), "switchboard-bundle-"));
    try {
      execFileSync(process.execPath, [join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--minify", ...extra, "--outdir", outdir], {
        cwd: ROOT,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      return readFileSync(join(outdir, "index.js"), "utf8");
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  };
  const deployed = bundle([]);
  const bench = bundle(["--define", "__BENCH_INSTRUMENTS__:true"]);
  for (const mark of marks) {
    assert.ok(!deployed.includes(mark), `the deployed bundle carries ${mark}`);
    assert.ok(bench.includes(mark), `the bench bundle lacks ${mark}`);
  }
});
