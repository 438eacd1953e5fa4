/**
 * Credits after bootstrap: operator top-ups and corrections with an
 * idempotency key, the ledger owners read, the OrgCredits object told at once (a drained
 * organization is served on its next request), the low-balance e-mail, and free models at a zero
 * balance.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { call, json, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { chat, setProject, user } from "../chat/helpers";
import { signIn } from "../dashboard/session";
import { orgCreditsStub } from "../../src/durable-objects/org-credits";
import { getDb } from "../../src/db/client";
import { notifications } from "../../src/db/schema";
import { captureMail, sent } from "../helpers/mail";

type Json = Record<string, any>;
captureMail();

const topUp = (orgId: string, body: Json, token: string = TEST_SECRETS.ADMIN_TOKEN) =>
  call(`/v1/admin/organizations/${orgId}/credits`, { method: "POST", key: token, ...json(body) });

const ledger = async (org: SeededOrg) => {
  const res = await call("/v1/master/credits", { key: org.masterKey });
  expect(res.status).toBe(200);
  return (await res.json()) as { balance: string; lowCreditsThreshold: string | null; entries: Json[] };
};

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("admin top-up", () => {
  it("a drained organization (402) is served right after a top-up: the credits object knows at once", async () => {
    const org = await seedOrg({ creditsUsd: 0 });
    await setProject(org.projectId, { mode: "credits" });
    expect((await chat(org.key, { model: "gpt-4o-mini", messages: user("drained"), max_tokens: 16 })).status).toBe(402);
    const res = await topUp(org.orgId, { amount: "5.00", reason: "invoice 42", idempotencyKey: "inv-42" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Json;
    expect(body.entry).toMatchObject({ amount: "5", balanceAfter: "5", reason: "invoice 42", source: "admin", idempotencyKey: "inv-42" });
    expect(body.balance).toBe("5");
    // the organization's admission object has the new balance without waiting for its refresh
    const view = await orgCreditsStub(env, org.orgId).view(org.orgId);
    expect(view.balance).toBe(5_000_000_000_000n);
    const ok = await chat(org.key, { model: "gpt-4o-mini", messages: user("topped up"), max_tokens: 16 });
    expect(ok.status).toBe(200);
  });

  it("the same idempotency key twice is one entry; another amount under it is 409; corrections are negative", async () => {
    const org = await seedOrg({ creditsUsd: 10 });
    const first = await topUp(org.orgId, { amount: "2.50", reason: "top-up", idempotencyKey: "k1" });
    expect(first.status).toBe(201);
    const again = await topUp(org.orgId, { amount: "2.50", reason: "top-up", idempotencyKey: "k1" });
    expect(again.status).toBe(200);
    const againBody = (await again.json()) as Json;
    expect(againBody.created).toBe(false);
    expect(againBody.entry.id).toBe(((await first.json()) as Json).entry.id);
    // concurrent replays add once too
    const burst = await Promise.all([1, 2, 3].map(() => topUp(org.orgId, { amount: "1", reason: "burst", idempotencyKey: "k2" })));
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    const reused = await topUp(org.orgId, { amount: "3", reason: "other", idempotencyKey: "k1" });
    expect(reused.status).toBe(409);
    expect(((await reused.json()) as Json).error.code).toBe("idempotency_key_reused");
    const correction = await topUp(org.orgId, { amount: "-0.75", reason: "double-charged refund reversed", idempotencyKey: "k3" });
    expect(correction.status).toBe(201);
    const l = await ledger(org);
    expect(l.balance).toBe("12.75");
    expect(l.entries.map((e) => e.amount)).toEqual(["-0.75", "1", "2.5", "10"]);
    expect(l.entries.at(-1)).toMatchObject({ source: "bootstrap", reason: "Starting balance" });
  });

  it("bad input is 400 naming the field; a wrong token 401; an unknown organization 404", async () => {
    const org = await seedOrg();
    for (const [body, param] of [
      [{ amount: 5, reason: "r", idempotencyKey: "a" }, "amount"],
      [{ amount: "1e3", reason: "r", idempotencyKey: "a" }, "amount"],
      [{ amount: "0", reason: "r", idempotencyKey: "a" }, "amount"],
      [{ amount: "9000.01", reason: "r", idempotencyKey: "a" }, "amount"],
      [{ amount: "1", reason: "", idempotencyKey: "a" }, "reason"],
      [{ amount: "1", reason: "r" }, "idempotencyKey"],
    ] as const) {
      const res = await topUp(org.orgId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as Json).error.param).toBe(param);
    }
    expect((await topUp(org.orgId, { amount: "1", reason: "r", idempotencyKey: "a" }, org.masterKey)).status).toBe(401);
    expect((await topUp("org_missing", { amount: "1", reason: "r", idempotencyKey: "a" })).status).toBe(404);
  });
});

describe("the ledger in the dashboard", () => {
  it("owners see balance and entries (session API and Platform page); developers get 403", async () => {
    const org = await seedOrg({ creditsUsd: 3 });
    expect((await topUp(org.orgId, { amount: "4", reason: "card payment", idempotencyKey: "p1" })).status).toBe(201);
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await call("/api/organization/credits", { headers: { cookie: owner.cookie } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).balance).toBe("7");
    const page = await (await call("/dashboard/platform", { headers: { cookie: owner.cookie } })).text();
    expect(page).toContain("Credits");
    expect(page).toContain("card payment");
    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    expect((await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email, name: "D", role: "developer", password: "another long password" }) })).status).toBe(201);
    const dev = await signIn(email, "another long password");
    expect((await call("/api/organization/credits", { headers: { cookie: dev.cookie } })).status).toBe(403);
  });
});

describe("low balance alert", () => {
  it("owners who accepted get one e-mail when the balance falls below the threshold; again only after a top-up", async () => {
    const org = await seedOrg({ creditsUsd: 12 });
    const patch = await call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json({ notifications: { lowCreditsThreshold: "10" } }) });
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as Json).organization.notifications.lowCreditsThreshold).toBe("10");
    // a pending (not accepted) owner gets nothing
    const pending = `pending-${crypto.randomUUID().slice(0, 8)}@example.test`;
    expect((await call("/v1/master/members", { method: "POST", key: org.masterKey, ...json({ email: pending, name: "P", role: "owner" }) })).status).toBe(201);
    sent.length = 0;
    expect((await topUp(org.orgId, { amount: "-5", reason: "correction", idempotencyKey: "c1" })).status).toBe(201);
    const alert = await until(
      async () =>
        (await getDb(env.DB).select().from(notifications).where(and(eq(notifications.organizationId, org.orgId), eq(notifications.kind, "credits_low"))))[0]?.emailedAt
          ? true
          : undefined,
      "the low-credit notification",
    );
    expect(alert).toBe(true);
    // This organization's people only: another test's organization may fall below the default threshold meanwhile.
    const mails = sent.filter((m) => m.raw.includes("Subject: Credit balance low") && [org.ownerEmail, pending].includes(m.to));
    expect(mails.map((m) => m.to)).toEqual([org.ownerEmail]);
    // still below: a second read alerts no more
    expect((await topUp(org.orgId, { amount: "-1", reason: "correction", idempotencyKey: "c2" })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 200));
    expect(sent.filter((m) => m.raw.includes("Subject: Credit balance low") && m.to === org.ownerEmail)).toHaveLength(1);
    // a top-up that stays below the threshold opens a new window: alerted again
    expect((await topUp(org.orgId, { amount: "1", reason: "small top-up", idempotencyKey: "t1" })).status).toBe(201);
    await until(async () => (sent.filter((m) => m.raw.includes("Subject: Credit balance low") && m.to === org.ownerEmail).length === 2 ? true : undefined), "the second alert");
  });
});

describe("free models at a zero balance", () => {
  it("a model priced at zero is served with no credits; a paid one is 402", async () => {
    const org = await seedOrg({ creditsUsd: 0 });
    await setProject(org.projectId, { mode: "credits" });
    const free = await chat(org.key, { model: "glm-4.5-flash", messages: user("free please") });
    expect(free.status, await free.clone().text()).toBe(200);
    expect((await chat(org.key, { model: "gpt-4o-mini", messages: user("paid"), max_tokens: 16 })).status).toBe(402);
  });
});
