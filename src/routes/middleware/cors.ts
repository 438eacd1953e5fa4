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

const ALLOW_ORIGIN = "access-control-allow-origin";
const EXPOSE = "access-control-expose-headers";
const EXPOSED = "x-request-id,retry-after,x-ratelimit-limit,x-ratelimit-remaining,x-ratelimit-reset";

/**
 * Preflights go to Hono's handler. Every other answer gets the same two headers Hono's would set,
 * but after the route answered: Hono's sets them on `c.res` before the route runs, which makes a
 * placeholder Response that every route's own Response is then copied over (a second Response and
 * a header copy per request).
 */
export const gatewayCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = c.req.path;
  if (SERVER_ONLY.some((p) => path === p || path.startsWith(`${p}/`))) return next();
  if (c.req.method === "OPTIONS") return gatewayCorsHandler(c, next);
  await next();
  try {
    c.res.headers.set(ALLOW_ORIGIN, "*");
    c.res.headers.set(EXPOSE, EXPOSED);
  } catch {
    // Immutable headers (a fetched response passed through): copy the response once.
    const res = new Response(c.res.body, c.res);
    res.headers.set(ALLOW_ORIGIN, "*");
    res.headers.set(EXPOSE, EXPOSED);
    c.res = res;
  }
};
