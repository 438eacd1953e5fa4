/**
 * Upstream credentials for a generation request, by project mode:
 *  - `credits`: the operator's `<ID>_API_KEY` only (billed to gateway credits);
 *  - `api-keys`: the organization's own provider key (BYOK) only;
 *  - `hybrid`: BYOK when the organization has a key for the provider, else the operator's.
 * `<ID>_BASE_URL` (or a BYOK key's own base URL) replaces the provider's default base verbatim.
 */
import type { Env } from "../env";
import { envVar, providerEnvPrefix } from "../env";
import type { KeyContext } from "../context/key-context";
import type { ProviderInfo } from "../catalog/types";
import { decryptSecret } from "../lib/crypto";
import { requireHashSecret } from "../lib/crypto";
import { resolveCredential as resolvePlan, type CredentialPlan } from "../routing/credentials";

export interface UpstreamCredential {
  apiKey: string;
  baseUrl: string;
  source: "credits" | "byok";
  providerKeyId?: string;
  providerKeyLabel?: string;
}

export async function resolveCredential(env: Env, ctx: KeyContext, provider: ProviderInfo): Promise<UpstreamCredential | null> {
  const prefix = providerEnvPrefix(provider.id);
  const operatorBase = envVar(env, `${prefix}_BASE_URL`) ?? provider.baseUrl;
  const mode = ctx.project.mode;
  if (mode !== "credits") {
    const byok = ctx.providerKeys.find((k) => k.provider === provider.id);
    if (byok) {
      const apiKey = await decryptSecret(requireHashSecret(env), byok.tokenCiphertext);
      const cred: UpstreamCredential = { apiKey, baseUrl: byok.baseUrl ?? operatorBase, source: "byok", providerKeyId: byok.id };
      if (byok.label) cred.providerKeyLabel = byok.label;
      return cred;
    }
    if (mode === "api-keys") return null;
  }
  const apiKey = envVar(env, `${prefix}_API_KEY`);
  return apiKey ? { apiKey, baseUrl: operatorBase, source: "credits" } : null;
}

/**
 * The upstream credential of a routing plan for one endpoint (src/routing/door-endpoints.ts): a
 * regional endpoint's `<ID>_BASE_URL__<REGION>`, a key's own base URL, or the default one.
 */
export async function credentialOfPlan(env: Env, plan: CredentialPlan, provider: ProviderInfo): Promise<UpstreamCredential> {
  const r = await resolvePlan(env, plan, provider.baseUrl);
  const cred: UpstreamCredential = { apiKey: r.apiKey, baseUrl: r.baseUrl, source: plan.source };
  if ("providerKey" in plan) {
    cred.providerKeyId = plan.providerKey.id;
    if (plan.providerKey.label) cred.providerKeyLabel = plan.providerKey.label;
  }
  return cred;
}

/** Joins a base URL and a path without doubling or losing the slash. */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
