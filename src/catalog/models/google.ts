import type { ModelDefinition, ProviderMapping } from "../types";
import { embeddingModel, JSON_ALL, mapping, perM, priced, released, TOOLS } from "./helpers";

/** The same Gemini model on AI Studio and Vertex (same list price). */
function gemini(
  externalId: string,
  pricing: ProviderMapping["pricing"],
  contextLength: number,
  maxOutput: number,
  caps: Partial<ProviderMapping> = {},
  providers: ReadonlyArray<"google-ai-studio" | "google-vertex"> = ["google-ai-studio", "google-vertex"],
): ProviderMapping[] {
  return providers.map((providerId) =>
    mapping({
      providerId,
      externalId,
      pricing,
      contextLength,
      maxOutput,
      vision: true,
      ...TOOLS,
      ...JSON_ALL,
      minCacheableTokens: 1024,
      ...caps,
    }),
  );
}

const THINKING = { reasoning: true, reasoningEfforts: ["none", "low", "medium", "high"] } as const;
const THINKING_ALWAYS = { reasoning: true, reasoningEfforts: ["low", "high"] } as const;

const base = {
  family: "gemini",
  maker: "google",
  kind: "chat",
  inputModalities: ["text", "image", "audio", "video", "file"],
  outputModalities: ["text"],
  tokenizer: "gemini",
} as const;

export const GOOGLE_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "gemini-2.5-flash",
    name: "Gemini 2.5 Flash",
    description: "Google's hybrid-reasoning workhorse model with a 1M-token context window.",
    created: released("2025-06-17"),
    stability: "stable",
    mappings: gemini("gemini-2.5-flash", priced("0.30", "2.50", { audio: "1", cacheRead: "0.03" }), 1_048_576, 65_536, THINKING),
  },
  {
    ...base,
    id: "gemini-2.5-pro",
    name: "Gemini 2.5 Pro",
    description: "Google's thinking model for complex coding and reasoning (prices for prompts up to 200K tokens).",
    created: released("2025-06-17"),
    stability: "stable",
    // Superseded by Gemini 3.1 Pro; Google lists only an "earliest" shutdown date.
    deprecatedAt: "2026-02-19T00:00:00Z",
    mappings: gemini("gemini-2.5-pro", priced("1.25", "10", { cacheRead: "0.125" }), 1_048_576, 65_536, THINKING_ALWAYS),
  },
  {
    ...base,
    id: "gemini-2.5-flash-lite",
    name: "Gemini 2.5 Flash-Lite",
    description: "Google's fastest, most cost-efficient Gemini 2.5 model.",
    created: released("2025-07-22"),
    stability: "stable",
    mappings: gemini("gemini-2.5-flash-lite", priced("0.10", "0.40", { audio: "0.30", cacheRead: "0.01" }), 1_048_576, 65_536, THINKING),
  },
  {
    ...base,
    id: "gemini-2.0-flash",
    name: "Gemini 2.0 Flash",
    description: "Second-generation Gemini Flash with native tool use.",
    aliases: ["gemini-2.0-flash-001"],
    created: released("2025-02-05"),
    stability: "stable",
    deprecatedAt: "2025-12-12T00:00:00Z",
    deactivatedAt: "2026-06-01T00:00:00Z",
    mappings: gemini("gemini-2.0-flash", priced("0.10", "0.40", { audio: "0.70", cacheRead: "0.025" }), 1_048_576, 8_192, {
      deprecatedAt: "2025-12-12T00:00:00Z",
      deactivatedAt: "2026-06-01T00:00:00Z",
    }),
  },
  {
    ...base,
    id: "gemini-3-pro-preview",
    name: "Gemini 3 Pro Preview",
    description: "Google's most capable reasoning and multimodal model, in preview (prices up to 200K tokens).",
    created: released("2025-11-18"),
    stability: "beta",
    deprecatedAt: "2026-02-19T00:00:00Z",
    deactivatedAt: "2026-03-09T00:00:00Z",
    mappings: gemini("gemini-3-pro-preview", priced("2", "12", { cacheRead: "0.20" }), 1_048_576, 65_536, {
      ...THINKING_ALWAYS,
      stability: "beta",
      deprecatedAt: "2026-02-19T00:00:00Z",
      deactivatedAt: "2026-03-09T00:00:00Z",
    }),
  },
  {
    ...base,
    id: "gemini-3.1-pro-preview",
    name: "Gemini 3.1 Pro Preview",
    description: "Google's most capable reasoning and multimodal model, in preview (prices for prompts up to 200K tokens).",
    created: released("2026-02-19"),
    stability: "beta",
    mappings: gemini("gemini-3.1-pro-preview", priced("2", "12", { cacheRead: "0.20" }), 1_048_576, 65_536, {
      ...THINKING_ALWAYS,
      stability: "beta",
    }),
  },
  {
    ...base,
    id: "gemini-3-flash-preview",
    name: "Gemini 3 Flash Preview",
    description: "Frontier-class Gemini 3 reasoning at Flash speed and price, in preview.",
    created: released("2025-12-17"),
    stability: "beta",
    mappings: gemini("gemini-3-flash-preview", priced("0.50", "3", { audio: "1", cacheRead: "0.05" }), 1_048_576, 65_536, {
      reasoning: true,
      reasoningEfforts: ["minimal", "low", "medium", "high"],
      stability: "beta",
    }),
  },
  {
    ...base,
    id: "gemini-1.5-pro",
    name: "Gemini 1.5 Pro",
    description: "First-generation long-context Gemini Pro; discontinued.",
    aliases: ["gemini-1.5-pro-002"],
    created: released("2024-05-14"),
    stability: "stable",
    deprecatedAt: "2025-04-29T00:00:00Z",
    deactivatedAt: "2025-09-24T00:00:00Z",
    mappings: gemini("gemini-1.5-pro-002", priced("1.25", "5", { cacheRead: "0.3125" }), 2_097_152, 8_192, {
      deprecatedAt: "2025-04-29T00:00:00Z",
      deactivatedAt: "2025-09-24T00:00:00Z",
    }),
  },
  {
    ...base,
    id: "gemma-3-27b-it",
    name: "Gemma 3 27B",
    description: "Google's open Gemma 3 model; free of charge on the Gemini API.",
    family: "gemma",
    aliases: ["gemma-3-27b"],
    inputModalities: ["text", "image"],
    created: released("2025-03-12"),
    free: true,
    stability: "stable",
    mappings: [
      mapping({
        providerId: "google-ai-studio",
        externalId: "gemma-3-27b-it",
        pricing: { prompt: "0", completion: "0" },
        contextLength: 131_072,
        maxOutput: 8_192,
        vision: true,
      }),
    ],
  },
  {
    id: "gemini-2.5-flash-image",
    name: "Gemini 2.5 Flash Image (Nano Banana)",
    description: "Google's image generation and editing model; ~1290 output tokens per 1024x1024 image.",
    family: "gemini",
    maker: "google",
    aliases: ["nano-banana", "gemini-2.5-flash-image-preview"],
    kind: "image",
    created: released("2025-08-26"),
    inputModalities: ["text", "image"],
    outputModalities: ["image", "text"],
    tokenizer: "gemini",
    stability: "stable",
    supportedParameters: ["prompt", "modalities", "aspect_ratio", "temperature", "max_tokens"],
    mappings: [
      mapping({
        providerId: "google-ai-studio",
        externalId: "gemini-2.5-flash-image",
        pricing: { prompt: perM("0.30"), completion: perM("2.50"), image_output: perM("30"), per_image: { "1024x1024": "0.039" } },
        contextLength: 32_768,
        maxOutput: 32_768,
        vision: true,
      }),
      mapping({
        providerId: "google-vertex",
        externalId: "gemini-2.5-flash-image",
        pricing: { prompt: perM("0.30"), completion: perM("2.50"), image_output: perM("30"), per_image: { "1024x1024": "0.039" } },
        contextLength: 32_768,
        maxOutput: 32_768,
        vision: true,
      }),
    ],
  },
  // Veo 3 on Vertex is not listed: the gateway has no Vertex video adapter yet (predictLongRunning /
  // fetchPredictOperation), and a listed model must be one POST /v1/videos serves (
  // test/catalog-served.test.ts). Add it back with that adapter.
  embeddingModel({
    id: "gemini-embedding-001",
    name: "Gemini Embedding",
    description: "Google's Gemini text embedding model (3072 dimensions, shortenable with dimensions).",
    family: "gemini-embedding",
    maker: "google",
    released: "2025-07-14",
    tokenizer: "gemini",
    providerId: "google-ai-studio",
    inputPerM: "0.15",
    contextLength: 2_048,
  }),
];
