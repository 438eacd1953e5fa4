/**
 * The chat pipeline's answer -> an OpenAI Responses `response` object. Pure.
 * Output items in order: `reasoning` (the reasoning text as a summary), `message` (one
 * `output_text` part), then one `function_call` (or `custom_tool_call`) per tool call. A `length` finish makes the response
 * `incomplete` with reason `max_output_tokens`; `content_filter` with reason `content_filter`.
 */
import { randomAlphanumeric } from "../../lib/ids";
import type { ChatUsageJson, CompletionJson } from "../chat-sse";
import type { ResponsesRequest } from "./request";

export const newItemId = (prefix: string): string => `${prefix}_${randomAlphanumeric(24)}`;

export interface ResponsesUsage {
  input_tokens: number;
  /** `cache_write_tokens`: prompt tokens written to the provider's cache (Anthropic cache writes), 0 elsewhere. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  cost?: number;
}

export function usageOf(u: ChatUsageJson | null | undefined): ResponsesUsage {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: u?.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
    ...(typeof u?.cost === "number" ? { cost: u.cost } : {}),
  };
}

export type ResponseStatus = "completed" | "incomplete" | "in_progress" | "failed";

export function statusOf(finish: string | null | undefined): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  if (finish === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finish === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/**
 * The request fields a `response` object echoes, with Responses defaults; `model` is the one that
 * served (the requested one, or the fallback model that answered instead).
 */
export function responseShell(req: ResponsesRequest, id: string, createdAt: number, model: string): Record<string, unknown> {
  return {
    id,
    object: "response",
    created_at: createdAt,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    store: false,
    temperature: req.temperature ?? 1,
    text: { format: req.text?.format ?? { type: "text" }, ...(req.text?.verbosity ? { verbosity: req.text.verbosity } : {}) },
    tool_choice: req.tool_choice ?? "auto",
    tools: [
      ...req.tools.map((t) => ({ type: "function", name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
      ...req.customTools.map((t) => ({ type: "custom", name: t.name, ...(t.description ? { description: t.description } : {}), ...(t.format ? { format: t.format } : {}) })),
    ],
    top_p: req.top_p ?? 1,
    truncation: "disabled",
    usage: null,
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}

/** An `output_text` part as the Responses schema has it; the chat pipeline carries no token logprobs, so `logprobs` is empty. */
export const outputTextPart = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] });
export const reasoningItem = (id: string, text: string) => ({ type: "reasoning", id, summary: text ? [{ type: "summary_text", text }] : [] });
export const messageItem = (id: string, text: string, status: "in_progress" | "completed") => ({
  type: "message",
  id,
  status,
  role: "assistant",
  content: status === "completed" ? [outputTextPart(text)] : [],
});
/** A refusal is a message whose content part is `refusal` (the Responses API's shape for it). */
export const refusalItem = (id: string, refusal: string, status: "in_progress" | "completed") => ({
  type: "message",
  id,
  status,
  role: "assistant",
  content: status === "completed" ? [{ type: "refusal", refusal }] : [],
});
export const functionCallItem = (id: string, callId: string, name: string, args: string, status: "in_progress" | "completed") => ({
  type: "function_call",
  id,
  call_id: callId,
  name,
  arguments: args,
  status,
});

export const customToolCallItem = (id: string, callId: string, name: string, input: string, status: "in_progress" | "completed") => ({
  type: "custom_tool_call",
  id,
  call_id: callId,
  name,
  input,
  status,
});

export function responseFromCompletion(req: ResponsesRequest, c: CompletionJson, id: string, createdAt: number): Record<string, unknown> {
  const choice = c.choices[0];
  const output: unknown[] = [];
  if (choice?.message.reasoning) output.push(reasoningItem(newItemId("rs"), choice.message.reasoning));
  if (choice?.message.content) output.push(messageItem(newItemId("msg"), choice.message.content, "completed"));
  if (choice?.message.refusal) output.push(refusalItem(newItemId("msg"), choice.message.refusal, "completed"));
  for (const tc of choice?.message.tool_calls ?? []) {
    output.push(tc.type === "custom" ? customToolCallItem(newItemId("ctc"), tc.id, tc.custom.name, tc.custom.input, "completed") : functionCallItem(newItemId("fc"), tc.id, tc.function.name, tc.function.arguments, "completed"));
  }
  return {
    ...responseShell(req, id, createdAt, c.model),
    ...statusOf(choice?.finish_reason),
    output,
    usage: usageOf(c.usage),
    ...(c.metadata ? { gateway_metadata: c.metadata } : {}),
  };
}
