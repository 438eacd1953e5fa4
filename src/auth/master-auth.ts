/**
 * Master key authentication (`Authorization: Bearer swbm_...`), scoped to one organization.
 * Master keys are few and change rarely; lookups are by fingerprint with a unique index, on every
 * request and without a cache, so a revoked or rolled secret is refused at once
 * (src/organizations/master-keys.ts). `last_used_at` is written at most once a minute, off the
 * request's path.
 */
import type { MiddlewareHandler } from "hono";
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { AppEnv, MasterContext } from "../app-types";
import { getDb } from "../db/client";
import { masterKeys } from "../db/schema";
import { unauthorized } from "../errors/api-error";
import { fingerprint, looksLikeMasterKey } from "../lib/crypto";
import { extractBearer, requireHashSecret } from "./gateway-key";

/** `last_used_at` is precise to this (one D1 write per key and minute at most). */
const LAST_USED_RESOLUTION_MS = 60_000;

export type { MasterContext };

export const requireMasterKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const secret = extractBearer(c);
  if (!secret) throw unauthorized("Missing master key: send 'Authorization: Bearer <MASTER_KEY>'.", "missing_api_key");
  const hashSecret = requireHashSecret(c.env);
  if (!looksLikeMasterKey(secret)) throw unauthorized("Invalid master key.", "invalid_master_key");
  const fp = await fingerprint(hashSecret, secret);
  const row = await getDb(c.env.DB)
    .select({ id: masterKeys.id, organizationId: masterKeys.organizationId, lastUsedAt: masterKeys.lastUsedAt })
    .from(masterKeys)
    .where(and(eq(masterKeys.fingerprint, fp), isNull(masterKeys.revokedAt)))
    .get();
  if (!row) throw unauthorized("Invalid master key.", "invalid_master_key");
  c.set("master", { masterKeyId: row.id, organizationId: row.organizationId });
  const now = Date.now();
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    const stale = or(isNull(masterKeys.lastUsedAt), lt(masterKeys.lastUsedAt, now - LAST_USED_RESOLUTION_MS));
    const write = getDb(c.env.DB).update(masterKeys).set({ lastUsedAt: now }).where(and(eq(masterKeys.id, row.id), stale)).run();
    c.executionCtx.waitUntil(write.then(() => undefined, (err: unknown) => console.error("master key last-use update failed", err instanceof Error ? err.message : String(err))));
  }
  await next();
};
