import { describe, expect, it } from "vitest";
import type { Pricing } from "../catalog/types";
import { emptyUsage, type NormalizedUsage } from "../providers/types";
import { computeCost, zeroCost } from "./cost";
import { formatUsd, toUsdNumber } from "./money";

const usage = (u: Partial<NormalizedUsage>): NormalizedUsage => ({ ...emptyUsage(), ...u });
const usd = (p: bigint) => formatUsd(p);

describe("computeCost", () => {
  it("is exact where floats drift (3 x 0.1-style)", () => {
    const c = computeCost(usage({ promptTokens: 3, completionTokens: 3 }), { prompt: "0.0000001", completion: "0.0000004" });
    // In floats 0.1 + 0.2 drifts; in pico it cannot.
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(usd(c.inputCost)).toBe("0.0000003");
    expect(usd(c.outputCost)).toBe("0.0000012");
    expect(usd(c.total)).toBe("0.0000015");
    expect(toUsdNumber(c.total)).toBe(0.0000015);
    expect(3 * 0.1).not.toBe(0.3);
    const tenth = computeCost(usage({ promptTokens: 3 }), { prompt: "0.1", completion: "0.1" });
    expect(usd(tenth.total)).toBe("0.3");
    expect(toUsdNumber(tenth.total)).toBe(0.3);
    const mixed = computeCost(usage({ promptTokens: 1, completionTokens: 1 }), { prompt: "0.0000001", completion: "0.0000002" });
    expect(toUsdNumber(mixed.total)).toBe(0.0000003);
  });

  const full: Pricing = {
    prompt: "0.000003",
    completion: "0.000015",
    input_cache_read: "0.0000003",
    input_cache_write: "0.00000375",
    input_cache_write_1h: "0.000006",
    input_audio: "0.00004",
    image: "0.0000025",
    internal_reasoning: "0.00001",
    output_audio: "0.00008",
    image_output: "0.00003",
    request: "0.001",
    web_search: "0.005",
  };
  const big = usage({
    promptTokens: 10_000,
    cachedTokens: 2_000,
    cacheWrite5mTokens: 1_000,
    cacheWrite1hTokens: 500,
    audioInputTokens: 300,
    imageInputTokens: 200,
    videoInputTokens: 100,
    completionTokens: 5_000,
    reasoningTokens: 1_000,
    audioOutputTokens: 100,
    imageOutputTokens: 1_290,
    webSearchRequests: 2,
  });

  it("prices every component with its own price", () => {
    const c = computeCost(big, full);
    // uncached prompt = 10000 - 2000 - 1000 - 500 - 300 - 200 = 6000 (video stays at the prompt price)
    expect(usd(c.inputCost)).toBe("0.018"); // 6000 x 0.000003
    expect(usd(c.cachedInputCost)).toBe("0.0006"); // 2000 x 0.0000003
    expect(usd(c.cacheWriteInputCost)).toBe("0.00675"); // 1000 x 0.00000375 + 500 x 0.000006
    expect(usd(c.audioInputCost)).toBe("0.012"); // 300 x 0.00004
    expect(usd(c.imageInputCost)).toBe("0.0005"); // 200 x 0.0000025
    // text completion = 5000 - 1290 - 100 - 1000 = 2610
    expect(usd(c.reasoningCost)).toBe("0.01"); // 1000 x 0.00001
    expect(usd(c.outputCost)).toBe("0.04915"); // 2610 x 0.000015 + 0.01
    expect(usd(c.audioOutputCost)).toBe("0.008"); // 100 x 0.00008
    expect(usd(c.imageOutputCost)).toBe("0.0387"); // 1290 x 0.00003
    expect(usd(c.requestCost)).toBe("0.001");
    expect(usd(c.webSearchCost)).toBe("0.01"); // 2 x 0.005
    expect(usd(c.promptCost)).toBe("0.03785");
    expect(usd(c.completionCost)).toBe("0.09585");
    expect(usd(c.upstreamCost)).toBe("0.1447");
    expect(c.discountCost).toBe(0n);
    expect(usd(c.total)).toBe("0.1447");
  });

  it("applies a discount exactly", () => {
    const c = computeCost(big, full, { discount: "0.2" });
    expect(usd(c.discountCost)).toBe("0.02894");
    expect(usd(c.total)).toBe("0.11576");
    expect(usd(computeCost(big, full, { discount: "1" }).total)).toBe("0");
    expect(() => computeCost(big, full, { discount: "1.5" })).toThrow(RangeError);
  });

  it("falls back to the prompt/completion price when specific prices are missing", () => {
    const u = usage({
      promptTokens: 1000, cachedTokens: 400, cacheWrite5mTokens: 100, cacheWrite1hTokens: 50, audioInputTokens: 10, imageInputTokens: 5,
      completionTokens: 300, reasoningTokens: 100, audioOutputTokens: 20, imageOutputTokens: 30, webSearchRequests: 3,
    });
    const c = computeCost(u, { prompt: "0.000002", completion: "0.000008" });
    expect(usd(c.inputCost)).toBe("0.00087"); // 435 x 0.000002
    expect(usd(c.cachedInputCost)).toBe("0.0008"); // 400 x 0.000002
    expect(usd(c.cacheWriteInputCost)).toBe("0.0003"); // 150 x 0.000002
    expect(usd(c.audioInputCost)).toBe("0.00002");
    expect(usd(c.imageInputCost)).toBe("0.00001");
    expect(usd(c.promptCost)).toBe("0.002"); // = 1000 x 0.000002
    expect(usd(c.outputCost)).toBe("0.002"); // (150 text + 100 reasoning) x 0.000008
    expect(usd(c.audioOutputCost)).toBe("0.00016"); // 20 x 0.000008
    expect(usd(c.imageOutputCost)).toBe("0.00024"); // 30 x 0.000008
    expect(usd(c.completionCost)).toBe("0.0024"); // = 300 x 0.000008
    expect(c.requestCost).toBe(0n);
    expect(c.webSearchCost).toBe(0n);
    expect(usd(c.total)).toBe("0.0044");
  });

  it("prices 1h cache writes at input_cache_write when there is no 1h price", () => {
    const c = computeCost(usage({ promptTokens: 200, cacheWrite1hTokens: 100 }), { prompt: "0.000003", completion: "0", input_cache_write: "0.00000375" });
    expect(usd(c.cacheWriteInputCost)).toBe("0.000375");
    expect(usd(c.inputCost)).toBe("0.0003");
  });

  it("clamps inconsistent counts instead of charging negative or double", () => {
    const c = computeCost(usage({ promptTokens: 100, cachedTokens: 150, completionTokens: 10, reasoningTokens: 40 }), { prompt: "0.00001", completion: "0.00002", input_cache_read: "0.000001" });
    expect(c.inputCost).toBe(0n);
    expect(usd(c.cachedInputCost)).toBe("0.0001"); // 100 x 0.000001
    expect(usd(c.outputCost)).toBe("0.0002"); // 10 reasoning x 0.00002
  });

  it("prices generated images per image and does not charge their tokens again", () => {
    const pricing: Pricing = { prompt: "0.0000003", completion: "0.0000025", image_output: "0.00003", per_image: { "1024x1024": "0.04", "512x512": "0.02" } };
    const u = usage({ promptTokens: 10, completionTokens: 2600, imageOutputTokens: 2580 });
    const c = computeCost(u, pricing, { images: { count: 2, size: "512x512" } });
    expect(usd(c.imageOutputCost)).toBe("0.04");
    expect(usd(c.outputCost)).toBe("0.00005"); // 20 x 0.0000025
    const unsized = computeCost(u, pricing, { images: { count: 1 } });
    expect(usd(unsized.imageOutputCost)).toBe("0.04"); // first entry
    const tokenPriced = computeCost(u, pricing);
    expect(usd(tokenPriced.imageOutputCost)).toBe("0.0774"); // 2580 x 0.00003
  });

  it("charges the per-request price even for zero tokens; free is zero", () => {
    expect(usd(computeCost(emptyUsage(), { prompt: "0", completion: "0", request: "0.0004" }).total)).toBe("0.0004");
    expect(computeCost(big, { prompt: "0", completion: "0" }).total).toBe(0n);
    expect(zeroCost().total).toBe(0n);
  });
});
