/**
 * Prices and limits that were wrong when they were typed by hand, checked against the pinned
 * sources (@pydantic/genai-prices for prices, models.dev for max output) and the providers' pages.
 * Each expectation names the figure the provider charges.
 */
import { describe, expect, it } from "vitest";
import { computeCost } from "../billing/cost";
import { toUsdNumber } from "../billing/money";
import { emptyUsage } from "../providers/types";
import { findModel, mappingFor } from "./index";
import { perM } from "./models/helpers";
import type { ProviderMapping } from "./types";

function at(model: string, provider: string): ProviderMapping {
  const m = mappingFor(model, provider);
  if (!m) throw new Error(`${provider}/${model} missing`);
  return m;
}

describe("Bedrock regional inference profiles cost 10% more than the global price", () => {
  it.each([
    ["claude-sonnet-4.5", "3.3", "16.5", "0.33", "4.125"],
    ["claude-sonnet-4.6", "3.3", "16.5", "0.33", "4.125"],
    ["claude-haiku-4.5", "1.1", "5.5", "0.11", "1.375"],
    ["claude-opus-4.5", "5.5", "27.5", "0.55", "6.875"],
    ["claude-opus-4.6", "5.5", "27.5", "0.55", "6.875"],
    ["claude-sonnet-5", "2.2", "11", "0.22", "2.75"],
  ])("%s on a us. profile: %s/%s, cache read %s, cache write %s", (model, input, output, read, write) => {
    const m = at(model, "aws-bedrock");
    expect(m.externalId.startsWith("us.")).toBe(true);
    expect(m.pricing.prompt).toBe(perM(input));
    expect(m.pricing.completion).toBe(perM(output));
    expect(m.pricing.input_cache_read).toBe(perM(read));
    expect(m.pricing.input_cache_write).toBe(perM(write));
  });
});

describe("single mismatches", () => {
  it("Azure gpt-4o-mini is 0.15/0.60 (not 0.165/0.66)", () => {
    const m = at("gpt-4o-mini", "azure");
    expect([m.pricing.prompt, m.pricing.completion]).toEqual([perM("0.15"), perM("0.6")]);
  });

  it("Fireworks deepseek-r1-0528 is 3/8 (not 1.35/5.40)", () => {
    const m = at("deepseek-r1", "fireworks");
    expect(m.externalId).toBe("accounts/fireworks/models/deepseek-r1-0528");
    expect([m.pricing.prompt, m.pricing.completion]).toEqual([perM("3"), perM("8")]);
  });

  it.each([
    ["gpt-oss-120b", "groq"],
    ["gpt-oss-20b", "groq"],
    ["gpt-oss-120b", "fireworks"],
    ["gpt-oss-20b", "fireworks"],
    ["mistral-medium-3.1", "mistral"],
    ["codestral", "mistral"],
    ["kimi-k2", "groq"],
  ])("cached tokens of %s on %s bill at a cache-read price below the input price", (model, provider) => {
    const m = at(model, provider);
    expect(m.pricing.input_cache_read).toBeDefined();
    const usage = { ...emptyUsage(), promptTokens: 1000, cachedTokens: 1000 };
    const cached = computeCost(usage, m.pricing).total;
    expect(cached < computeCost({ ...usage, cachedTokens: 0 }, m.pricing).total).toBe(true);
  });

  it("DeepSeek's own prices are hand-checked (the sources disagree): V3.2 at 0.28/0.42, cache hits 0.028", () => {
    for (const id of ["deepseek-v3.2", "deepseek-reasoner"]) {
      const m = at(id, "deepseek");
      expect([m.pricing.prompt, m.pricing.completion, m.pricing.input_cache_read]).toEqual([perM("0.28"), perM("0.42"), perM("0.028")]);
    }
  });
});

describe("Perplexity", () => {
  const usage = { ...emptyUsage(), promptTokens: 10, completionTokens: 10 };

  it("the per-request fee follows search_context_size: sonar 0.005 / 0.008 / 0.012, default low", () => {
    const p = at("sonar", "perplexity").pricing;
    const fee = (size?: "low" | "medium" | "high") => toUsdNumber(computeCost(usage, p, size ? { searchContextSize: size } : {}).requestCost);
    expect([fee(), fee("low"), fee("medium"), fee("high")]).toEqual([0.005, 0.005, 0.008, 0.012]);
    const pro = at("sonar-pro", "perplexity").pricing;
    expect(toUsdNumber(computeCost(usage, pro, { searchContextSize: "high" }).requestCost)).toBe(0.014);
  });

  it("sonar-deep-research bills reasoning at 3/M and citations at 2/M, not at the completion price", () => {
    const p = at("sonar-deep-research", "perplexity").pricing;
    const u = { ...emptyUsage(), promptTokens: 0, completionTokens: 3_000_000, reasoningTokens: 1_000_000, citationTokens: 1_000_000 };
    const cost = computeCost(u, p);
    expect(toUsdNumber(cost.reasoningCost)).toBe(3);
    expect(toUsdNumber(cost.citationCost)).toBe(2);
    expect(toUsdNumber(cost.outputCost)).toBe(3 + 2 + 8);
  });
});

describe("max output agrees with models.dev", () => {
  it.each([
    ["grok-4", "xai", 64_000],
    ["grok-3", "xai", 8_192],
    ["kimi-k2", "moonshot", 262_144],
    ["gpt-oss-120b", "groq", 32_768],
    ["gpt-oss-20b", "groq", 32_768],
    ["gpt-oss-120b", "together-ai", 131_072],
    ["deepseek-v3.1", "fireworks", 163_840],
    ["glm-4.5", "fireworks", 131_072],
    ["nova-pro", "aws-bedrock", 8_192],
    ["nova-lite", "aws-bedrock", 8_192],
    ["nova-micro", "aws-bedrock", 8_192],
    ["claude-3.7-sonnet", "aws-bedrock", 8_192],
  ])("%s on %s: %d", (model, provider, max) => {
    expect(at(model, provider).maxOutput).toBe(max);
  });
});

describe("ids people type", () => {
  it.each(["claude-3-5-haiku", "mistral-large", "deepseek-v3", "o3-mini", "dall-e-3", "claude-3.5-haiku", "o1"])("%s is a catalogue model", (id) => {
    expect(findModel(id), id).toBeDefined();
  });

  it("dall-e-3 is an image model priced per image", () => {
    const m = findModel("dall-e-3")!;
    expect(m.kind).toBe("image");
    expect(m.mappings[0]?.pricing.per_image?.["1024x1024"]).toBe("0.04");
  });
});
