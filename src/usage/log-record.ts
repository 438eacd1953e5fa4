/**
 * A request record as it travels and is stored: the `request_logs` row serialized as a JSON array
 * in column order (`requestLogJson`, src/usage/request-log.ts) on the queue, and as one named JSON
 * object per line (NDJSON, gzip) in R2 and in exports. R2 object keys are partitioned by
 * organization and hour: `logs/{org}/{yyyy}/{mm}/{dd}/{hh}/{batch}.ndjson.gz`.
 */
import type { RoutingAttempt } from "../db/schema";
import { LOG_COLUMNS, LOG_FIELDS } from "./request-log";
import { csvCell } from "../lib/csv";

/** One request as exported (`GET /v1/master/logs`) and stored in R2. Money: integer pico-dollars. */
export interface LogRecord {
  id: string;
  /** The request's `x-request-id`. */
  requestId: string;
  organizationId: string;
  projectId: string;
  apiKeyId: string;
  kind: string;
  sourceApp: string;
  requestedModel: string;
  requestedProvider: string | null;
  usedModel: string | null;
  usedProvider: string | null;
  usedRegion: string | null;
  statusCode: number;
  errorType: string | null;
  errorMessage: string | null;
  finishReason: string | null;
  streamed: boolean;
  cached: boolean;
  clientAborted: boolean;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  costPico: number;
  creditsCostPico: number;
  byokCostPico: number;
  dataStorageCostPico: number;
  latencyMs: number | null;
  ttftMs: number | null;
  routing: RoutingAttempt[];
  extra: Record<string, unknown> | null;
  /** Request start, epoch ms. */
  createdAt: number;
  /** The app's end user of a session key (src/platform/); null for other keys. */
  endUserId?: string | null;
}

/**
 * A record as shown outside (exports, `GET /v1/master/logs/{requestId}`, the request page):
 * without `extra.bodyBatch` and `extra.bodyIndex`, the group its bodies were stored with and its
 * place there, internal details the readers of bodies find them by (src/usage/bodies.ts).
 */
export function publicRecord(r: LogRecord): LogRecord {
  if (!r.extra || !("bodyBatch" in r.extra || "bodyIndex" in r.extra)) return r;
  const { bodyBatch: _group, bodyIndex: _place, ...extra } = r.extra;
  return { ...r, extra };
}

/** Field names in row order (a function: request-log.ts and this module import each other). */
export const recordFields = (): ReadonlyArray<keyof LogRecord> => LOG_FIELDS as ReadonlyArray<keyof LogRecord>;

/** Index of a field in a serialized row. */
export const fieldIndex = (f: keyof LogRecord): number => recordFields().indexOf(f);

/**
 * A serialized row (JSON array of SQL values) as a named record. Written out by field, like the
 * row itself (request-log.ts `rowValues`): the consumer turns every record it takes into one, and
 * a store by a varying key per column builds a slow object. log-record.test.ts checks the order.
 */
export function recordFromRow(row: readonly unknown[]): LogRecord {
  const at = (i: number): unknown => row[i] ?? null;
  const flag = (i: number): boolean => row[i] === 1 || row[i] === true;
  const parsed = (i: number, absent: unknown): unknown => {
    const v = row[i] ?? absent;
    return typeof v === "string" ? (JSON.parse(v) as unknown) : v;
  };
  const record = {
    id: at(0), requestId: at(1), organizationId: at(2), projectId: at(3),
    apiKeyId: at(4), kind: at(5), sourceApp: at(6), requestedModel: at(7),
    requestedProvider: at(8), usedModel: at(9), usedProvider: at(10),
    usedRegion: at(11), statusCode: at(12), errorType: at(13), errorMessage: at(14),
    finishReason: at(15), streamed: flag(16), cached: flag(17), clientAborted: flag(18),
    promptTokens: at(19), completionTokens: at(20), reasoningTokens: at(21),
    cachedTokens: at(22), cacheWriteTokens: at(23), totalTokens: at(24),
    costPico: at(25), creditsCostPico: at(26), byokCostPico: at(27),
    dataStorageCostPico: at(28), latencyMs: at(29), ttftMs: at(30),
    routing: parsed(31, []), extra: parsed(32, null), createdAt: at(33), endUserId: at(34),
  } satisfies Record<keyof LogRecord, unknown>;
  return record as LogRecord;
}

/** A `request_logs` row read from D1 (snake_case columns, as `SELECT *` returns) as a record. */
export function recordFromDbRow(row: Record<string, unknown>): LogRecord {
  return recordFromRow(recordFields().map((_, i) => row[LOG_COLUMNS[i]!]));
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `logs/{org}/{yyyy}/{mm}/{dd}/{hh}/`: the prefix of an organization's objects of one hour. */
export function hourPrefix(orgId: string, hourStart: number): string {
  const d = new Date(hourStart);
  return `${dayPrefix(orgId, hourStart)}${pad(d.getUTCHours())}/`;
}

/** `logs/{org}/{yyyy}/{mm}/{dd}/` */
export function dayPrefix(orgId: string, t: number): string {
  const d = new Date(t);
  return `logs/${orgId}/${pad(d.getUTCFullYear(), 4)}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/`;
}

/** The hour (epoch ms) an object key belongs to, from its path; null for keys of another shape. */
export function hourOfKey(key: string): number | null {
  const m = /^logs\/[^/]+\/(\d{4})\/(\d{2})\/(\d{2})\/(\d{2})\//.exec(key);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4])) : null;
}

/** Records as one gzip-compressed NDJSON body. */
export async function gzipNdjson(records: readonly LogRecord[]): Promise<ArrayBuffer> {
  const text = records.map((r) => JSON.stringify(r)).join("\n") + "\n";
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}

/** The records of one stored object (gzip NDJSON). */
export async function readNdjsonGz(body: ReadableStream<Uint8Array>): Promise<LogRecord[]> {
  const text = await new Response(body.pipeThrough(new DecompressionStream("gzip"))).text();
  const out: LogRecord[] = [];
  for (const line of text.split("\n")) if (line.trim()) out.push(JSON.parse(line) as LogRecord);
  return out;
}

/** A short content hash: the batch id of an object, so rewriting the same records rewrites the same key. */
export async function batchIdOf(ids: readonly string[]): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode([...ids].sort().join("\n")));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** CSV: the record fields as columns; routing and extra as JSON text; formula-like cells neutralised. */
export const csvHeader = (): string => recordFields().join(",") + "\n";
export function csvLine(r: LogRecord): string {
  return (
    recordFields().map((f) => {
      const v = r[f];
      return csvCell(v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
    }).join(",") + "\n"
  );
}

/** Every organization with records (the first path segment under `logs/`). */
export async function organizationsInBucket(bucket: R2Bucket): Promise<string[]> {
  const orgs: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: "logs/", delimiter: "/", cursor });
    for (const p of page.delimitedPrefixes) orgs.push(p.slice("logs/".length, -1));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return orgs;
}
