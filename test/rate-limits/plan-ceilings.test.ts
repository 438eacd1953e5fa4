/**
 * Plan rate limits are ceilings: an organization's master key (or an owner on the dashboard) may
 * lower its limits, never set them above its plan's values; only the operator raises them
 * (`PATCH /v1/admin/organizations/{id}/rate-limits`). A value stored above the ceiling (before it
 * was enforced) is capped at admission.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { call, json, seedOrg, TEST_SECRETS, type SeededOrg } from "../helpers/fixtures";
import { signIn } from "../dashboard/session";
import { getDb } from "../../src/db/client";
import { organizations } from "../../src/db/schema";
import { bumpKeyVersions } from "../../src/keys/sync";
import { PLAN_RATE_LIMITS } from "../../src/rate-limits/plans";

type Json = Record<string, any>;
const FREE = PLAN_RATE_LIMITS.free;

const patchOrg = (org: SeededOrg, body: unknown) => call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json(body) });
const operator = (org: SeededOrg, body: unknown) =>
  call(`/v1/admin/organizations/${org.orgId}/rate-limits`, { method: "PATCH", key: TEST_SECRETS.ADMIN_TOKEN, ...json(body) });
const rateLimitsOf = async (org: SeededOrg) => ((await (await call("/v1/master/organization", { key: org.masterKey })).json()) as Json).organization.rateLimits;

async function expectAbovePlan(res: Response, field: string): Promise<void> {
  expect(res.status).toBe(400);
  const { error } = (await res.json()) as Json;
  expect(error).toMatchObject({ type: "invalid_request_error", code: "rate_limit_above_plan", param: `rateLimits.${field}` });
  expect(error.message).toMatch(/only the operator raises it/);
}

/** Tests that count within one window start at least 5 s before it ends. */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((r) => setTimeout(r, left + 20));
}

describe("plan rate limits are ceilings", () => {
  it("a free organization's master key cannot raise its limits above the plan's (400); at or below is fine", async () => {
    const org = await seedOrg({ plan: "free" });
    await expectAbovePlan(await patchOrg(org, { rateLimits: { requestsPerMinute: 1_000_000_000 } }), "requestsPerMinute");
    await expectAbovePlan(await patchOrg(org, { rateLimits: { requestsPerMinute: FREE.requestsPerMinute + 1 } }), "requestsPerMinute");
    await expectAbovePlan(await patchOrg(org, { rateLimits: { tokensPerMinute: FREE.tokensPerMinute + 1 } }), "tokensPerMinute");
    expect(await rateLimitsOf(org)).toMatchObject({ requestsPerMinute: FREE.requestsPerMinute, tokensPerMinute: FREE.tokensPerMinute });
    const lower = await patchOrg(org, { rateLimits: { requestsPerMinute: FREE.requestsPerMinute, tokensPerMinute: 1000 } });
    expect(lower.status).toBe(200);
    expect(((await lower.json()) as Json).organization.rateLimits).toEqual({ requestsPerMinute: FREE.requestsPerMinute, tokensPerMinute: 1000, planDefaults: FREE, max: FREE });
  });

  it("the dashboard's organization API refuses the same", async () => {
    const org = await seedOrg({ plan: "free" });
    const owner = await signIn(org.ownerEmail, org.ownerPassword);
    const res = await call("/api/organization", {
      method: "PATCH",
      headers: { cookie: owner.cookie, "x-csrf-token": owner.csrf, "content-type": "application/json" },
      body: JSON.stringify({ rateLimits: { requestsPerMinute: 1_000_000_000 } }),
    });
    await expectAbovePlan(res, "requestsPerMinute");
  });

  it("a limit stored above the plan's is capped at admission: 60 requests a minute are served, the 61st is 429", async () => {
    const org = await seedOrg({ plan: "free" });
    // as an organization could store it before ceilings were enforced
    await getDb(env.DB).update(organizations).set({ requestsPerMinute: 1_000_000_000 }).where(eq(organizations.id, org.orgId));
    await bumpKeyVersions(env, { organizationId: org.orgId });
    expect((await rateLimitsOf(org)).requestsPerMinute).toBe(FREE.requestsPerMinute);
    await freshWindow();
    const statuses: number[] = [];
    for (let i = 0; i < FREE.requestsPerMinute + 1; i++) {
      const res = await call("/v1/models", { key: org.key });
      if (i === 0) expect(res.headers.get("x-ratelimit-limit")).toBe(String(FREE.requestsPerMinute));
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(FREE.requestsPerMinute);
    expect(statuses.at(-1)).toBe(429);
  });

  it("the operator raises the ceiling; the organization may then set up to it, not above", async () => {
    const org = await seedOrg({ plan: "free" });
    expect((await operator(org, { requestsPerMinute: 500 })).status).toBe(200);
    expect(await rateLimitsOf(org)).toEqual({
      requestsPerMinute: 500,
      tokensPerMinute: FREE.tokensPerMinute,
      planDefaults: FREE,
      max: { requestsPerMinute: 500, tokensPerMinute: FREE.tokensPerMinute },
    });
    expect((await patchOrg(org, { rateLimits: { requestsPerMinute: 400 } })).status).toBe(200);
    await expectAbovePlan(await patchOrg(org, { rateLimits: { requestsPerMinute: 501 } }), "requestsPerMinute");
    const res = await call("/v1/models", { key: org.key });
    expect(res.headers.get("x-ratelimit-limit")).toBe("400");
    // back to the plan's: the organization's own 400 is capped at 60
    expect((await operator(org, { requestsPerMinute: null })).status).toBe(200);
    expect((await rateLimitsOf(org)).requestsPerMinute).toBe(FREE.requestsPerMinute);
    // only the operator: a master key on the admin API is refused
    const asMaster = await call(`/v1/admin/organizations/${org.orgId}/rate-limits`, { method: "PATCH", key: org.masterKey, ...json({ requestsPerMinute: 10_000 }) });
    expect(asMaster.status).toBe(401);
    expect((await operator(org, {})).status).toBe(400);
    expect((await operator(org, { requestsPerMinute: 0 })).status).toBe(400);
  });
});
