/** Bedrock Converse response -> ParsedCompletion; usage shared with the stream. */
import { emptyUsage, type AssistantMessage, type NormalizedUsage, type ParsedCompletion, type ReasoningDetail, type ToolCall } from "../types";
import { reasoningDetailOf, sendableReasoning } from "../anthropic/response";
import { mapFinishReason } from "../finish-reason";
import { malformed } from "../errors";
import { asArray, asRecord, count, isRecord, str } from "../json";

/** Bedrock's inputTokens excludes cache reads/writes (totalTokens includes them); OpenAI's prompt includes them. */
export function parseBedrockUsage(raw: unknown): NormalizedUsage {
  const u = asRecord(raw);
  const usage = emptyUsage();
  usage.cachedTokens = count(u.cacheReadInputTokens);
  usage.cacheWrite5mTokens = count(u.cacheWriteInputTokens);
  usage.promptTokens = count(u.inputTokens) + usage.cachedTokens + usage.cacheWrite5mTokens;
  usage.completionTokens = count(u.outputTokens);
  return usage;
}

/**
 * A Converse `reasoningContent` block (`reasoningText: {text, signature}` or `redactedContent`,
 * base64 bytes in JSON) as the same reasoning detail Anthropic's `thinking` / `redacted_thinking`
 * blocks give, so a client can move a conversation between Anthropic and Bedrock Claude.
 */
export function bedrockReasoningDetail(reasoningContent: unknown, index: number): ReasoningDetail | undefined {
  const rc = asRecord(reasoningContent);
  const redacted = str(rc.redactedContent);
  if (redacted) return reasoningDetailOf({ type: "redacted_thinking", data: redacted }, index);
  if (!isRecord(rc.reasoningText)) return undefined;
  return reasoningDetailOf({ type: "thinking", thinking: str(rc.reasoningText.text) ?? "", signature: str(rc.reasoningText.signature) }, index);
}

/** Converse content block members the adapter translates (or that carry nothing for the caller). */
const BLOCK_KEYS = new Set(["text", "toolUse", "reasoningContent", "citationsContent", "cachePoint"]);

export function parseBedrockResponse(body: unknown): ParsedCompletion {
  const message = asRecord(asRecord(asRecord(body).output).message);
  if (!isRecord(body) || !Array.isArray(message.content)) throw malformed(str(asRecord(body).message) ?? "no output.message");
  let text = "";
  let reasoning = "";
  const toolCalls: ToolCall[] = [];
  const details: ReasoningDetail[] = [];
  const unknown: string[] = [];
  for (const b of asArray(message.content)) {
    const block = asRecord(b);
    const detail = isRecord(block.reasoningContent) ? bedrockReasoningDetail(block.reasoningContent, details.length) : undefined;
    if (detail) details.push(detail);
    const t = str(block.text);
    if (t !== undefined) text += t;
    // Text with citations (documents with citations enabled): the generated text is the answer.
    for (const c of asArray(asRecord(block.citationsContent).content)) text += str(asRecord(c).text) ?? "";
    const kinds = Object.keys(block).filter((k) => !BLOCK_KEYS.has(k));
    if (kinds.length) unknown.push(...kinds);
    const r = str(asRecord(asRecord(block.reasoningContent).reasoningText).text);
    if (r) reasoning += r;
    if (isRecord(block.toolUse)) {
      toolCalls.push({
        id: str(block.toolUse.toolUseId) ?? `tooluse_${toolCalls.length}`,
        type: "function",
        function: { name: str(block.toolUse.name) ?? "", arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    }
  }
  // An answer made only of blocks the gateway cannot translate is an error, not an empty success.
  if (!text && !reasoning && !toolCalls.length && unknown.length) throw malformed(`the answer came only as content the gateway cannot translate (${[...new Set(unknown)].join(", ")})`);
  const out: AssistantMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (reasoning) out.reasoning = reasoning;
  if (sendableReasoning(details)) out.reasoning_details = details;
  if (toolCalls.length) out.tool_calls = toolCalls;
  return {
    choices: [{ index: 0, message: out, finish_reason: mapFinishReason("bedrock", str(body.stopReason)) ?? "stop" }],
    usage: parseBedrockUsage(body.usage),
  };
}
