import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { apiKeys } from "../db/schema";
import { notFound } from "../errors/api-error";
import type { KeyRow } from "./create";

/**
 * A non-deleted key of the organization, optionally only if `createdBy` made it (developers in the
 * dashboard). Anything else is 404, so callers cannot probe other organizations' or members' keys.
 */
export async function getKeyRow(db: Db, organizationId: string, keyId: string, opts: { createdBy?: string } = {}): Promise<KeyRow> {
  const conds = [eq(apiKeys.id, keyId), eq(apiKeys.organizationId, organizationId), ne(apiKeys.status, "deleted")];
  if (opts.createdBy) conds.push(eq(apiKeys.createdBy, opts.createdBy));
  const row = await db.select().from(apiKeys).where(and(...conds)).get();
  if (!row) throw notFound(`API key '${keyId}' not found`, "key_not_found");
  return row;
}
