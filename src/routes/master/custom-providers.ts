/**
 * Master API: OpenAI-compatible upstreams of one organization, addressed as `<name>/<model>`.
 * The base URL passes the SSRF guard (src/lib/ssrf.ts); the token is encrypted and never returned.
 */
import { Hono } from "hono";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { customModels, customProviders } from "../../db/schema";
import { PROVIDER_IDS } from "../../catalog/types";
import { ApiError, badRequest, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { encryptSecret, tokenHint } from "../../lib/crypto";
import { checkUpstreamUrl } from "../../lib/ssrf";
import { requireHashSecret } from "../../auth/gateway-key";
import { bumpKeyVersions } from "../../keys/sync";
import { isProduction, type Env } from "../../env";

type CustomProviderRow = typeof customProviders.$inferSelect;

const BUILT_IN = new Set<string>(PROVIDER_IDS);

const name = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit")
  .refine((n) => !BUILT_IN.has(n), "is the id of a built-in provider");
const createBody = z.object({
  name,
  baseUrl: z.string().trim().min(1).max(2048),
  token: z.string().trim().min(1).max(8192),
});
const patchBody = createBody.partial();
const idParam = z.object({ id: z.string().min(1) });

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

async function loadProvider(env: Env, organizationId: string, id: string): Promise<CustomProviderRow> {
  const row = await getDb(env.DB)
    .select()
    .from(customProviders)
    .where(and(eq(customProviders.id, id), eq(customProviders.organizationId, organizationId)))
    .get();
  if (!row) throw notFound(`Custom provider '${id}' not found.`);
  return row;
}

export const customProviderRoutes = new Hono<AppEnv>();

customProviderRoutes.post("/", validateBody(createBody), async (c) => {
  const body = c.req.valid("json");
  const orgId = c.get("master").organizationId;
  const baseUrl = checkedBaseUrl(c.env, body.baseUrl);
  const row = await getDb(c.env.DB)
    .insert(customProviders)
    .values({
      id: newId("cp"),
      organizationId: orgId,
      name: body.name,
      baseUrl,
      tokenCiphertext: await encryptSecret(requireHashSecret(c.env), body.token),
      tokenHint: tokenHint(body.token),
      createdAt: Date.now(),
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) throw conflict(body.name);
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ customProvider: view(row) }, 201);
});

customProviderRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB)
    .select()
    .from(customProviders)
    .where(eq(customProviders.organizationId, c.get("master").organizationId))
    .orderBy(customProviders.createdAt, customProviders.id);
  return c.json({ customProviders: rows.map(view) });
});

customProviderRoutes.get("/:id", validate("param", idParam), async (c) => {
  return c.json({ customProvider: view(await loadProvider(c.env, c.get("master").organizationId, c.req.valid("param").id)) });
});

customProviderRoutes.patch("/:id", validate("param", idParam), validateBody(patchBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const current = await loadProvider(c.env, orgId, c.req.valid("param").id);
  const body = c.req.valid("json");
  const db = getDb(c.env.DB);
  const changes: Partial<Pick<CustomProviderRow, "name" | "baseUrl" | "tokenCiphertext" | "tokenHint">> = {};
  if (body.baseUrl !== undefined) changes.baseUrl = checkedBaseUrl(c.env, body.baseUrl);
  if (body.token !== undefined) {
    changes.tokenCiphertext = await encryptSecret(requireHashSecret(c.env), body.token);
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
  if (!Object.keys(changes).length) return c.json({ customProvider: view(current) });
  const update = db.update(customProviders).set(changes).where(eq(customProviders.id, current.id)).returning();
  // A rename carries the provider's models along (they are addressed by provider name).
  const [rows] = renamed
    ? await db.batch([
        update,
        db.update(customModels).set({ providerName: renamed }).where(and(eq(customModels.organizationId, orgId), eq(customModels.providerName, current.name))),
      ])
    : await db.batch([update]);
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ customProvider: view(rows[0] ?? current) });
});

customProviderRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const orgId = c.get("master").organizationId;
  const current = await loadProvider(c.env, orgId, c.req.valid("param").id);
  const db = getDb(c.env.DB);
  await db.batch([
    db.delete(customModels).where(and(eq(customModels.organizationId, orgId), eq(customModels.providerName, current.name))),
    db.delete(customProviders).where(eq(customProviders.id, current.id)),
  ]);
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ message: `Custom provider '${current.name}' and its models deleted.` });
});
