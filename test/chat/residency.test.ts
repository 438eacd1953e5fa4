/**
 * Residency: `allow_regions` / `deny_regions` rules (key, member, team) and the organization's
 * `compliance.regions`, on chat, the other doors and the keyed model listing.
 * mistral-small-3.2 is served by mistral (region `eu`) and deepinfra (`us`, the cheaper one).
 */
import { describe, expect, it } from "vitest";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user } from "./helpers";

const EU_AND_US = "mistral-small-3.2";
const US_ONLY = "grok-4-fast";
type Body = Record<string, any>;

const post = (org: SeededOrg, path: string, body: unknown, method = "POST") => call(`/v1/master${path}`, { method, key: org.masterKey, ...json(body) });
const ask = async (org: SeededOrg, model: string) => {
  const res = await chat(org.key, { model, messages: user(`hi ${crypto.randomUUID()}`) });
  return { res, body: (await res.json()) as Body };
};

describe("region rules", () => {
  it("allow_regions EU on the key: only EU endpoints serve; a model without one is 403 with the rule's wording", async () => {
    const org = await seedOrg();
    expect((await ask(org, EU_AND_US)).body.metadata.used_provider).toBe("deepinfra");
    expect((await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_regions", ruleValue: { regions: ["EU"] } })).status).toBe(201);
    const eu = await ask(org, EU_AND_US);
    expect(eu.body.metadata).toMatchObject({ used_provider: "mistral", used_region: "eu" });
    const us = await ask(org, US_ONLY);
    expect(us.res.status).toBe(403);
    expect(us.body.error.message).toContain("allow_regions");
  });

  it("deny_regions at member level (a continent) and at team level (a region)", async () => {
    const org = await seedOrg();
    expect((await post(org, `/members/${encodeURIComponent(org.ownerEmail)}/iam`, { ruleType: "deny_regions", ruleValue: { regions: ["NA"] } })).status).toBe(201);
    expect((await ask(org, EU_AND_US)).body.metadata.used_provider).toBe("mistral");
    const denied = await ask(org, US_ONLY);
    expect(denied.res.status).toBe(403);
    expect(denied.body.error.message).toContain("deny_regions");

    const dev = await seedOrg();
    const member = (await (await post(dev, "/members", { email: `d-${crypto.randomUUID().slice(0, 6)}@example.test`, name: "Dev", role: "developer", password: "correct horse battery" })).json()) as Body;
    const team = (await (await post(dev, "/teams", { name: "eu-only" })).json()) as Body;
    expect((await post(dev, `/teams/${team.team.id}/members`, { member: member.member.id })).status).toBe(201);
    expect((await post(dev, `/teams/${team.team.id}/iam`, { ruleType: "deny_regions", ruleValue: { regions: ["us"] } })).status).toBe(201);
    const key = (await (await post(dev, "/keys", { projectId: dev.projectId, description: "dev", memberId: member.member.id })).json()) as Body;
    const res = await chat(key.apiKey.token, { model: EU_AND_US, messages: user("hi") });
    expect(((await res.json()) as Body).metadata.used_provider).toBe("mistral");
  });

  it("rule bodies are validated: a region or a continent code", async () => {
    const org = await seedOrg();
    const bad = await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_regions", ruleValue: { regions: ["Europe!"] } });
    expect(bad.status).toBe(400);
    const wrongField = await post(org, `/keys/${org.keyId}/iam`, { ruleType: "allow_regions", ruleValue: { providers: ["openai"] } });
    expect(wrongField.status).toBe(400);
  });
});

describe("the organization's compliance.regions", () => {
  it("applies to every key and door; GET /v1/models with a key lists only what it allows", async () => {
    const org = await seedOrg();
    const patch = await post(org, "/organization", { compliance: { regions: ["EU"] } }, "PATCH");
    expect(patch.status).toBe(200);
    expect((await ask(org, EU_AND_US)).body.metadata.used_provider).toBe("mistral");
    const us = await ask(org, US_ONLY);
    expect(us.res.status).toBe(403);
    expect(us.body.error.message).toContain("compliance");

    const models = (await (await call("/v1/models", { key: org.key })).json()) as Body;
    const ids = models.data.map((m: Body) => m.id);
    expect(ids).toContain(EU_AND_US);
    expect(ids).not.toContain(US_ONLY);

    const emb = await call("/v1/embeddings", { method: "POST", key: org.key, ...json({ model: "text-embedding-3-small", input: "hi" }) });
    expect(emb.status).toBe(403);
    const bad = await post(org, "/organization", { compliance: { regions: ["nowhere!"] } }, "PATCH");
    expect(bad.status).toBe(400);
  });
});
