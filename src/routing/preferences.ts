/**
 * Caller routing preferences, OpenRouter-compatible (contract section 8): the request's
 * `provider` object (or the project's default when the request sends none) and `models`.
 *
 * Preferences only narrow: they are applied to candidates that compliance, credentials and IAM
 * already allowed (src/routing/candidates.ts), so a preference can never reach a provider the
 * caller's rules deny. What each field does here:
 * - `only` / `ignore`: keep / drop provider ids;
 * - `order`: those providers are tried first, in that order (src/routing/order.ts);
 * - `allow_fallbacks: false`: only the providers of `order` (without `order`: only the first
 *   choice) are tried, and failover stops there;
 * - `sort`: ranking by price, throughput or latency instead of the weighted score;
 * - `max_price`: drops mappings dearer than the caps (USD per million prompt/completion tokens,
 *   per request, per input image);
 * - `data_collection: "deny"`: only providers that do not train on API data;
 * - `require_parameters: true`: only mappings whose adapter carries every parameter the request
 *   sent (instead of dropping the ones a provider does not take).
 * Unknown fields are a 400: a typo must not silently route differently.
 */
import * as z from "zod";
import { PROVIDER_IDS, type ProviderInfo, type ProviderMapping, type WireFormat } from "../catalog/types";
import { parseUsd } from "../billing/money";

const KNOWN_PROVIDERS = new Set<string>(PROVIDER_IDS);
const CUSTOM_RE = /^custom:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const providerList = z
  .array(z.string().trim().min(1).max(100))
  .max(50)
  .refine((list) => list.every((p) => KNOWN_PROVIDERS.has(p) || CUSTOM_RE.test(p)), {
    message: `unknown provider id (use one of ${PROVIDER_IDS.join(", ")}, or custom:<name>)`,
  });

const usdCap = z.number().nonnegative().finite();

export const providerPreferencesSchema = z.strictObject({
  order: providerList.optional(),
  only: providerList.optional(),
  ignore: providerList.optional(),
  allow_fallbacks: z.boolean().optional(),
  sort: z.enum(["price", "throughput", "latency"]).optional(),
  max_price: z.strictObject({ prompt: usdCap.optional(), completion: usdCap.optional(), request: usdCap.optional(), image: usdCap.optional() }).optional(),
  data_collection: z.enum(["allow", "deny"]).optional(),
  require_parameters: z.boolean().optional(),
});

export type ProviderPreferences = z.infer<typeof providerPreferencesSchema>;

/** Fallback models (`models`), tried in order after `model`. */
export const MAX_FALLBACK_MODELS = 8;
export const fallbackModelsSchema = z.array(z.string().trim().min(1).max(512)).max(MAX_FALLBACK_MODELS);

/**
 * Request fields an adapter may drop for a provider, and which wire formats carry them.
 * Capabilities the catalogue already gates (tools, response_format, n, modalities, audio, stream)
 * are not here: a mapping without them is never eligible. OpenAI-format providers carry every
 * field except their `quirks.unsupportedParams`; the other formats carry only what their adapter
 * maps (src/providers/<format>/request.ts).
 */
const DROPPABLE = [
  "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed", "presence_penalty", "frequency_penalty",
  "logit_bias", "logprobs", "top_logprobs", "reasoning_effort", "user", "parallel_tool_calls", "metadata", "prediction",
  "prompt_cache_key", "safety_identifier", "service_tier", "store", "verbosity",
] as const;
const SAMPLING = ["temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "reasoning_effort"] as const;
const CARRIED: Readonly<Record<WireFormat, ReadonlySet<string> | "all">> = {
  openai: "all",
  azure: "all",
  anthropic: new Set<string>([...SAMPLING, "user", "parallel_tool_calls"]),
  google: new Set<string>([...SAMPLING, "seed", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs"]),
  bedrock: new Set<string>(SAMPLING),
};

/** The droppable parameters a request sent (its keys; a parsed request has no undefined values). */
export function sentParameters(req: object): string[] {
  const sent = req as Record<string, unknown>;
  return DROPPABLE.filter((p) => sent[p] !== undefined);
}

/** The first sent parameter this mapping would not pass on, or null. */
export function droppedParameter(params: readonly string[], provider: ProviderInfo, m: ProviderMapping): string | null {
  const carried = CARRIED[provider.wireFormat];
  const unsupported = provider.quirks?.unsupportedParams ?? [];
  for (const p of params) {
    if (carried !== "all" && !carried.has(p)) return p;
    if (unsupported.includes(p)) return p;
    if (p === "reasoning_effort" && !m.reasoning) return p;
  }
  return null;
}

/** A cap in USD as pico-dollars (12 decimals is all a price string carries). */
const capPico = (usd: number): bigint => parseUsd(usd.toFixed(12));

/** Why `max_price` drops this mapping, or null. */
function priceGap(max: NonNullable<ProviderPreferences["max_price"]>, m: ProviderMapping): string | null {
  const over = (price: string | undefined, cap: number | undefined, perMillion: boolean): boolean =>
    cap !== undefined && price !== undefined && parseUsd(price) * (perMillion ? 1_000_000n : 1n) > capPico(cap);
  if (over(m.pricing.prompt, max.prompt, true)) return "its prompt price is above provider.max_price.prompt";
  if (over(m.pricing.completion, max.completion, true)) return "its completion price is above provider.max_price.completion";
  if (over(m.pricing.request, max.request, false)) return "its per-request price is above provider.max_price.request";
  if (over(m.pricing.image, max.image, false)) return "its image price is above provider.max_price.image";
  return null;
}

/**
 * Why the preferences drop a candidate, or null when it stays. `params` is `sentParameters` of
 * the request (only read with `require_parameters`).
 */
export function preferenceGap(prefs: ProviderPreferences, providerId: string, provider: ProviderInfo, m: ProviderMapping, params: readonly string[]): string | null {
  if (prefs.only && !prefs.only.includes(providerId)) return "not in provider.only";
  if (prefs.ignore?.includes(providerId)) return "in provider.ignore";
  if (prefs.allow_fallbacks === false && prefs.order && !prefs.order.includes(providerId)) return "not in provider.order and provider.allow_fallbacks is false";
  if (prefs.data_collection === "deny" && provider.trainsOnApiData) return "it may train on API data (provider.data_collection is \"deny\")";
  if (prefs.max_price) {
    const gap = priceGap(prefs.max_price, m);
    if (gap) return gap;
  }
  if (prefs.require_parameters) {
    const dropped = droppedParameter(params, provider, m);
    if (dropped) return `it does not take '${dropped}' (provider.require_parameters)`;
  }
  return null;
}
