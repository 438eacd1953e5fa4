/** OpenAI chat request -> Gemini generateContent request (AI Studio and Vertex share the body). */
import { badRequest } from "../../errors/api-error";
import type { ChatMessage, ChatRequest, ContentPart, ToolCall, ToolChoice } from "../types";
import type { UpstreamTarget } from "../types";
import { parseDataUrl } from "../data-url";
import { contentText, isRecord, tryParseJson } from "../json";

/** Thinking budgets per reasoning effort. */
// `xhigh` and `max` get the largest budget every Gemini thinking model takes (24,576 on Flash).
export const GEMINI_THINKING_BUDGETS: Readonly<Record<string, number>> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 24576 };

export type GeminiPart = Record<string, unknown>;
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** Gemini's schema dialect (OpenAPI subset) rejects some JSON Schema keywords: drop them. */
const UNSUPPORTED_SCHEMA_KEYS = new Set(["additionalProperties", "$schema", "strict", "$id", "$comment"]);
export function sanitizeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(sanitizeSchema);
  if (!isRecord(schema)) return schema;
  // fromEntries defines own keys: a property named `__proto__` stays a property (assigning it would set the prototype).
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !UNSUPPORTED_SCHEMA_KEYS.has(k)).map(([k, v]) => [k, sanitizeSchema(v)]));
}

const MIME_BY_EXT: Readonly<Record<string, string>> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", webp: "image/webp", gif: "image/gif", heic: "image/heic", pdf: "application/pdf" };

function guessMime(url: string): string {
  const ext = /\.([a-z0-9]+)(?:$|[?#])/i.exec(url)?.[1]?.toLowerCase() ?? "";
  // Own keys only: `.constructor` is an unknown extension, not an Object.prototype member.
  return Object.hasOwn(MIME_BY_EXT, ext) ? MIME_BY_EXT[ext]! : "image/jpeg";
}

function partOf(p: ContentPart): GeminiPart | undefined {
  switch (p.type) {
    case "text":
      return p.text ? { text: p.text } : undefined;
    case "image_url": {
      const d = parseDataUrl(p.image_url.url);
      return d ? { inlineData: { mimeType: d.mimeType, data: d.data } } : { fileData: { mimeType: guessMime(p.image_url.url), fileUri: p.image_url.url } };
    }
    case "input_audio":
      return { inlineData: { mimeType: `audio/${p.input_audio.format}`, data: p.input_audio.data } };
    case "file": {
      const d = p.file.file_data ? parseDataUrl(p.file.file_data) : undefined;
      if (!d) throw badRequest("file parts need file_data as a base64 data URL for this provider", "messages");
      return { inlineData: { mimeType: d.mimeType, data: d.data } };
    }
  }
}

const partsOf = (content: string | ContentPart[] | null | undefined): GeminiPart[] =>
  typeof content === "string" ? (content ? [{ text: content }] : []) : (content ?? []).flatMap((p) => {
    const part = partOf(p);
    return part ? [part] : [];
  });

function functionResponse(content: string): Record<string, unknown> {
  const parsed = tryParseJson(content);
  return isRecord(parsed) ? parsed : { result: content };
}

/**
 * Gemini 3 rejects a function-calling turn whose first functionCall part lacks the thought
 * signature it returned. Callers that kept our tool calls whole send it back in
 * `extra_content.google.thought_signature`; for the others (clients that drop unknown fields,
 * histories from another model) Google documents this value, which skips the validation.
 * https://ai.google.dev/gemini-api/docs/thought-signatures
 */
const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";
/** Models that enforce thought signatures on function calls (Gemini 3 and later generations). */
const ENFORCES_THOUGHT_SIGNATURES = /^gemini-(?:[3-9]|\d{2,})/;
const enforcesThoughtSignatures = (externalId: string): boolean => ENFORCES_THOUGHT_SIGNATURES.test(externalId);

/** The functionCall parts of one assistant turn, each with its thought signature. */
function functionCallParts(calls: readonly ToolCall[], enforce: boolean): GeminiPart[] {
  const anySigned = calls.some((tc) => tc.extra_content?.google?.thought_signature);
  return calls.map((tc, i) => {
    const args = tryParseJson(tc.function.arguments);
    const part: GeminiPart = { functionCall: { name: tc.function.name, args: isRecord(args) ? args : {} } };
    const signature = tc.extra_content?.google?.thought_signature ?? (enforce && !anySigned && i === 0 ? SKIP_THOUGHT_SIGNATURE : undefined);
    if (signature) part.thoughtSignature = signature;
    return part;
  });
}

export function convertContents(messages: ChatMessage[], opts: { enforceThoughtSignatures?: boolean } = {}): { system: GeminiPart[]; contents: GeminiContent[] } {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  /** tool_call id -> function name, from earlier assistant turns */
  const names = new Map<string, string>();
  for (const m of messages) {
    let converted: GeminiContent | undefined;
    if (m.role === "system" || m.role === "developer") {
      const text = contentText(m.content);
      if (text) system.push({ text });
      continue;
    }
    if (m.role === "user") {
      converted = { role: "user", parts: partsOf(m.content) };
    } else if (m.role === "assistant") {
      const calls = m.tool_calls ?? [];
      for (const tc of calls) names.set(tc.id, tc.function.name);
      converted = { role: "model", parts: [...partsOf(m.content ?? null), ...functionCallParts(calls, opts.enforceThoughtSignatures === true)] };
    } else if (m.role === "tool") {
      const name = names.get(m.tool_call_id);
      if (!name) throw badRequest(`tool message refers to unknown tool_call_id ${m.tool_call_id}`, "messages");
      converted = { role: "user", parts: [{ functionResponse: { name, response: functionResponse(contentText(m.content)) } }] };
    }
    if (!converted || converted.parts.length === 0) continue;
    const prev = contents[contents.length - 1];
    if (prev && prev.role === converted.role) prev.parts.push(...converted.parts);
    else contents.push(converted);
  }
  return { system, contents };
}

function toolConfig(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined) return undefined;
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.function.name] } };
}

export function buildGeminiBody(req: ChatRequest, target: UpstreamTarget): Record<string, unknown> {
  const { system, contents } = convertContents(req.messages, { enforceThoughtSignatures: enforcesThoughtSignatures(target.mapping.externalId) });
  const body: Record<string, unknown> = { contents };
  if (system.length) body.systemInstruction = { parts: system };

  const gen: Record<string, unknown> = {};
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.top_p !== undefined) gen.topP = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) gen.maxOutputTokens = maxTokens;
  if (req.stop !== undefined) gen.stopSequences = typeof req.stop === "string" ? [req.stop] : req.stop;
  if (req.seed !== undefined) gen.seed = req.seed;
  if (req.n !== undefined && req.n > 1) gen.candidateCount = req.n;
  if (req.presence_penalty !== undefined) gen.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) gen.frequencyPenalty = req.frequency_penalty;
  if (req.logprobs) {
    gen.responseLogprobs = true;
    if (req.top_logprobs !== undefined) gen.logprobs = req.top_logprobs;
  }
  const rf = req.response_format;
  if (rf?.type === "json_object") gen.responseMimeType = "application/json";
  else if (rf?.type === "json_schema") {
    gen.responseMimeType = "application/json";
    if (rf.json_schema.schema) gen.responseSchema = sanitizeSchema(rf.json_schema.schema);
  }
  if (req.reasoning_effort && target.mapping.reasoning) {
    const budget = GEMINI_THINKING_BUDGETS[req.reasoning_effort] ?? 0;
    gen.thinkingConfig = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: 0 };
  }
  if (req.modalities?.includes("image")) gen.responseModalities = ["TEXT", "IMAGE"];
  if (Object.keys(gen).length) body.generationConfig = gen;

  if (req.tools?.length) {
    body.tools = [{
      functionDeclarations: req.tools.map((t) => ({
        name: t.function.name,
        ...(t.function.description ? { description: t.function.description } : {}),
        ...(t.function.parameters ? { parameters: sanitizeSchema(t.function.parameters) } : {}),
      })),
    }];
    const tc = toolConfig(req.tool_choice);
    if (tc) body.toolConfig = tc;
  }
  return body;
}
