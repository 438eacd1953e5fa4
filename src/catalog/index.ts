/**
 * Read access to the catalogue. Everything is indexed once per isolate at module load; lookups
 * are Map hits. Callers never scan MODELS themselves.
 */
import { MODELS } from "./models";
import { PROVIDERS } from "./providers";
import {
  PROVIDER_IDS,
  type ModelDefinition,
  type ModelKind,
  type ProviderId,
  type ProviderInfo,
  type ProviderMapping,
} from "./types";

export { PROVIDERS } from "./providers";
export { MODELS, PRICES_READ_AT } from "./models";

const providerIdSet: ReadonlySet<string> = new Set<string>(PROVIDER_IDS);

/** Canonical ids and aliases (case-sensitive, as sent) -> model. */
const byIdOrAlias = new Map<string, ModelDefinition>();
/** Lower-cased ids and aliases, for a forgiving second lookup. */
const byLowerIdOrAlias = new Map<string, ModelDefinition>();
/** `${modelId}\u0000${providerId}` -> mapping. */
const mappingIndex = new Map<string, ProviderMapping>();
const byKind = new Map<ModelKind, ModelDefinition[]>();

for (const model of MODELS) {
  for (const name of [model.id, ...(model.aliases ?? [])]) {
    if (!byIdOrAlias.has(name)) byIdOrAlias.set(name, model);
    const lower = name.toLowerCase();
    if (!byLowerIdOrAlias.has(lower)) byLowerIdOrAlias.set(lower, model);
  }
  for (const m of model.mappings) {
    const key = `${model.id}\u0000${m.providerId}`;
    if (!mappingIndex.has(key)) mappingIndex.set(key, m);
  }
  const list = byKind.get(model.kind) ?? [];
  list.push(model);
  byKind.set(model.kind, list);
}

export const isProviderId = (s: string): s is ProviderId => providerIdSet.has(s);

export function getProvider(id: string): ProviderInfo | undefined {
  return isProviderId(id) ? PROVIDERS[id] : undefined;
}

/** Canonical id or alias (exact first, then case-insensitive). Not provider-pinned ids: see `parseModelRef`. */
export function findModel(idOrAlias: string): ModelDefinition | undefined {
  return byIdOrAlias.get(idOrAlias) ?? byLowerIdOrAlias.get(idOrAlias.toLowerCase());
}

/** All catalogue models, including deprecated and deactivated ones, in catalogue order. */
export function listModels(): readonly ModelDefinition[] {
  return MODELS;
}

export function modelsByKind(kind: ModelKind): readonly ModelDefinition[] {
  return byKind.get(kind) ?? [];
}

/** The mapping of a model (definition, id or alias) on one provider. */
export function mappingFor(model: ModelDefinition | string, providerId: string): ProviderMapping | undefined {
  const def = typeof model === "string" ? findModel(model) : model;
  if (!def) return undefined;
  return mappingIndex.get(`${def.id}\u0000${providerId}`);
}

export type ModelRef =
  | { kind: "canonical"; model: ModelDefinition }
  | { kind: "pinned"; model: ModelDefinition; providerId: ProviderId; mapping: ProviderMapping }
  /** `<prefix>/<rest>` whose prefix is not a catalogue provider: maybe a custom model. */
  | { kind: "unknown"; prefix: string | null; rest: string };

/**
 * Resolves a request's `model`: a canonical id/alias, or `provider/model-id` (spec 1.2). A pinned
 * id whose provider is known but has no mapping for the model is `unknown` with that prefix.
 */
export function parseModelRef(ref: string): ModelRef {
  const direct = findModel(ref);
  if (direct) return { kind: "canonical", model: direct };
  const slash = ref.indexOf("/");
  if (slash <= 0) return { kind: "unknown", prefix: null, rest: ref };
  const prefix = ref.slice(0, slash);
  const rest = ref.slice(slash + 1);
  if (isProviderId(prefix)) {
    const model = findModel(rest);
    const m = model ? mappingFor(model, prefix) : undefined;
    if (model && m) return { kind: "pinned", model, providerId: prefix, mapping: m };
  }
  return { kind: "unknown", prefix, rest };
}

const isZero = (v: string | undefined): boolean => v === undefined || /^0*(\.0*)?$/.test(v);

/** Free for IAM pricing rules and the catalogue's `free`: flagged free, or every price is zero. */
export function isFreeMapping(model: ModelDefinition, m: ProviderMapping): boolean {
  if (model.free) return true;
  const p = m.pricing;
  return (
    isZero(p.prompt) &&
    isZero(p.completion) &&
    isZero(p.request) &&
    isZero(p.image) &&
    Object.values(p.per_image ?? {}).every((v) => isZero(v)) &&
    Object.values(p.per_second ?? {}).every((v) => isZero(v))
  );
}

/** Deactivated at or before `now` (epoch ms). */
export const isDeactivated = (model: ModelDefinition, now = Date.now()): boolean =>
  model.deactivatedAt !== undefined && Date.parse(model.deactivatedAt) <= now;

/** Deprecated at or before `now` (epoch ms). */
export const isDeprecated = (model: ModelDefinition, now = Date.now()): boolean =>
  model.deprecatedAt !== undefined && Date.parse(model.deprecatedAt) <= now;

/**
 * Whether the chat endpoints (and the dialects built on them) may send this model: chat models, and
 * image models that also answer in text (Gemini's conversational image models, `modalities`).
 * Embedding, moderation, video and image-only models are refused rather than forwarded.
 */
export const canChat = (model: ModelDefinition): boolean =>
  model.kind === "chat" || (model.kind === "image" && model.outputModalities.includes("text"));

/**
 * Whether every provider a request for `ref` can reach bills `web_search_options` by search context
 * size (Perplexity Sonar): only then is the option accepted, since the catalogue prices nothing else
 * of it (OpenAI's search fees, user location).
 */
export function pricesSearchContext(ref: string): boolean {
  const r = parseModelRef(ref);
  if (r.kind === "unknown") return false;
  const mappings = r.kind === "pinned" ? [r.mapping] : r.model.mappings;
  return mappings.length > 0 && mappings.every((m) => m.pricing.request_by_search_context !== undefined);
}
