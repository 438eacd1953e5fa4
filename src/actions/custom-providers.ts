/**
 * OpenAI-compatible upstreams of one organization, addressed as `<name>/<model>`, shared by
 * `/v1/master/custom-providers` and the session API (`/api/custom-providers`). The base URL passes
 * the SSRF guard (src/lib/ssrf.ts); the token is encrypted and never returned.
 */
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import { getDb } from "../db/client";
import { customModels, customProviders } from "../db/schema";
import { PROVIDER_IDS } from "../catalog/types";
import { ApiError, badRequest, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { encryptSecret, tokenHint } from "../lib/crypto";
import { checkUpstreamUrl } from "../lib/ssrf";
import { requireHashSecret } from "../lib/crypto";
import { bumpKeyVersions } from "../keys/sync";
import { isProduction, type Env } from "../env";

type CustomProviderRow = typeof customProviders.$inferSelect;

const BUILT_IN = new Set<string>(PROVIDER_IDS);

const name = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit")
  .refine((n) => !BUILT_IN.has(n), "is the id of a built-in provider");
export const customProviderCreateBody = z.object({
  name,
  baseUrl: z.string().trim().min(1).max(2048),
  token: z.string().trim().min(1).max(8192),
});
export const customProviderPatchBody = customProviderCreateBody
  .partial()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update: send name, baseUrl or token" });
const view = (r: CustomProviderRow) => ({
  id: r.id,
  object: "custom_provider" as const,
  organizationId: r.organizationId,
  name: r.name,
  baseUrl: r.baseUrl,
  tokenHint: r.tokenHint,
  createdAt: new Date(r.createdAt).toISOString(),
});

const conflict = (n: string) =>
  new ApiError(409, `A custom provider named '${n}' already exists.`, { type: "invalid_request_error", code: "custom_provider_exists", param: "name" });

/** The stored base URL: trailing slashes dropped so `${baseUrl}/chat/completions` is well-formed. */
function checkedBaseUrl(env: Env, raw: string): string {
  const check = checkUpstreamUrl(raw, { production: isProduction(env) });
  if (!check.ok) throw badRequest(`Invalid value for 'baseUrl': ${check.reason}`, "baseUrl");
  return raw.replace(/\/+$/, "");
}

export async function loadCustomProvider(env: Env, organizationId: string, id: string): Promise<CustomProviderRow> {
  const row = await getDb(env.DB)
    .select()
    .from(customProviders)
    .where(and(eq(customProviders.id, id), eq(customProviders.organizationId, organizationId)))
    .get();
  if (!row) throw notFound(`Custom provider '${id}' not found.`);
  return row;
}

export async function createCustomProvider(env: Env, orgId: string, body: z.infer<typeof customProviderCreateBody>) {
  const baseUrl = checkedBaseUrl(env, body.baseUrl);
  const row = await getDb(env.DB)
    .insert(customProviders)
    .values({
      id: newId("cp"),
      organizationId: orgId,
      name: body.name,
      baseUrl,
      tokenCiphertext: await encryptSecret(requireHashSecret(env), body.token),
      tokenHint: tokenHint(body.token),
      createdAt: Date.now(),
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) throw conflict(body.name);
  await bumpKeyVersions(env, { organizationId: orgId });
  return view(row);
}

export async function listCustomProviders(env: Env, orgId: string) {
  const rows = await getDb(env.DB).select().from(customProviders).where(eq(customProviders.organizationId, orgId)).orderBy(customProviders.createdAt, customProviders.id);
  return rows.map(view);
}

export const getCustomProvider = async (env: Env, orgId: string, id: string) => view(await loadCustomProvider(env, orgId, id));

export async function updateCustomProvider(env: Env, orgId: string, id: string, body: z.infer<typeof customProviderPatchBody>) {
  const current = await loadCustomProvider(env, orgId, id);
  const db = getDb(env.DB);
  const changes: Partial<Pick<CustomProviderRow, "name" | "baseUrl" | "tokenCiphertext" | "tokenHint">> = {};
  if (body.baseUrl !== undefined) changes.baseUrl = checkedBaseUrl(env, body.baseUrl);
  if (body.token !== undefined) {
    changes.tokenCiphertext = await encryptSecret(requireHashSecret(env), body.token);
    changes.tokenHint = tokenHint(body.token);
  }
  const renamed = body.name !== undefined && body.name !== current.name ? body.name : null;
  if (renamed) {
    const taken = await db
      .select({ id: customProviders.id })
      .from(customProviders)
      .where(and(eq(customProviders.organizationId, orgId), eq(customProviders.name, renamed)))
      .get();
    if (taken) throw conflict(renamed);
    changes.name = renamed;
  }
  if (!Object.keys(changes).length) return view(current);
  const update = db.update(customProviders).set(changes).where(eq(customProviders.id, current.id)).returning();
  // A rename carries the provider's models along (they are addressed by provider name).
  const [rows] = renamed
    ? await db.batch([
        update,
        db.update(customModels).set({ providerName: renamed }).where(and(eq(customModels.organizationId, orgId), eq(customModels.providerName, current.name))),
      ])
    : await db.batch([update]);
  await bumpKeyVersions(env, { organizationId: orgId });
  return view(rows[0] ?? current);
}

/** Deletes the provider and its models; returns the deleted provider's name. */
export async function deleteCustomProvider(env: Env, orgId: string, id: string): Promise<string> {
  const current = await loadCustomProvider(env, orgId, id);
  const db = getDb(env.DB);
  await db.batch([
    db.delete(customModels).where(and(eq(customModels.organizationId, orgId), eq(customModels.providerName, current.name))),
    db.delete(customProviders).where(eq(customProviders.id, current.id)),
  ]);
  await bumpKeyVersions(env, { organizationId: orgId });
  return current.name;
}
