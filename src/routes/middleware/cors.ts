/**
 * CORS for the gateway API (`/v1/*`), so a browser or mobile web client can call it directly with
 * an end-user session token (src/platform/, docs/platform-keys.md). Credentials travel in the
 * `Authorization` header, never in cookies, so any origin may call: `Access-Control-Allow-Origin: *`
 * without credentials, preflights answered with 204. The master, operator and platform-key APIs
 * (`/v1/master`, `/v1/admin`, `/v1/sessions`) get no CORS headers: their secrets belong on servers.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../../app-types";

const SERVER_ONLY = ["/v1/master", "/v1/admin", "/v1/sessions"];

const gatewayCorsHandler = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
  // Empty: the headers of the preflight's Access-Control-Request-Headers are allowed.
  allowHeaders: [],
  exposeHeaders: ["x-request-id", "retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
  maxAge: 86_400,
});

export const gatewayCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = c.req.path;
  if (SERVER_ONLY.some((p) => path === p || path.startsWith(`${p}/`))) return next();
  return gatewayCorsHandler(c, next);
};
