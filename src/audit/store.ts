/**
 * The audit log's storage: one D1 row per entry, read back newest first with a cursor, expired
 * after a year by the daily cron.
 */
import { and, desc, eq, gte, lt, lte, or } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { auditLog } from "../db/schema";
import { newId } from "../lib/ids";

export const AUDIT_RETENTION_MS = 365 * 24 * 60 * 60 * 1000;
const DAILY_CRON = "17 3 * * *";

export interface AuditActor {
  type: "member" | "master_key" | "operator";
  id: string;
  email?: string;
}

/** One entry as the API shows it. */
export interface AuditEntry {
  id: string;
  /** ISO 8601. */
  at: string;
  actor: AuditActor;
  action: string;
  target: { type: string; id: string | null };
  before?: unknown;
  after?: unknown;
  ip: string | null;
}

/** What the middleware records: the entry without its id, in its organization, at `at` (ms; default now). */
export interface AuditEntryInput extends Omit<AuditEntry, "id" | "at"> {
  organizationId: string;
  at?: number;
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export async function recordAuditEntry(env: Env, e: AuditEntryInput): Promise<void> {
  await getDb(env.DB).insert(auditLog).values({
    id: newId("aud"),
    organizationId: e.organizationId,
    at: e.at ?? Date.now(),
    actorType: e.actor.type,
    actorId: e.actor.id,
    actorEmail: e.actor.email ?? null,
    action: e.action,
    targetType: e.target.type,
    targetId: e.target.id,
    before: json(e.before),
    after: json(e.after),
    ip: e.ip,
  }).run();
}

type Row = typeof auditLog.$inferSelect;

function entryOf(r: Row): AuditEntry {
  const entry: AuditEntry = {
    id: r.id,
    at: new Date(r.at).toISOString(),
    actor: { type: r.actorType as AuditActor["type"], id: r.actorId, ...(r.actorEmail ? { email: r.actorEmail } : {}) },
    action: r.action,
    target: { type: r.targetType, id: r.targetId },
    ip: r.ip,
  };
  if (r.before !== null) entry.before = JSON.parse(r.before) as unknown;
  if (r.after !== null) entry.after = JSON.parse(r.after) as unknown;
  return entry;
}

/** The cursor is the last entry's time and id: stable while new entries arrive at the top. */
const encodeCursor = (r: Row): string => btoa(`${r.at}:${r.id}`);
function decodeCursor(cursor: string): { at: number; id: string } | null {
  try {
    const [at, id] = atob(cursor).split(":");
    const n = Number(at);
    return Number.isFinite(n) && id ? { at: n, id } : null;
  } catch {
    return null;
  }
}

export interface AuditQuery {
  from?: number;
  to?: number;
  limit: number;
  cursor?: string;
  action?: string;
}

/** One page, newest first; `nextCursor` null on the last page. An unreadable cursor reads from the top. */
export async function listAuditEntries(env: Env, organizationId: string, q: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  const after = q.cursor ? decodeCursor(q.cursor) : null;
  const rows = await getDb(env.DB)
    .select()
    .from(auditLog)
    .where(and(
      eq(auditLog.organizationId, organizationId),
      q.from !== undefined ? gte(auditLog.at, q.from) : undefined,
      q.to !== undefined ? lte(auditLog.at, q.to) : undefined,
      q.action ? eq(auditLog.action, q.action) : undefined,
      after ? or(lt(auditLog.at, after.at), and(eq(auditLog.at, after.at), lt(auditLog.id, after.id))) : undefined,
    ))
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(q.limit + 1)
    .all();
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return { entries: page.map(entryOf), nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null };
}

export async function expireAuditEntries(env: Env, now: number): Promise<number> {
  const result = await getDb(env.DB).delete(auditLog).where(lt(auditLog.at, now - AUDIT_RETENTION_MS)).run();
  return result.meta.changes;
}

export async function auditRetentionJob(env: Env, now: number, cron: string): Promise<void> {
  if (cron !== DAILY_CRON) return;
  await expireAuditEntries(env, now);
}
