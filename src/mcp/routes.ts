/** MCP endpoints: Streamable HTTP at `/mcp` (agents' createMcpHandler), legacy HTTP+SSE at `/sse` + `/messages`. */
import { Hono, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-types";
import { CORS_HEADERS, handleMcpGet, handleMcpOther, handleMcpPost, jsonRpcError } from "./http";
import { originAllowed } from "./origin";
import { discardBody } from "../lib/body";
import { handleSseMessage, handleSseOpen } from "./sse";

export const mcpRoutes = new Hono<AppEnv>();

const preflight = () => new Response(null, { status: 204, headers: CORS_HEADERS });
const notAllowed = (allow: string) => () =>
  jsonRpcError(405, -32000, `Method Not Allowed (allowed: ${allow}).`, null, { allow, ...CORS_HEADERS });

// Before anything else, the preflight and authentication included: a foreign Origin is 403. The
// legacy transport gets the same rule: a rebinding page could otherwise open `/sse` and post to
// `/messages` from the victim's browser just as it could call `/mcp`.
const sameOriginOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (originAllowed(c.env, c.req.raw)) return next();
  await discardBody(c.req.raw);
  return jsonRpcError(403, -32000, `Forbidden: Origin '${(c.req.header("origin") ?? "").slice(0, 200)}' is not allowed; the gateway's own origin and those in ALLOWED_ORIGINS are.`, null, {
    ...CORS_HEADERS,
    "x-request-id": c.get("requestId"),
  });
};
for (const path of ["/mcp", "/sse", "/messages"]) mcpRoutes.use(path, sameOriginOnly);
mcpRoutes.post("/mcp", handleMcpPost);
mcpRoutes.get("/mcp", handleMcpGet);
mcpRoutes.on("OPTIONS", ["/sse", "/messages"], preflight);
mcpRoutes.all("/mcp", handleMcpOther);

mcpRoutes.get("/sse", handleSseOpen);
mcpRoutes.all("/sse", notAllowed("GET"));
mcpRoutes.post("/messages", handleSseMessage);
mcpRoutes.all("/messages", notAllowed("POST"));
