/**
 * Master key authentication (`Authorization: Bearer swbm_...`), scoped to one organization.
 * Master keys are few and change rarely; lookups are by fingerprint with a unique index.
 */
import type { MiddlewareHandler } from "hono";
import { and, eq, isNull } from "drizzle-orm";
import type { AppEnv } from "../app-types";
import { getDb } from "../db/client";
import { masterKeys } from "../db/schema";
import { unauthorized } from "../errors/api-error";
import { fingerprint, looksLikeMasterKey } from "../lib/crypto";
import { extractBearer, requireHashSecret } from "./gateway-key";

export interface MasterContext {
  masterKeyId: string;
  organizationId: string;
}

export const requireMasterKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const secret = extractBearer(c);
  if (!secret) throw unauthorized("Missing master key: send 'Authorization: Bearer <MASTER_KEY>'.", "missing_api_key");
  const hashSecret = requireHashSecret(c.env);
  if (!looksLikeMasterKey(secret)) throw unauthorized("Invalid master key.", "invalid_master_key");
  const fp = await fingerprint(hashSecret, secret);
  const row = await getDb(c.env.DB)
    .select({ id: masterKeys.id, organizationId: masterKeys.organizationId })
    .from(masterKeys)
    .where(and(eq(masterKeys.fingerprint, fp), isNull(masterKeys.revokedAt)))
    .get();
  if (!row) throw unauthorized("Invalid master key.", "invalid_master_key");
  c.set("master", { masterKeyId: row.id, organizationId: row.organizationId });
  await next();
};
