/** @jsxImportSource hono/jsx */
/**
 * Audit log page (owners and admins): who changed what, newest first, read from the same store as
 * `GET /api/audit-log`; filter by action, page with the store's cursor, and export the filtered
 * page as CSV through the session API (`format=csv`), so the file matches what the API returns.
 */
import type { FC } from "hono/jsx";
import * as z from "zod";
import type { Env } from "../../env";
import { listAuditEntries, type AuditEntry } from "../../audit/store";
import { DataTable } from "../table";
import type { PageContext } from "../context";
import { Layout, PageHead } from "../layout";
import { formatDate } from "../format";

const PAGE_SIZE = 50;
/** The CSV export takes the API's largest page. */
const EXPORT_LIMIT = 500;

/** The page's query; bad values fall back to the unfiltered first page (as the other pages do). */
export const auditPageQuery = z.object({
  action: z.string().regex(/^[a-z_]+\.[a-z_]+$/).optional().catch(undefined),
  cursor: z.string().max(200).optional().catch(undefined),
});
export type AuditPageQuery = z.infer<typeof auditPageQuery>;

export async function loadAuditLog(env: Env, ctx: PageContext, q: AuditPageQuery) {
  const page = await listAuditEntries(env, ctx.session.organizationId, { limit: PAGE_SIZE, cursor: q.cursor, action: q.action });
  return { q, ...page };
}

type AuditData = Awaited<ReturnType<typeof loadAuditLog>>;

function href(base: string, params: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${base}?${s}` : base;
}

const ACTOR_LABEL: Record<AuditEntry["actor"]["type"], string> = { member: "member", master_key: "master key", operator: "operator" };

function actorOf(e: AuditEntry): string {
  if (e.actor.email) return e.actor.email;
  return `${ACTOR_LABEL[e.actor.type] ?? e.actor.type} ${e.actor.id}`;
}

export const AuditLogPage: FC<{ ctx: PageContext; data: AuditData }> = ({ ctx, data }) => (
  <Layout title="Audit log" ctx={ctx}>
    <PageHead title="Audit log" sub="Every change to keys, limits, rules, members, settings and credits, by whom, from where. Kept one year.">
      <a class="btn" href={href("/api/audit-log", { format: "csv", limit: EXPORT_LIMIT, action: data.q.action, cursor: data.q.cursor })} download="audit-log.csv">
        Export CSV
      </a>
    </PageHead>
    <section class="card" aria-labelledby="audit-title">
      <h2 id="audit-title" class="sr-only">
        Entries
      </h2>
      <form method="get" action="/dashboard/audit-log" class="actions">
        <div class="field">
          <label for="audit-action">Action</label>
          <input id="audit-action" name="action" value={data.q.action ?? ""} pattern="[a-z_]+\.[a-z_]+" placeholder="e.g. key.create" aria-describedby="audit-action-hint" />
          <p class="hint" id="audit-action-hint">
            One action such as <code>key.create</code>, <code>key.roll</code> or <code>iam_rule.create</code>; empty shows all.
          </p>
        </div>
        <button class="btn" type="submit">
          Filter
        </button>
        {data.q.action ? (
          <a class="btn" href="/dashboard/audit-log">
            Clear
          </a>
        ) : null}
      </form>
      <DataTable
        caption="Audit log"
        head={["Time", "Actor", "Action", "Target", "IP"]}
        rows={data.entries}
        empty={data.q.action ? `No ${data.q.action} entries.` : "No entries yet."}
        cells={(e) => [
          formatDate(e.at),
          actorOf(e),
          <code>{e.action}</code>,
          e.target.id ? (
            <>
              {e.target.type} <code>{e.target.id}</code>
            </>
          ) : (
            e.target.type
          ),
          e.ip ?? "—",
        ]}
      />
      <nav class="actions" aria-label="Audit log pages">
        {data.q.cursor ? (
          <a class="btn" href={href("/dashboard/audit-log", { action: data.q.action })}>
            Newest
          </a>
        ) : null}
        {data.nextCursor ? (
          <a class="btn" href={href("/dashboard/audit-log", { action: data.q.action, cursor: data.nextCursor })}>
            Older entries
          </a>
        ) : null}
      </nav>
    </section>
  </Layout>
);

/** What a developer sees at the page's address: the log is for owners and admins. */
export const AuditLogForbiddenPage: FC<{ ctx: PageContext }> = ({ ctx }) => (
  <Layout title="Audit log" ctx={ctx}>
    <PageHead title="Audit log" />
    <div class="card">
      <p>Only owners and admins of the organization can read the audit log.</p>
    </div>
  </Layout>
);
