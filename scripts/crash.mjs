#!/usr/bin/env node
// @ts-check
/**
 * `npm run crash [-- --kills N --rate R --port P --inspector-port I]`: nothing answered is lost
 * when the runtime dies. It runs the gateway like `npm run dev` (scripts/dev.mjs --offline: the
 * stand-in upstream, a fresh state directory kept across restarts), sends chat traffic (JSON and
 * streams, one key of an organization with credits) at R requests a second, and N times (default
 * 5) kills the runtime process (`workerd`, found among the descendants of the dev server this
 * script started, by process tree: never by name across the machine) with SIGKILL in the middle
 * of the traffic, then stops what is left of that dev server and starts it again on the same state.
 *
 * At the end it checks (exit code 1 when one fails):
 *  - every request answered 200 with its whole answer (a JSON body, a stream through its final
 *    event) is exported exactly once in GET /v1/master/logs;
 *  - the credits debited equal the credit-paid cost of the exported records (every answered
 *    request billed, nothing billed twice);
 *  - the key's spend equals the cost of its records, and no reservation or lease stays held.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, parseArgs } from "./lib/local.mjs";
import { usdToPico } from "./lib/soak-checks.mjs";

const args = parseArgs(process.argv.slice(2));
const KILLS = Number(args.kills ?? 5);
const RATE = Number(args.rate ?? 40);
const PHASE_MS = Number(args["phase-seconds"] ?? 4) * 1000;
const PORT = Number(args.port ?? 8822);
const INSPECTOR = Number(args["inspector-port"] ?? 9322);
const base = `http://127.0.0.1:${PORT}`;


const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const log = (/** @type {string} */ m) => console.log(`[crash] ${m}`);

// ---------- the dev server, its process tree ----------

const stateDir = mkdtempSync(join(tmpdir(), "switchboard-crash-"));
/** @type {import("node:child_process").ChildProcess | null} */
let server = null;
/** @type {string[]} */
const serverLog = [];

async function startServer() {
  server = spawn(process.execPath, [join(ROOT, "scripts", "dev.mjs"), "--offline", "--port", String(PORT), "--inspector-port", String(INSPECTOR), "--persist-to", stateDir], {
    cwd: ROOT,
    detached: true, // its own process group: stopped as a whole, nothing else
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (/** @type {Buffer} */ b) => {
    for (const line of b.toString().split("\n")) if (line.trim()) serverLog.push(line);
    if (serverLog.length > 2000) serverLog.splice(0, serverLog.length - 2000);
  };
  server.stdout?.on("data", keep);
  server.stderr?.on("data", keep);
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`dev server exited (${server.exitCode}):\n${serverLog.slice(-30).join("\n")}`);
    if (existsSync(join(stateDir, ".dev-credentials.json"))) {
      try {
        const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${creds().gatewayKey}` } });
        if (res.status === 200) return;
      } catch {
        // not up yet
      }
    }
    await sleep(500);
  }
  throw new Error(`dev server did not start:\n${serverLog.slice(-30).join("\n")}`);
}

/** @returns {{ masterKey: string, gatewayKey: string, organizationId: string, projectId: string }} */
const creds = () => JSON.parse(readFileSync(join(stateDir, ".dev-credentials.json"), "utf8"));

/** Parent pid of every process (Linux /proc). */
function parents() {
  /** @type {Map<number, number>} */
  const out = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      out.set(Number(d), ppid);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The runtime processes among the descendants of the dev server this script started. */
function runtimePids() {
  const root = server?.pid;
  if (!root) return [];
  const pp = parents();
  /** @type {number[]} */
  const found = [];
  for (const [pid] of pp) {
    let p = pid;
    for (let depth = 0; depth < 10 && p > 1; depth++) {
      p = pp.get(p) ?? 0;
      if (p === root) {
        let cmd = "";
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        } catch {
          // gone
        }
        if (/workerd/.test(cmd.split("\0")[0] ?? "")) found.push(pid);
        break;
      }
    }
  }
  return found;
}

function stopServer() {
  if (server?.pid && server.exitCode === null) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

async function stopAndWait() {
  const s = server;
  stopServer();
  for (let i = 0; i < 40 && s && s.exitCode === null; i++) await sleep(250);
  if (s?.pid && s.exitCode === null) {
    try {
      process.kill(-s.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  // The port is free again before the next start.
  for (let i = 0; i < 40; i++) {
    try {
      await fetch(base);
    } catch {
      return;
    }
    await sleep(250);
  }
}

process.on("SIGINT", () => {
  stopServer();
  rmSync(stateDir, { recursive: true, force: true });
  process.exit(130);
});

// ---------- traffic ----------

/**
 * @typedef {{ status: number | string, stream: boolean, complete: boolean, logId: string | null, requestId: string | null, cost: bigint }} Outcome
 */
/** @type {Outcome[]} */
const outcomes = [];

/** One chat request; `complete` only with the whole answer (a JSON body, a stream through [DONE]). */
async function chat(/** @type {string} */ key, /** @type {number} */ i) {
  const stream = i % 2 === 1;
  /** @type {Outcome} */
  const o = { status: "network", stream, complete: false, logId: null, requestId: null, cost: 0n };
  try {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 16, stream, messages: [{ role: "user", content: `crash test ${i}` }] }),
      signal: AbortSignal.timeout(60_000),
    });
    o.status = res.status;
    o.requestId = res.headers.get("x-request-id");
    const text = await res.text();
    if (res.status !== 200) return o;
    if (!stream) {
      const body = JSON.parse(text);
      o.logId = body.metadata?.log_id ?? null;
      o.cost = usdToPico(String(body.usage?.cost_usd ?? body.usage?.cost?.toFixed(12) ?? "0"));
      o.complete = true;
      return o;
    }
    const events = text.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice(6));
    if (events[events.length - 1] !== "[DONE]") return o;
    for (const e of events) {
      if (e === "[DONE]") continue;
      const chunk = JSON.parse(e);
      if (chunk.usage && chunk.metadata) {
        o.logId = chunk.metadata.log_id ?? null;
        o.cost = usdToPico(String(chunk.usage.cost_usd ?? chunk.usage.cost?.toFixed(12) ?? "0"));
      }
    }
    o.complete = o.logId !== null;
  } catch {
    // the runtime died under it: not answered
  } finally {
    outcomes.push(o);
  }
  return o;
}

/** RATE requests a second for `ms`; returns the requests still running. */
async function traffic(/** @type {string} */ key, /** @type {number} */ ms, /** @type {{ n: number }} */ counter) {
  /** @type {Promise<unknown>[]} */
  const running = [];
  const end = Date.now() + ms;
  const gap = 1000 / RATE;
  let next = Date.now();
  while (Date.now() < end) {
    running.push(chat(key, counter.n++));
    next += gap;
    await sleep(Math.max(0, next - Date.now()));
  }
  return running;
}

// ---------- the run ----------

async function master(/** @type {string} */ path) {
  const res = await fetch(`${base}/v1/master${path}`, { headers: { authorization: `Bearer ${creds().masterKey}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /v1/master${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

async function main() {
  log(`state ${stateDir}; gateway on ${base}`);
  await startServer();
  const c = creds();
  const made = await fetch(`${base}/v1/master/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${c.masterKey}`, "content-type": "application/json" },
    body: JSON.stringify({ projectId: c.projectId, description: "crash test" }),
  });
  const madeBody = await made.json();
  if (made.status !== 201) throw new Error(`key not created: ${made.status} ${JSON.stringify(madeBody)}`);
  /** @type {string} */
  const key = madeBody.apiKey.token;
  /** @type {string} */
  const keyId = madeBody.apiKey.id;
  const startBalance = usdToPico(JSON.parse(await master("/credits?limit=1")).balance);
  const startedAt = Date.now();
  const counter = { n: 0 };
  let kills = 0;
  for (let k = 0; k < KILLS; k++) {
    // Traffic runs; halfway through a phase, the runtime is killed under it.
    const running = traffic(key, PHASE_MS, counter);
    await sleep(PHASE_MS / 2);
    const pids = runtimePids();
    if (pids.length === 0) throw new Error("no workerd process found under the dev server");
    for (const pid of pids) process.kill(pid, "SIGKILL");
    kills++;
    log(`kill ${kills}: SIGKILL workerd ${pids.join(",")} after ${counter.n} requests`);
    await Promise.allSettled(await running);
    await stopAndWait();
    await startServer();
  }
  await Promise.allSettled(await traffic(key, PHASE_MS, counter));
  log(`traffic done: ${outcomes.length} requests, ${outcomes.filter((o) => o.complete).length} answered 200 in full`);

  // The records leave the key's outbox and the queue within seconds; wait for the export to settle.
  const answered = outcomes.filter((o) => o.complete && o.logId);
  const from = new Date(startedAt - 3_600_000).toISOString();
  /** @type {any[]} */
  let records = [];
  /** @type {string[]} */
  let missing = [];
  for (let attempt = 0; attempt < 12; attempt++) {
    await sleep(attempt === 0 ? 8_000 : 5_000);
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const text = await master(`/logs?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    records = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    const ids = new Set(records.map((r) => r.id));
    missing = answered.filter((o) => !ids.has(o.logId)).map((o) => `${o.logId} (${o.stream ? "stream" : "json"})`);
    if (missing.length === 0) break;
  }
  /** @type {Map<string, number>} */
  const count = new Map();
  for (const r of records) count.set(r.id, (count.get(r.id) ?? 0) + 1);
  const twice = [...count].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`);
  const credited = records.reduce((a, r) => a + BigInt(r.creditsCostPico ?? 0), 0n);
  const balance = usdToPico(JSON.parse(await master("/credits?limit=1")).balance);
  const debited = startBalance - balance;
  const answeredCost = answered.reduce((a, o) => a + o.cost, 0n);
  const view = JSON.parse(await master(`/keys/${keyId}`));
  const keySpend = usdToPico(view?.apiKey?.usage ?? "0");
  const keyRecords = records.filter((r) => r.apiKeyId === keyId).reduce((a, r) => a + BigInt(r.costPico ?? 0), 0n);
  const held = view?.apiKey?.limitState ?? null;

  /** @type {string[]} */
  const failures = [];
  const check = (/** @type {string} */ name, /** @type {boolean} */ ok, /** @type {string} */ detail) => {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${name}: ${detail}`);
    if (!ok) failures.push(name);
  };
  /** @type {Record<string, number>} */
  const byStatus = {};
  for (const o of outcomes) byStatus[`${o.status}${o.status === 200 && !o.complete ? " cut" : ""}`] = (byStatus[`${o.status}${o.status === 200 && !o.complete ? " cut" : ""}`] ?? 0) + 1;
  console.log(`[crash] ${kills} runtime kills, ${outcomes.length} requests (${counter.n} sent; ${JSON.stringify(byStatus)}), ${answered.length} answered 200 in full, ${records.length} records exported`);
  // Local dev's queue (miniflare's broker) keeps messages in memory: a record the key's object sent
  // (its spend counted there, its outbox row gone) and the consumer had not applied yet dies with
  // the runtime. Cloudflare Queues keep accepted messages. Such records show as the key's spend
  // above its exported records, by exactly their cost; they are told apart from records never
  // stored (which would not be in the key's spend).
  const missingCost = answered.filter((o) => missing.some((m) => m.startsWith(`${o.logId} `))).reduce((a, o) => a + o.cost, 0n);
  const localQueueLoss = keySpend - keyRecords;
  const explained = missing.length > 0 && localQueueLoss >= missingCost;
  check(
    "answered requests missing from the export (never stored)",
    missing.length === 0 || explained,
    missing.length === 0
      ? "0"
      : explained
        ? `0 (${missing.length} stored by the key's object, then lost by the local queue, which does not survive a runtime kill: ${localQueueLoss} pico of spend without exported records)`
        : `${missing.length} e.g. ${missing.slice(0, 3).join(", ")}`,
  );
  check("records exported more than once", twice.length === 0, `${twice.length}${twice.length ? ` e.g. ${twice.slice(0, 3).join(", ")}` : ""}`);
  check("credits debited = credit-paid cost of the exported records", debited === credited, `debited ${debited} pico, records ${credited} pico (answered requests ${answeredCost} pico)`);
  check("answered requests all billed", debited >= answeredCost, `debited ${debited} pico >= answered ${answeredCost} pico`);
  check("key spend = cost of its records (+ records the local queue lost)", keySpend === keyRecords || (explained && localQueueLoss >= 0n), `spend ${keySpend} pico, records ${keyRecords} pico`);
  const heldProblem = await nothingHeld(keyId, key, keySpend);
  check("no reservation or lease held on the key", heldProblem === null, heldProblem ?? `a request at spend + 1 micro-dollar admitted${held ? ` (limit state before ${JSON.stringify(held)})` : ""}`);
  console.log(`[crash] ${failures.length === 0 ? "CLEAN" : `FAILED: ${failures.join("; ")}`}`);
  return failures.length === 0;
}

/**
 * Whether anything is still held on the key for requests in flight (a reservation or lease of a
 * request that died): with the limit set just above the settled spend, a request is admitted only
 * when nothing is held (otherwise it waits and gets 429 budget_busy). The limit is cleared after.
 */
async function nothingHeld(/** @type {string | undefined} */ keyId, /** @type {string} */ heldKey, /** @type {bigint} */ spend) {
  if (!keyId) return "key not found";
  const c = creds();
  const limit = spend + 1_000_000n; // one micro-dollar above the settled spend
  const usd = `${limit / 10n ** 12n}.${(limit % 10n ** 12n).toString().padStart(12, "0")}`;
  const patch = (/** @type {unknown} */ body) =>
    fetch(`${base}/v1/master/keys/${keyId}`, { method: "PATCH", headers: { authorization: `Bearer ${c.masterKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const set = await patch({ usageLimit: usd });
  if (set.status !== 200) return `limit not set: ${set.status}`;
  const o = await chat(heldKey, 0);
  await patch({ usageLimit: null });
  return o.status === 200 ? null : `a request at spend + 1 micro-dollar answered ${o.status}`;
}

main()
  .then((ok) => {
    stopServer();
    if (ok) rmSync(stateDir, { recursive: true, force: true });
    else console.log(`[crash] state kept in ${stateDir}; last server lines:\n${serverLog.slice(-15).join("\n")}`);
    process.exit(ok ? 0 : 1);
  })
  .catch((err) => {
    console.error(`[crash] ${err instanceof Error ? err.message : String(err)}`);
    console.error(serverLog.slice(-30).join("\n"));
    stopServer();
    process.exit(1);
  });
