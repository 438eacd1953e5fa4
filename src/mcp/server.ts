/**
 * The MCP server: one MCP SDK v2 `McpServer` per request (stateless), with every tool bound to the
 * request's authenticated context. The `/mcp` transport (src/mcp/http.ts) is `agents`'
 * `createMcpHandler`, which calls this factory for each request; the legacy SSE bridge
 * (McpSseSession) builds one per delivered message.
 */
import { McpServer, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { McpToolContext } from "./context";
import { toolError } from "./tools/result";
import { registerAnalyticsTools } from "./tools/analytics";
import { registerCatalogTools } from "./tools/catalog";
import { registerGenerationTools } from "./tools/generation";

/** Spec 9.2: the configured protocol version; newer versions the SDK knows are accepted too. */
export const CONFIGURED_PROTOCOL_VERSION = "2024-11-05";
export const SERVER_NAME = "switchboard";
export const SERVER_VERSION = "0.1.0";

export const INSTRUCTIONS =
  "Switchboard gateway: account, usage and cost analytics for the connected project key (get-account, get-usage, get-usage-breakdown), chat completions (chat), image generation (generate-image, generate-nano-banana) and the model catalogue (list-models, list-image-models). Analytics are read-only and never charge.";

const SERVER_CAPABILITIES = { tools: { listChanged: false } };

// The tools, named where their texts live (src/mcp/tools/descriptions.ts).
export { TOOL_NAMES } from "./tools/descriptions";

/** The version answered to `initialize`: the client's if supported, else the configured one. */
export function negotiateProtocolVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : CONFIGURED_PROTOCOL_VERSION;
}

export function createMcpServer(ctx: McpToolContext): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { capabilities: SERVER_CAPABILITIES, instructions: INSTRUCTIONS });
  registerAnalyticsTools(server, ctx);
  registerGenerationTools(server, ctx);
  registerCatalogTools(server);
  const refusal = ctx.auth.refusal;
  // The key's IP rules refuse this client (src/mcp/auth.ts): every tool answers the refusal.
  if (refusal !== null) server.server.setRequestHandler("tools/call", () => toolError(refusal));
  // The SDK answers unknown versions with its latest; this server falls back to the configured one.
  server.server.setRequestHandler("initialize", (request) => ({
    protocolVersion: negotiateProtocolVersion(request.params.protocolVersion),
    capabilities: SERVER_CAPABILITIES,
    serverInfo: { name: SERVER_NAME, version: SERVER_VERSION },
    instructions: INSTRUCTIONS,
  }));
  return server;
}
