/**
 * Isolate-local cache of KeyContext by secret fingerprint. It is only an optimisation: every use is
 * confirmed by the key's KeyState DO (`check`/`admit`), whose answer carries the key's current
 * version; an older cached version is dropped and reloaded. A hard TTL bounds staleness of data
 * the DO does not version (nothing today, but cheap insurance).
 */
import type { KeyContext } from "../context/key-context";

const MAX_ENTRIES = 5000;
const TTL_MS = 60_000;

const entries = new Map<string, KeyContext>();

export function getCachedContext(fp: string, now = Date.now()): KeyContext | undefined {
  const ctx = entries.get(fp);
  if (!ctx) return undefined;
  if (now - ctx.loadedAt > TTL_MS) {
    entries.delete(fp);
    return undefined;
  }
  return ctx;
}

export function cacheContext(fp: string, ctx: KeyContext): void {
  if (entries.size >= MAX_ENTRIES) {
    // Map iterates in insertion order: drop the oldest.
    const oldest = entries.keys().next().value;
    if (oldest !== undefined) entries.delete(oldest);
  }
  entries.set(fp, ctx);
}

export function evictContext(fp: string): void {
  entries.delete(fp);
}

/** Tests only. */
export function clearKeyCache(): void {
  entries.clear();
}
