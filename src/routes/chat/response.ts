/**
 * Assembly of what the caller gets (spec 2.4): completion JSON, usage with cost, metadata.
 */
import type { RoutingAttempt } from "../../db/schema";
import type { ChatRequest, Choice, NormalizedUsage } from "../../providers/types";
import { computeCost, zeroCost, type CostBreakdown, type CostOptions } from "../../billing/cost";
import { toOpenAIUsage, type OpenAIUsage } from "../../billing/usage-json";
import type { Pricing } from "../../catalog/types";
import type { Pico } from "../../billing/money";
import { randomAlphanumeric } from "../../lib/ids";
import { wireToolCall } from "../../providers/tool-call-wire";

export const newCompletionId = (): string => `chatcmpl-${randomAlphanumeric(24)}`;

export interface ChatMetadata {
  request_id: string;
  requested_model: string;
  /** The pinned provider (`provider/model` ids, `custom:<name>`); "" when none was requested. */
  requested_provider: string;
  used_model: string;
  used_provider: string;
  /** "" when the provider has no fixed region. */
  used_region: string;
  underlying_used_model: string;
  log_id: string;
  organization_id: string;
  project_id: string;
  discount: number;
  cached: boolean;
  routing: RoutingAttempt[];
}

export interface PricedUsage {
  usage: NormalizedUsage;
  cost: CostBreakdown;
  json: OpenAIUsage;
}

export function priceUsage(usage: NormalizedUsage, pricing: Pricing | null, opts: CostOptions = {}): PricedUsage {
  const cost = pricing ? computeCost(usage, pricing, opts) : zeroCost();
  return { usage, cost, json: toOpenAIUsage(usage, cost) };
}

/** What of the request itself decides its prices (the per-request fee by search context size). */
export const costOptionsOf = (req: Pick<ChatRequest, "web_search_options">): CostOptions =>
  req.web_search_options?.search_context_size ? { searchContextSize: req.web_search_options.search_context_size } : {};

/** Who pays: the operator's credits or the caller's own provider account. */
export function splitCost(total: Pico, source: "credits" | "byok"): { creditsPico: Pico; byokPico: Pico } {
  return source === "credits" ? { creditsPico: total, byokPico: 0n } : { creditsPico: 0n, byokPico: total };
}

export function completionJson(o: {
  id: string;
  created: number;
  model: string;
  choices: Choice[];
  usage: OpenAIUsage;
  metadata: ChatMetadata;
  systemFingerprint?: string | undefined;
}): Record<string, unknown> {
  return {
    id: o.id,
    object: "chat.completion",
    created: o.created,
    model: o.model,
    choices: o.choices.map((c) => ({
      index: c.index,
      message: {
        role: "assistant",
        content: c.message.content,
        ...(c.message.reasoning ? { reasoning: c.message.reasoning } : {}),
        ...(c.message.reasoning_details?.length ? { reasoning_details: c.message.reasoning_details } : {}),
        ...(c.message.tool_calls?.length ? { tool_calls: c.message.tool_calls.map(wireToolCall) } : {}),
        ...(c.message.images?.length ? { images: c.message.images } : {}),
        ...(c.message.refusal ? { refusal: c.message.refusal } : { refusal: null }),
      },
      logprobs: c.logprobs ?? null,
      finish_reason: c.finish_reason ?? "stop",
    })),
    usage: o.usage,
    ...(o.systemFingerprint ? { system_fingerprint: o.systemFingerprint } : {}),
    metadata: o.metadata,
  };
}

export function usageChunkJson(o: { id: string; created: number; model: string; usage: OpenAIUsage; metadata: ChatMetadata }): Record<string, unknown> {
  return { id: o.id, object: "chat.completion.chunk", created: o.created, model: o.model, choices: [], usage: o.usage, metadata: o.metadata };
}
