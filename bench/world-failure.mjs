// @ts-check
/**
 * `npm run bench -- --world-failure`: what a provider that fails slowly costs a caller, with the
 * gateway's default timeouts (docs/routing-and-cache.md, "Timeouts"), with and without hedging.
 * The stand-in upstream answers every healthy request after --ttft ms (default 400); the floor is
 * the bare pass-through Worker in front of the same healthy upstream, measured at the same moments.
 *
 * Scenarios (gpt-4o-mini, served by `openai` and `azure`; streamed; --failure-requests each, 8 at
 * a time):
 *  - warm-up: healthy requests until both providers have time-to-first-token evidence (the
 *    first-byte timeout and the hedge delay are derived from it);
 *  - hang, default routing: openai accepts the connection but never answers
 *    (`[[fake@openai:hang]]`), no order: how many callers meet it before the provider's health sends
 *    the router elsewhere (run first, while openai is still healthy);
 *  - hang, order pinned: the same hang with `provider.order: ["openai", "azure"]`: every request
 *    meets the hang first, so each one shows what a hang costs; once in a project without hedging,
 *    once in one with it;
 *  - stall: openai sends three chunks and then nothing (`stall_after=3`, order pinned to openai,
 *    no fallback possible after the first byte): how long after its last chunk the stream ends,
 *    and with what.
 * Reported per scenario: statuses, added time to first byte over the floor (p50 / p99 / max), and
 * for the stall the time from the last chunk to the stream's end and whether an error event ended it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { api, seedWorld } from "./world.mjs";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const r0 = (/** @type {number} */ x) => (Number.isFinite(x) ? Math.round(x) : NaN);

let seq = 0;
const tag = Math.random().toString(36).slice(2);
/** @param {string} directives @param {Record<string, unknown>} [extra] */
const body = (directives, extra = {}) =>
  JSON.stringify({
    model: "gpt-4o-mini",
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 16,
    messages: [{ role: "user", content: `Failure bench ${tag} ${seq++} ${directives}` }],
    ...extra,
  });

/**
 * One streamed request: time to first body chunk, to the last chunk, to the end; whether an SSE
 * error event came. `ms` is NaN unless the answer is 200.
 * @param {string} url @param {Record<string, string>} headers @param {string} payload
 */
async function streamed(url, headers, payload) {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: payload });
  let first = NaN;
  let last = NaN;
  let text = "";
  if (res.body) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value?.length) {
        const now = performance.now() - t0;
        if (Number.isNaN(first)) first = now;
        const chunk = dec.decode(value, { stream: true });
        // The last chunk with content (not the error event or [DONE] that ends a stalled stream).
        if (/"content":"[^"]/.test(chunk)) last = now;
        text += chunk;
      }
    }
  }
  const end = performance.now() - t0;
  return { status: res.status, ms: res.status === 200 ? first : NaN, last, end, errorEvent: /"error"\s*:/.test(text) };
}

/**
 * `n` requests, `c` at a time; each is paired with a floor request sent at the same moment.
 * @param {() => Promise<ReturnType<typeof streamed> extends Promise<infer R> ? R : never>} send
 * @param {() => Promise<ReturnType<typeof streamed> extends Promise<infer R> ? R : never>} floor
 */
async function pairs(send, floor, n, c) {
  /** @type {Array<{ sb: Awaited<ReturnType<typeof streamed>>, fl: Awaited<ReturnType<typeof streamed>> }>} */
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const [sb, fl] = await Promise.all([send(), floor()]);
        out.push({ sb, fl });
      }
    }),
  );
  return out;
}

/** @param {string} name @param {Awaited<ReturnType<typeof pairs>>} rows */
function summarize(name, rows) {
  const statuses = /** @type {Record<string, number>} */ ({});
  for (const r of rows) statuses[r.sb.status] = (statuses[r.sb.status] ?? 0) + 1;
  const sb = rows.map((r) => r.sb.ms);
  const fl = rows.map((r) => r.fl.ms);
  const added = rows.map((r) => r.sb.ms - r.fl.ms);
  return {
    scenario: name,
    requests: rows.length,
    statuses,
    ttfbP50: r0(pct(sb, 50)),
    ttfbP99: r0(pct(sb, 99)),
    floorP50: r0(pct(fl, 50)),
    addedP50: r0(pct(added, 50)),
    addedP99: r0(pct(added, 99)),
    addedMax: r0(Math.max(...added.filter(Number.isFinite))),
    slowOver5s: sb.filter((x) => x > 5000).length,
    stallToEndP50: r0(pct(rows.map((r) => r.sb.end - r.sb.last), 50)),
    stallToEndMax: r0(Math.max(...rows.map((r) => r.sb.end - r.sb.last).filter(Number.isFinite))),
    errorEvents: rows.filter((r) => r.sb.errorEvent).length,
  };
}


/**
 * The world bench's organization, plus a second project with hedging on; a key in each.
 * @param {{ url: string, db: D1Database }} sb
 * @param {string} adminToken
 */
async function seed(sb, adminToken) {
  const w = await seedWorld(sb, adminToken);
  const hedged = await api(`${sb.url}/v1/master/projects`, w.master, "POST", { name: "Hedged" });
  await api(`${sb.url}/v1/master/projects/${hedged.project.id}`, w.master, "PATCH", { hedging: true });
  return { plain: (await w.newKey()).token, hedged: (await w.newKey({ projectId: hedged.project.id })).token };
}

/**
 * Runs the scenarios against `sb` and the floor `pt`; writes bench/results/world-failure.{json,md}.
 * @param {{ root: string, sb: any, pt: any, adminToken: string, o: { ttft: number, requests: number }, machine: Record<string, unknown> }} args
 */
export async function failureReport({ root, sb, pt, adminToken, o, machine }) {
  const loadBefore = os.loadavg()[0].toFixed(2);
  const keys = await seed(sb, adminToken);
  const url = `${sb.url}/v1/chat/completions`;
  const floor = () => streamed(`${pt.url}/v1/chat/completions`, { authorization: "Bearer bench-operator-key-openai" }, body(`[[fake:ttft=${o.ttft}]]`));
  const auth = (/** @type {string} */ token) => ({ authorization: `Bearer ${token}`, "x-no-cache": "true" });
  const healthy = `[[fake:ttft=${o.ttft}]]`;
  const pinned = { provider: { order: ["openai", "azure"] } };

  // Evidence first: both providers answer healthy requests, in both projects, so the first-byte
  // timeout (4 x p99, at least 10 s) and the hedge delay (p95) come from measurements.
  for (const p of ["openai", "azure"]) {
    for (const token of [keys.plain, keys.hedged]) {
      await pairs(() => streamed(url, auth(token), body(healthy, { provider: { order: [p], allow_fallbacks: false } })), floor, 12, 4);
    }
  }
  await sleep(2000);
  console.log("world-failure: warm-up done");

  const scenarios = [];
  const hang = `[[fake:ttft=${o.ttft}]] [[fake@openai:hang]]`;
  const run = async (/** @type {string} */ name, /** @type {() => Promise<any>} */ send, n = o.requests, c = 8) => {
    const t0 = performance.now();
    scenarios.push(summarize(name, await pairs(send, floor, n, c)));
    console.log(`world-failure: ${name} done in ${Math.round((performance.now() - t0) / 1000)} s`);
  };
  await run("healthy (reference)", () => streamed(url, auth(keys.plain), body(healthy, pinned)));
  // First, while openai is still healthy: how many callers meet the hang before routing leaves it.
  await run("hang before headers, default routing, no hedging", () => streamed(url, auth(keys.plain), body(hang)), 2 * o.requests);
  await run("hang before headers, order pinned, no hedging", () => streamed(url, auth(keys.plain), body(hang, pinned)));
  await run("hang before headers, order pinned, hedging on", () => streamed(url, auth(keys.hedged), body(hang, pinned)));
  await run(
    "stall after 3 chunks (openai only)",
    () => streamed(url, auth(keys.plain), body(`[[fake:ttft=${o.ttft},words=12]] [[fake@openai:stall_after=3]]`, { provider: { order: ["openai"], allow_fallbacks: false } })),
    8,
  );

  const summary = { date: new Date().toISOString(), machine, load: { before: loadBefore, after: os.loadavg()[0].toFixed(2) }, config: o, scenarios };
  const md = renderFailure(summary);
  mkdirSync(path.join(root, "bench", "results"), { recursive: true });
  writeFileSync(path.join(root, "bench", "results", "world-failure.json"), JSON.stringify(summary, null, 2) + "\n");
  writeFileSync(path.join(root, "bench", "results", "world-failure.md"), md);
  console.log("\n" + md);
}

/** @param {any} s */
function renderFailure(s) {
  const m = s.machine;
  return [
    `World-failure benchmark ${s.date} — ${m.cores} cores (${m.cpu}), Node ${m.node}; load average ${s.load.before} before, ${s.load.after} after`,
    "",
    `Upstream first token ${s.config.ttft} ms; streamed gpt-4o-mini, 8 requests at a time, each paired with a floor request. Default timeouts (first byte: 4 x p99 time to first token, 10-30 s; stream idle: 30 s).`,
    "",
    "| scenario | requests | statuses | TTFB p50 / p99 ms | floor p50 | added p50 / p99 / max ms | requests over 5 s | stall: last chunk to end p50 / max ms | ended by an error event |",
    "|---|---|---|---|---|---|---|---|---|",
    ...s.scenarios.map(
      (/** @type {any} */ r) =>
        `| ${r.scenario} | ${r.requests} | ${Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")} | ${r.ttfbP50} / ${r.ttfbP99} | ${r.floorP50} | ${r.addedP50} / ${r.addedP99} / ${r.addedMax} | ${r.slowOver5s} | ${r.scenario.startsWith("stall") ? `${r.stallToEndP50} / ${r.stallToEndMax}` : ""} | ${r.scenario.startsWith("stall") ? r.errorEvents : ""} |`,
    ),
    "",
  ].join("\n");
}
