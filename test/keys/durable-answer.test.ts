/**
 * An answered request's record is durable before the answer ends: when the client holds the last
 * byte (the final event of a stream, the body of a JSON answer), its spend, log row and credit debit
 * are already stored in the key's object. And what an object stored but did not send yet is applied
 * once after the object restarts, with the reservations of requests that never finished gone.
 *
 * Run under the deployed settlement window (SETTLE_BATCH_MS unset: 1 s), where a settlement that
 * waited in the isolate would still be missing when the answer ended.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, evictDurableObject, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { seedOrg } from "../helpers/fixtures";
import { KeyState, keyStateStub, snapshotOf } from "../../src/durable-objects/key-state";
import { parseUsd } from "../../src/billing/money";
import { getDb } from "../../src/db/client";
import { organizations, requestLogs } from "../../src/db/schema";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { requestLogJson } from "../../src/usage/request-log";
import { newId } from "../../src/lib/ids";
import { waitForApplied } from "../helpers/logs";

const deployed = Object.create(env, { SETTLE_BATCH_MS: { value: undefined } }) as Env;

const request = (key: string, stream: boolean) =>
  new Request("http://gw.test/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 20, stream, messages: [{ role: "user", content: `durable ${newId("t")}` }] }),
  });

const credits = async (orgId: string): Promise<bigint> => {
  const row = await getDb(env.DB).select({ v: sql<string>`CAST(${organizations.creditsPico} AS TEXT)` }).from(organizations).where(eq(organizations.id, orgId)).get();
  return BigInt(row!.v);
};

describe("a record is durable before the answer ends", () => {
  it("stream: when the final event (usage, cost) arrives, the key's object already holds the request's spend", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const ec = createExecutionContext();
    const res = await app.fetch(request(org.key, true), deployed, ec);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let cost: bigint | null = null;
    while (cost === null) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const m = /"usage":\{[^]*?"cost":([0-9.e-]+)/.exec(text);
      if (m) cost = parseUsd(Number(m[1]).toFixed(12));
    }
    expect(cost).not.toBeNull();
    // Read at the final event, before [DONE] and before the request's waitUntil work ran.
    const spend = await keyStateStub(env, org.keyId).getSpend();
    expect(spend.usage).toBe(cost);
    await reader.cancel().catch(() => undefined);
    await waitOnExecutionContext(ec);
  });

  it("JSON: when the body arrives, the key's object already holds the request's spend", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const ec = createExecutionContext();
    const res = await app.fetch(request(org.key, false), deployed, ec);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: { cost: number } };
    const spend = await keyStateStub(env, org.keyId).getSpend();
    expect(spend.usage).toBe(parseUsd(body.usage.cost.toFixed(12)));
    await waitOnExecutionContext(ec);
  });
});

/** A streamed request through a front door, read until `last` appears: the key's spend at that moment. */
async function spendAtFinalEvent(path: string, body: Record<string, unknown>, last: string): Promise<bigint> {
  const org = await seedOrg({ creditsUsd: 10 });
  const ec = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://gw.test${path}`, { method: "POST", headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", "x-no-cache": "true" }, body: JSON.stringify(body) }),
    deployed,
    ec,
  );
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(last)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  expect(text).toContain(last);
  const spend = (await keyStateStub(env, org.keyId).getSpend()).usage;
  await reader.cancel().catch(() => undefined);
  await waitOnExecutionContext(ec);
  return spend;
}

describe("every door: the final event leaves after the record is stored", () => {
  it("Messages: at message_stop the key's object holds the request's spend", async () => {
    const spend = await spendAtFinalEvent("/v1/messages", { model: "gpt-4o-mini", max_tokens: 20, stream: true, messages: [{ role: "user", content: `durable ${newId("t")}` }] }, "message_stop");
    expect(spend).toBeGreaterThan(0n);
  });

  it("Responses: at response.completed the key's object holds the request's spend", async () => {
    const spend = await spendAtFinalEvent("/v1/responses", { model: "gpt-4o-mini", max_output_tokens: 20, stream: true, input: `durable ${newId("t")}` }, "response.completed");
    expect(spend).toBeGreaterThan(0n);
  });
});

describe("recovery after the object restarts", () => {
  it("a record stored but not yet sent is applied once after a restart; reservations of unfinished requests are gone", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const auth = await resolveGatewayKey(env, org.key);
    const stub = keyStateStub(env, org.keyId);
    const before = await credits(org.orgId);
    // A request still in flight (its isolate about to die) holds a reservation.
    const held = await stub.admit(auth.key.fingerprint, snapshotOf(auth.key), 5_000_000n);
    expect(held.ok).toBe(true);
    expect((await stub.getSpend()).reserved).toBe(5_000_000n);
    const logId = newId("log");
    const row = requestLogJson({ logId, requestId: newId("req"), auth, sourceApp: "unknown", requestedModel: "gpt-4o-mini", statusCode: 200, costPico: 777n, creditsCostPico: 777n, createdAt: Date.now() });
    const entry = { row, logId, organizationId: org.orgId, creditsPico: 777n };
    // Stored, and the runtime dies before its flush: the alarm that would have sent it is far away.
    await runInDurableObject(stub, async (object: KeyState, state) => {
      await object.settleMany([{ reservationId: null, actual: 777n, outbox: entry }]);
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    await evictDurableObject(stub);

    // The restarted object knows the spend, holds no reservation, and sends what it stored.
    const after = keyStateStub(env, org.keyId);
    const spend = await after.getSpend();
    expect(spend.usage).toBe(777n);
    expect(spend.reserved).toBe(0n);
    await waitForApplied([logId]);
    expect(await after.outboxSize()).toBe(0);

    // Sent again (a crash between the send and the delete): applied once.
    await after.settleMany([{ reservationId: null, actual: 0n, outbox: entry }]);
    for (let i = 0; i < 50 && (await after.outboxSize()) > 0; i++) await runDurableObjectAlarm(after);
    await new Promise((r) => setTimeout(r, 300));
    expect(await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.id, logId))).toHaveLength(1);
    expect(await credits(org.orgId)).toBe(before - 777n);
  });
});
