/**
 * The upstream credential a video job is polled and downloaded with: the one it was created with
 * (the operator's key, or the organization's provider key), at the endpoint it was created at (a
 * job lives in one region of its provider: `<ID>_BASE_URL__<REGION>`, or the key's own base URL).
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { envVar, providerEnvPrefix } from "../../env";
import { getProvider } from "../../catalog";
import { ApiError } from "../../errors/api-error";
import { getDb } from "../../db/client";
import { providerKeys } from "../../db/schema";
import { decryptSecret, requireHashSecret } from "../../lib/crypto";
import { regionalBaseUrl } from "../../routing/endpoints";
import type { UpstreamCredential } from "../credentials";

/** What a job's record says about where and with what it was created (`request_logs.extra`). */
export interface JobOrigin {
  provider: string;
  credentialSource: "credits" | "byok";
  providerKeyId?: string;
  /** A regional endpoint other than the provider's default. */
  region?: string;
}

export async function credentialForJob(env: Env, organizationId: string, job: JobOrigin): Promise<UpstreamCredential> {
  const provider = getProvider(job.provider);
  if (!provider) throw new ApiError(502, "The video's provider is no longer available.", { type: "upstream_error", code: "provider_unavailable" });
  const prefix = providerEnvPrefix(provider.id);
  const regional = job.region ? regionalBaseUrl(env, provider.id, job.region) : undefined;
  const base = regional ?? envVar(env, `${prefix}_BASE_URL`) ?? provider.baseUrl;
  if (job.credentialSource === "byok" && job.providerKeyId) {
    const pk = await getDb(env.DB)
      .select()
      .from(providerKeys)
      .where(and(eq(providerKeys.id, job.providerKeyId), eq(providerKeys.organizationId, organizationId)))
      .get();
    if (!pk) throw new ApiError(502, "The provider key this video was created with was deleted.", { type: "upstream_error", code: "provider_key_missing" });
    return { apiKey: await decryptSecret(requireHashSecret(env), pk.tokenCiphertext), baseUrl: pk.baseUrl ?? base, source: "byok", providerKeyId: pk.id };
  }
  const apiKey = envVar(env, `${prefix}_API_KEY`);
  if (!apiKey) throw new ApiError(502, "The video's provider is not configured.", { type: "upstream_error", code: "provider_unavailable" });
  return { apiKey, baseUrl: base, source: "credits" };
}
