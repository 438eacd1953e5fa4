/**
 * Upper-bound cost estimates for admission (reservation in the key's KeyState DO) and the token
 * estimates routing needs before a provider has counted anything.
 *
 * Prompt tokens are estimated from the request size: ~4 characters per token for text (a
 * deliberate over-estimate for English, close for code), a flat 1,000 tokens per image or audio
 * part, plus a small per-message overhead. Completion tokens are the caller's cap, else the
 * mapping's maximum output. The estimate is the maximum over the candidate mappings, so the
 * reservation covers whichever provider ends up serving the request.
 *
 * Admission uses a different, deliberately pessimistic bound (`estimateUpperBound`): a
 * reservation must never be smaller than what the request can cost, or concurrent requests
 * overshoot a limit. See `promptTokensUpperBound`.
 */
import type { Pricing } from "../catalog/types";
import { dearestPricing } from "./price-schedule";
import type { ChatRequest } from "../providers/types";
import { parseUsd, type Pico } from "./money";

const CHARS_PER_TOKEN = 4;
const MEDIA_PART_TOKENS = 1000;
const MESSAGE_OVERHEAD_TOKENS = 4;

function textLength(content: unknown): { chars: number; media: number } {
  if (typeof content === "string") return { chars: content.length, media: 0 };
  if (!Array.isArray(content)) return { chars: 0, media: 0 };
  let chars = 0;
  let media = 0;
  for (const part of content as unknown[]) {
    if (typeof part !== "object" || part === null) continue;
    const p = part as Record<string, unknown>;
    if (p.type === "text" && typeof p.text === "string") chars += p.text.length;
    else media += 1;
  }
  return { chars, media };
}

/** Estimated prompt tokens of a request (messages, tool definitions, response schema). */
export function estimatePromptTokens(req: ChatRequest): number {
  let chars = 0;
  let media = 0;
  for (const m of req.messages) {
    const t = textLength(m.content);
    chars += t.chars;
    media += t.media;
    if (m.role === "assistant" && m.tool_calls) chars += JSON.stringify(m.tool_calls).length;
    // Signed thinking blocks are sent back to Anthropic-format upstreams, which bill them as input.
    if (m.role === "assistant" && m.reasoning_details?.length) chars += JSON.stringify(m.reasoning_details).length;
  }
  if (req.tools) chars += JSON.stringify(req.tools).length;
  if (req.response_format?.type === "json_schema") chars += JSON.stringify(req.response_format.json_schema).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * MEDIA_PART_TOKENS + req.messages.length * MESSAGE_OVERHEAD_TOKENS;
}

/** The caller's output cap, if any. */
export const requestedMaxTokens = (req: ChatRequest): number | undefined => req.max_completion_tokens ?? req.max_tokens;

/** Estimated tokens of a text the client received (streams cut short without upstream usage). */
export const estimateTextTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

const price = (v: string | undefined): Pico => (v ? parseUsd(v) : 0n);

/** Cost of `promptTokens` + `completionTokens` at a mapping's list prices (per-request fee included). */
export function tokenCost(pricing: Pick<Pricing, "prompt" | "completion" | "request">, promptTokens: number, completionTokens: number): Pico {
  return price(pricing.prompt) * BigInt(promptTokens) + price(pricing.completion) * BigInt(completionTokens) + price(pricing.request);
}

export interface EstimateTarget {
  pricing: Pick<Pricing, "prompt" | "completion" | "request">;
  maxOutput: number;
}

/** Tokens a single image part may bill at most (high-detail tiles of the largest accepted sizes). */
const IMAGE_PART_MAX_TOKENS = 2_500;
/** Per message: role, separators and name tokens of every chat template we know, rounded up. */
const MESSAGE_MAX_OVERHEAD_TOKENS = 8;
/** Per tool definition: the wrapper a provider adds around the JSON schema. */
const TOOL_MAX_OVERHEAD_TOKENS = 16;
/** The request as a whole (assistant priming, system wrapper). */
const REQUEST_MAX_OVERHEAD_TOKENS = 16;
/** No size to go by (a file referenced by id): only the model's context length bounds it. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

const encoder = new TextEncoder();
/** Byte-level BPE (every tokenizer the catalogue's providers use) never makes a token of less than one byte. */
const utf8Bytes = (s: string): number => (/^[\x00-\x7f]*$/.test(s) ? s.length : encoder.encode(s).length);

function partUpperBound(part: unknown): number {
  if (typeof part !== "object" || part === null) return 0;
  const p = part as Record<string, unknown>;
  if (p.type === "text") return typeof p.text === "string" ? utf8Bytes(p.text) : 0;
  if (p.type === "image_url") return IMAGE_PART_MAX_TOKENS;
  // Audio and documents: no more tokens than bytes of their (base64) data, at least an image's worth.
  const data = p.type === "input_audio" ? (p.input_audio as { data?: unknown } | undefined)?.data : (p.file as { file_data?: unknown } | undefined)?.file_data;
  return typeof data === "string" ? Math.max(IMAGE_PART_MAX_TOKENS, data.length) : UNBOUNDED;
}

/**
 * A true upper bound of the prompt tokens any provider can bill for this request: UTF-8 bytes of
 * every text (no token is shorter than a byte), per-message, per-tool and per-request overheads,
 * and a fixed maximum per image part. Callers cap it at the model's context length (a longer
 * prompt is refused upstream and costs nothing).
 */
export function promptTokensUpperBound(req: ChatRequest): number {
  let bound = promptBounds.get(req);
  if (bound === undefined) {
    bound = scanPromptTokens(req);
    promptBounds.set(req, bound);
  }
  return bound;
}

/**
 * A request's bound, once per request object: admission, the credit reservation and the token
 * window each ask for it, and it reads every byte of the prompt (a coding agent's is often
 * hundreds of kilobytes). Requests are never changed once parsed (adapters build their own bodies).
 */
const promptBounds = new WeakMap<ChatRequest, number>();

function scanPromptTokens(req: ChatRequest): number {
  let tokens = REQUEST_MAX_OVERHEAD_TOKENS;
  for (const m of req.messages) {
    tokens += MESSAGE_MAX_OVERHEAD_TOKENS;
    const content: unknown = m.content;
    if (typeof content === "string") tokens += utf8Bytes(content);
    else if (Array.isArray(content)) for (const part of content as unknown[]) tokens += partUpperBound(part);
    if ("name" in m && typeof m.name === "string") tokens += utf8Bytes(m.name);
    if (m.role === "assistant" && m.tool_calls) tokens += utf8Bytes(JSON.stringify(m.tool_calls));
    if (m.role === "assistant" && m.reasoning_details?.length) tokens += utf8Bytes(JSON.stringify(m.reasoning_details));
    if (m.role === "tool") tokens += utf8Bytes(m.tool_call_id);
  }
  for (const t of req.tools ?? []) tokens += TOOL_MAX_OVERHEAD_TOKENS + utf8Bytes(JSON.stringify(t));
  if (req.tool_choice !== undefined) tokens += utf8Bytes(JSON.stringify(req.tool_choice));
  if (req.response_format) tokens += utf8Bytes(JSON.stringify(req.response_format));
  return Math.min(tokens, UNBOUNDED);
}

/** Per embedding input: the special tokens (start/end, separators) a provider may add, rounded up. */
const EMBEDDING_INPUT_MAX_OVERHEAD_TOKENS = 8;

/**
 * A true upper bound of the tokens an embeddings request can bill, on the same byte-level rule as
 * chat prompts: UTF-8 bytes of every text (no token is shorter than a byte), a token list's
 * length, plus a per-input overhead.
 */
export function embeddingTokensUpperBound(inputs: ReadonlyArray<string | readonly number[]>): number {
  return inputs.reduce((n, x) => n + EMBEDDING_INPUT_MAX_OVERHEAD_TOKENS + (typeof x === "string" ? utf8Bytes(x) : x.length), 0);
}

const maxPrice = (...values: Array<string | undefined>): Pico => values.reduce<Pico>((m, v) => (price(v) > m ? price(v) : m), 0n);

/**
 * The dearest price of a prompt token and of a completion token under `p`, and its per-request fee:
 * kept per pricing object (a mapping's own, or the one its tiers make), since every request to a
 * mapping asks the same.
 */
const boundPricesOf = new WeakMap<Pricing, { prompt: Pico; completion: Pico; request: Pico }>();
function boundPrices(p: Pricing): { prompt: Pico; completion: Pico; request: Pico } {
  let b = boundPricesOf.get(p);
  if (!b) {
    b = {
      prompt: maxPrice(p.prompt, p.image, p.input_audio, p.input_cache_write, p.input_cache_write_1h),
      completion: maxPrice(p.completion, p.internal_reasoning, p.citation, p.output_audio, p.image_output),
      request: price(p.request),
    };
    boundPricesOf.set(p, b);
  }
  return b;
}

export interface BoundTarget extends EstimateTarget {
  pricing: Pick<Pricing, "prompt" | "completion" | "request" | "image" | "input_audio" | "input_cache_write" | "input_cache_write_1h" | "internal_reasoning" | "output_audio" | "image_output" | "citation" | "tiers" | "schedule" | "request_by_search_context">;
  /** Prompts beyond it are refused upstream (cost nothing). */
  contextLength?: number | null;
  /**
   * The output cap the adapter really sends for this request when it differs from the caller's
   * (Claude's extended thinking raises `max_tokens`: `ProviderAdapter.outputTokensBound`).
   */
  outputTokens?: number;
}

/**
 * What admission reserves: the most the request can cost on any of `targets`. Every prompt token
 * at the dearest input price, every possible output token (what the adapter sends upstream:
 * `outputTokens`, else `max_tokens`, else the mapping's maximum; times `n`) at the dearest output
 * price, plus the per-request fee.
 */
export function estimateUpperBound(req: ChatRequest, targets: readonly BoundTarget[]): Pico {
  const bound = promptTokensUpperBound(req);
  const n = BigInt(Math.max(1, req.n ?? 1));
  let max = 0n;
  for (const t of targets) {
    const prompt = t.contextLength ? Math.min(bound, t.contextLength) : bound;
    // The dearest prompt-size tier this prompt can reach, at the dearest time of day.
    const p = boundPrices(dearestPricing(t.pricing, prompt));
    const completion = t.outputTokens ?? Math.min(requestedMaxTokens(req) ?? t.maxOutput, t.maxOutput);
    const cost = p.prompt * BigInt(prompt) + p.completion * BigInt(completion) * n + p.request;
    if (cost > max) max = cost;
  }
  return max;
}

/**
 * The most tokens (prompt and completion) the request can bill on any of `targets`: what a key's
 * tokens-per-minute window holds for it at admission (src/rate-limits/admission.ts).
 */
export function tokensUpperBound(req: ChatRequest, targets: readonly BoundTarget[]): number {
  const bound = promptTokensUpperBound(req);
  const n = Math.max(1, req.n ?? 1);
  let max = 0;
  for (const t of targets) {
    const prompt = t.contextLength ? Math.min(bound, t.contextLength) : bound;
    const completion = t.outputTokens ?? Math.min(requestedMaxTokens(req) ?? t.maxOutput, t.maxOutput);
    max = Math.max(max, prompt + completion * n);
  }
  return max;
}
