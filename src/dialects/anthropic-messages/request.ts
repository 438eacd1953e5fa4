/**
 * Anthropic Messages request (2023-06-01 shapes) -> the gateway's chat request. Pure.
 *
 * - `system` (string or text blocks) -> one system message; `cache_control` on text blocks is kept
 *   (Anthropic-format upstreams receive it, other formats drop it).
 * - text / image (base64 or url) / document (base64 PDF or plain text) blocks -> chat content parts.
 * - assistant `tool_use` -> `tool_calls` (input serialized); user `tool_result` -> `role: "tool"`
 *   messages, placed before the rest of that user turn; `thinking` -> `reasoning`, and signed
 *   `thinking` / `redacted_thinking` blocks -> `reasoning_details` (sent back unchanged to
 *   Anthropic-format upstreams; an empty signature, as on reasoning from other providers, is not).
 * - `tools` (custom tools) -> function tools; `tool_choice` auto/any/tool/none -> auto/required/
 *   function/none; `disable_parallel_tool_use` -> `parallel_tool_calls: false`.
 * - `thinking.budget_tokens` -> `reasoning_effort` (the nearest effort whose budget covers it).
 * - `system` turns inside `messages` (Claude Code sends them) -> system messages in place.
 * - `stop_sequences` -> `stop`, `metadata.user_id` -> `user` (Anthropic's `metadata` has no other
 *   field; OpenAI's `metadata` pairs are another thing); `top_k` has no chat equivalent and
 *   is dropped.
 * - `service_tier` (`auto` | `standard_only`) is validated and not carried: no Chat Completions
 *   tier means the same, so the upstream request names none (the provider's default tier).
 */
import * as z from "zod";
import { fallbackModelsSchema, providerPreferencesSchema } from "../../routing/preferences";
import { badRequest } from "../../errors/api-error";
import { parseOrThrow } from "../../errors/validation";
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ReasoningDetail, TextPart, ToolCall, ToolChoice } from "../../providers/types";

const cacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() }).nullish();
const textBlock = z.object({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });
const imageSource = z.discriminatedUnion("type", [
  z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string().min(1) }),
  z.object({ type: z.literal("url"), url: z.string().min(1) }),
]);
const imageBlock = z.object({ type: z.literal("image"), source: imageSource, cache_control: cacheControl });
const documentBlock = z.object({
  type: z.literal("document"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string().min(1) }),
    z.object({ type: z.literal("text"), media_type: z.string().optional(), data: z.string() }),
    z.object({ type: z.literal("url"), url: z.string().min(1) }),
  ]),
  title: z.string().nullish(),
  cache_control: cacheControl,
});
const toolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string().min(1), name: z.string().min(1), input: z.unknown(), cache_control: cacheControl });
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() });
const redactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string() });
const block = z.discriminatedUnion("type", [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
type Block = z.infer<typeof block>;

const tool = z.object({
  type: z.enum(["custom"]).optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

export const messagesRequestSchema = z.object({
  model: z.string().min(1, "model is required"),
  max_tokens: z.number().int().positive(),
  /** `system` turns inside `messages`: Claude Code 2.1 sends them (environment notes) for models it does not know. */
  messages: z.array(z.object({ role: z.enum(["user", "assistant", "system"]), content: z.union([z.string(), z.array(block)]) })).min(1, "at least one message is required"),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
  tools: z.array(tool).optional(),
  tool_choice: z
    .discriminatedUnion("type", [
      z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
      z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
      z.object({ type: z.literal("tool"), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
      z.object({ type: z.literal("none") }),
    ])
    .optional(),
  thinking: z
    .discriminatedUnion("type", [
      z.object({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1) }),
      z.object({ type: z.literal("disabled") }),
      z.object({ type: z.literal("adaptive") }),
    ])
    .optional(),
  metadata: z.object({ user_id: z.string().max(256).nullish() }).optional(),
  service_tier: z.enum(["auto", "standard_only"]).optional(),  /** Routing preferences and fallback models, as on /v1/chat/completions (src/routing/preferences.ts). */
  provider: providerPreferencesSchema.nullish(),
  models: fallbackModelsSchema.nullish(),
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

/** Validates a raw body, or throws the 400 naming the field (in Anthropic's terms). */
export function parseMessagesRequest(body: unknown): MessagesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("The request body must be a JSON object.");
  return parseOrThrow(messagesRequestSchema, body);
}

/** `count_tokens` takes a Messages request without `max_tokens`. */
export function parseCountTokensRequest(body: unknown): MessagesRequest {
  const withCap = typeof body === "object" && body !== null && !Array.isArray(body) ? { max_tokens: 1, ...body } : body;
  return parseMessagesRequest(withCap);
}

/** Effort whose thinking budget (src/providers/anthropic THINKING_BUDGETS) is the smallest covering `budget`. */
export function effortForBudget(budget: number): NonNullable<ChatRequest["reasoning_effort"]> {
  if (budget <= 1024) return "minimal";
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  return "high";
}

const withCache = (part: TextPart, cc: { type: "ephemeral"; ttl?: "5m" | "1h" | undefined } | null | undefined): TextPart =>
  cc ? { ...part, cache_control: cc.ttl ? { type: "ephemeral", ttl: cc.ttl } : { type: "ephemeral" } } : part;

function userPart(b: Block): ContentPart | null {
  switch (b.type) {
    case "text":
      return withCache({ type: "text", text: b.text }, b.cache_control);
    case "image":
      return { type: "image_url", image_url: { url: b.source.type === "base64" ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url } };
    case "document":
      if (b.source.type === "text") return { type: "text", text: b.source.data };
      if (b.source.type === "url") return { type: "file", file: { file_data: b.source.url, ...(b.title ? { filename: b.title } : {}) } };
      return { type: "file", file: { file_data: `data:${b.source.media_type};base64,${b.source.data}`, ...(b.title ? { filename: b.title } : {}) } };
    default:
      return null;
  }
}

const toolResultText = (content: z.infer<typeof toolResultBlock>["content"]): string =>
  typeof content === "string" ? content : (content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

function translateMessage(m: MessagesRequest["messages"][number], index: number): ChatMessage[] {
  if (m.role === "system") {
    if (typeof m.content === "string") return [{ role: "system", content: m.content }];
    return [{ role: "system", content: m.content.map((b, j) => {
      if (b.type !== "text") throw badRequest(`'${b.type}' blocks are not allowed in system messages.`, `messages.${index}.content.${j}`);
      return withCache({ type: "text", text: b.text }, b.cache_control);
    }) }];
  }
  if (typeof m.content === "string") return [m.role === "user" ? { role: "user", content: m.content } : { role: "assistant", content: m.content }];
  if (m.role === "assistant") {
    let text = "";
    let reasoning = "";
    const calls: ToolCall[] = [];
    const details: ReasoningDetail[] = [];
    for (const b of m.content) {
      if (b.type === "text") text += b.text;
      else if (b.type === "thinking") {
        reasoning += b.thinking;
        // Signed blocks travel back unchanged (Anthropic-format upstreams verify them); unsigned ones are text only.
        if (b.signature) details.push({ type: "reasoning.text", text: b.thinking, signature: b.signature });
      } else if (b.type === "redacted_thinking") details.push({ type: "reasoning.encrypted", data: b.data });
      else if (b.type === "tool_use") calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
      else throw badRequest(`'${b.type}' blocks are not allowed in assistant messages.`, `messages.${index}.content`);
    }
    return [{ role: "assistant", content: text || null, ...(calls.length ? { tool_calls: calls } : {}), ...(reasoning ? { reasoning } : {}), ...(details.length ? { reasoning_details: details } : {}) }];
  }
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const b of m.content) {
    if (b.type === "tool_result") {
      const text = toolResultText(b.content);
      out.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.is_error ? `Error: ${text}` : text });
      continue;
    }
    const part = userPart(b);
    if (!part) throw badRequest(`'${b.type}' blocks are not allowed in user messages.`, `messages.${index}.content`);
    parts.push(part);
  }
  if (parts.length) out.push({ role: "user", content: parts });
  return out;
}

function toolChoiceOf(tc: NonNullable<MessagesRequest["tool_choice"]>): ToolChoice {
  switch (tc.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    default:
      return { type: "function", function: { name: tc.name } };
  }
}

/** The chat request the pipeline runs for this Messages request. */
export function toChatRequest(req: MessagesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (req.system !== undefined) {
    const content = typeof req.system === "string" ? req.system : req.system.map((b) => withCache({ type: "text", text: b.text }, b.cache_control));
    if (content.length) messages.push({ role: "system", content });
  }
  req.messages.forEach((m, i) => messages.push(...translateMessage(m, i)));
  const out: ChatRequest = { model: req.model, messages, max_tokens: req.max_tokens };
  if (req.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.stop_sequences?.length) out.stop = req.stop_sequences;
  if (req.metadata?.user_id) out.user = req.metadata.user_id;
  if (req.tools?.length) {
    out.tools = req.tools.map((t): FunctionTool => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  if (req.tool_choice) {
    out.tool_choice = toolChoiceOf(req.tool_choice);
    if ("disable_parallel_tool_use" in req.tool_choice && req.tool_choice.disable_parallel_tool_use) out.parallel_tool_calls = false;
  }
  if (req.thinking?.type === "enabled") out.reasoning_effort = effortForBudget(req.thinking.budget_tokens);
  else if (req.thinking?.type === "adaptive") out.reasoning_effort = "medium";
  if (req.provider) out.provider = req.provider;
  if (req.models?.length) out.models = req.models;
  return out;
}
