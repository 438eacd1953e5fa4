/**
 * Stateless Streamable HTTP transport at `/mcp` (spec 4.3): a fresh McpServer + transport per
 * POST, JSON replies (`enableJsonResponse`), notifications answered 202. GET/DELETE are answered
 * here (405 / server info / setup page) because a stateless server has no stream to offer.
 */
import type { Context } from "hono";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AppEnv } from "../app-types";
import { ApiError } from "../errors/api-error";
import { gatewayRequest } from "../routes/middleware/gateway-request";
import { authenticateMcp, enforceMcpRateLimit, jsonRpcErrorResponse, originOf, type McpAuth } from "./auth";
import type { McpToolContext } from "./context";
import { serverInfo, setupPage } from "./info";
import { createMcpServer } from "./server";

/** Versions in which JSON-RPC batching was removed from MCP (2025-06-18 and later). */
const NO_BATCH_FROM = "2025-06-18";

export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
  "access-control-allow-headers": "authorization, x-api-key, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-source",
  "access-control-expose-headers": "www-authenticate, mcp-protocol-version, mcp-session-id, x-request-id",
  "access-control-max-age": "86400",
};

export function withHeaders(res: Response, extra: Record<string, string>): Response {
  const out = new Response(res.body, res);
  for (const [k, v] of Object.entries(extra)) out.headers.set(k, v);
  return out;
}

export function jsonRpcError(status: number, code: number, message: string, id: string | number | null = null, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** The gateway request context (same attribution and client IP as the HTTP API) plus MCP's own. */
export function toolContext(c: Context<AppEnv>, auth: McpAuth): McpToolContext {
  const { env, waitUntil, requestId, sourceApp, clientIp } = gatewayRequest(c, auth.context);
  return { env, waitUntil, auth, requestId, sourceApp, clientIp, headers: c.req.raw.headers, origin: originOf(c.req.raw) };
}

/** Authentication + rate limit for every protocol request; a Response when refused. */
export async function admitMcpRequest(c: Context<AppEnv>): Promise<McpAuth | Response> {
  try {
    const auth = await authenticateMcp(c.env, c.req.raw.headers);
    await enforceMcpRateLimit(c.env, auth.context.key.id);
    return auth;
  } catch (err) {
    if (err instanceof ApiError) return withHeaders(jsonRpcErrorResponse(c.env, c.req.raw, err), { ...CORS_HEADERS, "x-request-id": c.get("requestId") });
    throw err;
  }
}

export function handleMcpGet(c: Context<AppEnv>): Response {
  const accept = c.req.header("accept") ?? "";
  if (accept.includes("text/event-stream")) {
    return jsonRpcError(405, -32000, "Method Not Allowed: this server is stateless and offers no standalone SSE stream; POST JSON-RPC messages to this URL.", null, {
      allow: "POST",
      ...CORS_HEADERS,
    });
  }
  const origin = originOf(c.req.raw);
  if (accept.includes("text/html")) {
    return new Response(setupPage(origin), { headers: { "content-type": "text/html; charset=utf-8", ...CORS_HEADERS } });
  }
  return new Response(JSON.stringify(serverInfo(origin)), { headers: { "content-type": "application/json", ...CORS_HEADERS } });
}

export function handleMcpDelete(): Response {
  return jsonRpcError(405, -32000, "Method Not Allowed: this server is stateless and has no sessions to delete.", null, { allow: "POST", ...CORS_HEADERS });
}

export async function handleMcpPost(c: Context<AppEnv>): Promise<Response> {
  const admitted = await admitMcpRequest(c);
  if (admitted instanceof Response) return admitted;

  let parsed: unknown;
  try {
    parsed = JSON.parse(await c.req.text());
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the body is not valid JSON.", null, CORS_HEADERS);
  }
  const version = c.req.header("mcp-protocol-version");
  if (Array.isArray(parsed) && version !== undefined && version >= NO_BATCH_FROM) {
    return jsonRpcError(400, -32600, `Invalid Request: JSON-RPC batches are not supported in protocol version ${version}; send one message per request.`, null, CORS_HEADERS);
  }

  const server = createMcpServer(toolContext(c, admitted));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const res = await transport.handleRequest(c.req.raw, { parsedBody: parsed });
    return withHeaders(res, { ...CORS_HEADERS, "x-request-id": c.get("requestId") });
  } finally {
    c.executionCtx.waitUntil(server.close().catch(() => undefined));
  }
}
