/**
 * The producer side of the LOGS queue. Every request record goes this way: KeyState outboxes send
 * the settled rows they hold (with the credit debit that rides with them), and paths without a
 * settlement of their own (moderations, generation logs, requests refused after authentication)
 * send theirs directly, falling back to the key's outbox when the queue refuses: no record is
 * dropped on the producer side. The consumer is src/usage/log-consumer.ts.
 */
import type { Env } from "../env";
import { keyStateStub } from "../durable-objects/key-state-stub";
import { fieldIndex } from "./log-record";
import { requestLogJson, type RequestLogInput } from "./request-log";

/** One record as it rides the queue: a serialized `request_logs` row and the credits (pico) to debit with it. */
export interface LogEntry {
  row: string;
  /** Credit-paid cost the consumer debits from the organization, once ("0": none, debited elsewhere). */
  debit: string;
}

/**
 * One queue message: several records (as many as fit in MESSAGE_BYTES), so a queue's 5,000
 * messages per second carry far more records. Messages sent before this shape were one bare
 * `LogEntry` each; the consumer reads both.
 */
export interface LogMessage {
  records: LogEntry[];
}

/** Queues limits: 100 messages and 256 KB per sendBatch, 128 KB per message (we keep margins). */
const SEND_MESSAGES = 100;
const SEND_BYTES = 200_000;
const MESSAGE_BYTES = 100_000;
/** JSON around one record in a message (`{"row":,"debit":"..."},`), bytes. */
const ENTRY_OVERHEAD = 64;

const encoder = new TextEncoder();
const NON_ASCII = /[^\u0000-\u007f]/;
/**
 * UTF-8 bytes of a row as it travels in a message (a JSON string: its quotes escaped). Most rows
 * are ASCII, where the length is the byte count: only the others are encoded to be measured.
 */
const bytesOf = (s: string): number => {
  const json = JSON.stringify(s);
  return (NON_ASCII.test(json) ? encoder.encode(json).length : json.length) + ENTRY_OVERHEAD;
};

/** A row too large for one message loses its `extra` and routing details (marked `truncated`). */
function fit(row: string, bytes: number): string {
  if (bytes <= MESSAGE_BYTES) return row;
  const values = JSON.parse(row) as unknown[];
  values[fieldIndex("extra")] = JSON.stringify({ truncated: true });
  values[fieldIndex("routing")] = "[]";
  values[fieldIndex("errorMessage")] = typeof values[fieldIndex("errorMessage")] === "string" ? (values[fieldIndex("errorMessage")] as string).slice(0, 1000) : null;
  return JSON.stringify(values);
}

/** Records packed into messages of at most MESSAGE_BYTES, in order. */
export function packMessages(entries: readonly LogEntry[]): Array<{ body: LogMessage; bytes: number }> {
  const out: Array<{ body: LogMessage; bytes: number }> = [];
  let current: { body: LogMessage; bytes: number } | null = null;
  for (const e of entries) {
    // A row's size is measured once; only a row cut down to fit is measured again.
    const bytes = bytesOf(e.row);
    const row = fit(e.row, bytes);
    const entry = { row, debit: e.debit };
    const size = row === e.row ? bytes : bytesOf(row);
    if (!current || current.bytes + size > MESSAGE_BYTES) {
      current = { body: { records: [] }, bytes: 16 };
      out.push(current);
    }
    current.body.records.push(entry);
    current.bytes += size;
  }
  return out;
}

/** Sends records packed into messages, in as few `sendBatch` calls as the limits allow; rejects if any call fails. */
export async function sendLogMessages(env: Env, entries: readonly LogEntry[]): Promise<void> {
  let batch: Array<{ body: LogMessage }> = [];
  let bytes = 0;
  const sends: Array<Promise<unknown>> = [];
  for (const m of packMessages(entries)) {
    if (batch.length === SEND_MESSAGES || (batch.length > 0 && bytes + m.bytes > SEND_BYTES)) {
      sends.push(env.LOGS.sendBatch(batch));
      batch = [];
      bytes = 0;
    }
    batch.push({ body: m.body });
    bytes += m.bytes;
  }
  if (batch.length) sends.push(env.LOGS.sendBatch(batch));
  const results = await Promise.allSettled(sends);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** A serialized row with what the fallback needs. */
export interface LogRowToSend {
  row: string;
  logId: string;
  keyId: string;
  organizationId: string;
}

/**
 * A record without a settlement (no debit): straight to the queue; if the queue refuses, into the
 * key's outbox, which sends it later. Rejects only when both fail.
 */
export async function sendLogRow(env: Env, r: LogRowToSend): Promise<void> {
  try {
    await sendLogMessages(env, [{ row: r.row, debit: "0" }]);
  } catch (err) {
    console.error("log queue send failed; record kept in the key's outbox", err instanceof Error ? err.message : String(err));
    await keyStateStub(env, r.keyId).settleMany([{ reservationId: null, actual: 0n, outbox: { row: r.row, logId: r.logId, organizationId: r.organizationId, creditsPico: 0n } }]);
  }
}

/**
 * Sends the record to the LOGS queue (the key's outbox keeps it if the queue
 * refuses); never throws (a lost log must not fail anything else in waitUntil).
 */
export async function writeRequestLog(env: Env, input: RequestLogInput): Promise<void> {
  try {
    await sendLogRow(env, { row: requestLogJson(input), logId: input.logId, keyId: input.auth.key.id, organizationId: input.auth.organization.id });
  } catch (err) {
    console.error("request log write failed", err instanceof Error ? err.message : String(err));
  }
}
