import type { ModelDefinition } from "../types";
import { JSON_ALL, mapping, priced, released, TOOLS } from "./helpers";

const base = { family: "grok", maker: "xai", kind: "chat", outputModalities: ["text"], tokenizer: "grok" } as const;
const CHAT = { ...TOOLS, ...JSON_ALL } as const;

export const XAI_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "grok-4",
    name: "Grok 4",
    description: "xAI's flagship reasoning model.",
    aliases: ["grok-4-0709", "grok-4-latest"],
    created: released("2025-07-09"),
    inputModalities: ["text", "image"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-4-0709", pricing: priced("3", "15", { cacheRead: "0.75" }), contextLength: 256_000, maxOutput: 256_000, vision: true, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "grok-4-fast",
    name: "Grok 4 Fast",
    description: "Cost-efficient Grok 4 with a 2M-token context (reasoning variant).",
    aliases: ["grok-4-fast-reasoning"],
    created: released("2025-09-19"),
    inputModalities: ["text", "image"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-4-fast-reasoning", pricing: priced("0.20", "0.50", { cacheRead: "0.05" }), contextLength: 2_000_000, maxOutput: 30_000, vision: true, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "grok-4.1-fast",
    name: "Grok 4.1 Fast",
    description: "xAI's tool-calling agent model with a 2M-token context (reasoning variant).",
    aliases: ["grok-4-1-fast-reasoning", "grok-4-1-fast"],
    created: released("2025-11-19"),
    inputModalities: ["text", "image"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-4-1-fast-reasoning", pricing: priced("0.20", "0.50", { cacheRead: "0.05" }), contextLength: 2_000_000, maxOutput: 30_000, vision: true, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "grok-code-fast-1",
    name: "Grok Code Fast 1",
    description: "Speedy, economical reasoning model for agentic coding.",
    created: released("2025-08-28"),
    inputModalities: ["text"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-code-fast-1", pricing: priced("0.20", "1.50", { cacheRead: "0.02" }), contextLength: 256_000, maxOutput: 10_000, ...CHAT, reasoning: true })],
  },
  {
    ...base,
    id: "grok-3-mini",
    name: "Grok 3 Mini",
    description: "Lightweight Grok 3 that thinks before responding.",
    aliases: ["grok-3-mini-latest"],
    created: released("2025-02-17"),
    inputModalities: ["text"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-3-mini", pricing: priced("0.30", "0.50", { cacheRead: "0.075" }), contextLength: 131_072, maxOutput: 131_072, ...CHAT, reasoning: true, reasoningEfforts: ["low", "high"] })],
  },
  {
    ...base,
    id: "grok-3",
    name: "Grok 3",
    description: "xAI's Grok 3 for enterprise tasks such as extraction and summarization.",
    aliases: ["grok-3-latest"],
    created: released("2025-02-17"),
    inputModalities: ["text"],
    stability: "stable",
    mappings: [mapping({ providerId: "xai", externalId: "grok-3", pricing: priced("3", "15", { cacheRead: "0.75" }), contextLength: 131_072, maxOutput: 131_072, ...CHAT })],
  },
];
