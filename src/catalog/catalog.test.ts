import { describe, expect, it } from "vitest";
import {
  findModel,
  getProvider,
  isFreeMapping,
  isProviderId,
  listModels,
  mappingFor,
  modelsByKind,
  parseModelRef,
  PRICES_READ_AT,
  PROVIDERS,
} from "./index";
import { perK, perM } from "./models/helpers";
import { OPENAI_PLATFORM_EXTRAS } from "./providers";
import { PROVIDER_IDS } from "./types";

const DECIMAL = /^\d+(\.\d+)?$/;

/** Every price of a pricing object, tiers and scheduled prices included (`above`, `from`, `utc*` are not prices). */
function priceStrings(p: unknown, prefix = ""): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(p as Record<string, unknown>)) {
    if (k === "above" || k === "from" || k === "utcStart" || k === "utcEnd") continue;
    if (typeof v === "string") out.push(`${prefix}${k}=${v}`);
    else if (v && typeof v === "object") out.push(...priceStrings(v, `${prefix}${k}.`));
    else out.push(`${prefix}${k}=${String(v)}`);
  }
  return out;
}

describe("providers", () => {
  it("covers every contract provider id with a consistent entry", () => {
    expect(Object.keys(PROVIDERS).sort()).toEqual([...PROVIDER_IDS].sort());
    for (const id of PROVIDER_IDS) {
      const p = PROVIDERS[id];
      expect(p.id).toBe(id);
      expect(p.baseUrl).toMatch(/^https:\/\//);
      expect(p.baseUrl.endsWith("/")).toBe(false);
      expect(["openai", "anthropic", "google", "bedrock", "azure"]).toContain(p.wireFormat);
    }
    expect(PROVIDERS.openai.moderation).toBe(true);
    expect(PROVIDERS.mistral.moderation).toBe(true);
    expect(PROVIDERS.openai.quirks?.maxTokensField).toBe("max_completion_tokens");
    expect(PROVIDERS.groq.baseUrl).toBe("https://api.groq.com/openai/v1");
    expect(PROVIDERS["aws-bedrock"].wireFormat).toBe("bedrock");
    expect(PROVIDERS["google-vertex"].wireFormat).toBe("google");
  });

  it("sends the OpenAI-platform extras to OpenAI only: every other OpenAI-format provider drops them", () => {
    expect(PROVIDERS.openai.quirks?.unsupportedParams ?? []).toEqual([]);
    for (const id of PROVIDER_IDS) {
      const p = PROVIDERS[id];
      if (id === "openai" || (p.wireFormat !== "openai" && p.wireFormat !== "azure")) continue;
      expect(p.quirks?.unsupportedParams, id).toEqual(expect.arrayContaining([...OPENAI_PLATFORM_EXTRAS]));
    }
  });

  it("has both training and non-training providers (no_training is meaningful)", () => {
    const values = new Set(PROVIDER_IDS.map((id) => PROVIDERS[id].trainsOnApiData));
    expect(values).toEqual(new Set([true, false]));
  });

  it("getProvider / isProviderId", () => {
    expect(getProvider("groq")?.name).toBe("Groq");
    expect(getProvider("nope")).toBeUndefined();
    expect(isProviderId("inference.net")).toBe(true);
    expect(isProviderId("custom")).toBe(false);
  });
});

describe("models", () => {
  const models = listModels();

  it("has at least 60 models on at least 15 providers", () => {
    expect(models.length).toBeGreaterThanOrEqual(60);
    const used = new Set(models.flatMap((m) => m.mappings.map((x) => x.providerId)));
    expect(used.size).toBeGreaterThanOrEqual(15);
  });

  it("ids and aliases are unique across the catalogue and contain no slash", () => {
    const seen = new Map<string, string>();
    for (const m of models) {
      for (const name of [m.id, ...(m.aliases ?? [])]) {
        const lower = name.toLowerCase();
        expect(seen.get(lower), `${name} used by ${seen.get(lower)} and ${m.id}`).toBeUndefined();
        seen.set(lower, m.id);
      }
      expect(m.id).not.toContain("/");
    }
  });

  it("every mapping names a known provider once per model, with sane limits", () => {
    for (const m of models) {
      expect(m.mappings.length, m.id).toBeGreaterThan(0);
      const providers = m.mappings.map((x) => x.providerId);
      expect(new Set(providers).size, m.id).toBe(providers.length);
      for (const x of m.mappings) {
        expect(isProviderId(x.providerId), `${m.id}: ${x.providerId}`).toBe(true);
        expect(x.externalId.length).toBeGreaterThan(0);
        expect(Number.isInteger(x.contextLength) && x.contextLength > 0, `${m.id}@${x.providerId}`).toBe(true);
        expect(Number.isInteger(x.maxOutput) && x.maxOutput >= 0).toBe(true);
        if (m.kind === "chat") expect(x.maxOutput, `${m.id}@${x.providerId}`).toBeGreaterThan(0);
      }
    }
  });

  it("every price is a plain decimal string", () => {
    for (const m of models) {
      for (const x of m.mappings) {
        for (const entry of priceStrings(x.pricing)) {
          expect(entry.split("=")[1], `${m.id}@${x.providerId} ${entry}`).toMatch(DECIMAL);
        }
      }
    }
  });

  it("dates are ISO and deactivation never precedes deprecation", () => {
    for (const m of models) {
      for (const d of [m.deprecatedAt, m.deactivatedAt]) if (d) expect(Number.isNaN(Date.parse(d))).toBe(false);
      if (m.deprecatedAt && m.deactivatedAt) expect(Date.parse(m.deactivatedAt)).toBeGreaterThanOrEqual(Date.parse(m.deprecatedAt));
      expect(Number.isInteger(m.created) && m.created > 1_600_000_000).toBe(true);
    }
    expect(models.some((m) => m.deprecatedAt)).toBe(true);
    expect(models.some((m) => m.deactivatedAt)).toBe(true);
    expect(PRICES_READ_AT).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("free models have zero prices; paid ones do not", () => {
    const free = models.filter((m) => m.free);
    expect(free.length).toBeGreaterThan(0);
    for (const m of free) for (const x of m.mappings) expect(isFreeMapping(m, x)).toBe(true);
    const gpt = findModel("gpt-4o-mini");
    expect(gpt && isFreeMapping(gpt, gpt.mappings[0]!)).toBe(false);
  });

  it("has the non-chat models other features need", () => {
    expect(findModel("qwen-image-3.0")?.kind).toBe("image");
    expect(findModel("qwen-image-3.0")?.mappings[0]?.providerId).toBe("alibaba");
    const banana = findModel("nano-banana");
    expect(banana?.id).toBe("gemini-2.5-flash-image");
    expect(banana?.outputModalities).toContain("image");
    expect(mappingFor("gpt-image-1", "openai")?.pricing.per_image?.["1024x1024"]).toMatch(DECIMAL);
    expect(findModel("omni-moderation-latest")?.free).toBe(true);
    expect(findModel("mistral-moderation-latest")?.kind).toBe("moderation");
    const video = modelsByKind("video");
    expect(video.length).toBeGreaterThan(0);
    for (const v of video) {
      expect(v.mappings.every((x) => x.pricing.per_second && (x.supportedVideoSizes?.length ?? 0) > 0)).toBe(true);
    }
    expect(modelsByKind("chat").every((m) => m.kind === "chat")).toBe(true);
  });

  it("has the starter models on the agreed providers", () => {
    const expectOn = (id: string, providers: string[]) => {
      for (const p of providers) expect(mappingFor(id, p), `${id}@${p}`).toBeDefined();
    };
    expectOn("gpt-4o-mini", ["openai", "azure"]);
    expectOn("claude-sonnet-4", ["anthropic", "aws-bedrock", "google-vertex"]);
    expectOn("gemini-2.5-flash", ["google-ai-studio", "google-vertex"]);
    expectOn("llama-3.3-70b-instruct", ["groq", "together-ai", "fireworks", "deepinfra", "cerebras", "nebius", "novita"]);
    expect(mappingFor("gpt-4o-mini", "openai")?.pricing.prompt).toBe("0.00000015");
  });
});

describe("lookups", () => {
  it("findModel resolves ids and aliases, exact and case-insensitively", () => {
    expect(findModel("claude-sonnet-4-20250514")?.id).toBe("claude-sonnet-4");
    expect(findModel("GPT-4o-Mini")?.id).toBe("gpt-4o-mini");
    expect(findModel("does-not-exist")).toBeUndefined();
  });

  it("parseModelRef handles canonical, pinned and unknown ids", () => {
    expect(parseModelRef("gpt-4o-mini")).toMatchObject({ kind: "canonical", model: { id: "gpt-4o-mini" } });
    const pinned = parseModelRef("groq/llama-3.3-70b");
    expect(pinned).toMatchObject({ kind: "pinned", providerId: "groq", mapping: { externalId: "llama-3.3-70b-versatile" } });
    // an alias that itself contains a slash is canonical
    expect(parseModelRef("openai/gpt-oss-120b")).toMatchObject({ kind: "canonical", model: { id: "gpt-oss-120b" } });
    expect(parseModelRef("groq/gpt-oss-120b")).toMatchObject({ kind: "pinned", providerId: "groq" });
    expect(parseModelRef("anthropic/gpt-4o-mini")).toEqual({ kind: "unknown", prefix: "anthropic", rest: "gpt-4o-mini" });
    expect(parseModelRef("acme/my-model")).toEqual({ kind: "unknown", prefix: "acme", rest: "my-model" });
  });

  it("perM / perK shift the decimal point exactly", () => {
    expect(perM("0.15")).toBe("0.00000015");
    expect(perM("3")).toBe("0.000003");
    expect(perM("18.75")).toBe("0.00001875");
    expect(perM("0")).toBe("0");
    expect(perM("0.00875")).toBe("0.00000000875");
    expect(perK("40")).toBe("0.04");
    expect(() => perM("-1")).toThrow();
  });
});
