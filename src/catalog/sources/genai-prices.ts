/**
 * Reading @pydantic/genai-prices (a pinned devDependency; its data ships inside the package): a
 * source model's prices in our fields. Used by `npm run catalog:update` and by the test that holds
 * every covered mapping to the source (source-prices.test.ts). Never imported by the Worker.
 */
import { calcPrice, type ModelInfo, type ModelPrice } from "@pydantic/genai-prices";
import { perK, perM } from "../models/helpers";
import type { PriceTier, Pricing, ScheduledPrices, TokenPriceField, TokenPrices } from "../types";


const FIELD: Record<string, [TokenPriceField, "M" | "K"]> = {
  input_mtok: ["prompt", "M"],
  output_mtok: ["completion", "M"],
  cache_read_mtok: ["input_cache_read", "M"],
  cache_write_mtok: ["input_cache_write", "M"],
  cache_write_1h_mtok: ["input_cache_write_1h", "M"],
  input_audio_mtok: ["input_audio", "M"],
  cache_audio_read_mtok: ["input_audio_cache_read", "M"],
  output_audio_mtok: ["output_audio", "M"],
  input_image_mtok: ["image", "M"],
  output_image_mtok: ["image_output", "M"],
  output_reasoning_mtok: ["internal_reasoning", "M"],
  output_citation_mtok: ["citation", "M"],
  requests_kcount: ["request", "K"],
  web_searches_kcount: ["web_search", "K"],
};
/** Source price keys the gateway bills nothing for (reported by the update script). */
export const ignoredSourceKeys = new Set<string>();

/** A JS number as a plain decimal string (no exponent). */
function decimal(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/0+$/, "").replace(/\.$/, "");
}

interface Tiered { base: number; tiers: Array<{ start: number; price: number }> }
const isTiered = (v: unknown): v is Tiered => typeof v === "object" && v !== null && "base" in v && "tiers" in v;

export function convert(mp: ModelPrice): { prices: TokenPrices; tiers: PriceTier[] } {
  const prices: TokenPrices = {};
  const byStart = new Map<number, TokenPrices>();
  for (const [key, raw] of Object.entries(mp)) {
    const f = FIELD[key];
    if (!f || raw === undefined) {
      if (raw !== undefined) ignoredSourceKeys.add(key);
      continue;
    }
    const [field, unit] = f;
    const conv = (n: number): string => (unit === "M" ? perM(decimal(n)) : perK(decimal(n)));
    if (typeof raw === "number") prices[field] = conv(raw);
    else if (isTiered(raw)) {
      prices[field] = conv(raw.base);
      for (const t of raw.tiers) {
        const tier = byStart.get(t.start) ?? {};
        tier[field] = conv(t.price);
        byStart.set(t.start, tier);
      }
    }
  }
  const tiers = [...byStart.entries()].sort((a, b) => a[0] - b[0]).map(([above, p]) => ({ above, prices: p }));
  return { prices, tiers };
}

export interface SourcePricing { pricing: Pricing; source: string; contextLength?: number }

export function sourcePricing(model: ModelInfo, providerId: string): SourcePricing | undefined {
  const list = Array.isArray(model.prices) ? model.prices : [{ prices: model.prices }];
  // The source's rule: the last unconstrained entry is the fallback; constrained ones after it win when they match.
  let baseIdx = 0;
  list.forEach((e, i) => { if (!("constraint" in e) || e.constraint === undefined) baseIdx = i; });
  const baseEntry = list[baseIdx];
  if (!baseEntry) return undefined;
  const base = convert(baseEntry.prices);
  if (base.prices.prompt === undefined && base.prices.completion === undefined) return undefined;
  const pricing: Pricing = { prompt: "0", completion: "0", ...base.prices };
  if (base.tiers.length) pricing.tiers = base.tiers;
  const schedule: ScheduledPrices[] = [];
  for (const e of list.slice(baseIdx + 1)) {
    const c = e.constraint;
    if (!c) continue;
    const conv = convert(e.prices);
    const entry: ScheduledPrices =
      c.type === "start_date" ? { from: c.start_date, prices: conv.prices } : { utcStart: c.start_time, utcEnd: c.end_time, prices: conv.prices };
    if (conv.tiers.length) entry.tiers = conv.tiers;
    schedule.push(entry);
  }
  if (schedule.length) pricing.schedule = schedule;
  return { pricing, source: `genai-prices ${providerId}/${model.id}`, ...(model.context_window ? { contextLength: model.context_window } : {}) };
}

/** The source's model for one of our mappings (its own matching rules, fallbacks included). */
export function lookupPrice(gpProvider: string, externalId: string): SourcePricing | undefined {
  const r = calcPrice({ input_tokens: 1, output_tokens: 1 }, externalId, { providerId: gpProvider });
  if (!r) return undefined;
  return sourcePricing(r.model, r.provider.id);
}

export const priceSourcesOf = (sp: { genaiPrices?: string; alsoPricedBy?: readonly string[] } | undefined): string[] =>
  sp ? [...(sp.genaiPrices ? [sp.genaiPrices] : []), ...(sp.alsoPricedBy ?? [])] : [];

export function lookupAny(sources: readonly string[], externalId: string): SourcePricing | undefined {
  for (const s of sources) {
    const hit = lookupPrice(s, externalId);
    if (hit) return hit;
  }
  return undefined;
}


/**
 * The provider's own price source only: what a curated mapping is held to. Hugging Face router
 * entries (`alsoPricedBy`) may price another flavour of the host's model (Nebius' `-fast`), so they
 * price only models the curated files do not have.
 */
export function lookupPrimary(sp: { genaiPrices?: string } | undefined, externalId: string): SourcePricing | undefined {
  return sp?.genaiPrices ? lookupPrice(sp.genaiPrices, externalId) : undefined;
}

/** The genai-prices provider id a `genai-prices <provider>/<model>` source string names. */
export const sourceProviderOf = (source: string): string | undefined =>
  /^genai-prices ([^/]+)\//.exec(source)?.[1];
