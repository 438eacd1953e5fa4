/**
 * Upper-bound cost estimates for admission (reservation in the key's KeyState DO) and the token
 * estimates routing needs before a provider has counted anything.
 *
 * Prompt tokens are estimated from the request size: ~4 characters per token for text (a
 * deliberate over-estimate for English, close for code), a flat 1,000 tokens per image or audio
 * part, plus a small per-message overhead. Completion tokens are the caller's cap, else the
 * mapping's maximum output. The estimate is the maximum over the candidate mappings, so the
 * reservation covers whichever provider ends up serving the request.
 */
import type { Pricing } from "../catalog/types";
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

/** Upper bound over all candidates: what admission reserves. */
export function estimateUpperBound(req: ChatRequest, targets: readonly EstimateTarget[]): Pico {
  const prompt = estimatePromptTokens(req);
  const n = BigInt(Math.max(1, req.n ?? 1));
  let max = 0n;
  for (const t of targets) {
    const completion = Math.min(requestedMaxTokens(req) ?? t.maxOutput, t.maxOutput);
    const cost = tokenCost(t.pricing, prompt, 0) + (tokenCost({ ...t.pricing, prompt: "0", request: "0" }, 0, completion) * n);
    if (cost > max) max = cost;
  }
  return max;
}
