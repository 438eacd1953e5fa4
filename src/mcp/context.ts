/** What every MCP tool handler gets: the connected key and the request's attribution. */
import type { Env } from "../env";
import type { McpAuth } from "./auth";
import type { GatewayRequest } from "../routes/middleware/gateway-request";

export interface McpToolContext {
  env: Env;
  waitUntil: (promise: Promise<unknown>) => void;
  auth: McpAuth;
  /** The MCP HTTP request's id (`x-request-id`). */
  requestId: string;
  /** App attribution from `x-source` / User-Agent (spec 5.6), kept for generation tools. */
  sourceApp: string;
  clientIp: string | null;
  /** Headers of the MCP HTTP request (attribution headers are passed on to generation). */
  headers: Headers;
  origin: string;
}

/** The same request context the HTTP routes hand to chat and generation, acting as the connected key. */
export function gatewayRequestOf(ctx: McpToolContext): GatewayRequest {
  const { env, waitUntil, requestId, sourceApp, clientIp } = ctx;
  return { env, waitUntil, auth: ctx.auth.context, requestId, sourceApp, clientIp };
}
