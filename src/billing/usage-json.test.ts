import { describe, expect, it } from "vitest";
import { emptyUsage } from "../providers/types";
import { computeCost } from "./cost";
import { toOpenAIUsage } from "./usage-json";

describe("toOpenAIUsage", () => {
  it("renders every spec 2.4 usage field", () => {
    const usage = {
      ...emptyUsage(),
      promptTokens: 10_000, cachedTokens: 2_000, cacheWrite5mTokens: 1_000, cacheWrite1hTokens: 500, audioInputTokens: 300,
      imageInputTokens: 200, videoInputTokens: 100, completionTokens: 5_000, reasoningTokens: 1_000, audioOutputTokens: 100,
      imageOutputTokens: 1_290, webSearchRequests: 2,
    };
    const cost = computeCost(usage, {
      prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375",
      input_cache_write_1h: "0.000006", input_audio: "0.00004", image: "0.0000025", internal_reasoning: "0.00001",
      output_audio: "0.00008", image_output: "0.00003", request: "0.001", web_search: "0.005",
    }, { discount: "0.2" });
    expect(toOpenAIUsage(usage, cost, "credits")).toEqual({
      prompt_tokens: 10_000,
      completion_tokens: 5_000,
      total_tokens: 15_000,
      reasoning_tokens: 1_000,
      prompt_tokens_details: {
        cached_tokens: 2_000,
        cache_write_tokens: 1_500,
        cache_creation_tokens: 1_500,
        audio_tokens: 300,
        video_tokens: 100,
        cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 500 },
      },
      completion_tokens_details: { reasoning_tokens: 1_000, image_tokens: 1_290, audio_tokens: 100 },
      cost: 0.11576,
      cost_details: {
        upstream_inference_cost: 0.1447,
        upstream_inference_prompt_cost: 0.03785,
        upstream_inference_completions_cost: 0.09585,
        total_cost: 0.11576,
        input_cost: 0.018,
        output_cost: 0.05715, // 0.04915 text+reasoning + 0.008 audio
        cached_input_cost: 0.0006,
        cache_write_input_cost: 0.00675,
        request_cost: 0.001,
        web_search_cost: 0.01,
        image_input_cost: 0.0005,
        image_output_cost: 0.0387,
        audio_input_cost: 0.012,
        data_storage_cost: 0,
      },
      info: "credits",
    });
  });

  it("has zeros and no info by default", () => {
    const u = toOpenAIUsage(emptyUsage(), computeCost(emptyUsage(), { prompt: "0.1", completion: "0.1" }));
    expect(u.cost).toBe(0);
    expect("info" in u).toBe(false);
    expect(Object.values(u.cost_details).every((v) => v === 0)).toBe(true);
  });
});
