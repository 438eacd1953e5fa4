/**
 * Single sign-on routes (contract section 8):
 * - `GET|PUT|DELETE /v1/master/sso` (master key) and `/api/sso` (dashboard, owners only): the
 *   organization's OpenID Connect configuration, never with its client secret.
 * - `GET /dashboard/sso/start?email=|organization=`: finds the organization by the e-mail's domain
 *   (or takes the one named) and sends the browser on to its identity provider (`Refresh`).
 * - `GET /dashboard/sso/callback`: the redirect URI; opens a dashboard session (src/sso/flow.ts).
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-types";
import type { Env } from "../env";
import type { DashboardEnv } from "./dashboard/types";
import { gatewayOrigin } from "../env";
import { forbidden, notFound } from "../errors/api-error";
import { validate, validateBody } from "../errors/validation";
import { clientIpOf } from "../iam/cidr";
import { getDb } from "../db/client";
import { organizations } from "../db/schema";
import { inArray } from "drizzle-orm";
import { deleteSsoConfig, organizationsForEmail, readSsoConfig, saveSsoConfig, ssoConfigBody, ssoView, type SsoConfigInput } from "../sso/config";
// The pages are JSX; kept apart so this module stays plain TypeScript.
import { renderChooser, renderContinue, renderRefused } from "../dashboard/pages/sso-sign-in";
import { clearedAttemptCookie, finishSignIn, SsoError, startSignIn } from "../sso/flow";
import { countSsoRequest } from "../auth/sign-in";

/** The configuration calls, whichever door (master key or owner's session) named the organization. */
const ssoConfigCalls = {
  async read(env: Env, organizationId: string, origin: string) {
    const row = await readSsoConfig(env, organizationId);
    return { sso: row ? ssoView(row, origin) : null };
  },
  async save(env: Env, organizationId: string, origin: string, body: SsoConfigInput) {
    return { sso: ssoView(await saveSsoConfig(env, organizationId, body), origin) };
  },
  async remove(env: Env, organizationId: string) {
    if (!(await deleteSsoConfig(env, organizationId))) throw notFound("Single sign-on is not configured for this organization.");
    return { message: "Single sign-on removed; members sign in with their passwords again." };
  },
};

export const masterSsoRoutes = new Hono<AppEnv>();
masterSsoRoutes.get("/", async (c) => c.json(await ssoConfigCalls.read(c.env, c.get("master").organizationId, gatewayOrigin(c.env, c.req.raw))));
masterSsoRoutes.put("/", validateBody(ssoConfigBody), async (c) => c.json(await ssoConfigCalls.save(c.env, c.get("master").organizationId, gatewayOrigin(c.env, c.req.raw), c.req.valid("json"))));
masterSsoRoutes.delete("/", async (c) => c.json(await ssoConfigCalls.remove(c.env, c.get("master").organizationId)));

export const dashboardSsoRoutes = new Hono<DashboardEnv>();
// Owners only: the configuration decides who may enter the organization at all.
dashboardSsoRoutes.use("*", async (c, next) => {
  if (c.get("session").role !== "owner") throw forbidden("Only owners can configure single sign-on.");
  await next();
});
dashboardSsoRoutes.get("/", async (c) => c.json(await ssoConfigCalls.read(c.env, c.get("session").organizationId, gatewayOrigin(c.env, c.req.raw))));
dashboardSsoRoutes.put("/", validateBody(ssoConfigBody), async (c) => c.json(await ssoConfigCalls.save(c.env, c.get("session").organizationId, gatewayOrigin(c.env, c.req.raw), c.req.valid("json"))));
dashboardSsoRoutes.delete("/", async (c) => c.json(await ssoConfigCalls.remove(c.env, c.get("session").organizationId)));

const startQuery = z.object({
  email: z.string().trim().toLowerCase().email().max(320).optional(),
  organization: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
});

export const ssoPages = new Hono<AppEnv>();

const refused = (c: Context<AppEnv>, status: 400 | 403 | 404, message: string) => {
  c.header("cache-control", "no-store");
  return c.html(renderRefused(message), status);
};

ssoPages.get("/start", validate("query", startQuery), async (c) => {
  const { email, organization } = c.req.valid("query");
  // Before the lookup and any discovery: a flood from one address costs one counter each.
  await countSsoRequest(c.env, c.req.raw.headers, "start");
  let rows = organization ? [await readSsoConfig(c.env, organization)].filter((r) => r !== undefined) : email ? await organizationsForEmail(c.env, email) : [];
  if (organization && email) rows = rows.filter((r) => r.allowedDomains.includes(email.split("@").at(-1) ?? ""));
  if (rows.length === 0) return refused(c, 404, email ? `No organization lets ${email} sign in with SSO. Sign in with your password, or ask an owner to allow your e-mail domain.` : "Enter your work e-mail to sign in with SSO.");
  if (rows.length > 1) {
    const names = await getDb(c.env.DB).select({ id: organizations.id, name: organizations.name }).from(organizations).where(inArray(organizations.id, rows.map((r) => r.organizationId)));
    c.header("cache-control", "no-store");
    return c.html(renderChooser(email ?? "", names));
  }
  const [row] = rows;
  if (!row) return refused(c, 404, "Single sign-on is not configured.");
  try {
    const { location, cookie } = await startSignIn(c.env, row, gatewayOrigin(c.env, c.req.raw), email ?? null);
    c.header("set-cookie", cookie);
    c.header("cache-control", "no-store");
    // Not a 302: the sign-in form posts here, and Chrome applies the page's `form-action 'self'`
    // to a redirect that follows a form. A `Refresh` is a navigation of its own.
    c.header("refresh", `0; url=${location}`);
    return c.html(renderContinue(location));
  } catch (err) {
    console.warn("sso start failed", err instanceof Error ? err.message.slice(0, 300) : String(err));
    return refused(c, 400, "The organization's identity provider could not be reached. Try again later or sign in with your password.");
  }
});

ssoPages.get("/callback", async (c) => {
  // Before the cookie is opened and the provider called; a counter apart from start's.
  await countSsoRequest(c.env, c.req.raw.headers, "callback");
  c.header("cache-control", "no-store");
  c.header("set-cookie", clearedAttemptCookie());
  try {
    const { session } = await finishSignIn(c.env, new URL(c.req.url), c.req.header("cookie"), gatewayOrigin(c.env, c.req.raw), clientIpOf(c.req.raw.headers));
    c.header("set-cookie", session.cookie, { append: true });
    return c.redirect("/dashboard/keys", 303);
  } catch (err) {
    if (err instanceof SsoError) return refused(c, err.status, err.message);
    throw err;
  }
});
