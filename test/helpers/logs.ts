/**
 * Request records in tests: built like the gateway builds them and applied through the LOGS
 * consumer's own code (R2 object, aggregates, window, last use), or awaited after the queue.
 */
import { env } from "cloudflare:workers";
import type { requestLogs } from "../../src/db/schema";
import { logRowJson } from "../../src/usage/request-log";
import { applyLogRecords, incomingOf, type IncomingRecord } from "../../src/usage/log-consumer";

export type LogRowInsert = typeof requestLogs.$inferInsert;

/** Columns the gateway always sets (src/usage/request-log.ts `toLogRow`), for rows written by hand. */
const DEFAULTS: Partial<LogRowInsert> = {
  kind: "chat", sourceApp: "unknown", streamed: false, cached: false, clientAborted: false, promptTokens: 0, completionTokens: 0,
  reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0, costPico: 0, creditsCostPico: 0, byokCostPico: 0, dataStorageCostPico: 0,
};

/** A row as the queue carries it (the consumer's input). */
export function incoming(row: LogRowInsert, debit = "0"): IncomingRecord {
  const full = { ...DEFAULTS, ...row };
  for (const [k, v] of Object.entries(DEFAULTS)) if ((full as Record<string, unknown>)[k] === undefined) (full as Record<string, unknown>)[k] = v;
  const r = incomingOf({ row: logRowJson(full), debit });
  if (!r) throw new Error(`not a valid record: ${JSON.stringify(row)}`);
  return r;
}

/** Applies rows as one consumer batch. */
export async function applyRows(rows: LogRowInsert[], now = Date.now()): Promise<number> {
  return applyLogRecords(env, rows.map((r) => incoming(r)), now);
}

/** Waits until the consumer applied every id (the queue delivers within tens of ms in tests). */
export async function waitForApplied(ids: readonly string[], timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM log_applied WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).first<{ n: number }>();
    if (r && r.n === ids.length) return;
    if (Date.now() > deadline) throw new Error(`records not applied: ${r?.n ?? 0} of ${ids.length}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}
