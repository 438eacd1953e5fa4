/**
 * Stateless Streamable HTTP at `/mcp` (spec 4.3) on `agents`' `createMcpHandler`, which serves
 * each request with a fresh MCP SDK v2 server from `createMcpServer`. The library does the
 * transport: JSON-RPC validation (-32600 for invalid request objects and empty batches, -32700
 * for bad JSON), Accept/Content-Type checks, protocol-version header, notifications (202), GET and
 * DELETE (405: a stateless server has no stream or session), body limit (JSON-RPC 413).
 *
 * In front of it stays what is ours: authentication (src/mcp/auth.ts) and the per-key rate limit,
 * counting every message of a JSON-RPC batch; `-32602` for invalid params of protocol methods (the
 * SDK reports those as -32603 with a raw validation dump), alone or in a batch, where the other
 * messages still go to the SDK; the reply format (contract section 7): a client that accepts JSON
 * gets one JSON body (the stateless SSE answer of the transport, read whole), one that accepts
 * only `text/event-stream` gets the stream; batches refused from protocol 2025-06-18 (which
 * removed them); `GET /mcp` without an SSE Accept answering server info or the setup page.
 */
import type { Context } from "hono";
import { createMcpHandler } from "agents/mcp/server";
import type { AppEnv } from "../app-types";
import { ApiError } from "../errors/api-error";
import { discardBody, readUpTo } from "../lib/body";
import { gatewayRequest } from "../routes/middleware/gateway-request";
import { MCP_APP, UNKNOWN_APP } from "../usage/source-app";
import { issuerOrigin } from "../oauth/metadata";
import { authenticateMcp, enforceMcpRateLimit, jsonRpcErrorResponse, type McpAuth } from "./auth";
import type { McpToolContext } from "./context";
import { serverInfo, setupPage } from "./info";
import { createMcpServer } from "./server";
import { invalidParams, invalidParamsReply, splitBatch, type InvalidParamsReply } from "./protocol";

/** Versions in which JSON-RPC batching was removed from MCP (2025-06-18 and later). */
const NO_BATCH_FROM = "2025-06-18";
/** Largest MCP request body (the SDK's default). */
export const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The SDK transport's batch limit (`MAX_BATCH_SIZE`, not exported): a larger batch is refused whole. */
const SDK_MAX_BATCH_MESSAGES = 100;

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
  const { env, waitUntil, requestId, sourceApp: detected, clientIp } = gatewayRequest(c, auth.context);
  // An MCP client's own name (x-source, a known User-Agent) wins; otherwise the request is MCP's.
  const sourceApp = detected === UNKNOWN_APP ? MCP_APP : detected;
  return { env, waitUntil, auth, requestId, sourceApp, clientIp, headers: c.req.raw.headers, origin: issuerOrigin(env, c.req.raw) };
}

const refusal = (c: Context<AppEnv>, err: unknown): Response => {
  if (err instanceof ApiError) return withHeaders(jsonRpcErrorResponse(c.env, c.req.raw, err), { ...CORS_HEADERS, "x-request-id": c.get("requestId") });
  throw err;
};

/** Authentication, or the JSON-RPC refusal. */
async function authenticate(c: Context<AppEnv>): Promise<McpAuth | Response> {
  try {
    return await authenticateMcp(c.env, c.req.raw.headers);
  } catch (err) {
    return refusal(c, err);
  }
}

/** Authentication + one rate-limit unit (the SSE endpoints: one message per request). */
export async function admitMcpRequest(c: Context<AppEnv>, messages = 1): Promise<McpAuth | Response> {
  const auth = await authenticate(c);
  if (auth instanceof Response) return auth;
  try {
    await enforceMcpRateLimit(c.env, auth.context, messages, (p) => c.executionCtx.waitUntil(p));
    return auth;
  } catch (err) {
    return refusal(c, err);
  }
}

/** The request's body as text, at most `max` bytes (declared or streamed); null when larger. */
export async function readBodyLimited(request: Request, max: number): Promise<string | null> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > max) return null;
  if (!request.body) return "";
  const bytes = await readUpTo(request.body, max);
  return bytes ? new TextDecoder().decode(bytes) : null;
}

/** Tool contexts of the requests in flight, found by the factory through the request object. */
const contexts = new WeakMap<Request, McpToolContext>();

const mcpHandler = createMcpHandler(
  ({ requestInfo }) => {
    const ctx = requestInfo ? contexts.get(requestInfo) : undefined;
    if (!ctx) throw new Error("MCP request without a gateway context");
    return createMcpServer(ctx);
  },
  {
    route: "/mcp",
    maxRequestBodySize: MCP_MAX_BODY_BYTES,
    // Origin is checked in front of every /mcp route (src/mcp/origin.ts: PUBLIC_URL, ALLOWED_ORIGINS).
    allowedOriginHostnames: "*",
    corsOptions: {
      origin: CORS_HEADERS["access-control-allow-origin"],
      methods: CORS_HEADERS["access-control-allow-methods"],
      headers: CORS_HEADERS["access-control-allow-headers"],
      exposeHeaders: CORS_HEADERS["access-control-expose-headers"],
      maxAge: 86400,
    },
    onerror: (err) => console.error("mcp handler error", err.message),
  },
);

/**
 * How a POST is answered (contract section 7): one JSON body when the client accepts JSON
 * (`application/json`, `application/*`, `*\/*` or no Accept at all), an SSE stream when it
 * accepts only `text/event-stream`, 406 otherwise.
 */
export type McpReplyMode = "json" | "sse";
export function replyMode(accept: string | null | undefined): McpReplyMode | null {
  const value = (accept ?? "").toLowerCase();
  if (value.trim() === "" || /application\/json|application\/\*|\*\/\*/.test(value)) return "json";
  return value.includes("text/event-stream") ? "sse" : null;
}

/** The SDK transport wants both media types named; the reply mode is applied to its answer. */
function transportHeaders(headers: Headers): Headers {
  const out = new Headers(headers);
  out.set("accept", "application/json, text/event-stream");
  return out;
}

/** The JSON-RPC messages of an SSE body (`data:` lines of each event; comments and empty events skipped). */
export function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const frame of text.replace(/\r\n?/g, "\n").split("\n\n")) {
    const data = frame
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
      .join("\n");
    if (data.trim() !== "") out.push(JSON.parse(data));
  }
  return out;
}

const isResponse = (m: unknown): boolean =>
  typeof m === "object" && m !== null && !Array.isArray(m) && "id" in m && ("result" in m || "error" in m);

/**
 * A stateless SSE answer as one JSON body: the reply (a batch: the replies, as an array). The
 * stream of a stateless request ends with its last reply, so it is read whole; notifications sent
 * before the reply have no place in a JSON answer and are dropped, as the SDK's JSON mode does.
 */
async function asJsonReply(res: Response, batch: boolean): Promise<Response> {
  if (!res.body || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) return res;
  const replies = sseMessages(await res.text()).filter(isResponse);
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  headers.delete("cache-control");
  if (replies.length === 0) return new Response(null, { status: 202, headers });
  return new Response(JSON.stringify(batch ? replies : replies[0]), { status: res.status, headers });
}

export function handleMcpGet(c: Context<AppEnv>): Response | Promise<Response> {
  const accept = c.req.header("accept") ?? "";
  if (accept.includes("text/event-stream")) return mcpHandler.fetch(c.req.raw);
  // PUBLIC_URL when set: a deployment behind a proxy or custom domain must not advertise its inner host.
  const origin = issuerOrigin(c.env, c.req.raw);
  if (accept.includes("text/html")) {
    return new Response(setupPage(origin), { headers: { "content-type": "text/html; charset=utf-8", ...CORS_HEADERS } });
  }
  return new Response(JSON.stringify(serverInfo(origin)), { headers: { "content-type": "application/json", ...CORS_HEADERS } });
}

/** DELETE, OPTIONS and other methods: the library's answers (405 / preflight). */
export const handleMcpOther = (c: Context<AppEnv>): Promise<Response> => mcpHandler.fetch(c.req.raw);

export async function handleMcpPost(c: Context<AppEnv>): Promise<Response> {
  const auth = await authenticate(c);
  if (auth instanceof Response) return auth;
  const mode = replyMode(c.req.header("accept"));
  if (mode === null) {
    await discardBody(c.req.raw);
    return jsonRpcError(406, -32000, "Not Acceptable: Accept must include application/json (one JSON reply) or text/event-stream (an SSE stream).", null, CORS_HEADERS);
  }
  const text = await readBodyLimited(c.req.raw, MCP_MAX_BODY_BYTES);
  if (text === null) return jsonRpcError(413, -32000, `Payload Too Large: the request body must not exceed ${MCP_MAX_BODY_BYTES} bytes.`, null, CORS_HEADERS);
  let parsed: unknown;
  let json = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    json = false;
  }
  // Every message of a batch is a call against the key's rate limit.
  try {
    await enforceMcpRateLimit(c.env, auth.context, Array.isArray(parsed) ? Math.max(1, parsed.length) : 1, (p) => c.executionCtx.waitUntil(p));
  } catch (err) {
    return refusal(c, err);
  }
  const version = c.req.header("mcp-protocol-version");
  if (Array.isArray(parsed) && parsed.length > 0 && version !== undefined && version >= NO_BATCH_FROM) {
    return jsonRpcError(400, -32600, `Invalid Request: JSON-RPC batches are not supported in protocol version ${version}; send one message per request.`, null, CORS_HEADERS);
  }
  const bad = json ? invalidParams(parsed) : null;
  if (bad) return jsonReply(c, invalidParamsReply(bad));

  // In a batch, messages with invalid params get the reply they would get alone and the SDK gets
  // the rest. A batch over the SDK's limit goes to it whole, so it stays refused whole.
  let forwarded: unknown = parsed;
  let early: InvalidParamsReply[] = [];
  if (Array.isArray(parsed) && parsed.length <= SDK_MAX_BATCH_MESSAGES) {
    const { replies, rest } = splitBatch(parsed);
    if (replies.length > 0 && rest.length === 0) return jsonReply(c, replies);
    if (replies.length > 0) {
      forwarded = rest;
      early = replies;
    }
  }
  const body = early.length > 0 ? JSON.stringify(forwarded) : text;
  const request = new Request(c.req.raw.url, { method: "POST", headers: transportHeaders(c.req.raw.headers), body });
  contexts.set(request, toolContext(c, auth));
  const answered = await mcpHandler.fetch(request, json ? { parsedBody: forwarded } : undefined);
  const res = mode === "json" ? await asJsonReply(answered, Array.isArray(forwarded)) : answered;
  return withHeaders(early.length > 0 ? await withEarlyReplies(res, early) : res, { "x-request-id": c.get("requestId") });
}

const jsonReply = (c: Context<AppEnv>, body: unknown): Response =>
  new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...CORS_HEADERS, "x-request-id": c.get("requestId") } });

/**
 * The SDK's answer to the rest of a batch with the replies made here added, so that the batch gets
 * one reply per request. A refusal of the whole batch (4xx, 5xx) stands, as it would without them.
 */
async function withEarlyReplies(res: Response, replies: readonly InvalidParamsReply[]): Promise<Response> {
  // The rest were notifications or responses (202, nothing to answer): the replies are the answer.
  if (res.status === 202) return new Response(JSON.stringify(replies), { headers: { "content-type": "application/json", ...CORS_HEADERS } });
  if (!res.ok || !res.body) return res;
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    // The SDK streams a batch's replies as SSE events; ours go first, in the same framing.
    const head = new TextEncoder().encode(replies.map((r) => `event: message\ndata: ${JSON.stringify(r)}\n\n`).join(""));
    const stream = new TransformStream<Uint8Array, Uint8Array>({ start: (controller) => controller.enqueue(head) });
    return new Response(res.body.pipeThrough(stream), res);
  }
  // A JSON answer (the client accepts JSON): the replies join it as one array.
  const answered: unknown = await res.json();
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify([...replies, ...(Array.isArray(answered) ? answered : [answered])]), { status: res.status, headers });
}
