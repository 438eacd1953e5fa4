/** @jsxImportSource hono/jsx */
/**
 * The dashboard UI at `/dashboard` (and `/login`): server-rendered pages over the same modules as
 * the master and session APIs; every change is a JSON call to the session API made by the one
 * static client script. Queries are validated with zod; bad values fall back to defaults.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import { readSession } from "../auth/session";
import { requirePage, type PageEnv } from "./context";
import { SignInPage } from "./pages/sign-in";
import { AcceptPage } from "./pages/accept";
import { KeysPage, loadKeys } from "./pages/keys";
import { UsagePage, loadUsage } from "./pages/usage";
import { AccessPage, loadAccess } from "./pages/access";
import { OrganizationPage, loadOrganizationPage } from "./pages/organization";
import { NotFoundPage } from "./pages/not-found";
import { PlatformPage, loadPlatformPage } from "./pages/platform";
import { RequestDetailPage, RequestsPage, loadRequest, loadRequests, requestsQuery, downloadScope } from "./pages/requests";
import { AuditLogForbiddenPage, AuditLogPage, auditPageQuery, loadAuditLog } from "./pages/audit-log";
import { isAdmin } from "./context";
import { PlaygroundPage, loadPlayground } from "./pages/playground";
import { exportContentType, exportStream, periodQuery } from "../usage/log-export";
import { validate } from "../errors/validation";
import { gatewayOrigin } from "../env";
import { periodParam } from "./period";

const id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
const usageQuery = z.object({ from: periodParam, to: periodParam, granularity: z.enum(["day", "hour"]).catch("day").default("day") });
const accessQuery = z.object({ key: id.optional().catch(undefined), member: id.optional().catch(undefined), team: id.optional().catch(undefined) });
const signInQuery = z.object({ org: id.optional().catch(undefined) });
const keysQuery = z.object({ edit: id.optional().catch(undefined) });

export const loginRedirect = new Hono<AppEnv>();
loginRedirect.get("/", (c) => c.redirect("/dashboard/sign-in", 302));

export const dashboardPages = new Hono<PageEnv>();

dashboardPages.get("/", (c) => c.redirect("/dashboard/keys", 302));

dashboardPages.get("/sign-in", async (c) => {
  const { org } = signInQuery.parse(c.req.query());
  const session = await readSession(c.env, c.req.header("cookie"));
  // Already signed in to that organization (or no switch asked): straight to the dashboard.
  if (session && (!org || org === session.organizationId)) return c.redirect("/dashboard/keys", 302);
  c.header("cache-control", "no-store");
  return c.html(<SignInPage organizationId={org ?? null} email={session?.email ?? null} />);
});

// No session needed: the e-mailed token (in the fragment, read by the client script) is the credential.
dashboardPages.get("/accept", (c) => {
  c.header("cache-control", "no-store");
  return c.html(<AcceptPage />);
});

dashboardPages.use("/keys", requirePage);
dashboardPages.use("/usage", requirePage);
dashboardPages.use("/access", requirePage);
dashboardPages.use("/organization", requirePage);
dashboardPages.use("/platform", requirePage);
dashboardPages.use("/requests", requirePage);
dashboardPages.use("/requests/:id", requirePage);
dashboardPages.use("/usage/download", requirePage);
dashboardPages.use("/audit-log", requirePage);
dashboardPages.use("/playground", requirePage);

dashboardPages.get("/playground", async (c) => {
  const ctx = c.get("page");
  return c.html(<PlaygroundPage ctx={ctx} data={await loadPlayground(c.env, ctx)} />);
});

dashboardPages.get("/keys", async (c) => {
  const ctx = c.get("page");
  const { edit } = keysQuery.parse(c.req.query());
  return c.html(<KeysPage ctx={ctx} editId={edit} {...await loadKeys(c.env, ctx)} />);
});

dashboardPages.get("/usage", async (c) => {
  const ctx = c.get("page");
  const q = usageQuery.parse(c.req.query());
  return c.html(<UsagePage ctx={ctx} q={q} data={await loadUsage(c.env, ctx, q)} />);
});

dashboardPages.get("/access", async (c) => {
  const ctx = c.get("page");
  return c.html(<AccessPage ctx={ctx} data={await loadAccess(c.env, ctx, accessQuery.parse(c.req.query()))} />);
});

dashboardPages.get("/organization", async (c) => {
  const ctx = c.get("page");
  return c.html(<OrganizationPage ctx={ctx} data={await loadOrganizationPage(c.env, ctx, gatewayOrigin(c.env, c.req.raw))} />);
});


/** The app's not-found handler for `/dashboard/...` paths (wired in src/app.ts): an HTML 404 page, whatever pages are added. */
export function dashboardNotFound(c: Context): Response | Promise<Response> {
  c.header("cache-control", "no-store");
  return c.html(<NotFoundPage path={c.req.path} />, 404);
}
dashboardPages.get("/platform", async (c) => {
  const ctx = c.get("page");
  return c.html(<PlatformPage ctx={ctx} data={await loadPlatformPage(c.env, ctx)} />);
});

dashboardPages.get("/requests", async (c) => {
  const ctx = c.get("page");
  return c.html(<RequestsPage ctx={ctx} data={await loadRequests(c.env, ctx, requestsQuery.parse(c.req.query()))} />);
});

dashboardPages.get("/requests/:id", async (c) => {
  const ctx = c.get("page");
  const at = Number(c.req.query("at"));
  return c.html(<RequestDetailPage ctx={ctx} data={await loadRequest(c.env, ctx, c.req.param("id"), Number.isFinite(at) ? at : null)} />);
});

dashboardPages.get("/audit-log", async (c) => {
  const ctx = c.get("page");
  if (!isAdmin(ctx.session)) return c.html(<AuditLogForbiddenPage ctx={ctx} />, 403);
  return c.html(<AuditLogPage ctx={ctx} data={await loadAuditLog(c.env, ctx, auditPageQuery.parse(c.req.query()))} />);
});

/** The period's request records of the session's scope (Usage page download), NDJSON or `format=csv`. */
dashboardPages.get("/usage/download", validate("query", periodQuery), async (c) => {
  const ctx = c.get("page");
  const { from, to } = c.req.valid("query");
  const scope = await downloadScope(c.env, ctx);
  const format = c.req.query("format") === "csv" ? "csv" : "ndjson";
  const name = `requests-${new Date(from).toISOString().slice(0, 10)}-${new Date(to).toISOString().slice(0, 10)}.${format === "csv" ? "csv" : "ndjson"}`;
  const body = scope ? exportStream(c.env, scope, from, to, format) : "";
  return new Response(body, { headers: { "content-type": exportContentType(format), "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" } });
});
