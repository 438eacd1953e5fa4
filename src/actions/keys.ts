/**
 * Listing gateway keys, shared by `GET /v1/master/keys`, `GET /api/keys` and the dashboard's Keys
 * page: one query, one project check (another organization's project is a 404). The list carries
 * each key's settled spend from D1 (`key_spend`), not from the keys' objects: a list costs no
 * object call however many keys it has (src/keys/spend.ts for the bounded exception).
 */
import { and, desc, eq, ne, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { apiKeys, keySpend, projects } from "../db/schema";
import { notFound } from "../errors/api-error";
import type { KeyRow } from "../keys/create";
import { readUnreported, spendOfRow } from "../keys/spend";
import { keyListItem, type KeyListItem } from "../keys/view";
import { memberLimitStates, withOwner } from "../members/limit-view";

export interface KeyListFilter {
  projectId?: string | undefined;
  /** Only keys this member created (developers see only their own keys). */
  createdBy?: string | undefined;
}

async function listCondition(env: Env, organizationId: string, filter: KeyListFilter): Promise<SQL | undefined> {
  if (filter.projectId) {
    const p = await getDb(env.DB)
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.id, filter.projectId), eq(projects.organizationId, organizationId)))
      .get();
    if (!p) throw notFound(`Project '${filter.projectId}' not found`, "project_not_found");
  }
  return keyListWhere(organizationId, filter);
}

/**
 * The condition on `api_keys` that selects a list's keys (the project is not checked: list them
 * first). Queries about the listed keys select them with it in a subquery instead of binding
 * their ids one by one (D1 binds at most 100 parameters per statement, src/db/client.ts).
 */
export function keyListWhere(organizationId: string, filter: KeyListFilter): SQL | undefined {
  // End-user sessions are listed with their platform key (src/platform/), not as API keys.
  const conds = [eq(apiKeys.organizationId, organizationId), ne(apiKeys.status, "deleted"), ne(apiKeys.kind, "session")];
  if (filter.projectId) conds.push(eq(apiKeys.projectId, filter.projectId));
  if (filter.createdBy) conds.push(eq(apiKeys.createdBy, filter.createdBy));
  return and(...conds);
}

/** The key rows, newest first (no spend: the access rules page only names the keys). */
export async function listKeys(env: Env, organizationId: string, filter: KeyListFilter = {}): Promise<KeyRow[]> {
  const where = await listCondition(env, organizationId, filter);
  return getDb(env.DB).select().from(apiKeys).where(where).orderBy(desc(apiKeys.createdAt), apiKeys.id);
}

export interface ListedKey {
  row: KeyRow;
  /** What the APIs return for the key: `publicKey` plus its settled spend (null figures: not in D1 yet). */
  apiKey: KeyListItem;
}

/** The keys, newest first, each with its settled spend as D1 holds it. */
export async function listKeysWithSpend(env: Env, organizationId: string, filter: KeyListFilter = {}): Promise<ListedKey[]> {
  const where = await listCondition(env, organizationId, filter);
  const rows = await getDb(env.DB)
    .select({ key: apiKeys, spend: keySpend })
    .from(apiKeys)
    .leftJoin(keySpend, eq(keySpend.apiKeyId, apiKeys.id))
    .where(where)
    .orderBy(desc(apiKeys.createdAt), apiKeys.id);
  const [unreported, owners] = await Promise.all([readUnreported(env, rows.filter((r) => r.spend === null).map((r) => r.key)), memberLimitStates(env, organizationId)]);
  const now = Date.now();
  return rows.map(({ key, spend }) => ({
    row: key,
    apiKey: withOwner(keyListItem(key, spend ? spendOfRow(spend) : (unreported.get(key.id) ?? null), now), owners.get(key.createdBy)),
  }));
}
