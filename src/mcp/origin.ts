/**
 * Origin validation for `/mcp` (MCP transport spec, DNS rebinding; contract section 7): a request
 * with an `Origin` header is served only when that origin is the gateway's own (`PUBLIC_URL`'s,
 * else the request's) or listed in `ALLOWED_ORIGINS` (comma-separated origins); any other origin,
 * `null` included, is refused with 403. A request without `Origin` (every non-browser client) is
 * served.
 */
import type { Env } from "../env";
import { gatewayOrigin } from "../env";

/** `https://App.example.com/` -> `https://app.example.com`; null when not an http(s) origin. */
function normalizedOrigin(value: string): string | null {
  try {
    const url = new URL(value.trim());
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}

/** The origins `ALLOWED_ORIGINS` lists (entries that are not http(s) origins are ignored). */
export function configuredOrigins(env: Env): string[] {
  return (env.ALLOWED_ORIGINS ?? "")
    .split(",")
    .map(normalizedOrigin)
    .filter((o): o is string => o !== null);
}

/** True when the request carries no Origin or an allowed one. */
export function originAllowed(env: Env, request: Request): boolean {
  const header = request.headers.get("origin");
  if (header === null) return true;
  const origin = normalizedOrigin(header);
  if (origin === null) return false;
  return origin === gatewayOrigin(env, request) || configuredOrigins(env).includes(origin);
}
