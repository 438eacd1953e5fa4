/**
 * OAuth endpoints answer errors the RFC way (RFC 6749 5.2, RFC 7591 3.2.2): JSON
 * `{error, error_description}`, never the gateway's envelope, because OAuth clients parse these.
 */
import type { Context } from "hono";

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "unsupported_token_type"
  | "access_denied"
  | "server_error";

export class OAuthError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 503,
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** `WWW-Authenticate` for 401 invalid_client with HTTP Basic (RFC 6749 5.2). */
    readonly basicChallenge = false,
  ) {
    super(description);
  }
}

export function oauthErrorResponse(c: Context, err: OAuthError): Response {
  const headers: Record<string, string> = { "cache-control": "no-store", pragma: "no-cache" };
  if (err.basicChallenge) headers["www-authenticate"] = 'Basic realm="switchboard-oauth", charset="UTF-8"';
  return c.json({ error: err.code, error_description: err.description }, err.status, headers);
}
