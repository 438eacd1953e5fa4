import type { CallToolResult } from "@modelcontextprotocol/server";
import { ApiError } from "../../errors/api-error";

/** JSON in `structuredContent` and the same JSON in a text block (spec 4.3 rule 4). */
export function jsonResult<T extends object>(data: T): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(data, null, 2) }],
    structuredContent: { ...data } as Record<string, unknown>,
  };
}

/** A tool error (`isError: true`) with a readable message. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Gateway errors become tool errors with the gateway's message (status and code kept). */
export function generationFailure(err: unknown): CallToolResult {
  if (err instanceof ApiError) return toolError(`${err.message} (HTTP ${err.status}, ${err.code})`);
  console.error("mcp generation tool failed", err instanceof Error ? err.message : String(err));
  return toolError("The request failed inside the gateway; try again.");
}
