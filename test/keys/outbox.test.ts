import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { organizations, requestLogs } from "../../src/db/schema";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { requestLogValues } from "../../src/usage/request-log";
import { newId } from "../../src/lib/ids";

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
    const left = await runInDurableObject(stub, async (_, state) => (await state.storage.list({ prefix: "outbox:" })).size);
    if (left === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("outbox never flushed");
}

describe("KeyState outbox (log rows and credit debits flushed to D1 in batches)", () => {
  it("writes the log row and debits credits once, even when the same entry is flushed twice", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const before = await credits(org.orgId);
    const logId = newId("log");
    const entry = {
      logValues: requestLogValues({
        logId,
        requestId: newId("req"),
        auth,
        sourceApp: "unknown",
        requestedModel: "gpt-4o-mini",
        statusCode: 200,
        costPico: 1_234_567n,
        creditsCostPico: 1_234_567n,
        createdAt: Date.now(),
      }),
      organizationId: org.orgId,
      creditsPico: 1_234_567n,
    };

    await stub.settle(null, 1_234_567n, undefined, entry);
    await flushed(stub);
    const rows = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.costPico).toBe(1_234_567);
    expect(await credits(org.orgId)).toBe(before - 1_234_567n);

    // A replay of the same entry (crash between the D1 batch and the outbox delete) changes nothing.
    await stub.settle(null, 0n, undefined, entry);
    await flushed(stub);
    expect(await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId))).toHaveLength(1);
    expect(await credits(org.orgId)).toBe(before - 1_234_567n);
    expect((await stub.getSpend()).usage).toBe(1_234_567n);
  });
});
