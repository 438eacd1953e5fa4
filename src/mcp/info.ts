/**
 * What `GET /mcp` answers without an SSE Accept header (spec 4.3): public server information as
 * JSON, or, for a browser (`Accept: text/html`), a setup page explaining how to connect clients.
 * `origin` is the gateway's public origin (`issuerOrigin`: PUBLIC_URL when set).
 */
import { CONFIGURED_PROTOCOL_VERSION, SERVER_NAME, SERVER_VERSION, TOOL_NAMES } from "./server";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { resourceMetadataUrl } from "../oauth/metadata";
import { TOOL_TEXT } from "./tools/descriptions";

/**
 * The Inspector release the page tells people to run, pinned: an unpinned `npx` reuses whatever
 * old copy is cached (0.15 refuses arguments for URL servers). `npm run test:mcp-inspector`
 * (scripts/mcp-inspector.mjs) runs this same release against a local gateway.
 */
export const INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0";

export function serverInfo(origin: string) {
  return {
    name: SERVER_NAME,
    version: SERVER_VERSION,
    description: "Switchboard MCP server: usage and cost analytics, chat, image generation and the model catalogue.",
    protocolVersion: CONFIGURED_PROTOCOL_VERSION,
    supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    transports: {
      streamableHttp: { url: `${origin}/mcp`, stateless: true },
      sse: { url: `${origin}/sse`, messages: `${origin}/messages` },
    },
    authentication: {
      schemes: ["Authorization: Bearer <API key or OAuth access token>", "x-api-key: <API key>"],
      oauth: {
        protectedResourceMetadata: resourceMetadataUrl(origin),
        authorizationServerMetadata: `${origin}/.well-known/oauth-authorization-server`,
      },
    },
    tools: [...TOOL_NAMES],
  };
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

export function setupPage(origin: string): string {
  const url = escapeHtml(`${origin}/mcp`);
  const sse = escapeHtml(`${origin}/sse`);
  const tools = TOOL_NAMES.map((t) => `<li><code>${t}</code>: ${escapeHtml(TOOL_TEXT[t].description)}</li>`).join("");
  const claudeCmd = escapeHtml(`claude mcp add --transport http switchboard ${origin}/mcp --header "Authorization: Bearer swb_..."`);
  const cursorJson = escapeHtml(
    JSON.stringify({ mcpServers: { switchboard: { url: `${origin}/mcp`, headers: { Authorization: "Bearer swb_..." } } } }, null, 2),
  );
  const inspector = escapeHtml(`npx -y ${INSPECTOR_PACKAGE} --cli ${origin}/mcp --transport http --header "Authorization: Bearer swb_..." --method tools/list`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard MCP server</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
</head>
<body>
<div class="center-brand"><span class="brand">Switchboard</span></div>
<main class="card doc">
<h1>Switchboard MCP server</h1>
<p>This is the Model Context Protocol endpoint of the gateway. Connect an MCP client to
<code>${url}</code> (Streamable HTTP). Authenticate with a project API key
(<code>Authorization: Bearer swb_...</code> or <code>x-api-key</code>) or sign in with OAuth.</p>
<h2>Claude Code</h2>
<pre>${claudeCmd}</pre>
<p>Claude Desktop and claude.ai: add a custom connector with the URL <code>${url}</code>; it signs in with OAuth.</p>
<h2>Cursor</h2>
<p>Add to <code>~/.cursor/mcp.json</code>:</p>
<pre>${cursorJson}</pre>
<h2>MCP Inspector</h2>
<pre>${inspector}</pre>
<h2>Older clients (HTTP+SSE)</h2>
<p>Open <code>${sse}</code>; the first event names the endpoint to POST messages to.</p>
<h2>Tools</h2>
<ul>${tools}</ul>
<p>Analytics tools are read-only and never charge; chat and image tools are billed to the connected key.</p>
</main>
</body>
</html>`;
}
