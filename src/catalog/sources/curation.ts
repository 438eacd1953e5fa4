/**
 * What no price source says, kept by hand and read by `npm run catalog:update`
 * (scripts/catalog-update.ts): which source provider each of ours is, how a source's model ids
 * become our canonical ids, which source models the gateway cannot serve, and the capability
 * defaults of generated mappings. The curated models themselves (canonical ids, aliases, external
 * ids, adapter flags, unpriced mappings) are in ../models/*.ts. Each rule says when it was checked.
 */
import type { ProviderId } from "../types";

export interface SourceProvider {
  /** Provider id in @pydantic/genai-prices (prices, tiers, history, context). */
  genaiPrices?: string;
  /**
   * Further genai-prices providers that price this host, for models its own entry lacks:
   * Hugging Face's router entries for a host (`huggingface_<host>`, the host's price as the router
   * bills it; for Nebius that is the `-fast` flavour's, so curated mappings never take it). Their ids
   * are Hugging Face repo ids, which Nebius and Together take as they are; Novita lower-cased.
   */
  alsoPricedBy?: readonly string[];
  idCase?: "as-is" | "lower";
  /**
   * genai-prices providers whose model lists this provider also serves, priced through this
   * provider's own lookup (Azure OpenAI serves OpenAI's models; the source prices them through
   * its Azure-to-OpenAI fallback).
   */
  servesModelsOf?: readonly string[];
  /** Whether the gateway's embeddings adapter reaches this provider's embeddings (Vertex's is another API). */
  embeddings?: boolean;
  /** Provider id in the models.dev snapshot (max output, modalities, capabilities, release date). */
  modelsDev?: string;
  /** Whether generated models are added for this provider (not only curated prices checked). */
  breadth: boolean;
  /** Generated mappings: `response_format` json_object / json_schema support. */
  jsonOutput: boolean;
  structuredOutputs: boolean;
  /** Generated mappings when models.dev does not say: tool calling. */
  tools: boolean;
  checkedAt: string;
}

export const SOURCE_PROVIDERS: Partial<Record<ProviderId, SourceProvider>> = {
  openai: { genaiPrices: "openai", modelsDev: "openai", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  anthropic: { genaiPrices: "anthropic", modelsDev: "anthropic", breadth: true, jsonOutput: false, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  "google-ai-studio": { genaiPrices: "google", modelsDev: "google", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  "google-vertex": { genaiPrices: "google", modelsDev: "google-vertex", embeddings: false, breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  "aws-bedrock": { genaiPrices: "aws", modelsDev: "amazon-bedrock", breadth: true, jsonOutput: false, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  azure: { genaiPrices: "azure", servesModelsOf: ["openai"], modelsDev: "azure", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  mistral: { genaiPrices: "mistral", modelsDev: "mistral", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  groq: { genaiPrices: "groq", modelsDev: "groq", breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  deepseek: { genaiPrices: "deepseek", modelsDev: "deepseek", breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  xai: { genaiPrices: "x-ai", modelsDev: "xai", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  "together-ai": { genaiPrices: "together", alsoPricedBy: ["huggingface_together"], modelsDev: "togetherai", breadth: true, jsonOutput: true, structuredOutputs: false, tools: false, checkedAt: "2026-11-27" },
  fireworks: { genaiPrices: "fireworks", modelsDev: "fireworks-ai", breadth: true, jsonOutput: true, structuredOutputs: true, tools: true, checkedAt: "2026-11-27" },
  cerebras: { genaiPrices: "cerebras", modelsDev: "cerebras", breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  perplexity: { genaiPrices: "perplexity", modelsDev: "perplexity", breadth: true, jsonOutput: true, structuredOutputs: true, tools: false, checkedAt: "2026-11-27" },
  moonshot: { genaiPrices: "moonshotai", modelsDev: "moonshotai", breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  zai: { genaiPrices: "zai", modelsDev: "zai", breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  novita: { genaiPrices: "novita", alsoPricedBy: ["huggingface_novita"], idCase: "lower", breadth: true, jsonOutput: true, structuredOutputs: false, tools: false, checkedAt: "2026-11-27" },
  nebius: { alsoPricedBy: ["huggingface_nebius"], breadth: true, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  // No source prices deepinfra, alibaba (international) or inference.net: their
  // mappings keep the curated prices read on PRICES_READ_AT (docs/catalogue.md lists them).
  deepinfra: { modelsDev: "deepinfra", breadth: false, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  alibaba: { modelsDev: "alibaba", breadth: false, jsonOutput: true, structuredOutputs: false, tools: true, checkedAt: "2026-11-27" },
  "inference.net": { modelsDev: "inference", breadth: false, jsonOutput: true, structuredOutputs: false, tools: false, checkedAt: "2026-11-27" },
};

/**
 * Source models the gateway does not generate: other endpoints than chat and embeddings (audio,
 * realtime, transcription, speech, image and video generation, OCR, rerank), fine-tunes, legacy
 * completions-only models, and models only the Responses API serves. Checked 2026-11-27.
 */
export const EXCLUDED_SOURCE_MODELS: readonly RegExp[] = [
  /tts|transcribe|whisper|realtime|audio|voice|live|native-audio|sonic/i,
  /image|imagen|dall-e|veo|video|omni|ocr|rerank|moderation|guard|safeguard/i,
  /^ft:|fine-?tun|:extended|:free$/i,
  /^(ada|babbage|curie|davinci|text-davinci)|-base$|^gpt-3\.5-turbo-instruct|chatgpt-4o-latest|gpt-chat-latest/i,
  // Responses-only at OpenAI (chat completions refuses them).
  /^(o1-pro|o3-pro|o3-deep-research|o4-mini-deep-research|codex-mini|computer-use)|-pro$|-codex|deep-research$/i,
  /multi-agent|build-|copilot|router|-fast$/i,
  // Legacy hosted fine-tunes and base models on Together and Novita that no longer serve chat.
  /RedPajama|StripedHyena|alpaca|GPT-JT|vicuna|Nous-Hermes-llama-2|phi-2|OLMo|Yi-6B|Qwen1\.5-(0\.5|1\.8|4)B|Mixtral-8x7B-v0\.1|Mistral-7B-v0\.1|gemma-2b$|gemma-7b$/i,
  // Global cross-region profiles: the `us.` regional profile is the one mapping per model on Bedrock.
  /^global\./,
  // Aggregator-style aliases the Google entry also matches (not Gemini API ids).
  /^gemini-(pro|flash)-1\.5/,
];

/**
 * Source ids that name a model the curated catalogue already has under another id, and ids whose
 * plain normalization would be wrong. Keys are normalized ids (see `normalizeId`), values
 * canonical ids. Checked 2026-11-27.
 */
export const CANONICAL_IDS: Readonly<Record<string, string>> = {
  "llama-3.3-70b-versatile": "llama-3.3-70b",
  "llama-3.3-70b-instruct-turbo": "llama-3.3-70b",
  "meta-llama-3.3-70b-instruct-turbo": "llama-3.3-70b",
  "llama-3.3-70b-instruct": "llama-3.3-70b",
  "llama3-3-70b-instruct": "llama-3.3-70b",
  "llama-3.1-8b-instant": "llama-3.1-8b",
  "llama3.1-8b": "llama-3.1-8b",
  "llama-3.1-8b-instruct": "llama-3.1-8b",
  "llama3-1-8b-instruct": "llama-3.1-8b",
  "llama-v3.1-8b-instruct": "llama-3.1-8b",
  "meta-llama-3.1-8b-instruct-turbo": "llama-3.1-8b",
  "llama-3.1-70b-instruct": "llama-3.1-70b",
  "llama3-1-70b-instruct": "llama-3.1-70b",
  "meta-llama-3.1-70b-instruct-turbo": "llama-3.1-70b",
  "llama-3.1-70b-versatile": "llama-3.1-70b",
  "meta-llama-3.1-405b-instruct-turbo": "llama-3.1-405b",
  "llama-4-maverick-17b-128e-instruct": "llama-4-maverick",
  "llama-4-maverick-17b-128e-instruct-fp8": "llama-4-maverick",
  "llama4-maverick-17b-instruct": "llama-4-maverick",
  "llama4-maverick-instruct-basic": "llama-4-maverick",
  "llama-4-scout-17b-16e-instruct": "llama-4-scout",
  "llama4-scout-17b-instruct": "llama-4-scout",
  "qwen-3-32b": "qwen3-32b",
  "deepseek_v3": "deepseek-v3",
  "deepseek-v3-0324": "deepseek-v3",
  "deepseek-r1-0528": "deepseek-r1-0528",
  "kimi-k2-instruct": "kimi-k2",
  "gemma2-9b-it": "gemma-2-9b-it",
  "mixtral-8x7b-32768": "mixtral-8x7b-instruct",
  "mixtral-8x7b-instruct-v0.1": "mixtral-8x7b-instruct",
  "mixtral-8x22b-instruct-v0.1": "mixtral-8x22b-instruct",
  "mistral-7b-instruct-v0.1": "mistral-7b-instruct",
  "mistral-7b-instruct-v0.2": "mistral-7b-instruct-v0.2",
  "mistral.mistral-7b-instruct-v0:2": "mistral-7b-instruct-v0.2",
  "wizardlm-2-8x22b": "wizardlm-2-8x22b",
  "glm-5.2": "glm-5.2",
  "mistral-large-3-675b-instruct": "mistral-large-2512",
  "claude-3-5-haiku-latest": "claude-3-5-haiku",
  "claude-3-7-sonnet-latest": "claude-3.7-sonnet",
  "claude-3-opus-latest": "claude-3-opus",
  "claude-3-5-sonnet": "claude-3-5-sonnet",
  "claude-3-sonnet-20240229": "claude-3-sonnet",
  "claude-opus-4-0": "claude-opus-4",
  "claude-4-opus": "claude-opus-4",
  "claude-opus-4-20250514": "claude-opus-4",
  "claude-4-sonnet": "claude-sonnet-4",
  "gpt-oss-120b-1": "gpt-oss-120b",
  "gpt-oss-20b-1": "gpt-oss-20b",
  "r1": "deepseek-r1",
  "llama3-2-1b-instruct": "llama-3.2-1b-instruct",
  "llama3-2-3b-instruct": "llama-3.2-3b-instruct",
  "llama3-2-11b-instruct": "llama-3.2-11b-vision-instruct",
  "llama3-2-90b-instruct": "llama-3.2-90b-vision-instruct",
  "llama3-70b-instruct": "llama-3-70b-instruct",
  "llama3-8b-instruct": "llama-3-8b-instruct",
  "meta-llama-3-70b-instruct": "llama-3-70b-instruct",
  "meta-llama-3-8b-instruct": "llama-3-8b-instruct",
  "llama3-70b-8192": "llama-3-70b-instruct",
  "llama3-8b-8192": "llama-3-8b-instruct",
  "qwen-2.5-72b-instruct": "qwen2.5-72b-instruct",
  "qwen3-vl-235b-a22b": "qwen3-vl-235b-a22b-instruct",
  "qwen3-coder-30b-a3b": "qwen3-coder-30b-a3b-instruct",
  "qwen3-coder-480b-a35b": "qwen3-coder-480b-a35b-instruct",
  "l3-8b-lunaris": "l3-8b-lunaris-v1",
  "mistral-saba-24b": "mistral-saba",
};

/** Aliases people type for models the generator adds (ids are case-insensitive anyway). Checked 2026-11-27. */
export const EXTRA_ALIASES: Readonly<Record<string, readonly string[]>> = {
  "claude-3-5-haiku": ["claude-3-5-haiku-20241022", "claude-3.5-haiku"],
  "claude-3-opus": ["claude-3-opus-20240229"],
  "claude-opus-4": ["claude-opus-4-20250514", "claude-opus-4-0"],
  "claude-3-haiku": ["claude-3-haiku-20240307"],
  "o3-mini": ["o3-mini-2025-01-31"],
  "o1": ["o1-2024-12-17"],
  "o1-mini": ["o1-mini-2024-09-12"],
  "gpt-4-turbo": ["gpt-4-turbo-2024-04-09"],
  "gpt-3.5-turbo": ["gpt-3.5-turbo-0125"],
  "deepseek-v3": ["deepseek-v3-0324"],
  "mistral-large-2512": ["mistral-large", "mistral-large-3"],
  "llama-3.1-405b": ["llama-3.1-405b-instruct"],
};

/**
 * Curated prices kept over the source's, by `provider|externalId`, each with the reason and the
 * day it was checked by hand. The price test skips exactly these.
 */
export const PRICE_OVERRIDES: Readonly<Record<string, { reason: string; checkedAt: string }>> = {
  "deepseek|deepseek-chat": {
    reason: "the source prices the V3 model with its ended off-peak discount; `deepseek-chat` is V3.2 at 0.28/0.42 with cache hits at 0.028 (DeepSeek's price page)",
    checkedAt: "2026-11-27",
  },
  "deepseek|deepseek-reasoner": {
    reason: "as deepseek-chat: V3.2 thinking mode, same price; the source still lists R1's V3-era rates",
    checkedAt: "2026-11-27",
  },
};

/**
 * Mappings whose external id no source gives but whose price it does: Claude on Vertex (the
 * source prices it under Google; the API wants `model@date` ids). Flags are copied from the
 * model's mapping on `like`. Checked 2026-11-27 against Vertex's model garden ids.
 */
export const EXTRA_EXTERNAL_IDS: ReadonlyArray<{ model: string; providerId: ProviderId; externalId: string; like: ProviderId }> = [
  { model: "claude-3.5-sonnet", providerId: "google-vertex", externalId: "claude-3-5-sonnet-v2@20241022", like: "anthropic" },
  { model: "claude-3.7-sonnet", providerId: "google-vertex", externalId: "claude-3-7-sonnet@20250219", like: "anthropic" },
  { model: "claude-3-5-haiku", providerId: "google-vertex", externalId: "claude-3-5-haiku@20241022", like: "anthropic" },
  { model: "claude-3-haiku", providerId: "google-vertex", externalId: "claude-3-haiku@20240307", like: "anthropic" },
  { model: "claude-3-opus", providerId: "google-vertex", externalId: "claude-3-opus@20240229", like: "anthropic" },
  { model: "claude-opus-4", providerId: "google-vertex", externalId: "claude-opus-4@20250514", like: "anthropic" },
  // Newer Claude models take their plain id on Vertex, as claude-opus-4-6 does.
  ...["claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5", "claude-fable-5", "claude-fable-5-1"].map((id) => ({
    model: id,
    providerId: "google-vertex" as const,
    externalId: id,
    like: "anthropic" as const,
  })),
];

/** Makers by id pattern (first match), for `maker`, `family` and `owned_by` of generated models. */
export const MAKERS: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/^(gpt|o\d|text-embedding|chatgpt)/i, "openai", "gpt"],
  [/claude/i, "anthropic", "claude"],
  [/gemini|gemma/i, "google", "gemini"],
  [/llama|meta/i, "meta", "llama"],
  [/mistral|mixtral|codestral|devstral|magistral|ministral|pixtral|voxtral|saba/i, "mistral", "mistral"],
  [/deepseek/i, "deepseek", "deepseek"],
  [/qwen|qwq/i, "alibaba", "qwen"],
  [/grok/i, "xai", "grok"],
  [/kimi|moonshot/i, "moonshot", "kimi"],
  [/glm/i, "zai", "glm"],
  [/nova|titan/i, "amazon", "nova"],
  [/phi-|wizardlm|mai-ds/i, "microsoft", "phi"],
  [/nemotron/i, "nvidia", "nemotron"],
  [/minimax/i, "minimax", "minimax"],
  [/sonar|r1-1776/i, "perplexity", "sonar"],
];

/**
 * Max output when neither models.dev nor the curated file knows it: the smaller of the context
 * and this. Admission reserves for it when a request sets no `max_tokens`. Checked 2026-11-27.
 */
export const DEFAULT_MAX_OUTPUT = 16_384;
