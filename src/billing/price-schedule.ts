/**
 * Prices as providers charge them: the flat price table one request is billed at, resolved from a
 * mapping's base prices, its dated and time-of-day prices (`schedule`), its prompt-size tiers and
 * the per-request fee of its search context size. Pure; `computeCost` resolves before pricing, the
 * listing resolves at the time of listing, admission takes the dearest table a request can reach.
 *
 * The rules are the pinned price source's (@pydantic/genai-prices, docs/catalogue.md): the last
 * schedule entry that matches the time wins, else the base; a tier applies to the whole request
 * once its input tokens exceed the tier's threshold.
 */
import type { PriceTier, Pricing, ScheduledPrices, SearchContextSize, TokenPrices } from "../catalog/types";
import { TOKEN_PRICE_FIELDS } from "../catalog/types";
import { parseUsd } from "./money";

export interface PriceContext {
  /** Epoch ms of the request (the price in force then). */
  at: number;
  /** Input tokens of the request, cached and uncached together (selects the tier). */
  promptTokens: number;
  searchContextSize?: SearchContextSize | null;
}

const secondsOfDay = (hms: string): number => {
  const [h = "0", m = "0", s = "0"] = hms.replace(/Z$/i, "").split(":");
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
};

function matches(entry: ScheduledPrices, at: number): boolean {
  if (entry.from !== undefined) return at >= Date.parse(entry.from.length === 10 ? `${entry.from}T00:00:00Z` : entry.from);
  if (entry.utcStart !== undefined && entry.utcEnd !== undefined) {
    const d = new Date(at);
    const now = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
    const start = secondsOfDay(entry.utcStart);
    const end = secondsOfDay(entry.utcEnd);
    return end < start ? now >= start || now < end : now >= start && now < end;
  }
  return true;
}

/** The schedule entry in force at `at`, or undefined when the base prices apply. */
export function scheduledAt(p: Pricing, at: number): ScheduledPrices | undefined {
  const schedule = p.schedule ?? [];
  for (let i = schedule.length - 1; i >= 0; i--) {
    const entry = schedule[i];
    if (entry && matches(entry, at)) return entry;
  }
  return undefined;
}

function applyTiers(base: TokenPrices, tiers: readonly PriceTier[] | undefined, promptTokens: number): TokenPrices {
  let out = base;
  for (const t of tiers ?? []) if (promptTokens > t.above) out = { ...out, ...t.prices };
  return out;
}

/** Strips the schedule, tiers and search-context table: what `billedPrices` and callers read. */
function flat(p: Pricing, prices: TokenPrices): Pricing {
  const { tiers: _t, schedule: _s, request_by_search_context: _r, ...rest } = p;
  return { ...rest, ...prices } as Pricing;
}

/** The flat price table a request is billed at. */
export function pricingInForce(p: Pricing, ctx: PriceContext): Pricing {
  if (!p.tiers && !p.schedule && !p.request_by_search_context) return p;
  const entry = scheduledAt(p, ctx.at);
  const base: TokenPrices = entry ? { ...pickTokenPrices(p), ...entry.prices } : pickTokenPrices(p);
  let prices = applyTiers(base, entry ? entry.tiers ?? p.tiers : p.tiers, ctx.promptTokens);
  const bySize = p.request_by_search_context;
  if (bySize) {
    // Perplexity's default search context is `low`; the dearest (`request`) only when asked for high.
    const fee = bySize[ctx.searchContextSize ?? "low"];
    if (fee !== undefined) prices = { ...prices, request: fee };
  }
  return flat(p, prices);
}

/** The threshold of the prompt-size tier a request is billed at, or undefined below every tier. */
export function tierReached(p: Pricing, ctx: PriceContext): number | undefined {
  if (!p.tiers && !p.schedule) return undefined;
  const entry = scheduledAt(p, ctx.at);
  let reached: number | undefined;
  for (const t of (entry ? entry.tiers ?? p.tiers : p.tiers) ?? []) if (ctx.promptTokens > t.above) reached = t.above;
  return reached;
}

function pickTokenPrices(p: Pricing): TokenPrices {
  const out: TokenPrices = {};
  for (const f of TOKEN_PRICE_FIELDS) if (p[f] !== undefined) out[f] = p[f];
  return out;
}

const dearer = (a: string | undefined, b: string | undefined): string | undefined => {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return parseUsd(b) > parseUsd(a) ? b : a;
};

/**
 * The dearest price of every field a request of at most `promptTokens` input tokens can be billed
 * at, whatever the time: admission reserves against it so a long prompt past a tier threshold, or
 * a request that lands in a peak window, never costs more than was reserved.
 */
export function dearestPricing(p: Pricing, promptTokens: number): Pricing {
  if (!p.tiers && !p.schedule && !p.request_by_search_context) return p;
  const tables: TokenPrices[] = [];
  const withTiers = (base: TokenPrices, tiers: readonly PriceTier[] | undefined): void => {
    tables.push(base);
    for (const t of tiers ?? []) if (promptTokens > t.above) tables.push({ ...base, ...t.prices });
  };
  const base = pickTokenPrices(p);
  withTiers(base, p.tiers);
  for (const e of p.schedule ?? []) withTiers({ ...base, ...e.prices }, e.tiers ?? p.tiers);
  const out: TokenPrices = {};
  for (const f of TOKEN_PRICE_FIELDS) {
    let v: string | undefined;
    for (const t of tables) v = dearer(v, t[f]);
    for (const fee of f === "request" ? Object.values(p.request_by_search_context ?? {}) : []) v = dearer(v, fee);
    if (v !== undefined) out[f] = v;
  }
  return flat(p, out);
}
