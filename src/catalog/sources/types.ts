/** Shapes of the generated catalogue data (src/catalog/generated/catalog-data.ts). */
import type { ModelDefinition, Pricing, ProviderMapping } from "../types";

/** What the pinned sources say about a curated mapping. */
export interface SourceFacts {
  /** `genai-prices <provider>/<model>` when a price source covers it, else `models.dev`. */
  source: string;
  /** The source's prices (base, tiers, schedule); absent when only models.dev knows the mapping. */
  pricing?: Pricing;
  contextLength?: number;
  /** models.dev's max output. */
  maxOutput?: number;
}

export type GeneratedMapping = ProviderMapping & { priceSource: string };
export type GeneratedModel = Omit<ModelDefinition, "mappings"> & { mappings: readonly GeneratedMapping[] };
