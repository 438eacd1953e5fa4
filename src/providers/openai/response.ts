/** Non-streamed OpenAI Chat Completions body -> ParsedCompletion. */
import type { AssistantMessage, Choice, ImageOutput, ParsedCompletion, ToolCall } from "../types";
import { mapFinishReason } from "../finish-reason";
import { malformed } from "../errors";
import { asArray, asRecord, contentText, isRecord, str } from "../json";
import { parseOpenAIUsage } from "./usage";

/** Reasoning text under either field name providers use. */
export const reasoningOf = (m: Record<string, unknown>): string | undefined =>
  str(m.reasoning_content) ?? str(m.reasoning);

export function parseToolCalls(raw: unknown): ToolCall[] {
  return asArray(raw).flatMap((t, i) => {
    const r = asRecord(t);
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
  const content = m.content === null || m.content === undefined ? null : contentText(m.content);
  const message: AssistantMessage = { role: "assistant", content };
  const reasoning = reasoningOf(m);
  if (reasoning) message.reasoning = reasoning;
  const toolCalls = parseToolCalls(m.tool_calls);
  if (toolCalls.length) message.tool_calls = toolCalls;
  const images = parseImages(m.images);
  if (images.length) message.images = images;
  const refusal = str(m.refusal);
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
