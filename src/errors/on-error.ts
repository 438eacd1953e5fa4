import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, envelope, type ErrorType } from "./api-error";

const typeForStatus = (status: number): ErrorType =>
  status === 401
    ? "authentication_error"
    : status === 403
      ? "permission_error"
      : status === 404
        ? "not_found_error"
        : status === 429
          ? "rate_limit_error"
          : status >= 500
            ? "api_error"
            : "invalid_request_error";

/** The single place where thrown errors become HTTP responses (spec 2.7 envelope). */
export function onError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.extraHeaders)) c.header(k, v);
    return c.json(err.toEnvelope(), err.status);
  }
  if (err instanceof HTTPException) {
    // Hono's own errors (e.g. body limit, malformed JSON in a validator): keep status, hide internals.
    const status = err.status as ContentfulStatusCode;
    const message = err.message || (status === 413 ? "Request body too large" : "Bad request");
    return c.json(envelope(message, typeForStatus(status), status === 413 ? "request_too_large" : "invalid_request"), status);
  }
  console.error("unhandled error", err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ""}` : String(err));
  return c.json(envelope("Internal server error", "api_error", "internal_error"), 500);
}

export function notFoundHandler(c: Context): Response {
  return c.json(envelope(`No route for ${c.req.method} ${new URL(c.req.url).pathname}`, "not_found_error", "route_not_found"), 404);
}
