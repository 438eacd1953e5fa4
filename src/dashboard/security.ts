/**
 * Security headers of every HTML page the Worker serves (dashboard, OAuth sign-in/consent, the
 * `/mcp` setup page): scripts and styles only from this origin (no inline script or style), no
 * framing, no referrer. OAuth pages may not restrict `form-action`: Chrome applies it to the
 * redirect to the client's `redirect_uri` after the consent form is posted.
 */
import type { MiddlewareHandler } from "hono";

const BASE = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
];

export function contentSecurityPolicy(path: string): string {
  return (path.startsWith("/oauth/") ? BASE : [...BASE, "form-action 'self'"]).join("; ");
}

/** Adds the headers to any `text/html` response that does not set its own policy. */
export const htmlSecurityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const type = c.res.headers.get("content-type") ?? "";
  if (!type.startsWith("text/html") || c.res.headers.has("content-security-policy")) return;
  const set = (h: Headers) => {
    h.set("content-security-policy", contentSecurityPolicy(c.req.path));
    h.set("referrer-policy", "no-referrer");
    h.set("x-content-type-options", "nosniff");
    h.set("x-frame-options", "DENY");
    h.set("cross-origin-opener-policy", "same-origin");
  };
  try {
    set(c.res.headers);
  } catch {
    const res = new Response(c.res.body, c.res);
    set(res.headers);
    c.res = res;
  }
};
