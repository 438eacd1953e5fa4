import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";

const chat = (key: string, model: string, headers: Record<string, string> = {}) =>
  call("/v1/chat/completions", {
    method: "POST",
    key,
    headers: { "content-type": "application/json", "x-no-cache": "true", ...headers },
    body: JSON.stringify({ model, max_tokens: 3, messages: [{ role: "user", content: "hi" }] }),
  });

const master = (org: SeededOrg, path: string, body: unknown) => call(`/v1/master${path}`, { method: "POST", key: org.masterKey, ...json(body) });

async function denial(res: Response): Promise<{ type: string; code: string; message: string }> {
  expect(res.status).toBe(403);
  return ((await res.json()) as { error: { type: string; code: string; message: string } }).error;
}

describe("IAM rules on POST /v1/chat/completions", () => {
  it("key-level model rules: immediate after creation, 403 permission_denied", async () => {
    const org = await seedOrg();
    expect((await chat(org.key, "gpt-4o-mini")).status).toBe(200);
    expect((await master(org, `/keys/${org.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini"] } })).status).toBe(201);
    const err = await denial(await chat(org.key, "gpt-4o-mini"));
    expect(err).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });
    expect(err.message).toContain("gpt-4o-mini");
  });

  it("member rules state the org-admin member rule; team rules state inheritance (developers)", async () => {
    const org = await seedOrg();
    const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const m = await master(org, "/members", { email, name: "Dev", role: "developer" });
    const member = ((await m.json()) as { member: { id: string } }).member;
    const k = await master(org, "/keys", { projectId: org.projectId, description: "dev", memberId: member.id });
    const token = ((await k.json()) as { apiKey: { token: string } }).apiKey.token;
    expect((await chat(token, "gpt-4o-mini")).status).toBe(200);

    const t = await master(org, "/teams", { name: `t-${crypto.randomUUID().slice(0, 6)}` });
    const team = ((await t.json()) as { team: { id: string } }).team;
    expect((await master(org, `/teams/${team.id}/members`, { member: member.id })).status).toBe(201);
    expect((await master(org, `/teams/${team.id}/iam`, { ruleType: "allow_providers", ruleValue: { providers: ["anthropic"] } })).status).toBe(201);
    expect((await denial(await chat(token, "openai/gpt-4o-mini"))).message).toContain("inherited from an organization team IAM rule");

    const o = await seedOrg();
    expect((await master(o, `/members/${encodeURIComponent(o.ownerEmail)}/iam`, { ruleType: "deny_pricing", ruleValue: { pricingType: "paid" } })).status).toBe(201);
    expect((await denial(await chat(o.key, "gpt-4o-mini"))).message).toContain("organization member IAM rule set by the org admin");
  });

  it("IP rules use the first X-Forwarded-For entry", async () => {
    const org = await seedOrg();
    expect((await master(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["192.0.2.0/24", "2001:db8::/32"] } })).status).toBe(201);
    expect((await chat(org.key, "gpt-4o-mini", { "x-forwarded-for": "192.0.2.10, 10.0.0.1" })).status).toBe(200);
    expect((await chat(org.key, "gpt-4o-mini", { "x-forwarded-for": "2001:db8::10" })).status).toBe(200);
    await denial(await chat(org.key, "gpt-4o-mini", { "x-forwarded-for": "10.0.0.1, 192.0.2.10" }));
    await denial(await chat(org.key, "gpt-4o-mini"));
  });

  it("CF-Connecting-IP wins over a client-sent X-Forwarded-For (contract section 6)", async () => {
    const org = await seedOrg();
    expect((await master(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["10.0.0.0/8"] } })).status).toBe(201);
    await denial(await chat(org.key, "gpt-4o-mini", { "cf-connecting-ip": "198.51.100.9", "x-forwarded-for": "10.1.2.3" }));
    expect((await chat(org.key, "gpt-4o-mini", { "cf-connecting-ip": "10.9.9.9", "x-forwarded-for": "198.51.100.9" })).status).toBe(200);
    const deny = await master(org, `/keys/${org.keyId}/iam`, { ruleType: "deny_ip_cidrs", ruleValue: { ipCidrs: ["10.66.0.0/16"] } });
    expect(deny.status).toBe(201);
    await denial(await chat(org.key, "gpt-4o-mini", { "cf-connecting-ip": "10.66.1.1", "x-forwarded-for": "10.1.2.3" }));
  });

  it("model rules match catalogue aliases: normalized at creation, shown as sent, unknown ids refused", async () => {
    const org = await seedOrg();
    const deny = await master(org, `/keys/${org.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o-mini-2024-07-18"] } });
    expect(deny.status).toBe(201);
    expect(((await deny.json()) as { rule: { ruleValue: unknown } }).rule.ruleValue).toEqual({ models: ["gpt-4o-mini-2024-07-18"] });
    await denial(await chat(org.key, "gpt-4o-mini-2024-07-18"));
    await denial(await chat(org.key, "gpt-4o-mini"));
    await denial(await chat(org.key, "openai/gpt-4o-mini"));

    const other = await seedOrg();
    expect((await master(other, `/keys/${other.keyId}/iam`, { ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini-2024-07-18"] } })).status).toBe(201);
    expect((await chat(other.key, "gpt-4o-mini-2024-07-18")).status).toBe(200);
    expect((await chat(other.key, "gpt-4o-mini")).status).toBe(200);
    const list = (await (await call(`/v1/master/keys/${other.keyId}/iam`, { key: other.masterKey })).json()) as { rules: Array<{ ruleValue: Record<string, unknown> }> };
    expect(list.rules[0]!.ruleValue).toEqual({ models: ["gpt-4o-mini-2024-07-18"] });

    const bad = await master(other, `/keys/${other.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["gpt-4o", "gpt-4o-typo"] } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("ruleValue.models[1]");
    const pinned = await master(other, `/keys/${other.keyId}/iam`, { ruleType: "deny_models", ruleValue: { models: ["openai/gpt-4o-2024-08-06"] } });
    expect(pinned.status).toBe(201);
  });
});
