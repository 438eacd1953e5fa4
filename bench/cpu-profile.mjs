// @ts-check
/**
 * `npm run bench -- --cpu-profile`: a V8 CPU profile of the Switchboard isolate under c=32 load,
 * through workerd's inspector (port 9329, or 9321 under --peers; opened by bench/run.mjs). Prints self and inclusive time
 * per function and saves the profile as bench/results/switchboard.cpuprofile (Chrome DevTools
 * opens it). PROFILE_CALLERS=fetch,Request also lists where those (usually native) functions are
 * called from; PROFILE_CONNECTIONS=1 profiles requests one at a time instead of 32 at once;
 * PROFILE_HEAP=1 also samples allocations (V8's sampling heap profiler, objects the garbage
 * collector took counted too) and prints the bytes allocated per request by function: the garbage
 * collector's share of the samples is paid per byte allocated, so this says where that share comes from.
 * PROFILE_HEAP=live samples only what is still alive when the load ends (what it retains, by the
 * function that allocated it) and prints the heap's size then. PROFILE_INTERVAL_US sets the
 * sampling interval (default 100).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { moduleMap, stageTable } from "./profile-stages.mjs";
import { connectInspector } from "./inspector.mjs";

/**
 * Per-stage CPU per request: the workerd process's CPU per request (/proc) apportioned by the
 * isolate's samples. V8 samples wall time while the isolate runs, so on a loaded machine its own
 * totals overstate CPU; its shares are what it tells. The storage and queue simulators' work runs
 * outside the isolate and is spread over the stages by this method: compare with the floor's CPU.
 */
function printStages(profile, bundleEntry, requests, processCpu) {
  const { stages, modules, libs } = stageTable(profile, moduleMap(bundleEntry));
  const perReq = processCpu / requests;
  console.log(`workerd process CPU ${perReq.toFixed(3)} ms/request over ${requests} requests (profiler on)`);
  console.log("| stage | share of isolate samples | ms/request |\n|---|---|---|");
  for (const [k, v] of stages) if (v >= 0.005) console.log(`| ${k} | ${(100 * v).toFixed(1)}% | ${(v * perReq).toFixed(3)} |`);
  console.log("src modules (nearest on the stack):", modules.slice(0, 25).map(([k, v]) => `${k.slice(4)} ${(100 * v).toFixed(1)}%`).join("; "));
  console.log("library self time:", libs.slice(0, 14).map(([k, v]) => `${k} ${(100 * v).toFixed(1)}%`).join("; "));
}

export async function cpuProfile(target, { cannon, seconds, resultsDir, port = 9329, bundleEntry, cpuMs, drainMs = 0 }) {
  const { send, close } = await connectInspector(port);
  await cannon({ ...target, connections: 8, seconds: 1 });
  await send("Profiler.enable");
  // PROFILE_INTERVAL_US: 100 us sees more of short functions. At 1,000 us the shares and the
  // profiler's own cost were the same (docs/benchmarks.md): its native rows overstate at any rate.
  await send("Profiler.setSamplingInterval", { interval: Number(process.env.PROFILE_INTERVAL_US ?? 100) });
  await send("Profiler.start");
  const live = process.env.PROFILE_HEAP === "live";
  const heap = process.env.PROFILE_HEAP === "1" || live;
  if (heap) await send("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: !live, includeObjectsCollectedByMinorGC: !live });
  const cpu0 = cpuMs && target.pid ? cpuMs(target.pid) : NaN;
  // PROFILE_CONNECTIONS=1: the profile of requests one at a time, where each pays its batches alone.
  const res = await cannon({ ...target, connections: Number(process.env.PROFILE_CONNECTIONS ?? 32), seconds });
  // PROFILE_HEAP=live: what the load left alive, taken before its background work runs out.
  const liveProfile = live ? (await send("HeapProfiler.stopSampling")).profile : null;
  if (live) {
    await send("Runtime.enable");
    const { usedSize, totalSize } = await send("Runtime.getHeapUsage");
    console.log(`heap at the load's end: ${(usedSize / 2 ** 20).toFixed(1)} MiB used of ${(totalSize / 2 ** 20).toFixed(1)} MiB`);
  }
  // --peers: keep sampling while the load's background work (queue batches, alarms) runs out.
  if (drainMs) await new Promise((r) => setTimeout(r, drainMs));
  const processCpu = cpuMs && target.pid ? cpuMs(target.pid) - cpu0 : NaN;
  const { profile } = await send("Profiler.stop");
  const heapProfile = live ? liveProfile : heap ? (await send("HeapProfiler.stopSampling")).profile : null;
  close();
  // Kept for other tools (Chrome DevTools opens .cpuprofile files), next to the other results.
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, "switchboard.cpuprofile"), JSON.stringify(profile));
  const self = new Map();
  let total = 0;
  for (const n of profile.nodes) {
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (n.hitCount ?? 0));
    total += n.hitCount ?? 0;
  }
  console.log(`${res.requests.total} requests; ${total} samples`);
  if (bundleEntry) printStages(profile, bundleEntry, res.requests.total, processCpu);
  if (heapProfile) printAllocations(heapProfile, res.requests.total, resultsDir, live);
  console.log("self time:");
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${((100 * v) / total).toFixed(1)}%  ${k}`);
  // Inclusive time: a function's samples plus all of its callees' (counted once per stack).
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map();
  for (const n of profile.nodes) {
    if (!n.hitCount) continue;
    const seen = new Set();
    for (let id = n.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id).callFrame;
      if (!f.url) continue;
      const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + n.hitCount);
    }
  }
  // PROFILE_CALLERS=fetch,Request: where the samples of these (usually native) functions come from.
  for (const name of (process.env.PROFILE_CALLERS ?? "").split(",").filter(Boolean)) {
    const callers = new Map();
    for (const n of profile.nodes) {
      if (!n.hitCount || n.callFrame.functionName !== name) continue;
      const p = byId.get(parent.get(n.id))?.callFrame;
      const key = p ? `${p.functionName || "(anonymous)"} ${p.url.split("/").pop()}:${p.lineNumber + 1}` : "(root)";
      callers.set(key, (callers.get(key) ?? 0) + n.hitCount);
    }
    console.log(`callers of ${name}:`, [...callers].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${((100 * v) / total).toFixed(1)}%`).join("; "));
  }
  console.log("inclusive time:");
  for (const [k, v] of [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, 50)) console.log(`${((100 * v) / total).toFixed(1)}%  ${k}`);
}

/** Bytes allocated per request, by allocating function (self) and by function with its callees (inclusive). */
function printAllocations(heapProfile, requests, resultsDir, live = false) {
  writeFileSync(path.join(resultsDir, "switchboard.heapprofile"), JSON.stringify(heapProfile));
  const self = new Map();
  const inclusive = new Map();
  const key = (f) => `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
  let total = 0;
  const walk = (node, stack) => {
    const k = key(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + node.selfSize);
    total += node.selfSize;
    const here = stack.includes(k) ? stack : [...stack, k];
    for (const s of here) inclusive.set(s, (inclusive.get(s) ?? 0) + node.selfSize);
    for (const c of node.children ?? []) walk(c, here);
  };
  walk(heapProfile.head, []);
  const kb = (b) => (b / requests / 1024).toFixed(2);
  console.log(`${live ? "still alive at the load's end" : "allocations"}: ${kb(total)} KiB/request sampled (every 4 KiB on average), by function (self):`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${kb(v)} KiB  ${k}`);
  console.log("allocations, inclusive:");
  for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${kb(v)} KiB  ${k}`);
}
