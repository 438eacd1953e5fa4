/**
 * The first upstream call starts while admission is asked (src/billing/early-call.ts, src/routes/chat/admit.ts), so
 * the budget objects' round trip hides behind the provider's time to first token. Every test here
 * runs the app with the key's and the organization's objects slowed down (each call waits first,
 * as for an object on another continent) and checks an invariant of docs/admission.md with early
 * calls in flight: nothing is released before admission answered, refusals look exactly as
 * before, spend and credits stay within one request, every admitted request is logged and billed
 * once.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { farObjects } from "../helpers/far-objects";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { parseUsd } from "../../src/billing/money";
import { cancelledEarlyCalls } from "../../src/billing/early-call";
import { worldEnv } from "../../src/lib/debug-world";
import { clearKeyCache } from "../../src/auth/key-cache";
import { keyLogs, settledBalance, settledSpend, sleep, waitForLogs } from "../resilience/helpers";
import { rollKey } from "../../src/keys/roll";
import { updateKey } from "../../src/keys/update";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { eq } from "drizzle-orm";

const MODEL = "gpt-4o-mini";

const far = farObjects(150);

/** A chat request through the app under `e`; its waitUntil work is awaited by `done`. */
function chatVia(e: Env, key: string, body: Record<string, unknown>, signal?: AbortSignal): { res: Promise<Response>; done: Promise<void> } {
  const ctx = createExecutionContext();
  const res = Promise.resolve(
    app.fetch(
      new Request("http://gw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true", "x-no-fallback": "true" },
        body: JSON.stringify({ model: MODEL, max_tokens: 5, ...body }),
        ...(signal ? { signal } : {}),
      }),
      e,
      ctx,
    ),
  );
  return { res, done: res.then(() => waitOnExecutionContext(ctx)).catch(() => undefined) };
}

const say = (text: string) => ({ messages: [{ role: "user", content: text }] });

const costOf = async (res: Response): Promise<bigint> => {
  const body = (await res.json()) as { usage: { cost: number } };
  return parseUsd(body.usage.cost.toFixed(12));
};
const usd = (pico: bigint): string => (Number(pico) / 1e12).toFixed(12);

describe("the first byte does not wait for the budget objects", () => {
  it("with the objects 200 ms away and a 600 ms first token, no object round trip sits before the first byte", async () => {
    const org = await seedOrg();
    const { token } = await addKey(org);
    // A key this isolate served a moment ago: its rules are confirmed (a key it never saw waits
    // for its object: src/context/policy-freshness.ts). Its lease has ended: admission asks the objects.
    const warm = chatVia(far, token, say("warm"));
    expect((await warm.res).status).toBe(200);
    await warm.done;
    await sleep(1_200);
    const traced = worldEnv(farObjects(200, { DEBUG_PATH_CALLS: { value: "1" } }));
    const { res, done } = chatVia(traced, token, { stream: true, ...say("hello [[fake:ttft=600]]") });
    const r = await res;
    expect(r.status).toBe(200);
    await r.text();
    await done;
    // Before early calls: the key's and the organization's objects were awaited before the upstream call (far=2 or more).
    expect(r.headers.get("x-gateway-path-calls")).toMatch(/^far=0;/);
  });

  it("a refused request is answered exactly as without early calls, its early call cancelled, logged unbilled, and counted once", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    // Warm: the isolate knows the key (cached context) and holds a lease.
    const warm = chatVia(far, token, say("warm"));
    expect((await warm.res).status).toBe(200);
    await warm.done;
    const patch = await call(`/v1/master/keys/${row.id}`, { method: "PATCH", key: org.masterKey, ...json({ status: "inactive" }) });
    expect(patch.status).toBe(200);
    const before = cancelledEarlyCalls();
    const refused: Response[] = [];
    for (let i = 0; i < 5; i++) {
      const { res, done } = chatVia(far, token, { stream: true, ...say(`after ${i} [[fake:ttft=300]]`) });
      refused.push(await res);
      await done;
    }
    // One early call (the first request after the change); none after the refusal.
    expect(cancelledEarlyCalls() - before).toBe(1);
    // The same answer as a refusal that never had an early call (no object latency, a cold isolate).
    clearKeyCache();
    const plain = await call("/v1/chat/completions", { method: "POST", key: token, ...json({ model: MODEL, messages: [{ role: "user", content: "plain" }] }) });
    const expected = { status: plain.status, type: plain.headers.get("content-type"), body: await plain.json() };
    expect(expected.status).toBe(401);
    for (const r of refused) {
      expect({ status: r.status, type: r.headers.get("content-type"), body: await r.json() }).toEqual(expected);
    }
    // Logged: the refused requests, the first with its cancelled call (cost 0, not billed to the key).
    let logs = await keyLogs(row.id);
    for (let i = 0; i < 100 && logs.length < 7; i++) {
      await sleep(50);
      logs = await keyLogs(row.id);
    }
    const cancelled = logs.filter((l) => l.routing.some((a) => a.error_type === "early_cancelled"));
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.statusCode).toBe(401);
    expect(cancelled[0]!.costPico).toBe(0);
    const spend = await keyStateStub(env, row.id).getSpend();
    expect(spend.reserved).toBe(0n);
  });
});

describe("admin changes under load with early calls in flight", () => {
  it.each([
    { change: "disable", code: "key_disabled" },
    { change: "roll", code: "key_rolled" },
  ])("$change: once the change returns, no request of the old state receives a byte of an answer", async ({ change, code }) => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    let changedAt = Infinity;
    let stop = false;
    const late: Array<{ status: number; body: string }> = [];
    let earlyOk = 0;
    const hammer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const started = Date.now();
        const { res, done } = chatVia(far, token, { stream: true, ...say(`load ${w} ${i} [[fake:ttft=100]]`) });
        const r = await res;
        const body = await r.text();
        await done;
        if (started > changedAt) late.push({ status: r.status, body });
        else if (r.status === 200) earlyOk++;
        // A caller's pace (local refusals alone would keep this isolate's thread busy).
        await sleep(20);
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => hammer(w)));
    // Change the key once the load is served (admitted requests, a lease in this isolate).
    for (let i = 0; i < 100 && earlyOk < 3; i++) await sleep(50);
    const current = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get();
    if (change === "disable") await updateKey(env, current!, { status: "inactive" });
    else await rollKey(env, current!);
    changedAt = Date.now();
    await sleep(700);
    stop = true;
    await load;
    expect(earlyOk).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(0);
    for (const l of late) {
      expect(l.status).toBe(401);
      expect(l.body).not.toContain("data:");
      expect((JSON.parse(l.body) as { error: { code: string } }).error.code).toBe(code);
    }
    // Every admitted request settled: nothing reserved is left behind.
    await settledSpend(row.id, 10_000);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });
});

describe("limits under object latency", () => {
  it("50 simultaneous requests against a limit covering 10: spend <= limit + one request", async () => {
    const org = await seedOrg();
    const probe = chatVia(env, org.key, say("probe"));
    const cost = await costOf(await probe.res);
    const limit = 10n * cost;
    const { token, row } = await addKey(org, { usageLimit: usd(limit) });
    const runs = Array.from({ length: 50 }, (_, i) => chatVia(far, token, say(`burst ${i}`)));
    const statuses = await Promise.all(runs.map(async (r) => (await (await r.res).text(), (await r.res).status)));
    await Promise.all(runs.map((r) => r.done));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 401 || s === 429)).toBe(true);
    const { usage, logged } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    expect(usage).toBeLessThanOrEqual(limit + cost);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });

  it("100 concurrent requests over two keys never take the organization's credits below minus one request", async () => {
    const probeOrg = await seedOrg();
    const cost = await costOf(await chatVia(env, probeOrg.key, say("credits probe")).res);
    const org = await seedOrg({ creditsUsd: Math.floor(Number(2n * cost) / 1e6) / 1e6 });
    const a = await addKey(org);
    const b = await addKey(org);
    const runs = Array.from({ length: 100 }, (_, i) => chatVia(far, i % 2 ? a.token : b.token, say("credits probe")));
    const statuses = await Promise.all(runs.map(async (r) => (await (await r.res).text(), (await r.res).status)));
    await Promise.all(runs.map((r) => r.done));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 402 || s === 429)).toBe(true);
    expect(await settledBalance(org.orgId, [a.row.id, b.row.id])).toBeGreaterThanOrEqual(-cost);
  });
});

describe("dropped streams under object latency", () => {
  it("clients gone before admission answered and mid-stream: every request logged once, billed, released", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org, { usageLimit: "5" });
    const ids = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const abort = new AbortController();
        const { res, done } = chatVia(far, token, { stream: true, ...say(`drop ${i} [[fake:words=40,drip=20,ttft=50]]`) }, abort.signal);
        if (i % 3 === 0) {
          // Gone while admission is still being asked (the early call is under way).
          await sleep(40);
          abort.abort();
          const r = await res;
          await r.body?.cancel();
          await done;
          return r.headers.get("x-request-id");
        }
        const r = await res;
        expect(r.status).toBe(200);
        const reader = r.body!.getReader();
        for (let n = 0; n < 1 + (i % 5); n++) await reader.read();
        abort.abort();
        await reader.cancel();
        await done;
        return r.headers.get("x-request-id");
      }),
    );
    const known = ids.filter((x): x is string => x !== null);
    await waitForLogs(known, 15_000);
    let logs = await keyLogs(row.id);
    for (let i = 0; i < 100 && logs.length < 12; i++) {
      await sleep(50);
      logs = await keyLogs(row.id);
    }
    expect(logs).toHaveLength(12);
    expect(logs.every((l) => l.clientAborted)).toBe(true);
    const { usage, logged } = await settledSpend(row.id, 10_000);
    expect(usage).toBe(logged);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });
});
