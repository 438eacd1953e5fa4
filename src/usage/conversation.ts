/**
 * What a request record keeps for its trace (in `extra`, so it travels the queue, R2 and the D1
 * window with the record and no column changes): the conversation it belongs to (the caller's
 * `x-session-id` header, the body's `user` field), whether its bodies were kept, and the moments of
 * the request before its upstream attempts (admission, response cache read), in ms from its start.
 * The request page draws the timeline from it and links the requests of one conversation.
 */
import type { Env } from "../env";
import type { LogRecord } from "./log-record";
import { REFUND_KIND } from "./request-log";
import { recordFromDbRow } from "./log-record";

/** Longest session id or user kept (longer values are cut: they only link requests). */
const MAX_LABEL = 200;
/** Requests of one conversation shown on a request page, and how far apart in time they may be. */
export const RELATED_LIMIT = 20;
const RELATED_SPAN_MS = 24 * 3_600_000;

/** A phase before the attempts: its start and duration in ms from the request's start. */
export interface Phase {
  at: number;
  ms: number;
}

export interface TraceExtra {
  sessionId?: string;
  user?: string;
  /** The project kept this request's prompt and answer (`logBodies`). */
  bodies?: true;
  admission?: Phase;
  cacheRead?: Phase & { hit: boolean };
}

const label = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v.trim().slice(0, MAX_LABEL) : undefined);

/** The conversation labels of a request: `x-session-id`, else nothing; the body's `user`. */
export function conversationOf(headers: Headers, body: unknown): Pick<TraceExtra, "sessionId" | "user"> {
  const out: Pick<TraceExtra, "sessionId" | "user"> = {};
  const sessionId = label(headers.get("x-session-id"));
  if (sessionId) out.sessionId = sessionId;
  const user = body !== null && typeof body === "object" && !Array.isArray(body) ? label((body as Record<string, unknown>).user) : undefined;
  if (user) out.user = user;
  return out;
}

/** The trace fields of a record (absent on records made before they were kept). */
export function traceOf(r: LogRecord): TraceExtra {
  const e = r.extra ?? {};
  const phase = (v: unknown): Phase | undefined => {
    if (v === null || typeof v !== "object") return undefined;
    const p = v as Record<string, unknown>;
    return typeof p.at === "number" && typeof p.ms === "number" ? { at: p.at, ms: p.ms } : undefined;
  };
  const out: TraceExtra = {};
  if (typeof e.sessionId === "string") out.sessionId = e.sessionId;
  if (typeof e.user === "string") out.user = e.user;
  if (e.bodies === true) out.bodies = true;
  const admission = phase(e.admission);
  if (admission) out.admission = admission;
  const cache = phase(e.cacheRead);
  if (cache) out.cacheRead = { ...cache, hit: (e.cacheRead as Record<string, unknown>).hit === true };
  return out;
}

/**
 * Other requests of the same conversation (same `x-session-id`, else the same `user`) in the
 * project's D1 window, within a day of this one, oldest first. `memberId`: a developer's scope.
 */
export async function relatedRequests(env: Env, r: LogRecord, memberId: string | null): Promise<{ by: "session" | "user"; value: string; rows: LogRecord[] } | null> {
  const t = traceOf(r);
  const by = t.sessionId ? "session" : t.user ? "user" : null;
  if (!by) return null;
  const value = (by === "session" ? t.sessionId : t.user)!;
  const path = by === "session" ? "$.sessionId" : "$.user";
  const res = await env.DB.prepare(
    `SELECT * FROM request_logs WHERE organization_id = ?1 AND project_id = ?2 AND created_at >= ?3 AND created_at < ?4 AND kind <> ?5
       AND json_extract(extra, '${path}') = ?6 AND (?7 IS NULL OR api_key_id IN (SELECT id FROM api_keys WHERE project_id = ?2 AND created_by = ?7))
     ORDER BY created_at, id LIMIT ${RELATED_LIMIT + 1}`,
  )
    .bind(r.organizationId, r.projectId, r.createdAt - RELATED_SPAN_MS, r.createdAt + RELATED_SPAN_MS, REFUND_KIND, value, memberId)
    .all<Record<string, unknown>>();
  return { by, value, rows: res.results.map(recordFromDbRow) };
}
