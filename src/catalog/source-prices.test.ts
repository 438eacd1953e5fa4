/**
 * Every price of a mapping the pinned price source covers is the source's. The source is read
 * here from the package itself (not from the generated file), so a hand edit of the generated
 * data, or a bumped @pydantic/genai-prices without `npm run catalog:update`, fails this test.
 */
import { describe, expect, it } from "vitest";
import { listModels } from "./index";
import { priceSourceOf } from "./models";
import { PRICE_OVERRIDES, SOURCE_PROVIDERS } from "./sources/curation";
import { lookupPrice, lookupPrimary, sourceProviderOf } from "./sources/genai-prices";
import { TOKEN_PRICE_FIELDS } from "./types";

describe("catalogue prices equal the pinned source", () => {
  it("every covered mapping: base prices, prompt-size tiers and dated prices", () => {
    let covered = 0;
    const wrong: string[] = [];
    for (const model of listModels()) {
      for (const m of model.mappings) {
        const key = `${m.providerId}|${m.externalId}`;
        if (PRICE_OVERRIDES[key]) continue;
        // A curated price stands only where the provider's own source entry does not cover it.
        const gp = sourceProviderOf(priceSourceOf(m));
        const src = gp ? lookupPrice(gp, m.externalId) : lookupPrimary(SOURCE_PROVIDERS[m.providerId], m.externalId);
        if (!src) {
          if (gp) wrong.push(`${key}: its source ${priceSourceOf(m)} no longer prices it`);
          continue;
        }
        covered++;
        for (const f of TOKEN_PRICE_FIELDS) {
          const want = src.pricing[f];
          if (want !== undefined && m.pricing[f] !== want) wrong.push(`${key} ${f}: ${m.pricing[f]} != ${want} (${src.source})`);
        }
        if (JSON.stringify(m.pricing.tiers ?? []) !== JSON.stringify(src.pricing.tiers ?? [])) wrong.push(`${key} tiers differ (${src.source})`);
        if (JSON.stringify(m.pricing.schedule ?? []) !== JSON.stringify(src.pricing.schedule ?? [])) wrong.push(`${key} schedule differs (${src.source})`);
      }
    }
    expect(wrong).toEqual([]);
    expect(covered).toBeGreaterThan(400);
  });

  it("hand-kept overrides of a source price say why and when they were checked", () => {
    for (const [key, o] of Object.entries(PRICE_OVERRIDES)) {
      expect(o.reason.length, key).toBeGreaterThan(20);
      expect(o.checkedAt, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
});
