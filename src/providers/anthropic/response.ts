/** Anthropic Messages response -> ParsedCompletion; usage normalization shared with the stream. */
import { emptyUsage, type AssistantMessage, type NormalizedUsage, type ParsedCompletion, type ReasoningDetail, type ToolCall } from "../types";
import { mapFinishReason } from "../finish-reason";
import { malformed } from "../errors";
import { asArray, asRecord, count, isRecord, str } from "../json";

/**
 * Anthropic reports `input_tokens` EXCLUDING cache reads and writes; OpenAI semantics include them.
 * `cache_creation.ephemeral_5m/1h_input_tokens` split the writes by TTL when present.
 */
export function parseAnthropicUsage(raw: unknown, into: NormalizedUsage = emptyUsage()): NormalizedUsage {
  const u = asRecord(raw);
  const usage = { ...into };
  const has = (k: string) => typeof u[k] === "number";
  const input = has("input_tokens") ? count(u.input_tokens) : undefined;
  const read = has("cache_read_input_tokens") ? count(u.cache_read_input_tokens) : undefined;
  const write = has("cache_creation_input_tokens") ? count(u.cache_creation_input_tokens) : undefined;
  if (read !== undefined) usage.cachedTokens = read;
  if (write !== undefined || isRecord(u.cache_creation)) {
    const cc = asRecord(u.cache_creation);
    const w1h = count(cc.ephemeral_1h_input_tokens);
    const w5m = isRecord(u.cache_creation) && typeof cc.ephemeral_5m_input_tokens === "number" ? count(cc.ephemeral_5m_input_tokens) : Math.max(0, (write ?? 0) - w1h);
    usage.cacheWrite5mTokens = w5m;
    usage.cacheWrite1hTokens = w1h;
  }
  if (input !== undefined) usage.promptTokens = input + usage.cachedTokens + usage.cacheWrite5mTokens + usage.cacheWrite1hTokens;
  if (has("output_tokens")) usage.completionTokens = count(u.output_tokens);
  const server = asRecord(u.server_tool_use);
  if (typeof server.web_search_requests === "number") usage.webSearchRequests = count(server.web_search_requests);
  return usage;
}

/**
 * A `thinking` block with its signature, or a `redacted_thinking` block, as a reasoning detail
 * (kept whole: Anthropic wants them back unchanged on the next tool-use turn).
 */
export function reasoningDetailOf(block: Record<string, unknown>, index: number): ReasoningDetail | undefined {
  if (block.type === "thinking") {
    const signature = str(block.signature);
    return { type: "reasoning.text", text: str(block.thinking) ?? "", ...(signature ? { signature } : {}), format: "anthropic-claude-v1", index };
  }
  if (block.type === "redacted_thinking") {
    const data = str(block.data);
    return data ? { type: "reasoning.encrypted", data, format: "anthropic-claude-v1", index } : undefined;
  }
  return undefined;
}

/** Reasoning details are kept only when something in them can go back upstream (a signature or redacted data). */
export const sendableReasoning = (details: ReasoningDetail[]): boolean => details.some((d) => d.type === "reasoning.encrypted" || Boolean(d.signature));

/**
 * Blocks of tools Anthropic ran itself (web search and fetch, code execution, tool search, MCP
 * connectors, container uploads): their outcome is in the text that follows, so they are not
 * client tool calls.
 */
export const isServerToolBlock = (type: string): boolean =>
  type === "server_tool_use" || type === "mcp_tool_use" || type === "container_upload" || type.endsWith("_tool_result");

const TRANSLATED = new Set(["text", "thinking", "redacted_thinking", "tool_use"]);

export function parseAnthropicResponse(body: unknown): ParsedCompletion {
  if (!isRecord(body) || !Array.isArray(body.content)) throw malformed(str(asRecord(asRecord(body).error).message) ?? "no content");
  let text = "";
  let reasoning = "";
  const toolCalls: ToolCall[] = [];
  const details: ReasoningDetail[] = [];
  for (const b of asArray(body.content)) {
    const block = asRecord(b);
    const detail = reasoningDetailOf(block, details.length);
    if (detail) details.push(detail);
    if (block.type === "text") text += str(block.text) ?? "";
    else if (block.type === "thinking") reasoning += str(block.thinking) ?? "";
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: str(block.id) ?? `toolu_${toolCalls.length}`,
        type: "function",
        function: { name: str(block.name) ?? "", arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const unknown = asArray(body.content).map((b) => str(asRecord(b).type) ?? "(untyped)").filter((t) => !TRANSLATED.has(t) && !isServerToolBlock(t));
  // An answer made only of blocks the gateway cannot translate is an error, not an empty success.
  if (!text && !reasoning && !toolCalls.length && unknown.length) throw malformed(`the answer came only as content the gateway cannot translate (${[...new Set(unknown)].join(", ")})`);
  const message: AssistantMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (reasoning) message.reasoning = reasoning;
  if (sendableReasoning(details)) message.reasoning_details = details;
  if (toolCalls.length) message.tool_calls = toolCalls;
  const parsed: ParsedCompletion = {
    choices: [{ index: 0, message, finish_reason: mapFinishReason("anthropic", str(body.stop_reason)) ?? "stop" }],
    usage: parseAnthropicUsage(body.usage),
  };
  const id = str(body.id);
  if (id) parsed.upstreamId = id;
  const model = str(body.model);
  if (model) parsed.upstreamModel = model;
  return parsed;
}
