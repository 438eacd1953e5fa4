// @ts-check
/**
 * `npm run bench -- --world --regions`: routing per caller continent (docs/benchmarks.md).
 *
 * One provider (openai, pinned `openai/gpt-4o-mini`) with an endpoint in three regions: its default
 * one (`us`, North America), `eu-central-1` and `ap-northeast-1` (`OPENAI_BASE_URL__<REGION>`).
 * Every endpoint is a path of a small network proxy in this process, in front of the fake upstream:
 * it reads the caller's continent from a marker in the prompt (`net=EU`; the gateway passes the
 * prompt on untouched) and waits the network latency between that continent and its region before
 * forwarding (near 15 ms; NA-EU 90, NA-AS 150, EU-AS 180). The upstream itself answers its first
 * token after --ttft ms (default 200). Callers on NA, EU and AS (`x-debug-caller-continent`), each
 * --regions-concurrency requests at a time (default 3), streamed, for --regions-seconds (default 60);
 * halfway through, eu-central-1 starts answering 503 and stays down.
 *
 * Reported (the proxy logs which region every attempt reached, so nothing relies on the gateway's
 * own account):
 *  - per continent, after warm-up (the first quarter) and before the failure: the share of requests
 *    whose first attempt went to the nearest region, and TTFB p50 against the same request sent
 *    straight to that region through the proxy (the region's own);
 *  - after the failure, for EU callers: success rate, and the time from the failure until the next
 *    nearest region (us) takes >= 90% of new requests' first attempts in a 2 s window;
 *  - a key with `allow_regions: ["EU"]` sending EU requests all along: attempts outside EU (target 0);
 *  - weighted provider keys (weights 1 and 3) over --key-requests requests (default 1000): the spread;
 *    and a key whose endpoint always answers 429 beside a healthy one: extra attempts per request;
 *  - CPU per request with a `provider` object vs without (autocannon c=16, workerd CPU time).
 * `uptime` (load averages) is printed beside the numbers: the machine may be shared.
 *
 * The gateway runs under `wrangler dev` (local D1, Durable Objects, queues, as the browser suite
 * runs it) on --regions-port (default 8823, inspector +1000), with the fake upstream and the proxy
 * on ports of their own; workerd CPU is read from /proc for every workerd process under it.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import http from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeUpstream } from "../test/fake-upstream/server.mjs";
import { providerEnvPrefix, providerIds } from "../scripts/lib/local.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const r1 = (x) => Math.round(x * 10) / 10;
const load = () => execFileSync("uptime", { encoding: "utf8" }).trim().replace(/^.*load average:\s*/, "load ");

export const CONTINENTS = ["NA", "EU", "AS"];
/** Endpoint regions and their continents; `us` is the provider's default endpoint. */
export const REGIONS = { us: "NA", "eu-central-1": "EU", "ap-northeast-1": "AS" };
const NEAREST = { NA: "us", EU: "eu-central-1", AS: "ap-northeast-1" };
const NEXT_NEAREST = { EU: "us" };
const FAILING = "eu-central-1";
/** One-way-trip-to-first-byte network latency (ms) between a caller continent and a region's continent. */
const NET = { NA: { NA: 15, EU: 90, AS: 150 }, EU: { NA: 90, EU: 15, AS: 180 }, AS: { NA: 150, EU: 180, AS: 15 } };

/**
 * The network proxy: `/r/<region>/...` waits NET[caller][region] then forwards to the fake upstream's
 * `/openai/...`; `/r/<region>` of a failing region answers 503; `/fail429/...` always answers 429.
 * Every attempt is logged: { req, region, continent, at, status }.
 */
export async function startRegionProxy(upstreamUrl) {
  /** @type {{ req: string, region: string, at: number, status: number }[]} */
  const log = [];
  const failing = new Set();
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const text = body.toString("utf8");
    const caller = /net=(NA|EU|AS)/.exec(text)?.[1] ?? "NA";
    const id = /req=([\w-]+)/.exec(text)?.[1] ?? "";
    const m = /^\/(r\/([^/]+)|fail429)(\/.*)$/.exec(req.url ?? "");
    if (!m) return void res.writeHead(404).end();
    const region = m[2] ?? "fail429";
    if (region === "fail429" || failing.has(region)) {
      const status = region === "fail429" ? 429 : 503;
      await sleep(region === "fail429" ? 5 : NET[caller][REGIONS[region]]);
      log.push({ req: id, region, at: Date.now(), status });
      res.writeHead(status, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ error: { message: `proxy ${status}`, type: status === 429 ? "rate_limit_error" : "server_error", code: null } }));
    }
    await sleep(NET[caller][REGIONS[region]]);
    log.push({ req: id, region, at: Date.now(), status: 200 });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k)));
    // A request still in flight when the bench stops the upstream must not end the bench.
    try {
      const up = await fetch(`${upstreamUrl}/openai${m[3]}`, { method: req.method, headers: /** @type {Record<string,string>} */ (headers), body: req.method === "GET" ? undefined : body });
      res.writeHead(up.status, Object.fromEntries([...up.headers].filter(([k]) => !["content-length", "content-encoding", "transfer-encoding"].includes(k))));
      if (up.body) for await (const c of up.body) res.write(c);
      res.end();
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return { url, log, failing, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

/** Bindings that give openai its three endpoints behind the proxy. */
export function regionBindings(proxyUrl) {
  return {
    OPENAI_BASE_URL: `${proxyUrl}/r/us`,
    OPENAI_BASE_URL__EU_CENTRAL_1: `${proxyUrl}/r/eu-central-1`,
    OPENAI_BASE_URL__AP_NORTHEAST_1: `${proxyUrl}/r/ap-northeast-1`,
    // Exploration as in production (the bench's default run turns it off).
    ROUTING_EXPLORATION_RATE: "0.05",
  };
}

async function api(url, token, method, payload) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: payload ? JSON.stringify(payload) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

async function seedOrg(sb, adminToken, name, mode) {
  const boot = await api(`${sb.url}/v1/admin/organizations`, adminToken, "POST", { name, plan: "enterprise", credits: "9000", owner: { email: `${name.toLowerCase()}-${run}@example.test`, name, password: "regions-password-123" } });
  const master = boot.masterKey.token;
  // The enterprise plan's 10,000 requests a minute per organization is more than each phase sends.
  if (mode) await api(`${sb.url}/v1/master/projects/${boot.project.id}`, master, "PATCH", { mode });
  const key = async (extra = {}) => (await api(`${sb.url}/v1/master/keys`, master, "POST", { projectId: boot.project.id, description: name, usageLimit: "1000000", ...extra })).apiKey.token;
  return { master, key };
}

let seq = 0;
const run = Math.random().toString(36).slice(2);
const chatBody = (continent, ttft, extra = {}) => {
  const id = `${run}-${seq++}`;
  return {
    id,
    body: JSON.stringify({
      model: "openai/gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 16,
      messages: [{ role: "user", content: `Regions bench net=${continent} req=${id} [[fake:ttft=${ttft}]]` }],
      ...extra,
    }),
  };
};

/** One streamed request: time to the first body chunk and the status. */
async function streamed(url, headers, body) {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  let first = NaN;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value?.length && Number.isNaN(first)) first = performance.now() - t0;
    }
  }
  return { ms: first, status: res.status };
}

/** The whole regions run; returns the report rows and writes bench/results/world-regions.{json,md}. */
export async function regionsReport({ root, sb, proxy, adminToken, cannon, cpu, machine, o }) {
  const loadBefore = load();
  console.log(`regions bench: ${o.seconds}s, c=${o.concurrency} per continent, ttft ${o.ttft} ms; ${loadBefore}`);
  const main = await seedOrg(sb, adminToken, "Regions", null);
  const callerKey = await main.key();
  const euOnlyKey = await main.key({ iamRules: [{ ruleType: "allow_regions", ruleValue: { regions: ["EU"] } }] });
  const url = `${sb.url}/v1/chat/completions`;

  // ---- callers on three continents; eu-central-1 fails halfway ----
  /** @type {{ id: string, continent: string, sentAt: number, ms: number, status: number, phase: string }[]} */
  const results = [];
  /** @type {{ id: string, sentAt: number, status: number }[]} */
  const euOnly = [];
  const startedAt = Date.now();
  const warmEnd = startedAt + (o.seconds * 1000) / 4;
  const failAt = startedAt + (o.seconds * 1000) / 2;
  const endAt = startedAt + o.seconds * 1000;
  const failer = (async () => {
    await sleep(failAt - Date.now());
    proxy.failing.add(FAILING);
    console.log(`  ${new Date().toISOString()} ${FAILING} fails`);
  })();
  const loop = async (continent) => {
    while (Date.now() < endAt) {
      const { id, body } = chatBody(continent, o.ttft);
      const sentAt = Date.now();
      const r = await streamed(url, { authorization: `Bearer ${callerKey}`, "x-debug-caller-continent": continent, "x-no-cache": "true" }, body);
      results.push({ id, continent, sentAt, ...r, phase: sentAt < warmEnd ? "warm-up" : sentAt < failAt ? "healthy" : "failure" });
    }
  };
  const euOnlyLoop = async () => {
    while (Date.now() < endAt) {
      const { id, body } = chatBody("EU", o.ttft);
      const sentAt = Date.now();
      const r = await streamed(url, { authorization: `Bearer ${euOnlyKey}`, "x-debug-caller-continent": "EU", "x-no-cache": "true" }, body);
      euOnly.push({ id, sentAt, status: r.status });
    }
  };
  await Promise.all([failer, euOnlyLoop(), ...CONTINENTS.flatMap((c) => Array.from({ length: o.concurrency }, () => loop(c)))]);
  proxy.failing.delete(FAILING);

  // What the proxy saw: attempts per request, in order.
  /** @type {Map<string, { region: string, at: number, status: number }[]>} */
  const attempts = new Map();
  for (const a of proxy.log) (attempts.get(a.req) ?? attempts.set(a.req, []).get(a.req))?.push(a);
  const firstRegion = (id) => attempts.get(id)?.[0]?.region ?? "none";

  // ---- each region's own time to first byte: the same request straight through the proxy ----
  const own = {};
  for (const c of CONTINENTS) {
    const times = [];
    for (let i = 0; i < o.directSamples; i++) {
      const { body } = chatBody(c, o.ttft);
      const r = await streamed(`${proxy.url}/r/${NEAREST[c]}/chat/completions`, { authorization: "Bearer bench-operator-key-openai" }, body.replace('"openai/gpt-4o-mini"', '"gpt-4o-mini"'));
      if (r.status === 200) times.push(r.ms);
    }
    own[c] = pct(times, 50);
  }

  const perContinent = CONTINENTS.map((c) => {
    const healthy = results.filter((r) => r.continent === c && r.phase === "healthy");
    const near = healthy.filter((r) => firstRegion(r.id) === NEAREST[c]);
    const p50 = pct(healthy.filter((r) => r.status === 200).map((r) => r.ms), 50);
    return { continent: c, nearest: NEAREST[c], requests: healthy.length, nearShare: r1((100 * near.length) / Math.max(1, healthy.length)), ttftP50: r1(p50), regionOwnP50: r1(own[c]), ttftAdded: r1(p50 - own[c]) };
  });

  // ---- failure of eu-central-1, seen by EU callers ----
  const euFail = results.filter((r) => r.continent === "EU" && r.phase === "failure");
  const euOk = euFail.filter((r) => r.status === 200).length;
  let switchMs = NaN;
  const sorted = [...euFail].sort((a, b) => a.sentAt - b.sentAt);
  for (const r of sorted) {
    const win = sorted.filter((x) => x.sentAt >= r.sentAt && x.sentAt < r.sentAt + 2000);
    if (win.length >= 3 && win.filter((x) => firstRegion(x.id) === NEXT_NEAREST.EU).length >= 0.9 * win.length) {
      switchMs = r.sentAt - failAt;
      break;
    }
  }
  const afterSwitch = sorted.filter((r) => r.sentAt >= failAt + (Number.isFinite(switchMs) ? switchMs : 0));
  const failure = {
    requests: euFail.length,
    successPct: r1((100 * euOk) / Math.max(1, euFail.length)),
    switchMs: Number.isFinite(switchMs) ? Math.max(0, switchMs) : null,
    nextNearestShareAfter: r1((100 * afterSwitch.filter((r) => firstRegion(r.id) === NEXT_NEAREST.EU).length) / Math.max(1, afterSwitch.length)),
    attemptsPerRequest: r1(euFail.reduce((s, r) => s + (attempts.get(r.id)?.length ?? 0), 0) / Math.max(1, euFail.length)),
  };
  const outside = euOnly.flatMap((r) => attempts.get(r.id) ?? []).filter((a) => REGIONS[a.region] !== "EU");
  const residency = {
    requests: euOnly.length,
    attemptsOutsideEu: outside.length,
    succeededBeforeFailure: euOnly.filter((r) => r.sentAt < failAt && r.status === 200).length,
    beforeFailure: euOnly.filter((r) => r.sentAt < failAt).length,
    refusedDuringFailure: euOnly.filter((r) => r.sentAt >= failAt + 1000 && r.status !== 200).length,
    duringFailure: euOnly.filter((r) => r.sentAt >= failAt + 1000).length,
  };

  // What the gateway's per-continent series held at the end (JSON only: where a share went wrong,
  // this shows what ranking saw), and per continent the first attempts' regions per 5 s.
  const series = {};
  for (const c of CONTINENTS) series[c] = await fetch(`${sb.url}/v1/providers/metrics?continent=${c}`).then((r) => r.json(), () => null);
  const timeline = {};
  for (const c of CONTINENTS) {
    const rows = {};
    for (const r of results.filter((x) => x.continent === c)) {
      const slot = Math.floor((r.sentAt - startedAt) / 5000) * 5;
      const at = (rows[slot] ??= {});
      const region = firstRegion(r.id);
      at[region] = (at[region] ?? 0) + 1;
    }
    timeline[c] = rows;
  }

  // ---- weighted keys: spread over key-requests requests; a 429 key beside a healthy one ----
  const keys = await weightedKeys(sb, adminToken, proxy, o);

  // ---- CPU per request with a provider object vs without ----
  const cpuRows = await cpuWithPreferences(sb, adminToken, cannon, cpu, o);

  const loadAfter = load();
  const report = { machine, loadBefore, loadAfter, options: o, perContinent, failure, residency, keys, cpu: cpuRows, timeline, series };
  const md = markdown(report);
  console.log(md);
  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "world-regions.json"), JSON.stringify(report, null, 2));
  writeFileSync(path.join(dir, "world-regions.md"), md);
  return report;
}

async function weightedKeys(sb, adminToken, proxy, o) {
  const org = await seedOrg(sb, adminToken, "Keys", "api-keys");
  const a = (await api(`${sb.url}/v1/master/provider-keys`, org.master, "POST", { provider: "openai", token: "sk-weight-one", weight: 1, label: "w1" })).providerKey.id;
  const b = (await api(`${sb.url}/v1/master/provider-keys`, org.master, "POST", { provider: "openai", token: "sk-weight-three", weight: 3, label: "w3" })).providerKey.id;
  const key = await org.key();
  const used = { [a]: 0, [b]: 0 };
  let done = 0;
  const worker = async () => {
    while (done < o.keyRequests) {
      done++;
      const res = await fetch(`${sb.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
        body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `keys net=NA ${run} ${seq++}` }] }),
      });
      const json = await res.json();
      const ok = json.metadata?.routing?.find((x) => x.succeeded);
      if (ok?.providerKeyId in used) used[ok.providerKeyId]++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const total = used[a] + used[b];
  const spread = { requests: total, weight1SharePct: r1((100 * used[a]) / total), weight3SharePct: r1((100 * used[b]) / total), expected: "25 / 75" };

  // A key whose endpoint always answers 429 (its own base URL: the proxy's /fail429), beside a healthy one.
  const org2 = await seedOrg(sb, adminToken, "Limited", "api-keys");
  await api(`${sb.url}/v1/master/provider-keys`, org2.master, "POST", { provider: "openai", token: "sk-limited", baseUrl: `${proxy.url}/fail429`, label: "limited" });
  await api(`${sb.url}/v1/master/provider-keys`, org2.master, "POST", { provider: "openai", token: "sk-healthy", label: "healthy" });
  const key2 = await org2.key();
  const counts = [];
  let failed = 0;
  for (let i = 0; i < o.limitedRequests; i++) {
    const res = await fetch(`${sb.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key2}`, "content-type": "application/json", "x-no-cache": "true", "x-debug-caller-continent": "NA" },
      body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `limited net=NA ${run} ${seq++}` }] }),
    });
    const json = await res.json();
    if (res.status !== 200) failed++;
    counts.push(json.metadata?.routing?.length ?? 0);
  }
  const limited = { requests: counts.length, failed, maxAttempts: Math.max(...counts), withExtraAttemptPct: r1((100 * counts.filter((c) => c > 1).length) / counts.length) };
  return { spread, limited };
}

async function cpuWithPreferences(sb, adminToken, cannon, cpu, o) {
  const org = await seedOrg(sb, adminToken, "Cpu", null);
  const key = await org.key();
  const body = (provider) =>
    JSON.stringify({ model: "gpt-4o-mini", temperature: 0.7, messages: [{ role: "user", content: "Say hello to the regions benchmark" }], ...(provider ? { provider } : {}) });
  const targets = [
    { name: "without provider", body: body(null) },
    { name: "with provider", body: body({ order: ["openai", "azure"], allow_fallbacks: true, data_collection: "deny", max_price: { prompt: 10, completion: 20 } }) },
  ];
  const acc = targets.map(() => ({ cpuMs: 0, requests: 0 }));
  for (let round = 0; round < o.cpuRounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const before = cpu(sb);
      const r = await cannon({ url: `${sb.url}/v1/chat/completions`, body: targets[i].body, headers: { authorization: `Bearer ${key}`, "x-no-cache": "true" }, connections: 16, seconds: o.cpuSeconds });
      acc[i].cpuMs += cpu(sb) - before;
      acc[i].requests += r.requests.total;
    }
  }
  return targets.map((t, i) => ({ name: t.name, requests: acc[i].requests, cpuMsPerRequest: Math.round((1000 * acc[i].cpuMs) / Math.max(1, acc[i].requests)) / 1000 }));
}

function markdown(r) {
  const lines = [];
  lines.push(`## Regions bench (${new Date().toISOString().slice(0, 10)})`, "");
  lines.push(`Machine: ${r.machine.cores} cores, ${r.machine.cpu}, ${r.machine.memoryGiB} GiB, node ${r.machine.node}. ${r.loadBefore} (before), ${r.loadAfter} (after).`);
  lines.push(`Run: ${r.options.seconds} s, ${r.options.concurrency} requests at a time per continent, upstream TTFT ${r.options.ttft} ms; near 15 ms, far 90-180 ms.`, "");
  lines.push("| caller | nearest region | requests (healthy, after warm-up) | first attempt on nearest | TTFB p50 | region's own p50 | added |", "|---|---|---|---|---|---|---|");
  for (const c of r.perContinent) lines.push(`| ${c.continent} | ${c.nearest} | ${c.requests} | ${c.nearShare}% | ${c.ttftP50} ms | ${c.regionOwnP50} ms | ${c.ttftAdded} ms |`);
  lines.push("");
  const f = r.failure;
  lines.push(`eu-central-1 down (EU callers): ${f.requests} requests, ${f.successPct}% succeeded, ${f.attemptsPerRequest} attempts per request; new requests on us (next nearest) after ${f.switchMs === null ? "never" : `${(f.switchMs / 1000).toFixed(1)} s`}, then ${f.nextNearestShareAfter}% of first attempts there.`);
  const s = r.residency;
  lines.push(`allow_regions EU: ${s.requests} requests, ${s.attemptsOutsideEu} attempts outside EU; ${s.succeededBeforeFailure}/${s.beforeFailure} succeeded before the failure, ${s.refusedDuringFailure}/${s.duringFailure} failed while EU's only region was down (nothing else allowed).`);
  const k = r.keys;
  lines.push(`Weighted keys (1 : 3) over ${k.spread.requests} requests: ${k.spread.weight1SharePct}% / ${k.spread.weight3SharePct}% (expected 25 / 75).`);
  lines.push(`A key answering 429 beside a healthy one: ${k.limited.requests} requests, ${k.limited.failed} failed, at most ${k.limited.maxAttempts} attempts per request, ${k.limited.withExtraAttemptPct}% with an extra attempt.`);
  lines.push("", "| CPU per request (c=16) | requests | workerd CPU ms/request |", "|---|---|---|");
  for (const c of r.cpu) lines.push(`| ${c.name} | ${c.requests} | ${c.cpuMsPerRequest} |`);
  lines.push("");
  return lines.join("\n");
}

const WRANGLER_BIN = (root) => path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100);

/** Pids of every workerd process under `pid`. */
function workerdUnder(pid) {
  const rows = execFileSync("ps", ["-eo", "pid,ppid,comm"], { encoding: "utf8" }).trim().split("\n").slice(1).map((l) => l.trim().split(/\s+/));
  const mine = new Set([String(pid)]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of rows) if (mine.has(pp) && !mine.has(p)) { mine.add(p); grew = true; }
  }
  return rows.filter(([p, , comm]) => mine.has(p) && comm.includes("workerd")).map(([p]) => Number(p));
}
const cpuOfPid = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const x = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(x[11]) + Number(x[12])) * TICK_MS;
  } catch {
    return 0;
  }
};

/**
 * `npm run bench -- --world --regions`: starts the fake upstream, the network proxy and the gateway
 * (`wrangler dev`), runs regionsReport, stops everything it started.
 */
export async function runRegions({ root, adminToken, cannon, machine, o }) {
  const work = mkdtempSync(path.join(os.tmpdir(), "swb-regions-"));
  const persist = path.join(work, "state");
  const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" };
  const upstream = await startFakeUpstream({ port: 0 });
  const proxy = await startRegionProxy(upstream.url);
  const vars = { ADMIN_TOKEN: adminToken, KEY_HASH_SECRET: "bench-key-hash-secret-0123456789abcdef", ENVIRONMENT: "development", LOG_FLUSH_MS: "200" };
  for (const id of providerIds()) {
    vars[`${providerEnvPrefix(id)}_BASE_URL`] = `${upstream.url}/${id}`;
    vars[`${providerEnvPrefix(id)}_API_KEY`] = `bench-operator-key-${id}`;
  }
  Object.assign(vars, regionBindings(proxy.url));
  const migrate = spawnSync(process.execPath, [WRANGLER_BIN(root), "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], { cwd: root, env: childEnv, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}`);
  const args = [WRANGLER_BIN(root), "dev", "--ip", "127.0.0.1", "--port", String(o.port), "--inspector-port", String(o.inspectorPort ?? o.port + 1000), "--persist-to", persist, "--log-level", "warn"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const dev = spawn(process.execPath, args, { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  dev.stdout.on("data", (d) => (out += d));
  dev.stderr.on("data", (d) => (out += d));
  const sb = { url: `http://127.0.0.1:${o.port}`, pid: dev.pid };
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (dev.exitCode !== null) throw new Error(`wrangler dev exited:\n${out}`);
      if (Date.now() > deadline) throw new Error(`gateway did not start:\n${out}`);
      const up = await fetch(`${sb.url}/`).then((r) => r.status, () => 0);
      if (up === 200 || up === 503) break;
      await sleep(500);
    }
    const cpu = () => workerdUnder(dev.pid).reduce((t, p) => t + cpuOfPid(p), 0);
    return await regionsReport({ root, sb, proxy, adminToken, cannon, cpu, machine, o });
  } finally {
    try {
      if (dev.pid) process.kill(-dev.pid, "SIGTERM");
    } catch {
      // already gone
    }
    await Promise.allSettled([upstream.close(), proxy.close()]);
    rmSync(work, { recursive: true, force: true });
  }
}
