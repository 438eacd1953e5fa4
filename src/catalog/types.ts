/**
 * The model catalogue is plain data (src/catalog/models/*.ts, src/catalog/providers.ts).
 * Prices are USD decimal strings per unit (per token unless the field says otherwise), as read
 * from the providers' public price pages on the date in `PRICES_READ_AT`.
 */

export const PROVIDER_IDS = [
  "openai", "anthropic", "google-ai-studio", "google-vertex", "aws-bedrock", "azure", "mistral", "groq",
  "deepseek", "xai", "together-ai", "fireworks", "cerebras", "deepinfra", "perplexity", "moonshot",
  "alibaba", "zai", "novita", "nebius", "inference.net",
] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** Wire formats: one adapter folder each under src/providers/. */
export type WireFormat = "openai" | "anthropic" | "google" | "bedrock" | "azure";

/** Differences between OpenAI-compatible providers, expressed as data (no `if (provider === ...)`). */
export interface OpenAICompatQuirks {
  /** Which field carries the output cap upstream. Default `max_tokens`. */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /**
   * Request fields the provider rejects or does not implement; the gateway drops them before
   * sending. Only hints and extras belong here (src/routes/chat/schema.ts says which fields are).
   */
  unsupportedParams?: readonly string[];
  /** Where the provider puts reasoning text in messages/deltas. Default tries both. */
  reasoningField?: "reasoning_content" | "reasoning";
  /** Whether `stream_options.include_usage` is understood. Default true. */
  streamUsageOption?: boolean;
  /** Path appended to the base URL. Default `/chat/completions`. */
  chatPath?: string;
  /** Takes `tools` of type `custom` (free-form or grammar-constrained text input). Default false. */
  customTools?: boolean;
}

export interface ProviderInfo {
  id: ProviderId;
  name: string;
  wireFormat: WireFormat;
  /** Default API base; `<ID>_BASE_URL` replaces it verbatim. */
  baseUrl: string;
  /** Whether the provider may train on API traffic (`no_training` filter, compliance policy). */
  trainsOnApiData: boolean;
  /** Region reported in `metadata.used_region` when the provider has a fixed one. */
  region?: string;
  /**
   * The provider setting that names the region a request is served in (`AWS_BEDROCK_REGION`,
   * `GOOGLE_VERTEX_LOCATION`): a regional endpoint (`<ID>_BASE_URL__<REGION>`) sets it to its region.
   */
  regionSetting?: string;
  /** Offers `/moderations` (OpenAI wire format). */
  moderation?: boolean;
  quirks?: OpenAICompatQuirks;
}

export type Stability = "stable" | "beta" | "unstable" | "experimental";
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high";

/** The per-token prices a prompt-size tier or a dated price may change. */
export const TOKEN_PRICE_FIELDS = [
  "prompt", "completion", "image", "input_audio", "input_audio_cache_read", "output_audio", "request",
  "input_cache_read", "input_cache_write", "input_cache_write_1h", "image_output", "web_search",
  "internal_reasoning", "citation",
] as const;
export type TokenPriceField = (typeof TOKEN_PRICE_FIELDS)[number];
export type TokenPrices = Partial<Record<TokenPriceField, string>>;

/**
 * A prompt-size tier: when a request's input tokens (cached and uncached together) exceed
 * `above`, the whole request is billed at these prices (the providers' long-context rates).
 */
export interface PriceTier {
  above: number;
  prices: TokenPrices;
}

/**
 * A price in force from a date (`from`, ISO date, UTC) or inside a daily UTC window (`utcStart`
 * to `utcEnd`, `HH:MM:SS`, may wrap midnight). The last entry that matches the request's time
 * wins; when none does, the mapping's base prices apply (the source's rule).
 */
export interface ScheduledPrices {
  from?: string;
  utcStart?: string;
  utcEnd?: string;
  prices: TokenPrices;
  tiers?: readonly PriceTier[];
}

export type SearchContextSize = "low" | "medium" | "high";

/** Per-mapping prices, spec 2.5 names. All optional except prompt and completion. */
export interface Pricing {
  prompt: string;
  completion: string;
  image?: string;
  input_audio?: string;
  input_audio_cache_read?: string;
  output_audio?: string;
  request?: string;
  input_cache_read?: string;
  input_cache_write?: string;
  input_cache_write_1h?: string;
  ocr_page?: string;
  input_audio_hour?: string;
  /** Output image tokens (image models billed per token). */
  image_output?: string;
  /** Price per generated image by size, e.g. `{ "1024x1024": "0.04" }`. */
  per_image?: Record<string, string>;
  /** Price per second of generated video/audio by resolution. */
  per_second?: Record<string, string>;
  web_search?: string;
  internal_reasoning?: string;
  /** Citation tokens (Perplexity), part of the completion tokens. Missing: the completion price. */
  citation?: string;
  /** Prompt-size tiers, ascending `above`; the base prices apply up to the first threshold. */
  tiers?: readonly PriceTier[];
  /** Dated and time-of-day prices (price changes announced by the provider, off-peak rates). */
  schedule?: readonly ScheduledPrices[];
  /**
   * Per-request fee by the request's `web_search_options.search_context_size` (Perplexity);
   * `request` holds the dearest of them (the source's figure), used when the size is unknown.
   */
  request_by_search_context?: Partial<Record<SearchContextSize, string>>;
}

export interface ProviderMapping {
  providerId: ProviderId;
  /** The model id the provider's API expects. */
  externalId: string;
  pricing: Pricing;
  contextLength: number;
  maxOutput: number;
  streaming: boolean;
  vision: boolean;
  tools: boolean;
  parallelToolCalls: boolean;
  reasoning: boolean;
  jsonOutput: boolean;
  structuredOutputs: boolean;
  reasoningEfforts?: readonly ReasoningEffort[];
  reasoningModes?: readonly string[];
  minCacheableTokens?: number;
  realtime?: boolean;
  cancellation?: boolean;
  supportedVideoSizes?: readonly string[];
  supportsVideoAudio?: boolean;
  supportsVideoWithoutAudio?: boolean;
  stability?: Stability;
  region?: string;
  deprecatedAt?: string;
  deactivatedAt?: string;
  /** Provider applies its own moderation (`top_provider.is_moderated`). */
  moderated?: boolean;
}

export type ModelKind = "chat" | "image" | "video" | "moderation" | "embedding";
export type Modality = "text" | "image" | "audio" | "video" | "file";

export interface ModelDefinition {
  /** Canonical id, e.g. `gpt-4o-mini`. */
  id: string;
  name: string;
  description: string;
  family: string;
  /** Company that made the model (`maker`, `owned_by`). */
  maker: string;
  aliases?: readonly string[];
  kind: ModelKind;
  /** Unix seconds of the model's public release. */
  created: number;
  inputModalities: readonly Modality[];
  outputModalities: readonly Modality[];
  tokenizer: string;
  free?: boolean;
  stability?: Stability;
  deprecatedAt?: string;
  deactivatedAt?: string;
  supportedParameters?: readonly string[];
  mappings: readonly ProviderMapping[];
}
