/**
 * The `usage` object of a chat completion response (spec 2.4), every field present. Token counts
 * come from NormalizedUsage, money from a CostBreakdown (pico -> JSON number only here).
 */
import type { NormalizedUsage } from "../providers/types";
import type { CostBreakdown } from "./cost";
import { toUsdNumber } from "./money";

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  reasoning_tokens: number;
  prompt_tokens_details: {
    cached_tokens: number;
    cache_write_tokens: number;
    cache_creation_tokens: number;
    audio_tokens: number;
    video_tokens: number;
    cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  };
  completion_tokens_details: { reasoning_tokens: number; image_tokens: number; audio_tokens: number };
  cost: number;
  cost_details: {
    upstream_inference_cost: number;
    upstream_inference_prompt_cost: number;
    upstream_inference_completions_cost: number;
    total_cost: number;
    input_cost: number;
    output_cost: number;
    cached_input_cost: number;
    cache_write_input_cost: number;
    request_cost: number;
    web_search_cost: number;
    image_input_cost: number;
    image_output_cost: number;
    audio_input_cost: number;
    data_storage_cost: number;
    /** Present when a prompt-size tier applied: its threshold (the whole request is at its prices). */
    price_tier_above_tokens?: number;
  };
  /** Present only when there is a note: an empty string on every answer told clients nothing. */
  info?: string;
}

/**
 * `cost` / `total_cost` are what the request costs (after discount); `upstream_inference_*` are the
 * provider-side costs before discount. `output_cost` covers text, reasoning and audio output;
 * image output has its own field. `info` is a free-form note from the caller, left out when empty.
 */
export function toOpenAIUsage(usage: NormalizedUsage, cost: CostBreakdown, info = ""): OpenAIUsage {
  const cacheWrites = usage.cacheWrite5mTokens + usage.cacheWrite1hTokens;
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    reasoning_tokens: usage.reasoningTokens,
    prompt_tokens_details: {
      cached_tokens: usage.cachedTokens,
      cache_write_tokens: cacheWrites,
      cache_creation_tokens: cacheWrites,
      audio_tokens: usage.audioInputTokens,
      video_tokens: usage.videoInputTokens,
      cache_creation: {
        ephemeral_5m_input_tokens: usage.cacheWrite5mTokens,
        ephemeral_1h_input_tokens: usage.cacheWrite1hTokens,
      },
    },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens,
      image_tokens: usage.imageOutputTokens,
      audio_tokens: usage.audioOutputTokens,
    },
    cost: toUsdNumber(cost.total),
    cost_details: {
      upstream_inference_cost: toUsdNumber(cost.upstreamCost),
      upstream_inference_prompt_cost: toUsdNumber(cost.promptCost),
      upstream_inference_completions_cost: toUsdNumber(cost.completionCost),
      total_cost: toUsdNumber(cost.total),
      input_cost: toUsdNumber(cost.inputCost),
      output_cost: toUsdNumber(cost.outputCost + cost.audioOutputCost),
      cached_input_cost: toUsdNumber(cost.cachedInputCost),
      cache_write_input_cost: toUsdNumber(cost.cacheWriteInputCost),
      request_cost: toUsdNumber(cost.requestCost),
      web_search_cost: toUsdNumber(cost.webSearchCost),
      image_input_cost: toUsdNumber(cost.imageInputCost),
      image_output_cost: toUsdNumber(cost.imageOutputCost),
      audio_input_cost: toUsdNumber(cost.audioInputCost),
      data_storage_cost: 0,
      ...(cost.tierAbove !== undefined ? { price_tier_above_tokens: cost.tierAbove } : {}),
    },
    ...(info ? { info } : {}),
  };
}
