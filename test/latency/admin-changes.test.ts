/**
 * Admin changes take effect at once (the first invariant of docs/admission.md), with the objects and the D1 primary far away (test/latency/helpers.ts):
 * a disable, roll, delete or limit change under load while early upstream calls are in flight
 * (the fake upstream's first token comes after admission answered). Once the change returned, no
 * request receives a byte of an answer under the old state, nothing of the cancelled upstream call
 * reaches the client, the cancelled call is logged unbilled (`early_cancelled`, cost 0) and counted,
 * and at most one early call of the key reaches the upstream per isolate after the change.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, seedOrg } from "../helpers/fixtures";
import { keyStateStub } from "../../src/durable-objects/key-state";
import { cancelledEarlyCalls, startedEarlyCalls } from "../../src/billing/early-call";
import { cacheContext, getCachedContext } from "../../src/auth/key-cache";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { updateKey } from "../../src/keys/update";
import { rollKey } from "../../src/keys/roll";
import { deleteKey } from "../../src/keys/delete";
import { app } from "../../src/app";
import { keyLogs, settledSpend, sleep } from "../resilience/helpers";
import { MODEL, chatVia, far, latencies, recorded, say, send } from "./helpers";

type Change = "disable" | "roll" | "delete" | "limit";

const CASES: Array<{ change: Change; code: string }> = [
  { change: "disable", code: "key_disabled" },
  { change: "roll", code: "key_rolled" },
  { change: "delete", code: "key_deleted" },
  { change: "limit", code: "usage_limit_reached" },
];

describe("admin changes under load, early calls in flight, objects and D1 primary far away", () => {
  it.each(CASES)("$change: nothing of the old state after the change returned; one cancelled early call at most, logged unbilled", async ({ change, code }) => {
    const lat = latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org, change === "limit" ? { usageLimit: "5" } : {});
    // The upstream's first token comes well after admission answered: early calls are in flight
    // for the whole round trip of the key's object.
    const ttft = 2 * lat.object + 60;
    const tag = crypto.randomUUID();
    let changedAt = Infinity;
    let stop = false;
    const late: Array<{ status: number; body: string; type: string | null }> = [];
    let servedBefore = 0;
    const hammer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const started = Date.now();
        const after = started > changedAt;
        const { res, done } = chatVia(token, { stream: true, ...say(`load ${w} ${i} [[fake:ttft=${ttft}]] [[tag:${tag}${after ? "-late" : ""}]]`) });
        const r = await res;
        const body = await r.text();
        await done;
        if (after) late.push({ status: r.status, body, type: r.headers.get("content-type") });
        else if (r.status === 200) servedBefore++;
        await sleep(15);
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => hammer(w)));
    // Change the key once the load is served (admitted requests, a lease in this isolate) and, for
    // the limit, some spend is settled (a lower limit then refuses on settled spend).
    for (let i = 0; i < 100 && (servedBefore < 4 || (await keyStateStub(env, row.id).getSpend()).usage === 0n); i++) await sleep(50);
    const current = (await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get())!;
    // The change is made by another isolate: this one keeps the context it cached (a roll or a
    // delete evicts it only in the isolate that made the change).
    const fingerprint = (await resolveGatewayKey(far, token)).key.fingerprint;
    const cached = getCachedContext(fingerprint)!;
    expect(cached).toBeDefined();
    const cancelledBefore = cancelledEarlyCalls();
    const startedBefore = startedEarlyCalls();
    let rolledToken: string | null = null;
    if (change === "disable") await updateKey(far, current, { status: "inactive" });
    else if (change === "roll") rolledToken = (await rollKey(far, current)).token;
    else if (change === "delete") await deleteKey(far, current);
    else await updateKey(far, current, { usageLimit: "0.000000000001" });
    cacheContext(fingerprint, cached);
    changedAt = Date.now();
    const cancelledAtChange = cancelledEarlyCalls();
    // The load goes on past the change until several requests started after it were answered (a
    // loaded machine, or a second test file beside this one, stretches each request).
    await sleep(4 * lat.object + ttft);
    for (let i = 0; i < 200 && late.length < 4; i++) await sleep(50);
    stop = true;
    await load;

    expect(servedBefore).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(3);
    for (const l of late) {
      // The error envelope, and not a byte of the upstream's stream.
      expect(l.status).toBe(401);
      expect(l.type).toContain("application/json");
      expect(l.body).not.toContain("data:");
      expect(l.body).not.toContain("Hello");
      expect((JSON.parse(l.body) as { error: { code: string } }).error.code).toBe(code);
    }
    // Early calls were really in flight around the change: once the leases it waited for ended,
    // requests asked the far object with an early call. Whether one of them is cancelled is a race
    // the bound allows either way: when the call in doubt was admitted just before the change
    // applied and a request without one (another call was in doubt) brought the first refusal, no
    // early call starts after it and none is cancelled. The cancellation path itself is pinned
    // deterministically in test/keys/early-admission.test.ts. Every cancelled call had reached the
    // upstream (besides the served requests' calls).
    expect(startedEarlyCalls() - startedBefore).toBeGreaterThanOrEqual(1);
    const cancelled = cancelledEarlyCalls() - cancelledBefore;
    const lateUpstream = await recorded(`${tag}-late`);
    expect((await recorded(tag)) + lateUpstream).toBeGreaterThanOrEqual(servedBefore + cancelled);
    // Per isolate and state change: at most one early call after the change reached the upstream
    // (the first refusal stops them) and at most one was cancelled after the change returned.
    expect(lateUpstream).toBeLessThanOrEqual(1);
    expect(cancelledEarlyCalls() - cancelledAtChange).toBeLessThanOrEqual(1);

    // Every cancelled early call is in a log row (routing `early_cancelled`, status 499) at cost 0:
    // not billed to the key. Spend and logs agree, nothing stays reserved.
    const { usage, logged } = await settledSpend(row.id, 10_000);
    let logs = await keyLogs(row.id);
    const earlyRows = () => logs.filter((l) => l.routing.some((a) => a.error_type === "early_cancelled"));
    for (let i = 0; i < 100 && earlyRows().length < cancelled; i++) {
      await sleep(50);
      logs = await keyLogs(row.id);
    }
    expect(earlyRows()).toHaveLength(cancelled);
    for (const l of earlyRows()) {
      expect(l.statusCode).toBe(401);
      expect(l.costPico).toBe(0);
      expect(l.routing.filter((a) => a.error_type === "early_cancelled").every((a) => a.status_code === 499 && !a.succeeded)).toBe(true);
    }
    expect(usage).toBe(logged);
    expect((await keyStateStub(env, row.id).getSpend()).reserved).toBe(0n);
    if (rolledToken) {
      const { res, done } = chatVia(rolledToken, { stream: true, ...say("the new secret") });
      const r = await res;
      expect(r.status).toBe(200);
      expect(await r.text()).toContain("data: [DONE]");
      await done;
    }
  });

  it("a rolled master key: the old secret is refused on the first request after the roll returned, under load", async () => {
    latencies();
    const org = await seedOrg();
    const list = (await (await call("/v1/master/master-keys", { key: org.masterKey })).json()) as { masterKeys: Array<{ id: string }> };
    let rolledAt = Infinity;
    let stop = false;
    const late: number[] = [];
    let before = 0;
    const hammer = async () => {
      while (!stop) {
        const started = Date.now();
        const r = await call("/v1/master/organization", { key: org.masterKey });
        await r.text();
        if (started > rolledAt) late.push(r.status);
        else if (r.status === 200) before++;
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, hammer));
    for (let i = 0; i < 100 && before < 2; i++) await sleep(20);
    const rolled = await call(`/v1/master/master-keys/${list.masterKeys[0]!.id}/roll`, { method: "POST", key: org.masterKey });
    expect(rolled.status).toBe(200);
    rolledAt = Date.now();
    await sleep(500);
    stop = true;
    await load;
    expect(before).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((s) => s === 401)).toBe(true);
  });
});

describe("the other routes after a disable, objects and D1 primary far away", () => {
  it("models, embeddings, moderations and messages (served before) are refused on the first request after a disable returned", async () => {
    latencies();
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    const routes: Array<{ path: string; body: Record<string, unknown> | null }> = [
      { path: "/v1/models", body: null },
      { path: "/v1/embeddings", body: { model: "text-embedding-3-small", input: "hello" } },
      { path: "/v1/moderations", body: { model: "omni-moderation-latest", input: "hello" } },
      { path: "/v1/messages", body: { model: MODEL, max_tokens: 5, messages: [{ role: "user", content: "hello" }] } },
    ];
    const hit = async (r: (typeof routes)[number]) => {
      const { res, done } =
        r.body === null
          ? { res: Promise.resolve(app.fetch(new Request(`http://gw.test${r.path}`, { headers: { authorization: `Bearer ${token}` } }), far, createExecutionContext())), done: Promise.resolve() }
          : send(r.path, token, r.body);
      const answer = await res;
      const text = await answer.text();
      await done;
      return { status: answer.status, text };
    };
    for (const r of routes) expect((await hit(r)).status, r.path).toBe(200);
    const fingerprint = (await resolveGatewayKey(far, token)).key.fingerprint;
    const cached = getCachedContext(fingerprint)!;
    const current = (await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, row.id)).get())!;
    await updateKey(far, current, { status: "inactive" });
    cacheContext(fingerprint, cached);
    for (const r of routes) {
      const a = await hit(r);
      expect(a.status, r.path).toBe(401);
      expect(a.text, r.path).toMatch(/disabled/);
    }
  });
});
