import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../../app-types";
import { ApiError, badRequest } from "../../errors/api-error";
import { newId } from "../../lib/ids";
import { discardBody, readUpTo } from "../../lib/body";

/** Largest accepted request body (bytes). Chat requests with inline images fit; documented in README. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
/** Paths that take something other than JSON (OAuth forms, MCP checks its own headers). */
const NON_JSON_PREFIXES = ["/oauth/", "/mcp", "/messages", "/sse", "/api/auth/sign-out"];
/** MCP bounds its bodies itself and answers 413 as a JSON-RPC error (src/mcp/http.ts). */
const OWN_BODY_LIMIT = new Set(["/mcp", "/messages"]);
/** JSON APIs that also take the multipart form the official SDKs send (`videos.create`). */
const MULTIPART_PATHS: ReadonlySet<string> = new Set(["/v1/videos"]);

const tooLarge = () =>
  new ApiError(413, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes`, {
    type: "invalid_request_error",
    code: "request_too_large",
  });

/**
 * Size of the request body, enforcing MAX_BODY_BYTES. A declared Content-Length is trusted (the
 * runtime never delivers more than it declares); a body without one (chunked) is read up to the
 * limit and replaced by the buffered copy, so handlers can still read it.
 */
async function enforceBodyLimit(c: Context<AppEnv>): Promise<number> {
  const declared = c.req.header("content-length");
  if (declared !== undefined && c.req.header("transfer-encoding") === undefined) {
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) throw badRequest("Invalid Content-Length header", null, "invalid_content_length");
    if (length > MAX_BODY_BYTES) throw tooLarge();
    return length;
  }
  const body = c.req.raw.body;
  if (!body) return 0;
  const buffer = await readUpTo(body, MAX_BODY_BYTES);
  if (!buffer) throw tooLarge();
  const size = buffer.byteLength;
  c.req.raw = new Request(c.req.raw, { body: buffer });
  return size;
}

/**
 * Every request: a request id (echoed as `x-request-id`), a body size limit (declared or
 * streamed) and a JSON content-type check for JSON APIs, all answered with the error envelope.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = newId("req");
  c.set("requestId", requestId);
  c.header("x-request-id", requestId);
  try {
    await withBodyChecks(c, next);
  } finally {
    // A body no handler read (a refusal: 401, 403, 413 by declared length, ...) is read to its
    // end before the answer goes out, never cancelled or left behind (lib/body.ts `discardBody`).
    await discardBody(c.req.raw);
  }
  // Routes that build their own Response (MCP, streams, proxies) get the header here too.
  if (!c.res.headers.has("x-request-id")) {
    try {
      c.res.headers.set("x-request-id", requestId);
    } catch {
      // Immutable headers (a proxied upstream response): copy the response once.
      const res = new Response(c.res.body, c.res);
      res.headers.set("x-request-id", requestId);
      c.res = res;
    }
  }
};

/**
 * Whether a route (not only middleware) answers this method at this path. A body of any type sent
 * to a path we do not serve (`/v1/images/edits` multipart, an unknown path) gets the 404 envelope:
 * "wrong content type" would send the caller hunting for a header when the endpoint is missing.
 */
function servesMethod(c: Context<AppEnv>): boolean {
  const method = c.req.method;
  return matchedRoutes(c).some((route) => route.method === method);
}

async function withBodyChecks(c: Context<AppEnv>, next: () => Promise<void>): Promise<void> {
  if (BODY_METHODS.has(c.req.method) && !OWN_BODY_LIMIT.has(c.req.path)) {
    const size = await enforceBodyLimit(c);
    const path = c.req.path;
    if (size > 0 && !NON_JSON_PREFIXES.some((p) => path.startsWith(p))) {
      const type = c.req.header("content-type") ?? "";
      const multipartOk = MULTIPART_PATHS.has(path) && /^multipart\/form-data\b/i.test(type);
      if (!multipartOk && !/^application\/(.+\+)?json\b/i.test(type) && servesMethod(c)) {
        throw badRequest(`Content-Type must be application/json (got '${type || "none"}')`, null, "unsupported_content_type");
      }
    }
  }
  await next();
}
