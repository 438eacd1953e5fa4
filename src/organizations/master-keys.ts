/**
 * Master key lifecycle, shared by the master API (`/v1/master/master-keys`),
 * the operator API (`/v1/admin/organizations/{id}/master-keys`) and the dashboard (owners only).
 * Only the HMAC fingerprint of a secret is stored; the secret is returned once, on create and
 * roll. Authentication (src/auth/master-auth.ts) looks every request up in D1 by fingerprint
 * without a cache, so a revoked or rolled secret is refused from the next request on.
 *
 * An organization always keeps one active master key: revoking the last one is a 409 (decided
 * inside one UPDATE, so two concurrent revocations cannot both pass).
 */
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { masterKeys, type MasterKeyOrigin } from "../db/schema";
import { ApiError, notFound } from "../errors/api-error";
import { fingerprint, newMasterSecret, prefixHint } from "../lib/crypto";
import { newId } from "../lib/ids";
import { requireHashSecret } from "../lib/crypto";

type MasterKeyRow = typeof masterKeys.$inferSelect;

export const masterKeyCreateBody = z.object({
  description: z.string().trim().max(256).default(""),
});

export interface MasterKeyCreator {
  via: MasterKeyOrigin;
  /** Member id (dashboard) or master key id (master API); null for bootstrap and the operator. */
  id: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** What every API shows of a master key: never the secret nor its fingerprint. */
export function publicMasterKey(row: MasterKeyRow) {
  return {
    id: row.id,
    object: "master_key" as const,
    prefix: row.prefixHint,
    description: row.description,
    status: row.revokedAt === null ? ("active" as const) : ("revoked" as const),
    createdBy: { via: row.createdVia, id: row.createdBy },
    createdAt: new Date(row.createdAt).toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    lastRolledAt: iso(row.lastRolledAt),
    revokedAt: iso(row.revokedAt),
  };
}

export type PublicMasterKey = ReturnType<typeof publicMasterKey>;

/** A new secret and the row values that store it (the caller inserts; bootstrap batches it). */
export async function newMasterKeyValues(env: Env, organizationId: string, description: string, creator: MasterKeyCreator) {
  const token = newMasterSecret();
  const values = {
    id: newId("mk"),
    organizationId,
    fingerprint: await fingerprint(requireHashSecret(env), token),
    prefixHint: prefixHint(token),
    description,
    createdVia: creator.via,
    createdBy: creator.id,
    createdAt: Date.now(),
  };
  return { token, values };
}

export async function createMasterKey(env: Env, organizationId: string, description: string, creator: MasterKeyCreator) {
  const { token, values } = await newMasterKeyValues(env, organizationId, description, creator);
  const [row] = await getDb(env.DB).insert(masterKeys).values(values).returning();
  return { ...publicMasterKey(row!), token };
}

export async function listMasterKeys(env: Env, organizationId: string): Promise<PublicMasterKey[]> {
  const rows = await getDb(env.DB)
    .select()
    .from(masterKeys)
    .where(eq(masterKeys.organizationId, organizationId))
    .orderBy(asc(masterKeys.createdAt), asc(masterKeys.id));
  return rows.map(publicMasterKey);
}

async function getMasterKeyRow(env: Env, organizationId: string, id: string): Promise<MasterKeyRow> {
  const row = await getDb(env.DB)
    .select()
    .from(masterKeys)
    .where(and(eq(masterKeys.id, id), eq(masterKeys.organizationId, organizationId)))
    .get();
  if (!row) throw notFound(`Master key '${id}' not found.`, "master_key_not_found");
  return row;
}

const revokedError = (id: string) =>
  new ApiError(409, `Master key '${id}' is revoked; create a new one instead.`, { type: "invalid_request_error", code: "master_key_revoked", param: "id" });

/** A new secret for the same key (same id, description, creator); the old secret stops working at once. */
export async function rollMasterKey(env: Env, organizationId: string, id: string) {
  const before = await getMasterKeyRow(env, organizationId, id);
  if (before.revokedAt !== null) throw revokedError(id);
  const token = newMasterSecret();
  const [row] = await getDb(env.DB)
    .update(masterKeys)
    .set({ fingerprint: await fingerprint(requireHashSecret(env), token), prefixHint: prefixHint(token), lastRolledAt: Date.now() })
    .where(and(eq(masterKeys.id, id), eq(masterKeys.organizationId, organizationId), isNull(masterKeys.revokedAt)))
    .returning();
  if (!row) throw revokedError(id);
  return { ...publicMasterKey(row), token };
}

/** Revokes a master key unless it is the organization's last active one (409 `last_master_key`). */
export async function revokeMasterKey(env: Env, organizationId: string, id: string): Promise<PublicMasterKey> {
  const before = await getMasterKeyRow(env, organizationId, id);
  if (before.revokedAt !== null) return publicMasterKey(before);
  const others = sql`(SELECT COUNT(*) FROM ${masterKeys} AS other WHERE other.organization_id = ${organizationId} AND other.revoked_at IS NULL AND other.id <> ${id})`;
  const [row] = await getDb(env.DB)
    .update(masterKeys)
    .set({ revokedAt: Date.now() })
    .where(and(eq(masterKeys.id, id), eq(masterKeys.organizationId, organizationId), isNull(masterKeys.revokedAt), sql`${others} > 0`))
    .returning();
  if (row) return publicMasterKey(row);
  const now = await getMasterKeyRow(env, organizationId, id);
  if (now.revokedAt !== null) return publicMasterKey(now);
  throw new ApiError(409, "This is the organization's last active master key: create another master key before revoking this one.", {
    type: "invalid_request_error",
    code: "last_master_key",
    param: "id",
  });
}
