import { describe, expect, it } from "vitest";
import type { KeyContext } from "../context/key-context";
import type { Env } from "../env";
import { findModel } from "./index";
import { keyedMappingFilter, providerAvailable, publicSelection, visibleCustomModels } from "./listing";

function ctxWith(over: {
  mode?: KeyContext["project"]["mode"];
  compliance?: KeyContext["organization"]["compliance"];
  providerKeys?: string[];
  rules?: KeyContext["rules"];
  customProviders?: string[];
  customModels?: Array<[string, string]>;
}): KeyContext {
  return {
    key: {
      id: "key_1", organizationId: "org_1", projectId: "prj_1", createdBy: "mem_1", description: "", kind: "standard",
      status: "active", fingerprint: "fp", expiresAt: null, usageLimit: null, periodUsageLimit: null,
      periodUsageDurationValue: null, periodUsageDurationUnit: null, version: 1,
    },
    organization: { id: "org_1", name: "Org", plan: "enterprise", compliance: over.compliance ?? {}, notifications: {} },
    project: { id: "prj_1", name: "P", mode: over.mode ?? "hybrid", cachingEnabled: false, cacheDurationSeconds: 0, logBodies: false },
    member: { id: "mem_1", role: "owner", userId: "usr_1", email: "o@x.test", name: "O", teamIds: [] },
    rules: over.rules ?? { team: [], member: [], key: [] },
    customProviders: (over.customProviders ?? []).map((name, i) => ({ id: `cp_${i}`, name, baseUrl: "https://x.test/v1", tokenCiphertext: "c" })),
    customModels: (over.customModels ?? []).map(([providerName, modelId], i) => ({
      id: `cm_${i}`, providerName, modelId, name: null, pricing: {}, contextLength: null, capabilities: {},
    })),
    providerKeys: (over.providerKeys ?? []).map((provider, i) => ({ id: `pk_${i}`, provider, label: null, baseUrl: null, tokenCiphertext: "c" })),
    loadedAt: 0,
  };
}

const env = (vars: Record<string, string>): Env => vars as unknown as Env;

describe("publicSelection", () => {
  const ids = (q: Parameters<typeof publicSelection>[0]) => publicSelection(q).map((s) => s.model.id);

  it("hides deactivated models by default and shows them on request", () => {
    expect(ids({ includeDeactivated: false, excludeDeprecated: false, noTraining: false })).not.toContain("claude-3.5-sonnet");
    expect(ids({ includeDeactivated: true, excludeDeprecated: false, noTraining: false })).toContain("claude-3.5-sonnet");
  });

  it("evaluates dates against `now`", () => {
    const before = Date.parse("2025-01-01T00:00:00Z");
    const sel = publicSelection({ includeDeactivated: false, excludeDeprecated: true, noTraining: false }, before);
    expect(sel.map((s) => s.model.id)).toContain("claude-3.5-sonnet");
  });

  it("exclude_deprecated removes deprecated models that are still active", () => {
    const now = Date.parse("2025-12-01T00:00:00Z"); // 3.7 Sonnet deprecated, not yet deactivated
    const withDep = publicSelection({ includeDeactivated: false, excludeDeprecated: false, noTraining: false }, now).map((s) => s.model.id);
    const without = publicSelection({ includeDeactivated: false, excludeDeprecated: true, noTraining: false }, now).map((s) => s.model.id);
    expect(withDep).toContain("claude-3.7-sonnet");
    expect(without).not.toContain("claude-3.7-sonnet");
    expect(without).toContain("gpt-4o-mini");
  });

  it("no_training drops training providers' mappings and models left empty", () => {
    const sel = publicSelection({ includeDeactivated: false, excludeDeprecated: false, noTraining: true });
    expect(sel.map((s) => s.model.id)).not.toContain("deepseek-reasoner"); // only on deepseek
    const v32 = sel.find((s) => s.model.id === "deepseek-v3.2");
    expect(v32?.mappings.map((m) => m.providerId)).toContain("novita");
    expect(v32?.mappings.map((m) => m.providerId)).not.toContain("deepseek");
    expect(sel.flatMap((s) => s.mappings).some((m) => m.providerId === "moonshot" || m.providerId === "deepseek")).toBe(false);
  });
});

describe("providerAvailable (project modes)", () => {
  const e = env({ OPENAI_API_KEY: "sk-op", GOOGLE_AI_STUDIO_API_KEY: "g" });
  it("credits: only providers with an operator credential", () => {
    const ctx = ctxWith({ mode: "credits", providerKeys: ["groq"] });
    expect(providerAvailable(e, ctx, "openai")).toBe(true);
    expect(providerAvailable(e, ctx, "google-ai-studio")).toBe(true);
    expect(providerAvailable(e, ctx, "groq")).toBe(false);
  });
  it("api-keys: only providers the org has a key for", () => {
    const ctx = ctxWith({ mode: "api-keys", providerKeys: ["groq"] });
    expect(providerAvailable(e, ctx, "openai")).toBe(false);
    expect(providerAvailable(e, ctx, "groq")).toBe(true);
  });
  it("hybrid: either", () => {
    const ctx = ctxWith({ mode: "hybrid", providerKeys: ["groq"] });
    expect(providerAvailable(e, ctx, "openai")).toBe(true);
    expect(providerAvailable(e, ctx, "groq")).toBe(true);
    expect(providerAvailable(e, ctx, "mistral")).toBe(false);
  });
});

describe("keyedMappingFilter", () => {
  const llama = findModel("llama-3.3-70b-instruct");
  const deepseek = findModel("deepseek-v3.2");
  if (!llama || !deepseek) throw new Error("catalogue models missing");
  const all = env(Object.fromEntries(["GROQ", "CEREBRAS", "DEEPINFRA", "DEEPSEEK", "NOVITA", "TOGETHER_AI", "FIREWORKS", "NEBIUS"].map((p) => [`${p}_API_KEY`, "k"])));

  it("applies the compliance policy", () => {
    const f = keyedMappingFilter(all, ctxWith({ compliance: { deniedProviders: ["groq"] } }), null);
    expect(llama.mappings.filter((m) => f(llama, m)).map((m) => m.providerId)).not.toContain("groq");
    const keyed = llama.mappings.filter((m) => ["groq", "cerebras", "deepinfra", "novita", "together-ai", "fireworks", "nebius"].includes(m.providerId));
    expect(llama.mappings.filter((m) => f(llama, m))).toHaveLength(keyed.length - 1);
    const nt = keyedMappingFilter(all, ctxWith({ compliance: { noTraining: true } }), null);
    expect(deepseek.mappings.filter((m) => nt(deepseek, m)).map((m) => m.providerId)).toContain("novita");
    expect(deepseek.mappings.filter((m) => nt(deepseek, m)).map((m) => m.providerId)).not.toContain("deepseek");
  });

  it("applies IAM rules per mapping", () => {
    const rules: KeyContext["rules"] = {
      team: [],
      member: [],
      key: [{ id: "r1", level: "key", targetId: "key_1", ruleType: "allow_providers", ruleValue: { providers: ["cerebras"] } }],
    };
    const f = keyedMappingFilter(all, ctxWith({ rules }), null);
    expect(llama.mappings.filter((m) => f(llama, m)).map((m) => m.providerId)).toEqual(["cerebras"]);
  });
});

describe("visibleCustomModels", () => {
  it("needs the custom provider and respects denied providers", () => {
    const ctx = ctxWith({ customProviders: ["acme"], customModels: [["acme", "m1"], ["ghost", "m2"]] });
    expect(visibleCustomModels(ctx, null, () => false).map((m) => m.modelId)).toEqual(["m1"]);
    const denied = ctxWith({ customProviders: ["acme"], customModels: [["acme", "m1"]], compliance: { deniedProviders: ["custom:acme"] } });
    expect(visibleCustomModels(denied, null, () => false)).toEqual([]);
  });
});
