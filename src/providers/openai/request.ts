/**
 * OpenAI Chat Completions request for OpenAI-compatible providers. The caller's OpenAI fields are
 * forwarded; per-provider differences come from `ProviderInfo.quirks` (data, never provider ids).
 */
import type { OpenAICompatQuirks } from "../../catalog/types";
import type { BuildOptions, ChatMessage, ChatRequest, UpstreamCall, UpstreamTarget } from "../types";
import { upstreamPost } from "../types";
import { wireToolCall } from "../tool-call-wire";

/**
 * Request fields of the OpenAI Chat Completions API that are forwarded upstream (minus the
 * provider's `quirks.unsupportedParams`). `web_search_options` reaches only models billed by
 * search context size (validation refuses it elsewhere, src/routes/chat/schema.ts).
 */
export const OPENAI_CHAT_FIELDS = [
  "messages", "model", "audio", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens",
  "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
  "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier",
  "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs",
  "top_p", "user", "verbosity", "web_search_options",
] as const;

/** Text parts without the Anthropic-only `cache_control` marker. */
function stripCacheControl(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((p: unknown) => {
    if (typeof p !== "object" || p === null || !("cache_control" in p)) return p;
    const { cache_control: _drop, ...rest } = p as Record<string, unknown>;
    return rest;
  });
}

function mapMessage(m: ChatMessage, quirks: OpenAICompatQuirks): Record<string, unknown> {
  const out: Record<string, unknown> = { ...m };
  if ("content" in out) out.content = stripCacheControl(out.content);
  // Gemini's thought signatures mean nothing to other providers, and OpenAI rejects unknown fields.
  if (m.role === "assistant" && m.tool_calls) out.tool_calls = m.tool_calls.map(({ extra_content: _drop, ...tc }) => wireToolCall(tc));
  // Signed reasoning blocks are verified only by the formats that issue them (anthropic, bedrock).
  delete out.reasoning_details;
  if (m.role === "assistant" && "reasoning" in out) {
    const reasoning = out.reasoning;
    delete out.reasoning;
    if (quirks.reasoningField && typeof reasoning === "string" && reasoning) out[quirks.reasoningField] = reasoning;
  }
  return out;
}

/** The JSON body sent upstream (also used by the Azure adapter). */
export function buildOpenAIBody(req: ChatRequest, target: UpstreamTarget, opts: { stream: boolean }): Record<string, unknown> {
  const quirks = target.provider.quirks ?? {};
  const source = req as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const field of OPENAI_CHAT_FIELDS) {
    if (source[field] !== undefined) body[field] = source[field];
  }
  body.model = target.mapping.externalId;
  body.messages = req.messages.map((m) => mapMessage(m, quirks));

  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  delete body.max_tokens;
  delete body.max_completion_tokens;
  if (maxTokens !== undefined) body[quirks.maxTokensField ?? "max_tokens"] = maxTokens;

  if (opts.stream) {
    body.stream = true;
    if (quirks.streamUsageOption === false) delete body.stream_options;
    else body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }

  // Routing sends custom tools only where the provider takes them (quirks.customTools).
  if (req.custom_tools?.length) body.tools = [...(req.tools ?? []), ...req.custom_tools];
  for (const p of quirks.unsupportedParams ?? []) delete body[p];
  return body;
}

export function openAIChatUrl(target: UpstreamTarget): string {
  return `${target.baseUrl}${target.provider.quirks?.chatPath ?? "/chat/completions"}`;
}

export const openAICall = (req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): UpstreamCall =>
  upstreamPost(
    openAIChatUrl(target),
    { "content-type": "application/json", authorization: `Bearer ${target.apiKey}`, accept: opts.stream ? "text/event-stream" : "application/json" },
    JSON.stringify(buildOpenAIBody(req, target, opts)),
    opts.signal,
  );
