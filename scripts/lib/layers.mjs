// The import graph of src/ (tests excluded) against the layering that docs/architecture.md states
// in its first sentence. `npm test` runs scripts/test/layers.test.mjs over it: no import circle,
// and no more imports that run from a lower layer up than LAYER_BUDGET (each one is listed).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * Layers from the top (0) down. A file may import its own layer and any layer below it. The first
 * matching prefix of a path under src/ decides its layer.
 */
export const LAYERS = [
  { name: "entry", paths: ["index.ts", "app.ts", "scheduled.ts"] },
  { name: "front doors", paths: ["routes/", "dashboard/", "mcp/", "openapi/", "dialects/"] },
  { name: "pipeline", paths: ["embeddings/", "generation/", "cache/"] },
  { name: "operations", paths: ["audit/", "actions/", "organizations/", "platform/", "keys/", "oauth/", "sso/"] },
  { name: "admission", paths: ["auth/", "members/", "rate-limits/", "app-types.ts"] },
  { name: "domain", paths: ["routing/", "providers/", "catalog/", "iam/", "billing/", "usage/", "integrations/", "context/", "durable-objects/"] },
  { name: "storage", paths: ["db/"] },
  { name: "lib", paths: ["lib/", "errors/", "env.ts"] },
];

/** Imports that run from a lower layer up; the test fails above it. Lower it as the code allows. */
export const LAYER_BUDGET = 20;

export function layerOf(/** @type {string} */ path) {
  const i = LAYERS.findIndex((l) => l.paths.some((p) => (p.endsWith("/") ? path.startsWith(p) : path === p)));
  if (i < 0) throw new Error(`src/${path} is in no layer of scripts/lib/layers.mjs`);
  return i;
}

function* sources(/** @type {string} */ dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith(".d.ts")) yield p;
  }
}

/** Every relative import and re-export of src/ (type-only ones too: they tie the modules as well). */
export function importGraph(/** @type {string} */ root) {
  const src = resolve(root, "src");
  /** @type {{from: string, to: string}[]} */
  const edges = [];
  for (const file of sources(src)) {
    const text = readFileSync(file, "utf8");
    const re = /^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"|\bimport\("(\.{1,2}\/[^"]+)"\)/gms;
    for (const m of text.matchAll(re)) {
      const target = resolve(dirname(file), m[1] ?? m[2] ?? "");
      const hit = [target, `${target}.ts`, `${target}.tsx`, join(target, "index.ts")].find((c) => existsSync(c) && statSync(c).isFile());
      if (hit && hit.startsWith(src)) edges.push({ from: relative(src, file), to: relative(src, hit) });
    }
  }
  return edges;
}

/** Imports from a lower layer to a higher one. */
export function upwardImports(/** @type {{from: string, to: string}[]} */ edges) {
  return edges.filter((e) => layerOf(e.from) > layerOf(e.to));
}

/** The import circles: strongly connected components of more than one file (Tarjan). */
export function importCircles(/** @type {{from: string, to: string}[]} */ edges) {
  /** @type {Map<string, string[]>} */
  const next = new Map();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], circles = [];
  const visit = (/** @type {string} */ v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const part = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); part.push(w); } while (w !== v);
      if (part.length > 1) circles.push(part.sort());
    }
  };
  for (const v of new Set(edges.flatMap((e) => [e.from, e.to]))) if (!idx.has(v)) visit(v);
  return circles;
}
