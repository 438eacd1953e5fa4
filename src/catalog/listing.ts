/**
 * Which models and mappings `GET /v1/models` shows (spec 4.1). Pure functions over catalogue data,
 * the key context and the environment; the route caches their results.
 *
 * Public step (query flags only): deactivated models/mappings are hidden unless
 * `include_deactivated`, deprecated ones removed with `exclude_deprecated`, providers that train on
 * API data removed with `no_training`; a model left without mappings disappears.
 * Keyed step (skipped by `include_restricted`): the organization's compliance policy, the project's
 * mode (credits / api-keys / hybrid) and IAM rules, per mapping.
 */
import type { CustomModelRecord, KeyContext } from "../context/key-context";
import { envVar, providerEnvPrefix, type Env } from "../env";
import { evaluateAccess } from "../iam/evaluate";
import { isDeactivated, isDeprecated, isFreeMapping, listModels } from "./index";
import { PROVIDERS } from "./providers";
import type { ModelDefinition, ProviderId, ProviderMapping } from "./types";
import { endpointsOf } from "../routing/endpoints";

export interface CatalogQuery {
  includeDeactivated: boolean;
  excludeDeprecated: boolean;
  noTraining: boolean;
  mapped: boolean;
  includeRestricted: boolean;
}

export interface ModelSelection {
  model: ModelDefinition;
  mappings: readonly ProviderMapping[];
}

const passed = (date: string | undefined, now: number): boolean => date !== undefined && Date.parse(date) <= now;

/** The public catalogue for these flags, in catalogue order. */
export function publicSelection(q: Pick<CatalogQuery, "includeDeactivated" | "excludeDeprecated" | "noTraining">, now = Date.now()): ModelSelection[] {
  const out: ModelSelection[] = [];
  for (const model of listModels()) {
    if (!q.includeDeactivated && isDeactivated(model, now)) continue;
    if (q.excludeDeprecated && isDeprecated(model, now)) continue;
    const mappings = model.mappings.filter((m) => {
      if (!q.includeDeactivated && passed(m.deactivatedAt, now)) return false;
      if (q.excludeDeprecated && passed(m.deprecatedAt, now)) return false;
      if (q.noTraining && PROVIDERS[m.providerId].trainsOnApiData) return false;
      return true;
    });
    if (mappings.length > 0) out.push({ model, mappings });
  }
  return out;
}

/** Whether the project can reach a catalogue provider: operator credential and/or the org's own key. */
export function providerAvailable(env: Env, ctx: KeyContext, providerId: ProviderId): boolean {
  const credits = () => envVar(env, `${providerEnvPrefix(providerId)}_API_KEY`) !== undefined;
  const byok = () => ctx.providerKeys.some((k) => k.provider === providerId);
  switch (ctx.project.mode) {
    case "credits":
      return credits();
    case "api-keys":
      return byok();
    case "hybrid":
      return credits() || byok();
    default:
      return false;
  }
}

export type MappingFilter = (model: ModelDefinition, mapping: ProviderMapping) => boolean;

/** Compliance policy + project access + IAM, for one key. Availability is memoized per provider. */
export function keyedMappingFilter(env: Env, ctx: KeyContext, clientIp: string | null): MappingFilter {
  const compliance = ctx.organization.compliance;
  const denied = new Set(compliance.deniedProviders ?? []);
  const available = new Map<ProviderId, boolean>();
  const byok = ctx.project.mode !== "credits" ? ctx.providerKeys : [];
  return (model, m) => {
    const provider = PROVIDERS[m.providerId];
    if (compliance.noTraining && provider.trainsOnApiData) return false;
    if (denied.has(m.providerId)) return false;
    let ok = available.get(m.providerId);
    if (ok === undefined) {
      ok = providerAvailable(env, ctx, m.providerId);
      available.set(m.providerId, ok);
    }
    if (!ok) return false;
    // Listed when any endpoint of the mapping may serve this key (residency is per endpoint).
    const free = isFreeMapping(model, m);
    return endpointsOf(env, m.providerId, m.region ?? provider.region, byok).some((e) => evaluateAccess(ctx, { model: model.id, provider: m.providerId, free, clientIp, kind: "catalog", region: e.region }).allowed);
  };
}

/** The organization's custom models this key may see (their custom provider exists, policy and IAM allow). */
export function visibleCustomModels(ctx: KeyContext, clientIp: string | null, isFree: (cm: CustomModelRecord) => boolean): CustomModelRecord[] {
  const providers = new Set(ctx.customProviders.map((p) => p.name));
  const denied = new Set(ctx.organization.compliance.deniedProviders ?? []);
  return ctx.customModels.filter((cm) => {
    if (!providers.has(cm.providerName)) return false;
    if (denied.has("custom") || denied.has(`custom:${cm.providerName}`)) return false;
    return evaluateAccess(ctx, {
      model: `${cm.providerName}/${cm.modelId}`,
      provider: `custom:${cm.providerName}`,
      free: isFree(cm),
      clientIp,
      kind: "catalog",
      // A custom provider's endpoint has no known region (residency cannot be promised for it).
      region: "",
    }).allowed;
  });
}
