/**
 * Every provider the gateway knows (contract section 1), as data. Base URLs are the providers'
 * public defaults; `<ID>_BASE_URL` replaces them verbatim. For OpenAI-compatible providers the
 * base includes the version path and the adapter appends `quirks.chatPath` (default
 * `/chat/completions`). Anthropic's adapter appends `/v1/messages`, Google's `/v1beta/models/...`
 * (AI Studio) or the Vertex publisher path, Bedrock's `/model/{id}/converse`.
 *
 * Quirks describe where a real provider departs from OpenAI (fields it rejects with a 400/422,
 * where it puts reasoning text, which field carries the output cap).
 */
import type { ProviderId, ProviderInfo } from "./types";

/**
 * OpenAI-platform extras (stored completions and their metadata, prompt-cache routing keys,
 * safety identifiers, service tiers, verbosity, predicted outputs) that no other host implements
 * as OpenAI does: dropped for every provider but OpenAI, since several hosts reject unknown fields
 * (Mistral answers 422). All are hints or bookkeeping; `service_tier` only ever carries `auto` or
 * `default` (src/routes/chat/schema.ts), which is what a host without tiers does anyway.
 */
export const OPENAI_PLATFORM_EXTRAS = ["store", "metadata", "prompt_cache_key", "safety_identifier", "service_tier", "verbosity", "prediction"] as const;

/** `logit_bias` (most OpenAI-compatible open-model hosts reject or ignore it badly) and the platform extras. */
const NO_LOGIT_BIAS_OR_EXTRAS = ["logit_bias", ...OPENAI_PLATFORM_EXTRAS] as const;

export const PROVIDERS: Readonly<Record<ProviderId, ProviderInfo>> = {
  openai: {
    id: "openai",
    name: "OpenAI",
    wireFormat: "openai",
    baseUrl: "https://api.openai.com/v1",
    trainsOnApiData: false,
    region: "us",
    moderation: true,
    quirks: { maxTokensField: "max_completion_tokens", customTools: true },
  },
  anthropic: {
    id: "anthropic",
    name: "Anthropic",
    wireFormat: "anthropic",
    baseUrl: "https://api.anthropic.com",
    trainsOnApiData: false,
    region: "us",
  },
  "google-ai-studio": {
    id: "google-ai-studio",
    name: "Google AI Studio",
    wireFormat: "google",
    baseUrl: "https://generativelanguage.googleapis.com",
    // Paid-tier Gemini API traffic is not used to improve Google's products.
    trainsOnApiData: false,
  },
  "google-vertex": {
    id: "google-vertex",
    name: "Google Vertex AI",
    wireFormat: "google",
    baseUrl: "https://aiplatform.googleapis.com",
    trainsOnApiData: false,
    region: "global",
    regionSetting: "GOOGLE_VERTEX_LOCATION",
  },
  "aws-bedrock": {
    id: "aws-bedrock",
    name: "Amazon Bedrock",
    wireFormat: "bedrock",
    baseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com",
    trainsOnApiData: false,
    region: "us-east-1",
    regionSetting: "AWS_BEDROCK_REGION",
  },
  azure: {
    id: "azure",
    name: "Azure OpenAI",
    wireFormat: "azure",
    // Per-resource host; in practice AZURE_BASE_URL supplies it.
    baseUrl: "https://{resource}.openai.azure.com",
    trainsOnApiData: false,
    // The default api-version (2024-10-21, src/providers/azure) has none of the platform extras in
    // its request schema, and Azure answers unrecognized arguments with a 400.
    quirks: { maxTokensField: "max_completion_tokens", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  mistral: {
    id: "mistral",
    name: "Mistral AI",
    wireFormat: "openai",
    baseUrl: "https://api.mistral.ai/v1",
    trainsOnApiData: false,
    region: "eu",
    moderation: true,
    // Mistral answers 422 on unknown fields; it has `random_seed` instead of `seed`.
    quirks: {
      unsupportedParams: ["logit_bias", "logprobs", "top_logprobs", "user", "seed", "stream_options", "reasoning_effort", ...OPENAI_PLATFORM_EXTRAS],
      streamUsageOption: false,
    },
  },
  groq: {
    id: "groq",
    name: "Groq",
    wireFormat: "openai",
    baseUrl: "https://api.groq.com/openai/v1",
    trainsOnApiData: false,
    region: "us",
    // Documented as "not supported; a 400 if supplied".
    quirks: {
      unsupportedParams: ["logprobs", "logit_bias", "top_logprobs", ...OPENAI_PLATFORM_EXTRAS],
      reasoningField: "reasoning",
    },
  },
  deepseek: {
    id: "deepseek",
    name: "DeepSeek",
    wireFormat: "openai",
    baseUrl: "https://api.deepseek.com",
    // DeepSeek's privacy policy allows using inputs to improve its services.
    trainsOnApiData: true,
    region: "cn",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: ["reasoning_effort", ...OPENAI_PLATFORM_EXTRAS] },
  },
  xai: {
    id: "xai",
    name: "xAI",
    wireFormat: "openai",
    baseUrl: "https://api.x.ai/v1",
    trainsOnApiData: false,
    region: "us",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: NO_LOGIT_BIAS_OR_EXTRAS },
  },
  "together-ai": {
    id: "together-ai",
    name: "Together AI",
    wireFormat: "openai",
    baseUrl: "https://api.together.xyz/v1",
    trainsOnApiData: false,
    region: "us",
    quirks: { reasoningField: "reasoning", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  fireworks: {
    id: "fireworks",
    name: "Fireworks AI",
    wireFormat: "openai",
    baseUrl: "https://api.fireworks.ai/inference/v1",
    trainsOnApiData: false,
    region: "us",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  cerebras: {
    id: "cerebras",
    name: "Cerebras",
    wireFormat: "openai",
    baseUrl: "https://api.cerebras.ai/v1",
    trainsOnApiData: false,
    region: "us",
    // Cerebras' OpenAI-compatibility notes list these as unsupported (400).
    quirks: {
      maxTokensField: "max_completion_tokens",
      unsupportedParams: ["frequency_penalty", "presence_penalty", "logit_bias", ...OPENAI_PLATFORM_EXTRAS],
      reasoningField: "reasoning",
    },
  },
  deepinfra: {
    id: "deepinfra",
    name: "DeepInfra",
    wireFormat: "openai",
    baseUrl: "https://api.deepinfra.com/v1/openai",
    trainsOnApiData: false,
    region: "us",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  perplexity: {
    id: "perplexity",
    name: "Perplexity",
    wireFormat: "openai",
    baseUrl: "https://api.perplexity.ai",
    trainsOnApiData: false,
    region: "us",
    // Sonar models have no function calling, logprobs or logit bias.
    quirks: {
      unsupportedParams: ["tools", "tool_choice", "parallel_tool_calls", "logit_bias", "logprobs", "top_logprobs", "n", "seed", ...OPENAI_PLATFORM_EXTRAS],
    },
  },
  moonshot: {
    id: "moonshot",
    name: "Moonshot AI",
    wireFormat: "openai",
    baseUrl: "https://api.moonshot.ai/v1",
    trainsOnApiData: true,
    region: "cn",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: NO_LOGIT_BIAS_OR_EXTRAS },
  },
  alibaba: {
    id: "alibaba",
    name: "Alibaba Cloud Model Studio",
    wireFormat: "openai",
    baseUrl: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    trainsOnApiData: false,
    region: "ap-southeast-1",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: NO_LOGIT_BIAS_OR_EXTRAS },
  },
  zai: {
    id: "zai",
    name: "Z.ai",
    wireFormat: "openai",
    baseUrl: "https://api.z.ai/api/paas/v4",
    trainsOnApiData: false,
    region: "sg",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: ["logit_bias", "logprobs", "top_logprobs", "n", ...OPENAI_PLATFORM_EXTRAS] },
  },
  novita: {
    id: "novita",
    name: "Novita AI",
    wireFormat: "openai",
    baseUrl: "https://api.novita.ai/openai/v1",
    trainsOnApiData: false,
    region: "us",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  nebius: {
    id: "nebius",
    name: "Nebius Token Factory",
    wireFormat: "openai",
    baseUrl: "https://api.tokenfactory.nebius.com/v1",
    trainsOnApiData: false,
    region: "eu-north1",
    quirks: { reasoningField: "reasoning_content", unsupportedParams: OPENAI_PLATFORM_EXTRAS },
  },
  "inference.net": {
    id: "inference.net",
    name: "Inference.net",
    wireFormat: "openai",
    baseUrl: "https://api.inference.net/v1",
    trainsOnApiData: false,
    region: "us",
    quirks: { unsupportedParams: NO_LOGIT_BIAS_OR_EXTRAS },
  },
};
