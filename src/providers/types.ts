/**
 * The contract between the chat route and the wire-format adapters (one folder per format:
 * openai/, anthropic/, google/, bedrock/, azure/). The gateway speaks OpenAI Chat Completions to
 * its callers; an adapter translates a validated OpenAI request into the provider's request and
 * the provider's response or stream back into OpenAI shapes plus normalized usage.
 */
import type { ProviderPreferences } from "../routing/preferences";
import type { ModelDefinition, ProviderInfo, ProviderMapping } from "../catalog/types";

// ---------- OpenAI Chat Completions request (what callers send) ----------

/** Prompt-cache breakpoint (Anthropic `cache_control`); adapters of other formats drop it. */
export interface CacheControl { type: "ephemeral"; ttl?: "5m" | "1h" }
export interface TextPart { type: "text"; text: string; cache_control?: CacheControl }
export interface ImagePart { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } }
export interface AudioPart { type: "input_audio"; input_audio: { data: string; format: string } }
export interface FilePart { type: "file"; file: { file_data?: string; file_id?: string; filename?: string } }
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart;

/**
 * Provider data a tool call must carry back in the next turn, in the shape Google's own
 * OpenAI-compatible endpoint uses: Gemini's thought signature (required by Gemini 3 on every
 * function-calling turn).
 */
export interface ToolCallExtra {
  google?: { thought_signature?: string };
}

/**
 * A tool call. `custom`: a call of a `custom` tool (OpenAI), whose free-form input travels in
 * `function.arguments` (not JSON); only the OpenAI format carries it (routing sends a request with
 * custom tools or calls nowhere else), and `./tool-call-wire.ts` gives it OpenAI's own shape
 * (`custom: {name, input}`) on the wire.
 */
export interface ToolCall {
  id: string;
  type: "function" | "custom";
  function: { name: string; arguments: string };
  extra_content?: ToolCallExtra;
}

/**
 * One block of a turn's reasoning that must travel back unchanged (OpenRouter's
 * `reasoning_details` convention): Anthropic's `thinking` blocks (text + `signature`) are
 * `reasoning.text`, its `redacted_thinking` blocks (`data`) are `reasoning.encrypted` (Bedrock's
 * Claude `reasoningContent` maps the same way). Only the adapters that issue and verify them
 * (anthropic, bedrock) send them upstream; the others drop them.
 */
export type ReasoningDetail =
  | { type: "reasoning.text"; text: string; signature?: string; format?: string; index?: number }
  | { type: "reasoning.encrypted"; data: string; format?: string; index?: number };

export type ChatMessage =
  | { role: "system" | "developer"; content: string | TextPart[]; name?: string }
  | { role: "user"; content: string | ContentPart[]; name?: string }
  | {
      role: "assistant";
      content?: string | TextPart[] | null;
      name?: string;
      tool_calls?: ToolCall[];
      /** Reasoning text of an earlier turn, when the caller sends it back. */
      reasoning?: string | null;
      /** Signed reasoning blocks of an earlier turn, as the gateway returned them. */
      reasoning_details?: ReasoningDetail[];
    }
  | { role: "tool"; content: string | TextPart[]; tool_call_id: string };

export interface FunctionTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** OpenAI's `custom` tool: the model answers with free-form text (optionally grammar-constrained). */
export interface CustomTool {
  type: "custom";
  custom: {
    name: string;
    description?: string;
    format?: { type: "text" } | { type: "grammar"; grammar: { definition: string; syntax: "lark" | "regex" } };
  };
}

export type ToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } };

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean } };

/** A validated chat request (the zod schema in src/routes/chat/ produces this). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: FunctionTool[];
  /**
   * The request's `custom` tools, kept apart from `tools` so adapters that only speak function
   * tools never meet them: routing serves them only where `quirks.customTools` is set, and the
   * OpenAI adapter puts them back into `tools`.
   */
  custom_tools?: CustomTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  seed?: number;
  n?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  response_format?: ResponseFormat;
  /** `xhigh` and `max` go to OpenAI-format upstreams as sent; Claude and Gemini budgets treat them as their largest. */
  reasoning_effort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";
  user?: string;
  /** Image output for models that can (Gemini image models); `audio` asks for audio output. */
  modalities?: string[];
  // OpenAI-platform extras: where each goes per provider is in src/routes/chat/schema.ts.
  /** Audio output voice and format (with `modalities: ["audio"]`). */
  audio?: AudioOutput;
  /** Up to 16 string pairs attached to a stored completion. */
  metadata?: Record<string, string>;
  /** Predicted output (speeds up regenerating mostly known text). */
  prediction?: { type: "content"; content: string | Array<{ type: "text"; text: string }> };
  prompt_cache_key?: string;
  safety_identifier?: string;
  /** Validation refuses all but `auto` and `default` (the tiers billed at the catalogue's prices). */
  service_tier?: "auto" | "default" | "flex" | "scale" | "priority";
  /** Accepted only for models billed by search context size (Perplexity), forwarded as sent. */
  web_search_options?: { search_context_size?: "low" | "medium" | "high" | null; user_location?: unknown };
  store?: boolean;
  verbosity?: "low" | "medium" | "high";
  /** Routing preferences (src/routing/preferences.ts); read by routing, never sent upstream. */
  provider?: ProviderPreferences;
  /** Fallback models tried after `model`; read by routing, never sent upstream. */
  models?: string[];
}

export type AudioFormat = "wav" | "aac" | "mp3" | "flac" | "opus" | "pcm16";
export interface AudioOutput { voice: string | { id: string }; format: AudioFormat }

// ---------- OpenAI Chat Completions response (what callers get) ----------

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error";

export interface ImageOutput { type: "image_url"; image_url: { url: string } }

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  reasoning?: string | null;
  /** The reasoning as signed blocks, when the upstream signs it (Anthropic thinking). */
  reasoning_details?: ReasoningDetail[];
  tool_calls?: ToolCall[];
  images?: ImageOutput[];
  refusal?: string | null;
}

export interface Choice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

/** Token counts in OpenAI semantics: promptTokens INCLUDES cached and cache-write tokens. */
export interface NormalizedUsage {
  promptTokens: number;
  completionTokens: number;
  /** Included in completionTokens. */
  reasoningTokens: number;
  /** Prompt tokens read from the provider's prompt cache (included in promptTokens). */
  cachedTokens: number;
  /** Prompt tokens written to the cache, 5-minute TTL (Anthropic default) or unspecified. */
  cacheWrite5mTokens: number;
  /** Prompt tokens written to the cache with a 1-hour TTL. */
  cacheWrite1hTokens: number;
  audioInputTokens: number;
  videoInputTokens: number;
  imageInputTokens: number;
  imageOutputTokens: number;
  audioOutputTokens: number;
  /** Web searches the provider billed for (Perplexity, grounding). */
  webSearchRequests: number;
  /** Citation tokens (Perplexity), included in completionTokens; priced at `pricing.citation`. */
  citationTokens?: number;
}

export const emptyUsage = (): NormalizedUsage => ({
  promptTokens: 0,
  completionTokens: 0,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  audioInputTokens: 0,
  videoInputTokens: 0,
  imageInputTokens: 0,
  imageOutputTokens: 0,
  audioOutputTokens: 0,
  webSearchRequests: 0,
});

/** What an adapter returns for a non-streamed response; the chat route adds id, cost and metadata. */
export interface ParsedCompletion {
  /** Upstream's own id, informational. */
  upstreamId?: string;
  choices: Choice[];
  usage: NormalizedUsage;
  /** Provider-reported model id (e.g. a dated snapshot). */
  upstreamModel?: string;
  systemFingerprint?: string;
}

/** Incremental delta of one choice, OpenAI chunk semantics. */
export interface ChunkDelta {
  role?: "assistant";
  content?: string;
  reasoning?: string;
  /**
   * Whole reasoning blocks, each sent once when its block is complete (its text was streamed
   * before as `reasoning`), so a client appends them as they come.
   */
  reasoning_details?: ReasoningDetail[];
  /** Incremental tool calls: `index` is stable, `id`/`type`/`name` come on the first piece only. */
  tool_calls?: Array<{ index: number; id?: string; type?: ToolCall["type"]; function: { name?: string; arguments?: string }; extra_content?: ToolCallExtra }>;
  images?: ImageOutput[];
  /** The model's refusal text (OpenAI `delta.refusal`, or a `refusal` content part). */
  refusal?: string;
}

export type StreamEvent =
  | { type: "delta"; choiceIndex: number; delta: ChunkDelta }
  | { type: "finish"; choiceIndex: number; finishReason: FinishReason }
  /** May come more than once; the last one wins (providers report cumulative usage). */
  | { type: "usage"; usage: NormalizedUsage }
  /** The upstream reported an error inside the stream. */
  | { type: "error"; message: string; errorType: string; status?: number };

// ---------- Upstream call ----------

/** Everything an adapter needs to reach one provider mapping. */
export interface UpstreamTarget {
  provider: ProviderInfo;
  mapping: ProviderMapping;
  /** Null for custom-provider models (no catalogue entry). */
  model: ModelDefinition | null;
  /** Resolved base URL: BYOK/custom base, `<ID>_BASE_URL`, or the provider default. No trailing slash. */
  baseUrl: string;
  /** Operator credential, BYOK token or custom-provider token. */
  apiKey: string;
  /**
   * Whose credential `apiKey` is: `operator`, or the provider key / custom provider id of an
   * organization. Credential caches (Vertex tokens) are keyed on it plus a digest of the secret.
   */
  credentialOwner?: string;
  /** Provider-specific settings from the environment (e.g. AWS_BEDROCK_REGION, AZURE_API_VERSION). */
  settings: Readonly<Record<string, string | undefined>>;
}

export interface UpstreamErrorInfo {
  message: string;
  /** Provider's error type/code when it gave one. */
  type: string;
}

/** How to build an upstream request: streamed or not, and the signal that aborts it (timeout, client gone). */
export interface BuildOptions {
  stream: boolean;
  signal?: AbortSignal;
}

/** An upstream request as `fetch(url, init)` takes it. */
export interface UpstreamCall {
  url: string;
  init: RequestInit & { redirect: "manual" };
}

/**
 * A POST to a provider as `fetch`'s arguments. It carries the attempt's abort signal, and
 * redirects are never followed (docs/security.md; a 3xx is an upstream error).
 */
export const upstreamPost = (url: string, headers: HeadersInit, body: string, signal?: AbortSignal): UpstreamCall => ({
  url,
  init: { method: "POST", headers, body, signal: signal ?? null, redirect: "manual" },
});

export interface ProviderAdapter {
  /**
   * Build the HTTP request to the provider as `fetch`'s arguments, carrying `opts.signal`:
   * `fetch(request)` copies its Request into a new one, `fetch(url, init)` makes just one, which
   * saves about 2% of a chat request's CPU. Async where building needs I/O or crypto (Vertex's
   * token, SigV4).
   */
  buildCall(req: ChatRequest, target: UpstreamTarget, opts: BuildOptions): UpstreamCall | Promise<UpstreamCall>;
  /**
   * Parse a 2xx non-streamed body (already JSON-decoded). Throws on a malformed body. `req` is the
   * request `buildCall` translated (an adapter that added something of its own to the request,
   * such as Claude's structured-output tool, takes it back out of the answer).
   */
  parseResponse(body: unknown, target: UpstreamTarget, req?: ChatRequest): ParsedCompletion;
  /** Turn a 2xx streamed body into events, as they arrive (no buffering beyond one frame). */
  parseStream(body: ReadableStream<Uint8Array>, target: UpstreamTarget, req?: ChatRequest): AsyncIterable<StreamEvent>;
  /**
   * Whether this adapter serves `response_format` (json_schema and json_object) on a mapping the
   * catalogue does not flag for it (Claude: through a forced tool call). Absent: the catalogue's
   * flags decide alone.
   */
  servesJsonOutput?(mapping: ProviderMapping): boolean;
  /**
   * The request's exact input token count by the provider's own counter (Anthropic's
   * `count_tokens`). Throws when the provider does not answer one. Absent: the format has none.
   */
  countTokens?(req: ChatRequest, target: UpstreamTarget, signal?: AbortSignal): Promise<number>;
  /** Extract message and type from a non-2xx body. */
  parseError(status: number, bodyText: string): UpstreamErrorInfo;
  /**
   * Formats that send another output cap than the caller's (Claude's extended thinking raises
   * `max_tokens`): the most output tokens `buildCall` lets the upstream bill, thinking
   * included, for admission's bound. Absent: the caller's cap, else the mapping's maximum output.
   */
  outputTokensBound?(req: ChatRequest, mapping: ProviderMapping): number;
}
