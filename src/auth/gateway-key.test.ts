import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, seedOrg, rejection } from "../../test/helpers/fixtures";
import { resolveGatewayKey, checkKey, admitKey } from "./gateway-key";
import { keyStateStub } from "../durable-objects/key-state";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { eq } from "drizzle-orm";
import { syncKeys } from "../keys/sync";


describe("gateway key authentication", () => {
  it("resolves a valid key and passes the DO check", async () => {
    const org = await seedOrg();
    const ctx = await resolveGatewayKey(env, org.key);
    expect(ctx.key.id).toBe(org.keyId);
    expect(ctx.organization.id).toBe(org.orgId);
    expect(ctx.member.role).toBe("owner");
    const checked = await checkKey(env, ctx);
    expect(checked.key.id).toBe(org.keyId);
  });

  it("rejects missing, malformed and unknown keys with precise 401s", async () => {
    expect(await rejection(resolveGatewayKey(env, null))).toMatchObject({ status: 401, code: "missing_api_key" });
    expect(await rejection(resolveGatewayKey(env, "sk-nope"))).toMatchObject({ status: 401, code: "invalid_api_key" });
    expect(await rejection(resolveGatewayKey(env, `swb_${"a".repeat(40)}`))).toMatchObject({ status: 401, code: "invalid_api_key" });
  });

  it("a key disabled in D1 + DO is refused on the very next request even from a warm isolate cache", async () => {
    const org = await seedOrg();
    const ctx = await resolveGatewayKey(env, org.key); // now cached
    const [row] = await getDb(env.DB).update(apiKeys).set({ status: "inactive", version: ctx.key.version + 1 }).where(eq(apiKeys.id, org.keyId)).returning();
    await syncKeys(env, [row!]);
    const cached = await resolveGatewayKey(env, org.key); // still the cached (stale) context
    expect(cached.key.status).toBe("active");
    expect(await rejection(checkKey(env, cached))).toMatchObject({ status: 401, code: "key_disabled" });
    // and the cache entry is gone: the next resolve reads D1
    expect(await rejection(resolveGatewayKey(env, org.key))).toMatchObject({ status: 401, code: "key_disabled" });
  });

  it("spend admission: reservations at the all-time limit make a request wait, then 429 (never the limit-reached 401)", async () => {
    const org = await seedOrg();
    const { token } = await addKey(org, { usageLimit: "0.000002" });
    const ctx = await resolveGatewayKey(env, token);
    const first = await admitKey(env, ctx, 1_500_000n); // $0.0000015
    expect(first.reservationId).toBeTruthy();
    const second = await admitKey(env, ctx, 1_500_000n); // 1.5 < 2: still admitted (overshoot bounded by one request)
    expect(second.reservationId).toBeTruthy();
    // Nothing is spent: the reservations hold the budget, so the third waits (here 50 ms) and gets 429.
    const shortWait = Object.create(env, { ADMISSION_WAIT_MS: { value: "50" } }) as typeof env;
    expect(await rejection(admitKey(shortWait, ctx, 1_500_000n))).toMatchObject({ status: 429, code: "budget_busy" });
    const stub = keyStateStub(env, ctx.key.id);
    await stub.settle(first.reservationId, 0n);
    await stub.settle(second.reservationId, 0n);
    const spend = await stub.getSpend();
    expect(spend.usage).toBe(0n);
    expect(spend.reserved).toBe(0n);
  });
});
