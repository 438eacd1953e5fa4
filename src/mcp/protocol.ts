/**
 * Protocol checks the MCP SDK does not make the way the spec wants: a request to a protocol method
 * whose params do not fit it is JSON-RPC `-32602` with one readable line (the SDK answers `-32603`
 * with a raw validation dump). Shared by `/mcp` (src/mcp/http.ts) and the legacy SSE session.
 */
import { specTypeSchemas } from "@modelcontextprotocol/server";

/** Params schemas of the protocol methods this server serves (tool arguments are the tools' own). */
// A Map, not an object literal: a method named after an Object.prototype member (`valueOf`,
// `constructor`) must not find an inherited function here.
const PROTOCOL_REQUESTS: ReadonlyMap<string, keyof typeof specTypeSchemas> = new Map([
  ["initialize", "InitializeRequest"],
  ["ping", "PingRequest"],
  ["tools/list", "ListToolsRequest"],
  ["tools/call", "CallToolRequest"],
]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `-32602` for a request to a protocol method whose params do not fit it; null when fine. */
export function invalidParams(message: unknown): { id: string | number; message: string } | null {
  if (!isRecord(message) || typeof message.method !== "string" || !("id" in message)) return null;
  const id = message.id;
  if (typeof id !== "string" && typeof id !== "number") return null;
  const schema = PROTOCOL_REQUESTS.get(message.method);
  if (!schema) return null;
  const result = specTypeSchemas[schema]["~standard"].validate({ method: message.method, ...(message.params !== undefined ? { params: message.params } : {}) });
  if (result instanceof Promise || !result.issues) return null;
  const issue = result.issues[0];
  const path = (issue?.path ?? []).map((p) => (typeof p === "object" && p !== null ? String(p.key) : String(p))).join(".");
  return { id, message: `Invalid params for ${message.method}: ${path ? `'${path}': ` : ""}${issue?.message ?? "invalid"}` };
}

/** The JSON-RPC error message for `invalidParams`' finding. */
export const invalidParamsReply = (bad: { id: string | number; message: string }) => ({ jsonrpc: "2.0" as const, id: bad.id, error: { code: -32602, message: bad.message } });
export type InvalidParamsReply = ReturnType<typeof invalidParamsReply>;

/**
 * A JSON-RPC batch split so that each message gets the reply it would get alone: the `-32602`
 * replies for messages `invalidParams` finds (the SDK would answer those in a batch with `-32603`
 * and a validation dump, or refuse the whole batch for params that are not an object), and the
 * other messages, in order, for the SDK.
 */
export function splitBatch(batch: readonly unknown[]): { replies: InvalidParamsReply[]; rest: unknown[] } {
  const replies: InvalidParamsReply[] = [];
  const rest: unknown[] = [];
  for (const message of batch) {
    const bad = invalidParams(message);
    if (bad) replies.push(invalidParamsReply(bad));
    else rest.push(message);
  }
  return { replies, rest };
}
