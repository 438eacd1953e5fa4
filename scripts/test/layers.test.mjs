// The layering docs/architecture.md states in its first sentence, checked over src/'s imports.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LAYER_BUDGET, importCircles, importGraph, upwardImports } from "../lib/layers.mjs";
import { ROOT } from "../lib/local.mjs";

const edges = importGraph(ROOT);

test("the import graph is read (a broken reader would pass everything)", () => {
  assert.ok(edges.length > 1000, `only ${edges.length} imports found`);
});

test("no import circle in src/", () => {
  const circles = importCircles(edges);
  assert.deepEqual(circles, [], circles.map((c) => `circle: ${c.join(" -> ")}`).join("\n"));
});

test(`at most ${LAYER_BUDGET} imports run from a lower layer up`, () => {
  const up = upwardImports(edges);
  assert.ok(up.length <= LAYER_BUDGET, `${up.length} upward imports:\n${up.map((e) => `  ${e.from} -> ${e.to}`).join("\n")}`);
});
