/**
 * Rolling (spec section 3): a new secret replaces the old one in place. The old fingerprint goes
 * to `retired_key_fingerprints` (its next use is a precise 401 "rolled"), the key's version is
 * bumped and its KeyState DO learns the new fingerprint before this returns, so the old secret is
 * refused immediately on every isolate. Description, usage, limits (including the running period
 * window, kept by the DO), IAM rules and expiry are untouched. The key's OAuth grants and its
 * client_credentials clients end (`endKeyOAuth`): whoever held the old secret keeps nothing that
 * acts as the key. The playground key cannot be rolled.
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, retiredKeyFingerprints } from "../db/schema";
import { forbidden, notFound } from "../errors/api-error";
import { fingerprint, newGatewaySecret, prefixHint } from "../lib/crypto";
import { requireHashSecret } from "../lib/crypto";
import { evictContext } from "../auth/key-cache";
import type { KeyRow } from "./create";
import { syncKeys } from "./sync";
import { endKeyOAuth } from "../oauth/tokens";

export async function rollKey(env: Env, row: KeyRow, now = Date.now()): Promise<{ row: KeyRow; token: string }> {
  if (row.kind === "playground") throw forbidden("The playground key cannot be rolled.", "playground_key");
  if (row.status === "deleted") throw notFound(`API key '${row.id}' not found`, "key_not_found");
  const token = newGatewaySecret();
  const fp = await fingerprint(requireHashSecret(env), token);
  const db = getDb(env.DB);
  const [, updated] = await db.batch([
    db.insert(retiredKeyFingerprints).values({ fingerprint: row.fingerprint, apiKeyId: row.id, retiredAt: now }).onConflictDoNothing(),
    db
      .update(apiKeys)
      .set({ fingerprint: fp, prefixHint: prefixHint(token), version: sql`${apiKeys.version} + 1`, lastRolledAt: now, updatedAt: now })
      .where(eq(apiKeys.id, row.id))
      .returning(),
  ]);
  const next = updated[0];
  if (!next) throw notFound(`API key '${row.id}' not found`, "key_not_found");
  await syncKeys(env, [next]);
  evictContext(row.fingerprint);
  await endKeyOAuth(env, { keyId: row.id }, now);
  return { row: next, token };
}
