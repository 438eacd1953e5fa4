/**
 * A provider's endpoints (contract section 8, "Regional endpoints"): the default one (`<ID>_BASE_URL`
 * or the provider's API, in the catalogue's region for the mapping) and one per
 * `<ID>_BASE_URL__<REGION>` variable, e.g. `AWS_BEDROCK_BASE_URL__EU_CENTRAL_1`, plus the regions of
 * the organization's own provider keys (a key with a `region` adds that endpoint for its
 * organization). Each (provider, region) is a routing candidate of its own: ranked, measured and
 * failed over separately.
 */
import type { Env } from "../env";
import { envVar, providerEnvPrefix } from "../env";
import type { ProviderKeyRecord } from "../context/key-context";
import { normalRegion, regionFromEnvSuffix, envSuffixOfRegion } from "./regions";

export interface Endpoint {
  /** `""` for a global endpoint. */
  region: string;
  /** The default endpoint of the provider (its plain `<ID>_BASE_URL` or API). */
  isDefault: boolean;
}

/** Regions of `<ID>_BASE_URL__<REGION>` variables per env object and provider (bindings do not change). */
const configured = new WeakMap<Env, Map<string, readonly string[]>>();

export function configuredRegions(env: Env, providerId: string): readonly string[] {
  let byProvider = configured.get(env);
  if (!byProvider) configured.set(env, (byProvider = new Map()));
  const hit = byProvider.get(providerId);
  if (hit) return hit;
  const prefix = `${providerEnvPrefix(providerId)}_BASE_URL__`;
  const regions: string[] = [];
  for (const [k, v] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (k.startsWith(prefix) && k.length > prefix.length && typeof v === "string" && v) regions.push(regionFromEnvSuffix(k.slice(prefix.length)));
  }
  regions.sort();
  byProvider.set(providerId, regions);
  return regions;
}

/** The base URL of a regional endpoint from configuration, or undefined. */
export const regionalBaseUrl = (env: Env, providerId: string, region: string): string | undefined =>
  envVar(env, `${providerEnvPrefix(providerId)}_BASE_URL__${envSuffixOfRegion(region)}`);

/**
 * Every endpoint of a provider for a mapping whose default region is `defaultRegion`: the default
 * first, then the configured and key regions in name order (duplicates of the default dropped).
 */
export function endpointsOf(env: Env, providerId: string, defaultRegion: string | undefined, keys: readonly ProviderKeyRecord[]): Endpoint[] {
  const home = normalRegion(defaultRegion);
  const out: Endpoint[] = [{ region: home, isDefault: true }];
  const configuredHere = configuredRegions(env, providerId);
  // The common case (no regional variables, no key with a region for this provider) builds no set.
  if (configuredHere.length === 0 && !keys.some((k) => k.provider === providerId && k.region)) return out;
  const extra = new Set<string>(configuredHere);
  for (const k of keys) if (k.provider === providerId && k.region) extra.add(normalRegion(k.region));
  extra.delete(home);
  extra.delete("");
  for (const region of [...extra].sort()) out.push({ region, isDefault: false });
  return out;
}
