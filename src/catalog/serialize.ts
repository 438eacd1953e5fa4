/**
 * Model objects of `GET /v1/models` (spec 2.5), built from catalogue data. Pure: no env, no I/O.
 * Every field of the spec is present with its spec type; a price the catalogue lacks is the one
 * billed (`pricingJson`), absent maps `{}`.
 * The fields the spec types as integer or string but that not every model has
 * (`min_cacheable_tokens`, `deprecated_at`, `deactivated_at`) are OMITTED when unknown, never
 * `null` (one rule for model objects, provider entries, mapped and custom entries).
 */
import type { CustomModelRecord } from "../context/key-context";
import { billedPrices } from "../billing/cost";
import { isDecimalString, parseUsd } from "../billing/money";
import { isFreeMapping } from "./index";
import { PROVIDERS } from "./providers";
import { pricingInForce } from "../billing/price-schedule";
import type { ModelDefinition, Modality, Pricing, ProviderMapping, SearchContextSize, Stability, TokenPrices } from "./types";

export interface PricingJson {
  prompt: string;
  completion: string;
  image: string;
  image_output: string;
  input_audio: string;
  input_audio_cache_read: string;
  output_audio: string;
  request: string;
  input_cache_read: string;
  input_cache_write: string;
  input_cache_write_1h: string;
  ocr_page: string;
  input_audio_hour: string;
  per_second: Record<string, string>;
  per_image: Record<string, string>;
  /**
   * Additions to the spec's fields, omitted when a mapping has none; a client that ignores them
   * reads the base prices (docs/catalogue.md). `tiers`: prompt-size tiers, each the prices of a
   * whole request whose input tokens exceed `above_prompt_tokens`.
   */
  tiers?: Array<{ above_prompt_tokens: number } & TokenPrices>;
  /** Dated and time-of-day prices: `from` (date, UTC) or `utc_start`..`utc_end`; the last match wins. */
  scheduled?: Array<{ from?: string; utc_start?: string; utc_end?: string } & TokenPrices>;
  /** Per-request fee by `web_search_options.search_context_size` (`request` is the one without it). */
  request_by_search_context?: Partial<Record<SearchContextSize, string>>;
  /** Citation tokens (Perplexity), when priced apart from completion tokens. */
  citation?: string;
}

export interface AggregatedPricingJson extends PricingJson {
  web_search: string;
  internal_reasoning: string;
}

export interface ProviderJson {
  providerId: string;
  externalId: string;
  pricing: PricingJson;
  context_length: number;
  max_output: number;
  supportedVideoSizes: string[];
  supportsVideoAudio: boolean;
  supportsVideoWithoutAudio: boolean;
  streaming: boolean;
  vision: boolean;
  realtime: boolean;
  cancellation: boolean;
  tools: boolean;
  parallelToolCalls: boolean;
  reasoning: boolean;
  reasoning_efforts: string[];
  reasoning_modes: string[];
  /** Omitted when the provider has no prompt-cache minimum. */
  min_cacheable_tokens?: number;
  json_output: boolean;
  structured_outputs: boolean;
  region: string | null;
  stability: Stability;
  /** Omitted when not deprecated. */
  deprecated_at?: string;
  /** Omitted when not scheduled for deactivation. */
  deactivated_at?: string;
}

export interface ModelJson {
  id: string;
  object: "model";
  name: string;
  display_name: string;
  description: string;
  family: string;
  owned_by: string;
  maker: string;
  aliases: string[];
  created: number;
  kind: string;
  architecture: { input_modalities: string[]; output_modalities: string[]; tokenizer: string };
  top_provider: { is_moderated: boolean; context_length: number; max_completion_tokens: number };
  providers: ProviderJson[];
  pricing: AggregatedPricingJson;
  context_length: number;
  max_output: number;
  per_request_limits: Record<string, string>;
  supported_parameters: string[];
  json_output: boolean;
  structured_outputs: boolean;
  free: boolean;
  /** Omitted when not deprecated. */
  deprecated_at?: string;
  /** Omitted when not scheduled for deactivation. */
  deactivated_at?: string;
  stability: Stability;
}

/** `{ [name]: value }` when the value is known, `{}` otherwise (spread into a model object). */
function optional<K extends string, V>(name: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

const str = (v: string | undefined): string => v ?? "0";
const map = (v: Readonly<Record<string, string>> | undefined): Record<string, string> => ({ ...(v ?? {}) });

/**
 * Token prices are published as billed (`billedPrices`: a price the catalogue lacks is listed at
 * the price its tokens are billed at, never "0"), so a listing and a bill always agree. `ocr_page`
 * and `input_audio_hour` are billed by nothing, hence "0".
 */
export function pricingJson(listed: Pricing, now = Date.now()): PricingJson {
  // The base fields are the prices in force now for a request below every tier threshold.
  const p = pricingInForce(listed, { at: now, promptTokens: 0 });
  const billed = billedPrices(p);
  return {
    prompt: p.prompt,
    completion: p.completion,
    image: billed.image,
    image_output: billed.image_output,
    input_audio: billed.input_audio,
    // Cached audio tokens are cached tokens: billed at the cache-read price.
    input_audio_cache_read: str(p.input_audio_cache_read ?? billed.input_cache_read),
    output_audio: billed.output_audio,
    request: billed.request,
    input_cache_read: billed.input_cache_read,
    input_cache_write: billed.input_cache_write,
    input_cache_write_1h: billed.input_cache_write_1h,
    ocr_page: str(p.ocr_page),
    input_audio_hour: str(p.input_audio_hour),
    per_second: map(p.per_second),
    per_image: map(p.per_image),
    ...optional("tiers", listed.tiers?.map((t) => ({ above_prompt_tokens: t.above, ...t.prices }))),
    ...optional(
      "scheduled",
      listed.schedule?.map((e) => ({
        ...optional("from", e.from),
        ...optional("utc_start", e.utcStart),
        ...optional("utc_end", e.utcEnd),
        ...e.prices,
      })),
    ),
    ...optional("request_by_search_context", listed.request_by_search_context ? { ...listed.request_by_search_context } : undefined),
    ...optional("citation", p.citation),
  };
}

export function providerJson(model: ModelDefinition, m: ProviderMapping): ProviderJson {
  return {
    providerId: m.providerId,
    externalId: m.externalId,
    pricing: pricingJson(m.pricing),
    context_length: m.contextLength,
    max_output: m.maxOutput,
    supportedVideoSizes: [...(m.supportedVideoSizes ?? [])],
    supportsVideoAudio: m.supportsVideoAudio ?? false,
    supportsVideoWithoutAudio: m.supportsVideoWithoutAudio ?? false,
    streaming: m.streaming,
    vision: m.vision,
    realtime: m.realtime ?? false,
    cancellation: m.cancellation ?? false,
    tools: m.tools,
    parallelToolCalls: m.parallelToolCalls,
    reasoning: m.reasoning,
    reasoning_efforts: [...(m.reasoningEfforts ?? [])],
    reasoning_modes: [...(m.reasoningModes ?? (m.reasoning ? ["standard"] : []))],
    ...optional("min_cacheable_tokens", m.minCacheableTokens),
    json_output: m.jsonOutput,
    structured_outputs: m.structuredOutputs,
    region: m.region ?? PROVIDERS[m.providerId].region ?? null,
    stability: m.stability ?? model.stability ?? "stable",
    ...optional("deprecated_at", m.deprecatedAt),
    ...optional("deactivated_at", m.deactivatedAt),
  };
}

/** Token price used to rank mappings: prompt + completion, then request fee, then catalogue order. */
function priceKey(m: ProviderMapping): [bigint, bigint] {
  return [parseUsd(m.pricing.prompt) + parseUsd(m.pricing.completion), parseUsd(m.pricing.request ?? "0")];
}

/** The cheapest mapping (stable: the first one on ties). */
export function cheapestMapping(mappings: readonly ProviderMapping[]): ProviderMapping | undefined {
  let best: ProviderMapping | undefined;
  let bestKey: [bigint, bigint] | undefined;
  for (const m of mappings) {
    const key = priceKey(m);
    if (!bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
      best = m;
      bestKey = key;
    }
  }
  return best;
}

const BASE_PARAMS = ["max_tokens", "temperature", "top_p", "stop", "seed", "frequency_penalty", "presence_penalty", "stream"];

/**
 * Parameters a chat request may carry for this model: explicit in the catalogue, or derived from
 * the mappings' capabilities minus what every mapping's provider rejects (provider quirks).
 */
export function supportedParameters(model: ModelDefinition, mappings: readonly ProviderMapping[]): string[] {
  if (model.supportedParameters) return [...model.supportedParameters];
  const params = new Set(BASE_PARAMS);
  const any = (f: (m: ProviderMapping) => boolean) => mappings.some(f);
  if (any((m) => m.tools)) ["tools", "tool_choice"].forEach((p) => params.add(p));
  if (any((m) => m.parallelToolCalls)) params.add("parallel_tool_calls");
  if (any((m) => m.jsonOutput || m.structuredOutputs)) params.add("response_format");
  if (any((m) => m.structuredOutputs)) params.add("structured_outputs");
  if (any((m) => m.reasoning)) params.add("reasoning");
  if (any((m) => (m.reasoningEfforts?.length ?? 0) > 0)) params.add("reasoning_effort");
  if (model.outputModalities.includes("image")) params.add("modalities");
  for (const p of [...params]) {
    const rejectedEverywhere = mappings.length > 0 && mappings.every((m) => PROVIDERS[m.providerId].quirks?.unsupportedParams?.includes(p));
    if (rejectedEverywhere) params.delete(p);
  }
  return [...params];
}

const earliest = (dates: ReadonlyArray<string | undefined>): string | null => {
  const present = dates.filter((d): d is string => d !== undefined).sort((a, b) => Date.parse(a) - Date.parse(b));
  return present[0] ?? null;
};

export interface SerializeOptions {
  /** Override the id (mapped mode: `provider/model-id`). */
  id?: string;
  displayName?: string;
}

/**
 * One model object over the given (already filtered, non-empty) mappings: aggregated pricing is
 * the cheapest mapping's, context and output are the largest offered, capabilities are unions.
 */
export function serializeModel(model: ModelDefinition, mappings: readonly ProviderMapping[], opts: SerializeOptions = {}): ModelJson {
  const top = cheapestMapping(mappings) ?? model.mappings[0];
  if (!top) throw new Error(`model ${model.id} has no mapping`);
  const topPricing = pricingJson(top.pricing);
  return {
    id: opts.id ?? model.id,
    object: "model",
    name: model.name,
    display_name: opts.displayName ?? model.name,
    description: model.description,
    family: model.family,
    owned_by: model.maker,
    maker: model.maker,
    aliases: [...(model.aliases ?? [])],
    created: model.created,
    kind: model.kind,
    architecture: {
      input_modalities: [...model.inputModalities],
      output_modalities: [...model.outputModalities],
      tokenizer: model.tokenizer,
    },
    top_provider: {
      is_moderated: top.moderated ?? false,
      context_length: top.contextLength,
      max_completion_tokens: top.maxOutput,
    },
    providers: mappings.map((m) => providerJson(model, m)),
    pricing: {
      ...topPricing,
      web_search: billedPrices(pricingInForce(top.pricing, { at: Date.now(), promptTokens: 0 })).web_search,
      internal_reasoning: billedPrices(pricingInForce(top.pricing, { at: Date.now(), promptTokens: 0 })).internal_reasoning,
    },
    context_length: Math.max(...mappings.map((m) => m.contextLength)),
    max_output: Math.max(...mappings.map((m) => m.maxOutput)),
    per_request_limits: {},
    supported_parameters: supportedParameters(model, mappings),
    json_output: mappings.some((m) => m.jsonOutput),
    structured_outputs: mappings.some((m) => m.structuredOutputs),
    free: model.free === true || mappings.every((m) => isFreeMapping(model, m)),
    ...optional("deprecated_at", model.deprecatedAt ?? earliest(mappings.map((m) => m.deprecatedAt))),
    ...optional("deactivated_at", model.deactivatedAt ?? earliest(mappings.map((m) => m.deactivatedAt))),
    stability: model.stability ?? "stable",
  };
}

/** Mapped mode: one entry for one mapping, id `provider/model-id`. */
export function serializeMapping(model: ModelDefinition, m: ProviderMapping): ModelJson {
  return serializeModel(model, [m], {
    id: `${m.providerId}/${model.id}`,
    displayName: `${model.name} (${PROVIDERS[m.providerId].name})`,
  });
}

/** An organization's custom model (`<providerName>/<modelId>`), OpenAI-compatible upstream. */
export function serializeCustomModel(cm: CustomModelRecord): ModelJson {
  const caps = cm.capabilities;
  const pricing: Pricing = {
    prompt: cm.pricing.prompt ?? "0",
    completion: cm.pricing.completion ?? "0",
    ...(cm.pricing.request !== undefined ? { request: cm.pricing.request } : {}),
    ...(cm.pricing.input_cache_read !== undefined ? { input_cache_read: cm.pricing.input_cache_read } : {}),
  };
  const id = `${cm.providerName}/${cm.modelId}`;
  const contextLength = cm.contextLength ?? 0;
  const inputModalities: Modality[] = caps.vision ? ["text", "image"] : ["text"];
  const free = [pricing.prompt, pricing.completion, pricing.request ?? "0"].every((p) => isDecimalString(p) && parseUsd(p) === 0n);
  const provider: ProviderJson = {
    providerId: `custom:${cm.providerName}`,
    externalId: cm.modelId,
    pricing: pricingJson(pricing),
    context_length: contextLength,
    max_output: contextLength,
    supportedVideoSizes: [],
    supportsVideoAudio: false,
    supportsVideoWithoutAudio: false,
    streaming: caps.streaming ?? true,
    vision: caps.vision ?? false,
    realtime: false,
    cancellation: false,
    tools: caps.tools ?? false,
    parallelToolCalls: caps.tools ?? false,
    reasoning: caps.reasoning ?? false,
    reasoning_efforts: [],
    reasoning_modes: caps.reasoning ? ["standard"] : [],
    json_output: caps.json_output ?? false,
    structured_outputs: false,
    region: null,
    stability: "stable",
  };
  return {
    id,
    object: "model",
    name: cm.name ?? cm.modelId,
    display_name: cm.name ?? cm.modelId,
    description: `Custom model ${cm.modelId} on the organization's provider ${cm.providerName}.`,
    family: "custom",
    owned_by: cm.providerName,
    maker: cm.providerName,
    aliases: [],
    created: 0,
    kind: "chat",
    architecture: { input_modalities: inputModalities, output_modalities: ["text"], tokenizer: "unknown" },
    top_provider: { is_moderated: false, context_length: contextLength, max_completion_tokens: contextLength },
    providers: [provider],
    pricing: { ...pricingJson(pricing), web_search: "0", internal_reasoning: caps.reasoning ? pricing.completion : "0" },
    context_length: contextLength,
    max_output: contextLength,
    per_request_limits: {},
    supported_parameters: [
      ...BASE_PARAMS,
      ...(caps.tools ? ["tools", "tool_choice", "parallel_tool_calls"] : []),
      ...(caps.json_output ? ["response_format"] : []),
      ...(caps.reasoning ? ["reasoning"] : []),
    ],
    json_output: caps.json_output ?? false,
    structured_outputs: false,
    free,
    stability: "stable",
  };
}
