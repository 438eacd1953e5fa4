/**
 * Deleting a key (spec section 3, "any -> removed") is a soft delete: status `deleted`, so usage
 * history and request logs keep their key; the DO learns it before this returns and every later
 * request with the secret is a 401 "deleted". Its OAuth grants and client_credentials clients end
 * with it (`endKeyOAuth`). The playground key cannot be deleted.
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys } from "../db/schema";
import { forbidden, notFound } from "../errors/api-error";
import { evictContext } from "../auth/key-cache";
import type { KeyRow } from "./create";
import { syncKeys } from "./sync";
import { endKeyOAuth } from "../oauth/tokens";

export async function deleteKey(env: Env, row: KeyRow, now = Date.now()): Promise<KeyRow> {
  if (row.kind === "playground") throw forbidden("The playground key cannot be deleted.", "playground_key");
  const [deleted] = await getDb(env.DB)
    .update(apiKeys)
    .set({ status: "deleted", deletedAt: now, version: sql`${apiKeys.version} + 1`, updatedAt: now })
    .where(eq(apiKeys.id, row.id))
    .returning();
  if (!deleted) throw notFound(`API key '${row.id}' not found`, "key_not_found");
  await syncKeys(env, [deleted]);
  evictContext(row.fingerprint);
  await endKeyOAuth(env, { keyId: row.id }, now);
  return deleted;
}
