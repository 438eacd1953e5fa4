// @ts-check
/**
 * `npm run bench`: measures what Switchboard adds on top of an upstream call.
 *
 * One run, everything on loopback:
 *  - builds the production bundle (`wrangler deploy --dry-run --minify`) and reports its size;
 *  - serves it with Miniflare's API (local D1 + Durable Objects + KV), migrations applied, an
 *    organization bootstrapped, and a key with an IAM rule and a spend limit, so auth, IAM,
 *    spend admission and request logging are all on;
 *  - serves a bare pass-through Worker in the same runtime (the floor), and a reference Worker that
 *    adds only one awaited Durable Object call and one durable write per request (what global
 *    metering costs in this runtime before any gateway logic);
 *  - starts the fake upstream (test/fake-upstream) that both call, and also calls it directly;
 *  - runs autocannon in interleaved rounds: latency at concurrency 1, throughput at 32;
 *  - measures stream time-to-first-chunk and per-chunk delay, workerd CPU per request and peak RSS.
 * Writes bench/results/latest.json and latest.md (gitignored; dated reference runs are committed
 * under bench/reference/) and prints the table with ratios to the floor.
 *
 * Flags: --quick (short runs), --rounds N, --seconds N; diagnostics: --profile, --cpu-profile
 * (PROFILE_CALLERS=fetch,Request names native functions whose callers to list), --latency-only
 * (c=1 p50 per target), --throughput-only (c=32 req/s and CPU per request), --baseline DIR (a second
 * Switchboard built from an earlier commit into DIR, measured side by side), --trace-stream (chunk
 * arrival times), --do-latency N (every budget Durable Object call of Switchboard, and the
 * reference's DO calls, wait N ms first: an object on another continent; reported as added p50
 * against the floor). Always reported: budget-object calls per request and per second for the hot
 * bench key (one key, all traffic), from Switchboard's `x-gateway-do-calls` (DEBUG_DO_CALLS=1).
 * --world: the world-latency mode instead (bench/world.mjs): latency on every binding of the request
 * path and the upstream's first token, TTFB added per traffic class (hot key, long-tail keys, cold
 * isolates), remote round trips before the first byte, early calls cancelled after refusals;
 * writes bench/results/world.json and world.md. With --baseline DIR or --baseline-ref REF (a git
 * ref, built here), every class also runs against that build, interleaved, and an A/B table is
 * printed; --baseline-ref works for the default bench too. --integrations: logBodies on/off and
 * OpenTelemetry export through a flaky collector instead (bench/integrations.mjs).
 * --world-failure: a provider that hangs before its headers or stalls mid-stream, with the default
 * timeouts, with and without hedging (bench/world-failure.mjs; bench/results/world-failure.md).
 * --world --regions: routing per caller continent (bench/world-regions.mjs): callers on NA, EU and
 * AS, a provider with endpoints in three regions behind a network latency matrix, one region failing
 * halfway, residency, weighted keys, CPU with a `provider` object; writes bench/results/world-regions.*.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, statSync } from "node:fs";
import { gzipSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { cpuProfile } from "./cpu-profile.mjs";
import { startLeanBounds } from "./lean-bound.mjs";
import { hermeticWranglerConfig } from "../scripts/lib/hermetic.mjs";
import { worldBindings, worldProfileTarget, worldReport } from "./world.mjs";
import { failureReport } from "./world-failure.mjs";
import { buildRef } from "./baseline.mjs";
import { cpuUntilIdle, peersReport } from "./peers.mjs";
import { runRegions } from "./world-regions.mjs";

function statSafe(p) {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? Number(args[i + 1]) : def;
};
const QUICK = flag("quick");
const ROUNDS = opt("rounds", QUICK ? 1 : 3);
const SECONDS = opt("seconds", QUICK ? 2 : 5);
const STREAM_SAMPLES = QUICK ? 20 : 60;
const WORLD = flag("world");
// --world: the latencies of a caller far from the primary region (bench/world.mjs).
const WORLD_OPTS = {
  objMs: opt("obj-latency", 150),
  primaryMs: opt("d1-primary", 150),
  replicaMs: opt("d1-replica", 5),
  kvMs: opt("kv-latency", 5),
  ttft: opt("ttft", 400),
  hotSeconds: opt("world-seconds", QUICK ? 4 : 10),
  tailKeys: opt("tail-keys", QUICK ? 8 : 24),
  tailSeconds: opt("tail-seconds", QUICK ? 15 : 60),
  coldKeys: opt("cold-keys", QUICK ? 12 : 48),
  refusalRequests: opt("refusal-requests", 10),
  // The hot rows run in this many alternating blocks per build (floor, then each build).
  hotBlocks: opt("hot-blocks", 2),
  noCache: flag("world-no-cache"),
  // --world-strict: the bench organization in strict policy mode (no upstream call before the
  // key's rules are confirmed: docs/admission.md), to measure what it costs each class.
  strict: flag("world-strict"),
};
// --world-failure: a provider that hangs or stalls, with the default timeouts, with and without
// hedging (bench/world-failure.mjs); the objects and storage are near (no binding latency).
const FAILURE = flag("world-failure");
const FAILURE_OPTS = { ttft: opt("ttft", 400), requests: opt("failure-requests", QUICK ? 8 : 24) };
// --world --regions: routing per caller continent instead (bench/world-regions.mjs); no binding latency.
const REGIONS = WORLD && flag("regions");
const REGIONS_OPTS = {
  seconds: opt("regions-seconds", QUICK ? 30 : 60),
  concurrency: opt("regions-concurrency", 3),
  ttft: opt("regions-ttft", 200),
  directSamples: QUICK ? 15 : 40,
  keyRequests: opt("key-requests", 1000),
  limitedRequests: QUICK ? 50 : 100,
  cpuRounds: QUICK ? 1 : 2,
  cpuSeconds: QUICK ? 3 : 5,
  port: opt("regions-port", 8823),
  inspectorPort: opt("regions-inspector-port", opt("regions-port", 8823) + 1000),
};
const DO_LATENCY_MS = WORLD && !REGIONS ? WORLD_OPTS.objMs : opt("do-latency", 0);

const ADMIN_TOKEN = "bench-admin-token-0123456789";
const KEY_HASH_SECRET = "bench-key-hash-secret-0123456789abcdef";
const PROVIDER_IDS = ["openai", "azure", "anthropic", "google-ai-studio", "groq", "together-ai", "mistral", "deepseek"];
const envPrefix = (id) => id.toUpperCase().replace(/[^A-Z0-9]/g, "_");

process.env.WRANGLER_SEND_METRICS = "false";
// Miniflare keeps "in-memory" D1/DO/KV storage as SQLite files in a temp directory. On disk, their
// fsyncs run on workerd's only thread and would be charged to the request; on Cloudflare that
// storage lives elsewhere. Keep it on tmpfs when the machine has one.
if (!process.env.TMPDIR && statSafe("/dev/shm")) {
  const dir = `/dev/shm/switchboard-bench-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
}
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

// ---------- build ----------
function build({ minify = true, instruments = true } = {}) {
  const outdir = path.join(root, "dist", `${minify ? "bench" : "bench-profile"}${instruments ? "" : "-deployed"}`);
  // The production bundle plus the bench instruments (the world modes read their headers); without
  // them (--peers), the bundle `wrangler deploy` ships.
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", minify ? "--minify" : "--minify=false", "--define", `__BENCH_INSTRUMENTS__:${instruments}`, "--outdir", outdir], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  const files = readdirSync(outdir).filter((f) => f.endsWith(".js") || f.endsWith(".mjs") || f.endsWith(".wasm"));
  let raw = 0;
  let gz = 0;
  for (const f of files) {
    const buf = readFileSync(path.join(outdir, f));
    raw += buf.length;
    gz += gzipSync(buf, { level: 9 }).length;
  }
  return { outdir, entry: path.join(outdir, "index.js"), minifiedBytes: raw, gzipBytes: gz };
}

// ---------- workerd process accounting ----------
function childWorkerdPids() {
  const out = execFileSync("ps", ["-eo", "pid,ppid,comm"], { encoding: "utf8" });
  const rows = out.trim().split("\n").slice(1).map((l) => l.trim().split(/\s+/));
  const mine = new Set([String(process.pid)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of rows) if (mine.has(ppid) && !mine.has(pid)) { mine.add(pid); grew = true; }
  }
  return rows.filter(([pid, , comm]) => mine.has(pid) && comm.includes("workerd")).map(([pid]) => Number(pid));
}
const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100);
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
}
function peakRssMiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function startMiniflare(options) {
  const before = new Set(childWorkerdPids());
  // Miniflare 5 takes its own option shape; the bench's are Miniflare 4's, which it converts.
  const mf = new Miniflare(convertV4MiniflareOptions(options));
  const url = await mf.ready;
  const pid = childWorkerdPids().find((p) => !before.has(p));
  return { mf, url: url.toString().replace(/\/$/, ""), pid };
}

// ---------- servers ----------
async function startSwitchboard(bundle, upstreamUrl, { port = 0, instruments = true, inspectorPort = flag("cpu-profile") ? 9329 : undefined, consumers = !flag("no-log-consumer") } = {}) {
  // A copy of wrangler.jsonc away from the developer's .dev.vars, as the test suite uses: the bench
  // sets every binding it needs, and local secrets or overrides (SETTLE_BATCH_MS, ...) stay out.
  const config = hermeticWranglerConfig(root, path.join(root, "node_modules", ".cache", "switchboard-bench-config"));
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  const bindings = {
    ...(workerOptions.bindings ?? {}),
    ENVIRONMENT: "development",
    ADMIN_TOKEN,
    KEY_HASH_SECRET,
    ROUTING_EXPLORATION_RATE: "0",
    // --peers measures Switchboard as deployed: no bench instrument configured.
    ...(instruments ? { DEBUG_DO_CALLS: "1" } : {}),
    ...(DO_LATENCY_MS > 0 ? { DO_LATENCY_MS: String(DO_LATENCY_MS) } : {}),
    ...(process.env.LOG_FLUSH_MS ? { LOG_FLUSH_MS: process.env.LOG_FLUSH_MS } : {}),
    ...(WORLD && !REGIONS ? worldBindings(WORLD_OPTS) : {}),
  };
  for (const id of PROVIDER_IDS) {
    bindings[`${envPrefix(id)}_BASE_URL`] = `${upstreamUrl}/${id}`;
    bindings[`${envPrefix(id)}_API_KEY`] = `bench-operator-key-${id}`;
  }
  const { modules: _m, modulesRules: _r, main: _main, ...rest } = /** @type {any} */ (workerOptions);
  // --no-log-consumer: the LOGS queue is not consumed (records wait in the local queue), to measure
  // the request path without the consumer's work, which on Cloudflare is its own invocation.
  if (!consumers) delete rest.queueConsumers;
  const sb = await startMiniflare({
    ...rest,
    name: "switchboard",
    modules: true,
    scriptPath: bundle.entry,
    modulesRoot: bundle.outdir,
    bindings,
    port,
    host: "127.0.0.1",
    ...(inspectorPort ? { inspectorPort } : {}),
  });
  // migrations
  const db = await sb.mf.getD1Database("DB");
  for (const file of readdirSync(path.join(root, "migrations")).filter((f) => f.endsWith(".sql")).sort()) {
    const sql = readFileSync(path.join(root, "migrations", file), "utf8");
    for (const stmt of sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean)) await db.prepare(stmt).run();
  }
  return { ...sb, db };
}

async function startPassThrough(upstreamUrl, port = 0) {
  // The floor: same runtime, forwards the request untouched to the same upstream path.
  const script = `export default { async fetch(req, env) {
    const u = new URL(req.url);
    return fetch(env.UPSTREAM + u.pathname.replace(/^\\/v1/, "") + u.search, { method: req.method, headers: req.headers, body: req.body });
  } };`;
  return startMiniflare({ name: "passthrough", modules: true, script, bindings: { UPSTREAM: `${upstreamUrl}/openai` }, compatibilityDate: "2026-11-17", port, host: "127.0.0.1" });
}

async function startDoReference(upstreamUrl) {
  // What the architecture costs before any gateway logic: the floor plus one awaited Durable Object
  // round trip (admission) and, after the response, a second call that makes one durable write
  // (settlement). Shows how much of the gap to the floor is the runtime's price for global state.
  const script = `import { DurableObject } from "cloudflare:workers";
  export class Gate extends DurableObject {
    spent = 0n;
    constructor(ctx, env) { super(ctx, env); ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, row TEXT)"); }
    async lag() { if (${DO_LATENCY_MS} > 0) await new Promise((r) => setTimeout(r, ${DO_LATENCY_MS})); }
    async admit(fingerprint, estimate) { await this.lag(); return { ok: fingerprint.length > 0, version: 1, reservationId: String(estimate) }; }
    async settle(reservationId, cost, row) { await this.lag(); this.spent += cost; this.ctx.storage.sql.exec("INSERT INTO log (row) VALUES (?)", row); return { spent: this.spent }; }
  }
  export default { async fetch(req, env, ctx) {
    const gate = env.GATE.get(env.GATE.idFromName("bench-key"));
    const admitted = await gate.admit("fingerprint", 1n);
    const u = new URL(req.url);
    const res = await fetch(env.UPSTREAM + u.pathname.replace(/^\\/v1/, "") + u.search, { method: req.method, headers: req.headers, body: req.body });
    ctx.waitUntil(gate.settle(admitted.reservationId, 1n, "log-row"));
    return res;
  } };`;
  return startMiniflare({
    name: "do-reference",
    modules: true,
    script,
    durableObjects: { GATE: { className: "Gate", useSQLite: true } },
    bindings: { UPSTREAM: `${upstreamUrl}/openai` },
    compatibilityDate: "2026-11-17",
    port: 0,
    host: "127.0.0.1",
  });
}

async function baselineTargets(base) {
  const headers = { authorization: `Bearer ${(await seed(base)).key}` };
  return [
    { name: "baseline canonical", url: `${base.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers, pid: base.pid },
    { name: "baseline pinned", url: `${base.url}/v1/chat/completions`, body: chatBody("openai/gpt-4o-mini"), headers, pid: base.pid },
  ];
}

async function json(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { throw new Error(`not JSON (${res.status}): ${text.slice(0, 300)}`); }
}

async function seed(sb) {
  const boot = await json(await fetch(`${sb.url}/v1/admin/organizations`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Bench", plan: "enterprise", owner: { email: "bench@example.test", name: "Bench", password: "bench-password-123" } }),
  }));
  if (!boot.masterKey) throw new Error(`bootstrap failed: ${JSON.stringify(boot)}`);
  await sb.db.prepare("UPDATE organizations SET credits_pico = ? WHERE id = ?").bind(1_000_000 * 1e12, boot.organization.id).run();
  // Rate limits stay on the path but far above what the bench sends: the enterprise plan's 10,000
  // requests a minute is less than two targets of one organization send at c=32 (its 429s are
  // cheap answers that would count as throughput). A baseline older than rate limits refuses the
  // field; it has no limits to lift.
  await fetch(`${sb.url}/v1/master/organization`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${boot.masterKey.token}`, "content-type": "application/json" },
    body: JSON.stringify({ rateLimits: { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000 } }),
  }).then((r) => r.arrayBuffer());
  const created = await json(await fetch(`${sb.url}/v1/master/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${boot.masterKey.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      projectId: boot.project.id,
      description: "bench",
      usageLimit: "1000000",
      iamRules: [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }, { ruleType: "deny_providers", ruleValue: { providers: ["deepseek"] } }],
    }),
  }));
  if (!created.apiKey?.token) throw new Error(`key creation failed: ${JSON.stringify(created)}`);
  return { key: created.apiKey.token, orgId: boot.organization.id };
}

// ---------- measurements ----------
// Streams ask for the usage chunk, as Switchboard always does upstream: floor and gateway then make
// the upstream produce the same stream, and the difference is what the gateway adds.
const chatBody = (model, stream = false, extra = "") =>
  JSON.stringify({
    model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    temperature: 0.7,
    messages: [{ role: "user", content: `Say hello to the benchmark ${extra}`.trim() }],
  });

/**
 * Latency at concurrency 1, timed with sub-millisecond resolution. The targets take turns in short
 * blocks of back-to-back requests (BLOCK_MS each, the first requests of a block dropped as warm-up),
 * so every target is measured under the same machine conditions: on a shared VM these drift by
 * more than the differences we look for when each target runs for seconds on its own.
 * `seconds` is per target.
 */
// Blocks must hold a few requests beyond the warm-up, also when every DO call is delayed.
const BLOCK_MS = Math.max(100, 10 * DO_LATENCY_MS);
const BLOCK_WARMUP = 2;
async function interleavedLatency(targets, seconds) {
  const samples = targets.map(() => ({ times: [], errors: 0 }));
  const end = performance.now() + seconds * 1000 * targets.length;
  while (performance.now() < end) {
    for (let i = 0; i < targets.length; i++) {
      const { url, body, headers } = targets[i];
      const blockEnd = performance.now() + BLOCK_MS;
      for (let n = 0; performance.now() < blockEnd; n++) {
        const t0 = performance.now();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
        await res.arrayBuffer();
        if (n >= BLOCK_WARMUP) samples[i].times.push(performance.now() - t0);
        if (res.status !== 200) {
          samples[i].errors++;
          console.log(`${targets[i].name}: HTTP ${res.status} at c=1`);
        }
      }
    }
  }
  return samples.map(({ times, errors }) => ({ mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length), p50: pct(times, 50), p99: pct(times, 99), count: times.length, errors }));
}

function cannon({ url, body, headers, connections, seconds }) {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: "POST", body, headers: { "content-type": "application/json", ...headers }, connections, duration: seconds, pipelining: 1 }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

async function streamTiming(url, body, headers) {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  if (!res.ok || !res.body) throw new Error(`stream failed: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  let first = NaN;
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value && value.length) {
      chunks++;
      if (Number.isNaN(first)) first = performance.now() - t0;
    }
  }
  return { ttfc: first, total: performance.now() - t0, chunks };
}

const median = (xs) => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const r2 = (x) => Math.round(x * 100) / 100;
const machineInfo = () => ({ cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version });

async function main() {
  // The regions mode runs the gateway under wrangler dev (bench/world-regions.mjs), nothing below.
  if (REGIONS) return void (await runRegions({ root, adminToken: ADMIN_TOKEN, cannon, machine: machineInfo(), o: REGIONS_OPTS }));
  console.log(`bench: ${ROUNDS} round(s) x ${SECONDS}s per target; machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? "?"}, node ${process.version}`);
  const bundle = build({ minify: !flag("cpu-profile"), instruments: !flag("peers") });
  console.log(`bundle: ${(bundle.minifiedBytes / 1024).toFixed(1)} KiB minified, ${(bundle.gzipBytes / 1024).toFixed(1)} KiB gzip`);
  if (flag("peers")) {
    // --peers: floor, Portkey's gateway and Switchboard (and a --baseline-ref build), each in its
    // own workerd process on fixed ports, ratios in one run (bench/peers.mjs).
    const ref = args.includes("--baseline-ref") ? buildRef(root, args[args.indexOf("--baseline-ref") + 1], { instruments: false }) : null;
    const dir = ref ? ref.dir : args.includes("--baseline") ? path.resolve(args[args.indexOf("--baseline") + 1]) : null;
    await peersReport({
      root, args, rounds: ROUNDS, seconds: SECONDS, bundle, baselineDir: dir, baselineLabel: ref ? ref.label : dir, machine: machineInfo(),
      startFakeUpstream, startPassThrough, startMiniflare, startSwitchboard, startLeanBounds, seed, chatBody, interleavedLatency, cannon, cpuMs, cpuProfile,
    });
    return;
  }
  const upstream = await startFakeUpstream({ port: 0 });
  const sb = await startSwitchboard(bundle, upstream.url);
  // --baseline DIR: a second Switchboard from an earlier build (`wrangler deploy --dry-run --minify
  // --outdir DIR`), measured side by side, for A/B comparisons that machine noise cannot blur.
  // --baseline-ref REF: the same, built from a git ref (buildRef).
  const baselineRef = args.includes("--baseline-ref") ? buildRef(root, args[args.indexOf("--baseline-ref") + 1]) : null;
  const baselineDir = baselineRef ? baselineRef.dir : args.includes("--baseline") ? path.resolve(args[args.indexOf("--baseline") + 1]) : null;
  const baselineLabel = baselineRef ? baselineRef.label : baselineDir;
  const base = baselineDir ? await startSwitchboard({ outdir: baselineDir, entry: path.join(baselineDir, "index.js") }, upstream.url) : null;
  const pt = await startPassThrough(upstream.url);
  if (FAILURE) {
    try {
      await failureReport({ root, sb, pt, adminToken: ADMIN_TOKEN, o: FAILURE_OPTS, machine: machineInfo() });
    } finally {
      await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
    }
    return;
  }
  if (WORLD) {
    try {
      if (flag("cpu-profile")) {
        // The hot key of the world mode under c=32 (streamed, the upstream's first token delayed).
        await cpuProfile(await worldProfileTarget({ sb, adminToken: ADMIN_TOKEN, o: WORLD_OPTS }), { cannon, seconds: SECONDS, resultsDir: path.join(root, "bench", "results") });
        return;
      }
      await worldReport({ root, sb, base, baselineLabel, pt, adminToken: ADMIN_TOKEN, o: WORLD_OPTS, cpu: (x) => cpuMs(x.pid), machine: machineInfo() });
    } finally {
      await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
      if (process.env.TMPDIR?.startsWith("/dev/shm/switchboard-bench-")) rmSync(process.env.TMPDIR, { recursive: true, force: true });
    }
    return;
  }
  const ref = await startDoReference(upstream.url);
  const lean = await startLeanBounds(root, upstream.url, startMiniflare);
  try {
    const { key } = await seed(sb);
    const auth = { authorization: `Bearer ${key}` };
    // The floor and the direct call carry the operator credential the fake upstream expects.
    const upstreamAuth = { authorization: "Bearer bench-operator-key-openai" };
    const targets = [
      { name: "upstream direct", url: `${upstream.url}/openai/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: null },
      { name: "pass-through floor", url: `${pt.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: pt.pid },
      { name: "floor + DO admit/settle (reference)", url: `${ref.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: upstreamAuth, pid: ref.pid },
      ...lean.targets(chatBody("gpt-4o-mini"), upstreamAuth),
      { name: "switchboard canonical", url: `${sb.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers: auth, pid: sb.pid },
      { name: "switchboard pinned", url: `${sb.url}/v1/chat/completions`, body: chatBody("openai/gpt-4o-mini"), headers: auth, pid: sb.pid },
      // The baseline gets the same two targets as Switchboard, so both processes carry the same load.
      ...(base ? await baselineTargets(base) : []),
    ];
    if (flag("trace-stream")) {
      // Arrival time of every chunk, floor vs Switchboard, to see where stream time goes.
      for (let i = 0; i < 3; i++) {
        for (const [name, url, h] of [["floor", `${pt.url}/v1/chat/completions`, upstreamAuth], ["switchboard", `${sb.url}/v1/chat/completions`, auth]]) {
          const t0 = performance.now();
          const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...h }, body: chatBody("gpt-4o-mini", true, "[[fake:drip=10]]") });
          const reader = res.body.getReader();
          const marks = [];
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            marks.push(`${r2(performance.now() - t0)}(${value.length})`);
          }
          console.log(`${name}: ${marks.join(" ")} end ${r2(performance.now() - t0)}`);
        }
      }
      return;
    }
    if (flag("cpu-profile")) {
      await cpuProfile(targets.find((t) => t.name === "switchboard canonical"), { cannon, seconds: SECONDS, resultsDir: path.join(root, "bench", "results") });
      return;
    }
    if (flag("latency-only")) {
      // Quick A/B loop while working on the hot path: sequential latency only, interleaved rounds.
      for (const t of targets) {
        const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
        const meta = (await res.json()).metadata;
        if (meta) console.log(`${t.name}: served by ${meta.used_provider}/${meta.used_model} after ${meta.routing.length} attempt(s)`);
      }
      const p50s = new Map(targets.map((t) => [t.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const lats = await interleavedLatency(targets, SECONDS);
        targets.forEach((t, i) => p50s.get(t.name).push(lats[i].p50));
      }
      const floorP50 = median(p50s.get("pass-through floor"));
      for (const [name, xs] of p50s) console.log(`${name}: p50 ${r2(median(xs))} ms (added ${r2(median(xs) - floorP50)})`);
      return;
    }
    if (flag("throughput-only")) {
      // Quick A/B loop for CPU work: c=32 throughput and workerd CPU per request, interleaved rounds.
      const runs = new Map(targets.filter((t) => t.pid).map((t) => [t.name, { rps: [], cpu: [] }]));
      for (const t of targets) if (t.pid) await cannon({ ...t, connections: 8, seconds: 1 });
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of targets) {
          if (!t.pid) continue;
          const cpu0 = cpuMs(t.pid);
          const thr = await cannon({ ...t, connections: 32, seconds: SECONDS });
          runs.get(t.name).rps.push(thr.requests.average);
          runs.get(t.name).cpu.push((cpuMs(t.pid) - cpu0) / Math.max(1, thr.requests.total));
        }
      }
      const floorRps = median(runs.get("pass-through floor").rps);
      for (const [name, r] of runs) console.log(`${name}: ${r2(median(r.rps))} req/s (${r2(median(r.rps) / floorRps)} of floor), ${r2(median(r.cpu))} ms CPU/req`);
      return;
    }
    if (flag("profile")) {
      // Sequential requests with the gateway's own overhead header, to locate slowness.
      for (const t of targets) {
        const times = [];
        const overheads = [];
        const heads = [];
        for (let i = 0; i < 40; i++) {
          const t0 = performance.now();
          const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
          heads.push(performance.now() - t0);
          await res.text();
          times.push(performance.now() - t0);
          overheads.push(Number(res.headers.get("x-gateway-overhead-ms") ?? NaN));
        }
        console.log(`${t.name}: headers p50 ${r2(median(heads))} ms, wall p50 ${r2(median(times))} ms, max ${r2(Math.max(...times))} ms, gateway overhead p50 ${median(overheads)} ms`);
      }
      return;
    }
    // sanity + warm-up
    for (const t of targets) {
      const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${t.name}: HTTP ${res.status}: ${body.slice(0, 400)}`);
      await cannon({ ...t, connections: 8, seconds: 1 });
    }

    const results = Object.fromEntries(targets.map((t) => [t.name, { p50: [], p99: [], rps: [], cpuPerReq: [], errors: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      const lats = await interleavedLatency(targets, SECONDS);
      for (const [i, t] of targets.entries()) {
        const lat = lats[i];
        const cpu0 = t.pid ? cpuMs(t.pid) : 0;
        const thr = await cannon({ ...t, connections: 32, seconds: SECONDS });
        // Counted until the process is idle again: the request's share of the background work it
        // left (settlement batches, the log queue's consumer, lease flushes) is in its CPU.
        const cpu1 = t.pid ? await cpuUntilIdle(cpuMs, t.pid, t.name.includes("switchboard") || t.name.includes("baseline") ? 6500 : 2000) : 0;
        const r = results[t.name];
        r.p50.push(lat.p50);
        r.p99.push(lat.p99);
        r.rps.push(thr.requests.average);
        if (t.pid) r.cpuPerReq.push((cpu1 - cpu0) / Math.max(1, thr.requests.total));
        r.errors += lat.errors + thr.errors + thr.non2xx;
        // What the errors were (autocannon: connection errors and timeouts, then non-2xx statuses).
        if (thr.errors || thr.non2xx) console.log(`${t.name}: ${thr.errors} connection errors/timeouts, statuses ${JSON.stringify(thr.statusCodeStats)} at c=32`);
        console.log(`round ${round + 1} (load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}) ${t.name}: p50 ${r2(lat.p50)} ms p99 ${r2(lat.p99)} ms (${lat.count} sequential, interleaved), ${thr.requests.average} req/s @32`);
      }
    }

    // streams: time to first chunk and per-chunk delay with a dripping upstream
    const drip = "[[fake:drip=10]]";
    const streamRuns = { floor: [], switchboard: [], messages: [] };
    // The same stream through the Anthropic Messages front door (re-encoded frame by frame).
    const messagesBody = JSON.stringify({ model: "gpt-4o-mini", max_tokens: 256, stream: true, messages: [{ role: "user", content: `Say hello to the benchmark ${drip}` }] });
    for (let i = 0; i < STREAM_SAMPLES; i++) {
      streamRuns.floor.push(await streamTiming(`${pt.url}/v1/chat/completions`, chatBody("gpt-4o-mini", true, drip), upstreamAuth));
      streamRuns.switchboard.push(await streamTiming(`${sb.url}/v1/chat/completions`, chatBody("gpt-4o-mini", true, drip), auth));
      streamRuns.messages.push(await streamTiming(`${sb.url}/v1/messages`, messagesBody, auth));
    }

    // Budget-object calls for the hot key: one c=32 run on one key, calls counted by the isolate.
    const sbTarget = targets.find((t) => t.name === "switchboard canonical");
    const doCalls = async () => {
      const res = await fetch(sbTarget.url, { method: "POST", headers: { "content-type": "application/json", ...sbTarget.headers }, body: sbTarget.body });
      await res.arrayBuffer();
      return Number(res.headers.get("x-gateway-do-calls") ?? NaN);
    };
    const callsBefore = await doCalls();
    const hot = await cannon({ ...sbTarget, connections: 32, seconds: SECONDS });
    const callsAfter = await doCalls();
    const hotCalls = callsAfter - callsBefore - 1;
    const doCallStats = {
      requests: hot.requests.total,
      calls: hotCalls,
      perRequest: Number((hotCalls / Math.max(1, hot.requests.total)).toPrecision(2)),
      perSecond: r2(hotCalls / SECONDS),
      doLatencyMs: DO_LATENCY_MS,
    };
    console.log(`hot key: ${hotCalls} budget-object calls for ${hot.requests.total} requests (${doCallStats.perRequest} per request, ${doCallStats.perSecond}/s for 2 objects, the key's and its organization's credits; a lease lives 1 s; one isolate)`);

    const floor = results["pass-through floor"];
    const summary = {
      date: new Date().toISOString(),
      machine: machineInfo(),
      // On a shared machine the load says how much the absolute numbers mean.
      loadAverage: os.loadavg().map((x) => r2(x)),
      config: { rounds: ROUNDS, secondsPerRun: SECONDS, streamSamples: STREAM_SAMPLES },
      bundle: { minifiedKiB: r2(bundle.minifiedBytes / 1024), gzipKiB: r2(bundle.gzipBytes / 1024) },
      targets: Object.fromEntries(
        Object.entries(results).map(([name, r]) => [
          name,
          {
            p50Ms: r2(median(r.p50)),
            p99Ms: r2(median(r.p99)),
            rps: r2(median(r.rps)),
            rpsRatioToFloor: r2(median(r.rps) / median(floor.rps)),
            addedP50Ms: r2(median(r.p50) - median(floor.p50)),
            addedP99Ms: r2(median(r.p99) - median(floor.p99)),
            cpuMsPerRequest: r.cpuPerReq.length ? r2(median(r.cpuPerReq)) : null,
            errors: r.errors,
          },
        ]),
      ),
      stream: {
        floorTtfcP50Ms: r2(median(streamRuns.floor.map((s) => s.ttfc))),
        switchboardTtfcP50Ms: r2(median(streamRuns.switchboard.map((s) => s.ttfc))),
        addedTtfcP50Ms: r2(median(streamRuns.switchboard.map((s) => s.ttfc)) - median(streamRuns.floor.map((s) => s.ttfc))),
        addedTtfcP99Ms: r2(pct(streamRuns.switchboard.map((s) => s.ttfc), 99) - pct(streamRuns.floor.map((s) => s.ttfc), 99)),
        chunksPerStream: median(streamRuns.switchboard.map((s) => s.chunks)),
        addedDelayPerChunkMs: r2(
          (median(streamRuns.switchboard.map((s) => s.total)) - median(streamRuns.floor.map((s) => s.total)) -
            (median(streamRuns.switchboard.map((s) => s.ttfc)) - median(streamRuns.floor.map((s) => s.ttfc)))) /
            Math.max(1, median(streamRuns.floor.map((s) => s.chunks))),
        ),
        /** `/v1/messages` over `/v1/chat/completions`, same upstream stream: what the dialect adds per upstream event. */
        messagesTtfcP50Ms: r2(median(streamRuns.messages.map((s) => s.ttfc))),
        messagesAddedDelayPerEventOverChatMs: r2(
          (median(streamRuns.messages.map((s) => s.total)) - median(streamRuns.switchboard.map((s) => s.total))) /
            Math.max(1, median(streamRuns.floor.map((s) => s.chunks))),
        ),
      },
      memory: { switchboardPeakRssMiB: sb.pid ? r2(peakRssMiB(sb.pid)) : null, floorPeakRssMiB: pt.pid ? r2(peakRssMiB(pt.pid)) : null },
      doCalls: doCallStats,
    };
    const sbc = summary.targets["switchboard canonical"];
    const refT = summary.targets["floor + DO admit/settle (reference)"];
    summary.againstReference = {
      rpsRatio: r2(sbc.rps / refT.rps),
      addedP50Ms: r2(sbc.p50Ms - refT.p50Ms),
      addedCpuMsPerRequest: sbc.cpuMsPerRequest !== null && refT.cpuMsPerRequest !== null ? r2(sbc.cpuMsPerRequest - refT.cpuMsPerRequest) : null,
    };
    // The request path's targets: added p50 <= 0.5 ms and p99 <= 3 ms at c=1, c=32 >= 80% of the floor.
    summary.targetsMet = {
      addedP50: sbc.addedP50Ms <= 0.5,
      addedP99: sbc.addedP99Ms <= 3,
      throughput: sbc.rpsRatioToFloor >= 0.8,
      streamChunkDelay: summary.stream.addedDelayPerChunkMs <= 1,
      messagesStreamEventDelay: summary.stream.messagesAddedDelayPerEventOverChatMs <= 1,
      bundleMinified: summary.bundle.minifiedKiB <= 1.2 * 1024,
      bundleGzip: summary.bundle.gzipKiB <= 350,
      // The process's CPU per request, background work included.
      cpuPerRequest: (sbc.cpuMsPerRequest ?? Infinity) <= 1.5,
      ...(DO_LATENCY_MS > 0 ? { addedP50WithDoLatency: sbc.addedP50Ms <= 1 } : {}),
    };
    const md = renderMarkdown(summary);
    mkdirSync(path.join(root, "bench", "results"), { recursive: true });
    writeFileSync(path.join(root, "bench", "results", "latest.json"), JSON.stringify(summary, null, 2) + "\n");
    writeFileSync(path.join(root, "bench", "results", "latest.md"), md);
    console.log("\n" + md);
  } finally {
    await Promise.allSettled([sb.mf.dispose(), pt.mf.dispose(), ref.mf.dispose(), ...lean.servers.map((s) => s.mf.dispose()), upstream.close(), ...(base ? [base.mf.dispose()] : [])]);
    if (process.env.TMPDIR?.startsWith("/dev/shm/switchboard-bench-")) rmSync(process.env.TMPDIR, { recursive: true, force: true });
  }
}

/** V8 CPU profile of the Switchboard isolate during a c=32 run: top functions by self time. */
function renderMarkdown(s) {
  const rows = Object.entries(s.targets).map(([name, t]) =>
    `| ${name} | ${t.p50Ms} | ${t.p99Ms} | ${t.addedP50Ms} | ${t.addedP99Ms} | ${t.rps} | ${t.rpsRatioToFloor} | ${t.cpuMsPerRequest ?? "–"} | ${t.errors} |`,
  );
  const met = Object.entries(s.targetsMet).map(([k, v]) => `${k}: ${v ? "met" : "MISSED"}`).join(", ");
  return [
    `Benchmark ${s.date} — ${s.machine.cores} cores (${s.machine.cpu}), ${s.machine.memoryGiB} GiB, Node ${s.machine.node}; ${s.config.rounds} interleaved rounds x ${s.config.secondsPerRun}s; load average ${s.loadAverage.join(" / ")}`,
    "",
    "| target | p50 ms (c=1) | p99 ms (c=1) | added p50 | added p99 | req/s (c=32) | ratio to floor | workerd CPU ms/req (incl. background) | errors |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `Streams (upstream drips a chunk every 10 ms): TTFC p50 floor ${s.stream.floorTtfcP50Ms} ms, switchboard ${s.stream.switchboardTtfcP50Ms} ms (added p50 ${s.stream.addedTtfcP50Ms} ms, p99 ${s.stream.addedTtfcP99Ms} ms); added delay per chunk ${s.stream.addedDelayPerChunkMs} ms over ${s.stream.chunksPerStream} chunks. /v1/messages stream: TTFC p50 ${s.stream.messagesTtfcP50Ms} ms, added per event over chat ${s.stream.messagesAddedDelayPerEventOverChatMs} ms.`,
    `Against the reference (floor + one awaited DO round trip + one durable write, no gateway logic): reference keeps ${s.targets["floor + DO admit/settle (reference)"].rpsRatioToFloor} of the floor; Switchboard keeps ${s.againstReference.rpsRatio} of the reference, adds ${s.againstReference.addedP50Ms} ms p50 and ${s.againstReference.addedCpuMsPerRequest} ms CPU per request on top of it.`,
    `Hot key (one key, all traffic, one isolate, c=32): ${s.doCalls.calls} budget Durable Object calls for ${s.doCalls.requests} requests = ${s.doCalls.perRequest} per request (${s.doCalls.perSecond}/s over 2 objects, the key's and its organization's credits; a lease lives 1 s)${s.doCalls.doLatencyMs ? `; every DO call delayed ${s.doCalls.doLatencyMs} ms (--do-latency)` : ""}.`,
    `Bundle: ${s.bundle.minifiedKiB} KiB minified, ${s.bundle.gzipKiB} KiB gzip. Peak RSS: switchboard workerd ${s.memory.switchboardPeakRssMiB} MiB, floor ${s.memory.floorPeakRssMiB} MiB.`,
    `Targets: ${met}.`,
    "",
  ].join("\n");
}

// --integrations: bodies and OpenTelemetry export instead (bench/integrations.mjs reads its own flags).
if (flag("integrations")) await import("./integrations.mjs");
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
