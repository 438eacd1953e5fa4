// The bench instruments enter the request path through one seam (docs/architecture.md): the
// Worker's entry wraps the bindings, one middleware hands out the probe and stamps the headers.
// The pipeline holds the probe (src/lib/probe.ts), never the bench modules themselves.
import assert from "node:assert/strict";
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
