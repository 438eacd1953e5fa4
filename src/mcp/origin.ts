/**
 * Origin validation for `/mcp`, `/sse` and `/messages` (MCP transport spec, DNS rebinding; contract section 7): a request
 * with an `Origin` header is served only when that origin is the gateway's own or listed in
 * `ALLOWED_ORIGINS` (comma-separated origins); any other origin, `null` included, is refused with
 * 403. A request without `Origin` (every non-browser client) is served.
 *
 * The gateway's own origin is `PUBLIC_URL`'s. Without it, the request's own origin counts only
 * when its host is a loopback name or address: a rebinding attacker points their own name at the
 * gateway, so the browser sends `Origin` and `Host` both naming the attacker, and "same origin as
 * the Host header" would let their page in. No DNS answer can make a loopback host name theirs.
 */
import type { Env } from "../env";
import { publicOrigin } from "../env";

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

/** `localhost`, `127.0.0.0/8` or `[::1]` (as URL parsing normalises them: `127.1` is `127.0.0.1`). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** `PUBLIC_URL`'s origin; without it the request's own, if its host is loopback; else none. */
function ownOrigin(env: Env, request: Request): string | null {
  const configured = publicOrigin(env);
  if (configured !== null) return configured;
  const url = new URL(request.url);
  return isLoopbackHost(url.hostname) ? url.origin : null;
}

/** True when the request carries no Origin or an allowed one. */
export function originAllowed(env: Env, request: Request): boolean {
  const header = request.headers.get("origin");
  if (header === null) return true;
  const origin = normalizedOrigin(header);
  if (origin === null) return false;
  return origin === ownOrigin(env, request) || configuredOrigins(env).includes(origin);
}
