import type { ModelDefinition } from "../types";
import { JSON_ALL, mapping, perM, released, TOOLS } from "./helpers";

export const GOOGLE_MODELS: readonly ModelDefinition[] = [
  {
    id: "gemini-2.5-flash",
    name: "Gemini 2.5 Flash",
    description: "Google's hybrid-reasoning workhorse model with a 1M-token context window.",
    family: "gemini",
    maker: "google",
    kind: "chat",
    created: released("2025-06-17"),
    inputModalities: ["text", "image", "audio", "video", "file"],
    outputModalities: ["text"],
    tokenizer: "gemini",
    stability: "stable",
    mappings: [
      mapping({
        providerId: "google-ai-studio",
        externalId: "gemini-2.5-flash",
        pricing: { prompt: perM("0.30"), completion: perM("2.50"), input_audio: perM("1"), input_cache_read: perM("0.03") },
        contextLength: 1_048_576,
        maxOutput: 65_536,
        vision: true,
        ...TOOLS,
        ...JSON_ALL,
        reasoning: true,
        reasoningEfforts: ["none", "low", "medium", "high"],
        minCacheableTokens: 1024,
      }),
      mapping({
        providerId: "google-vertex",
        externalId: "gemini-2.5-flash",
        pricing: { prompt: perM("0.30"), completion: perM("2.50"), input_audio: perM("1"), input_cache_read: perM("0.03") },
        contextLength: 1_048_576,
        maxOutput: 65_536,
        vision: true,
        ...TOOLS,
        ...JSON_ALL,
        reasoning: true,
        reasoningEfforts: ["none", "low", "medium", "high"],
        minCacheableTokens: 1024,
      }),
    ],
  },
];
