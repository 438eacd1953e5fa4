/**
 * The audit log's read routes: `GET /v1/master/audit-log` (contract section 8) and the session
 * API's `GET /api/audit-log` behind the dashboard page (owners and admins). `?format=csv` exports.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import type { DashboardEnv } from "./dashboard/types";
import { validate } from "../errors/validation";
import { forbidden } from "../errors/api-error";
import { csvCell } from "../lib/csv";
import { listAuditEntries, type AuditEntry } from "../audit/store";
import { isoInstant } from "../lib/iso-instant";

export const auditQuery = z.object({
  from: isoInstant("from").optional(),
  to: isoInstant("to").optional(),
  limit: z.coerce.number().int().min(1, "must be 1 to 500").max(500, "must be 1 to 500").default(100),
  cursor: z.string().max(200).optional(),
  action: z.string().regex(/^[a-z_]+\.[a-z_]+$/, "is an action such as key.create").optional(),
  format: z.enum(["json", "csv"]).default("json"),
}).refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: "'from' must not be after 'to'", path: ["from"] });

type AuditQueryInput = z.infer<typeof auditQuery>;

const CSV_HEADER = ["at", "actor_type", "actor_id", "actor_email", "action", "target_type", "target_id", "ip", "before", "after"];

function csvOf(entries: AuditEntry[]): string {
  const rows = entries.map((e) => [e.at, e.actor.type, e.actor.id, e.actor.email ?? "", e.action, e.target.type, e.target.id ?? "", e.ip ?? "", e.before === undefined ? "" : JSON.stringify(e.before), e.after === undefined ? "" : JSON.stringify(e.after)]);
  return [CSV_HEADER, ...rows].map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

async function answer(c: Context, organizationId: string, q: AuditQueryInput): Promise<Response> {
  const page = await listAuditEntries(c.env, organizationId, { from: q.from, to: q.to, limit: q.limit, cursor: q.cursor, action: q.action });
  c.header("cache-control", "no-store");
  if (q.format === "csv") {
    return c.body(csvOf(page.entries), 200, { "content-type": "text/csv; charset=utf-8", "content-disposition": 'attachment; filename="audit-log.csv"' });
  }
  return c.json(page);
}

export const masterAuditRoutes = new Hono<AppEnv>();
masterAuditRoutes.get("/", validate("query", auditQuery), (c) => answer(c, c.get("master").organizationId, c.req.valid("query")));

export const dashboardAuditRoutes = new Hono<DashboardEnv>();
dashboardAuditRoutes.get("/", validate("query", auditQuery), (c) => {
  const session = c.get("session");
  if (session.role === "developer") throw forbidden("Only owners and admins read the audit log.", "role_required");
  return answer(c, session.organizationId, c.req.valid("query"));
});
