/**
 * Which credential pays for a provider mapping, by project mode:
 * - `credits`  -> the operator's `<ID>_API_KEY` (+ `<ID>_BASE_URL` verbatim); billed to org credits;
 * - `api-keys` -> the organization's own provider key (BYOK) only;
 * - `hybrid`   -> BYOK when the org has a key for that provider, else credits.
 * Custom providers always use their own token (BYOK: the caller pays the upstream).
 *
 * Availability is decided synchronously from isolate data; the secret itself is decrypted only
 * for the attempt that uses it, and decrypted values are cached per isolate by ciphertext.
 */
import type { Env } from "../env";
import { envVar, providerEnvPrefix } from "../env";
import type { ProjectMode } from "../db/schema";
import type { CustomProviderRecord, ProviderKeyRecord } from "../context/key-context";
import { decryptSecret, fingerprint } from "../lib/crypto";
import { requireHashSecret } from "../lib/crypto";
import { getProvider } from "../catalog";
import { regionalBaseUrl, type Endpoint } from "./endpoints";
import { keysForEndpoint, pickKey } from "./key-choice";

/**
 * `region` is set for a regional endpoint other than the provider's default (src/routing/endpoints.ts):
 * its base URL is `<ID>_BASE_URL__<REGION>`, and the provider's `regionSetting` is that region.
 * `keys` are every key of the organization that may serve the endpoint (the chosen one among them),
 * for another key of the same provider after a key failed (src/routing/key-choice.ts).
 */
export type CredentialPlan =
  | { source: "credits"; providerId: string; region?: string }
  | { source: "byok"; providerId: string; providerKey: ProviderKeyRecord; region?: string; keys?: readonly ProviderKeyRecord[] }
  | { source: "byok"; providerId: string; customProvider: CustomProviderRecord };

export interface ResolvedCredential {
  apiKey: string;
  /** No trailing slash. */
  baseUrl: string;
  settings: Readonly<Record<string, string | undefined>>;
  /** `operator`, `provider-key:<id>` or `custom-provider:<id>` (see UpstreamTarget.credentialOwner). */
  owner: string;
}

const hasOperatorKey = (env: Env, providerId: string): boolean => envVar(env, `${providerEnvPrefix(providerId)}_API_KEY`) !== undefined;

/**
 * The credential a catalogue mapping would use at an endpoint, or null when none is available for
 * this mode. The organization's keys for the endpoint (a key with a region serves only that
 * region; one without, every endpoint) are chosen among by weight (key-choice.ts); the operator's
 * key serves the default endpoint and every configured regional one.
 */
export function planCredential(
  env: Env,
  mode: ProjectMode,
  providerId: string,
  providerKeys: readonly ProviderKeyRecord[],
  endpoint: Endpoint = { region: "", isDefault: true },
  random: () => number = Math.random,
): CredentialPlan | null {
  const region = endpoint.isDefault ? {} : { region: endpoint.region };
  if (mode !== "credits") {
    const own = keysForEndpoint(providerKeys, providerId, endpoint.region, endpoint.isDefault);
    const chosen = pickKey(own, new Set(), random);
    if (chosen) return { source: "byok", providerId, providerKey: chosen, ...region, ...(own.length > 1 ? { keys: own } : {}) };
  }
  if (mode !== "api-keys" && hasOperatorKey(env, providerId) && (endpoint.isDefault || regionalBaseUrl(env, providerId, endpoint.region))) {
    return { source: "credits", providerId, ...region };
  }
  return null;
}

const decrypted = new Map<string, Promise<string>>();
const MAX_DECRYPTED = 1000;

function decryptCached(env: Env, ciphertext: string): Promise<string> {
  let p = decrypted.get(ciphertext);
  if (!p) {
    if (decrypted.size >= MAX_DECRYPTED) {
      const oldest = decrypted.keys().next().value;
      if (oldest !== undefined) decrypted.delete(oldest);
    }
    p = decryptSecret(requireHashSecret(env), ciphertext);
    p.catch(() => decrypted.delete(ciphertext));
    decrypted.set(ciphertext, p);
  }
  return p;
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "");

/** Settings per env object and provider: bindings do not change while an isolate lives. */
const settingsCache = new WeakMap<Env, Map<string, Readonly<Record<string, string | undefined>>>>();

/** Provider-specific environment settings (`AWS_BEDROCK_REGION`, `AZURE_API_VERSION`, ...). */
function providerSettings(env: Env, providerId: string): Readonly<Record<string, string | undefined>> {
  let byProvider = settingsCache.get(env);
  if (!byProvider) settingsCache.set(env, (byProvider = new Map()));
  const cached = byProvider.get(providerId);
  if (cached) return cached;
  const prefix = `${providerEnvPrefix(providerId)}_`;
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (k.startsWith(prefix) && typeof v === "string" && k !== `${prefix}API_KEY`) out[k] = v;
  }
  byProvider.set(providerId, Object.freeze(out));
  return out;
}

/** The provider's settings with its region setting (`AWS_BEDROCK_REGION`, ...) naming a regional endpoint's region. */
function regionalSettings(env: Env, providerId: string, region: string): Readonly<Record<string, string | undefined>> {
  const base = providerSettings(env, providerId);
  const name = getProvider(providerId)?.regionSetting;
  return name ? { ...base, [name]: region } : base;
}

/** Resolves the secret and base URL of a plan (decrypts BYOK tokens, cached). */
export async function resolveCredential(env: Env, plan: CredentialPlan, defaultBaseUrl: string): Promise<ResolvedCredential> {
  if ("customProvider" in plan) {
    return { apiKey: await decryptCached(env, plan.customProvider.tokenCiphertext), baseUrl: trimSlash(plan.customProvider.baseUrl), settings: {}, owner: `custom-provider:${plan.customProvider.id}` };
  }
  const prefix = providerEnvPrefix(plan.providerId);
  const regional = plan.region ? regionalBaseUrl(env, plan.providerId, plan.region) : undefined;
  const envBase = regional ?? envVar(env, `${prefix}_BASE_URL`);
  const settings = plan.region ? regionalSettings(env, plan.providerId, plan.region) : providerSettings(env, plan.providerId);
  if (plan.source === "byok") {
    return {
      apiKey: await decryptCached(env, plan.providerKey.tokenCiphertext),
      baseUrl: trimSlash(plan.providerKey.baseUrl ?? envBase ?? defaultBaseUrl),
      settings,
      owner: `provider-key:${plan.providerKey.id}`,
    };
  }
  const apiKey = envVar(env, `${prefix}_API_KEY`);
  if (!apiKey) throw new Error(`operator credential for ${plan.providerId} disappeared`);
  return { apiKey, baseUrl: trimSlash(envBase ?? defaultBaseUrl), settings, owner: "operator" };
}

/** Whether attempts with this credential reach the provider's public endpoint (shared metrics). */
export function sharesProviderMetrics(plan: CredentialPlan): boolean {
  if ("customProvider" in plan) return false;
  return !("providerKey" in plan) || !plan.providerKey.baseUrl;
}

const hashes = new Map<string, Promise<string>>();

/**
 * `metadata.routing[].apiKeyHash`: which upstream credential served an attempt, as the first 16
 * hex digits of its HMAC under KEY_HASH_SECRET (never the secret; equal keys give equal hashes, so
 * a key can be traced across requests). Cached per isolate like the decrypted secrets.
 */
export function credentialHash(env: Env, apiKey: string): Promise<string> {
  let p = hashes.get(apiKey);
  if (!p) {
    if (hashes.size >= MAX_DECRYPTED) {
      const oldest = hashes.keys().next().value;
      if (oldest !== undefined) hashes.delete(oldest);
    }
    p = fingerprint(requireHashSecret(env), apiKey).then((h) => h.slice(0, 16));
    p.catch(() => hashes.delete(apiKey));
    hashes.set(apiKey, p);
  }
  return p;
}
