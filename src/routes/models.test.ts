import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { addKey, call, seedOrg, type SeededOrg } from "../../test/helpers/fixtures";
import { getDb } from "../db/client";
import { customModels, customProviders, organizations, projects, providerKeys } from "../db/schema";
import { newId } from "../lib/ids";
import { listModels } from "../catalog";

interface ModelOut {
  id: string;
  providers: Array<{ providerId: string; externalId: string; pricing: { prompt: string } }>;
  pricing: Record<string, unknown>;
  context_length: number;
  deprecated_at?: string;
  deactivated_at?: string;
  [k: string]: unknown;
}

async function list(query = "", init: { key?: string; headers?: Record<string, string> } = {}): Promise<ModelOut[]> {
  const res = await call(`/v1/models${query}`, init);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { object: string; data: ModelOut[] };
  expect(body.object).toBe("list");
  return body.data;
}

const ids = (data: ModelOut[]) => data.map((m) => m.id);
const byId = (data: ModelOut[], id: string) => data.find((m) => m.id === id);
const providersOf = (data: ModelOut[]) => new Set(data.flatMap((m) => m.providers.map((p) => p.providerId)));

const SPEC_FIELDS = [
  "id", "name", "display_name", "description", "family", "owned_by", "maker", "aliases", "created", "architecture",
  "top_provider", "providers", "pricing", "context_length", "max_output", "per_request_limits", "supported_parameters",
  "json_output", "structured_outputs", "free", "stability",
];

describe("GET /v1/models without a key", () => {
  it("lists the public catalogue with every spec field", async () => {
    const res = await call("/v1/models");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const { data } = (await res.json()) as { data: ModelOut[] };
    expect(data.length).toBeGreaterThanOrEqual(55);
    for (const m of data) for (const f of SPEC_FIELDS) expect(m, `${m.id}.${f}`).toHaveProperty(f);
    // Typed optional fields: omitted when unknown, never null.
    const typed = (o: Record<string, unknown>, f: string, t: string) => expect(o[f] === undefined || typeof o[f] === t, `${String(o.id ?? o.providerId)}.${f}`).toBe(true);
    for (const m of data as unknown as Array<Record<string, unknown> & { providers: Array<Record<string, unknown>> }>) {
      typed(m, "deprecated_at", "string");
      typed(m, "deactivated_at", "string");
      for (const p of m.providers) {
        typed(p, "min_cacheable_tokens", "number");
        typed(p, "deprecated_at", "string");
        typed(p, "deactivated_at", "string");
      }
    }
    expect(data.some((m) => m.providers.some((p) => (p as Record<string, unknown>).min_cacheable_tokens !== undefined))).toBe(true);
    expect(byId(data, "gpt-4o-mini")?.providers.map((p) => p.providerId)).toEqual(["openai", "azure"]);
    expect(new Set(ids(data)).size).toBe(data.length);
  });

  it("hides deactivated models unless include_deactivated=true", async () => {
    const def = await list();
    expect(ids(def)).not.toContain("claude-3.5-sonnet");
    expect(ids(def)).not.toContain("gpt-4.5-preview");
    expect(def.every((m) => m.deactivated_at === undefined || Date.parse(m.deactivated_at) > Date.now())).toBe(true);
    const all = await list("?include_deactivated=true");
    expect(ids(all)).toContain("claude-3.5-sonnet");
    expect(byId(all, "claude-3.5-sonnet")?.deactivated_at).toBe("2025-10-22T00:00:00Z");
    expect(all.length).toBeGreaterThan(def.length);
    expect(await list("?include_deactivated=false")).toHaveLength(def.length);
  });

  it("exclude_deprecated=true removes deprecated models", async () => {
    const all = await list("?include_deactivated=true&exclude_deprecated=true");
    expect(ids(all)).not.toContain("claude-3.5-sonnet");
    expect(all.every((m) => m.deprecated_at === undefined || Date.parse(m.deprecated_at) > Date.now())).toBe(true);
    expect(ids(all)).toContain("gpt-4o-mini");
    // deprecated but still served: listed with its date by default, removed on request
    const def = await list();
    expect(byId(def, "gemini-2.5-pro")?.deprecated_at).toBe("2026-02-19T00:00:00Z");
    expect(byId(def, "gemini-2.5-pro")!).not.toHaveProperty("deactivated_at");
    expect(ids(await list("?exclude_deprecated=true"))).not.toContain("gemini-2.5-pro");
    expect(ids(await list("?exclude_deprecated=false"))).toContain("gemini-2.5-pro");
  });

  it("no_training=true keeps only providers that do not train on API data", async () => {
    const data = await list("?no_training=true");
    const used = providersOf(data);
    expect(used.has("deepseek")).toBe(false);
    expect(used.has("moonshot")).toBe(false);
    expect(ids(data)).not.toContain("deepseek-reasoner");
    // DeepSeek's own mapping is gone; the hosts that do not train on API data stay.
    expect(byId(data, "deepseek-v3.2")?.providers.map((p) => p.providerId)).toEqual(["novita", "fireworks"]);
    expect(ids(await list())).toContain("deepseek-reasoner");
  });

  it("mapped=true returns one provider/model entry per mapping with its own numbers", async () => {
    const data = await list("?mapped=true");
    const aggregated = await list();
    expect(data.length).toBe(aggregated.reduce((n, m) => n + m.providers.length, 0));
    const cerebras = byId(data, "cerebras/llama-3.3-70b-instruct");
    expect(cerebras?.providers).toHaveLength(1);
    expect(cerebras?.context_length).toBe(65_536);
    expect(cerebras?.pricing.prompt).toBe("0.00000085");
    expect(byId(data, "groq/llama-3.3-70b-instruct")?.pricing.prompt).toBe("0.00000059");
    expect(data.every((m) => m.id.includes("/") && m.providers.length === 1)).toBe(true);
  });

  it("rejects values other than true/false with a 400 envelope naming the parameter", async () => {
    for (const [param, value] of [["include_deactivated", "yes"], ["mapped", "1"], ["no_training", "TRUE"], ["exclude_deprecated", ""], ["include_restricted", "no"]] as const) {
      const res = await call(`/v1/models?${param}=${value}`);
      expect(res.status, param).toBe(400);
      const body = (await res.json()) as { error: { type: string; param: string | null; message: string; code: string } };
      expect(body.error.param).toBe(param);
      expect(body.error.type).toBe("invalid_request_error");
      expect(typeof body.error.code).toBe("string");
    }
  });

  it("a bad key is 401, not the public list", async () => {
    const res = await call("/v1/models", { key: "swb_" + "x".repeat(40) });
    expect(res.status).toBe(401);
    const res2 = await call("/v1/models", { headers: { "x-api-key": "not-a-key" } });
    expect(res2.status).toBe(401);
    const body = (await res2.json()) as { error: { type: string } };
    expect(body.error.type).toBe("authentication_error");
  });
});

describe("GET /v1/models with a key", () => {
  let org: SeededOrg;
  const db = () => getDb(env.DB);

  beforeAll(async () => {
    org = await seedOrg();
    await db().insert(customProviders).values({ id: newId("cp"), organizationId: org.orgId, name: "acme", baseUrl: "https://llm.acme.test/v1", tokenCiphertext: "x", tokenHint: "…abcd" });
    await db().insert(customModels).values([
      { id: newId("cm"), organizationId: org.orgId, providerName: "acme", modelId: "acme-7b", name: "Acme 7B", pricing: { prompt: "0.000001", completion: "0.000002" }, contextLength: 8192, capabilities: { tools: true } },
      { id: newId("cm"), organizationId: org.orgId, providerName: "gone", modelId: "orphan", pricing: {}, capabilities: {} },
    ]);
  });

  it("a plain key (hybrid project, every operator credential) sees the catalogue plus its custom models", async () => {
    const pub = await list();
    const data = await list("", { key: org.key });
    const catalogue = data.filter((m) => m.id !== "acme/acme-7b");
    expect(ids(catalogue)).toEqual(ids(pub));
    const custom = byId(data, "acme/acme-7b");
    expect(custom?.name).toBe("Acme 7B");
    expect(custom?.providers[0]?.providerId).toBe("custom:acme");
    for (const f of SPEC_FIELDS) expect(custom).toHaveProperty(f);
    expect(ids(data)).not.toContain("gone/orphan");
    // x-api-key works too
    expect(ids(await list("", { headers: { "x-api-key": org.key } }))).toContain("acme/acme-7b");
    // the public list never shows custom models
    expect(ids(pub)).not.toContain("acme/acme-7b");
  });

  it("a coding-plan key lists only ids it can call: canonical ids, even with mapped=true", async () => {
    const plan = await addKey(org, { kind: "coding-plan", description: "plan" });
    const mapped = await list("?mapped=true", { key: plan.token });
    expect(mapped.length).toBeGreaterThan(0);
    expect(mapped.filter((m) => m.id.includes("/")).map((m) => m.id)).toEqual([]);
    expect(ids(mapped)).toEqual(ids(await list("", { key: plan.token })));
    expect(ids(mapped)).toContain("gpt-4o-mini");
    expect(ids(mapped)).not.toContain("acme/acme-7b");
    // Every listed id is accepted by the key (here: no 400 for the id itself).
    const res = await call("/v1/chat/completions", { method: "POST", key: plan.token, body: JSON.stringify({ model: mapped[0]!.id, messages: [{ role: "user", content: "hi" }] }), headers: { "content-type": "application/json" } });
    expect(res.status).not.toBe(400);
  });

  it("include_restricted=true returns the public catalogue and no custom models", async () => {
    const data = await list("?include_restricted=true", { key: org.key });
    expect(ids(data)).toEqual(ids(await list()));
    const mapped = await list("?include_restricted=true&mapped=true&no_training=true", { key: org.key });
    expect(ids(mapped)).toEqual(ids(await list("?mapped=true&no_training=true")));
  });

  it("IAM rules narrow models and mappings", async () => {
    const onlyMini = await addKey(org, { iamRules: [{ ruleType: "allow_models", ruleValue: { models: ["gpt-4o-mini"] } }] });
    expect(ids(await list("", { key: onlyMini.token }))).toEqual(["gpt-4o-mini"]);
    // ...but include_restricted shows everything public
    expect((await list("?include_restricted=true", { key: onlyMini.token })).length).toBeGreaterThan(50);

    const noOpenai = await addKey(org, { iamRules: [{ ruleType: "deny_providers", ruleValue: { providers: ["openai"] } }] });
    const data = await list("", { key: noOpenai.token });
    expect(byId(data, "gpt-4o-mini")?.providers.map((p) => p.providerId)).toEqual(["azure"]);
    expect(ids(data)).not.toContain("omni-moderation-latest");
    expect(providersOf(data).has("openai")).toBe(false);
    const mapped = await list("?mapped=true", { key: noOpenai.token });
    expect(ids(mapped)).toContain("azure/gpt-4o-mini");
    expect(ids(mapped)).not.toContain("openai/gpt-4o-mini");

    const onlyFree = await addKey(org, { iamRules: [{ ruleType: "allow_pricing", ruleValue: { pricingType: "free" } }] });
    const free = await list("", { key: onlyFree.token });
    expect(free.length).toBeGreaterThan(0);
    expect(free.every((m) => m.free === true)).toBe(true);
    expect(ids(free)).toContain("gemma-3-27b-it");
  });

  it("api-keys projects list only providers the organization has keys for (custom models stay)", async () => {
    const projectId = newId("proj");
    await db().insert(projects).values({ id: projectId, organizationId: org.orgId, name: "byok only", mode: "api-keys" });
    await db().insert(providerKeys).values({ id: newId("pk"), organizationId: org.orgId, provider: "groq", tokenCiphertext: "x", tokenHint: "…wxyz" });
    const key = await addKey(org, { projectId });
    const data = await list("", { key: key.token });
    const catalogue = data.filter((m) => !m.id.startsWith("acme/"));
    expect(catalogue.length).toBeGreaterThan(0);
    expect(providersOf(catalogue)).toEqual(new Set(["groq"]));
    expect(byId(data, "llama-3.3-70b-instruct")?.providers.map((p) => p.externalId)).toEqual(["llama-3.3-70b-versatile"]);
    // aggregated pricing follows the mappings this key can use
    expect(byId(data, "llama-3.3-70b-instruct")?.pricing.prompt).toBe("0.00000059");
    expect(ids(data)).toContain("acme/acme-7b");
  });
});

describe("GET /v1/models with an organization compliance policy", () => {
  it("applies noTraining and deniedProviders; include_restricted ignores them", async () => {
    const org = await seedOrg();
    await getDb(env.DB).update(organizations).set({ compliance: { noTraining: true, deniedProviders: ["groq", "openai"] } }).where(eq(organizations.id, org.orgId));
    const key = await addKey(org);
    const data = await list("", { key: key.token });
    const used = providersOf(data);
    for (const p of ["groq", "openai", "deepseek", "moonshot"]) expect(used.has(p), p).toBe(false);
    expect(used.has("azure")).toBe(true);
    expect(ids(data)).not.toContain("omni-moderation-latest");
    expect(byId(data, "llama-3.3-70b-instruct")?.providers.some((p) => p.providerId === "groq")).toBe(false);

    const restricted = await list("?include_restricted=true", { key: key.token });
    expect(providersOf(restricted).has("groq")).toBe(true);
    expect(ids(restricted)).toContain("deepseek-reasoner");
  });
});

describe("catalogue sanity through the API", () => {
  it("every listed model is in the catalogue", async () => {
    const known = new Set(listModels().map((m) => m.id));
    expect((await list()).every((m) => known.has(m.id))).toBe(true);
  });
});

describe("GET /v1/models/{id}", () => {
  let org: SeededOrg;
  beforeAll(async () => {
    org = await seedOrg();
    await getDb(env.DB).insert(customProviders).values({ id: newId("cp"), organizationId: org.orgId, name: "retr", baseUrl: "https://llm.retr.test/v1", tokenCiphertext: "x", tokenHint: "…abcd" });
    await getDb(env.DB).insert(customModels).values({ id: newId("cm"), organizationId: org.orgId, providerName: "retr", modelId: "retr-7b", pricing: {}, capabilities: {} });
  });

  it("retrieves a canonical id, an alias, a provider/model id and a custom id", async () => {
    const canonical = await call("/v1/models/gpt-4o-mini");
    expect(canonical.status).toBe(200);
    const body = (await canonical.json()) as ModelOut;
    expect(body.id).toBe("gpt-4o-mini");
    expect(body.providers.length).toBeGreaterThan(0);

    const pinned = (await (await call("/v1/models/openai/gpt-4o-mini")).json()) as ModelOut;
    expect(pinned.id).toBe("openai/gpt-4o-mini");
    expect(pinned.providers.map((p) => p.providerId)).toEqual(["openai"]);

    const custom = await call("/v1/models/retr/retr-7b", { key: org.key });
    expect(custom.status).toBe(200);
    expect(((await custom.json()) as ModelOut).id).toBe("retr/retr-7b");
    // Custom models belong to an organization: not visible without its key.
    expect((await call("/v1/models/retr/retr-7b")).status).toBe(404);
  });

  it("answers 404 in the error envelope for an unknown id", async () => {
    const res = await call("/v1/models/no-such-model-xyz");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { type: "not_found_error", code: "model_not_found" } });
    expect((await call("/v1/models/openai/claude-sonnet-4-5")).status).toBe(404);
  });

  it("works through the official openai client", async () => {
    const { default: OpenAI } = await import("openai");
    const { exports } = await import("cloudflare:workers");
    const client = new OpenAI({ baseURL: "http://gw.test/v1", apiKey: org.key, fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)) });
    const m = await client.models.retrieve("gpt-4o-mini");
    expect(m.id).toBe("gpt-4o-mini");
    await expect(client.models.retrieve("nope-model")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
