/**
 * Queue messages of several records (docs/scale.md): packing on the producer side, both message
 * shapes and malformed records on the consumer side, the organization's pending debits cleared
 * by the record's hour and id, and records older than the dedup horizon.
 */
import { env, env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { aggregates, directSum, incoming, sampleRows, waitForApplied } from "../helpers/logs";
import { applyLogRecords, consumeLogBatch } from "../../src/usage/log-consumer";
import { trimWindow } from "../../src/usage/retention";
import { packMessages, sendLogMessages } from "../../src/usage/log-queue";
import { HOUR_MS, hourStartOf } from "../../src/usage/aggregate";
import { orgCreditsStub } from "../../src/durable-objects/org-credits";
import type { Env } from "../../src/env";

/** A MessageBatch of these bodies, recording acks. */
function batchOf(bodies: readonly unknown[]) {
  const acked = new Set<string>();
  const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body, ack: () => acked.add(`m${i}`), retry: () => undefined }));
  const batch = { queue: "switchboard-logs", messages, ackAll: () => messages.forEach((m) => m.ack()), retryAll: () => undefined } as unknown as MessageBatch<unknown>;
  return { batch, acked };
}

const recent = () => hourStartOf(Date.now() - 20 * 60_000);

describe("several records per message", () => {
  it("packs records into messages under 128 KB, in order, none lost", () => {
    const org = { orgId: "org_pack", projectId: "proj_pack" };
    const list = sampleRows(org, ["key_pack"], 600, recent(), 60_000).map((r, i) => incoming({ ...r, errorMessage: "é".repeat(i % 900) }, String(i)));
    const messages = packMessages(list.map((r) => ({ row: r.row, debit: r.debit })));
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.length).toBeLessThan(list.length / 20);
    for (const m of messages) expect(new TextEncoder().encode(JSON.stringify(m.body)).length).toBeLessThanOrEqual(128_000);
    expect(messages.flatMap((m) => m.body.records)).toEqual(list.map((r) => ({ row: r.row, debit: r.debit })));
  });

  it("the consumer applies new messages, old single-record messages and drops only the malformed records", async () => {
    const org = await seedOrg();
    const list = sampleRows(org, [org.keyId], 7, recent(), 60_000).map((r) => incoming(r));
    const entry = (i: number) => ({ row: list[i]!.row, debit: list[i]!.debit });
    const { batch, acked } = batchOf([
      { records: [entry(0), entry(1), { row: "[1,2", debit: "0" }, { row: list[2]!.row }, entry(2)] },
      entry(3), // a message sent before messages held several records
      "junk",
      { records: [entry(4), entry(5), entry(6), entry(0)] }, // record 0 again: counted once
    ]);
    await consumeLogBatch(batch, env);
    expect(acked.size).toBe(4);
    expect(await aggregates(org.projectId)).toEqual(directSum(list.map((r) => r.record)));
  });

  it("records sent through the real queue in packed messages all arrive", async () => {
    const org = await seedOrg();
    const list = sampleRows(org, [org.keyId], 250, recent(), 60_000).map((r) => incoming(r));
    await sendLogMessages(env, list.map((r) => ({ row: r.row, debit: r.debit })));
    await waitForApplied(list.map((r) => r.record.id), 15_000);
    expect(await aggregates(org.projectId)).toEqual(directSum(list.map((r) => r.record)));
  });
});

describe("pending debits", () => {
  it("the organization's object holds a debit as pending until the consumer applied its record (by hour and id)", async () => {
    const org = await seedOrg({ creditsUsd: 1 });
    const credits = orgCreditsStub(env, org.orgId);
    const [row] = sampleRows(org, [org.keyId], 1, recent(), 1);
    const record = incoming(row!, "7000000");
    await credits.settleMany(org.orgId, [{ reservationId: null, credits: 7_000_000n, log: { id: record.record.id, hour: record.hour } }]);
    await credits.refresh(org.orgId);
    expect((await credits.view(org.orgId)).pending).toBe(7_000_000n);
    const before = (await credits.view(org.orgId)).balance!;
    await consumeLogBatch(batchOf([{ records: [{ row: record.row, debit: record.debit }] }]).batch, env);
    await credits.refresh(org.orgId);
    const after = await credits.view(org.orgId);
    expect(after.pending).toBe(0n);
    expect(before - after.balance!).toBe(7_000_000n);
  });
});

describe("records older than the dedup horizon", () => {
  it.each([
    ["the window on: the applied copies' rows are still there, they are known applied", "720", 10],
    ["the window off: the applied copies are not known, the rebuild counts them once", "0", 60],
  ])("a late replay rebuilds its hour from R2: aggregates exact, never-applied debits applied once, a redelivery changes nothing (%s)", async (_what, window, fresh) => {
    const env = Object.create(baseEnv, { REQUEST_LOG_WINDOW_HOURS: { value: window } }) as Env;
    const org = await seedOrg({ creditsUsd: 1 });
    const now = Date.now();
    const L = hourStartOf(now) - 30 * HOUR_MS; // before LOG_DEDUP_HOURS (24), within R2's 30 days
    const list = sampleRows(org, [org.keyId, "key_late_b"], 60, L, 50 * 60_000).map((r, i) => incoming(r, i >= 50 ? "1000" : "0"));
    const balance = async () => BigInt((await env.DB.prepare("SELECT CAST(credits_pico AS TEXT) AS c FROM organizations WHERE id = ?").bind(org.orgId).first<{ c: string }>())!.c);
    // Applied in time, then their ids forgotten by the retention cron.
    await applyLogRecords(env, list.slice(0, 50), L + 55 * 60_000);
    expect((await trimWindow(env, now)).forgotten).toBeGreaterThanOrEqual(50);
    const before = await balance();
    // A dead-letter queue replayed a day later: the same 50 records and 10 that never got through.
    expect(await applyLogRecords(env, list, now)).toBe(fresh);
    const expected = directSum(list.map((r) => r.record));
    expect(await aggregates(org.projectId)).toEqual(expected);
    expect(before - (await balance())).toBe(10_000n);
    // The late batch delivered again: skipped (its ids are kept under the hour it arrived in).
    expect(await applyLogRecords(env, list, now + 60_000)).toBe(0);
    expect(await aggregates(org.projectId)).toEqual(expected);
    expect(before - (await balance())).toBe(10_000n);
  });
});
