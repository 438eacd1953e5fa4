/**
 * The organization's own provider credentials (BYOK), shared by `/v1/master/provider-keys` and the
 * session API (`/api/provider-keys`). The token is encrypted at rest (AES-GCM under a key derived
 * from KEY_HASH_SECRET) and never returned, only `tokenHint`. A key is edited in place (new token,
 * base URL, label, weight, region); its provider is fixed. An organization may hold several keys
 * of one provider: requests spread over them by `weight` (src/routing/key-choice.ts).
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
import { requireHashSecret } from "../lib/crypto";
import { bumpKeyVersions } from "../keys/sync";
import { isProduction } from "../env";

type ProviderKeyRow = typeof providerKeys.$inferSelect;

export const providerKeyCreateBody = z.object({
  provider: z.enum(PROVIDER_IDS),
  token: z.string().trim().min(1).max(8192),
  baseUrl: z.string().trim().min(1).max(2048).optional(),
  label: z.string().trim().min(1).max(200).optional(),
  /** Share of the provider's requests relative to the organization's other keys for it (default 1). */
  weight: z.number().int().positive().max(1_000_000).optional(),
  /** The region whose endpoint this key serves (`eu-central-1`, `eu`, ...); absent: every endpoint. */
  region: z.string().trim().regex(/^[a-z][a-z0-9-]{1,40}$/, "must be a provider region in lower case, e.g. 'eu-central-1'").optional(),
});

/** What an edit may change: a new token, and the base URL and label (`null` clears them). */
export const providerKeyPatchBody = z
  .object({
    token: providerKeyCreateBody.shape.token.optional(),
    baseUrl: z.string().trim().min(1).max(2048).nullable().optional(),
    label: z.string().trim().min(1).max(200).nullable().optional(),
    weight: providerKeyCreateBody.shape.weight,
    region: providerKeyCreateBody.shape.region.unwrap().nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update: send token, baseUrl, label, weight or region" });

/** Unknown-field hints for the edit body (validateBody). */
export const PROVIDER_KEY_PATCH_HINTS = { provider: "A provider key's provider cannot change: add a key for the other provider and delete this one." };

const view = (r: ProviderKeyRow) => ({
  id: r.id,
  object: "provider_key" as const,
  organizationId: r.organizationId,
  provider: r.provider,
  label: r.label,
  baseUrl: r.baseUrl,
  weight: r.weight,
  region: r.region,
  tokenHint: r.tokenHint,
  createdAt: new Date(r.createdAt).toISOString(),
});

/** The SSRF guard on a base URL, for creation and edits alike. */
function assertUpstreamUrl(env: Env, baseUrl: string): void {
  const check = checkUpstreamUrl(baseUrl, { production: isProduction(env) });
  if (!check.ok) throw badRequest(`Invalid value for 'baseUrl': ${check.reason}`, "baseUrl");
}

/** The stored form of a token: ciphertext and hint, for creation and edits alike. */
async function sealToken(env: Env, token: string): Promise<Pick<ProviderKeyRow, "tokenCiphertext" | "tokenHint">> {
  return { tokenCiphertext: await encryptSecret(requireHashSecret(env), token), tokenHint: tokenHint(token) };
}

export async function createProviderKey(env: Env, organizationId: string, body: z.infer<typeof providerKeyCreateBody>) {
  if (body.baseUrl !== undefined) assertUpstreamUrl(env, body.baseUrl);
  const row = await getDb(env.DB)
    .insert(providerKeys)
    .values({
      id: newId("pk"),
      organizationId,
      provider: body.provider,
      label: body.label ?? null,
      baseUrl: body.baseUrl ?? null,
      weight: body.weight ?? 1,
      region: body.region ?? null,
      ...(await sealToken(env, body.token)),
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

/**
 * Edits a key in place. Key contexts are bumped like on create and delete, so the next request of
 * every gateway key of the organization loads the new ciphertext (decrypted secrets are cached by
 * ciphertext, Vertex tokens by a digest of the secret: an edited key never hits an old entry).
 */
export async function updateProviderKey(env: Env, organizationId: string, id: string, body: z.infer<typeof providerKeyPatchBody>) {
  const changes: Partial<Pick<ProviderKeyRow, "baseUrl" | "label" | "tokenCiphertext" | "tokenHint" | "weight" | "region">> = {};
  if (body.weight !== undefined) changes.weight = body.weight;
  if (body.region !== undefined) changes.region = body.region;
  if (body.baseUrl !== undefined) {
    if (body.baseUrl !== null) assertUpstreamUrl(env, body.baseUrl);
    changes.baseUrl = body.baseUrl;
  }
  if (body.label !== undefined) changes.label = body.label;
  if (body.token !== undefined) Object.assign(changes, await sealToken(env, body.token));
  const row = await getDb(env.DB)
    .update(providerKeys)
    .set(changes)
    .where(and(eq(providerKeys.id, id), eq(providerKeys.organizationId, organizationId)))
    .returning()
    .get();
  if (!row) throw notFound(`Provider key '${id}' not found.`);
  await bumpKeyVersions(env, { organizationId });
  return view(row);
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
