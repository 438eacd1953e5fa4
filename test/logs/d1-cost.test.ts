/**
 * What a request costs D1 (docs/scale.md, "Capacity"): rows written (what D1 bills, each index
 * entry a row) and bytes the database grows by, per record, through the LOGS consumer at steady
 * state (the hour's aggregate rows and the keys' last-use rows exist), against the old path (each
 * record a `request_logs` row with its four indexes). The numbers are printed for the docs.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { incoming, sampleRows } from "../helpers/logs";
import { consumeLogBatch, type IncomingRecord } from "../../src/usage/log-consumer";
import { packMessages } from "../../src/usage/log-queue";
import { LOG_COLUMNS } from "../../src/usage/request-log";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import type { Env } from "../../src/env";

const N = 1_000;

interface Written {
  rows: number;
  /** Database size after the last write, bytes. */
  size: number;
}

/** An Env whose D1 adds up `rows_written` of every batch and keeps the last `size_after`. */
function metered(overrides: Record<string, string>): { env: Env; written: Written } {
  const written: Written = { rows: 0, size: 0 };
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements);
          for (const r of results) {
            written.rows += r.meta.rows_written ?? 0;
            written.size = Math.max(written.size, r.meta.size_after ?? 0);
          }
          return results;
        };
      }
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const props: PropertyDescriptorMap = { DB: { value: db } };
  for (const [k, v] of Object.entries(overrides)) props[k] = { value: v };
  return { env: Object.create(env, props) as Env, written };
}

const sizeNow = async (): Promise<number> => (await env.DB.prepare("SELECT 1").run()).meta.size_after ?? 0;

/** Records as the queue delivers them: packed into messages (several per message), one consumer batch per `perBatch` records. */
async function consume(e: Env, records: readonly IncomingRecord[], perBatch: number): Promise<void> {
  for (let i = 0; i < records.length; i += perBatch) {
    const messages = packMessages(records.slice(i, i + perBatch).map((r) => ({ row: r.row, debit: r.debit }))).map((m, j) => ({
      id: `m${i}-${j}`,
      timestamp: new Date(),
      attempts: 1,
      body: m.body,
      ack: () => undefined,
      retry: () => undefined,
    }));
    await consumeLogBatch({ queue: "switchboard-logs", messages, ackAll: () => undefined, retryAll: () => undefined } as unknown as MessageBatch<unknown>, e);
  }
}

/** The old path: the outbox inserted its rows into `request_logs` (100 per statement), nothing else counted. */
async function insertOldWay(records: readonly IncomingRecord[]): Promise<Written> {
  const sql = `INSERT INTO request_logs (${LOG_COLUMNS.join(", ")}) SELECT ${LOG_COLUMNS.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ")} FROM json_each(?1)`;
  const written: Written = { rows: 0, size: 0 };
  for (let i = 0; i < records.length; i += 100) {
    const res = await env.DB.prepare(sql).bind(`[${records.slice(i, i + 100).map((r) => r.row).join(",")}]`).run();
    written.rows += res.meta.rows_written ?? 0;
    written.size = res.meta.size_after ?? 0;
  }
  return written;
}

/** Realistic records of the current hour: ten keys, a routing attempt each, some with a credit debit. */
async function recordsOfThisHour(n: number) {
  const org = await seedOrg({ creditsUsd: 1000 });
  const keys = [org.keyId, ...Array.from({ length: 9 }, (_, i) => `key_cost_${i}`)];
  const start = hourStartOf(Date.now() - 20 * 60_000);
  return sampleRows(org, keys, n, start, Math.min(HOUR_MS - 1, Date.now() - start - 1000)).map((r, i) =>
    incoming(
      {
        ...r,
        routing: [{ provider: r.usedProvider ?? "openai", model: r.requestedModel!, status_code: r.statusCode!, succeeded: r.statusCode! < 400, credentialSource: "credits", latency_ms: 420 + (i % 300) }],
      },
      String(r.creditsCostPico ?? 0),
    ),
  );
}

describe("D1 written per request", () => {
  it("the consumer writes at least 10x fewer bytes and 5x fewer rows per record than the old request_logs row", async () => {
    const records = await recordsOfThisHour(4 * N);
    const measure = async (overrides: Record<string, string>, batch: readonly IncomingRecord[], perBatch: number) => {
      const m = metered(overrides);
      const before = await sizeNow();
      await consume(m.env, batch, perBatch);
      return { rows: m.written.rows / batch.length, bytes: (m.written.size - before) / batch.length };
    };
    // Warm-up: the hour's aggregate rows and the keys' last use exist (steady state).
    await consume(metered({ REQUEST_LOG_WINDOW_HOURS: "0" }).env, records.slice(0, N), N);
    const off100 = await measure({ REQUEST_LOG_WINDOW_HOURS: "0" }, records.slice(N, 2 * N), 100);
    const off1000 = await measure({ REQUEST_LOG_WINDOW_HOURS: "0" }, records.slice(2 * N, 3 * N), N);
    const on = await measure({ REQUEST_LOG_WINDOW_HOURS: "720" }, records.slice(3 * N, 4 * N), N);
    // The old path last (nothing deleted before any measurement: no free pages to reuse), with
    // other records (the same shape), as the window's rows are there already.
    const oldRecords = await recordsOfThisHour(N);
    const oldBefore = await sizeNow();
    const old = await insertOldWay(oldRecords);
    const oldRows = old.rows / N;
    const oldBytes = (old.size - oldBefore) / N;
    const table = { old: { rows: oldRows, bytes: oldBytes }, windowOff_batch100: off100, windowOff_batch1000: off1000, windowOn_batch1000: on };
    console.log("D1 written per record", JSON.stringify(table));

    // Each old row is the table row, its primary-key index and four indexes; hundreds of bytes.
    expect(oldRows).toBeGreaterThanOrEqual(5);
    expect(oldBytes).toBeGreaterThan(400);
    // Window off, steady state: one applied-id row per record plus the aggregates' share.
    expect(off1000.rows).toBeLessThan(1.2);
    expect(off1000.bytes).toBeGreaterThan(20); // the growth is measured, not hidden by reused pages
    expect(oldRows / off1000.rows).toBeGreaterThanOrEqual(5);
    expect(oldBytes / Math.max(off1000.bytes, 1)).toBeGreaterThanOrEqual(10);
    expect(oldBytes / Math.max(off100.bytes, 1)).toBeGreaterThanOrEqual(10);
    // Window on: the window row comes on top (the old row's cost again).
    expect(on.rows).toBeGreaterThan(oldRows);
  }, 120_000);
});
