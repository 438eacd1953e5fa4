/**
 * MCP `chat`: one non-streaming chat completion through the gateway's chat pipeline
 * (`executeChatCompletion`: admission, IAM, routing, logging, settlement), with the connected
 * key's context and the MCP request's attribution headers.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { gatewayRequestOf, type McpToolContext } from "../context";
import { chatInput, chatOutput } from "../schemas";
import { generationFailure, toolError } from "./result";
import { executeChatCompletion } from "../../routes/chat/execute";
import { TOOL_TEXT } from "./descriptions";

const GENERATES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

/** Headers passed to the chat pipeline: attribution and routing switches only, never credentials. */
const FORWARDED_HEADERS = ["x-source", "user-agent", "x-no-cache", "x-no-fallback", "cf-connecting-ip", "x-forwarded-for", "http-referer", "x-title"];

export function forwardedHeaders(from: Headers): Headers {
  const out = new Headers({ "content-type": "application/json" });
  for (const name of FORWARDED_HEADERS) {
    const v = from.get(name);
    if (v !== null) out.set(name, v);
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Text of an OpenAI message `content` (string or parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : ""))
      .filter(Boolean)
      .join("");
  }
  return "";
}

/** Turns the pipeline's HTTP response into a tool result. */
export async function chatResponseToResult(res: Response): Promise<CallToolResult> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return toolError(`The chat request failed (HTTP ${res.status}).`);
  }
  if (!res.ok || !isRecord(body)) {
    const err = isRecord(body) && isRecord(body.error) ? body.error : null;
    const message = str(err?.message) ?? `HTTP ${res.status}`;
    const code = str(err?.code);
    return toolError(`Chat failed: ${message} (HTTP ${res.status}${code ? `, ${code}` : ""})`);
  }
  const choice = Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const usage = isRecord(body.usage) ? body.usage : {};
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const structured = {
    model: str(body.model) ?? "",
    provider: str(metadata.used_provider),
    content: textOf(message.content),
    reasoning: str(message.reasoning),
    finish_reason: str(choice.finish_reason),
    usage: {
      prompt_tokens: num(usage.prompt_tokens),
      completion_tokens: num(usage.completion_tokens),
      total_tokens: num(usage.total_tokens),
      cost_usd: typeof usage.cost === "number" ? usage.cost : null,
    },
    request_id: str(metadata.request_id) ?? res.headers.get("x-request-id"),
  };
  const summary = `${structured.content}\n\n---\nmodel: ${structured.model}${structured.provider ? ` via ${structured.provider}` : ""}; tokens: ${structured.usage.prompt_tokens} in / ${structured.usage.completion_tokens} out${structured.usage.cost_usd !== null ? `; cost: $${structured.usage.cost_usd}` : ""}`;
  return { content: [{ type: "text", text: summary }], structuredContent: structured };
}

export function registerChatTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    "chat",
    {
      ...TOOL_TEXT["chat"],
      inputSchema: chatInput,
      outputSchema: chatOutput,
      annotations: GENERATES,
    },
    async (args) => {
      const body: Record<string, unknown> = { model: args.model, messages: args.messages, stream: false };
      if (args.temperature !== undefined) body.temperature = args.temperature;
      if (args.max_tokens !== undefined) body.max_tokens = args.max_tokens;
      try {
        const res = await executeChatCompletion({
          ...gatewayRequestOf(ctx),
          headers: forwardedHeaders(ctx.headers),
          body,
        });
        return await chatResponseToResult(res);
      } catch (err) {
        return generationFailure(err);
      }
    },
  );
}
