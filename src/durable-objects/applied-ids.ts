/**
 * Ids of settlement flushes a budget object (KeyState) has applied, kept for APPLIED_ID_TTL_MS.
 * An isolate whose flush call failed cannot know whether the object applied it (the call may have
 * landed and only its answer been lost), so it resends the same settlements under the same id
 * (src/members/budget.ts); the object applies an id once, so spend never falls behind the request
 * records and is never counted twice.
 */

/** How long an id is remembered: isolates give up resending a flush well before (RESEND_FOR_MS). */
export const APPLIED_ID_TTL_MS = 60 * 60 * 1000;

/** Storages whose table exists (created on first use: most objects never see a flush id). */
const ready = new WeakSet<DurableObjectStorage>();

/**
 * Records `id` and answers true the first time it is seen within APPLIED_ID_TTL_MS; false for a
 * repeat. Synchronous (SQLite-backed storage), so the caller's settlement in the same turn is
 * stored atomically with the id.
 */
export function firstApplication(storage: DurableObjectStorage, id: string, now: number): boolean {
  if (!ready.has(storage)) {
    storage.sql.exec("CREATE TABLE IF NOT EXISTS applied_flush (id TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    storage.sql.exec("CREATE INDEX IF NOT EXISTS applied_flush_at ON applied_flush (at)");
    ready.add(storage);
  }
  storage.sql.exec("DELETE FROM applied_flush WHERE at < ?", now - APPLIED_ID_TTL_MS);
  // A row comes back only when the id was new: the check and the record are one statement.
  return storage.sql.exec("INSERT INTO applied_flush (id, at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING RETURNING id", id, now).toArray().length > 0;
}
