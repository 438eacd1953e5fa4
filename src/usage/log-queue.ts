/**
 * The producer side of the LOGS queue. Every request record goes this way: KeyState outboxes send
 * the settled rows they hold (with the credit debit that rides with them), and paths without a
 * settlement of their own (moderations, generation logs, requests refused after authentication)
 * send theirs directly, falling back to the key's outbox when the queue refuses: no record is
 * dropped on the producer side. The consumer is src/usage/log-consumer.ts.
 */
import type { Env } from "../env";
import { keyStateStub } from "../durable-objects/key-state";
import { fieldIndex } from "./log-record";

/** One queue message: a serialized `request_logs` row and the credits (pico) to debit with it. */
export interface LogMessage {
  row: string;
  /** Credit-paid cost the consumer debits from the organization, once ("0": none, debited elsewhere). */
  debit: string;
}

/** Queues limits: 100 messages and 256 KB per sendBatch, 128 KB per message (we keep margins). */
const SEND_MESSAGES = 100;
const SEND_BYTES = 200_000;
const MESSAGE_BYTES = 100_000;

/** A row too large for one message loses its `extra` and routing details (marked `truncated`). */
function fit(row: string): string {
  if (row.length <= MESSAGE_BYTES) return row;
  const values = JSON.parse(row) as unknown[];
  values[fieldIndex("extra")] = JSON.stringify({ truncated: true });
  values[fieldIndex("routing")] = "[]";
  values[fieldIndex("errorMessage")] = typeof values[fieldIndex("errorMessage")] === "string" ? (values[fieldIndex("errorMessage")] as string).slice(0, 1000) : null;
  return JSON.stringify(values);
}

/** Sends messages in as few `sendBatch` calls as the limits allow; rejects if any call fails. */
export async function sendLogMessages(env: Env, messages: readonly LogMessage[]): Promise<void> {
  let batch: Array<{ body: LogMessage }> = [];
  let bytes = 0;
  const sends: Array<Promise<unknown>> = [];
  for (const m of messages) {
    const body = { row: fit(m.row), debit: m.debit };
    const size = body.row.length + 64;
    if (batch.length === SEND_MESSAGES || (batch.length > 0 && bytes + size > SEND_BYTES)) {
      sends.push(env.LOGS.sendBatch(batch));
      batch = [];
      bytes = 0;
    }
    batch.push({ body });
    bytes += size;
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
