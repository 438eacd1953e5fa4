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
 * Request-path reads near the caller: a D1 session that may answer from the nearest read replica
 * (Sessions API, `first-unconstrained`). A replica may lag behind the primary, so a read that
 * would refuse a request (a key not found, a key not live, an older version than its object
 * reports) is asked again with `primaryDb` before it refuses (src/auth/gateway-key.ts). Writes,
 * and reads that must see them, use the binding itself (the primary).
 */
export const replicaDb = (d1: D1Database): Db => drizzle(d1.withSession("first-unconstrained") as unknown as D1Database, { schema });

/** A D1 session whose first read goes to the primary: the answer of record before refusing. */
export const primaryDb = (d1: D1Database): Db => drizzle(d1.withSession("first-primary") as unknown as D1Database, { schema });

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
