import { describe, expect, it } from "vitest";
import { parseModelId, type ModelIdContext } from "./parse-model-id";
import { ApiError } from "../errors/api-error";

const ctx = (over: Partial<ModelIdContext> = {}): ModelIdContext => ({
  keyKind: "standard",
  customProviders: [{ id: "cp_1", name: "acme", baseUrl: "https://llm.acme.test/v1", tokenCiphertext: "v1.x.y" }],
  customModels: [
    { id: "cm_1", providerName: "acme", modelId: "acme-large", name: null, pricing: {}, contextLength: null, capabilities: {} },
  ],
  ...over,
});

const err = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected an ApiError");
};

describe("parseModelId", () => {
  it("resolves canonical ids and aliases", () => {
    const a = parseModelId("gpt-4o-mini", ctx());
    expect(a).toMatchObject({ kind: "catalog", pinned: null });
    const b = parseModelId("claude-sonnet-4-20250514", ctx());
    expect(b.kind === "catalog" && b.model.id).toBe("claude-sonnet-4");
  });

  it("resolves provider-pinned ids", () => {
    const r = parseModelId("groq/llama-3.3-70b", ctx());
    expect(r.kind === "catalog" && r.pinned?.providerId).toBe("groq");
    expect(r.kind === "catalog" && r.model.id).toBe("llama-3.3-70b-instruct");
  });

  it("rejects a known provider that does not serve the model, naming it", () => {
    const e = err(() => parseModelId("groq/gpt-4o-mini", ctx()));
    expect(e.status).toBe(400);
    expect(e.param).toBe("model");
    expect(e.message).toContain("'groq'");
  });

  it("rejects unknown models and unknown prefixes, naming them", () => {
    expect(err(() => parseModelId("gpt-9", ctx())).message).toContain("gpt-9");
    expect(err(() => parseModelId("openai/gpt-9", ctx())).message).toContain("gpt-9");
    expect(err(() => parseModelId("nobody/model", ctx())).message).toContain("nobody");
  });

  it("resolves custom models and rejects unknown ones", () => {
    const r = parseModelId("acme/acme-large", ctx());
    expect(r.kind).toBe("custom");
    expect(err(() => parseModelId("acme/other", ctx())).message).toContain("other");
  });

  it("accepts only canonical ids for coding-plan keys", () => {
    const c = ctx({ keyKind: "coding-plan" });
    expect(parseModelId("gpt-4o-mini", c).kind).toBe("catalog");
    expect(err(() => parseModelId("openai/gpt-4o-mini", c)).message).toMatch(/Coding-plan keys accept only canonical/);
    expect(err(() => parseModelId("acme/acme-large", c)).message).toMatch(/Coding-plan/);
  });
});
