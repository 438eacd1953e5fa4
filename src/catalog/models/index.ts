/**
 * The catalogue: the curated models (./curated.ts) with the pinned sources' facts applied, plus the
 * mappings and models only the sources list (../generated/catalog-data.ts, written by
 * `npm run catalog:update`). Built once per isolate at module load; nothing is fetched.
 *
 * A curated mapping a price source covers takes the source's prices (base, prompt-size tiers,
 * dated and time-of-day prices) unless `PRICE_OVERRIDES` keeps the curated ones, and models.dev's
 * max output. Curated context lengths stay: the source's windows include retired betas.
 */
import { EXTRA_MAPPINGS, GENERATED_MODELS, SOURCE_FACTS, SOURCE_VERSIONS } from "../generated/catalog-data";
import { PRICE_OVERRIDES } from "../sources/curation";
import type { GeneratedMapping } from "../sources/types";
import type { ModelDefinition, ProviderMapping } from "../types";
import { CURATED_MODELS, PRICES_READ_AT } from "./curated";

export { PRICES_READ_AT, SOURCE_VERSIONS };

/** Where a mapping's prices come from: `genai-prices <provider>/<model>` or `curated <date>`. */
const priceSources = new WeakMap<ProviderMapping, string>();
export const priceSourceOf = (m: ProviderMapping): string => priceSources.get(m) ?? `curated ${PRICES_READ_AT}`;

function withSourceFacts(m: ProviderMapping): ProviderMapping {
  const key = `${m.providerId}|${m.externalId}`;
  const facts = SOURCE_FACTS[key];
  if (!facts) return m;
  const out: ProviderMapping = { ...m };
  if (facts.pricing && !PRICE_OVERRIDES[key]) {
    out.pricing = { ...m.pricing, ...facts.pricing };
    priceSources.set(out, facts.source);
  }
  if (facts.maxOutput) out.maxOutput = Math.min(facts.maxOutput, m.contextLength);
  return out;
}

function fromGenerated(g: GeneratedMapping): ProviderMapping {
  const { priceSource, ...m } = g;
  priceSources.set(m, priceSource);
  return m;
}

export const MODELS: readonly ModelDefinition[] = [
  ...CURATED_MODELS.map((model) => ({
    ...model,
    mappings: [...model.mappings.map(withSourceFacts), ...(EXTRA_MAPPINGS[model.id] ?? []).map(fromGenerated)],
  })),
  ...GENERATED_MODELS.map((model) => ({ ...model, mappings: model.mappings.map(fromGenerated) })),
];
