/**
 * Prices as providers charge them: prompt-size tiers (the whole request at the long-context rate
 * once its input exceeds the threshold), dated price changes (the price in force at the request's
 * time), time-of-day prices, and admission reserving the dearest tier a request can reach.
 */
import { describe, expect, it } from "vitest";
import { findModel, mappingFor } from "../catalog";
import { perM } from "../catalog/models/helpers";
import { serializeMapping } from "../catalog/serialize";
import type { ChatRequest } from "../providers/types";
import { emptyUsage } from "../providers/types";
import { computeCost } from "./cost";
import { estimateUpperBound } from "./estimate";
import { toUsdNumber } from "./money";
import { dearestPricing, pricingInForce } from "./price-schedule";

const pricingOf = (model: string, provider: string) => {
  const m = mappingFor(model, provider);
  if (!m) throw new Error(`${provider}/${model} missing`);
  return m.pricing;
};

const usage = (prompt: number, completion: number, cached = 0) => ({ ...emptyUsage(), promptTokens: prompt, completionTokens: completion, cachedTokens: cached });

describe("prompt-size tiers", () => {
  it.each([
    ["gemini-2.5-pro", "google-ai-studio", 200_000, [1.25, 10], [2.5, 15]],
    ["gemini-2.5-pro", "google-vertex", 200_000, [1.25, 10], [2.5, 15]],
    ["gemini-3-pro-preview", "google-ai-studio", 200_000, [2, 12], [4, 18]],
    ["gemini-3.1-pro-preview", "google-vertex", 200_000, [2, 12], [4, 18]],
    ["claude-opus-4.6", "google-vertex", 200_000, [5, 25], [10, 37.5]],
    ["gemini-1.5-pro", "google-ai-studio", 128_000, [1.25, 5], [2.5, 10]],
  ] as const)("%s on %s: base up to %d input tokens, the long-context rate for the whole request above", (model, provider, threshold, base, long) => {
    const p = pricingOf(model, provider);
    const at = (prompt: number) => computeCost(usage(prompt, 1_000_000), p);
    // At the threshold: base prices.
    const below = at(threshold);
    expect(toUsdNumber(below.inputCost)).toBeCloseTo((base[0] * threshold) / 1e6, 9);
    expect(toUsdNumber(below.outputCost)).toBe(base[1]);
    // One token past it: every token, input and output, at the tier's price.
    const above = at(threshold + 1);
    expect(toUsdNumber(above.inputCost)).toBeCloseTo((long[0] * (threshold + 1)) / 1e6, 9);
    expect(toUsdNumber(above.outputCost)).toBe(long[1]);
  });

  it("cached tokens count toward the threshold and bill at the tier's cache-read price", () => {
    const p = pricingOf("gemini-2.5-pro", "google-ai-studio");
    const cost = computeCost(usage(250_000, 0, 200_000), p);
    expect(toUsdNumber(cost.cachedInputCost)).toBeCloseTo(0.25 * 0.2, 9);
    expect(toUsdNumber(cost.inputCost)).toBeCloseTo(2.5 * 0.05, 9);
  });

  it("the model object keeps the base prices and lists the tiers beside them", () => {
    const model = findModel("gemini-2.5-pro")!;
    const json = serializeMapping(model, model.mappings.find((m) => m.providerId === "google-ai-studio")!).pricing;
    expect([json.prompt, json.completion]).toEqual([perM("1.25"), perM("10")]);
    expect(json.tiers).toEqual([{ above_prompt_tokens: 200_000, prompt: perM("2.5"), input_cache_read: perM("0.25"), completion: perM("15") }]);
  });
});

describe("dated and time-of-day prices", () => {
  it("o3 before and after OpenAI's 2025-06-10 price cut", () => {
    const p = pricingOf("o3", "openai");
    const u = usage(1_000_000, 1_000_000);
    expect(toUsdNumber(computeCost(u, p, { at: Date.parse("2025-06-01T00:00:00Z") }).total)).toBe(10 + 40);
    expect(toUsdNumber(computeCost(u, p, { at: Date.parse("2025-06-10T00:00:00Z") }).total)).toBe(2 + 8);
    // The listing shows the price in force now.
    const model = findModel("o3")!;
    expect(serializeMapping(model, model.mappings.find((m) => m.providerId === "openai")!).pricing.prompt).toBe(perM("2"));
  });

  it("time-of-day windows win over the dated base while they last (DeepSeek V4 peak hours)", () => {
    const p = pricingOf("deepseek-v4-flash", "deepseek");
    const price = (iso: string) => pricingInForce(p, { at: Date.parse(iso), promptTokens: 0 }).prompt;
    expect(price("2026-08-01T02:00:00Z")).toBe(perM("0.44")); // peak window, matched by time alone
    expect(price("2026-08-01T12:00:00Z")).toBe(perM("0.14")); // before the 2026-08-17 change
    expect(price("2026-09-01T12:00:00Z")).toBe(perM("0.22")); // off-peak after it
    expect(price("2026-09-01T07:30:00Z")).toBe(perM("0.44")); // second peak window
  });

  it("a wrapping window (22:00-02:00) covers both sides of midnight", () => {
    const p = { prompt: "1", completion: "1", schedule: [{ utcStart: "22:00:00", utcEnd: "02:00:00", prices: { prompt: "2" } }] };
    const price = (iso: string) => pricingInForce(p, { at: Date.parse(iso), promptTokens: 0 }).prompt;
    expect([price("2026-01-01T23:00:00Z"), price("2026-01-01T01:00:00Z"), price("2026-01-01T03:00:00Z")]).toEqual(["2", "2", "1"]);
  });
});

describe("admission", () => {
  const request = (chars: number): ChatRequest => ({ model: "gemini-2.5-pro", messages: [{ role: "user", content: "x".repeat(chars) }], max_tokens: 1000 }) as ChatRequest;

  it("reserves at the long-context rate when the prompt can pass the threshold, the base rate when it cannot", () => {
    const m = mappingFor("gemini-2.5-pro", "google-ai-studio")!;
    const target = { pricing: m.pricing, maxOutput: m.maxOutput, contextLength: m.contextLength };
    const short = estimateUpperBound(request(1000), [target]);
    const long = estimateUpperBound(request(300_000), [target]);
    // A short prompt: base prices (1.25/M in, 10/M out).
    const shortPrompt = 1000 + 16 + 8;
    expect(short).toBe(BigInt(shortPrompt) * 1_250_000n + 1000n * 10_000_000n);
    // A 300K prompt can only bill at the tier: 2.5/M in, 15/M out.
    const longPrompt = 300_000 + 16 + 8;
    expect(long).toBe(BigInt(longPrompt) * 2_500_000n + 1000n * 15_000_000n);
  });

  it("the dearest pricing takes the peak window whatever the hour", () => {
    const p = pricingOf("deepseek-v4-flash", "deepseek");
    expect(dearestPricing(p, 0).prompt).toBe(perM("0.44"));
  });
});
