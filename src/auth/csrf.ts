/**
 * CSRF protection for the cookie-authenticated dashboard API. Two independent checks:
 *  - a cross-site `Origin` (or, without Origin, `Sec-Fetch-Site: cross-site`) is refused on every
 *    state-changing request, including sign-in (login CSRF);
 *  - with a session, state-changing requests must echo the session's CSRF token (returned at
 *    sign-in) in `x-csrf-token`.
 */
import type { Context } from "hono";
import { forbidden } from "../errors/api-error";
import { timingSafeEqual } from "../lib/crypto";

export const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const isStateChanging = (method: string): boolean => !SAFE_METHODS.has(method.toUpperCase());

/** Throws 403 when the request comes from another site. */
export function assertSameOrigin(c: Context): void {
  const origin = c.req.header("origin");
  // A form posted from a page with `Referrer-Policy: no-referrer` (every HTML page here) carries
  // `Origin: null`; the browser's own `Sec-Fetch-Site: same-origin` then tells it came from us.
  const sameOriginForm = origin === "null" && c.req.header("sec-fetch-site") === "same-origin";
  if (origin !== undefined && !sameOriginForm) {
    if (origin !== new URL(c.req.url).origin) throw forbidden("Cross-site request refused.", "csrf_origin");
    return;
  }
  if (c.req.header("sec-fetch-site") === "cross-site") throw forbidden("Cross-site request refused.", "csrf_origin");
}

/** Throws 403 unless `x-csrf-token` equals the session's token. */
export function assertCsrfToken(c: Context, expected: string): void {
  const got = c.req.header(CSRF_HEADER);
  if (!got || !timingSafeEqual(got, expected)) {
    throw forbidden(`Missing or invalid CSRF token: send the csrfToken from sign-in in the '${CSRF_HEADER}' header.`, "csrf_token");
  }
}
