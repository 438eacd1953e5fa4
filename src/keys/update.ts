/**
 * The one key-update service behind `PATCH /v1/master/keys/{id}` and `PATCH /api/keys/{id}`:
 * rename, enable/disable, expiry (dashboard only) and spend limits. Spec section 3:
 *  - disable: always allowed; enable: only without TTL or with a TTL in the future;
 *  - an expired key is enabled only together with a new future `expiresAt` (400 otherwise).
 * Who may change what: a `manager` (owner, admin, master API) changes everything; a
 * `developer` (own keys only, the route checks that) may always disable, but may enable only a key
 * no manager disabled and change only limits and an expiry no manager set (403 otherwise; issue
 * 22: an owner-set expiry is not the developer's to remove or extend).
 * Disabling ends the key's OAuth grants and client_credentials clients (`endKeyOAuth`): enabling
 * it again does not bring them back.
 * Every update bumps `version` and syncs the KeyState DO before returning, so it is immediate on
 * every isolate; the DO keeps the key's spend and current window across syncs.
 */
import { and, eq, ne, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { badRequest, forbidden, notFound } from "../errors/api-error";
import type { KeyActor, KeyRow } from "./create";
import { mergeLimits, type LimitPatch } from "./limits";
import { syncKeys } from "./sync";
import { endKeyOAuth } from "../oauth/tokens";

export interface KeyPatch extends LimitPatch {
  description?: string | undefined;
  status?: "active" | "inactive" | undefined;
  /** Epoch ms; null removes the TTL. Dashboard only. */
  expiresAt?: number | null | undefined;
  /** Budget alert threshold (percent, 50..100); null returns to the organization's. */
  alertThresholdPercent?: number | null | undefined;
  /** The key's own rate limits; null clears (only the organization's apply). */
  requestsPerMinute?: number | null | undefined;
  tokensPerMinute?: number | null | undefined;
}

const LIMIT_FIELDS = ["usageLimit", "periodUsageLimit", "periodUsageDurationValue", "periodUsageDurationUnit"] as const;

export async function updateKey(env: Env, row: KeyRow, patch: KeyPatch, actor: KeyActor = "manager", now = Date.now()): Promise<KeyRow> {
  const touchesLimits = LIMIT_FIELDS.some((f) => patch[f] !== undefined);
  if (actor === "developer") {
    if (patch.status === "active" && row.status === "inactive" && row.disabledByManager) {
      throw forbidden("An owner or admin disabled this API key; only an owner or admin can enable it.", "key_managed");
    }
    if (touchesLimits && row.limitsSetByManager) {
      throw forbidden("An owner or admin set this API key's spend limits; only an owner or admin can change them.", "key_managed");
    }
    if (patch.expiresAt !== undefined && row.expirySetByManager) {
      throw forbidden("An owner or admin set this API key's expiry; only an owner or admin can change it.", "key_managed");
    }
  }
  const limits = mergeLimits(row, patch);
  let expiresAt = row.expiresAt;
  if (patch.expiresAt !== undefined) {
    if (patch.expiresAt !== null && patch.expiresAt <= now) throw badRequest("expiresAt must be in the future.", "expiresAt");
    expiresAt = patch.expiresAt;
  }
  const status = patch.status ?? row.status;
  if (patch.status === "active" && expiresAt !== null && expiresAt <= now) {
    throw badRequest(
      "This API key has expired; it can only be enabled together with a new expiration in the future (expiresAt).",
      patch.expiresAt === undefined ? "status" : "expiresAt",
      "key_expired",
    );
  }
  const [updated] = await getDb(env.DB)
    .update(apiKeys)
    .set({
      description: patch.description ?? row.description,
      status,
      expiresAt,
      alertThresholdPercent: patch.alertThresholdPercent === undefined ? row.alertThresholdPercent : patch.alertThresholdPercent,
      requestsPerMinute: patch.requestsPerMinute === undefined ? row.requestsPerMinute : patch.requestsPerMinute,
      tokensPerMinute: patch.tokensPerMinute === undefined ? row.tokensPerMinute : patch.tokensPerMinute,
      ...limits,
      disabledByManager: patch.status === undefined ? row.disabledByManager : patch.status === "inactive" && actor === "manager",
      limitsSetByManager: touchesLimits ? actor === "manager" && (limits.usageLimit !== null || limits.periodUsageLimit !== null) : row.limitsSetByManager,
      expirySetByManager: patch.expiresAt !== undefined ? actor === "manager" && expiresAt !== null : row.expirySetByManager,
      version: sql`${apiKeys.version} + 1`,
      updatedAt: now,
    })
    .where(and(eq(apiKeys.id, row.id), ne(apiKeys.status, "deleted")))
    .returning();
  if (!updated) throw notFound(`API key '${row.id}' not found`, "key_not_found");
  await syncKeys(env, [updated]);
  if (patch.status === "inactive") await endKeyOAuth(env, { keyId: row.id }, now);
  return updated;
}
