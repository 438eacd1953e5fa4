/**
 * Webhooks: created with a secret shown once, deliveries signed per Standard Webhooks (verified
 * with the `standardwebhooks` package), retried with backoff until the receiver answers (it gets
 * the event once), a delivery log, organization scoping, the outbound-address guard, and the
 * alert paths that emit events (credits low, key limits, keys about to expire).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { alertLowCredits } from "../../src/billing/low-credits";
import { processBudgetAlerts } from "../../src/billing/budget-alerts";
import { resolveGatewayKey } from "../../src/auth/gateway-key";
import { notifyExpiringKeys } from "../../src/keys/expiring";
import { chat, setProject, user } from "../chat/helpers";
import { nextArrival } from "../resilience/helpers";

type Json = Record<string, any>;
interface Received { path: string; headers: Record<string, string>; body: string; status: number }

const receiver = (name: string) => `${env.FAKE_UPSTREAM_URL}/receiver/${name}`;
const received = async (name: string): Promise<Received[]> => (await (await fetch(receiver(name))).json()) as Received[];

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createHook(o: SeededOrg, url: string, events: string[]): Promise<{ id: string; secret: string; url: string; events: string[] }> {
  const res = await call("/v1/master/webhooks", { method: "POST", key: o.masterKey, ...json({ url, events }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).webhook;
}

/** Verifies a received request with the standardwebhooks package; returns the payload. */
function verified(secret: string, r: Received): Json {
  const headers = { "webhook-id": r.headers["webhook-id"]!, "webhook-timestamp": r.headers["webhook-timestamp"]!, "webhook-signature": r.headers["webhook-signature"]! };
  return new Webhook(secret).verify(r.body, headers) as Json;
}

describe("webhooks", () => {
  it("creates a webhook with a whsec_ secret shown once; lists, tests and deletes it", async () => {
    const o = await seedOrg();
    const name = `wh-${crypto.randomUUID().slice(0, 8)}`;
    const hook = await createHook(o, receiver(name), ["credits.low", "key.limit_reached"]);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(hook).toMatchObject({ url: receiver(name), events: ["credits.low", "key.limit_reached"] });
    const list = (await (await call("/v1/master/webhooks", { key: o.masterKey })).json()) as Json;
    expect(list.webhooks).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(hook.secret.slice(6));

    const test = await call(`/v1/master/webhooks/${hook.id}/test`, { method: "POST", key: o.masterKey });
    expect(test.status).toBe(202);
    const got = await until(() => received(name), (r) => r.length >= 1);
    const payload = verified(hook.secret, got[0]!);
    expect(payload).toMatchObject({ type: "webhook.test", data: { webhookId: hook.id } });
    expect(typeof payload.timestamp).toBe("string");
    expect(() => new Webhook(`whsec_${btoa("another secret of 24 b!")}`).verify(got[0]!.body, got[0]!.headers as Record<string, string>)).toThrow();

    const other = await seedOrg();
    expect((await call(`/v1/master/webhooks/${hook.id}/test`, { method: "POST", key: other.masterKey })).status).toBe(404);
    expect((await call(`/v1/master/webhooks/${hook.id}`, { method: "DELETE", key: other.masterKey })).status).toBe(404);
    expect((await call(`/v1/master/webhooks/${hook.id}`, { method: "DELETE", key: o.masterKey })).status).toBe(200);
    expect(((await (await call("/v1/master/webhooks", { key: o.masterKey })).json()) as Json).webhooks).toEqual([]);
  });

  it("retries a receiver that fails three times; it gets the event once, and the log says so", async () => {
    const o = await seedOrg();
    const name = `wh-retry-${crypto.randomUUID().slice(0, 8)}`;
    const hook = await createHook(o, `${receiver(name)}/fail=3`, ["credits.low"]);
    await alertLowCredits(env, o.orgId, 1_000_000n, 5_000_000_000_000n, Date.now());
    const all = await until(() => received(name), (r) => r.some((x) => x.status === 200));
    await new Promise((ok) => setTimeout(ok, 500));
    const final = await received(name);
    expect(final.map((r) => r.status)).toEqual([503, 503, 503, 200]);
    // The same webhook-id on every attempt: one event.
    expect(new Set(final.map((r) => r.headers["webhook-id"])).size).toBe(1);
    const payload = verified(hook.secret, all.find((r) => r.status === 200)!);
    expect(payload).toMatchObject({ type: "credits.low", data: { organizationId: o.orgId, threshold: "5" } });
    const log = await until(
      async () => ((await (await call(`/v1/master/webhooks/${hook.id}/deliveries`, { key: o.masterKey })).json()) as Json).deliveries,
      (d: Json[]) => d[0]?.status === "delivered",
    );
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ type: "credits.low", status: "delivered", attempts: 4, responseCode: 200 });
  });

  it("credits.low without a threshold set: the default one, crossed by spend, delivers exactly once", async () => {
    const o = await seedOrg();
    await setProject(o.projectId, { mode: "credits" });
    // A pico-dollar above the default $5: the first paid request's settlement takes the balance below.
    await env.DB.prepare("UPDATE organizations SET credits_pico = ?1 WHERE id = ?2").bind("5000000000001", o.orgId).run();
    const shown = ((await (await call("/v1/master/organization", { key: o.masterKey })).json()) as Json).organization;
    expect(shown.notifications.lowCreditsThreshold).toBe("5");
    const name = `wh-low-${crypto.randomUUID().slice(0, 8)}`;
    const hook = await createHook(o, receiver(name), ["credits.low"]);
    const spend = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await nextArrival();
        const res = await chat(o.key, { model: "gpt-4o-mini", messages: user(`spend ${crypto.randomUUID()}`), max_tokens: 16 });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    };
    await spend(3);
    const got = await until(() => received(name), (r) => r.length >= 1);
    // More spend below the threshold, in the same window (no top-up): no second event.
    await spend(3);
    await new Promise((ok) => setTimeout(ok, 1000));
    const all = await received(name);
    expect(all).toHaveLength(1);
    const payload = verified(hook.secret, got[0]!);
    expect(payload).toMatchObject({ type: "credits.low", data: { organizationId: o.orgId, threshold: "5" } });
    expect(Number(payload.data.balance)).toBeLessThan(5);
  });

  it("credits.low stays silent when the organization turned the alert off (null)", async () => {
    const o = await seedOrg();
    await setProject(o.projectId, { mode: "credits" });
    const off = await call("/v1/master/organization", { method: "PATCH", key: o.masterKey, ...json({ notifications: { lowCreditsThreshold: null } }) });
    expect(off.status).toBe(200);
    expect(((await off.json()) as Json).organization.notifications.lowCreditsThreshold).toBeNull();
    await env.DB.prepare("UPDATE organizations SET credits_pico = ?1 WHERE id = ?2").bind("5000000000001", o.orgId).run();
    const name = `wh-off-${crypto.randomUUID().slice(0, 8)}`;
    await createHook(o, receiver(name), ["credits.low"]);
    const res = await chat(o.key, { model: "gpt-4o-mini", messages: user(`spend ${crypto.randomUUID()}`), max_tokens: 16 });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await new Promise((ok) => setTimeout(ok, 1000));
    expect(await received(name)).toEqual([]);
  });

  it("sends key.limit_reached and key.expiring to subscribed webhooks only", async () => {
    const o = await seedOrg();
    const name = `wh-keys-${crypto.randomUUID().slice(0, 8)}`;
    const quiet = `wh-quiet-${crypto.randomUUID().slice(0, 8)}`;
    const hook = await createHook(o, receiver(name), ["key.limit_reached", "key.expiring"]);
    await createHook(o, receiver(quiet), ["provider.down"]);
    const auth = await resolveGatewayKey(env, o.key);
    await processBudgetAlerts(env, auth, [{ limit: "all_time", windowStart: 0, percentBefore: 95, percent: 100 }]);
    const expiry = await call(`/v1/master/keys/${o.keyId}`, { method: "PATCH", key: o.masterKey, ...json({ description: "soon gone" }) });
    expect(expiry.status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ?1 WHERE id = ?2").bind(Date.now() + 3 * 86_400_000, o.keyId).run();
    expect(await notifyExpiringKeys(env, Date.now())).toBeGreaterThanOrEqual(1);
    expect(await notifyExpiringKeys(env, Date.now())).toBe(0); // once per key and expiry
    const got = await until(() => received(name), (r) => r.length >= 2);
    const types = got.map((r) => verified(hook.secret, r).type).sort();
    expect(types).toEqual(["key.expiring", "key.limit_reached"]);
    expect(got.map((r) => verified(hook.secret, r).data.apiKeyId)).toEqual([o.keyId, o.keyId]);
    expect(await received(quiet)).toEqual([]);
  });

  it("validates the body and refuses addresses the outbound guard refuses", async () => {
    const o = await seedOrg();
    const bad = await call("/v1/master/webhooks", { method: "POST", key: o.masterKey, ...json({ url: "ftp://hooks.example.com", events: ["credits.low"] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.param).toBe("url");
    const unknown = await call("/v1/master/webhooks", { method: "POST", key: o.masterKey, ...json({ url: "https://hooks.example.com", events: ["nope"] }) });
    expect(unknown.status).toBe(400);
    expect((await call("/v1/master/webhooks", { method: "POST", key: o.masterKey, ...json({ url: "https://hooks.example.com", events: [] }) })).status).toBe(400);
  });
});
