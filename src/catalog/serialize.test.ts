import { describe, expect, it } from "vitest";
import { findModel } from "./index";
import { cheapestMapping, serializeCustomModel, serializeMapping, serializeModel, supportedParameters } from "./serialize";
import type { ModelDefinition } from "./types";

const model = (id: string): ModelDefinition => {
  const m = findModel(id);
  if (!m) throw new Error(`missing ${id}`);
  return m;
};

const MODEL_FIELDS = [
  "id", "name", "display_name", "description", "family", "owned_by", "maker", "aliases", "created", "architecture",
  "top_provider", "providers", "pricing", "context_length", "max_output", "per_request_limits", "supported_parameters",
  "json_output", "structured_outputs", "free", "stability",
];
const PROVIDER_FIELDS = [
  "providerId", "externalId", "pricing", "supportedVideoSizes", "supportsVideoAudio", "supportsVideoWithoutAudio", "streaming",
  "vision", "realtime", "cancellation", "tools", "parallelToolCalls", "reasoning", "reasoning_efforts", "reasoning_modes",
  "max_output", "stability",
];
const PRICE_STRINGS = [
  "prompt", "completion", "image", "input_audio", "input_audio_cache_read", "output_audio", "request", "input_cache_read",
  "input_cache_write", "input_cache_write_1h", "ocr_page", "input_audio_hour",
];

describe("serializeModel", () => {
  it("emits every spec 2.5 field with the right types", () => {
    const m = model("claude-sonnet-4");
    const json = serializeModel(m, m.mappings);
    for (const f of MODEL_FIELDS) expect(json, f).toHaveProperty(f);
    expect(json.owned_by).toBe("anthropic");
    expect(json.architecture).toEqual({ input_modalities: ["text", "image", "file"], output_modalities: ["text"], tokenizer: "claude" });
    expect(typeof json.top_provider.is_moderated).toBe("boolean");
    expect(json.providers.map((p) => p.providerId)).toEqual(["anthropic", "aws-bedrock", "google-vertex"]);
    for (const p of json.providers) {
      for (const f of PROVIDER_FIELDS) expect(p, f).toHaveProperty(f);
      for (const f of PRICE_STRINGS) expect(typeof p.pricing[f as keyof typeof p.pricing], f).toBe("string");
      expect(p.pricing.per_second).toEqual({});
      expect(p.pricing.per_image).toEqual({});
    }
    for (const f of [...PRICE_STRINGS, "web_search", "internal_reasoning"]) expect(typeof json.pricing[f as keyof typeof json.pricing], f).toBe("string");
    expect(json.pricing.input_cache_write_1h).toBe("0.000006");
    expect(json.pricing.internal_reasoning).toBe(json.pricing.completion);
    expect(json.per_request_limits).toEqual({});
    // Unknown optional values are omitted, never null (spec 2.5 types them integer/string).
    expect(json).not.toHaveProperty("deprecated_at");
    expect(json).not.toHaveProperty("deactivated_at");
    expect(json.stability).toBe("stable");
    expect(json.providers[0]?.reasoning_modes).toEqual(["standard", "extended"]);
    expect(json.providers[0]?.min_cacheable_tokens).toBe(1024);
  });

  it("aggregates: cheapest mapping's pricing, largest context, union of capabilities", () => {
    const m = model("llama-3.3-70b-instruct");
    const json = serializeModel(m, m.mappings);
    const deepinfra = m.mappings.find((x) => x.providerId === "deepinfra");
    expect(cheapestMapping(m.mappings)).toBe(deepinfra);
    expect(json.pricing.prompt).toBe("0.0000001");
    expect(json.pricing.completion).toBe("0.00000032");
    expect(json.context_length).toBe(131_072);
    expect(json.max_output).toBe(Math.max(...m.mappings.map((x) => x.maxOutput)));
    expect(json.json_output).toBe(true);
    expect(json.structured_outputs).toBe(false);
    expect(json.top_provider.context_length).toBe(131_072);
    // narrowing the mappings changes the aggregate
    const groqOnly = serializeModel(m, m.mappings.filter((x) => x.providerId === "groq"));
    expect(groqOnly.pricing.prompt).toBe("0.00000059");
    expect(groqOnly.providers).toHaveLength(1);
  });

  it("dates, free flag and stability come through", () => {
    const old = model("claude-3.5-sonnet");
    const json = serializeModel(old, old.mappings);
    expect(json.deprecated_at).toBe("2025-08-13T00:00:00Z");
    expect(json.deactivated_at).toBe("2025-10-22T00:00:00Z");
    const free = model("gemma-3-27b-it");
    expect(serializeModel(free, free.mappings).free).toBe(true);
    const paid = model("gpt-4o-mini");
    expect(serializeModel(paid, paid.mappings).free).toBe(false);
    const preview = model("gemini-3-pro-preview");
    expect(serializeModel(preview, preview.mappings).stability).toBe("beta");
  });

  it("video and image pricing maps are exposed", () => {
    const sora = model("sora-2");
    const json = serializeModel(sora, sora.mappings);
    expect(json.pricing.per_second).toEqual({ "1280x720": "0.10", "720x1280": "0.10" });
    expect(json.providers[0]?.supportedVideoSizes).toEqual(["1280x720", "720x1280"]);
    expect(json.providers[0]?.supportsVideoAudio).toBe(true);
    const img = model("gpt-image-1");
    expect(serializeModel(img, img.mappings).pricing.per_image["1024x1024"]).toBe("0.042");
    expect(serializeModel(img, img.mappings).architecture.output_modalities).toEqual(["image"]);
  });

  it("serializeMapping: provider-pinned id and that mapping's own numbers", () => {
    const m = model("llama-3.3-70b-instruct");
    const cerebras = m.mappings.find((x) => x.providerId === "cerebras");
    if (!cerebras) throw new Error("no cerebras mapping");
    const json = serializeMapping(m, cerebras);
    expect(json.id).toBe("cerebras/llama-3.3-70b-instruct");
    expect(json.display_name).toBe("Llama 3.3 70B Instruct (Cerebras)");
    expect(json.context_length).toBe(65_536);
    expect(json.pricing.prompt).toBe("0.00000085");
    expect(json.providers.map((p) => p.externalId)).toEqual(["llama-3.3-70b"]);
  });

  it("supported_parameters follow capabilities and drop what every provider rejects", () => {
    const sonar = model("sonar");
    const params = supportedParameters(sonar, sonar.mappings);
    expect(params).toContain("response_format");
    expect(params).not.toContain("tools");
    expect(params).not.toContain("seed"); // perplexity rejects it
    const gpt = model("gpt-5");
    expect(supportedParameters(gpt, gpt.mappings)).toEqual(expect.arrayContaining(["tools", "parallel_tool_calls", "reasoning_effort"]));
    expect(supportedParameters(model("gpt-image-1"), model("gpt-image-1").mappings)).toContain("size");
  });
});

describe("serializeCustomModel", () => {
  it("renders a custom model as <provider>/<model> with its pricing and capabilities", () => {
    const json = serializeCustomModel({
      id: "cm_1",
      providerName: "acme",
      modelId: "llama-local",
      name: "Acme Llama",
      pricing: { prompt: "0.000001", completion: "0.000002" },
      contextLength: 32_000,
      capabilities: { tools: true, vision: false },
    });
    for (const f of MODEL_FIELDS) expect(json, f).toHaveProperty(f);
    expect(json.id).toBe("acme/llama-local");
    expect(json.name).toBe("Acme Llama");
    expect(json.providers[0]?.providerId).toBe("custom:acme");
    expect(json.pricing.prompt).toBe("0.000001");
    // No cache-read price: cached tokens are billed at the prompt price, and listed so.
    expect(json.pricing.input_cache_read).toBe("0.000001");
    expect(json.context_length).toBe(32_000);
    expect(json.supported_parameters).toContain("tools");
    expect(json.free).toBe(false);
    const free = serializeCustomModel({ id: "cm_2", providerName: "acme", modelId: "x", name: null, pricing: {}, contextLength: null, capabilities: {} });
    expect(free.free).toBe(true);
    expect(free.name).toBe("x");
  });
});
