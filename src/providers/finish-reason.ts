/** Provider stop reasons -> OpenAI finish reasons, one table per wire format (pure data). */
import type { WireFormat } from "../catalog/types";
import type { FinishReason } from "./types";

const TABLES: Record<WireFormat, Readonly<Record<string, FinishReason>>> = {
  openai: {
    stop: "stop",
    length: "length",
    tool_calls: "tool_calls",
    function_call: "tool_calls",
    content_filter: "content_filter",
    error: "error",
    end_turn: "stop",
    eos: "stop",
    max_tokens: "length",
    model_length: "length",
  },
  azure: {
    stop: "stop",
    length: "length",
    tool_calls: "tool_calls",
    function_call: "tool_calls",
    content_filter: "content_filter",
  },
  anthropic: {
    end_turn: "stop",
    stop_sequence: "stop",
    pause_turn: "stop",
    max_tokens: "length",
    model_context_window_exceeded: "length",
    tool_use: "tool_calls",
    refusal: "content_filter",
  },
  google: {
    STOP: "stop",
    FINISH_REASON_UNSPECIFIED: "stop",
    MAX_TOKENS: "length",
    SAFETY: "content_filter",
    RECITATION: "content_filter",
    BLOCKLIST: "content_filter",
    PROHIBITED_CONTENT: "content_filter",
    SPII: "content_filter",
    IMAGE_SAFETY: "content_filter",
    IMAGE_PROHIBITED_CONTENT: "content_filter",
    IMAGE_RECITATION: "content_filter",
    LANGUAGE: "content_filter",
    MALFORMED_FUNCTION_CALL: "error",
    UNEXPECTED_TOOL_CALL: "error",
    TOO_MANY_TOOL_CALLS: "error",
    NO_IMAGE: "error",
    IMAGE_OTHER: "error",
    OTHER: "error",
  },
  bedrock: {
    end_turn: "stop",
    stop_sequence: "stop",
    max_tokens: "length",
    model_context_window_exceeded: "length",
    tool_use: "tool_calls",
    guardrail_intervened: "content_filter",
    content_filtered: "content_filter",
  },
};

/**
 * Null when the provider gave none; unknown values become "stop" (the turn did end). Own keys
 * only: an upstream's `constructor` or `__proto__` is an unknown reason, not an Object.prototype member.
 */
export function mapFinishReason(format: WireFormat, raw: string | null | undefined): FinishReason | null {
  if (raw === null || raw === undefined || raw === "") return null;
  const table = TABLES[format];
  return Object.hasOwn(table, raw) ? table[raw]! : "stop";
}
