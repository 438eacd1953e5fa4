// @ts-check
/**
 * `npm run bench -- --cpu-profile`: a V8 CPU profile of the Switchboard isolate under c=32 load,
 * through workerd's inspector (port 9329, or 9321 under --peers; opened by bench/run.mjs). Prints self and inclusive time
 * per function and saves the profile as bench/results/switchboard.cpuprofile (Chrome DevTools
 * opens it). PROFILE_CALLERS=fetch,Request also lists where those (usually native) functions are
 * called from.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export async function cpuProfile(target, { cannon, seconds, resultsDir, port = 9329 }) {
  const { default: WebSocket } = await import("ws");
  const list = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const entry = list.find((t) => /switchboard/.test(t.title ?? t.id ?? "")) ?? list[0];
  const ws = new WebSocket(entry.webSocketDebuggerUrl);
  await new Promise((r) => ws.on("open", r));
  let id = 0;
  const pending = new Map();
  ws.on("message", (m) => {
    const msg = JSON.parse(String(m));
    if (msg.id && pending.has(msg.id)) pending.get(msg.id)(msg.result);
  });
  const send = (method, params = {}) => new Promise((r) => { pending.set(++id, r); ws.send(JSON.stringify({ id, method, params })); });
  await cannon({ ...target, connections: 8, seconds: 1 });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("Profiler.start");
  const res = await cannon({ ...target, connections: 32, seconds });
  const { profile } = await send("Profiler.stop");
  ws.close();
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
