/** Non-streamed OpenAI Chat Completions body -> ParsedCompletion. */
import type { AssistantMessage, Choice, ImageOutput, ParsedCompletion, ToolCall } from "../types";
import { mapFinishReason } from "../finish-reason";
import { malformed } from "../errors";
import { asArray, asRecord, isRecord, str } from "../json";
import { contentPieces, onlyUnknown } from "./content";
import { parseOpenAIUsage } from "./usage";
import { customCallOf } from "../tool-call-wire";

/** Reasoning text under either field name providers use. */
export const reasoningOf = (m: Record<string, unknown>): string | undefined =>
  str(m.reasoning_content) ?? str(m.reasoning);

export function parseToolCalls(raw: unknown): ToolCall[] {
  return asArray(raw).flatMap((t, i): ToolCall[] => {
    const r = asRecord(t);
    const custom = customCallOf(r);
    if (custom) {
      if (!custom.name) return [];
      return [{ id: str(r.id) ?? `call_${i}`, type: "custom" as const, function: { name: custom.name, arguments: custom.input ?? "" } }];
    }
    const fn = asRecord(r.function);
    const name = str(fn.name);
    if (!name) return [];
    const args = fn.arguments;
    return [{
      id: str(r.id) ?? `call_${i}`,
      type: "function" as const,
      function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) },
    }];
  });
}

export function parseImages(raw: unknown): ImageOutput[] {
  return asArray(raw).flatMap((img) => {
    const url = str(asRecord(asRecord(img).image_url).url);
    return url ? [{ type: "image_url" as const, image_url: { url } }] : [];
  });
}

function parseMessage(raw: unknown): AssistantMessage {
  const m = asRecord(raw);
  const pieces = m.content === null || m.content === undefined ? undefined : contentPieces(m.content);
  const toolCalls = parseToolCalls(m.tool_calls);
  const images = [...parseImages(m.images), ...(pieces?.images ?? [])];
  const reasoning = [reasoningOf(m), pieces?.reasoning].filter(Boolean).join("");
  const refusal = [str(m.refusal), pieces?.refusal].filter(Boolean).join("");
  if (pieces && onlyUnknown(pieces) && !toolCalls.length && !images.length && !reasoning && !refusal) {
    throw malformed(`the answer came only as content the gateway cannot translate (${[...new Set(pieces.unknown)].join(", ")})`);
  }
  const content = typeof m.content === "string" ? m.content : pieces ? pieces.text || (toolCalls.length || images.length || refusal ? null : "") : null;
  const message: AssistantMessage = { role: "assistant", content };
  if (reasoning) message.reasoning = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (images.length) message.images = images;
  if (refusal) message.refusal = refusal;
  return message;
}

export function parseOpenAIResponse(body: unknown): ParsedCompletion {
  if (!isRecord(body)) throw malformed("body is not an object");
  if (!Array.isArray(body.choices)) {
    const err = asRecord(body.error);
    throw malformed(str(err.message) ?? "no choices");
  }
  const choices: Choice[] = body.choices.map((c, i) => {
    const r = asRecord(c);
    const choice: Choice = {
      index: typeof r.index === "number" ? r.index : i,
      message: parseMessage(r.message),
      finish_reason: mapFinishReason("openai", str(r.finish_reason)),
    };
    if (r.logprobs !== undefined && r.logprobs !== null) choice.logprobs = r.logprobs;
    return choice;
  });
  const parsed: ParsedCompletion = { choices, usage: parseOpenAIUsage(body.usage) };
  const id = str(body.id);
  if (id) parsed.upstreamId = id;
  const model = str(body.model);
  if (model) parsed.upstreamModel = model;
  const fp = str(body.system_fingerprint);
  if (fp) parsed.systemFingerprint = fp;
  return parsed;
}
