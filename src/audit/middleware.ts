/**
 * Records one audit entry for every state-changing call that succeeded on the master API, the
 * dashboard's session API and the operator API. It sits in front of those routers, so every
 * route (and any added later) is covered the same way whichever door the change came through;
 * the state before and after is read through the resource's own GET route with the caller's
 * credentials, so an entry shows exactly what an admin would have seen, never a secret.
 */
import type { Context, ExecutionContext, MiddlewareHandler } from "hono";
import type { AppEnv, AppVariables } from "../app-types";
import type { Env } from "../env";
import { clientIpOf } from "../iam/cidr";
import { createdId, describeCall, redact, type AuditAction } from "./describe";
import { recordAuditEntry, type AuditActor } from "./store";

/** How the middleware reads a resource's GET route: the app's own fetch, passed in by app.ts. */
export type InternalFetch = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

interface SessionLike { organizationId: string; memberId: string; email: string }

type AuditContext = Context<{ Bindings: Env; Variables: AppVariables & { session?: SessionLike } }>;

function actorOf(c: AuditContext): { actor: AuditActor; organizationId: string | null } | null {
  const session = c.get("session");
  if (session) return { actor: { type: "member", id: session.memberId, email: session.email }, organizationId: session.organizationId };
  const master = c.get("master");
  if (master) return { actor: { type: "master_key", id: master.masterKeyId }, organizationId: master.organizationId };
  if (c.req.path.startsWith("/v1/admin/")) return { actor: { type: "operator", id: "operator" }, organizationId: null };
  return null;
}

/** The GET of the same path with the caller's credentials; undefined when there is none or it fails. */
async function readState(fetchApp: InternalFetch, c: AuditContext): Promise<unknown> {
  const headers = new Headers();
  for (const name of ["authorization", "cookie", "origin", "cf-connecting-ip", "x-forwarded-for"]) {
    const v = c.req.header(name);
    if (v) headers.set(name, v);
  }
  try {
    const res = await fetchApp(new Request(new URL(c.req.path, c.req.url), { headers }), c.env, c.executionCtx);
    if (res.status !== 200 || !res.headers.get("content-type")?.includes("application/json")) {
      await res.body?.cancel();
      return undefined;
    }
    return redact(await res.json());
  } catch {
    return undefined;
  }
}

async function responseJson(res: Response): Promise<unknown> {
  if (!res.headers.get("content-type")?.includes("application/json")) return undefined;
  try {
    return await res.clone().json();
  } catch {
    return undefined;
  }
}

async function requestJson(c: AuditContext): Promise<unknown> {
  if (!c.req.header("content-type")?.includes("application/json")) return undefined;
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

/** Targets an organization has exactly one of: their entries name the organization's id. */
const ORGANIZATION_SINGLETONS = new Set(["organization", "sso"]);

export function auditTrail(fetchApp: InternalFetch): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return next();
    const ctx = c as unknown as AuditContext;
    // Before: only for changes to something that exists (PATCH/PUT/DELETE), read before the change runs.
    const before = method !== "POST" ? await readState(fetchApp, ctx) : undefined;
    await next();
    if (c.res.status >= 400) return;
    const described: AuditAction | null = describeCall(method, c.req.routePath);
    const who = actorOf(ctx);
    if (!described || !who) return;
    const answer = await responseJson(c.res);
    const params = c.req.param() as Record<string, string>;
    const targetId = (described.targetParam ? params[described.targetParam] : undefined) ?? (method === "POST" ? createdId(answer) : null);
    const after = method === "DELETE" ? undefined : method === "POST" ? redact(answer ?? (await requestJson(ctx))) : ((await readState(fetchApp, ctx)) ?? redact(await requestJson(ctx)));
    const organizationId = who.organizationId ?? params.id ?? organizationIdIn(answer) ?? "";
    // A change of the organization itself or of a setting it has one of (SSO) names the
    // organization, as the operator's calls on it do: such a target has no id of its own.
    const ofOrganization = ORGANIZATION_SINGLETONS.has(described.targetType) && organizationId !== "";
    const target = { type: described.targetType, id: targetId ?? (ofOrganization ? organizationId : null) };
    try {
      await recordAuditEntry(c.env, {
        organizationId,
        actor: who.actor,
        action: described.action,
        target,
        before,
        after,
        ip: clientIpOf(c.req.raw.headers),
      });
    } catch (err) {
      // The change itself succeeded and is answered; a lost entry is reported, never a failed call.
      console.error("audit entry not written", described.action, err instanceof Error ? err.message : String(err));
    }
  };
}

/** The organization an operator call created (`POST /v1/admin/organizations` answers it). */
function organizationIdIn(answer: unknown): string | undefined {
  if (answer === null || typeof answer !== "object") return undefined;
  const org = (answer as Record<string, unknown>).organization;
  return org !== null && typeof org === "object" && typeof (org as Record<string, unknown>).id === "string" ? ((org as Record<string, string>).id) : undefined;
}
