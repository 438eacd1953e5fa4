/**
 * Anthropic Messages SSE stream -> StreamEvents. Events: message_start, content_block_start,
 * content_block_delta (text_delta, thinking_delta, input_json_delta, signature_delta),
 * content_block_stop, message_delta, message_stop, ping, error.
 *
 * A `thinking` block streams its text as `reasoning` deltas; when it stops, the whole block (text
 * and the `signature_delta` it carried) comes as one `reasoning_details` entry. A
 * `redacted_thinking` block comes whole in its `content_block_start`.
 */
import { emptyUsage, type StreamEvent } from "../types";
import { mapFinishReason } from "../finish-reason";
import { asRecord, str, tryParseJson } from "../json";
import { readSse } from "../sse";
import { parseAnthropicUsage, reasoningDetailOf } from "./response";

export async function* parseAnthropicStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  let usage = emptyUsage();
  /** content block index -> tool call index (0, 1, ... in order of appearance) */
  const toolIndex = new Map<number, number>();
  /** content block index -> the thinking block being streamed */
  const thinking = new Map<number, { type: "thinking"; thinking: string; signature: string }>();
  let details = 0;
  for await (const frame of readSse(body)) {
    if (!frame.data.trim()) continue;
    const data = tryParseJson(frame.data);
    if (data === undefined) {
      yield { type: "error", message: "malformed stream event from upstream", errorType: "malformed_response" };
      return;
    }
    const ev = asRecord(data);
    const type = frame.event ?? str(ev.type);
    switch (type) {
      case "message_start": {
        usage = parseAnthropicUsage(asRecord(ev.message).usage, usage);
        yield { type: "delta", choiceIndex: 0, delta: { role: "assistant" } };
        yield { type: "usage", usage };
        break;
      }
      case "content_block_start": {
        const block = asRecord(ev.content_block);
        const index = typeof ev.index === "number" ? ev.index : -1;
        if (block.type === "tool_use") {
          const i = toolIndex.size;
          toolIndex.set(index, i);
          yield {
            type: "delta",
            choiceIndex: 0,
            delta: { tool_calls: [{ index: i, id: str(block.id) ?? `toolu_${i}`, type: "function", function: { name: str(block.name) ?? "", arguments: "" } }] },
          };
        } else if (block.type === "text" && str(block.text)) {
          yield { type: "delta", choiceIndex: 0, delta: { content: str(block.text) ?? "" } };
        } else if (block.type === "thinking") {
          thinking.set(index, { type: "thinking", thinking: str(block.thinking) ?? "", signature: str(block.signature) ?? "" });
          if (str(block.thinking)) yield { type: "delta", choiceIndex: 0, delta: { reasoning: str(block.thinking) ?? "" } };
        } else if (block.type === "redacted_thinking") {
          const detail = reasoningDetailOf(block, details);
          if (detail) {
            details += 1;
            yield { type: "delta", choiceIndex: 0, delta: { reasoning_details: [detail] } };
          }
        }
        break;
      }
      case "content_block_delta": {
        const d = asRecord(ev.delta);
        const open = thinking.get(typeof ev.index === "number" ? ev.index : -1);
        if (d.type === "text_delta" && str(d.text)) yield { type: "delta", choiceIndex: 0, delta: { content: str(d.text) ?? "" } };
        else if (d.type === "thinking_delta" && str(d.thinking)) {
          if (open) open.thinking += str(d.thinking) ?? "";
          yield { type: "delta", choiceIndex: 0, delta: { reasoning: str(d.thinking) ?? "" } };
        } else if (d.type === "signature_delta") {
          if (open) open.signature += str(d.signature) ?? "";
        } else if (d.type === "input_json_delta") {
          const i = toolIndex.get(typeof ev.index === "number" ? ev.index : -1);
          const piece = str(d.partial_json);
          if (i !== undefined && piece) yield { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] } };
        }
        break;
      }
      case "content_block_stop": {
        const index = typeof ev.index === "number" ? ev.index : -1;
        const block = thinking.get(index);
        thinking.delete(index);
        const detail = block?.signature ? reasoningDetailOf(block, details) : undefined;
        if (detail) {
          details += 1;
          yield { type: "delta", choiceIndex: 0, delta: { reasoning_details: [detail] } };
        }
        break;
      }
      case "message_delta": {
        usage = parseAnthropicUsage(ev.usage, usage);
        const finish = mapFinishReason("anthropic", str(asRecord(ev.delta).stop_reason));
        if (finish) yield { type: "finish", choiceIndex: 0, finishReason: finish };
        yield { type: "usage", usage };
        break;
      }
      case "message_stop":
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
