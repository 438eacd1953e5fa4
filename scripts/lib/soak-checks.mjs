// @ts-check
/**
 * The end-of-run checks of `npm run soak` (scripts/soak.mjs): what the run's answers say, and
 * what the gateway's own records and figures say once the records are exported.
 */

/** Decimal USD string -> integer pico-dollars. @param {string | null | undefined} usd */
export function usdToPico(usd) {
  if (usd === null || usd === undefined) return 0n;
  const m = /^(-)?(\d+)(?:\.(\d{0,12}))?$/.exec(String(usd));
  if (!m) throw new Error(`not a decimal USD amount: ${usd}`);
  const pico = BigInt(m[2] ?? "0") * 10n ** 12n + BigInt((m[3] ?? "").padEnd(12, "0") || "0");
  return m[1] ? -pico : pico;
}

/** How often the export is read while the queue drains. */
const DRAIN_POLL_MS = 3_000;
/** Served requests all exported, figures equal to their records and no new record for this long: drained. */
const DRAIN_QUIET_MS = 5_000;
/** No new record for this long (three of the LOGS queue's 30 s retry delays) while some are missing: lost. */
export const DRAIN_STALL_MS = 90_000;
/** The most the check waits for the export in all. */
export const DRAIN_MAX_MS = 300_000;

/** Server log lines worth printing after a run. @type {[string, RegExp][]} */
const SERVER_LOG_NOTES = [
  ["log batches retried by the queue consumer", /log batch not applied/],
  ["outbox sends to the queue failed", /log queue send failed|key spend report failed/],
  ["uncaught errors", /Uncaught|unhandled error/i],
  ["runtime reloads", /Reloading local server/],
];

/** What workerd answers itself (not the gateway): a restart mid-request, a request cancelled as hung. */
const RUNTIME_TEXT = /worker restarted mid-request|code had hung|Worker threw exception|exceeded (CPU|memory) limit/i;
/** The gateway reporting an upstream failure (any dialect's envelope: OpenAI's, Anthropic's). */
const UPSTREAM_REPORT = /provider attempts? failed|upstream/i;

/**
 * Whether a 5xx answer was the gateway's own failure: anything but the error envelope of an
 * upstream failure it reports (`upstream_error`, `timeout_error`).
 * @param {{status: number | string, body: any, text: string}} o
 */
export function gatewayMade5xx(o) {
  if (typeof o.status !== "number" || o.status < 500) return false;
  const type = o.body?.error?.type;
  if (type === "upstream_error" || type === "timeout_error") return false;
  return !(o.status >= 502 && o.status <= 504 && UPSTREAM_REPORT.test(String(o.body?.error?.message ?? "")));
}

/** @param {{status: number | string, body: any, text: string}} o */
export const runtimeAnswer = (o) => (typeof o.status === "number" && o.status >= 500 && RUNTIME_TEXT.test(o.text)) || (typeof o.status === "number" && o.status >= 500 && !o.body?.error);

/**
 * @param {{ base: string, orgs: any[], outcomes: any[], adminLog: string[], startedAt: number, send: Function, sleep: (ms: number) => Promise<unknown>, serverNotes: string[] }} run
 */
export async function checkInvariants(run) {
  const { outcomes, adminLog, startedAt, sleep } = run;
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  const failures = [];
  const fail = (/** @type {string} */ what) => failures.push(what);

  // What the answers say.
  /** @type {Record<string, number>} */
  const byStatus = {};
  /** @type {Record<string, number>} */
  const byDoor = {};
  for (const o of outcomes) {
    byStatus[String(o.status)] = (byStatus[String(o.status)] ?? 0) + 1;
    byDoor[o.door] = (byDoor[o.door] ?? 0) + 1;
  }
  const hung = outcomes.filter((o) => o.status === "hung");
  const network = outcomes.filter((o) => o.status === "network");
  const own5xx = outcomes.filter(gatewayMade5xx);
  const runtime = outcomes.filter(runtimeAnswer);
  const chatDoors = new Set(["chat", "chat-stream", "chat-drop", "messages", "messages-stream", "responses", "responses-stream", "unknown-key"]);
  const noOverhead = outcomes.filter((o) => chatDoors.has(o.door) && typeof o.status === "number" && o.overhead === null);
  const violations = adminLog.filter((l) => l.startsWith("VIOLATION"));
  lines.push(`requests ${outcomes.length} in ${Math.round((Date.now() - startedAt) / 1000)} s; admin changes ${adminLog.filter((l) => l.startsWith("admin")).length}`);
  lines.push(`by status ${JSON.stringify(byStatus)}`);
  lines.push(`by door ${JSON.stringify(byDoor)}`);
  const p = (/** @type {number} */ q) => {
    const ms = outcomes.filter((o) => typeof o.status === "number").map((o) => o.ms).sort((a, b) => a - b);
    return ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] : 0;
  };
  lines.push(`latency p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`);
  const check = (/** @type {string} */ name, /** @type {any[]} */ bad) => {
    lines.push(`${bad.length === 0 ? "ok  " : "FAIL"} ${name}: ${bad.length}`);
    if (bad.length) {
      fail(name);
      for (const b of bad.slice(0, 5)) lines.push(`       ${typeof b === "string" ? b : JSON.stringify({ door: b.door, status: b.status, id: b.requestId, text: b.text })}`);
    }
  };
  check("5xx the gateway made itself", own5xx);
  check("answers of the runtime instead of the gateway (503 restarted, hung, non-envelope 5xx)", runtime);
  check("hung requests (no answer within the bound)", hung);
  check("connections lost (no HTTP answer)", network);
  check("chat-door answers without x-gateway-overhead-ms", noOverhead);
  check("admin changes failing, sessions of revoked sk_ keys served", violations);

  // What the records say, once exported. Records wait in the key's outbox (LOG_FLUSH_MS), then in
  // a queue batch (max_batch_timeout 5 s), and a batch the consumer fails comes back after the
  // queue's retry_delay (30 s). So the check reads the export and every key's and member's spend
  // again and again: done when every served request is exported, every figure equals the sum of
  // its records and no record came for DRAIN_QUIET_MS; a record is declared missing (or a spend
  // ahead of its records) only after DRAIN_STALL_MS without a new record, or DRAIN_MAX_MS in all.
  const served = outcomes.filter((o) => o.status === 200 && o.requestId && o.door !== "mcp" && o.door !== "models-after-refusal");
  const from = new Date(startedAt - 3_600_000).toISOString();
  const drainStarted = Date.now();
  let lastProgress = drainStarted;
  let exported = -1;
  let figures = await readFigures(run, from);
  for (;;) {
    const missing = served.filter((o) => !figures.seen.has(o.requestId));
    if (figures.records > exported) lastProgress = Date.now();
    exported = figures.records;
    const settled = missing.length === 0 && figures.spendBad.length === 0;
    if (settled && Date.now() - lastProgress >= DRAIN_QUIET_MS) break;
    if (Date.now() - lastProgress >= DRAIN_STALL_MS || Date.now() - drainStarted >= DRAIN_MAX_MS) break;
    await sleep(DRAIN_POLL_MS);
    figures = await readFigures(run, from);
  }
  const missing = served.filter((o) => !figures.seen.has(o.requestId)).map((o) => `${o.door} ${o.requestId}`);
  lines.push(`export drained in ${Math.round((Date.now() - drainStarted) / 1000)} s`);
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const recs of figures.recordsByOrg.values()) for (const rec of recs) if (rec.kind !== "refund") counts.set(rec.id, (counts.get(rec.id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`);
  lines.push(`records exported ${figures.records} (served requests ${served.length})`);
  check("served requests missing from the export", missing);
  check("records exported more than once", twice);
  lines.push(...figures.orgLines);
  // What the server said about the way records took (not findings by themselves: a retried batch
  // or send is the design working; they explain a record that is late or missing).
  for (const [what, re] of SERVER_LOG_NOTES) {
    const hits = run.serverNotes.filter((l) => re.test(l));
    if (hits.length) lines.push(`server log: ${what} ${hits.length}, e.g. ${hits[0]?.slice(0, 200)}`);
  }
  check("spend different from the sum of its records (keys, members)", figures.spendBad);
  check("spend beyond its limit plus one request", figures.limitBad);
  check("credits below minus one request", figures.creditBad);
  return { ok: failures.length === 0, text: [`[soak] ${failures.length === 0 ? "CLEAN" : `FAILED: ${failures.join("; ")}`}`, ...lines.map((l) => `  ${l}`)].join("\n") };
}

/**
 * One reading of what the gateway says: every organization's exported records, and each key's,
 * limited member's and organization's figures against them (organizations read at the same time).
 * @param {{ base: string, orgs: any[], send: Function }} run @param {string} from
 */
async function readFigures({ base, orgs, send }, from) {
  const to = new Date(Date.now() + 3_600_000).toISOString();
  /** @type {Map<string, any[]>} */
  const recordsByOrg = new Map();
  /** @type {string[]} */
  const spendBad = [];
  /** @type {string[]} */
  const limitBad = [];
  /** @type {string[]} */
  const creditBad = [];
  /** @type {string[]} */
  const orgLines = [];
  await Promise.all(
    orgs.map(async (org) => {
      const recs = await exportAll(base, org, from, to);
      recordsByOrg.set(org.id, recs);
      const maxCost = recs.reduce((m, r) => (BigInt(r.costPico ?? 0) > m ? BigInt(r.costPico ?? 0) : m), 0n);
      const master = (/** @type {string} */ path) => send(`${base}/v1/master${path}`, { headers: { authorization: `Bearer ${org.master}` } });
      for (const key of org.keys) {
        const view = await master(`/keys/${key.id}`);
        const usage = usdToPico(view.body?.apiKey?.usage ?? "0");
        const sum = recs.filter((r) => r.apiKeyId === key.id).reduce((a, r) => a + BigInt(r.costPico ?? 0), 0n);
        if (usage !== sum) spendBad.push(`key ${key.id}: spend ${usage} pico, records ${sum}`);
        const limit = key.usageLimits.length ? usdToPico(String(Math.max(...key.usageLimits))) : null;
        if (limit !== null && usage > limit + maxCost) limitBad.push(`key ${key.id}: spend ${usage} > limit ${limit} + one request ${maxCost}`);
      }
      if (org.memberLimits.length) {
        const view = await master(`/members/${org.ownerMemberId}/limits`);
        const usage = usdToPico(view.body?.limits?.usage ?? "0");
        const sum = recs.reduce((a, r) => a + BigInt(r.costPico ?? 0), 0n);
        if (usage !== sum) {
          /** @type {Record<string, string>} */
          const byKind = {};
          for (const r of recs) byKind[r.kind] = String(BigInt(byKind[r.kind] ?? "0") + BigInt(r.costPico ?? 0));
          spendBad.push(`member ${org.ownerMemberId}: spend ${usage} pico, records ${sum} (by kind ${JSON.stringify(byKind)})`);
        }
        const limit = usdToPico(String(Math.max(...org.memberLimits)));
        if (usage > limit + maxCost) limitBad.push(`member ${org.ownerMemberId}: spend ${usage} > limit ${limit} + one request ${maxCost}`);
      }
      const credits = await master("/credits?limit=1");
      const balance = usdToPico(credits.body?.balance ?? "0");
      const maxCredit = recs.reduce((m, r) => (BigInt(r.creditsCostPico ?? 0) > m ? BigInt(r.creditsCostPico ?? 0) : m), 0n);
      if (balance < -maxCredit) creditBad.push(`org ${org.id}: balance ${balance} pico below minus one request (${maxCredit})`);
      orgLines.push(`org ${org.id}: records ${recs.length}, credits balance ${credits.body?.balance}`);
    }),
  );
  /** @type {Set<string>} */
  const seen = new Set();
  for (const recs of recordsByOrg.values()) for (const rec of recs) if (rec.requestId) seen.add(rec.requestId);
  const records = [...recordsByOrg.values()].reduce((a, r) => a + r.length, 0);
  return { recordsByOrg, seen, records, spendBad, limitBad, creditBad, orgLines };
}

/** Every record of the organization in the period (NDJSON). */
/** @param {string} base @param {{master: string}} org @param {string} from @param {string} to */
async function exportAll(base, org, from, to) {
  const res = await fetch(`${base}/v1/master/logs?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { headers: { authorization: `Bearer ${org.master}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`logs export answered ${res.status}: ${text.slice(0, 200)}`);
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}
