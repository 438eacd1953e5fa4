// @ts-check
/**
 * `npm run bench -- --integrations` (or `node bench/integrations.mjs`): what request bodies and
 * OpenTelemetry export cost the request path, on `wrangler dev` (local D1, Durable Objects, Queues,
 * R2; `--port`, default 8828), providers played by the fake upstream.
 *
 *  1. `logBodies` A/B: two projects of one organization, one keeping bodies, take turns at c=32
 *     (interleaved rounds, same machine conditions); req/s and p50/p99 of each, and the ratio.
 *  2. OTLP export through a collector that is down half the time (it flips between answering 200
 *     and 503 at random intervals of 0.3-3 s): N requests (default 10,000) at c=32 of an exporting
 *     organization, interleaved in equal blocks with a non-exporting one (latency A/B); then it waits for
 *     the deliveries to drain and checks that every request's record arrived as exactly one
 *     accepted span (by `switchboard.request_id`), none missing, none accepted twice.
 * Prints `uptime` beside the numbers (the machine may be shared). Flags: --requests N, --seconds N
 * (per logBodies round), --rounds N, --gap-seconds N (after each logBodies round and OTLP block, at
 * most this long until workerd is idle, default 12, at least the consumers' batch timeout: the queue
 * consumers finish that round's work before the next round, so no side pays for the other's, and
 * the round's CPU per request includes it),
 * --drain-seconds N (default 600), --skip-bodies (the OTLP part only), --skip-otlp (the
 * logBodies part only), --cpu-profile (one profiled round per side instead of the A/B, and where
 * the bodies' CPU goes: bench/integrations-profile.mjs).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { bundleUrlOf, inspectorProfiler, reportProfile } from "./integrations-profile.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? Number(args[i + 1]) : def;
};
const REQUESTS = opt("requests", 10_000);
const SECONDS = opt("seconds", 5);
const ROUNDS = opt("rounds", 3);
const GAP_SECONDS = opt("gap-seconds", 12);
const DRAIN_SECONDS = opt("drain-seconds", 600);
const ADMIN_TOKEN = "bench-admin-token-0123456789";
const WRANGLER = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
/** `--port P` (default 8828) and the inspector on P + 500. */
const PORT = opt("port", 8828);
const INSPECTOR_PORT = PORT + 500;
const PROFILE = args.includes("--cpu-profile");
const PROVIDER_IDS = ["openai", "azure", "anthropic", "google-ai-studio", "groq", "together-ai", "mistral", "deepseek"];
const envPrefix = (id) => id.toUpperCase().replace(/[^A-Z0-9]/g, "_");
const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim();
process.env.WRANGLER_SEND_METRICS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";

/** A collector that is down half the time: 503 or 200, flipping at random intervals. */
async function startFlakyCollector() {
  let up = true;
  let flips = 0;
  const flip = () => {
    up = !up;
    flips++;
    timer = setTimeout(flip, 300 + Math.random() * 2700);
  };
  let timer = setTimeout(flip, 300 + Math.random() * 2700);
  /** request id -> times accepted */
  const accepted = new Map();
  let refused = 0;
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (!up) {
      refused++;
      res.writeHead(503).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    for (const rs of body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? []) {
          const id = span.attributes.find((a) => a.key === "switchboard.request_id")?.value.stringValue;
          accepted.set(id, (accepted.get(id) ?? 0) + 1);
        }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
  const addr = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${addr.port}`,
    accepted,
    stats: () => ({ flips, refused }),
    close: () => { clearTimeout(timer); server.close(); },
  };
}

/**
 * `wrangler dev` on PORT (own process group, state in a temporary directory, migrations applied):
 * the same runtime, Queues consumers and R2 as local development.
 */
async function startSwitchboard(upstreamUrl) {
  const state = mkdtempSync(path.join(tmpdir(), "switchboard-bench-integrations-"));
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
  const migrate = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", state], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] });
  if (migrate.status !== 0) throw new Error("applying migrations failed");
  const vars = [`ADMIN_TOKEN:${ADMIN_TOKEN}`, "KEY_HASH_SECRET:bench-key-hash-secret-0123456789abcdef", "ENVIRONMENT:development", "ROUTING_EXPLORATION_RATE:0", "DELIVERY_RETRY_BASE_SECONDS:1"];
  for (const id of PROVIDER_IDS) vars.push(`${envPrefix(id)}_BASE_URL:${upstreamUrl}/${id}`, `${envPrefix(id)}_API_KEY:bench-operator-key-${id}`);
  const child = spawn(process.execPath, [WRANGLER, "dev", "--port", String(PORT), "--inspector-port", String(INSPECTOR_PORT), "--ip", "127.0.0.1", "--persist-to", state, ...(PROFILE ? ["--minify=false"] : []), ...vars.flatMap((v) => ["--var", v])], {
    cwd: root, env, stdio: ["ignore", "ignore", "inherit"], detached: true,
  });
  const url = `http://127.0.0.1:${PORT}`;
  const stop = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
    rmSync(state, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      stop();
      throw new Error("wrangler dev did not start");
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { url, stop, pgid: child.pid };
}

const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100);
/** CPU time (user + system, ms) of the workerd processes in a process group: the Worker, its objects, queues and storage simulators. */
function groupCpuMs(pgid) {
  let total = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid && comm.includes("workerd")) total += (Number(f[11]) + Number(f[12])) * TICK_MS;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
/** The queue consumers' `max_batch_timeout` (wrangler.jsonc), plus a margin: a partial batch has been handed over by then. */
const BATCH_TIMEOUT_MS = 5_500;
/**
 * Waits until workerd is idle (two 250 ms windows under 5 ms of CPU), but not before a partial
 * queue batch had its time to be consumed, or until `maxMs` passed: the background work a round
 * left is done (and counted in its CPU).
 */
async function untilIdle(pgid, maxMs) {
  const end = Date.now() + Math.max(maxMs, BATCH_TIMEOUT_MS + 1000);
  await new Promise((ok) => setTimeout(ok, BATCH_TIMEOUT_MS));
  let quiet = 0;
  let last = groupCpuMs(pgid);
  while (quiet < 2 && Date.now() < end) {
    await new Promise((ok) => setTimeout(ok, 250));
    const now = groupCpuMs(pgid);
    quiet = now - last < 5 ? quiet + 1 : 0;
    last = now;
  }
}

async function api(url, token, method, p, body) {
  const res = await fetch(`${url}${p}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** An organization with lifted rate limits and a key in each of `projects` (name -> settings). */
async function seedOrg(sb, name, projects) {
  const boot = await api(sb.url, ADMIN_TOKEN, "POST", "/v1/admin/organizations", { name, plan: "enterprise", credits: "9000", owner: { email: `${name.toLowerCase()}@example.test`, name, password: "bench-password-123" } });
  const master = boot.masterKey.token;
  // Far above what the bench sends (the plan's 10,000 a minute is less than c=32 sends): the operator's grant.
  await api(sb.url, ADMIN_TOKEN, "PATCH", `/v1/admin/organizations/${boot.organization.id}/rate-limits`, { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000 });
  /** @type {Record<string, string>} */
  const keys = {};
  for (const [p, settings] of Object.entries(projects)) {
    const project = (await api(sb.url, master, "POST", "/v1/master/projects", { name: p, ...settings })).project;
    keys[p] = (await api(sb.url, master, "POST", "/v1/master/keys", { projectId: project.id, description: p, usageLimit: "1000000" })).apiKey.token;
  }
  return { orgId: boot.organization.id, master, keys };
}

const chatBody = JSON.stringify({ model: "gpt-4o-mini", temperature: 0.7, messages: [{ role: "user", content: "Say hello to the benchmark, my address is bench@example.test" }] });

/** @returns {Promise<autocannon.Result>} */
function cannon(url, key, o) {
  return autocannon({ url: `${url}/v1/chat/completions`, method: "POST", connections: 32, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: chatBody, ...o });
}

const fmt = (r) => `${Math.round(r.requests.average)} req/s · p50 ${r.latency.p50} ms · p99 ${r.latency.p99} ms · non-2xx ${r.non2xx} · errors ${r.errors}`;

async function main() {
  const upstream = await startFakeUpstream({ port: 0 });
  const collector = await startFlakyCollector();
  const sb = await startSwitchboard(upstream.url);
  try {
    console.log(`load before: ${uptime()}`);
    // ---- 1. logBodies on vs off, interleaved rounds at c=32 ----
    if (!args.includes("--skip-bodies")) await bodiesAB(sb);
    else console.log("logBodies A/B skipped (--skip-bodies)");
    if (!args.includes("--skip-otlp")) await otlpRun(sb, collector);
    else console.log("OTLP run skipped (--skip-otlp)");
    console.log(`load after: ${uptime()}`);
  } finally {
    collector.close();
    sb.stop();
    await upstream.close();
  }
}

const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

async function bodiesAB(sb) {
    const bodiesOrg = await seedOrg(sb, "Bodies", { off: { logBodies: false }, on: { logBodies: true } });
    for (const k of Object.values(bodiesOrg.keys)) await cannon(sb.url, k, { duration: 1 }); // warm-up
    /** @type {Record<string, number[]>} */
    const rps = { off: [], on: [] };
    /** workerd CPU per request, from the round's start until the work it left is done. */
    const cpu = { off: [], on: [] };
    await untilIdle(sb.pgid, GAP_SECONDS * 1000);
    if (PROFILE) {
      const profiler = await inspectorProfiler(INSPECTOR_PORT);
      for (const side of ["off", "on"]) {
        const cpu0 = groupCpuMs(sb.pgid);
        const [r, profile] = await profiler.run(async () => {
          const res = await cannon(sb.url, bodiesOrg.keys[side], { duration: SECONDS });
          await untilIdle(sb.pgid, GAP_SECONDS * 1000);
          return res;
        });
        const url = bundleUrlOf(profile);
        const bundleSource = url ? await profiler.source(url) : null;
        reportProfile(side, profile, { bundleSource, requests: r.requests.total, cpuPerRequest: (groupCpuMs(sb.pgid) - cpu0) / Math.max(1, r.requests.total), resultsDir: path.join(root, "bench", "results") });
      }
      profiler.close();
      return;
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 ? ["on", "off"] : ["off", "on"]) {
        const cpu0 = groupCpuMs(sb.pgid);
        const r = await cannon(sb.url, bodiesOrg.keys[side], { duration: SECONDS });
        await untilIdle(sb.pgid, GAP_SECONDS * 1000);
        rps[side].push(r.requests.average);
        cpu[side].push((groupCpuMs(sb.pgid) - cpu0) / Math.max(1, r.requests.total));
        console.log(`logBodies ${side.padEnd(3)} round ${round + 1}: ${fmt(r)} · workerd CPU ${cpu[side].at(-1).toFixed(2)} ms/request   [${uptime()}]`);
      }
    }
    // Adjacent rounds share the machine's conditions best: the median of their ratios beside the means.
    const pairs = rps.on.map((on, i) => on / rps.off[i]).sort((a, b) => a - b);
    console.log(`logBodies: on/off req/s per round pair ${pairs.map((x) => x.toFixed(3)).join(", ")}; median ${pairs[Math.floor(pairs.length / 2)].toFixed(3)}`);
    console.log(`logBodies A/B at c=32: off ${Math.round(mean(rps.off))} req/s, on ${Math.round(mean(rps.on))} req/s, on/off ${(mean(rps.on) / mean(rps.off)).toFixed(3)}; workerd CPU off ${mean(cpu.off).toFixed(2)}, on ${mean(cpu.on).toFixed(2)} ms/request, off/on ${(mean(cpu.off) / mean(cpu.on)).toFixed(3)}`);

}

/** OTLP export through a collector down half the time; the quiet organization's blocks (as long, half as many) are the latency comparison. */
async function otlpRun(sb, collector) {
    const started = Date.now();
    const exporting = await seedOrg(sb, "Exporting", { main: {} });
    const quiet = await seedOrg(sb, "Quiet", { main: {} });
    await api(sb.url, exporting.master, "PATCH", "/v1/master/organization", { observability: { otlpEndpoint: collector.url } });
    const BLOCK = 1000;
    /** @type {Record<string, number[]>} */
    const lat = { export: [], quiet: [] };
    /** workerd CPU per request of each side's blocks, until the work a block left is done (or --gap-seconds passed). */
    const cpu = { export: [], quiet: [] };
    let sent = 0;
    while (sent < REQUESTS) {
      const n = Math.min(BLOCK, REQUESTS - sent);
      // Blocks of both sides are equally long: a longer block meets more of the periodic pauses of
      // workerd under wrangler dev (alarms, batch timeouts, context reloads), so its p99 is higher
      // whatever it exports. The quiet side runs after every other block of the exporting one.
      const blockNo = sent / BLOCK;
      for (const side of blockNo % 2 === 1 || sent + n >= REQUESTS ? ["export", "quiet"] : ["export"]) {
        const cpu0 = groupCpuMs(sb.pgid);
        const r = await cannon(sb.url, (side === "export" ? exporting : quiet).keys.main, { amount: n });
        // The next block starts once this one's background work (records, spans, deliveries) is done:
        // neither side's latency pays for the other's.
        await untilIdle(sb.pgid, GAP_SECONDS * 1000);
        cpu[side].push((groupCpuMs(sb.pgid) - cpu0) / Math.max(1, r.requests.total));
        if (r.non2xx || r.errors) console.log(`  ${side}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        lat[side].push(r.latency.p50, r.latency.p99);
      }
      sent += n;
      console.log(`otlp: ${sent}/${REQUESTS} sent; spans accepted so far ${collector.accepted.size}; last blocks p99 export ${lat.export.at(-1)} ms, off ${lat.quiet.at(-1)} ms   [${uptime()}]`);
    }
    const p = (side, i) => Math.round(mean(lat[side].filter((_, j) => j % 2 === i)));
    console.log(`latency per block, mean of p50 / p99: export on ${p("export", 0)} / ${p("export", 1)} ms, off ${p("quiet", 0)} / ${p("quiet", 1)} ms (p99 on/off ${(p("export", 1) / p("quiet", 1)).toFixed(2)}); workerd CPU export on ${mean(cpu.export).toFixed(2)}, off ${mean(cpu.quiet).toFixed(2)} ms/request`);
    /** The organization's request ids, from its records (`GET /v1/master/logs`, NDJSON). */
    const recordIds = async () => {
      const from = new Date(started - 3_600_000).toISOString();
      const to = new Date(Date.now() + 60_000).toISOString();
      const text = await (await fetch(`${sb.url}/v1/master/logs?from=${from}&to=${to}`, { headers: { authorization: `Bearer ${exporting.master}` } })).text();
      return text.split("\n").filter(Boolean).map((l) => JSON.parse(l).requestId);
    };
    const deadline = Date.now() + DRAIN_SECONDS * 1000;
    let ids = await recordIds();
    while ((collector.accepted.size < REQUESTS || ids.length < REQUESTS) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 3000));
      ids = await recordIds();
    }
    const missing = ids.filter((id) => !collector.accepted.has(id)).length;
    const twice = [...collector.accepted.values()].filter((n) => n > 1).length;
    const idSet = new Set(ids);
    const foreign = [...collector.accepted.keys()].filter((id) => !idSet.has(id)).length;
    console.log(`otlp: ${ids.length} records, ${collector.accepted.size} spans accepted, ${missing} missing, ${twice} accepted more than once, ${foreign} not of the organization; collector flips ${collector.stats().flips}, POSTs refused ${collector.stats().refused}`);
    // Spans still out are waiting for a retry (or were given up): the export's own account of its last delivery.
    const view = await api(sb.url, exporting.master, "GET", "/v1/master/organization");
    console.log(`otlp: last delivery ${JSON.stringify(view.organization.observability?.lastDelivery ?? null)}`);
    process.exitCode = ids.length === REQUESTS && missing === 0 && twice === 0 && foreign === 0 ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
