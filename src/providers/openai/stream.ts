/**
 * OpenAI Chat Completions SSE stream (`data: {chunk}` ... `data: [DONE]`) -> StreamEvents.
 * `delta.content` may be a string or an array of parts (content.ts); `delta.refusal` is kept.
 */
import type { ChunkDelta, StreamEvent } from "../types";
import { mapFinishReason } from "../finish-reason";
import { asArray, asRecord, isRecord, str, tryParseJson } from "../json";
import { readSse } from "../sse";
import { parseImages, reasoningOf } from "./response";
import { contentPieces } from "./content";
import { hasUsage, parseOpenAIUsage } from "./usage";
import { customCallOf } from "../tool-call-wire";

type ToolCallDelta = NonNullable<ChunkDelta["tool_calls"]>[number];

function toolCallDeltas(raw: unknown): ToolCallDelta[] {
  return asArray(raw).map((t, i) => {
    const r = asRecord(t);
    const custom = customCallOf(r);
    const d: ToolCallDelta = { index: typeof r.index === "number" ? r.index : i, function: {} };
    const id = str(r.id);
    if (id) {
      d.id = id;
      d.type = custom ? "custom" : "function";
    }
    if (custom) {
      // A custom tool's input streams as `custom.input` pieces; it is free-form text, not JSON.
      if (custom.name) d.function.name = custom.name;
      if (custom.input) d.function.arguments = custom.input;
      return d;
    }
    const fn = asRecord(r.function);
    const name = str(fn.name);
    if (name) d.function.name = name;
    const args = fn.arguments;
    if (typeof args === "string") d.function.arguments = args;
    else if (isRecord(args)) d.function.arguments = JSON.stringify(args);
    return d;
  });
}

/** A chunk's delta, and the types of content parts it could not translate. */
function deltaOf(raw: unknown): { delta: ChunkDelta | undefined; unknown: string[] } {
  const d = asRecord(raw);
  const delta: ChunkDelta = {};
  if (d.role === "assistant") delta.role = "assistant";
  const pieces = d.content === null || d.content === undefined ? undefined : contentPieces(d.content);
  if (pieces?.text) delta.content = pieces.text;
  const reasoning = [reasoningOf(d), pieces?.reasoning].filter(Boolean).join("");
  if (reasoning) delta.reasoning = reasoning;
  const refusal = [str(d.refusal), pieces?.refusal].filter(Boolean).join("");
  if (refusal) delta.refusal = refusal;
  const tools = toolCallDeltas(d.tool_calls);
  if (tools.length) delta.tool_calls = tools;
  const images = [...parseImages(d.images), ...(pieces?.images ?? [])];
  if (images.length) delta.images = images;
  return { delta: Object.keys(delta).length ? delta : undefined, unknown: pieces?.unknown ?? [] };
}

/** Events of one decoded chunk object (exported for reuse and tests). */
export function chunkEvents(chunk: unknown, unknown: string[] = []): StreamEvent[] {
  const c = asRecord(chunk);
  if (isRecord(c.error)) {
    return [{ type: "error", message: str(c.error.message) ?? "upstream stream error", errorType: str(c.error.type) ?? str(c.error.code) ?? "upstream_error" }];
  }
  const events: StreamEvent[] = [];
  asArray(c.choices).forEach((choice, i) => {
    const ch = asRecord(choice);
    const choiceIndex = typeof ch.index === "number" ? ch.index : i;
    const { delta, unknown: parts } = deltaOf(ch.delta);
    unknown.push(...parts);
    if (delta) events.push({ type: "delta", choiceIndex, delta });
    const finish = mapFinishReason("openai", str(ch.finish_reason));
    if (finish) events.push({ type: "finish", choiceIndex, finishReason: finish });
  });
  if (hasUsage(c.usage)) events.push({ type: "usage", usage: parseOpenAIUsage(c.usage) });
  return events;
}

export async function* parseOpenAIStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  // Stopping at [DONE] reads the (empty) rest of the body instead of cancelling it (readSse).
  let sawDone = false;
  let delivered = false;
  const unknown: string[] = [];
  for await (const frame of readSse(body, { ended: () => sawDone })) {
    const data = frame.data.trim();
    if (!data) continue;
    if (data === "[DONE]") {
      sawDone = true;
      return;
    }
    const chunk = tryParseJson(data);
    if (chunk === undefined) {
      yield { type: "error", message: "malformed stream chunk from upstream", errorType: "malformed_response" };
      return;
    }
    for (const e of chunkEvents(chunk, unknown)) {
      if (e.type === "delta" && (e.delta.content || e.delta.reasoning || e.delta.refusal || e.delta.tool_calls || e.delta.images)) delivered = true;
      // An answer made only of content parts the gateway cannot translate is not a success.
      if (e.type === "finish" && !delivered && unknown.length) {
        yield { type: "error", message: `the answer came only as content the gateway cannot translate (${[...new Set(unknown)].join(", ")})`, errorType: "unsupported_upstream_content" };
        return;
      }
      yield e;
    }
  }
}
