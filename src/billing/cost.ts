/**
 * Exact request cost from normalized usage and a mapping's pricing (bigint pico-dollars, no
 * floats). Pure: the chat route, the cache and the MCP tools all price with this one function.
 *
 * Token accounting (NormalizedUsage is in OpenAI semantics):
 * - promptTokens includes cached reads, cache writes, audio, image and video input tokens. Each
 *   part is priced once: cached x input_cache_read, 5m writes x input_cache_write, 1h writes x
 *   input_cache_write_1h, audio x input_audio, image x image (per input image token), and the rest
 *   (text + video) x prompt.
 * - completionTokens includes reasoning, audio and image output tokens: image x image_output,
 *   audio x output_audio, reasoning x internal_reasoning, the rest x completion.
 * - Fallbacks when a price is missing: input_cache_read -> prompt; input_cache_write -> prompt;
 *   input_cache_write_1h -> input_cache_write -> prompt; input_audio -> prompt; image -> prompt;
 *   internal_reasoning / output_audio / image_output -> completion; request and web_search -> 0.
 * - Counts that exceed what is left of their total (inconsistent upstream reports) are clamped.
 */
import type { Pricing, SearchContextSize } from "../catalog/types";
import type { NormalizedUsage } from "../providers/types";
import { parseUsd, PICO_DECIMALS, type Pico } from "./money";
import { pricingInForce, tierReached, type PriceContext } from "./price-schedule";

export interface CostBreakdown {
  /** Uncached text (and video) prompt tokens. */
  inputCost: Pico;
  cachedInputCost: Pico;
  cacheWriteInputCost: Pico;
  audioInputCost: Pico;
  imageInputCost: Pico;
  /** Text and reasoning completion tokens (reasoning included). */
  outputCost: Pico;
  /** The reasoning part of outputCost (informational, already inside outputCost). */
  reasoningCost: Pico;
  /** The citation part of outputCost (Perplexity; informational, already inside outputCost). */
  citationCost: Pico;
  audioOutputCost: Pico;
  imageOutputCost: Pico;
  requestCost: Pico;
  webSearchCost: Pico;
  /** inputCost + cachedInputCost + cacheWriteInputCost + audioInputCost + imageInputCost. */
  promptCost: Pico;
  /** outputCost + audioOutputCost + imageOutputCost. */
  completionCost: Pico;
  /** promptCost + completionCost + requestCost + webSearchCost, before discount. */
  upstreamCost: Pico;
  /** Amount taken off by `opts.discount`. */
  discountCost: Pico;
  /** upstreamCost - discountCost: what the request costs. */
  total: Pico;
  /** The prompt-size tier the request was billed at (its threshold in input tokens), if any. */
  tierAbove?: number;
}

export interface CostOptions {
  /** Generated images priced per image (`pricing.per_image[size]`, else its only/first entry). Their output tokens are then not charged again. */
  images?: { count: number; size?: string };
  /** Fraction taken off the total, decimal string in [0, 1] ("0.2" = 20% off). */
  discount?: string;
  /** When the request was made (epoch ms): the dated or time-of-day price in force then. Default now. */
  at?: number;
  /** The request's `web_search_options.search_context_size` (per-request fee by size). */
  searchContextSize?: SearchContextSize | null;
}

const SCALE = 10n ** BigInt(PICO_DECIMALS);

/**
 * The price each kind of token or fee is billed at, the fallbacks above applied: the one table
 * both `computeCost` and the model listing (`pricingJson`) read, so a published price is always
 * the billed one (a missing cache-read price is listed as the prompt price it is billed at, not 0).
 */
export interface BilledPrices {
  prompt: string;
  completion: string;
  input_cache_read: string;
  input_cache_write: string;
  input_cache_write_1h: string;
  input_audio: string;
  image: string;
  internal_reasoning: string;
  citation: string;
  output_audio: string;
  image_output: string;
  request: string;
  web_search: string;
}

const first = (...candidates: Array<string | undefined>): string => candidates.find((c) => c !== undefined && c !== "") ?? "0";

export function billedPrices(p: Pricing): BilledPrices {
  return {
    prompt: p.prompt,
    completion: p.completion,
    input_cache_read: first(p.input_cache_read, p.prompt),
    input_cache_write: first(p.input_cache_write, p.prompt),
    input_cache_write_1h: first(p.input_cache_write_1h, p.input_cache_write, p.prompt),
    input_audio: first(p.input_audio, p.prompt),
    image: first(p.image, p.prompt),
    internal_reasoning: first(p.internal_reasoning, p.completion),
    citation: first(p.citation, p.completion),
    output_audio: first(p.output_audio, p.completion),
    image_output: first(p.image_output, p.completion),
    request: first(p.request),
    web_search: first(p.web_search),
  };
}

const price = (...candidates: Array<string | undefined>): Pico => {
  for (const c of candidates) if (c !== undefined && c !== "") return parseUsd(c);
  return 0n;
};

const tokens = (n: number): bigint => BigInt(Math.max(0, Math.floor(n)));

/** Splits `total` into the requested parts in order, clamping each to what is left. */
function split(total: bigint, parts: bigint[]): { parts: bigint[]; rest: bigint } {
  let rest = total;
  const out = parts.map((p) => {
    const take = p < rest ? p : rest;
    rest -= take;
    return take;
  });
  return { parts: out, rest };
}

function perImagePrice(pricing: Pricing, size: string | undefined): Pico | undefined {
  const table = pricing.per_image;
  if (!table) return undefined;
  const exact = size !== undefined ? table[size] : undefined;
  const value = exact ?? table.default ?? Object.values(table)[0];
  return value === undefined ? undefined : parseUsd(value);
}

export function computeCost(usage: NormalizedUsage, listed: Pricing, opts: CostOptions = {}): CostBreakdown {
  // Tiers select on every input token (cached and written included), as the providers bill them.
  const ctx: PriceContext = {
    at: opts.at ?? Date.now(),
    promptTokens: usage.promptTokens,
    ...(opts.searchContextSize !== undefined ? { searchContextSize: opts.searchContextSize } : {}),
  };
  const pricing = pricingInForce(listed, ctx);
  const tierAbove = tierReached(listed, ctx);
  const promptPrice = parseUsd(pricing.prompt);
  const completionPrice = parseUsd(pricing.completion);

  const prompt = split(tokens(usage.promptTokens), [
    tokens(usage.cachedTokens),
    tokens(usage.cacheWrite5mTokens),
    tokens(usage.cacheWrite1hTokens),
    tokens(usage.audioInputTokens),
    tokens(usage.imageInputTokens),
  ]);
  const [cached = 0n, write5m = 0n, write1h = 0n, audioIn = 0n, imageIn = 0n] = prompt.parts;

  const completion = split(tokens(usage.completionTokens), [
    tokens(usage.imageOutputTokens),
    tokens(usage.audioOutputTokens),
    tokens(usage.reasoningTokens),
    tokens(usage.citationTokens ?? 0),
  ]);
  const [imageOut = 0n, audioOut = 0n, reasoning = 0n, citation = 0n] = completion.parts;

  const billed = billedPrices(pricing);
  const inputCost = prompt.rest * promptPrice;
  const cachedInputCost = cached * price(billed.input_cache_read);
  const cacheWriteInputCost = write5m * price(billed.input_cache_write) + write1h * price(billed.input_cache_write_1h);
  const audioInputCost = audioIn * price(billed.input_audio);
  const imageInputCost = imageIn * price(billed.image);

  const reasoningCost = reasoning * price(billed.internal_reasoning);
  const citationCost = citation * price(billed.citation);
  const outputCost = completion.rest * completionPrice + reasoningCost + citationCost;
  const audioOutputCost = audioOut * price(billed.output_audio);
  const perImage = opts.images && opts.images.count > 0 ? perImagePrice(pricing, opts.images.size) : undefined;
  const imageOutputCost =
    perImage !== undefined && opts.images
      ? tokens(opts.images.count) * perImage
      : imageOut * price(billed.image_output);

  const requestCost = price(billed.request);
  const webSearchCost = tokens(usage.webSearchRequests) * price(billed.web_search);

  const promptCost = inputCost + cachedInputCost + cacheWriteInputCost + audioInputCost + imageInputCost;
  const completionCost = outputCost + audioOutputCost + imageOutputCost;
  const upstreamCost = promptCost + completionCost + requestCost + webSearchCost;

  let discountCost = 0n;
  if (opts.discount !== undefined) {
    const fraction = parseUsd(opts.discount);
    if (fraction < 0n || fraction > SCALE) throw new RangeError(`discount must be within [0, 1]: ${opts.discount}`);
    discountCost = (upstreamCost * fraction + SCALE / 2n) / SCALE;
  }

  return {
    inputCost,
    cachedInputCost,
    cacheWriteInputCost,
    audioInputCost,
    imageInputCost,
    outputCost,
    reasoningCost,
    citationCost,
    audioOutputCost,
    imageOutputCost,
    requestCost,
    webSearchCost,
    promptCost,
    completionCost,
    upstreamCost,
    discountCost,
    total: upstreamCost - discountCost,
    ...(tierAbove !== undefined ? { tierAbove } : {}),
  };
}

/** A zero breakdown (cached responses, free models). */
export function zeroCost(): CostBreakdown {
  return {
    inputCost: 0n, cachedInputCost: 0n, cacheWriteInputCost: 0n, audioInputCost: 0n, imageInputCost: 0n,
    outputCost: 0n, reasoningCost: 0n, citationCost: 0n, audioOutputCost: 0n, imageOutputCost: 0n, requestCost: 0n,
    webSearchCost: 0n, promptCost: 0n, completionCost: 0n, upstreamCost: 0n, discountCost: 0n, total: 0n,
  };
}
