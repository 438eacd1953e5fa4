import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { keySpend, organizations, requestLogs } from "../../src/db/schema";
import { KeyState, keyStateStub } from "../../src/durable-objects/key-state";
import { spendReportStatement } from "../../src/durable-objects/key-outbox";
import { admitKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { queueSettlement } from "../../src/billing/settle";
import { requestLogJson, type RequestLogInput } from "../../src/usage/request-log";
import { newId } from "../../src/lib/ids";
import { emptyUsage } from "../../src/providers/types";
import { waitForApplied } from "../helpers/logs";

const credits = async (orgId: string): Promise<bigint> => {
  const row = await getDb(env.DB)
    .select({ v: sql<string>`CAST(${organizations.creditsPico} AS TEXT)` })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .get();
  return BigInt(row!.v);
};

/** Runs the flush (or waits for the one already running) until the outbox is empty. */
async function flushed(stub: ReturnType<typeof keyStateStub>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await runDurableObjectAlarm(stub);
    if ((await stub.outboxSize()) === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("outbox never flushed");
}

function logInput(auth: RequestLogInput["auth"], logId: string, creditsPico: bigint, extra: Partial<RequestLogInput> = {}): RequestLogInput {
  return {
    logId,
    requestId: newId("req"),
    auth,
    sourceApp: "unknown",
    requestedModel: "gpt-4o-mini",
    statusCode: 200,
    costPico: creditsPico,
    creditsCostPico: creditsPico,
    createdAt: Date.now(),
    ...extra,
  };
}

describe("KeyState outbox (log rows and credit debits sent to the LOGS queue in batches)", () => {
  it("writes the log row and debits credits once, even when the same entry is flushed twice", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const before = await credits(org.orgId);
    const logId = newId("log");
    const entry = {
      row: requestLogJson(logInput(auth, logId, 1_234_567n)),
      logId,
      organizationId: org.orgId,
      creditsPico: 1_234_567n,
    };

    await stub.settleMany([{ reservationId: null, actual: 1_234_567n, outbox: entry }]);
    await flushed(stub);
    await waitForApplied([logId]);
    const rows = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.costPico).toBe(1_234_567);
    expect(await credits(org.orgId)).toBe(before - 1_234_567n);

    // A replay of the same entry (crash between the queue send and the outbox delete) changes nothing.
    await stub.settleMany([{ reservationId: null, actual: 0n, outbox: entry }]);
    await flushed(stub);
    await new Promise((r) => setTimeout(r, 300)); // the consumer saw it again
    expect(await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId))).toHaveLength(1);
    expect(await credits(org.orgId)).toBe(before - 1_234_567n);
    expect((await stub.getSpend()).usage).toBe(1_234_567n);
  });

  it("flushes a batch of rows in one go: every column, quotes and unicode intact, debit = sum of credit-paid rows", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const before = await credits(org.orgId);
    const ids = [newId("log"), newId("log"), newId("log")];
    const inputs = [
      logInput(auth, ids[0]!, 5_000_000n, { usage: { ...emptyUsage(), promptTokens: 11, completionTokens: 7, reasoningTokens: 2, cachedTokens: 3 }, streamed: true, routing: [{ provider: "openai", model: "gpt-4o-mini", status_code: 200, succeeded: true, credentialSource: "credits", latency_ms: 12 }] }),
      logInput(auth, ids[1]!, 0n, { statusCode: 502, errorType: "upstream_error", errorMessage: `it's "quoted" \\ and ünïcödé ✓` }),
      logInput(auth, ids[2]!, 7n),
    ];
    for (const input of inputs) {
      await stub.settleMany([{ reservationId: null, actual: input.creditsCostPico!, outbox: { row: requestLogJson(input), logId: input.logId, organizationId: org.orgId, creditsPico: input.creditsCostPico! } }]);
    }
    expect(await stub.outboxSize()).toBe(3);
    await flushed(stub);
    await waitForApplied(ids);
    const rows = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.organizationId, org.orgId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({ promptTokens: 11, completionTokens: 7, reasoningTokens: 2, cachedTokens: 3, totalTokens: 18, streamed: true, statusCode: 200, costPico: 5_000_000 });
    expect(byId.get(ids[0]!)!.routing).toEqual([{ provider: "openai", model: "gpt-4o-mini", status_code: 200, succeeded: true, credentialSource: "credits", latency_ms: 12 }]);
    expect(byId.get(ids[1]!)).toMatchObject({ statusCode: 502, errorType: "upstream_error", errorMessage: `it's "quoted" \\ and ünïcödé ✓`, streamed: false, costPico: 0 });
    expect(byId.get(ids[2]!)).toMatchObject({ costPico: 7, apiKeyId: org.keyId, projectId: auth.project.id });
    expect(await credits(org.orgId)).toBe(before - 5_000_007n);
  });
  it("a restarted object recovers the newest spend, whether the last change went to an outbox row or to kv", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    // What a fresh instance (after eviction) reads from storage.
    const recovered = () => runInDurableObject(stub, (_instance: KeyState, state) => new KeyState(state, env).getSpend());
    const settle = (cost: bigint) => {
      const logId = newId("log");
      return stub.settleMany([{ reservationId: null, actual: cost, outbox: { row: requestLogJson(logInput(auth, logId, cost)), logId, organizationId: org.orgId, creditsPico: cost } }]);
    };

    await settle(100n); // spend lives only in the outbox row
    expect((await recovered()).usage).toBe(100n);
    await stub.refund(30n, Date.now()); // kv is newer than the row
    expect((await recovered()).usage).toBe(70n);
    await settle(5n); // the row is newer again
    expect((await recovered()).usage).toBe(75n);
    await flushed(stub); // rows gone: kv took the spend over
    expect(await stub.outboxSize()).toBe(0);
    expect((await recovered()).usage).toBe(75n);
    expect((await stub.getSpend()).usage).toBe(75n);
  });
  it("settlements queued together (one settleMany call) release every reservation and account every cost and row", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const before = await credits(org.orgId);
    const costs = [1_000n, 20_000n, 0n, 300_000n, 4_000_000n];
    const admissions = await Promise.all(costs.map(() => admitKey(env, auth, 50_000_000n)));
    // A key without a limit: all five are admitted under this isolate's lease (one round trip), so
    // no per-request reservation is held; each settles against the lease.
    expect(admissions.every((a) => a.reservationId?.startsWith("lease:"))).toBe(true);
    expect((await stub.getSpend()).reserved).toBe(0n);

    const logIds = costs.map(() => newId("log"));
    // All queued in the same turn, as requests finishing together would.
    await Promise.all(
      costs.map((cost, i) => {
        const settling = queueSettlement(env, auth, admissions[i]!.reservationId, { totalPico: cost, creditsPico: cost }, logInput(auth, logIds[i]!, cost));
        return Promise.all([settling.durable, settling.done]);
      }),
    );
    const total = costs.reduce((a, b) => a + b, 0n);
    const spend = await stub.getSpend();
    expect(spend.reserved).toBe(0n);
    expect(spend.usage).toBe(total);

    await flushed(stub);
    await waitForApplied(logIds);
    const rows = await getDb(env.DB).select({ id: requestLogs.id, cost: requestLogs.costPico }).from(requestLogs).where(eq(requestLogs.apiKeyId, org.keyId));
    expect(rows.map((r) => r.id).sort()).toEqual([...logIds].sort());
    expect(await credits(org.orgId)).toBe(before - total);
  });

  it("the flush reports the key's settled spend to key_spend with the rows it sends; an older report never overwrites a newer", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const row = () => getDb(env.DB).select().from(keySpend).where(eq(keySpend.apiKeyId, org.keyId)).get();
    // Key creation wrote the zero row.
    expect(await row()).toMatchObject({ usagePico: "0", periodUsagePico: "0", periodStartedAt: null });

    const logId = newId("log");
    await stub.settleMany([{ reservationId: null, actual: 9_000_000_000_000_000n, outbox: { row: requestLogJson(logInput(auth, logId, 0n)), logId, organizationId: org.orgId, creditsPico: 0n } }]);
    await flushed(stub);
    const reported = (await row())!;
    expect(reported.usagePico).toBe("9000000000000000"); // above 2^53: kept exact as a string
    await waitForApplied([logId]);
    expect(await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId))).toHaveLength(1);

    // A late report of an older state (lower seq) changes nothing.
    await spendReportStatement(env, org.keyId, { usage: 1n, periodUsage: 0n, periodStartedAt: null, seq: reported.seq - 1 }, Date.now()).run();
    expect((await row())!.usagePico).toBe("9000000000000000");
    // An idle alarm (nothing new) writes nothing.
    await runDurableObjectAlarm(stub);
    expect((await row())!.updatedAt).toBe(reported.updatedAt);
  });
});
