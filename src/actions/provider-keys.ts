/**
 * The organization's own provider credentials (BYOK), shared by `/v1/master/provider-keys` and the
 * session API (`/api/provider-keys`). The token is encrypted at rest (AES-GCM under a key derived
 * from KEY_HASH_SECRET) and never returned, only `tokenHint`.
 */
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { providerKeys } from "../db/schema";
import { PROVIDER_IDS } from "../catalog/types";
import { badRequest, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { encryptSecret, tokenHint } from "../lib/crypto";
import { checkUpstreamUrl } from "../lib/ssrf";
import { requireHashSecret } from "../auth/gateway-key";
import { bumpKeyVersions } from "../keys/sync";
import { isProduction } from "../env";

type ProviderKeyRow = typeof providerKeys.$inferSelect;

export const providerKeyCreateBody = z.object({
  provider: z.enum(PROVIDER_IDS),
  token: z.string().trim().min(1).max(8192),
  baseUrl: z.string().trim().min(1).max(2048).optional(),
  label: z.string().trim().min(1).max(200).optional(),
});

const view = (r: ProviderKeyRow) => ({
  id: r.id,
  object: "provider_key" as const,
  organizationId: r.organizationId,
  provider: r.provider,
  label: r.label,
  baseUrl: r.baseUrl,
  tokenHint: r.tokenHint,
  createdAt: new Date(r.createdAt).toISOString(),
});

export async function createProviderKey(env: Env, organizationId: string, body: z.infer<typeof providerKeyCreateBody>) {
  if (body.baseUrl !== undefined) {
    const check = checkUpstreamUrl(body.baseUrl, { production: isProduction(env) });
    if (!check.ok) throw badRequest(`Invalid value for 'baseUrl': ${check.reason}`, "baseUrl");
  }
  const row = await getDb(env.DB)
    .insert(providerKeys)
    .values({
      id: newId("pk"),
      organizationId,
      provider: body.provider,
      label: body.label ?? null,
      baseUrl: body.baseUrl ?? null,
      tokenCiphertext: await encryptSecret(requireHashSecret(env), body.token),
      tokenHint: tokenHint(body.token),
      createdAt: Date.now(),
    })
    .returning()
    .get();
  await bumpKeyVersions(env, { organizationId });
  return view(row);
}

export async function listProviderKeys(env: Env, organizationId: string) {
  const rows = await getDb(env.DB).select().from(providerKeys).where(eq(providerKeys.organizationId, organizationId)).orderBy(providerKeys.createdAt, providerKeys.id);
  return rows.map(view);
}

export async function deleteProviderKey(env: Env, organizationId: string, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(providerKeys)
    .where(and(eq(providerKeys.id, id), eq(providerKeys.organizationId, organizationId)))
    .returning({ id: providerKeys.id })
    .get();
  if (!deleted) throw notFound(`Provider key '${id}' not found.`);
  await bumpKeyVersions(env, { organizationId });
}
