import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { admitKey, checkKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { keyStateStub, snapshotOf } from "../../src/durable-objects/key-state";
import { settleRequest } from "../../src/billing/settle";
import { ApiError } from "../../src/errors/api-error";
import { rollKey } from "../../src/keys/roll";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { eq } from "drizzle-orm";

const COST = 1_000_000n; // $0.000001 per request
const TEN_REQUESTS = "0.00001";

async function outcome(p: Promise<unknown>): Promise<{ ok: true } | { ok: false; status: number; code: string; message: string }> {
  try {
    await p;
    return { ok: true };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, status: e.status, code: e.code, message: e.message };
    throw e;
  }
}

const patchKey = (org: SeededOrg, id: string, body: unknown) => call(`/v1/master/keys/${id}`, { method: "PATCH", key: org.masterKey, ...json(body) });

/** 50 concurrent admit+settle cycles; returns how many were admitted. */
async function burst(token: string, n = 50): Promise<{ admitted: number; denials: string[] }> {
  const ctx = await resolveGatewayKey(env, token);
  const results = await Promise.all(
    Array.from({ length: n }, async () => {
      try {
        const a = await admitKey(env, ctx, COST);
        await settleRequest(env, a.context, a.reservationId, { totalPico: COST, creditsPico: COST });
        return "ok";
      } catch (e) {
        if (e instanceof ApiError) return `${e.status}:${e.code}:${e.message}`;
        throw e;
      }
    }),
  );
  return { admitted: results.filter((r) => r === "ok").length, denials: results.filter((r) => r !== "ok") };
}

describe("spend limits in the KeyState DO", () => {
  it("50 concurrent requests against an all-time limit covering 10: spend never exceeds limit + one request", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: TEN_REQUESTS });
    const { admitted, denials } = await burst(token);
    expect(admitted).toBe(10);
    expect(denials.every((d) => d.startsWith("401:usage_limit_reached:") && d.includes("all-time limit"))).toBe(true);
    const spend = await keyStateStub(env, row.id).getSpend();
    expect(spend.usage).toBeLessThanOrEqual(10n * COST + COST);
    expect(spend.reserved).toBe(0n);

    // Raising the limit (PATCH syncs the DO) recovers the key at once.
    const ctx = await resolveGatewayKey(env, token);
    expect(await outcome(admitKey(env, ctx, COST))).toMatchObject({ ok: false, status: 401, code: "usage_limit_reached" });
    expect((await patchKey(org, row.id, { usageLimit: "0.00002" })).status).toBe(200);
    const again = await burst(token);
    expect(again.admitted).toBe(10);
    const detail = (await (await call(`/v1/master/keys/${row.id}`, { key: org.masterKey })).json()) as { apiKey: { usage: string } };
    expect(detail.apiKey.usage).toBe("0.00002");
    // Clearing the limit removes the cap.
    expect((await patchKey(org, row.id, { usageLimit: null })).status).toBe(200);
    expect((await burst(token, 5)).admitted).toBe(5);
  });

  it("recurring limit: concurrent burst bounded, 401 names the recurring limit, recovers in the next window", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { periodUsageLimit: TEN_REQUESTS, periodUsageDurationValue: 1, periodUsageDurationUnit: "hour" });
    const { admitted, denials } = await burst(token);
    expect(admitted).toBe(10);
    expect(denials[0]).toContain("recurring limit");
    const stub = keyStateStub(env, row.id);
    const spend = await stub.getSpend();
    expect(spend.periodUsage).toBe(10n * COST);
    expect(spend.periodStartedAt).not.toBeNull();

    // The next window starts at the first use after the previous one ended.
    const ctx = await resolveGatewayKey(env, token);
    const later = spend.periodStartedAt! + 3_600_000 + 5;
    const gate = await stub.admit(ctx.key.fingerprint, snapshotOf(ctx.key), COST, later);
    expect(gate.ok).toBe(true);
    const after = await stub.getSpend(later + 1);
    expect(after.periodStartedAt).toBe(later);
    expect(after.periodUsage).toBe(0n);
    expect(after.usage).toBe(10n * COST);
  });

  it("usage includes credit-paid and BYOK spend", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "0.000003" });
    const ctx = await resolveGatewayKey(env, token);
    const a = await admitKey(env, ctx, COST);
    await settleRequest(env, ctx, a.reservationId, { totalPico: 2n * COST, creditsPico: 0n }); // BYOK only
    const b = await admitKey(env, ctx, COST);
    await settleRequest(env, ctx, b.reservationId, { totalPico: COST, creditsPico: COST });
    expect((await keyStateStub(env, row.id).getSpend()).usage).toBe(3n * COST);
    expect(await outcome(admitKey(env, ctx, COST))).toMatchObject({ ok: false, code: "usage_limit_reached" });
  });

  it("a roll keeps usage, limits and the running window", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "1", periodUsageLimit: "0.5", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    const ctx = await resolveGatewayKey(env, token);
    const a = await admitKey(env, ctx, COST);
    await settleRequest(env, ctx, a.reservationId, { totalPico: 3n * COST, creditsPico: 3n * COST });
    const before = await keyStateStub(env, row.id).getSpend();
    const current = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get();
    const rolled = await rollKey(env, current!);
    const after = await keyStateStub(env, row.id).getSpend();
    expect(after).toMatchObject({ usage: before.usage, periodUsage: before.periodUsage, periodStartedAt: before.periodStartedAt });
    const fresh = await resolveGatewayKey(env, rolled.token);
    expect(fresh.key).toMatchObject({ usageLimit: "1", periodUsageLimit: "0.5" });
    await checkKey(env, fresh);
  });

  it("roll under load: once the roll returns, no request with the old secret succeeds", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    const oldCtx = await resolveGatewayKey(env, token);
    let stop = false;
    const lateSuccesses: number[] = [];
    let earlySuccesses = 0;
    let rolledAt = Infinity;
    const hammer = async () => {
      for (let i = 0; i < 60 && !stop; i++) {
        const started = Date.now();
        const r = await outcome(admitKey(env, oldCtx, 0n));
        if (r.ok && started > rolledAt) lateSuccesses.push(started);
        else if (r.ok) earlySuccesses++;
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, hammer));
    await new Promise((r) => setTimeout(r, 20));
    const current = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get();
    const rolled = await rollKey(env, current!);
    rolledAt = Date.now();
    await new Promise((r) => setTimeout(r, 30));
    stop = true;
    await load;
    expect(earlySuccesses).toBeGreaterThan(0);
    expect(lateSuccesses).toEqual([]);
    expect(await outcome(admitKey(env, oldCtx, 0n))).toMatchObject({ ok: false, code: "key_rolled" });
    expect(await outcome(resolveGatewayKey(env, token))).toMatchObject({ ok: false, code: "key_rolled" });
    expect(await outcome(admitKey(env, await resolveGatewayKey(env, rolled.token), 0n))).toEqual({ ok: true });
  });
});

describe("budget alerts", () => {
  it("one notification and one e-mail when a limit's threshold is crossed, never repeated", async () => {
    const org = await seedOrg();
    const res = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { apiKeyBudgets: true, thresholdPercent: 80 } }) });
    expect(res.status).toBe(200);
    const { token, row } = await addKey(org, { description: "budgeted", usageLimit: "0.00001", periodUsageLimit: "0.00002", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    const ctx = await resolveGatewayKey(env, token);
    const spendOnce = async (pico: bigint) => {
      const a = await admitKey(env, ctx, COST);
      await settleRequest(env, a.context, a.reservationId, { totalPico: pico, creditsPico: pico });
    };
    await spendOnce(7n * COST); // 70% all-time, 35% period
    let rows = await env.DB.prepare("SELECT * FROM notifications WHERE api_key_id = ?").bind(row.id).all<{ limit_type: string; emailed_at: number | null; message: string }>();
    expect(rows.results).toHaveLength(0);
    await spendOnce(1n * COST); // 80% all-time: crosses
    await spendOnce(1n * COST); // 90%: no repeat
    rows = await env.DB.prepare("SELECT * FROM notifications WHERE api_key_id = ?").bind(row.id).all();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]).toMatchObject({ limit_type: "all_time", window_start: 0 });
    expect(rows.results[0]!.emailed_at).not.toBeNull();
    expect(String(rows.results[0]!.message)).toContain("80%");

    await spendOnce(8n * COST); // period: 17/20 = 85% -> crosses the recurring threshold
    rows = await env.DB.prepare("SELECT * FROM notifications WHERE api_key_id = ? ORDER BY created_at").bind(row.id).all();
    expect(rows.results.map((r) => r.limit_type)).toEqual(["all_time", "period"]);

    // Listed in the dashboard.
    const signIn = await call("/api/auth/sign-in", { method: "POST", ...json({ email: org.ownerEmail, password: org.ownerPassword }) });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    const list = (await (await call("/api/notifications", { headers: { cookie } })).json()) as { notifications: Array<{ apiKeyId: string; limitType: string }> };
    expect(list.notifications.filter((n) => n.apiKeyId === row.id).map((n) => n.limitType).sort()).toEqual(["all_time", "period"]);
  });

  it("a new organization that never saved its settings gets alerts at 80% (unset means on), as its API and dashboard say", async () => {
    const org = await seedOrg();
    const shown = (await (await call("/v1/master/organization", { key: org.masterKey })).json()) as { organization?: { notifications: unknown }; notifications?: unknown };
    expect(shown.organization?.notifications ?? shown.notifications).toEqual({ apiKeyBudgets: true, thresholdPercent: 80, lowCreditsThreshold: "5" });
    const { token, row } = await addKey(org, { description: "never configured", usageLimit: "0.00001" });
    const ctx = await resolveGatewayKey(env, token);
    const spend = async (pico: bigint) => {
      const a = await admitKey(env, ctx, COST);
      await settleRequest(env, a.context, a.reservationId, { totalPico: pico, creditsPico: pico });
    };
    await spend(7n * COST); // 70%
    expect((await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE api_key_id = ?").bind(row.id).first<{ n: number }>())?.n).toBe(0);
    await spend(4n * COST); // 110%: crosses 80%
    const rows = await env.DB.prepare("SELECT * FROM notifications WHERE api_key_id = ?").bind(row.id).all<{ emailed_at: number | null; message: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]!.message).toContain("alert threshold 80%");
    expect(rows.results[0]!.emailed_at).not.toBeNull();
  });

  it("no alert when budget notifications are off, and a custom threshold is honoured", async () => {
    const org = await seedOrg();
    const off = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { apiKeyBudgets: false } }) });
    expect(off.status).toBe(200);
    const { token, row } = await addKey(org, { usageLimit: "0.00001" });
    const ctx = await resolveGatewayKey(env, token);
    const a = await admitKey(env, ctx, COST);
    await settleRequest(env, ctx, a.reservationId, { totalPico: 9n * COST, creditsPico: 0n });
    let rows = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE api_key_id = ?").bind(row.id).first<{ n: number }>();
    expect(rows?.n).toBe(0);

    await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { apiKeyBudgets: true, thresholdPercent: 95 } }) });
    const b = await admitKey(env, ctx, COST);
    await settleRequest(env, ctx, b.reservationId, { totalPico: COST / 2n, creditsPico: 0n }); // 95%
    rows = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE api_key_id = ?").bind(row.id).first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });
});
