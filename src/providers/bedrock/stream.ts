/**
 * ConverseStream (binary eventstream) -> StreamEvents. Event types (`:event-type`): messageStart,
 * contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata. Exceptions come
 * as `:message-type: exception` with `:exception-type`.
 *
 * A reasoning block streams its text as `reasoning` deltas and its `signature` (or its
 * `redactedContent`, base64 bytes, possibly in pieces) as separate deltas; when the block stops,
 * the whole block comes as one `reasoning_details` entry, as from the Anthropic adapter.
 */
import type { StreamEvent } from "../types";
import { mapFinishReason } from "../finish-reason";
import { asRecord, isRecord, str, tryParseJson } from "../json";
import { EventStreamError, readEventStream } from "./eventstream";
import { bedrockReasoningDetail, parseBedrockUsage } from "./response";

const utf8 = new TextDecoder();

/** `contentBlockDelta` members the adapter translates (`citation` annotates streamed text). */
const DELTA_KEYS = new Set(["text", "toolUse", "reasoningContent", "citation"]);

const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  throttlingException: 429,
  validationException: 400,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
};

/** Base64 to a binary string; undefined when it is not base64. */
function decodeBase64(b64: string): string | undefined {
  try {
    return atob(b64);
  } catch {
    return undefined;
  }
}

type OpenReasoning = { text: string; signature: string; redacted: string; broken: boolean };

/** A finished reasoning block as a reasoning detail, when it can go back upstream. */
function streamedDetail(open: OpenReasoning, index: number) {
  if (open.broken) return undefined;
  if (open.redacted) return bedrockReasoningDetail({ redactedContent: btoa(open.redacted) }, index);
  return open.signature ? bedrockReasoningDetail({ reasoningText: { text: open.text, signature: open.signature } }, index) : undefined;
}

export async function* parseBedrockStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  /** content block index -> tool call index */
  const toolIndex = new Map<number, number>();
  /**
   * content block index -> the reasoning block being streamed (redacted bytes as a binary string;
   * `broken` when a piece was not base64: a block that cannot be rebuilt is not kept)
   */
  const reasoningBlocks = new Map<number, OpenReasoning>();
  /** content block indexes of tool calls that have streamed no arguments yet */
  const argless = new Set<number>();
  /** A tool call that ends without streamed arguments (a tool without parameters) gets `{}`, JSON as callers parse it. */
  const closeTool = (blockIndex: number): StreamEvent | undefined => {
    const i = toolIndex.get(blockIndex);
    if (i === undefined || !argless.delete(blockIndex)) return undefined;
    return { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: i, function: { arguments: "{}" } }] } };
  };
  let details = 0;
  let delivered = false;
  const unknown = new Set<string>();
  try {
    for await (const msg of readEventStream(body)) {
      const messageType = msg.headers[":message-type"];
      const payload = asRecord(tryParseJson(utf8.decode(msg.payload)));
      if (messageType === "exception" || messageType === "error") {
        const type = String(msg.headers[":exception-type"] ?? msg.headers[":error-code"] ?? "api_error");
        const ev: StreamEvent = { type: "error", message: str(payload.message) ?? str(payload.Message) ?? String(msg.headers[":error-message"] ?? "upstream stream error"), errorType: type };
        // Own keys only: an exception type `constructor` or `toString` has no known status.
        if (Object.hasOwn(EXCEPTION_STATUS, type)) ev.status = EXCEPTION_STATUS[type]!;
        yield ev;
        return;
      }
      const blockIndex = typeof payload.contentBlockIndex === "number" ? payload.contentBlockIndex : -1;
      switch (msg.headers[":event-type"]) {
        case "messageStart":
          yield { type: "delta", choiceIndex: 0, delta: { role: "assistant" } };
          break;
        case "contentBlockStart": {
          const tool = asRecord(asRecord(payload.start).toolUse);
          for (const k of Object.keys(asRecord(payload.start))) if (k !== "toolUse") unknown.add(k);
          if (isRecord(asRecord(payload.start).toolUse)) {
            delivered = true;
            const i = toolIndex.size;
            toolIndex.set(blockIndex, i);
            argless.add(blockIndex);
            yield { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: i, id: str(tool.toolUseId) ?? `tooluse_${i}`, type: "function", function: { name: str(tool.name) ?? "", arguments: "" } }] } };
          }
          break;
        }
        case "contentBlockDelta": {
          const d = asRecord(payload.delta);
          // Citation deltas annotate text streamed as text deltas; other members are not translated.
          for (const k of Object.keys(d)) if (!DELTA_KEYS.has(k)) unknown.add(k);
          const text = str(d.text);
          if (text) {
            delivered = true;
            yield { type: "delta", choiceIndex: 0, delta: { content: text } };
          }
          if (isRecord(d.reasoningContent)) {
            const rc = d.reasoningContent;
            const open = reasoningBlocks.get(blockIndex) ?? { text: "", signature: "", redacted: "", broken: false };
            reasoningBlocks.set(blockIndex, open);
            const reasoning = str(rc.text);
            if (reasoning) {
              delivered = true;
              open.text += reasoning;
              yield { type: "delta", choiceIndex: 0, delta: { reasoning } };
            }
            open.signature += str(rc.signature) ?? "";
            const redacted = str(rc.redactedContent);
            const bytes = redacted ? decodeBase64(redacted) : "";
            if (bytes === undefined) open.broken = true;
            else open.redacted += bytes;
          }
          const input = str(asRecord(d.toolUse).input);
          const i = toolIndex.get(blockIndex);
          if (input && i !== undefined) {
            argless.delete(blockIndex);
            yield { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: i, function: { arguments: input } }] } };
          }
          break;
        }
        case "messageStop": {
          for (const b of [...argless]) {
            const e = closeTool(b);
            if (e) yield e;
          }
          const finish = mapFinishReason("bedrock", str(payload.stopReason));
          if (finish && !delivered && unknown.size) {
            yield { type: "error", message: `the answer came only as content the gateway cannot translate (${[...unknown].join(", ")})`, errorType: "unsupported_upstream_content" };
            return;
          }
          if (finish) yield { type: "finish", choiceIndex: 0, finishReason: finish };
          break;
        }
        case "metadata":
          if (isRecord(payload.usage)) yield { type: "usage", usage: parseBedrockUsage(payload.usage) };
          break;
        case "contentBlockStop": {
          const tool = closeTool(blockIndex);
          if (tool) yield tool;
          const open = reasoningBlocks.get(blockIndex);
          reasoningBlocks.delete(blockIndex);
          const detail = open ? streamedDetail(open, details) : undefined;
          if (detail) {
            details += 1;
            yield { type: "delta", choiceIndex: 0, delta: { reasoning_details: [detail] } };
          }
          break;
        }
        default:
          break; // future events
      }
    }
  } catch (err) {
    if (!(err instanceof EventStreamError)) throw err;
    yield { type: "error", message: `malformed event stream from upstream: ${err.message}`, errorType: "malformed_response" };
  }
}
