// @ts-check
/**
 * Per-stage attribution of a V8 CPU profile of the Switchboard isolate (bench/cpu-profile.mjs on
 * the unminified build): esbuild marks where each bundled module starts (`// src/...` and
 * `// node_modules/...` lines), so a sample's line says its module, and each sample goes to the
 * stage of the nearest `src/` module on its stack (a zod parse called from the chat schema is the
 * chat pipeline's cost). Library self time (zod, hono, drizzle) is listed beside it.
 */
import { readFileSync } from "node:fs";

/** Stage of a source module (path under src/), first match wins. */
const STAGES = [
  [/^durable-objects\/(key-state|key-outbox|lease-book|admission-queue)/, "key-state object: leases, settlement, outbox"],
  [/^durable-objects\/org-credits/, "organization credits object"],
  [/^(durable-objects\/rate-|rate-limits\/)/, "rate limits (objects + admission)"],
  [/^(durable-objects\/provider-metrics|routing\/(metrics|live-metrics|ttft-histogram|candidate-stats))/, "provider metrics"],
  [/^usage\/(log-consumer|aggregate|analytics|window|retention|storage-watch|upgrade)/, "log consumer batch + aggregates"],
  [/^usage\//, "request record + log queue send"],
  [/^billing\/settle/, "settlement (isolate side)"],
  [/^(billing\/|members\/)/, "admission: estimate, credits, member budgets, early call"],
  [/^(auth\/|keys\/|context\/)/, "key + context resolution"],
  [/^iam\//, "IAM"],
  [/^routing\//, "routing"],
  [/^(providers\/|dialects\/)/, "provider adapter (request + response)"],
  [/^routes\/chat\/schema/, "chat body validation (zod)"],
  [/^routes\/chat\//, "chat pipeline"],
  [/^(routes\/middleware|app\.ts|index\.ts|errors\/|lib\/probe|lib\/debug-world)/, "middleware, entry, errors"],
  [/^(lib\/|db\/)/, "shared lib, db"],
  [/./, "other src"],
];
const LIBS = /node_modules\/(@?[^/]+(?:\/[^/]+)?)/;
/** A frame of the bundle (the runtime's own JS, `node-internal:` and `cloudflare-internal:`, is not). */
const inBundle = (f) => Boolean(f.url) && !/^[a-z-]+-internal:/.test(f.url);

/** Line number (0-based) to module path, from esbuild's module markers in the bundle. */
export function moduleMap(bundlePath) {
  const lines = readFileSync(bundlePath, "utf8").split("\n");
  const starts = [];
  lines.forEach((l, i) => {
    const m = /^\/\/ ((?:src|node_modules)\/\S+)$/.exec(l);
    if (m) starts.push([i, m[1]]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) { found = starts[mid][1]; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  };
}

/** Stage table: share of the isolate's busy samples per stage and per nearest src module, and library self time. */
export function stageTable(profile, moduleOf) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stages = new Map();
  const modules = new Map();
  const libs = new Map();
  let busy = 0;
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits || n.callFrame.functionName === "(idle)") continue;
    busy += hits;
    let stage = null;
    for (let id = n.id; id !== undefined && !stage; id = parent.get(id)) {
      const f = byId.get(id).callFrame;
      if (!inBundle(f)) continue;
      const mod = moduleOf(f.lineNumber);
      if (mod?.startsWith("src/")) {
        stage = STAGES.find(([re]) => re.test(mod.slice(4)))[1];
        modules.set(mod, (modules.get(mod) ?? 0) + hits);
      }
    }
    const name = n.callFrame.functionName;
    const key = stage ?? (name.startsWith("(") ? `runtime ${name}` : "outside src (runtime, libraries' own callbacks)");
    stages.set(key, (stages.get(key) ?? 0) + hits);
    if (inBundle(n.callFrame)) {
      const mod = moduleOf(n.callFrame.lineNumber);
      const lib = mod && LIBS.exec(mod)?.[1];
      if (lib) libs.set(lib, (libs.get(lib) ?? 0) + hits);
    } else if (!name.startsWith("(")) libs.set(`native ${name}`, (libs.get(`native ${name}`) ?? 0) + hits);
  }
  const sorted = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / Math.max(1, busy)]);
  return { busy, stages: sorted(stages), modules: sorted(modules), libs: sorted(libs) };
}
