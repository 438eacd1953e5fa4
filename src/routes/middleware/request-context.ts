import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-types";
import { ApiError, badRequest } from "../../errors/api-error";
import { newId } from "../../lib/ids";

/** Largest accepted request body (bytes). Chat requests with inline images fit; documented in README. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
/** Paths that take something other than JSON (OAuth forms, MCP checks its own headers). */
const NON_JSON_PREFIXES = ["/oauth/", "/mcp", "/messages", "/sse", "/api/auth/sign-out"];

/**
 * Every request: a request id (echoed as `x-request-id`), a body size limit and a JSON
 * content-type check for JSON APIs, all answered with the error envelope.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = newId("req");
  c.set("requestId", requestId);
  c.header("x-request-id", requestId);

  if (BODY_METHODS.has(c.req.method)) {
    const path = c.req.path;
    const length = Number(c.req.header("content-length") ?? "0");
    if (length > MAX_BODY_BYTES) {
      throw new ApiError(413, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes`, {
        type: "invalid_request_error",
        code: "request_too_large",
      });
    }
    const hasBody = length > 0 || c.req.header("transfer-encoding") !== undefined;
    if (hasBody && !NON_JSON_PREFIXES.some((p) => path.startsWith(p))) {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/(.+\+)?json\b/i.test(type)) {
        throw badRequest(`Content-Type must be application/json (got '${type || "none"}')`, null, "unsupported_content_type");
      }
    }
  }
  await next();
};
