import type { ModelDefinition } from "../types";
import { JSON_ALL, mapping, priced, released } from "./helpers";

const base = { family: "sonar", maker: "perplexity", kind: "chat", inputModalities: ["text", "image"], outputModalities: ["text"], tokenizer: "llama3" } as const;

/** Request fees are for "low" search context size, USD per request. */
export const PERPLEXITY_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "sonar",
    name: "Sonar",
    description: "Perplexity's lightweight search-grounded answer model.",
    created: released("2025-01-21"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar", pricing: priced("1", "1", { request: "0.005" }), contextLength: 127_072, maxOutput: 8_000, vision: true, ...JSON_ALL, moderated: false })],
  },
  {
    ...base,
    id: "sonar-pro",
    name: "Sonar Pro",
    description: "Perplexity's advanced search model for complex queries.",
    created: released("2025-01-21"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-pro", pricing: priced("3", "15", { request: "0.006" }), contextLength: 200_000, maxOutput: 8_000, vision: true, ...JSON_ALL })],
  },
  {
    ...base,
    id: "sonar-reasoning-pro",
    name: "Sonar Reasoning Pro",
    description: "Perplexity's search-grounded reasoning model.",
    created: released("2025-03-07"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-reasoning-pro", pricing: priced("2", "8", { request: "0.006" }), contextLength: 127_072, maxOutput: 8_000, vision: true, ...JSON_ALL, reasoning: true })],
  },
  {
    ...base,
    id: "sonar-deep-research",
    name: "Sonar Deep Research",
    description: "Perplexity's exhaustive multi-step research model.",
    inputModalities: ["text"],
    created: released("2025-03-07"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-deep-research", pricing: { ...priced("2", "8"), web_search: "0.005" }, contextLength: 127_072, maxOutput: 32_768, ...JSON_ALL, reasoning: true, reasoningEfforts: ["low", "medium", "high"] })],
  },
];
