/**
 * Organization credit balance for the "credits > 0" admission rule, from an isolate cache:
 * fresh for FRESH_MS; after that the stale value is used while one background read refreshes it
 * (never awaited on a warm isolate). Only the first request of an organization in an isolate
 * waits for D1. Settlement debits the balance in D1; this cache lags it by a few seconds.
 */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { organizations } from "../db/schema";
import type { Pico } from "../billing/money";

const FRESH_MS = 5_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  value: Pico;
  at: number;
  refreshing: Promise<Pico> | null;
}

const entries = new Map<string, Entry>();

async function load(env: Env, orgId: string): Promise<Pico> {
  const rows = await getDb(env.DB)
    .select({ credits: sql<string>`CAST(${organizations.creditsPico} AS TEXT)` })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .limit(1);
  const v = rows[0]?.credits;
  return v ? BigInt(v) : 0n;
}

function refresh(env: Env, orgId: string, entry: Entry | undefined): Promise<Pico> {
  if (entry?.refreshing) return entry.refreshing;
  const p = load(env, orgId).then(
    (value) => {
      if (entries.size >= MAX_ENTRIES && !entries.has(orgId)) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(orgId, { value, at: Date.now(), refreshing: null });
      return value;
    },
    (err: unknown) => {
      if (entry) entry.refreshing = null;
      throw err;
    },
  );
  if (entry) entry.refreshing = p;
  return p;
}

export async function orgCredits(env: Env, orgId: string, waitUntil: (p: Promise<unknown>) => void, now = Date.now()): Promise<Pico> {
  const entry = entries.get(orgId);
  if (!entry) return refresh(env, orgId, undefined);
  if (now - entry.at >= FRESH_MS && !entry.refreshing) waitUntil(refresh(env, orgId, entry).catch(() => undefined));
  return entry.value;
}

/** Tests only. */
export function clearCreditsCache(): void {
  entries.clear();
}
