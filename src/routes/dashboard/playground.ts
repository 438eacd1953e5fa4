/**
 * The dashboard playground's chat door: `POST /api/playground/chat/completions?project=`. The
 * person is signed in (session cookie + CSRF token); the request runs as the project's
 * auto-generated playground key (its secret is never stored, so it cannot be presented), through
 * the same pipeline as `POST /v1/chat/completions`: admission, the key's rules, routing, limits,
 * billing and the request log, streaming or not. A project without its own playground key (one
 * created after the organization) uses the organization's default project's.
 */
import { Hono } from "hono";
import * as z from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../../app-types";
import type { DashboardEnv } from "./types";
import { playgroundKeyFor } from "../../actions/playground";
import { badRequest, notFound } from "../../errors/api-error";
import { validate } from "../../errors/validation";
import { readKeyContextById } from "../../context/key-context";
import { ipRefusal } from "../../auth/gateway-key";
import { startRate } from "../../rate-limits/admission";
import { clientIpOf, gatewayRequest } from "../middleware/gateway-request";
import { executeChatCompletion } from "../chat/execute";
import { PLAYGROUND_APP } from "../../usage/source-app";

export const PLAYGROUND_PATHS = ["/playground/*"] as const;

const playgroundQuery = z.object({ project: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "is a project id").optional() });

export const dashboardPlaygroundRoutes = new Hono<DashboardEnv>();

dashboardPlaygroundRoutes.post("/playground/chat/completions", validate("query", playgroundQuery), async (c) => {
  const s = c.get("session");
  const key = await playgroundKeyFor(c.env, s.organizationId, c.req.valid("query").project);
  if (!key) throw notFound("This organization has no playground key.", "playground_key_missing");
  const auth = await readKeyContextById(c.env.DB, key.id);
  if (!auth) throw notFound("This organization has no playground key.", "playground_key_missing");
  // The playground key's own IP rules hold here as on /v1 (the address is the person's browser).
  const refused = ipRefusal(auth, clientIpOf(c.req.raw.headers));
  if (refused) throw refused;
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw badRequest("The request body is not valid JSON.", null, "invalid_json");
  }
  // The session routes' context carries every gateway variable (DashboardEnv extends AppEnv's).
  const gateway = c as unknown as Context<AppEnv>;
  const ctx = startRate(gateway, auth);
  return executeChatCompletion({ ...gatewayRequest(gateway, ctx), sourceApp: PLAYGROUND_APP, headers: c.req.raw.headers, body });
});
