/** Gemini `streamGenerateContent?alt=sse` -> StreamEvents (each SSE data is a GenerateContentResponse). */
import type { ChunkDelta, StreamEvent } from "../types";
import { asArray, asRecord, isRecord, str, tryParseJson } from "../json";
import { readSse } from "../sse";
import { candidateFinish, candidatePieces, geminiToolCallId, parseGeminiUsage, signatureExtra, untranslatable } from "./response";

export async function* parseGeminiStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const prefix = crypto.randomUUID().replace(/-/g, "").slice(0, 16);
  /** per choice: number of tool calls so far (tool call index) */
  const toolCount = new Map<number, number>();
  let started = false;
  let delivered = false;
  const unknown: string[] = [];
  for await (const frame of readSse(body)) {
    if (!frame.data.trim()) continue;
    const chunk = tryParseJson(frame.data);
    if (chunk === undefined) {
      yield { type: "error", message: "malformed stream chunk from upstream", errorType: "malformed_response" };
      return;
    }
    const c = asRecord(chunk);
    if (isRecord(c.error)) {
      const status = typeof c.error.code === "number" ? c.error.code : undefined;
      const ev: StreamEvent = { type: "error", message: str(c.error.message) ?? "upstream stream error", errorType: str(c.error.status) ?? "api_error" };
      if (status !== undefined) ev.status = status;
      yield ev;
      return;
    }
    if (!started) {
      started = true;
      yield { type: "delta", choiceIndex: 0, delta: { role: "assistant" } };
    }
    for (const [i, cand] of asArray(c.candidates).entries()) {
      const idx = asRecord(cand).index;
      const choiceIndex = typeof idx === "number" ? idx : i;
      const p = candidatePieces(cand);
      const delta: ChunkDelta = {};
      if (p.reasoning) delta.reasoning = p.reasoning;
      if (p.text) delta.content = p.text;
      if (p.images.length) delta.images = p.images;
      if (p.toolCalls.length) {
        const base = toolCount.get(choiceIndex) ?? 0;
        delta.tool_calls = p.toolCalls.map((t, j) => ({
          index: base + j,
          id: t.id ?? geminiToolCallId(prefix, base + j),
          type: "function" as const,
          function: { name: t.name, arguments: t.arguments },
          ...signatureExtra(t),
        }));
        toolCount.set(choiceIndex, base + p.toolCalls.length);
      }
      unknown.push(...p.unknown);
      if (Object.keys(delta).length) {
        delivered = true;
        yield { type: "delta", choiceIndex, delta };
      }
      const finish = candidateFinish(cand, (toolCount.get(choiceIndex) ?? 0) > 0);
      // An answer made only of parts the gateway cannot translate is not a success.
      if (finish && !delivered && unknown.length) {
        if (isRecord(c.usageMetadata)) yield { type: "usage", usage: parseGeminiUsage(c.usageMetadata) };
        yield { type: "error", message: untranslatable(unknown), errorType: "unsupported_upstream_content" };
        return;
      }
      if (finish) yield { type: "finish", choiceIndex, finishReason: finish };
    }
    const blocked = str(asRecord(c.promptFeedback).blockReason);
    if (blocked && asArray(c.candidates).length === 0) yield { type: "finish", choiceIndex: 0, finishReason: "content_filter" };
    if (isRecord(c.usageMetadata)) yield { type: "usage", usage: parseGeminiUsage(c.usageMetadata) };
  }
}
