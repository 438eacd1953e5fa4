// @ts-check
/**
 * `npm run bench -- --integrations --cpu-profile`: where the CPU of `logBodies` goes. One V8 CPU
 * profile of the Switchboard isolate (wrangler dev's inspector) per side of the A/B, each from a
 * round's start until the work it left is done (consumers included: they run in the same isolate
 * under wrangler dev). Prints per side the workerd process CPU per request, the stage table of
 * bench/profile-stages.mjs, and for the bodies' own steps (by function, inclusive of what they
 * call) their share of the isolate's samples and the ms per request that share stands for. The
 * profiles are saved as bench/results/integrations-{side}.cpuprofile.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { moduleMap, stageTable } from "./profile-stages.mjs";
import { connectInspector } from "./inspector.mjs";

/** The bodies' steps: [label, function names] (inclusive: a step counts once per sample it is on the stack of). */
const BODY_STEPS = [
  ["request path: stream assembled (streamAnswer)", ["streamAnswer"]],
  ["request path: capture joins its group (queueBodies)", ["queueBodies", "captureBodies"]],
  ["isolate: waiting for the group's send (untilSent polls)", ["untilSent"]],
  ["isolate: group send, total (sendGroup)", ["sendOpen", "sendGroup"]],
  ["  of which: JSON text, cap and sizing (groupMessages)", ["groupMessages", "entryOf", "capJson"]],
  ["  of which: LOGS.sendBatch (sendMessages)", ["sendMessages"]],
  ["consumer: bodies stored, total (storeBodies)", ["storeBodies"]],
  ["  of which: JSON text, secret scrub/redaction (storedText)", ["storedOf", "storedText", "cleaned", "scrubValue"]],
  ["  of which: gzip (CompressionStream)", ["gzipJson", "gzipText"]],
  ["consumer: message check (bodyMessageOf)", ["bodyMessageOf"]],
];

/** Connects to the inspector; returns `run(fn)`: profiles while `fn` runs, resolves to [fn's value, profile]. */
export async function inspectorProfiler(port) {
  const { send, onEvent, close } = await connectInspector(port);
  /** url -> scriptId: the bundle's source is read back through the debugger (wrangler dev's build directory is temporary). */
  const scripts = new Map();
  onEvent("Debugger.scriptParsed", (p) => scripts.set(p.url, p.scriptId));
  await send("Debugger.enable");
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  return {
    async run(fn) {
      await send("Profiler.start");
      const value = await fn();
      const { profile } = await send("Profiler.stop");
      return [value, profile];
    },
    /** The source of a script the profile names, or null. */
    async source(url) {
      const scriptId = scripts.get(url) ?? [...scripts].find(([u]) => u.endsWith(url.split("/").pop() ?? url))?.[1];
      if (!scriptId) console.log(`bundle ${url} not among the scripts the debugger reported (${[...scripts.keys()].slice(0, 5).join(", ")})`);
      return scriptId ? (await send("Debugger.getScriptSource", { scriptId })).scriptSource : null;
    },
    close,
  };
}

/** The url of the bundle the profile's frames point into (wrangler dev's unminified build). */
export function bundleUrlOf(profile) {
  return profile.nodes.map((n) => n.callFrame.url).find((u) => /\.m?js$/.test(u) && !/-internal:/.test(u)) ?? null;
}

/** Inclusive samples per step (each step once per sample), and the isolate's busy samples. */
function bodySteps(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const counts = new Map(BODY_STEPS.map(([label]) => [label, 0]));
  let busy = 0;
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits || n.callFrame.functionName === "(idle)") continue;
    busy += hits;
    const names = new Set();
    for (let i = n.id; i !== undefined; i = parent.get(i)) names.add(byId.get(i).callFrame.functionName);
    for (const [label, fns] of BODY_STEPS) if (fns.some((f) => names.has(f))) counts.set(label, counts.get(label) + hits);
  }
  return { busy, counts };
}

/** Prints one side's profile; `cpuPerRequest` is the workerd processes' CPU per request over the same span. */
export function reportProfile(side, profile, { requests, cpuPerRequest, resultsDir, bundleSource }) {
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, `integrations-${side}.cpuprofile`), JSON.stringify(profile));
  const { busy, counts } = bodySteps(profile);
  const bundle = bundleSource ? path.join(resultsDir, "integrations-bundle.js") : null;
  if (bundle) writeFileSync(bundle, bundleSource);
  console.log(`\n[${side}] ${requests} requests; workerd CPU ${cpuPerRequest.toFixed(3)} ms/request (profiler on); isolate busy samples ${busy} (${(busy / Math.max(1, requests)).toFixed(2)} per request)`);
  if (bundle) {
    const { stages, libs } = stageTable(profile, moduleMap(bundle));
    console.log("| stage | share of isolate samples | ms/request |\n|---|---|---|");
    for (const [k, v] of stages) if (v >= 0.005) console.log(`| ${k} | ${(100 * v).toFixed(1)}% | ${(v * cpuPerRequest).toFixed(3)} |`);
    console.log("library / native self time:", libs.slice(0, 12).map(([k, v]) => `${k} ${(100 * v).toFixed(1)}%`).join("; "));
  }
  console.log("| bodies' step | share of isolate samples | ms/request |\n|---|---|---|");
  for (const [label, n] of counts) console.log(`| ${label} | ${((100 * n) / Math.max(1, busy)).toFixed(1)}% | ${((n / Math.max(1, busy)) * cpuPerRequest).toFixed(3)} |`);
}
