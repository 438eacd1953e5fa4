// @ts-check
/**
 * What the bench measures, started and accounted for: the production bundle built, the Switchboard
 * worker, the floor (a pass-through worker) and the reference (one DO round trip and one durable
 * write) served by Miniflare on loopback, the bench organization seeded, and the CPU time and peak
 * memory of each workerd process.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { hermeticWranglerConfig } from "../scripts/lib/hermetic.mjs";
import { worldBindings } from "./world.mjs";
import { chatBody } from "./measure.mjs";
import { ADMIN_TOKEN, DO_LATENCY_MS, KEY_HASH_SECRET, PROVIDER_IDS, REGIONS, WORLD, WORLD_OPTS, envPrefix, flag, root } from "./options.mjs";

// ---------- build ----------
export function build({ minify = true, instruments = true } = {}) {
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
export function childWorkerdPids() {
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
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
}
export function peakRssMiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function startMiniflare(options) {
  const before = new Set(childWorkerdPids());
  // Miniflare 5 takes its own option shape; the bench's are Miniflare 4's, which it converts.
  const mf = new Miniflare(convertV4MiniflareOptions(options));
  const url = await mf.ready;
  const pid = childWorkerdPids().find((p) => !before.has(p));
  return { mf, url: url.toString().replace(/\/$/, ""), pid };
}

// ---------- servers ----------
export async function startSwitchboard(bundle, upstreamUrl, { port = 0, instruments = true, inspectorPort = flag("cpu-profile") ? 9329 : undefined, consumers = !flag("no-log-consumer") } = {}) {
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
  // A build of another ref (--baseline-ref) runs with its own compatibility date and flags and its
  // own static assets, if it has any (each changes what the runtime does per request: an assets
  // directory puts the assets router before the Worker), and with this checkout's bindings and
  // migrations.
  const ownConfig = path.join(path.dirname(bundle.outdir), "wrangler.jsonc");
  if (path.dirname(bundle.outdir) !== root && existsSync(ownConfig)) {
    const own = /** @type {any} */ (unstable_getMiniflareWorkerOptions(ownConfig).workerOptions);
    rest.compatibilityDate = own.compatibilityDate;
    rest.compatibilityFlags = own.compatibilityFlags;
    if (own.assets) rest.assets = own.assets;
    else delete rest.assets;
  }
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

export async function startPassThrough(upstreamUrl, port = 0) {
  // The floor: same runtime, forwards the request untouched to the same upstream path.
  const script = `export default { async fetch(req, env) {
    const u = new URL(req.url);
    return fetch(env.UPSTREAM + u.pathname.replace(/^\\/v1/, "") + u.search, { method: req.method, headers: req.headers, body: req.body });
  } };`;
  return startMiniflare({ name: "passthrough", modules: true, script, bindings: { UPSTREAM: `${upstreamUrl}/openai` }, compatibilityDate: "2026-11-17", port, host: "127.0.0.1" });
}

export async function startDoReference(upstreamUrl) {
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

export async function baselineTargets(base) {
  const headers = { authorization: `Bearer ${(await seed(base)).key}` };
  return [
    { name: "baseline canonical", url: `${base.url}/v1/chat/completions`, body: chatBody("gpt-4o-mini"), headers, pid: base.pid },
    { name: "baseline pinned", url: `${base.url}/v1/chat/completions`, body: chatBody("openai/gpt-4o-mini"), headers, pid: base.pid },
  ];
}

export async function json(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { throw new Error(`not JSON (${res.status}): ${text.slice(0, 300)}`); }
}

/** `opts.liftTokenLimit`: for `--prompt-kb` (below); other runs keep the limits they were measured with. */
export async function seed(sb, opts = {}) {
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
  // The API's most (a billion tokens a minute) is what one target's coding-agent requests
  // (`--prompt-kb`, thousands of tokens each) reach within a round: then the organization's token
  // limit and ceiling are lifted beyond it in the database, the windows still counted.
  if (opts.liftTokenLimit) await sb.db.prepare("UPDATE organizations SET tokens_per_minute = ?1, max_tokens_per_minute = ?1 WHERE id = ?2").bind(1e15, boot.organization.id).run();
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
