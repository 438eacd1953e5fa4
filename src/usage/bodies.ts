/**
 * Request and response bodies, kept for projects with `logBodies` on (docs/analytics.md).
 *
 * After the answer, the bodies of the requests an isolate finishes meanwhile ride the LOGS queue as
 * one group (src/usage/body-batch.ts; the record names the group, `extra.bodyBatch`); the
 * consumer (src/usage/log-consumer.ts) removes secrets, masks personal data when the organization
 * asks (src/usage/redact.ts) and writes one gzip JSON object per message, organization and hour
 * to the LOGS_BUCKET: `bodies/{org}/{yyyy}/{mm}/{dd}/{hh}/{group}.{part}.json.gz` (the hour of the
 * request's start, as its record). Never in D1. Retention deletes them with the records
 * (src/usage/retention.ts). Objects of single requests (`.../{hh}/{logId}.json.gz`) from before
 * groups are still read.
 *
 * Each side is capped at BODY_CAP_BYTES of JSON text: a larger one is kept as the first
 * BODY_CAP_BYTES of its text, marked truncated (shorter still when both sides, escaped, would not
 * fit one queue message). Bodies the queue refuses, or the consumer cannot store on the queue's
 * last delivery, are dropped and marked so per request (`markDropped`; the record itself is never
 * at stake: it travels separately). The consumer notes in D1 which requests each object it stored
 * holds (`stored_body_parts`), so SQL alone can say whether a request's bodies are kept
 * (`keptSql`), as `readBodiesStatus` says from R2.
 */
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import { CompletionAccumulator } from "../providers/accumulate";
import type { Choice, StreamEvent } from "../providers/types";
import { mayHoldSecret, scrubReviver, scrubValue } from "./redact";
import { HOUR_MS, hourStartOf } from "./aggregate";

/** Bytes of JSON text kept per side (request, response) of one request. */
export const BODY_CAP_BYTES = 32 * 1024;
const DAY_MS = 86_400_000;

/** One request's bodies as they ride the queue. */
export interface BodyEntry {
  logId: string;
  requestId: string;
  organizationId: string;
  projectId: string;
  createdAt: number;
  /** The organization's `compliance.redactBodies` at request time. */
  redact: boolean;
  request: CappedJson;
  response: CappedJson;
}

/** A body as JSON text, or its first BODY_CAP_BYTES when longer. */
export interface CappedJson {
  text: string;
  truncated: boolean;
}

/** What is stored and returned: the bodies (parsed unless truncated: then the kept text). */
export interface StoredBodies {
  requestBody: unknown;
  responseBody: unknown;
  truncated?: { request: boolean; response: boolean };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function capJson(value: unknown): CappedJson {
  return capText(JSON.stringify(value ?? null));
}

/** A JSON text capped at BODY_CAP_BYTES of UTF-8 (encoded only when it may be longer: 3 bytes per UTF-16 unit at most). */
export function capText(text: string): CappedJson {
  if (text.length * 3 <= BODY_CAP_BYTES) return { text, truncated: false };
  const bytes = encoder.encode(text);
  if (bytes.length <= BODY_CAP_BYTES) return { text, truncated: false };
  // Cut on a character boundary (the decoder drops a split trailing sequence).
  return { text: decoder.decode(bytes.slice(0, BODY_CAP_BYTES)).replace(/\uFFFD$/, ""), truncated: true };
}

/** The answer of a stream, assembled into the shape of a JSON completion (text, tool calls, reasoning). */
export function streamAnswer(events: readonly StreamEvent[]): { choices: Choice[] } {
  const acc = new CompletionAccumulator();
  for (const e of events) acc.push(e);
  return { choices: acc.result().choices };
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `bodies/{org}/{yyyy}/{mm}/{dd}/`: one day of an organization's bodies. */
export function bodyDayPrefix(orgId: string, t: number): string {
  const d = new Date(t);
  return `bodies/${orgId}/${pad(d.getUTCFullYear(), 4)}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/`;
}

export const bodyKey = (orgId: string, logId: string, createdAt: number): string => `${bodyDayPrefix(orgId, createdAt)}${pad(new Date(createdAt).getUTCHours())}/${logId}.json.gz`;

export interface BodyCapture {
  auth: KeyContext;
  logId: string;
  requestId: string;
  createdAt: number;
  request: unknown;
  response: unknown;
}

/**
 * One queue message of bodies: a group of requests (src/usage/body-batch.ts), or one part of a
 * group too large for a message, holding the group's requests from place `first` on, in order.
 * Messages from before groups carry no `batch` (one request each), from before places no `first`.
 */
export interface BodyMessage {
  batch: string;
  part: number;
  first: number;
  bodies: BodyEntry[];
}

/** What the consumer stores of one message: its bodies, their group (null: one request's message from before groups) and the first's place (null: unknown). */
export interface StoredMessage {
  batch: string | null;
  part: number;
  first: number | null;
  bodies: readonly BodyEntry[];
  /** The queue's last delivery of the message. */
  last?: boolean;
}

/** A message's bodies with their group, or null when it is not one. */
export function bodyMessageOf(body: unknown): { batch: string | null; part: number; first: number | null; bodies: BodyEntry[] } | null {
  if (body === null || typeof body !== "object" || !Array.isArray((body as { bodies?: unknown }).bodies)) return null;
  const m = body as { bodies: unknown[]; batch?: unknown; part?: unknown; first?: unknown };
  const bodies = m.bodies.filter((e): e is BodyEntry => {
    const b = e as Partial<BodyEntry> | null;
    return !!b && typeof b.logId === "string" && typeof b.organizationId === "string" && Number.isSafeInteger(b.createdAt) && typeof b.request?.text === "string" && typeof b.response?.text === "string";
  });
  const grouped = typeof m.batch === "string" && /^[A-Za-z0-9_]{1,64}$/.test(m.batch) && Number.isSafeInteger(m.part);
  const first = grouped && Number.isSafeInteger(m.first) && (m.first as number) >= 0 ? (m.first as number) : null;
  return { batch: grouped ? (m.batch as string) : null, part: grouped ? (m.part as number) : 0, first, bodies };
}

/** A capped body as stored: secrets removed (and personal data masked) in the parsed value, or in the kept text. */
function cleaned(c: CappedJson, redact: boolean): unknown {
  if (c.truncated) return scrubValue(c.text, redact);
  try {
    return JSON.parse(c.text, scrubReviver(redact)) as unknown;
  } catch {
    return scrubValue(c.text, redact);
  }
}

/**
 * One side as the JSON text stored: the text as it came when nothing in it could be a secret (and
 * no personal data is to be masked), else parsed, cleaned and serialized again. An untruncated
 * side's text is valid JSON (serialized by the producer, or a request body that parsed).
 */
const sideText = (c: CappedJson, redact: boolean): string => (c.truncated || redact || mayHoldSecret(c.text) ? JSON.stringify(cleaned(c, redact)) : c.text);

/** A request's StoredBodies as JSON text. */
function storedText(e: BodyEntry): string {
  const cut = e.request.truncated || e.response.truncated ? `,"truncated":{"request":${e.request.truncated},"response":${e.response.truncated}}` : "";
  return `{"requestBody":${sideText(e.request, e.redact)},"responseBody":${sideText(e.response, e.redact)}${cut}}`;
}

const gzipText = (text: string): Promise<ArrayBuffer> => new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
const JSON_GZ = { contentType: "application/json", contentEncoding: "gzip" };

/** `bodies/{org}/{yyyy}/{mm}/{dd}/{hh}/`: the hour of a request's start. */
const bodyHourPrefix = (orgId: string, createdAt: number): string => `${bodyDayPrefix(orgId, createdAt)}${pad(new Date(createdAt).getUTCHours())}/`;

/** A group's object for one organization and hour: `{hour}/{group}.{part}.json.gz`, holding `{ bodies: { [logId]: StoredBodies } }`. */
export const groupKey = (orgId: string, createdAt: number, batch: string, part: number): string => `${bodyHourPrefix(orgId, createdAt)}${batch}.${part}.json.gz`;

/**
 * The consumer's step: one gzip object per message, organization and hour (a group's bodies
 * together), rewriting the same key when a message comes again. A message from before groups
 * holds one request: its object per request, as then. Each object stored is then noted in D1
 * (`markStored`). Throws when R2 or that note fails, after every write ended; the requests of the
 * objects that failed on their message's `last` delivery are marked dropped first (the message's
 * other objects are stored).
 */
export async function storeBodies(env: Env, messages: readonly StoredMessage[]): Promise<void> {
  const writes = messages.map((m) => messageWrites(env, m));
  const settled = await Promise.all(writes.map((w) => Promise.allSettled(w.map((o) => o.put))));
  const lost: DropMark[] = [];
  const stored: StoredPart[] = [];
  let failure: PromiseRejectedResult | undefined;
  settled.forEach((results, i) => {
    const m = messages[i]!;
    results.forEach((r, j) => {
      const { bodies } = writes[i]![j]!;
      if (r.status === "fulfilled") {
        if (m.batch !== null && m.first !== null) stored.push({ organizationId: bodies[0]!.organizationId, hour: hourStartOf(bodies[0]!.createdAt), batch: m.batch, first: m.first, last: m.first + m.bodies.length - 1 });
        return;
      }
      failure ??= r;
      if (m.last && m.batch !== null) lost.push({ bodies });
    });
  });
  await markLastDeliveriesDropped(env, lost);
  // A redelivery (the queue's retry after a throw here) rewrites the objects and notes them again.
  await markStored(env, stored);
  if (failure) throw failure.reason;
}

/** One stored object of a group: its organization and hour, holding that organization's and hour's requests of places `first` to `last`. */
interface StoredPart {
  organizationId: string;
  hour: number;
  batch: string;
  first: number;
  last: number;
}

/**
 * Notes stored objects in D1 (`stored_body_parts`, a row per object, none per request): what lets
 * the kept-bodies filter tell, past BODIES_SETTLED_MS, stored bodies from bodies that never came
 * and were never marked (an isolate gone before its send, a mark that failed), and stored bodies
 * from marked ones (a send that threw although the queue took it). Written after the object.
 */
const markStored = (env: Env, parts: readonly StoredPart[]): Promise<void> =>
  insertRows(env, "stored_body_parts (hour_start, organization_id, batch, first_index, last_index)", parts.map((p) => [p.hour, p.organizationId, p.batch, p.first, p.last]));

/** One message's R2 writes, each with the requests its object holds. */
function messageWrites(env: Env, m: StoredMessage): Array<{ bodies: BodyEntry[]; put: Promise<unknown> }> {
  if (m.batch === null) {
    return m.bodies.map((e) => ({ bodies: [e], put: gzipText(storedText(e)).then((gz) => env.LOGS_BUCKET.put(bodyKey(e.organizationId, e.logId, e.createdAt), gz, { httpMetadata: JSON_GZ, customMetadata: { requestId: e.requestId, projectId: e.projectId } })) }));
  }
  // Each object's JSON text joined from its requests' texts: `{"bodies":{"<logId>":<StoredBodies>,...}}`.
  const objects = new Map<string, { bodies: BodyEntry[]; texts: string[] }>();
  for (const e of m.bodies) {
    const key = groupKey(e.organizationId, e.createdAt, m.batch, m.part);
    const held = objects.get(key) ?? { bodies: [], texts: [] };
    held.bodies.push(e);
    held.texts.push(`${JSON.stringify(e.logId)}:${storedText(e)}`);
    objects.set(key, held);
  }
  return [...objects].map(([key, { bodies, texts }]) => ({ bodies, put: gzipText(`{"bodies":{${texts.join(",")}}}`).then((gz) => env.LOGS_BUCKET.put(key, gz, { httpMetadata: JSON_GZ, customMetadata: { requests: String(texts.length) } })) }));
}

async function gunzipJson(obj: R2ObjectBody): Promise<unknown> {
  return JSON.parse(await new Response(obj.body.pipeThrough(new DecompressionStream("gzip"))).text()) as unknown;
}

/** Objects already read within one caller's work (a span export reads many requests of few groups). */
export type BodyReads = Map<string, Promise<unknown>>;

const once = (reads: BodyReads | undefined, key: string, read: () => Promise<unknown>): Promise<unknown> => {
  if (!reads) return read();
  let p = reads.get(key);
  if (!p) {
    p = read();
    reads.set(key, p);
  }
  return p;
};

/**
 * Whether a request's bodies can be read: `stored`; `pending` (on their way: the group's send or
 * the consumer has not finished); `dropped` (the queue refused the send of its part, the consumer
 * failed its object on the last delivery, or nothing came within BODIES_SETTLED_MS, past every
 * retry of the send and of the consumer). Per request: a group's other parts may be stored.
 */
export type BodiesStatus = "stored" | "pending" | "dropped";

/** Longer than the group's send, the consumer's retries (10 x 30 s) and a long backlog: bodies not stored by then never will be. */
export const BODIES_SETTLED_MS = 24 * 3_600_000;

/** Requests (of one queue message or object) whose bodies are lost. */
export interface DropMark {
  bodies: ReadonlyArray<{ logId: string; organizationId: string }>;
}

/**
 * Marks requests' bodies as dropped, per request (D1 `dropped_bodies`): the parts and objects of
 * one group are stored or lost separately, and a record names its group, not its part. The
 * Requests page's kept-bodies filter (src/usage/request-list.ts) and `bodiesStatus` read it.
 */
export const markDropped = (env: Env, marks: readonly DropMark[], now = Date.now()): Promise<void> =>
  insertRows(env, "dropped_bodies (organization_id, log_id, created_at)", marks.flatMap((m) => m.bodies.map((b) => [b.organizationId, b.logId, now])));

/**
 * SQL: the request `id` of organization ?1, whose bodies left with group `batch`, has them marked
 * dropped: by request, or by a group mark from before marks were per request.
 */
export const droppedSql = (id: string, batch: string): string =>
  `(EXISTS (SELECT 1 FROM dropped_bodies d WHERE d.organization_id = ?1 AND d.log_id = ${id})
    OR EXISTS (SELECT 1 FROM dropped_body_groups g WHERE g.organization_id = ?1 AND g.batch = ${batch}))`;

/** Ids bound per D1 statement (as one JSON value: D1 caps a bound value at 2 MB). */
const D1_IDS = 5_000;
const chunks = <T>(items: readonly T[], n: number): T[][] => Array.from({ length: Math.ceil(items.length / n) }, (_, i) => items.slice(i * n, (i + 1) * n));

/**
 * `INSERT OR IGNORE INTO {table (columns)}` of `rows` (arrays in the columns' order), D1_IDS rows
 * per statement, each bound as one JSON value (never a bind list that grows).
 */
async function insertRows(env: Env, into: string, rows: ReadonlyArray<ReadonlyArray<string | number>>): Promise<void> {
  const width = rows[0]?.length ?? 0;
  const values = Array.from({ length: width }, (_, i) => `json_extract(value, '$[${i}]')`).join(", ");
  const insert = `INSERT OR IGNORE INTO ${into} SELECT ${values} FROM json_each(?1)`;
  await Promise.all(chunks(rows, D1_IDS).map((part) => env.DB.prepare(insert).bind(JSON.stringify(part)).run()));
}

/**
 * Requests whose objects the consumer could not store on their message's last delivery: it will
 * not come again (the dead-letter queue is not read back), so they are marked dropped now, as
 * requests the queue refused, rather than reading as pending for BODIES_SETTLED_MS. Messages from
 * before groups have no group to mark. Never throws: storeBodies rethrows the store's failure.
 */
async function markLastDeliveriesDropped(env: Env, lost: readonly DropMark[]): Promise<void> {
  if (lost.length === 0) return;
  console.error(`request bodies of ${lost.reduce((n, m) => n + m.bodies.length, 0)} requests not stored on their last delivery; dropped`);
  await markDropped(env, lost).catch((e: unknown) => {
    console.error("request bodies: the dropped mark was not written either", e instanceof Error ? e.message : String(e));
  });
}

/**
 * Of `records` (one organization's, with the group their bodies left with), the ids of those whose
 * bodies are marked dropped: by request, or by a group mark from before marks were per request.
 */
export async function droppedBodies(env: Env, organizationId: string, records: ReadonlyArray<{ id: string; batch: string }>): Promise<Set<string>> {
  const out = new Set<string>();
  if (records.length === 0) return out;
  const sql = `SELECT json_extract(j.value, '$[0]') AS id FROM json_each(?2) j WHERE ${droppedSql("json_extract(j.value, '$[0]')", "json_extract(j.value, '$[1]')")}`;
  const stmts = chunks(records.map((r) => [r.id, r.batch]), D1_IDS).map((rows) => env.DB.prepare(sql).bind(organizationId, JSON.stringify(rows)));
  for (const res of await env.DB.batch<{ id: string }>(stmts)) for (const r of res.results) out.add(r.id);
  return out;
}

/** Drop marks and notes of stored objects older than the records' retention (their records are gone), group marks from before included. */
export async function deleteExpiredDropMarks(env: Env, now: number, retentionDays: number): Promise<void> {
  const before = now - (retentionDays + 1) * DAY_MS;
  await env.DB.batch([
    env.DB.prepare("DELETE FROM dropped_bodies WHERE created_at < ?1").bind(before),
    env.DB.prepare("DELETE FROM dropped_body_groups WHERE created_at < ?1").bind(before),
    env.DB.prepare("DELETE FROM stored_body_parts WHERE hour_start < ?1").bind(before),
  ]);
}

/** SQL expressions of a request's id, group (`extra.bodyBatch`), place in it (`extra.bodyIndex`) and start. */
export interface KeptColumns {
  id: string;
  batch: string;
  index: string;
  createdAt: string;
}

/**
 * SQL: a request of organization ?1 whose record says its bodies were kept (`extra.bodies`) has
 * them, or will: `settledFrom` is the SQL value of now - BODIES_SETTLED_MS. What
 * `readBodiesStatus` says from R2, said from D1: an object holding them was stored (that wins
 * over a drop mark: a send can throw although the queue took it); or not yet, and none is marked
 * dropped and the request is within BODIES_SETTLED_MS (pending). A record from before places
 * (no `bodyIndex`) has no note to find: kept unless marked.
 */
export const keptSql = (r: KeptColumns, settledFrom: string): string =>
  `(((${r.index} IS NULL OR ${r.createdAt} >= ${settledFrom}) AND NOT ${droppedSql(r.id, r.batch)})
    OR EXISTS (SELECT 1 FROM stored_body_parts s WHERE s.hour_start = ${r.createdAt} - (${r.createdAt} % ${HOUR_MS}) AND s.organization_id = ?1
      AND s.batch = ${r.batch} AND s.first_index <= ${r.index} AND s.last_index >= ${r.index}))`;

/** Of `records` (one organization's, whose bodies were kept), the ids of those that have them or will (`keptSql`). */
export async function keptBodies(env: Env, organizationId: string, records: ReadonlyArray<{ id: string; batch: string | null; index: number | null; createdAt: number }>, now = Date.now()): Promise<Set<string>> {
  const out = new Set<string>();
  if (records.length === 0) return out;
  const col = (i: number) => `json_extract(j.value, '$[${i}]')`;
  const sql = `SELECT ${col(0)} AS id FROM json_each(?2) j WHERE ${keptSql({ id: col(0), batch: col(1), index: col(2), createdAt: col(3) }, "?3")}`;
  const stmts = chunks(records.map((r) => [r.id, r.batch, r.index, r.createdAt]), D1_IDS).map((rows) => env.DB.prepare(sql).bind(organizationId, JSON.stringify(rows), now - BODIES_SETTLED_MS));
  for (const res of await env.DB.batch<{ id: string }>(stmts)) for (const r of res.results) out.add(r.id);
  return out;
}

type RecordRef = { organizationId: string; id: string; createdAt: number; extra?: Record<string, unknown> | null };

/**
 * A request's stored bodies and their status (status null: the request kept none). The record says
 * where: `extra.bodyBatch` names its group (its hour's objects of that group), a record from
 * before groups has an object of its own. `reads` shares objects
 * between the calls of one caller.
 */
export async function readBodiesStatus(env: Env, r: RecordRef, reads?: BodyReads, now = Date.now()): Promise<{ bodies: StoredBodies | null; status: BodiesStatus | null }> {
  const batch = r.extra?.bodyBatch;
  let dropped = false;
  if (typeof batch !== "string") {
    const obj = await env.LOGS_BUCKET.get(bodyKey(r.organizationId, r.id, r.createdAt));
    if (obj) return { bodies: (await gunzipJson(obj)) as StoredBodies, status: "stored" };
  } else {
    const prefix = `${bodyHourPrefix(r.organizationId, r.createdAt)}${batch}.`;
    const keys = (await once(reads, `list:${prefix}`, async () => (await env.LOGS_BUCKET.list({ prefix })).objects.map((o) => o.key))) as string[];
    for (const key of keys) {
      if (key.endsWith(".dropped")) {
        // An empty `{group}.dropped`: a group's mark from before marks were per request (in D1).
        if (key === `${prefix}dropped`) dropped = true;
        continue;
      }
      const held = (await once(reads, key, async () => {
        const obj = await env.LOGS_BUCKET.get(key);
        return obj ? ((await gunzipJson(obj)) as { bodies?: Record<string, StoredBodies> }).bodies ?? {} : {};
      })) as Record<string, StoredBodies>;
      const found = held[r.id];
      if (found) return { bodies: found, status: "stored" };
    }
  }
  if (r.extra?.bodies !== true) return { bodies: null, status: null };
  // Past BODIES_SETTLED_MS bodies not stored read as dropped whether marked or not.
  if (!dropped && typeof batch === "string" && now - r.createdAt <= BODIES_SETTLED_MS) {
    dropped = (await droppedBodies(env, r.organizationId, [{ id: r.id, batch }])).has(r.id);
  }
  return { bodies: null, status: dropped || now - r.createdAt > BODIES_SETTLED_MS ? "dropped" : "pending" };
}

/** A request's stored bodies, or null when none were kept (or none are stored: readBodiesStatus says which). */
export async function readBodies(env: Env, r: RecordRef, reads?: BodyReads): Promise<StoredBodies | null> {
  return (await readBodiesStatus(env, r, reads)).bodies;
}

/** Every organization with stored bodies. */
async function bodyOrganizations(bucket: R2Bucket): Promise<string[]> {
  const orgs: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: "bodies/", delimiter: "/", cursor });
    for (const p of page.delimitedPrefixes) orgs.push(p.slice("bodies/".length, -1));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return orgs;
}

/** Retention: the bodies of days older than the records' retention (`retentionDays`), looking back `lookbackDays`. */
export async function deleteExpiredBodies(env: Env, now: number, retentionDays: number, lookbackDays: number): Promise<number> {
  const bucket = env.LOGS_BUCKET;
  const orgs = await bodyOrganizations(bucket);
  let deleted = 0;
  const oldest = now - (retentionDays + lookbackDays) * DAY_MS;
  for (let day = now - (retentionDays + 1) * DAY_MS; day >= oldest; day -= DAY_MS) {
    for (const org of orgs) {
      let c: string | undefined;
      do {
        const page = await bucket.list({ prefix: bodyDayPrefix(org, day), cursor: c });
        if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
        deleted += page.objects.length;
        c = page.truncated ? page.cursor : undefined;
      } while (c);
    }
  }
  return deleted;
}
