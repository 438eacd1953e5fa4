/** OpenAI chat request -> Anthropic Messages API request (POST /v1/messages). */
import { badRequest } from "../../errors/api-error";
import type { BuildOptions, ChatMessage, ChatRequest, ContentPart, ReasoningDetail, ToolChoice, UpstreamCall, UpstreamTarget } from "../types";
import type { ProviderMapping } from "../../catalog/types";
import { upstreamPost } from "../types";
import { parseDataUrl } from "../data-url";
import { contentText, isRecord, tryParseJson } from "../json";
import { claudeHasNativeJson, jsonOutputPlan, planForcesTool, type JsonOutputPlan } from "./structured-output";

export const ANTHROPIC_VERSION = "2023-06-01";

/** Thinking budgets per reasoning effort ("none" disables thinking). */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32768, max: 65536 };
const MIN_THINKING_BUDGET = 1024;

/**
 * The output budget of a Claude request (Anthropic Messages, and Claude on Bedrock) for a caller's
 * cap: with a reasoning effort, the thinking budget, and `max_tokens` raised to leave room for it
 * (budget + cap, at most the model's maximum output) since thinking counts against `max_tokens`.
 * The one place that decides what is sent upstream: the adapters build their bodies from it and
 * admission reserves its `maxTokens` (`outputTokensBound`), so a reservation is never smaller
 * than the output the upstream may bill (docs/admission.md).
 */
export function claudeOutputBudget(cap: number, effort: string | undefined, modelMax: number): { maxTokens: number; budget: number | null } {
  if (!effort || effort === "none") return { maxTokens: cap, budget: null };
  let budget = THINKING_BUDGETS[effort] ?? MIN_THINKING_BUDGET;
  let maxTokens = cap;
  if (budget >= maxTokens) maxTokens = Math.min(budget + maxTokens, Math.max(modelMax, maxTokens));
  if (budget >= maxTokens) budget = maxTokens - 1;
  return budget >= MIN_THINKING_BUDGET ? { maxTokens, budget } : { maxTokens: cap, budget: null };
}

/**
 * The most output tokens an Anthropic request may bill: the caller's cap (else the model's
 * maximum), raised for thinking whenever the adapter may enable it. The history rule
 * (`thinkingAllowed`) is left out: it can only turn thinking off, so this stays an upper bound.
 */
export function anthropicOutputTokensBound(req: ChatRequest, mapping: ProviderMapping): number {
  const cap = req.max_completion_tokens ?? req.max_tokens ?? mapping.maxOutput;
  if (!mapping.reasoning || forcesToolUse(req) || planForcesTool(anthropicJsonPlan(req, mapping))) return cap;
  return claudeOutputBudget(cap, req.reasoning_effort, mapping.maxOutput).maxTokens;
}

export type AnthropicBlock = Record<string, unknown> & { type: string };
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

function imageBlock(url: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (data) return { type: "image", source: { type: "base64", media_type: data.mimeType, data: data.data } };
  return { type: "image", source: { type: "url", url } };
}

function partBlock(part: ContentPart): AnthropicBlock | undefined {
  switch (part.type) {
    case "text":
      if (!part.text) return undefined;
      return part.cache_control ? { type: "text", text: part.text, cache_control: part.cache_control } : { type: "text", text: part.text };
    case "image_url":
      return imageBlock(part.image_url.url);
    case "file": {
      const data = part.file.file_data ? parseDataUrl(part.file.file_data) : undefined;
      if (!data) throw badRequest("file parts need file_data as a base64 data URL for this provider", "messages");
      if (data.mimeType === "text/plain") {
        return { type: "document", source: { type: "text", media_type: "text/plain", data: atob(data.data) } };
      }
      return { type: "document", source: { type: "base64", media_type: data.mimeType, data: data.data } };
    }
    case "input_audio":
      throw badRequest("audio input is not supported by this provider", "messages");
  }
}

const textBlocks = (content: string | ContentPart[] | null | undefined): AnthropicBlock[] =>
  typeof content === "string"
    ? content
      ? [{ type: "text", text: content }]
      : []
    : (content ?? []).flatMap((p) => {
        const b = partBlock(p);
        return b ? [b] : [];
      });

function toolInput(args: string): unknown {
  const parsed = tryParseJson(args);
  return isRecord(parsed) ? parsed : {};
}

/**
 * Signed reasoning blocks back to Anthropic's `thinking` / `redacted_thinking` blocks, unchanged
 * and first in the assistant turn. Reasoning without a signature (another provider's, or
 * `reasoning` text alone) is not sent: Anthropic would reject it.
 */
function thinkingBlocks(details: ReasoningDetail[] | undefined): AnthropicBlock[] {
  return (details ?? []).flatMap((d): AnthropicBlock[] => {
    if (d.type === "reasoning.encrypted") return d.data ? [{ type: "redacted_thinking", data: d.data }] : [];
    return d.signature ? [{ type: "thinking", thinking: d.text, signature: d.signature }] : [];
  });
}

const isThinking = (b: AnthropicBlock | undefined): boolean => b?.type === "thinking" || b?.type === "redacted_thinking";

/**
 * Claude refuses extended thinking when `tool_choice` forces tool use (`any` or a named tool; only
 * `auto` and `none` combine with thinking): such a request goes without thinking. Bedrock's Claude
 * models follow the same rule.
 */
export const forcesToolUse = (req: Pick<ChatRequest, "tools" | "tool_choice">): boolean =>
  Boolean(req.tools?.length) && (req.tool_choice === "required" || (typeof req.tool_choice === "object" && req.tool_choice !== null));

/**
 * Claude's rule with thinking enabled, for any block shape (Anthropic's typed blocks, Bedrock
 * Converse's keyed ones): the final assistant turn, when it used tools, must start with a
 * reasoning block.
 */
export function finalToolTurnLeadsWithReasoning<B>(
  messages: ReadonlyArray<{ role: string; content: B[] }>,
  usesTool: (b: B) => boolean,
  isReasoning: (b: B | undefined) => boolean,
): boolean {
  const last = [...messages].reverse().find((m) => m.role === "assistant");
  if (!last || !last.content.some(usesTool)) return true;
  return isReasoning(last.content[0]);
}

/**
 * Anthropic's rule with thinking enabled: the final assistant turn, when it used tools, must start
 * with a thinking or redacted_thinking block. False when the history breaks it (the client did not
 * send the signed blocks back, or they came from another provider): that request goes without
 * thinking instead of being rejected.
 */
export const thinkingAllowed = (messages: AnthropicMessage[]): boolean =>
  finalToolTurnLeadsWithReasoning(messages, (b) => b.type === "tool_use", isThinking);

function convertMessage(m: ChatMessage): AnthropicMessage | undefined {
  switch (m.role) {
    case "system":
    case "developer":
      return undefined;
    case "user":
      return { role: "user", content: textBlocks(m.content) };
    case "assistant": {
      const content = [...thinkingBlocks(m.reasoning_details), ...textBlocks(m.content ?? null)];
      for (const tc of m.tool_calls ?? []) {
        content.push({ type: "tool_use", id: tc.id, name: tc.function.name, input: toolInput(tc.function.arguments) });
      }
      return { role: "assistant", content };
    }
    case "tool":
      return { role: "user", content: [{ type: "tool_result", tool_use_id: m.tool_call_id, content: contentText(m.content) }] };
  }
}

/** System/developer messages -> `system`; the rest converted and consecutive same roles merged. */
export function convertMessages(messages: ChatMessage[]): { system: AnthropicBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicBlock[] = [];
  const out: AnthropicMessage[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.role === "developer") {
      if (typeof m.content === "string") {
        if (m.content) system.push({ type: "text", text: m.content });
      } else {
        for (const p of m.content) {
          const b = partBlock(p);
          if (b) system.push(b);
        }
      }
      continue;
    }
    const converted = convertMessage(m);
    if (!converted || converted.content.length === 0) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === converted.role) {
      // tool_result blocks must come first in a user turn, thinking blocks first in an assistant turn.
      const merged = [...prev.content, ...converted.content];
      const first = (b: AnthropicBlock) => b.type === "tool_result" || isThinking(b);
      prev.content = [...merged.filter(first), ...merged.filter((b) => !first(b))];
    } else out.push(converted);
  }
  return { system, messages: out };
}

function toolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice === "auto") out = { type: "auto" };
  else if (choice === "required") out = { type: "any" };
  else if (choice === "none") return { type: "none" };
  else if (choice && typeof choice === "object") out = { type: "tool", name: choice.function.name };
  if (parallel === false) out = { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}

/** How `response_format` goes to Claude on Anthropic's own API (native on 4.5 and newer). */
export const anthropicJsonPlan = (req: ChatRequest, mapping: ProviderMapping): JsonOutputPlan => jsonOutputPlan(req, claudeHasNativeJson(mapping.externalId));

/** The caller's tools, plus the reserved output tool when the plan answers through one. */
function toolsOf(req: ChatRequest, plan: JsonOutputPlan): Array<Record<string, unknown>> {
  const tools: Array<Record<string, unknown>> = (req.tools ?? []).map((t) => ({
    name: t.function.name,
    ...(t.function.description ? { description: t.function.description } : {}),
    input_schema: t.function.parameters ?? { type: "object", properties: {} },
  }));
  if (plan.kind === "tool") tools.push({ name: plan.tool.name, description: plan.tool.description, input_schema: plan.tool.schema });
  return tools;
}

/**
 * The Messages API body. `plan` says how `response_format` is served (Vertex passes its own:
 * its Claude has no native JSON output); by default Anthropic's.
 */
export function buildAnthropicBody(req: ChatRequest, target: UpstreamTarget, opts: { stream: boolean; plan?: JsonOutputPlan }): Record<string, unknown> {
  const plan = opts.plan ?? anthropicJsonPlan(req, target.mapping);
  const { system, messages } = convertMessages(req.messages);
  let maxTokens = req.max_completion_tokens ?? req.max_tokens ?? target.mapping.maxOutput;
  const body: Record<string, unknown> = { model: target.mapping.externalId, messages };
  if (system.length) body.system = system;

  let thinking = false;
  if (target.mapping.reasoning && thinkingAllowed(messages) && !forcesToolUse(req) && !planForcesTool(plan)) {
    const plan = claudeOutputBudget(maxTokens, req.reasoning_effort, target.mapping.maxOutput);
    if (plan.budget !== null) {
      maxTokens = plan.maxTokens;
      body.thinking = { type: "enabled", budget_tokens: plan.budget };
      thinking = true;
    }
  }
  body.max_tokens = maxTokens;
  // Extended thinking does not allow temperature/top_p changes.
  if (!thinking) {
    if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1);
    if (req.top_p !== undefined) body.top_p = req.top_p;
  }
  if (req.stop !== undefined) body.stop_sequences = typeof req.stop === "string" ? [req.stop] : req.stop;
  if (req.user) body.metadata = { user_id: req.user };
  const tools = toolsOf(req, plan);
  if (tools.length) body.tools = tools;
  let choice = toolChoice(req.tool_choice, req.parallel_tool_calls);
  if (plan.kind === "tool") {
    const forced = plan.choice === "tool" ? { type: "tool", name: plan.tool.name } : { type: "any" };
    choice = { ...forced, ...(req.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {}) };
  }
  if (choice && body.tools) body.tool_choice = choice;
  if (plan.kind === "native") body.output_config = { format: { type: "json_schema", schema: plan.schema } };
  if (opts.stream) body.stream = true;
  return body;
}

export const anthropicCall = (req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): UpstreamCall =>
  upstreamPost(
    `${target.baseUrl}/v1/messages`,
    { "content-type": "application/json", "x-api-key": target.apiKey, "anthropic-version": ANTHROPIC_VERSION, accept: opts.stream ? "text/event-stream" : "application/json" },
    JSON.stringify(buildAnthropicBody(req, target, opts)),
    opts.signal,
  );
