/** MCP test helpers: the official SDK client talking to the Worker's own fetch handler. */
import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

export const BASE = "http://gw.test";

/** Calls the Worker's fetch (same isolate, real D1 and DOs). */
export const workerFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  exports.default.fetch(new Request(input, init));

/**
 * workerd forbids code generation, so the SDK client's default (Ajv) output-schema validator cannot
 * compile there. The server already validates every `structuredContent` against the tool's zod
 * outputSchema before answering; tests check shapes themselves.
 */
const acceptAll: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }),
};

export async function connectClient(
  key: string,
  opts: { headers?: Record<string, string>; useXApiKey?: boolean } = {},
): Promise<Client> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.useXApiKey) headers["x-api-key"] = key;
  else headers.authorization = `Bearer ${key}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: (url, init) => workerFetch(String(url), init),
    requestInit: { headers },
  });
  const client = new Client({ name: "switchboard-tests", version: "1.0.0" }, { jsonSchemaValidator: acceptAll });
  await client.connect(transport);
  return client;
}

/** Raw JSON-RPC POST to /mcp. */
export function rpc(body: unknown, init: { key?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(init.headers ?? {}),
  };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  return workerFetch(`${BASE}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
}

export const initializeMessage = (id: number | string = 1, protocolVersion = "2024-11-05") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

/** Text of the first text block of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.find((c) => c.type === "text")?.text ?? "";
}

/**
 * The JSON-RPC message(s) of a `/mcp` answer: one JSON body for clients that accept JSON, a short
 * SSE stream (`event: message` frames) for those that accept only `text/event-stream`.
 */
export async function readRpc<T = Record<string, any>>(res: Response): Promise<T> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text) as T;
  const messages = text
    .split("\n\n")
    .map((frame) => frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n"))
    .filter((data) => data.trim() !== "")
    .map((data) => JSON.parse(data) as unknown);
  return (messages.length === 1 ? messages[0] : messages) as T;
}
