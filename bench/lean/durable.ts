/**
 * The durable bound: the Hono + zod lean bound (chat-steps.ts) plus what Switchboard's product
 * rules demand of every metered request beyond it, each built as cheaply as the runtime allows:
 *  - a global spend cap: a key object (key-object.ts) grants this isolate leases, slices of the
 *    key's remaining budget; a request admits its upper bound against the lease in memory, the
 *    lease is renewed in the background once half used or half through its life, and a request
 *    waits for the object only when the isolate holds no usable lease;
 *  - the record durable before the answer ends: the request's log row (35 columns, as Switchboard
 *    stores it) and its cost go to the key's object, and the answer leaves once that call
 *    returned. Group commit: per isolate and key at most one call in flight; records that finish
 *    meanwhile go together in the next call; a lone record goes at once;
 *  - every record through a queue into R2 and D1: the object's alarm sends its outbox to the LOGS
 *    queue, whose consumer (`queue` below) writes one gzip NDJSON object per batch to R2 and the
 *    batch's rows to D1 in one statement.
 * No IAM, routing, rate limits or metrics: only what the rules force.
 */
import type { ChatRequest } from "../../src/providers/types";
import { acceptChat, callUpstream, leanApp, PRICE_PICO, priceAnswer, type AcceptedChat, type Priced } from "./chat-steps";
import { KeyObject, type KeyObjectBindings, type LeaseClose, type SettleRecord } from "./key-object";
import { LOG_COLUMNS } from "../../src/usage/request-log";

export { KeyObject };

interface Bindings extends KeyObjectBindings {
  DB: D1Database;
  LOGS_BUCKET: R2Bucket;
  KEY_OBJECT: DurableObjectNamespace<KeyObject>;
  UPSTREAM: string;
}

/** The model's longest answer in tokens (gpt-4o-mini): the completion bound when the request sets none. */
const MAX_OUTPUT_TOKENS = 16_384;
/** A request whose record rides another request's call looks this often whether it returned. */
const POLL_MS = 2;
/** A call in flight longer than this (its request was cancelled) no longer blocks the others. */
const DURABLE_WAIT_MS = 10_000;

/**
 * The most the request can cost: every byte of the body a prompt token (byte-level BPE never makes
 * a token shorter than a byte), and the completion cap it asks for (else the model's) per choice.
 */
function upperBoundPico(body: ChatRequest, bodyBytes: number): number {
  const completion = (body.max_completion_tokens ?? body.max_tokens ?? MAX_OUTPUT_TOKENS) * (body.n ?? 1);
  return bodyBytes * PRICE_PICO.prompt + completion * PRICE_PICO.completion;
}

// ---------- leases, isolate side: one per key, nothing shared between isolates ----------
interface Lease {
  id: string;
  slicePico: number;
  usedPico: number;
  renewAt: number;
  expiresAt: number;
}
const leases = new Map<string, Lease>();
/** Leases replaced here, reported with this key's next lease call. */
const closes = new Map<string, LeaseClose[]>();
/** When the background renewal of a key's lease started (none: absent). */
const renewing = new Map<string, number>();

/** Asks the key's object for a lease and makes it current; false when the limit leaves no room. */
async function fetchLease(env: Bindings, keyId: string, estimatePico: number): Promise<boolean> {
  const sent = Date.now();
  const report = closes.get(keyId) ?? [];
  closes.delete(keyId);
  const grant = await env.KEY_OBJECT.getByName(keyId).lease(report, estimatePico);
  if (!grant) return false;
  const old = leases.get(keyId);
  if (old) closes.set(keyId, [...(closes.get(keyId) ?? []), { id: old.id, admittedPico: old.usedPico }]);
  // Its life counts from the sending, so it ends here before it ends in the object.
  leases.set(keyId, { id: grant.id, slicePico: grant.slicePico, usedPico: 0, renewAt: sent + grant.ttlMs / 2, expiresAt: sent + grant.ttlMs });
  return true;
}

/** The lease the request's bound is admitted under, or null when the key's limit is reached. */
async function admit(env: Bindings, ctx: { waitUntil(p: Promise<unknown>): void }, keyId: string, estimatePico: number): Promise<string | null> {
  let l = leases.get(keyId);
  let now = Date.now();
  if (!l || now >= l.expiresAt || l.usedPico + estimatePico > l.slicePico) {
    if (!(await fetchLease(env, keyId, estimatePico))) return null;
    l = leases.get(keyId);
    now = Date.now();
    if (!l || l.usedPico + estimatePico > l.slicePico) return null;
  }
  l.usedPico += estimatePico;
  const since = renewing.get(keyId);
  if ((l.usedPico * 2 > l.slicePico || now >= l.renewAt) && (since === undefined || now - since > DURABLE_WAIT_MS)) {
    renewing.set(keyId, now);
    ctx.waitUntil(fetchLease(env, keyId, estimatePico).catch(() => false).finally(() => renewing.delete(keyId)));
  }
  return l.id;
}

// ---------- group commit of records into the key's object ----------
interface Pending {
  record: SettleRecord;
  done: boolean;
}
interface KeyCommits {
  waiting: Pending[];
  /** When the call in flight started (0: none). */
  sendingSince: number;
}
const commits = new Map<string, KeyCommits>();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once the record is durable in the key's object (or, when the object failed, in the
 * LOGS queue). Requests share plain data here, never a promise: Workers run a continuation in the
 * context of whoever resolved its promise, and a request may do I/O only in its own. So whoever
 * finds no call in flight sends all that waits, and the others look every POLL_MS.
 */
async function commitDurably(env: Bindings, keyId: string, record: SettleRecord): Promise<void> {
  let c = commits.get(keyId);
  if (!c) commits.set(keyId, (c = { waiting: [], sendingSince: 0 }));
  const entry: Pending = { record, done: false };
  c.waiting.push(entry);
  const deadline = Date.now() + DURABLE_WAIT_MS;
  while (!entry.done) {
    const now = Date.now();
    if (now >= deadline) {
      console.error("record not confirmed durable in time; the answer leaves without it");
      return;
    }
    if (c.sendingSince === 0 || now - c.sendingSince > DURABLE_WAIT_MS) await sendWaiting(env, keyId, c);
    else await pause(POLL_MS);
  }
}

async function sendWaiting(env: Bindings, keyId: string, c: KeyCommits): Promise<void> {
  const group = c.waiting.splice(0);
  if (!group.length) return;
  const since = Date.now();
  c.sendingSince = since;
  const records = group.map((e) => e.record);
  try {
    await env.KEY_OBJECT.getByName(keyId).settle(records);
  } catch (err) {
    // The object out of reach: the rows still leave through the queue (exported, not lost).
    console.error("key object unreachable; records sent to the queue", err instanceof Error ? err.message : String(err));
    await env.LOGS.sendBatch(records.map((r) => ({ body: r.row }))).catch((e: unknown) => console.error("records lost", String(e)));
  } finally {
    for (const e of group) e.done = true;
    if (c.sendingSince === since) c.sendingSince = 0;
  }
}

// ---------- the request ----------
const ORG = "org_bench";
const PROJECT = "proj_bench";

/** The request's log row as a JSON array in `LOG_COLUMNS` order (Switchboard's `requestLogJson` shape). */
function logRow(requestId: string, chat: AcceptedChat, p: Priced, status: number, finishReason: string | null, started: number): string {
  const model = chat.body.model;
  const ok = status === 200;
  return JSON.stringify([
    p.logId, requestId, ORG, PROJECT, chat.key.id, "chat", "", model, null, ok ? model : null, ok ? "openai" : null, "",
    status, ok ? null : "upstream_error", null, finishReason, 0, 0, 0,
    p.promptTokens, p.completionTokens, 0, 0, 0, p.promptTokens + p.completionTokens,
    p.costPico, p.costPico, 0, 0, Date.now() - started, null, JSON.stringify(p.routing), null, started, null,
  ]);
}

const app = leanApp<Bindings>();
app.post("/v1/chat/completions", async (c) => {
  const started = Date.now();
  const chat = await acceptChat(c);
  if (chat instanceof Response) return chat;
  const keyId = chat.key.id;
  const estimatePico = upperBoundPico(chat.body, Number(c.req.header("content-length")) || JSON.stringify(chat.body).length * 3);
  const leaseId = await admit(c.env, c.executionCtx, keyId, estimatePico);
  if (!leaseId) return c.json({ error: { message: "usage limit reached" } }, 401);
  const settle = (p: Priced, status: number, finish: string | null) =>
    commitDurably(c.env, keyId, { leaseId, estimatePico, costPico: p.costPico, row: logRow(c.get("requestId"), chat, p, status, finish, started) });
  let answer;
  try {
    answer = await callUpstream(c.env.UPSTREAM, chat);
  } catch (err) {
    // A failed call is recorded too (and releases its bound), then answered by Hono's error handler.
    await settle({ costPico: 0, promptTokens: 0, completionTokens: 0, logId: crypto.randomUUID(), routing: [] }, 502, null);
    throw err;
  }
  const p = priceAnswer(answer, chat.body.model);
  await settle(p, 200, answer.choices?.[0]?.finish_reason ?? null);
  return c.json(answer);
});

// ---------- the queue's consumer ----------
/** The bound's D1 table: Switchboard's request_logs columns, made by the first batch of an isolate. */
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS request_log (${LOG_COLUMNS.map((c) => (c === "id" ? "id TEXT PRIMARY KEY" : c)).join(", ")})`;
let tableMade = false;
const INSERT_ROWS = `INSERT OR IGNORE INTO request_log (${LOG_COLUMNS.join(", ")}) SELECT ${LOG_COLUMNS.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?1)`;

/** One gzip NDJSON object per batch in R2 and the batch's rows in D1 in one statement; a redelivered batch overwrites and is ignored. */
async function consume(batch: MessageBatch<string>, env: Bindings): Promise<void> {
  const rows = batch.messages.map((m) => m.body);
  const first = batch.messages[0];
  if (!first) return;
  if (!tableMade) {
    await env.DB.prepare(CREATE_TABLE).run();
    tableMade = true;
  }
  const gz = await new Response(new Blob([rows.join("\n") + "\n"]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
  await Promise.all([
    env.LOGS_BUCKET.put(`logs/${new Date().toISOString().slice(0, 13)}/${first.id}.ndjson.gz`, gz, { httpMetadata: { contentType: "application/x-ndjson", contentEncoding: "gzip" } }),
    env.DB.prepare(INSERT_ROWS).bind(`[${rows.join(",")}]`).run(),
  ]);
  batch.ackAll();
}

export default { fetch: app.fetch, queue: consume } satisfies ExportedHandler<Bindings, string>;
