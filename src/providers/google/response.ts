/** Gemini GenerateContentResponse -> ParsedCompletion; usage and candidate parsing shared with the stream. */
import { emptyUsage, type AssistantMessage, type Choice, type FinishReason, type ImageOutput, type NormalizedUsage, type ParsedCompletion, type ToolCall, type ToolCallExtra } from "../types";
import { toDataUrl } from "../data-url";
import { mapFinishReason } from "../finish-reason";
import { malformed } from "../errors";
import { asArray, asRecord, count, isRecord, str } from "../json";

function modalityCounts(details: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of asArray(details)) {
    const r = asRecord(d);
    const m = str(r.modality);
    if (m) out[m] = (out[m] ?? 0) + count(r.tokenCount);
  }
  return out;
}

/** candidatesTokenCount excludes thoughts; OpenAI completion tokens include reasoning. */
export function parseGeminiUsage(raw: unknown): NormalizedUsage {
  const u = asRecord(raw);
  const usage = emptyUsage();
  const thoughts = count(u.thoughtsTokenCount);
  usage.promptTokens = count(u.promptTokenCount) + count(u.toolUsePromptTokenCount);
  usage.completionTokens = count(u.candidatesTokenCount) + thoughts;
  usage.reasoningTokens = thoughts;
  usage.cachedTokens = count(u.cachedContentTokenCount);
  const prompt = modalityCounts(u.promptTokensDetails);
  usage.audioInputTokens = prompt.AUDIO ?? 0;
  usage.imageInputTokens = prompt.IMAGE ?? 0;
  usage.videoInputTokens = prompt.VIDEO ?? 0;
  const out = modalityCounts(u.candidatesTokensDetails);
  usage.imageOutputTokens = out.IMAGE ?? 0;
  usage.audioOutputTokens = out.AUDIO ?? 0;
  return usage;
}

export interface CandidatePieces {
  text: string;
  reasoning: string;
  toolCalls: Array<{ id?: string; name: string; arguments: string; thoughtSignature?: string }>;
  images: ImageOutput[];
  /** Keys of parts nothing above could take. */
  unknown: string[];
}

/** Part keys that carry no answer of their own (metadata of a part, or input-only parts). */
const METADATA_KEYS = new Set(["thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"]);

/**
 * Code the model ran with the code-execution tool, and its output, as Markdown in the answer's
 * text: an OpenAI-format caller has no other place for them, and the text around them refers to them.
 */
function codeText(part: Record<string, unknown>): string | undefined {
  if (isRecord(part.executableCode)) {
    const lang = (str(part.executableCode.language) ?? "").toLowerCase().replace("language_unspecified", "");
    return `\n\`\`\`${lang}\n${str(part.executableCode.code) ?? ""}\n\`\`\`\n`;
  }
  if (isRecord(part.codeExecutionResult)) {
    const output = str(part.codeExecutionResult.output) ?? "";
    return output ? `\n\`\`\`output\n${output}\n\`\`\`\n` : "";
  }
  return undefined;
}

export function candidatePieces(candidate: unknown): CandidatePieces {
  const pieces: CandidatePieces = { text: "", reasoning: "", toolCalls: [], images: [], unknown: [] };
  for (const p of asArray(asRecord(asRecord(candidate).content).parts)) {
    const part = asRecord(p);
    const text = str(part.text);
    if (text !== undefined) {
      if (part.thought === true) pieces.reasoning += text;
      else pieces.text += text;
    }
    const code = codeText(part);
    if (code !== undefined) {
      if (part.thought === true) pieces.reasoning += code;
      else pieces.text += code;
    }
    const keys = Object.keys(part).filter((k) => !METADATA_KEYS.has(k));
    if (text === undefined && code === undefined && !isRecord(part.functionCall) && !isRecord(part.inlineData) && keys.length) pieces.unknown.push(...keys);
    if (isRecord(part.functionCall)) {
      const fc = part.functionCall;
      const call: CandidatePieces["toolCalls"][number] = { name: str(fc.name) ?? "", arguments: JSON.stringify(fc.args ?? {}) };
      const id = str(fc.id);
      if (id) call.id = id;
      const signature = str(part.thoughtSignature);
      if (signature) call.thoughtSignature = signature;
      pieces.toolCalls.push(call);
    }
    const inline = asRecord(part.inlineData);
    const data = str(inline.data);
    if (data && part.thought !== true) pieces.images.push({ type: "image_url", image_url: { url: toDataUrl(str(inline.mimeType) ?? "image/png", data) } });
  }
  return pieces;
}

export const untranslatable = (parts: readonly string[]): string => `the answer came only as content the gateway cannot translate (${[...new Set(parts)].join(", ")})`;

/** Gemini says STOP even when it called functions; OpenAI says tool_calls. */
export function candidateFinish(candidate: unknown, calledTools: boolean): FinishReason | null {
  const fr = mapFinishReason("google", str(asRecord(candidate).finishReason));
  return calledTools && fr === "stop" ? "tool_calls" : fr;
}

/** Gemini's thought signature of a function call, where OpenAI-compatible clients keep it (Google's own shape). */
export const signatureExtra = (t: { thoughtSignature?: string }): { extra_content?: ToolCallExtra } =>
  t.thoughtSignature ? { extra_content: { google: { thought_signature: t.thoughtSignature } } } : {};

/** Stable per-response tool call ids when Gemini gives none. */
export const geminiToolCallId = (prefix: string, i: number): string => `call_${prefix}_${i}`;

export function parseGeminiResponse(body: unknown): ParsedCompletion {
  if (!isRecord(body)) throw malformed("body is not an object");
  if (isRecord(body.error)) throw malformed(str(body.error.message) ?? "error body");
  const prefix = (str(body.responseId) ?? crypto.randomUUID()).replace(/[^A-Za-z0-9]/g, "").slice(0, 16);
  const candidates = asArray(body.candidates);
  const choices: Choice[] = candidates.map((c, i) => {
    const p = candidatePieces(c);
    const toolCalls: ToolCall[] = p.toolCalls.map((t, j) => ({
      id: t.id ?? geminiToolCallId(prefix, j),
      type: "function",
      function: { name: t.name, arguments: t.arguments },
      ...signatureExtra(t),
    }));
    if (!p.text && !p.reasoning && !toolCalls.length && !p.images.length && p.unknown.length) throw malformed(untranslatable(p.unknown));
    const message: AssistantMessage = { role: "assistant", content: p.text || (toolCalls.length || p.images.length ? null : "") };
    if (p.reasoning) message.reasoning = p.reasoning;
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (p.images.length) message.images = p.images;
    const idx = asRecord(c).index;
    return { index: typeof idx === "number" ? idx : i, message, finish_reason: candidateFinish(c, toolCalls.length > 0) ?? "stop" };
  });
  if (choices.length === 0) {
    // Prompt blocked (promptFeedback.blockReason) or an empty answer.
    const blocked = str(asRecord(body.promptFeedback).blockReason);
    if (!blocked && !isRecord(body.usageMetadata)) throw malformed("no candidates");
    choices.push({ index: 0, message: { role: "assistant", content: null }, finish_reason: blocked ? "content_filter" : "stop" });
  }
  const parsed: ParsedCompletion = { choices, usage: parseGeminiUsage(body.usageMetadata) };
  const id = str(body.responseId);
  if (id) parsed.upstreamId = id;
  const model = str(body.modelVersion);
  if (model) parsed.upstreamModel = model;
  return parsed;
}
