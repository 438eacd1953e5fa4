/**
 * Request records through the LOGS queue (docs/scale.md): the consumer writes each record once to
 * R2 and adds it once to the hourly aggregates, under load, a failure halfway and redelivery; the
 * producer keeps records while the queue is unavailable; the export returns what was sent.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows as rows, waitForApplied } from "../helpers/logs";
import { applyLogRecords, consumeLogBatch, type IncomingRecord } from "../../src/usage/log-consumer";
import { readNdjsonGz, type LogRecord } from "../../src/usage/log-record";
import { HOUR_MS, hourRecords } from "../../src/usage/aggregate";
import { sendLogRow } from "../../src/usage/log-queue";
import { KeyState, keyStateStub } from "../../src/durable-objects/key-state";
import type { Env } from "../../src/env";

const T0 = Date.UTC(2026, 2, 2, 0, 0, 0);
/** Every record of the organization in R2, counting copies (no deduplication). */
async function allObjects(orgId: string): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.LOGS_BUCKET.list({ prefix: `logs/${orgId}/`, cursor });
    for (const o of page.objects) out.push(...(await readNdjsonGz((await env.LOGS_BUCKET.get(o.key))!.body)));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

/** A MessageBatch as the queue hands it to queue(), recording acks and retries. */
function fakeBatch(records: readonly IncomingRecord[]) {
  const acked: string[] = [];
  const messages = records.map((r, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    attempts: 1,
    body: { row: r.row, debit: r.debit },
    ack: () => acked.push(`m${i}`),
    retry: () => undefined,
  }));
  const batch = { queue: "switchboard-logs", messages, ackAll: () => messages.forEach((m) => m.ack()), retryAll: () => undefined } as unknown as MessageBatch<unknown>;
  return { batch, acked };
}

/** An Env whose R2 bucket or D1 fails on the n-th call of a method. */
function failingEnv(opts: { putFailsAt?: number; batchFails?: boolean }): Env {
  let puts = 0;
  const bucket = new Proxy(env.LOGS_BUCKET, {
    get(target, prop) {
      if (prop === "put") {
        return (...args: Parameters<R2Bucket["put"]>) => {
          puts++;
          if (opts.putFailsAt !== undefined && puts >= opts.putFailsAt) return Promise.reject(new Error("R2 down"));
          return target.put(...args);
        };
      }
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch" && opts.batchFails) return () => Promise.reject(new Error("D1 down"));
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return Object.create(env, { LOGS_BUCKET: { value: bucket }, DB: { value: db } }) as Env;
}

const ids = (list: readonly LogRecord[]) => list.map((r) => r.id).sort();

describe("10,000 records through the consumer", () => {
  it("every record is once in R2 and the aggregates equal a direct sum", async () => {
    const org = await seedOrg();
    const keys = [org.keyId, "key_b", "key_c", "key_d"];
    // Four hours of traffic, delivered in queue batches of 100 (the consumer's max_batch_size).
    const sent = rows(org, keys, 10_000, T0, 4 * HOUR_MS).map((r) => incoming(r));
    for (let i = 0; i < sent.length; i += 100) {
      const { batch, acked } = fakeBatch(sent.slice(i, i + 100));
      await consumeLogBatch(batch, env);
      expect(acked).toHaveLength(Math.min(100, sent.length - i));
    }
    const stored = await allObjects(org.orgId);
    expect(stored).toHaveLength(10_000);
    expect(ids(stored)).toEqual(ids(sent.map((r) => r.record)));
    expect(stored).toEqual(expect.arrayContaining([sent[1234]!.record]));
    expect(await aggregates(org.projectId)).toEqual(directSum(sent.map((r) => r.record)));
    // The window and last use came with them.
    const window = await env.DB.prepare("SELECT COUNT(*) AS n FROM request_logs WHERE organization_id = ?").bind(org.orgId).first<{ n: number }>();
    expect(window!.n).toBe(0); // T0 is older than the 30-day window: R2 only
  }, 120_000);

  it("records sent through the real queue reach R2, the aggregates, the window and the key's last use", async () => {
    const org = await seedOrg();
    const now = Date.now();
    const list = rows(org, [org.keyId], 300, now - 10 * 60_000, 5 * 60_000);
    await Promise.all(list.map((r) => sendLogRow(env, { row: incoming(r).row, logId: r.id!, keyId: r.apiKeyId, organizationId: r.organizationId })));
    await waitForApplied(list.map((r) => r.id!), 15_000);
    const records = list.map((r) => incoming(r).record);
    expect(ids(await allObjects(org.orgId))).toEqual(ids(records));
    expect(await aggregates(org.projectId)).toEqual(directSum(records));
    const window = await env.DB.prepare("SELECT COUNT(*) AS n FROM request_logs WHERE organization_id = ?").bind(org.orgId).first<{ n: number }>();
    expect(window!.n).toBe(300);
    const last = await env.DB.prepare("SELECT last_used_at AS t FROM key_last_use WHERE api_key_id = ?").bind(org.keyId).first<{ t: number }>();
    expect(last!.t).toBe(Math.max(...records.map((r) => r.createdAt)));
  }, 60_000);
});

describe("at least once delivery", () => {
  let org: SeededOrg;
  const HOUR = T0 + 24 * HOUR_MS;

  it("a consumer that throws halfway (R2 after the first object, or D1) applies nothing twice when the batch comes again", async () => {
    org = await seedOrg({ creditsUsd: 10 });
    const before = await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(org.orgId).first<{ c: string }>();
    // Two hours in one batch: two objects; each record debits 5 pico of credits.
    const sent = rows(org, [org.keyId], 100, HOUR, 2 * HOUR_MS).map((r) => incoming(r, "5"));
    const first = fakeBatch(sent);
    await expect(consumeLogBatch(first.batch, failingEnv({ putFailsAt: 2 }))).rejects.toThrow(/R2 down/);
    expect(first.acked).toEqual([]); // not acked: the queue redelivers it
    const second = fakeBatch(sent);
    await expect(consumeLogBatch(second.batch, failingEnv({ batchFails: true }))).rejects.toThrow(/D1 down/);
    expect(await aggregates(org.projectId)).toEqual([]);
    // The redelivery that succeeds, then the same batch delivered once more.
    for (let i = 0; i < 2; i++) {
      const again = fakeBatch(sent);
      await consumeLogBatch(again.batch, env);
      expect(again.acked).toHaveLength(100);
    }
    const stored = await allObjects(org.orgId);
    expect(stored).toHaveLength(100); // the same records rewrote the same objects
    expect(ids(stored)).toEqual(ids(sent.map((r) => r.record)));
    expect(await aggregates(org.projectId)).toEqual(directSum(sent.map((r) => r.record)));
    const after = await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(org.orgId).first<{ c: string }>();
    expect(BigInt(before!.c) - BigInt(after!.c)).toBe(500n); // debited once per record
  });

  it("a retry that groups records differently may leave a second copy in R2; reads skip it and the aggregates stay exact", async () => {
    const org2 = await seedOrg();
    const sent = rows(org2, [org2.keyId], 20, HOUR, 30 * 60_000).map((r) => incoming(r));
    // First attempt: R2 written, D1 failed. The retry comes with other records in the batch.
    await expect(applyLogRecords(failingEnv({ batchFails: true }), sent.slice(0, 10))).rejects.toThrow(/D1 down/);
    await applyLogRecords(env, sent.slice(5));
    await applyLogRecords(env, sent.slice(0, 10));
    const stored = await allObjects(org2.orgId);
    expect(stored.length).toBeGreaterThan(20); // copies of records 0..4
    const read = await hourRecords(env.LOGS_BUCKET, org2.orgId, HOUR);
    expect(ids(read)).toEqual(ids(sent.map((r) => r.record)));
    expect(await aggregates(org2.projectId)).toEqual(directSum(sent.map((r) => r.record)));
  });
});

describe("producer with the queue unavailable", () => {
  it("the key's outbox keeps its records while sends fail and sends them later, none lost", async () => {
    const org = await seedOrg();
    const stub = keyStateStub(env, org.keyId);
    const down = Object.create(env, { LOGS: { value: { send: () => Promise.reject(new Error("queue down")), sendBatch: () => Promise.reject(new Error("queue down")) } } }) as Env;
    const setEnv = (e: Env) => runInDurableObject(stub, (instance: KeyState) => void ((instance as unknown as { env: Env }).env = e));
    const now = Date.now();
    const list = rows(org, [org.keyId], 30, now - 60_000, 30_000);
    await setEnv(down);
    // Direct records fall back to the outbox too.
    await sendLogRow(down, { row: incoming(list[0]!).row, logId: list[0]!.id!, keyId: org.keyId, organizationId: org.orgId });
    await stub.settleMany(list.slice(1).map((r) => ({ reservationId: null, actual: 0n, outbox: { row: incoming(r).row, logId: r.id!, organizationId: org.orgId, creditsPico: 0n } })));
    for (let i = 0; i < 3; i++) await runDurableObjectAlarm(stub);
    expect(await stub.outboxSize()).toBe(30);
    await setEnv(env);
    for (let i = 0; i < 100 && (await stub.outboxSize()) > 0; i++) {
      await runDurableObjectAlarm(stub);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await stub.outboxSize()).toBe(0);
    await waitForApplied(list.map((r) => r.id!));
    expect(ids(await allObjects(org.orgId))).toEqual(ids(list.map((r) => incoming(r).record)));
  });
});
