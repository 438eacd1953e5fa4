/**
 * Anthropic Messages SSE stream -> StreamEvents. Events: message_start, content_block_start,
 * content_block_delta (text_delta, thinking_delta, input_json_delta, signature_delta,
 * citations_delta), content_block_stop, message_delta, message_stop, ping, error.
 *
 * A `thinking` block streams its text as `reasoning` deltas; when it stops, the whole block (text
 * and the `signature_delta` it carried) comes as one `reasoning_details` entry. A
 * `redacted_thinking` block comes whole in its `content_block_start`.
 *
 * A `tool_use` block's arguments are its `input_json_delta` pieces; when none carried anything
 * (a tool without arguments streams `input: {}` and one empty delta, and a whole input may come
 * in `content_block_start` with no delta at all), the block's `input` is sent as the arguments
 * when it stops, so a streamed tool call always carries JSON. A `message_start` that already
 * holds the finished message (content and `stop_reason`) is answered from it whole.
 *
 * Server-tool blocks (`server_tool_use`, `*_tool_result`, MCP) ran on Anthropic's side: the
 * answer is the text that follows them, so they are not client tool calls and are skipped
 * (docs/api-shapes.md). A block of a type the gateway does not know is skipped too, but an answer
 * that consisted only of such blocks ends with an error instead of an empty success.
 */
import { emptyUsage, type FinishReason, type StreamEvent } from "../types";
import { mapFinishReason } from "../finish-reason";
import { asArray, asRecord, str, tryParseJson } from "../json";
import { readSse } from "../sse";
import { isServerToolBlock, parseAnthropicUsage, reasoningDetailOf } from "./response";

interface OpenTool {
  toolIndex: number;
  /** The `input` of `content_block_start`. */
  input: unknown;
  /** Whether a non-empty `input_json_delta` was sent. */
  streamed: boolean;
}


export async function* parseAnthropicStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  let usage = emptyUsage();
  /** content block index -> the tool call being streamed */
  const tools = new Map<number, OpenTool>();
  let toolCount = 0;
  /** content block index -> the thinking block being streamed */
  const thinking = new Map<number, { type: "thinking"; thinking: string; signature: string }>();
  let details = 0;
  let delivered = false;
  const unknown = new Set<string>();

  /** A tool block that stops without streamed arguments sends its `input` (`{}` when none). */
  const closeTool = (index: number): StreamEvent | undefined => {
    const open = tools.get(index);
    tools.delete(index);
    if (!open || open.streamed) return undefined;
    return { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: open.toolIndex, function: { arguments: JSON.stringify(open.input ?? {}) } }] } };
  };
  const closeAllTools = function* (): Generator<StreamEvent> {
    for (const index of [...tools.keys()]) {
      const e = closeTool(index);
      if (e) yield e;
    }
  };
  /** The events of a block as `content_block_start` (or a whole `message_start`) carries it. */
  const startBlock = function* (block: Record<string, unknown>, index: number): Generator<StreamEvent> {
    const type = str(block.type) ?? "";
    if (type === "tool_use") {
      const i = toolCount++;
      tools.set(index, { toolIndex: i, input: block.input, streamed: false });
      delivered = true;
      yield { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: i, id: str(block.id) ?? `toolu_${i}`, type: "function", function: { name: str(block.name) ?? "", arguments: "" } }] } };
    } else if (type === "text") {
      const text = str(block.text);
      if (text) {
        delivered = true;
        yield { type: "delta", choiceIndex: 0, delta: { content: text } };
      }
    } else if (type === "thinking") {
      thinking.set(index, { type: "thinking", thinking: str(block.thinking) ?? "", signature: str(block.signature) ?? "" });
      const text = str(block.thinking);
      if (text) {
        delivered = true;
        yield { type: "delta", choiceIndex: 0, delta: { reasoning: text } };
      }
    } else if (type === "redacted_thinking") {
      const detail = reasoningDetailOf(block, details);
      if (detail) {
        details += 1;
        yield { type: "delta", choiceIndex: 0, delta: { reasoning_details: [detail] } };
      }
    } else if (!isServerToolBlock(type)) {
      unknown.add(type || "(untyped)");
    }
  };
  const stopBlock = function* (index: number): Generator<StreamEvent> {
    const tool = closeTool(index);
    if (tool) yield tool;
    const block = thinking.get(index);
    thinking.delete(index);
    const detail = block?.signature ? reasoningDetailOf(block, details) : undefined;
    if (detail) {
      details += 1;
      yield { type: "delta", choiceIndex: 0, delta: { reasoning_details: [detail] } };
    }
  };
  /** Nothing the caller can use came, only blocks the gateway cannot translate: not a success. */
  const untranslatable = (): StreamEvent | undefined =>
    !delivered && unknown.size
      ? { type: "error", message: `the answer came only as content the gateway cannot translate (${[...unknown].join(", ")})`, errorType: "unsupported_upstream_content" }
      : undefined;

  /** The finish (or, for an answer of untranslatable blocks only, the error) and the usage. */
  const finished = function* (finish: FinishReason | null): Generator<StreamEvent> {
    const bad = finish ? untranslatable() : undefined;
    if (finish && !bad) yield { type: "finish", choiceIndex: 0, finishReason: finish };
    yield { type: "usage", usage };
    if (bad) yield bad;
  };

  for await (const frame of readSse(body)) {
    if (!frame.data.trim()) continue;
    const data = tryParseJson(frame.data);
    if (data === undefined) {
      yield { type: "error", message: "malformed stream event from upstream", errorType: "malformed_response" };
      return;
    }
    const ev = asRecord(data);
    const type = frame.event ?? str(ev.type);
    const index = typeof ev.index === "number" ? ev.index : -1;
    switch (type) {
      case "message_start": {
        const message = asRecord(ev.message);
        usage = parseAnthropicUsage(message.usage, usage);
        yield { type: "delta", choiceIndex: 0, delta: { role: "assistant" } };
        // Programmatic tool calling may send the finished message here, then only message_stop.
        for (const [i, block] of asArray(message.content).entries()) {
          yield* startBlock(asRecord(block), i);
          yield* stopBlock(i);
        }
        yield* closeAllTools();
        const finish = mapFinishReason("anthropic", str(message.stop_reason));
        yield* finished(finish);
        if (finish && untranslatable()) return;
        break;
      }
      case "content_block_start":
        yield* startBlock(asRecord(ev.content_block), index);
        break;
      case "content_block_delta": {
        const d = asRecord(ev.delta);
        const open = thinking.get(index);
        if (d.type === "text_delta" && str(d.text)) {
          delivered = true;
          yield { type: "delta", choiceIndex: 0, delta: { content: str(d.text) ?? "" } };
        } else if (d.type === "thinking_delta" && str(d.thinking)) {
          if (open) open.thinking += str(d.thinking) ?? "";
          delivered = true;
          yield { type: "delta", choiceIndex: 0, delta: { reasoning: str(d.thinking) ?? "" } };
        } else if (d.type === "signature_delta") {
          if (open) open.signature += str(d.signature) ?? "";
        } else if (d.type === "input_json_delta") {
          const tool = tools.get(index);
          const piece = str(d.partial_json);
          if (tool && piece) {
            tool.streamed = true;
            yield { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: tool.toolIndex, function: { arguments: piece } }] } };
          }
        }
        break;
      }
      case "content_block_stop":
        yield* stopBlock(index);
        break;
      case "message_delta": {
        usage = parseAnthropicUsage(ev.usage, usage);
        yield* closeAllTools();
        const finish = mapFinishReason("anthropic", str(asRecord(ev.delta).stop_reason));
        yield* finished(finish);
        if (finish && untranslatable()) return;
        break;
      }
      case "message_stop":
        yield* closeAllTools();
        return;
      case "error": {
        const err = asRecord(ev.error);
        yield { type: "error", message: str(err.message) ?? "upstream stream error", errorType: str(err.type) ?? "api_error" };
        return;
      }
      default:
        break; // ping, unknown future events
    }
  }
}
