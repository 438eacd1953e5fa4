/**
 * Spend and credit limits hold in bursts, with the objects and the D1 primary far away (test/latency/helpers.ts)
 * and early upstream calls in flight: a key's spend never exceeds its limit by more than one
 * request's actual cost, an organization on credits never goes below minus one request, and no
 * 401/402 is answered while only reservations fill the budget (a refusal only on settled numbers).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, seedOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { admitKey, resolveGatewayKey } from "../../src/auth/gateway-key";
import { settleRequest } from "../../src/billing/settle";
import { ApiError } from "../../src/errors/api-error";
import { settledBalance, settledSpend } from "../resilience/helpers";
import { chatVia, costOf, far, latencies, say, usd, type Sent } from "./helpers";

/** Statuses of finished requests (bodies read) and their waitUntil work done. */
async function statusesOf(runs: Sent[]): Promise<number[]> {
  const statuses = await Promise.all(runs.map(async (r) => (await (await r.res).text(), (await r.res).status)));
  await Promise.all(runs.map((r) => r.done));
  return statuses;
}

/** The cost of one request like `body` (a probe on a key of another organization). */
async function probeCost(body: Record<string, unknown>): Promise<bigint> {
  const probeOrg = await seedOrg();
  const r = await chatVia(probeOrg.key, body).res;
  expect(r.status).toBe(200);
  return costOf(r);
}

const COST = 1_000_000n;

describe("key spend limits under object latency", () => {
  it("50 concurrent admissions against a limit covering 10 (the spend-limits test): exactly 10 admitted, the rest 401 on settled spend", async () => {
    latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "0.00001" });
    const ctx = await resolveGatewayKey(far, token);
    const results = await Promise.all(
      Array.from({ length: 50 }, async () => {
        try {
          const a = await admitKey(far, ctx, COST);
          await settleRequest(far, a.context, a.reservationId, { totalPico: COST, creditsPico: COST });
          return "ok";
        } catch (e) {
          if (e instanceof ApiError) return `${e.status}:${e.code}`;
          throw e;
        }
      }),
    );
    // Reservations filled the budget before spend did: the others waited, none was refused early.
    expect(results.filter((r) => r === "ok")).toHaveLength(10);
    expect(results.filter((r) => r !== "ok").every((r) => r === "401:usage_limit_reached")).toBe(true);
    const spend = await keyStateStub(env, row.id).getSpend();
    expect(spend.usage).toBe(10n * COST);
    expect(spend.reserved).toBe(0n);
  });

  /**
   * `n` simultaneous requests of `body` on a key whose limit covers 10 of them: spend within one
   * request of the limit, every admitted request logged, and no false 401 (the limit-reached answer
   * only once settled spend reached the limit). Returns the key's row.
   */
  async function limitBurst(n: number, body: Record<string, unknown>) {
    const cost = await probeCost(body);
    const limit = 10n * cost;
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: usd(limit) });
    const statuses = await statusesOf(Array.from({ length: n }, () => chatVia(token, body)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 401 || s === 429)).toBe(true);
    const { usage, logged } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    expect(usage).toBeLessThanOrEqual(limit + cost);
    if (statuses.includes(401)) expect(usage).toBeGreaterThanOrEqual(limit);
    return row;
  }

  it("50 simultaneous streamed chat requests against a limit covering 10, early calls in flight: spend <= limit + one request", async () => {
    const lat = latencies();
    const body = { stream: true, ...say(`burst [[fake:ttft=${lat.object + 80}]]`) };
    const row = await limitBurst(50, body);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });

  it("100 concurrent requests (prompt tokens far above chars / 4) do not overshoot the limit by more than one request", async () => {
    const lat = latencies();
    const content = `${Array.from({ length: 300 }, () => "a").join(" ")} [[fake:ttft=${lat.object + 80}]]`;
    const body = { stream: true, max_tokens: 1, ...say(content) };
    await limitBurst(100, body);
  });

  it("no false 401: concurrent requests whose bounds exceed the limit (no max_tokens) wait for settlements, never 401", async () => {
    const lat = latencies();
    const body = { max_tokens: undefined, stream: true, ...say(`no cap [[fake:ttft=${lat.object + 80}]]`) };
    const cost = await probeCost(body);
    // Worth 500 requests' actual cost, less than one request's bound (the model's whole output).
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: usd(500n * cost) });
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const { res, done } = chatVia(token, body);
        const r = await res;
        const text = await r.text();
        await done;
        return { status: r.status, text, retryAfter: r.headers.get("retry-after") };
      }),
    );
    // They go one at a time (each waits for the previous settlement, an object round trip away);
    // those that cannot start within ADMISSION_WAIT_MS get 429 budget_busy, never the limit's 401.
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(2);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(429);
      expect((JSON.parse(a.text) as { error: { code: string } }).error.code).toBe("budget_busy");
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    const { usage, logged } = await settledSpend(row.id, 10_000);
    expect(usage).toBe(logged);
    expect(usage).toBeLessThan(500n * cost);
  });
});

describe("organization credits under object latency", () => {
  it("100 concurrent requests over two keys never take the balance below minus one request; a 402 only at a settled balance <= 0", async () => {
    const lat = latencies();
    const body = { stream: true, ...say(`credits [[fake:ttft=${lat.object + 80}]]`) };
    const cost = await probeCost(body);
    // Credits worth about two requests (seedOrg takes whole micro-dollars).
    const org = await seedOrg({ creditsUsd: Math.floor(Number(2n * cost) / 1e6) / 1e6 });
    const a = await addKey(org);
    const b = await addKey(org);
    const statuses = await statusesOf(Array.from({ length: 100 }, (_, i) => chatVia(i % 2 ? a.token : b.token, body)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 402 || s === 429)).toBe(true);
    const balance = await settledBalance(org.orgId, [a.row.id, b.row.id]);
    expect(balance).toBeGreaterThanOrEqual(-cost);
    if (statuses.includes(402)) expect(balance).toBeLessThanOrEqual(0n);
  });

  it("no false 402: requests whose bounds exceed the balance wait for settlements instead of being refused", async () => {
    const lat = latencies();
    const body = { max_tokens: undefined, stream: true, ...say(`credit bounds [[fake:ttft=${lat.object + 80}]]`) };
    const cost = await probeCost(body);
    // Enough for 500 requests' actual cost, far less than 6 requests' bounds (no max_tokens).
    const org = await seedOrg({ creditsUsd: Math.ceil(Number(500n * cost) / 1e6) / 1e6 });
    const statuses = await statusesOf(Array.from({ length: 6 }, () => chatVia(org.key, body)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(await settledBalance(org.orgId, [org.keyId])).toBeGreaterThan(0n);
  });
});
