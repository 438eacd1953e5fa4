import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = DrizzleD1Database<typeof schema>;

const cache = new WeakMap<D1Database, Db>();

/** One drizzle instance per D1 binding per isolate. */
export function getDb(d1: D1Database): Db {
  let db = cache.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    cache.set(d1, db);
  }
  return db;
}

/**
 * Reads on the request path (docs/architecture.md, "D1 read replicas on the request path"): a new
 * D1 session whose reads may go to the nearest read replica (`first-unconstrained`). Its answers
 * can lag the primary, so they may only ever admit: whoever reads through it confirms anything
 * that would refuse (no row, a dead key, an older version) with `primaryReads` before answering.
 * Without read replication enabled, both sessions read the primary. One session per lookup, so
 * the lookup's statements see one consistent snapshot (the Sessions API's sequential consistency).
 */
export function replicaReads(d1: D1Database): Db {
  return drizzle(sessionAsDatabase(d1.withSession("first-unconstrained")), { schema });
}

/** Reads that must see the latest writes: a session whose first statement goes to the primary. */
export function primaryReads(d1: D1Database): Db {
  return drizzle(sessionAsDatabase(d1.withSession("first-primary")), { schema });
}

// drizzle's D1 driver uses only `prepare` and `batch`, which a session has like the binding.
const sessionAsDatabase = (session: D1DatabaseSession): D1Database => session as unknown as D1Database;

/**
 * Most parameters one D1 statement may bind (developers.cloudflare.com/d1/platform/limits/,
 * "Maximum bound parameters per query"); beyond it D1 fails with "too many SQL variables". Local
 * D1 (workerd) enforces the same limit. `inArray(column, list)` binds one parameter per element,
 * so a list that grows with user data must not reach a statement: express it as a join or a
 * subquery on the filter that produced it (nothing bound per element). `inSlices` is for the rest.
 */
export const D1_MAX_BOUND_PARAMETERS = 100;

/**
 * Runs `query` on consecutive slices of `items`, each small enough that the slice plus the
 * statement's `otherParameters` (every other value it binds) stays within
 * D1_MAX_BOUND_PARAMETERS, and returns the results concatenated in slice order (an empty list runs
 * nothing). Only for a list no query can produce, e.g. a page of ids ranked in code.
 */
export async function inSlices<T, R>(items: readonly T[], otherParameters: number, query: (slice: T[]) => Promise<R[]>): Promise<R[]> {
  const size = D1_MAX_BOUND_PARAMETERS - otherParameters;
  if (!Number.isInteger(otherParameters) || otherParameters < 0 || size < 1) {
    throw new RangeError(`inSlices: ${otherParameters} other parameters leave no room under D1's ${D1_MAX_BOUND_PARAMETERS}`);
  }
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  const out: R[] = [];
  for (const rows of await Promise.all(slices.map(query))) out.push(...rows);
  return out;
}
