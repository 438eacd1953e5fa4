/**
 * The routes beside chat (embeddings, images and moderations) start their
 * first upstream call while admission is asked (src/billing/early-call.ts), as chat does. Every
 * test runs the app with the key's and the organization's objects far away (each call waits
 * first) and checks, per endpoint: the upstream call starts before admission could have answered;
 * a refusal is answered exactly as without early calls, its cancelled call logged at cost 0 and
 * counted once; spend stays within one request of a limit, and credits above minus one request,
 * under concurrency. Video job submissions keep admission first (a job cannot be recalled).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { addKey, call, json, seedOrg } from "../helpers/fixtures";
import { farObjects } from "../helpers/far-objects";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { namespaceAround } from "../../src/lib/debug-world";
import { cancelledEarlyCalls, noteKeyAnswer, startedEarlyCalls } from "../../src/billing/early-call";
import { clearKeyCache } from "../../src/auth/key-cache";
import { keyLogs, settledSpend, sleep } from "../resilience/helpers";
import { recorded } from "../helpers/recorded";

/** How far the objects are: an admission cannot answer before this. */
const FAR_MS = 300;
const far = farObjects(FAR_MS);

interface Endpoint {
  name: string;
  path: string;
  body: (text: string) => Record<string, unknown>;
}

const endpoints: Endpoint[] = [
  { name: "images", path: "/v1/images/generations", body: (text) => ({ model: "gpt-image-1", prompt: text }) },
  { name: "embeddings", path: "/v1/embeddings", body: (text) => ({ model: "text-embedding-3-small", input: text }) },
  // Mistral's moderation model is priced by the token; `usage` makes the fake report tokens.
  { name: "moderations", path: "/v1/moderations", body: (text) => ({ model: "mistral-moderation-latest", input: `${text} [[fake:usage]]` }) },
];

/** A request through the app under `e`; its waitUntil work is awaited by `done`. */
function via(e: Env, key: string, ep: Endpoint, text: string): { res: Promise<Response>; done: Promise<void> } {
  const ctx = createExecutionContext();
  const res = Promise.resolve(
    app.fetch(
      new Request(`http://gw.test${ep.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(ep.body(text)),
      }),
      e,
      ctx,
    ),
  );
  return { res, done: res.then(() => waitOnExecutionContext(ctx)).catch(() => undefined) };
}

interface CallWindow {
  binding: "KEY_STATE" | "ORG_CREDITS";
  start: number;
  end: number;
}

/** `far`, recording when each budget-object call started waiting and when it answered. */
function windowedFarObjects(windows: CallWindow[]): Env {
  const around = (binding: CallWindow["binding"]) => async (call: () => Promise<unknown>) => {
    const start = Date.now();
    try {
      return await call();
    } finally {
      windows.push({ binding, start, end: Date.now() });
    }
  };
  return Object.create(far, {
    KEY_STATE: { value: namespaceAround(far.KEY_STATE, around("KEY_STATE")) },
    ORG_CREDITS: { value: namespaceAround(far.ORG_CREDITS, around("ORG_CREDITS")) },
  }) as Env;
}

/** The longest chain of calls each started after the previous one answered: round trips in sequence. */
function sequentialDepth(calls: CallWindow[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  sorted.forEach((c, i) => {
    depth[i] = 1 + Math.max(0, ...sorted.slice(0, i).map((d, j) => (d.end <= c.start ? depth[j]! : 0)));
  });
  return Math.max(0, ...depth);
}

/** Headers whose value differs per request (ids, timings, the rate window's count). */
const VARYING = /^(x-request-id|x-gateway-overhead-ms|x-ratelimit-remaining|x-ratelimit-reset|date)$/;
const headersOf = (r: Response) => [...r.headers.entries()].filter(([h]) => !VARYING.test(h)).sort();

/** The key's log rows that carry a cancelled early call, once at least one arrived. */
async function cancelledRows(keyId: string) {
  const early = (l: Awaited<ReturnType<typeof keyLogs>>[number]) => l.routing.some((a) => a.error_type === "early_cancelled");
  let logs = await keyLogs(keyId);
  for (let i = 0; i < 100 && !logs.some(early); i++) {
    await sleep(50);
    logs = await keyLogs(keyId);
  }
  return logs.filter(early);
}

/** One request's cost on `ep` (every burst request below has the same size), settled on `org`'s own key. */
async function probeCost(org: { key: string; keyId: string }, ep: Endpoint): Promise<bigint> {
  const probe = via(env, org.key, ep, "burst 0");
  expect((await probe.res).status).toBe(200);
  await probe.done;
  const cost = (await settledSpend(org.keyId, 10_000)).usage;
  expect(cost).toBeGreaterThan(0n);
  return cost;
}

describe.each(endpoints)("$name under far budget objects", (ep) => {
  it("an admitted request's upstream call starts before admission could have answered", async () => {
    const org = await seedOrg();
    const { token } = await addKey(org);
    // A key this isolate served a moment ago: its rules are confirmed (a key it never saw waits
    // for its object: src/context/policy-freshness.ts). Its lease has ended: admission asks the objects.
    const warm = via(far, token, ep, "warm");
    expect((await warm.res).status).toBe(200);
    await warm.done;
    await sleep(1_200);
    const tag = `early-${ep.name}-${crypto.randomUUID().slice(0, 8)}`;
    const windows: CallWindow[] = [];
    const earlyBefore = startedEarlyCalls();
    const started = Date.now();
    const { res, done } = via(windowedFarObjects(windows), token, ep, `hello early [[tag:${tag}]]`);
    const r = await res;
    const took = Date.now() - started;
    expect(r.status, await r.clone().text()).toBe(200);
    await done;
    const sent = await recorded(tag);
    expect(sent).toHaveLength(1);
    const upstreamAt = sent[0]!.receivedAt;
    console.log(`${ep.name}: upstream started ${upstreamAt - started} ms after the request, answered after ${took} ms, objects ${FAR_MS} ms away`);
    // Before early calls: after the key's admission answered, and after the credits' too. Read as
    // an order of events (the upstream had the call before any budget object answered), not as a
    // wall-clock bound a loaded machine stretches.
    const firstAnswer = Math.min(...windows.map((w) => w.end));
    // On failure, the object calls' windows from the request's start say which step came first.
    // `early: 0` says no early call was started at all (its rules not fresh, or a call of the key
    // still in doubt), as against one that started late.
    const timeline = JSON.stringify({ upstream: upstreamAt - started, early: startedEarlyCalls() - earlyBefore, calls: windows.map((w) => [w.binding, w.start - started, w.end - started]) });
    expect(upstreamAt, timeline).toBeLessThan(firstAnswer);
    expect(took).toBeGreaterThanOrEqual(FAR_MS);
  });

  it("a refused request gets exactly today's answer, its early call cancelled, logged unbilled, counted once", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    // The same request without an early call (today's path): a second key, barred from early calls.
    const twin = await addKey(org);
    // Warm: the isolate knows both keys (cached contexts) and admitted them last.
    for (const t of [token, twin.token]) {
      const warm = via(far, t, ep, "warm");
      expect((await warm.res).status).toBe(200);
      await warm.done;
    }
    for (const id of [row.id, twin.row.id]) {
      const patch = await call(`/v1/master/keys/${id}`, { method: "PATCH", key: org.masterKey, ...json({ status: "inactive" }) });
      expect(patch.status).toBe(200);
    }
    noteKeyAnswer(twin.row.id, true);
    const before = cancelledEarlyCalls();
    const baseline = via(far, twin.token, ep, "after");
    const today = await baseline.res;
    await baseline.done;
    expect(cancelledEarlyCalls() - before).toBe(0);
    const tag = `refused-${ep.name}-${crypto.randomUUID().slice(0, 8)}`;
    const refused: Response[] = [];
    for (let i = 0; i < 5; i++) {
      const { res, done } = via(far, token, ep, `after ${i} [[tag:${tag}]]`);
      refused.push(await res);
      await done;
    }
    // One early call (the first request after the change); none after the refusal.
    expect(cancelledEarlyCalls() - before).toBe(1);
    expect((await recorded(tag)).length).toBeLessThanOrEqual(1);
    const answerOf = async (r: Response) => ({ status: r.status, headers: headersOf(r), body: (await r.json()) as unknown });
    const expected = await answerOf(today);
    expect(expected.status).toBe(401);
    expect(await answerOf(refused[0]!)).toEqual(expected);
    // The later ones, like a cold isolate's refusal, come from the key's cached refusal: same status and body.
    clearKeyCache();
    const plain = await answerOf(await call(ep.path, { method: "POST", key: token, ...json(ep.body("plain")) }));
    for (const r of refused.slice(1)) expect(await answerOf(r)).toEqual(plain);
    expect({ status: plain.status, body: plain.body }).toEqual({ status: expected.status, body: expected.body });
    // Logged: the first refused request carries its cancelled call (cost 0, not billed to the key).
    const cancelled = await cancelledRows(row.id);
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.statusCode).toBe(401);
    expect(cancelled[0]!.costPico).toBe(0);
    expect(cancelled[0]!.routing.find((a) => a.error_type === "early_cancelled")!.status_code).toBe(499);
    const spend = await keyStateStub(env, row.id).getSpend();
    expect(spend.reserved).toBe(0n);
    expect(spend.usage).toBe((await settledSpend(row.id)).logged);
  });

  it("a rule added a moment ago: the early call made under the old rules is cancelled and logged, the request judged under the new ones", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    const warm = via(far, token, ep, "warm");
    expect((await warm.res).status).toBe(200);
    await warm.done;
    // No provider of these models: every candidate is denied under the new rules.
    const rule = await call(`/v1/master/keys/${row.id}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "allow_providers", ruleValue: { providers: ["groq"] } }) });
    expect(rule.status).toBe(201);
    const before = cancelledEarlyCalls();
    const tag = `fresh-${ep.name}-${crypto.randomUUID().slice(0, 8)}`;
    const { res, done } = via(far, token, ep, `after the rule [[tag:${tag}]]`);
    const r = await res;
    await done;
    expect(cancelledEarlyCalls() - before).toBe(1);
    const answer = { status: r.status, body: (await r.json()) as unknown };
    // The same answer as a request that started under the new rules (a cold isolate, no early call).
    clearKeyCache();
    const plain = await call(ep.path, { method: "POST", key: token, ...json(ep.body("after the rule")) });
    expect(answer).toEqual({ status: plain.status, body: await plain.json() });
    expect(answer.status).toBe(403);
    const cancelled = await cancelledRows(row.id);
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!).toMatchObject({ statusCode: 403, costPico: 0 });
    const spend = await settledSpend(row.id, 10_000);
    expect(spend.usage).toBe(spend.logged);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });

  it("30 simultaneous requests against a limit covering 6: spend <= limit + one request", async () => {
    const org = await seedOrg();
    const cost = await probeCost(org, ep);
    const limit = 6n * cost;
    const { token, row } = await addKey(org, { usageLimit: (Number(limit) / 1e12).toFixed(12) });
    const runs = Array.from({ length: 30 }, (_, i) => via(far, token, ep, `burst ${i}`));
    const statuses = await Promise.all(runs.map(async (r) => (await (await r.res).text(), (await r.res).status)));
    await Promise.all(runs.map((r) => r.done));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 401 || s === 429), statuses.join(",")).toBe(true);
    const { usage, logged } = await settledSpend(row.id, 15_000);
    expect(usage).toBe(logged);
    expect(usage).toBeLessThanOrEqual(limit + cost);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
  });
  it("30 simultaneous requests over two keys never take the organization's credits below minus one request", async () => {
    const probeOrg = await seedOrg();
    const cost = await probeCost(probeOrg, ep);
    // Credits for two requests, set before the organization's object first reads them.
    const org = await seedOrg();
    await env.DB.prepare("UPDATE organizations SET credits_pico = ? WHERE id = ?").bind(String(2n * cost), org.orgId).run();
    const a = await addKey(org);
    const b = await addKey(org);
    const runs = Array.from({ length: 30 }, (_, i) => via(far, i % 2 ? a.token : b.token, ep, `burst ${i}`));
    const statuses = await Promise.all(runs.map(async (r) => (await (await r.res).text(), (await r.res).status)));
    await Promise.all(runs.map((r) => r.done));
    expect(statuses.every((s) => s === 200 || s === 402 || s === 429), statuses.join(",")).toBe(true);
    expect(statuses).toContain(200);
    expect(statuses).toContain(402);
    // Every admitted request is paid from the credits at `cost`: at most the balance plus one request.
    expect(BigInt(statuses.filter((s) => s === 200).length) * cost).toBeLessThanOrEqual(3n * cost);
    for (const k of [a, b]) {
      const { usage, logged } = await settledSpend(k.row.id, 10_000);
      expect(usage).toBe(logged);
    }
  });
});

describe("video job submissions wait for admission (a job cannot be recalled)", () => {
  const videos: Endpoint = { name: "videos", path: "/v1/videos", body: (text) => ({ model: "sora-2", prompt: text, seconds: "4" }) };

  it("an admitted submission reaches the provider once admission answered, after one round trip", async () => {
    const org = await seedOrg();
    const { token } = await addKey(org);
    const tag = `video-${crypto.randomUUID().slice(0, 8)}`;
    // Each far call's window, so the test counts round trips in sequence instead of reading a
    // wall clock a loaded machine stretches.
    const windows: CallWindow[] = [];
    const started = Date.now();
    const { res, done } = via(windowedFarObjects(windows), token, videos, `a slow boat [[tag:${tag}]]`);
    const r = await res;
    expect(r.status, await r.clone().text()).toBe(200);
    await done;
    const sent = await recorded(tag);
    expect(sent).toHaveLength(1);
    const upstreamAt = sent[0]!.receivedAt;
    expect(upstreamAt - started).toBeGreaterThanOrEqual(FAR_MS);
    // One round trip, not two: the organization's credits are asked beside the key (before: after it).
    const before = windows.filter((w) => w.end <= upstreamAt);
    expect(before.map((w) => w.binding)).toEqual(expect.arrayContaining(["KEY_STATE", "ORG_CREDITS"]));
    expect(sequentialDepth(before)).toBe(1);
  });

  it("a refused key creates no job upstream, and no early call is made for it", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    const warm = via(far, token, videos, "warm");
    expect((await warm.res).status).toBe(200);
    await warm.done;
    const patch = await call(`/v1/master/keys/${row.id}`, { method: "PATCH", key: org.masterKey, ...json({ status: "inactive" }) });
    expect(patch.status).toBe(200);
    const before = cancelledEarlyCalls();
    const tag = `video-refused-${crypto.randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 3; i++) {
      const { res, done } = via(far, token, videos, `after ${i} [[tag:${tag}]]`);
      expect((await res).status).toBe(401);
      await done;
    }
    expect(await recorded(tag)).toHaveLength(0);
    expect(cancelledEarlyCalls() - before).toBe(0);
  });
});
