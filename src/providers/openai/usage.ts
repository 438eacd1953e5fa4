/** OpenAI-style `usage` objects -> NormalizedUsage (also Azure and most OpenAI-compatible providers). */
import { emptyUsage, type NormalizedUsage } from "../types";
import { asRecord, count, isRecord } from "../json";

export function parseOpenAIUsage(raw: unknown): NormalizedUsage {
  const u = asRecord(raw);
  const prompt = asRecord(u.prompt_tokens_details);
  const completion = asRecord(u.completion_tokens_details);
  const usage = emptyUsage();
  usage.promptTokens = count(u.prompt_tokens ?? u.input_tokens);
  usage.completionTokens = count(u.completion_tokens ?? u.output_tokens);
  if (u.completion_tokens === undefined && u.output_tokens === undefined && typeof u.total_tokens === "number") {
    usage.completionTokens = Math.max(0, count(u.total_tokens) - usage.promptTokens);
  }
  // DeepSeek reports cache hits at the top level.
  usage.cachedTokens = count(prompt.cached_tokens ?? u.prompt_cache_hit_tokens);
  usage.cacheWrite5mTokens = count(prompt.cache_write_tokens ?? prompt.cache_creation_tokens);
  usage.audioInputTokens = count(prompt.audio_tokens);
  usage.imageInputTokens = count(prompt.image_tokens);
  usage.videoInputTokens = count(prompt.video_tokens);
  usage.reasoningTokens = count(completion.reasoning_tokens ?? u.reasoning_tokens);
  // Perplexity reports citation tokens; they are output tokens, billed at their own price.
  const citations = count(u.citation_tokens);
  if (citations > 0) usage.citationTokens = citations;
  // Some providers (xAI, Perplexity) count reasoning and citation tokens outside completion_tokens:
  // total = prompt + completion + reasoning (+ citations). Inside, total = prompt + completion.
  const total = count(u.total_tokens);
  const base = usage.promptTokens + usage.completionTokens;
  if (usage.reasoningTokens + citations > 0 && total === base + usage.reasoningTokens + citations) {
    usage.completionTokens += usage.reasoningTokens + citations;
  } else if (usage.reasoningTokens > 0 && total === base + usage.reasoningTokens) {
    usage.completionTokens += usage.reasoningTokens;
  } else if (citations > 0 && total === base + citations) {
    usage.completionTokens += citations;
  }
  usage.audioOutputTokens = count(completion.audio_tokens);
  usage.imageOutputTokens = count(completion.image_tokens);
  const serverTools = asRecord(u.server_tool_use);
  usage.webSearchRequests = count(u.num_search_queries ?? serverTools.web_search_requests);
  return usage;
}

/** Whether a chunk's `usage` is a real usage object (some providers send `usage: null`). */
export const hasUsage = (raw: unknown): boolean =>
  isRecord(raw) && (typeof raw.prompt_tokens === "number" || typeof raw.completion_tokens === "number" || typeof raw.total_tokens === "number");
