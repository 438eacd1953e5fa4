/**
 * Master API: the organization's own provider credentials (BYOK). The token is encrypted at rest
 * (AES-GCM under a key derived from KEY_HASH_SECRET) and never returned, only `tokenHint`.
 */
import { Hono } from "hono";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { providerKeys } from "../../db/schema";
import { PROVIDER_IDS } from "../../catalog/types";
import { badRequest, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { encryptSecret, tokenHint } from "../../lib/crypto";
import { checkUpstreamUrl } from "../../lib/ssrf";
import { requireHashSecret } from "../../auth/gateway-key";
import { bumpKeyVersions } from "../../keys/sync";
import { isProduction } from "../../env";

type ProviderKeyRow = typeof providerKeys.$inferSelect;

const createBody = z.object({
  provider: z.enum(PROVIDER_IDS),
  token: z.string().trim().min(1).max(8192),
  baseUrl: z.string().trim().min(1).max(2048).optional(),
  label: z.string().trim().min(1).max(200).optional(),
});
const idParam = z.object({ id: z.string().min(1) });

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

export const providerKeyRoutes = new Hono<AppEnv>();

providerKeyRoutes.post("/", validateBody(createBody), async (c) => {
  const body = c.req.valid("json");
  const orgId = c.get("master").organizationId;
  if (body.baseUrl !== undefined) {
    const check = checkUpstreamUrl(body.baseUrl, { production: isProduction(c.env) });
    if (!check.ok) throw badRequest(`Invalid value for 'baseUrl': ${check.reason}`, "baseUrl");
  }
  const row = await getDb(c.env.DB)
    .insert(providerKeys)
    .values({
      id: newId("pk"),
      organizationId: orgId,
      provider: body.provider,
      label: body.label ?? null,
      baseUrl: body.baseUrl ?? null,
      tokenCiphertext: await encryptSecret(requireHashSecret(c.env), body.token),
      tokenHint: tokenHint(body.token),
      createdAt: Date.now(),
    })
    .returning()
    .get();
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ providerKey: view(row) }, 201);
});

providerKeyRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB)
    .select()
    .from(providerKeys)
    .where(eq(providerKeys.organizationId, c.get("master").organizationId))
    .orderBy(providerKeys.createdAt, providerKeys.id);
  return c.json({ providerKeys: rows.map(view) });
});

providerKeyRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const orgId = c.get("master").organizationId;
  const { id } = c.req.valid("param");
  const deleted = await getDb(c.env.DB)
    .delete(providerKeys)
    .where(and(eq(providerKeys.id, id), eq(providerKeys.organizationId, orgId)))
    .returning({ id: providerKeys.id })
    .get();
  if (!deleted) throw notFound(`Provider key '${id}' not found.`);
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ message: `Provider key '${id}' deleted.` });
});
