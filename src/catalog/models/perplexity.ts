import type { ModelDefinition } from "../types";
import { JSON_ALL, mapping, priced, released } from "./helpers";

const base = { family: "sonar", maker: "perplexity", kind: "chat", inputModalities: ["text", "image"], outputModalities: ["text"], tokenizer: "llama3" } as const;

/**
 * Request fees by `web_search_options.search_context_size`, USD per request (Perplexity's price
 * page, read 2026-11-27); `request` is the dearest (high), as the price source lists it.
 */
const SONAR_FEES = { low: "0.005", medium: "0.008", high: "0.012" } as const;
const SONAR_PRO_FEES = { low: "0.006", medium: "0.01", high: "0.014" } as const;

export const PERPLEXITY_MODELS: readonly ModelDefinition[] = [
  {
    ...base,
    id: "sonar",
    name: "Sonar",
    description: "Perplexity's lightweight search-grounded answer model.",
    created: released("2025-01-21"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar", pricing: { ...priced("1", "1", { request: SONAR_FEES.high }), request_by_search_context: SONAR_FEES }, contextLength: 127_072, maxOutput: 8_000, vision: true, ...JSON_ALL, moderated: false })],
  },
  {
    ...base,
    id: "sonar-pro",
    name: "Sonar Pro",
    description: "Perplexity's advanced search model for complex queries.",
    created: released("2025-01-21"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-pro", pricing: { ...priced("3", "15", { request: SONAR_PRO_FEES.high }), request_by_search_context: SONAR_PRO_FEES }, contextLength: 200_000, maxOutput: 8_000, vision: true, ...JSON_ALL })],
  },
  {
    ...base,
    id: "sonar-reasoning-pro",
    name: "Sonar Reasoning Pro",
    description: "Perplexity's search-grounded reasoning model.",
    created: released("2025-03-07"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-reasoning-pro", pricing: { ...priced("2", "8", { request: SONAR_PRO_FEES.high }), request_by_search_context: SONAR_PRO_FEES }, contextLength: 127_072, maxOutput: 8_000, vision: true, ...JSON_ALL, reasoning: true })],
  },
  {
    ...base,
    id: "sonar-deep-research",
    name: "Sonar Deep Research",
    description: "Perplexity's exhaustive multi-step research model.",
    inputModalities: ["text"],
    created: released("2025-03-07"),
    stability: "stable",
    mappings: [mapping({ providerId: "perplexity", externalId: "sonar-deep-research", pricing: { ...priced("2", "8"), web_search: "0.005", internal_reasoning: "0.000003", citation: "0.000002" }, contextLength: 127_072, maxOutput: 32_768, ...JSON_ALL, reasoning: true, reasoningEfforts: ["low", "medium", "high"] })],
  },
];
