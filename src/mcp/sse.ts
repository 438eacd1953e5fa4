/**
 * Legacy HTTP+SSE transport (MCP 2024-11-05): `GET /sse` opens a session in an McpSseSession
 * Durable Object and streams its events; `POST /messages?sessionId=` delivers one JSON-RPC
 * message, answered 202, with the reply on the stream. Both are authenticated and rate limited.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-types";
import { admitMcpRequest, CORS_HEADERS, jsonRpcError, MCP_MAX_BODY_BYTES, readBodyLimited, toolContext, withHeaders } from "./http";

const SESSION_ID_RE = /^[0-9a-f]{64}$/;

export async function handleSseOpen(c: Context<AppEnv>): Promise<Response> {
  const accept = c.req.header("accept") ?? "";
  if (accept && !accept.includes("text/event-stream") && !accept.includes("*/*")) {
    return jsonRpcError(406, -32000, "Not Acceptable: GET /sse must accept text/event-stream.", null, CORS_HEADERS);
  }
  const admitted = await admitMcpRequest(c);
  if (admitted instanceof Response) return admitted;
  const id = c.env.MCP_SESSIONS.newUniqueId();
  const sessionId = id.toString();
  const stub = c.env.MCP_SESSIONS.get(id);
  const res = await stub.fetch("https://mcp-session/open", {
    method: "POST",
    body: JSON.stringify({ keyId: admitted.context.key.id, endpoint: `/messages?sessionId=${sessionId}` }),
  });
  return withHeaders(res, { ...CORS_HEADERS, "x-request-id": c.get("requestId"), "mcp-session-id": sessionId });
}

export async function handleSseMessage(c: Context<AppEnv>): Promise<Response> {
  const admitted = await admitMcpRequest(c);
  if (admitted instanceof Response) return admitted;
  const sessionId = c.req.query("sessionId") ?? "";
  if (!SESSION_ID_RE.test(sessionId)) return jsonRpcError(404, -32001, "Session not found: pass the sessionId from the endpoint event.", null, CORS_HEADERS);
  const text = await readBodyLimited(c.req.raw, MCP_MAX_BODY_BYTES);
  if (text === null) return jsonRpcError(413, -32000, `Payload Too Large: the request body must not exceed ${MCP_MAX_BODY_BYTES} bytes.`, null, CORS_HEADERS);
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the body is not valid JSON.", null, CORS_HEADERS);
  }
  let stub;
  try {
    stub = c.env.MCP_SESSIONS.get(c.env.MCP_SESSIONS.idFromString(sessionId));
  } catch {
    return jsonRpcError(404, -32001, "Session not found.", null, CORS_HEADERS);
  }
  const ctx = toolContext(c, admitted);
  const result = await stub.deliver({
    message,
    auth: admitted,
    requestId: ctx.requestId,
    sourceApp: ctx.sourceApp,
    clientIp: ctx.clientIp,
    headers: [...c.req.raw.headers.entries()].filter(([k]) => k !== "authorization" && k !== "x-api-key" && k !== "cookie"),
    origin: ctx.origin,
  });
  if (!result.ok) return jsonRpcError(result.status, result.code, result.message, null, CORS_HEADERS);
  return new Response("Accepted", { status: 202, headers: { "content-type": "text/plain", ...CORS_HEADERS, "x-request-id": ctx.requestId } });
}
