/**
 * The chat pipeline's answer -> Anthropic Messages shapes. Pure.
 *
 * Content blocks in Anthropic's order: `thinking` / `redacted_thinking` (as the upstream signed
 * them when it was Anthropic-format: `reasoning_details`; reasoning of other providers has no
 * signature and comes as one `thinking` block with `signature: ""`, which the gateway does not
 * send to Anthropic when it comes back), `text`, then one `tool_use` per tool call (arguments
 * parsed back to an object). Finish reasons: stop -> end_turn, length -> max_tokens,
 * tool_calls -> tool_use, content_filter -> refusal. Usage in Anthropic semantics: `input_tokens`
 * excludes cache reads and writes, which are reported apart.
 */
import { randomAlphanumeric } from "../../lib/ids";
import type { ReasoningDetail } from "../../providers/types";
import type { ChatUsageJson, CompletionJson } from "../chat-sse";

export const newMessageId = (): string => `msg_${randomAlphanumeric(24)}`;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal";

export function stopReasonOf(finish: string | null | undefined): StopReason {
  switch (finish) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export function usageOf(u: ChatUsageJson | null | undefined): AnthropicUsage {
  if (!u) return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const read = u.prompt_tokens_details?.cached_tokens ?? 0;
  const write = u.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, u.prompt_tokens - read - write),
    output_tokens: u.completion_tokens,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  };
}

/** Tool arguments back to an object; a model that produced invalid JSON gets it as `{}`. */
export function parseToolInput(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A signed reasoning block back to Anthropic's block, unchanged. */
export const thinkingBlockOf = (d: ReasoningDetail): Record<string, unknown> =>
  d.type === "reasoning.encrypted" ? { type: "redacted_thinking", data: d.data } : { type: "thinking", thinking: d.text, signature: d.signature ?? "" };

export function messageFromCompletion(c: CompletionJson, id = newMessageId()): Record<string, unknown> {
  const choice = c.choices[0];
  const content: Array<Record<string, unknown>> = [];
  const details = choice?.message.reasoning_details ?? [];
  if (details.length) content.push(...details.map(thinkingBlockOf));
  else if (choice?.message.reasoning) content.push({ type: "thinking", thinking: choice.message.reasoning, signature: "" });
  if (choice?.message.content) content.push({ type: "text", text: choice.message.content });
  // Claude's own refusal is text with stop_reason `refusal`; an OpenAI-format refusal becomes that.
  const refusal = choice?.message.refusal;
  if (refusal) content.push({ type: "text", text: refusal });
  // Custom tools cannot be declared on /v1/messages, so no custom call comes back here.
  for (const tc of choice?.message.tool_calls ?? []) if (tc.type !== "custom") content.push({ type: "tool_use", id: tc.id, name: tc.function.name, input: parseToolInput(tc.function.arguments) });
  return {
    id,
    type: "message",
    role: "assistant",
    model: c.model,
    content,
    stop_reason: refusal ? "refusal" : stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: usageOf(c.usage),
    ...(c.metadata ? { metadata: c.metadata } : {}),
  };
}

/** Anthropic's error type for a status the gateway answered with. */
export function anthropicErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "billing_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export const errorBody = (type: string, message: string): Record<string, unknown> => ({ type: "error", error: { type, message } });
