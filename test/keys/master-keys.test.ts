import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg, rejection } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { apiKeys } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import { checkKey, resolveGatewayKey } from "../../src/auth/gateway-key";

interface KeyJson {
  id: string;
  token?: string;
  status: string;
  description: string;
  projectId: string;
  createdBy: string;
  usageLimit: string | null;
  periodUsageLimit: string | null;
  periodUsageDurationValue: number | null;
  periodUsageDurationUnit: string | null;
  usage?: string;
  periodUsage?: string;
  periodStartedAt?: string | null;
  expiresAt?: string | null;
  [k: string]: unknown;
}

const master = (org: SeededOrg, path: string, init: RequestInit = {}) => call(`/v1/master${path}`, { ...init, key: org.masterKey });
const post = (org: SeededOrg, path: string, body: unknown) => master(org, path, { method: "POST", ...json(body) });
const patch = (org: SeededOrg, path: string, body: unknown) => master(org, path, { method: "PATCH", ...json(body) });

async function errorOf(res: Response) {
  return ((await res.json()) as { error: { message: string; type: string; param: string | null; code: string } }).error;
}


async function createKey(org: SeededOrg, body: Record<string, unknown> = {}): Promise<KeyJson> {
  const res = await post(org, "/keys", { projectId: org.projectId, description: "k", ...body });
  expect(res.status).toBe(201);
  return ((await res.json()) as { apiKey: KeyJson }).apiKey;
}

describe("master bodies reject fields they do not apply", () => {
  it("expiresIn/expiresAt on a master key: 400 naming the field, saying TTL belongs to the dashboard", async () => {
    const org = await seedOrg();
    for (const field of ["expiresIn", "expiresAt"]) {
      const res = await post(org, "/keys", { projectId: org.projectId, description: "ttl", [field]: field === "expiresIn" ? 3600 : "2030-01-01T00:00:00Z" });
      expect(res.status, field).toBe(400);
      const err = await errorOf(res);
      expect(err.param).toBe(field);
      expect(err.code).toBe("unknown_field");
      expect(err.message).toContain(`'${field}'`);
      expect(err.message).toMatch(/dashboard/);
    }
    const k = await createKey(org);
    const res = await patch(org, `/keys/${k.id}`, { description: "x", expiresAt: null });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).param).toBe("expiresAt");
  });

  it("every master body names an unknown field with 400", async () => {
    const org = await seedOrg();
    const k = await createKey(org);
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ["POST", "/keys", { projectId: org.projectId, descripton: "typo" }],
      ["PATCH", `/keys/${k.id}`, { status: "active", colour: "red" }],
      ["POST", "/projects", { name: "p", bogus: 1 }],
      ["PATCH", "/organization", { bogus: true }],
      ["POST", "/teams", { name: "t", bogus: 1 }],
      ["POST", `/keys/${k.id}/iam`, { ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] }, bogus: 1 }],
    ];
    for (const [method, path, body] of cases) {
      const res = await master(org, path, { method, ...json(body) });
      expect(res.status, `${method} ${path}`).toBe(400);
      const err = await errorOf(res);
      expect(err.param, `${method} ${path}`).toMatch(/^(descripton|colour|bogus)$/);
      expect(err.message).toMatch(/Unknown field/);
    }
  });
});

describe("POST /v1/master/keys", () => {
  it("creates a key with limits and returns the secret once", async () => {
    const org = await seedOrg();
    const key = await createKey(org, {
      description: "ci",
      usageLimit: "25.50",
      periodUsageLimit: "5",
      periodUsageDurationValue: 1,
      periodUsageDurationUnit: "week",
    });
    expect(key.token).toMatch(/^swb_[A-Za-z0-9]{40}$/);
    expect(key).toMatchObject({ description: "ci", status: "active", projectId: org.projectId, createdBy: org.ownerMemberId, usageLimit: "25.5", periodUsageLimit: "5", periodUsageDurationValue: 1, periodUsageDurationUnit: "week" });
    expect(JSON.stringify(key)).not.toMatch(/fingerprint/i);
    const ctx = await resolveGatewayKey(env, key.token!);
    expect(ctx.key.id).toBe(key.id);

    const list = (await (await master(org, `/keys?projectId=${org.projectId}`)).json()) as { apiKeys: KeyJson[] };
    const listed = list.apiKeys.find((k) => k.id === key.id);
    expect(listed).toBeDefined();
    expect(list.apiKeys.every((k) => k.token === undefined && k.fingerprint === undefined)).toBe(true);
    expect(JSON.stringify(list)).not.toContain(key.token);
  });

  it("creates a coding-plan key for another member, with IAM rules", async () => {
    const org = await seedOrg();
    const m = await post(org, "/members", { email: `dev-${crypto.randomUUID().slice(0, 6)}@example.test`, name: "Dev", role: "developer" });
    expect(m.status).toBe(201);
    const member = ((await m.json()) as { member: { id: string } }).member;
    const key = await createKey(org, { memberId: member.id, kind: "coding-plan", iamRules: [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }] });
    expect(key).toMatchObject({ createdBy: member.id, kind: "coding-plan" });
    const rules = (await (await master(org, `/keys/${key.id}/iam`)).json()) as { rules: Array<{ ruleType: string }> };
    expect(rules.rules.map((r) => r.ruleType)).toEqual(["allow_models"]);
  });

  it("validates amounts, the window and its three fields together", async () => {
    const org = await seedOrg();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ usageLimit: 10 }, "usageLimit"],
      [{ usageLimit: "ten" }, "usageLimit"],
      [{ usageLimit: "-1" }, "usageLimit"],
      [{ periodUsageLimit: "5" }, "periodUsageDurationValue"],
      [{ periodUsageLimit: "5", periodUsageDurationValue: 1 }, "periodUsageDurationUnit"],
      [{ periodUsageLimit: "5", periodUsageDurationValue: 13, periodUsageDurationUnit: "month" }, "periodUsageDurationValue"],
      [{ periodUsageLimit: "5", periodUsageDurationValue: 0, periodUsageDurationUnit: "hour" }, "periodUsageDurationValue"],
      [{ periodUsageLimit: "5", periodUsageDurationValue: 1, periodUsageDurationUnit: "year" }, "periodUsageDurationUnit"],
      [{ iamRules: [{ ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.1"] } }] }, "iamRules.0.ruleValue.ipCidrs.0"],
    ];
    for (const [body, param] of cases) {
      const res = await post(org, "/keys", { projectId: org.projectId, description: "x", ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await errorOf(res)).param, JSON.stringify(body)).toBe(param);
    }
    // the extremes of the window are accepted
    await createKey(org, { periodUsageLimit: "1", periodUsageDurationValue: 1, periodUsageDurationUnit: "hour" });
    await createKey(org, { periodUsageLimit: "1", periodUsageDurationValue: 12, periodUsageDurationUnit: "month" });
  });

  it("refuses projects and members of another organization (404) and IP rules below enterprise (403)", async () => {
    const org = await seedOrg();
    const other = await seedOrg();
    expect((await post(org, "/keys", { projectId: other.projectId, description: "x" })).status).toBe(404);
    expect((await post(org, "/keys", { projectId: org.projectId, description: "x", memberId: other.ownerMemberId })).status).toBe(404);
    const pro = await seedOrg({ plan: "pro" });
    const res = await post(pro, "/keys", { projectId: pro.projectId, description: "x", iamRules: [{ ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8"] } }] });
    expect(res.status).toBe(403);
  });

  it("needs a valid master key", async () => {
    const org = await seedOrg();
    expect((await call("/v1/master/keys", { method: "POST", ...json({ projectId: org.projectId, description: "x" }) })).status).toBe(401);
    expect((await call("/v1/master/keys", { key: org.key })).status).toBe(401);
  });
});

describe("GET/PATCH/DELETE /v1/master/keys/{id}", () => {
  it("shows usage as decimal strings and the window fields", async () => {
    const org = await seedOrg();
    const key = await createKey(org, { periodUsageLimit: "5", periodUsageDurationValue: 2, periodUsageDurationUnit: "day" });
    const res = await master(org, `/keys/${key.id}`);
    expect(res.status).toBe(200);
    const { apiKey } = (await res.json()) as { apiKey: KeyJson };
    expect(apiKey).toMatchObject({ id: key.id, usage: "0", periodUsage: "0", periodStartedAt: null, expiresAt: null });
    expect(apiKey.token).toBeUndefined();
    const other = await seedOrg();
    expect((await master(other, `/keys/${key.id}`)).status).toBe(404);
  });

  it("renames without touching the secret; disable and enable take effect immediately", async () => {
    const org = await seedOrg();
    const key = await createKey(org);
    const ctx = await resolveGatewayKey(env, key.token!);
    let res = await patch(org, `/keys/${key.id}`, { description: "renamed" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey.description).toBe("renamed");
    expect((await checkKey(env, ctx)).key.description).toBe("renamed");

    res = await patch(org, `/keys/${key.id}`, { status: "inactive" });
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey.status).toBe("inactive");
    expect(await rejection(checkKey(env, ctx))).toMatchObject({ status: 401, code: "key_disabled" });
    expect(await rejection(resolveGatewayKey(env, key.token!))).toMatchObject({ status: 401, code: "key_disabled" });

    res = await patch(org, `/keys/${key.id}`, { status: "active" });
    expect(res.status).toBe(200);
    const again = await resolveGatewayKey(env, key.token!);
    expect((await checkKey(env, again)).key.status).toBe("active");
  });

  it("sets and clears limits with null; the window fields stay consistent", async () => {
    const org = await seedOrg();
    const key = await createKey(org, { usageLimit: "3", periodUsageLimit: "1", periodUsageDurationValue: 1, periodUsageDurationUnit: "day" });
    let res = await patch(org, `/keys/${key.id}`, { usageLimit: null, periodUsageLimit: "2" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey).toMatchObject({ usageLimit: null, periodUsageLimit: "2", periodUsageDurationUnit: "day" });
    res = await patch(org, `/keys/${key.id}`, { periodUsageDurationUnit: null });
    expect(res.status).toBe(400);
    res = await patch(org, `/keys/${key.id}`, { periodUsageLimit: null, periodUsageDurationValue: null, periodUsageDurationUnit: null });
    expect(((await res.json()) as { apiKey: KeyJson }).apiKey).toMatchObject({ periodUsageLimit: null, periodUsageDurationValue: null, periodUsageDurationUnit: null });
    expect((await patch(org, `/keys/${key.id}`, {})).status).toBe(400);
    expect((await patch(org, `/keys/${key.id}`, { status: "deleted" })).status).toBe(400);
  });

  it("soft-deletes: the key answers 401 deleted, disappears from lists and cannot be patched", async () => {
    const org = await seedOrg();
    const key = await createKey(org);
    const ctx = await resolveGatewayKey(env, key.token!);
    const res = await master(org, `/keys/${key.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveProperty("message");
    expect(await rejection(checkKey(env, ctx))).toMatchObject({ status: 401, code: "key_deleted" });
    expect(await rejection(resolveGatewayKey(env, key.token!))).toMatchObject({ status: 401, code: "key_deleted" });
    expect((await master(org, `/keys/${key.id}`)).status).toBe(404);
    expect((await patch(org, `/keys/${key.id}`, { description: "x" })).status).toBe(404);
    const list = (await (await master(org, "/keys")).json()) as { apiKeys: KeyJson[] };
    expect(list.apiKeys.some((k) => k.id === key.id)).toBe(false);
  });

  it("an expired key is refused (401 expired) and cannot be enabled through the master API (400)", async () => {
    const org = await seedOrg();
    const { row, token } = await addKey(org, { expiresAt: Date.now() + 60_000 });
    await getDb(env.DB).update(apiKeys).set({ expiresAt: Date.now() - 1000 }).where(eq(apiKeys.id, row.id));
    expect(await rejection(resolveGatewayKey(env, token))).toMatchObject({ status: 401, code: "key_expired" });
    expect((await patch(org, `/keys/${row.id}`, { status: "inactive" })).status).toBe(200);
    const res = await patch(org, `/keys/${row.id}`, { status: "active" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/expired/);
    const detail = (await (await master(org, `/keys/${row.id}`)).json()) as { apiKey: KeyJson };
    expect(detail.apiKey).toMatchObject({ status: "inactive", expired: true });
  });

  it("the playground key cannot be deleted", async () => {
    const org = await seedOrg();
    const res = await master(org, `/keys/${org.playgroundKeyId}`, { method: "DELETE" });
    expect(res.status).toBe(403);
    await resolveGatewayKey(env, org.playgroundKey);
  });
});

describe("IAM rules through the master API", () => {
  it("key rules: create, list, patch, delete; each change reaches the key immediately", async () => {
    const org = await seedOrg();
    const ctx = await resolveGatewayKey(env, org.key);
    let res = await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.1/32", "::1/128"] } });
    expect(res.status).toBe(201);
    const { rule } = (await res.json()) as { rule: { id: string; status: string; ruleValue: { ipCidrs: string[] } } };
    expect(rule.status).toBe("active");
    expect((await checkKey(env, ctx)).rules.key).toHaveLength(1);

    res = await patch(org, `/keys/${org.keyId}/iam/${rule.id}`, { status: "inactive" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { rule: { status: string } }).rule.status).toBe("inactive");
    expect((await checkKey(env, ctx)).rules.key).toHaveLength(0);

    res = await patch(org, `/keys/${org.keyId}/iam/${rule.id}`, { status: "active", ruleValue: { ipCidrs: ["10.0.0.0/33"] } });
    expect(res.status).toBe(400);

    const list = (await (await master(org, `/keys/${org.keyId}/iam`)).json()) as { rules: unknown[] };
    expect(list.rules).toHaveLength(1);
    res = await master(org, `/keys/${org.keyId}/iam/${rule.id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect((await (await master(org, `/keys/${org.keyId}/iam`)).json()) as { rules: unknown[] }).toEqual({ rules: [] });
    expect((await master(org, `/keys/${org.keyId}/iam/${rule.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("validates rule bodies", async () => {
    const org = await seedOrg();
    const bad: unknown[] = [
      { ruleType: "allow_models", ruleValue: { providers: ["openai"] } },
      { ruleType: "allow_models", ruleValue: { models: [] } },
      { ruleType: "allow_models", ruleValue: { models: ["a"], providers: ["openai"] } },
      { ruleType: "allow_providers", ruleValue: { providers: ["nope-provider"] } },
      { ruleType: "allow_pricing", ruleValue: { pricingType: "cheap" } },
      { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.1"] } },
      { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["2001:db8::1"] } },
      { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["300.0.0.0/8"] } },
      { ruleType: "allow_everything", ruleValue: {} },
      { ruleType: "allow_models", ruleValue: { models: ["a"] }, status: "paused" },
      // Models the catalogue does not know, and custom providers the organization does not have.
      { ruleType: "deny_models", ruleValue: { models: ["acme/llama"] } },
      { ruleType: "allow_models", ruleValue: { models: ["gpt-4o-typo"] } },
    ];
    for (const body of bad) {
      const res = await post(org, `/keys/${org.keyId}/iam`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const body of [
      { ruleType: "allow_providers", ruleValue: { providers: ["openai", "custom", "custom:acme"] } },
      { ruleType: "deny_pricing", ruleValue: { pricingType: "paid" } },
      { ruleType: "deny_models", ruleValue: { models: ["openai/gpt-4o"] } },
    ]) {
      expect((await post(org, `/keys/${org.keyId}/iam`, body)).status, JSON.stringify(body)).toBe(201);
    }
  });

  it("IP rules need the enterprise plan (403), other rules do not", async () => {
    const org = await seedOrg({ plan: "pro" });
    expect((await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8"] } })).status).toBe(403);
    expect((await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_models", ruleValue: { models: ["gpt-4o"] } })).status).toBe(201);
  });

  it("member rules by id or e-mail reach every key the member created", async () => {
    const org = await seedOrg();
    const ctx = await resolveGatewayKey(env, org.key);
    let res = await post(org, `/members/${encodeURIComponent(org.ownerEmail)}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o"] } });
    expect(res.status).toBe(201);
    const fresh = await checkKey(env, ctx);
    expect(fresh.rules.member.map((r) => r.ruleType)).toEqual(["deny_models"]);
    res = await master(org, `/members/${org.ownerMemberId}/iam`);
    expect(((await res.json()) as { rules: unknown[] }).rules).toHaveLength(1);
    expect((await master(org, `/members/nobody@example.test/iam`)).status).toBe(404);
    const other = await seedOrg();
    expect((await master(other, `/members/${org.ownerMemberId}/iam`)).status).toBe(404);
  });

  it("team rules reach the keys of the team's members", async () => {
    const org = await seedOrg();
    const devRes = await post(org, "/members", { email: `dev-${crypto.randomUUID().slice(0, 6)}@example.test`, name: "Dev", role: "developer" });
    const dev = ((await devRes.json()) as { member: { id: string } }).member;
    const key = await createKey(org, { memberId: dev.id });
    const teamRes = await post(org, "/teams", { name: "platform" });
    expect(teamRes.status).toBe(201);
    const team = ((await teamRes.json()) as { team: { id: string } }).team;
    expect((await post(org, `/teams/${team.id}/members`, { member: dev.id })).status).toBe(201);
    const ctx = await resolveGatewayKey(env, key.token!);
    const res = await post(org, `/teams/${team.id}/iam`, { ruleType: "allow_providers", ruleValue: { providers: ["anthropic"] } });
    expect(res.status).toBe(201);
    const fresh = await checkKey(env, ctx);
    expect(fresh.rules.team.map((r) => r.ruleType)).toEqual(["allow_providers"]);
    expect((await master(org, `/teams/team_nope/iam`)).status).toBe(404);
  });
});
