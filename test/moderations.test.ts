import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, json, seedOrg, type SeededOrg } from "./helpers/fixtures";
import { getDb } from "../src/db/client";
import { requestLogs } from "../src/db/schema";
import { recorded } from "./helpers/recorded";

interface ModerationJson {
  id: string;
  model: string;
  results: Array<{ flagged: boolean; categories: Record<string, boolean>; category_scores: Record<string, number> }>;
}

const moderate = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  call("/v1/moderations", { method: "POST", key, body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });

const rule = (org: SeededOrg, keyId: string, body: unknown) => call(`/v1/master/keys/${keyId}/iam`, { method: "POST", key: org.masterKey, ...json(body) });

describe("POST /v1/moderations", () => {
  it("returns OpenAI-shaped results, one per input", async () => {
    const org = await seedOrg();
    const res = await moderate(org.key, { input: ["hello there", "I will [[fake:flag=violence]] you"] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ModerationJson;
    expect(body.model).toBe("omni-moderation-latest");
    expect(body.id).toBeTruthy();
    expect(body.results).toHaveLength(2);
    expect(body.results[0]!.flagged).toBe(false);
    expect(body.results[1]).toMatchObject({ flagged: true, categories: { violence: true } });
    expect(body.results[1]!.category_scores.violence).toBeGreaterThan(0.5);

    const single = (await (await moderate(org.key, { input: "one", model: "omni-moderation-latest" })).json()) as ModerationJson;
    expect(single.results).toHaveLength(1);
  });

  it("sends the provider's external model id with the operator credential", async () => {
    const org = await seedOrg();
    const tag = `mod-${crypto.randomUUID().slice(0, 8)}`;
    expect((await moderate(org.key, { input: `check [[tag:${tag}]]` })).status).toBe(200);
    const sent = await recorded(tag);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ provider: "openai", path: "/moderations", body: { model: "omni-moderation-latest" } });
    expect(sent[0]!.headers.authorization).toBe("Bearer test-operator-key-openai");
  });

  it("writes a moderation request log row", async () => {
    const org = await seedOrg();
    const res = await moderate(org.key, { input: "log me" });
    expect(res.status).toBe(200);
    let row: { kind: string; status_code: number; used_provider: string } | null = null;
    for (let i = 0; i < 20 && !row; i++) {
      row = await env.DB.prepare("SELECT kind, status_code, used_provider FROM request_logs WHERE api_key_id = ? AND kind = 'moderation'").bind(org.keyId).first();
      if (!row) await new Promise((r) => setTimeout(r, 25));
    }
    expect(row).toMatchObject({ kind: "moderation", status_code: 200, used_provider: "openai" });
  });

  it("needs a valid gateway key and a valid body", async () => {
    const org = await seedOrg();
    expect((await call("/v1/moderations", { method: "POST", ...json({ input: "x" }) })).status).toBe(401);
    const bad = await moderate(org.key, { input: 42 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("input");
    expect((await moderate(org.key, { input: "x", model: "gpt-4o-mini" })).status).toBe(400);
    expect((await moderate(org.key, { input: "x", model: "no-such-model" })).status).toBe(400); // model_not_found: 400 on every endpoint (test/status-mapping.test.ts)
  });

  it("skips model and pricing rules (spec 5.4)", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    expect((await rule(org, row.id, { ruleType: "allow_models", ruleValue: { models: ["gpt-4o"] } })).status).toBe(201);
    expect((await rule(org, row.id, { ruleType: "deny_models", ruleValue: { models: ["omni-moderation-latest"] } })).status).toBe(201);
    expect((await rule(org, row.id, { ruleType: "allow_pricing", ruleValue: { pricingType: "paid" } })).status).toBe(201);
    expect((await moderate(token, { input: "fine" })).status).toBe(200);
  });

  it("applies provider rules at key and member level (403 permission_denied)", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    expect((await rule(org, row.id, { ruleType: "deny_providers", ruleValue: { providers: ["openai"] } })).status).toBe(201);
    const res = await moderate(token, { input: "x" });
    expect(res.status).toBe(403);
    const err = ((await res.json()) as { error: { type: string; code: string; message: string } }).error;
    expect(err).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });

    const res2 = await call(`/v1/master/members/${org.ownerMemberId}/iam`, { method: "POST", key: org.masterKey, ...json({ ruleType: "allow_providers", ruleValue: { providers: ["mistral"] } }) });
    expect(res2.status).toBe(201);
    const denied = await moderate(org.key, { input: "x" });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { message: string } }).error.message).toContain("organization member IAM rule set by the org admin");
  });

  it("applies IP rules using the first X-Forwarded-For entry", async () => {
    const org = await seedOrg();
    const { token, row } = await addKey(org);
    expect((await rule(org, row.id, { ruleType: "allow_ip_cidrs", ruleValue: { ipCidrs: ["203.0.113.0/24", "2001:db8::/32"] } })).status).toBe(201);
    expect((await moderate(token, { input: "x" }, { "x-forwarded-for": "203.0.113.9, 10.0.0.1" })).status).toBe(200);
    expect((await moderate(token, { input: "x" }, { "x-forwarded-for": "2001:db8::7" })).status).toBe(200);
    expect((await moderate(token, { input: "x" }, { "x-forwarded-for": "10.0.0.1, 203.0.113.9" })).status).toBe(403);
    expect((await moderate(token, { input: "x" })).status).toBe(403);
    expect((await moderate(token, { input: "x" }, { "x-forwarded-for": "garbage" })).status).toBe(403);
  });

  it("reports 502 upstream_error when the moderation provider fails", async () => {
    const org = await seedOrg();
    const res = await moderate(org.key, { input: "x [[fake:status=503]]", model: "openai/omni-moderation-latest" });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("upstream_error");
    // Logged under the provider that failed and the canonical model, not `unknown` / the pinned id.
    const requestId = res.headers.get("x-request-id")!;
    let row: typeof requestLogs.$inferSelect | undefined;
    for (let i = 0; i < 100 && !row; i++) {
      row = await getDb(env.DB).select().from(requestLogs).where(eq(requestLogs.requestId, requestId)).get();
      if (!row) await new Promise((r) => setTimeout(r, 25));
    }
    expect(row).toMatchObject({ statusCode: 502, usedProvider: "openai", usedModel: "omni-moderation-latest" });
  });
});
