/** OpenAI chat request -> Bedrock Converse / ConverseStream request body. */
import { badRequest } from "../../errors/api-error";
import type { ChatMessage, ChatRequest, ContentPart, ReasoningDetail, ToolChoice, UpstreamTarget } from "../types";
import type { ProviderMapping } from "../../catalog/types";
import { claudeOutputBudget, finalToolTurnLeadsWithReasoning, forcesToolUse } from "../anthropic/request";
import { parseDataUrl } from "../data-url";
import { contentText, isRecord, tryParseJson } from "../json";
import { claudeHasNativeJson, jsonOutputPlan, planForcesTool, type JsonOutputPlan } from "../anthropic/structured-output";

export type BedrockBlock = Record<string, unknown>;
interface BedrockMessage {
  role: "user" | "assistant";
  content: BedrockBlock[];
}

const IMAGE_FORMATS: Readonly<Record<string, string>> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp" };
const DOC_FORMATS: Readonly<Record<string, string>> = {
  "application/pdf": "pdf", "text/csv": "csv", "text/plain": "txt", "text/html": "html", "text/markdown": "md",
  "application/msword": "doc", "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
};
/** Own keys only: a data URL typed `constructor` or `__proto__` is unsupported, not an Object.prototype member. */
const formatOf = (formats: Readonly<Record<string, string>>, mimeType: string): string | undefined =>
  Object.hasOwn(formats, mimeType) ? formats[mimeType] : undefined;

function block(p: ContentPart, index: number): BedrockBlock | undefined {
  switch (p.type) {
    case "text":
      return p.text ? { text: p.text } : undefined;
    case "image_url": {
      const d = parseDataUrl(p.image_url.url);
      const format = d ? formatOf(IMAGE_FORMATS, d.mimeType) : undefined;
      if (!d || !format) throw badRequest("this provider accepts images only as base64 data URLs (png, jpeg, gif, webp)", "messages");
      return { image: { format, source: { bytes: d.data } } };
    }
    case "file": {
      const d = p.file.file_data ? parseDataUrl(p.file.file_data) : undefined;
      const format = d ? formatOf(DOC_FORMATS, d.mimeType) : undefined;
      if (!d || !format) throw badRequest("file parts need file_data as a base64 data URL of a supported document type", "messages");
      const name = (p.file.filename ?? `document-${index}`).replace(/[^A-Za-z0-9 ()[\]-]/g, "-");
      return { document: { format, name, source: { bytes: d.data } } };
    }
    case "input_audio":
      throw badRequest("audio input is not supported by this provider", "messages");
  }
}

const blocks = (content: string | ContentPart[] | null | undefined): BedrockBlock[] =>
  typeof content === "string" ? (content ? [{ text: content }] : []) : (content ?? []).flatMap((p, i) => {
    const b = block(p, i);
    return b ? [b] : [];
  });

function toolResultContent(text: string): BedrockBlock[] {
  const parsed = tryParseJson(text);
  return isRecord(parsed) ? [{ json: parsed }] : [{ text }];
}

/**
 * Signed reasoning back to `reasoningContent` blocks, unchanged and first in the assistant turn.
 * Reasoning without a signature (another provider's, or `reasoning` text alone) is not sent:
 * Claude would reject it.
 */
function reasoningBlocks(details: ReasoningDetail[] | undefined): BedrockBlock[] {
  return (details ?? []).flatMap((d): BedrockBlock[] => {
    if (d.type === "reasoning.encrypted") return d.data ? [{ reasoningContent: { redactedContent: d.data } }] : [];
    return d.signature ? [{ reasoningContent: { reasoningText: { text: d.text, signature: d.signature } } }] : [];
  });
}

const isReasoningBlock = (b: BedrockBlock | undefined): boolean => isRecord(b?.reasoningContent);

export function convertMessages(messages: ChatMessage[]): { system: BedrockBlock[]; messages: BedrockMessage[] } {
  const system: BedrockBlock[] = [];
  const out: BedrockMessage[] = [];
  for (const m of messages) {
    let converted: BedrockMessage | undefined;
    if (m.role === "system" || m.role === "developer") {
      const text = contentText(m.content);
      if (text) system.push({ text });
      continue;
    }
    if (m.role === "user") converted = { role: "user", content: blocks(m.content) };
    else if (m.role === "assistant") {
      const content = [...reasoningBlocks(m.reasoning_details), ...blocks(m.content ?? null)];
      for (const tc of m.tool_calls ?? []) {
        const input = tryParseJson(tc.function.arguments);
        content.push({ toolUse: { toolUseId: tc.id, name: tc.function.name, input: isRecord(input) ? input : {} } });
      }
      converted = { role: "assistant", content };
    } else if (m.role === "tool") {
      converted = { role: "user", content: [{ toolResult: { toolUseId: m.tool_call_id, content: toolResultContent(contentText(m.content)) } }] };
    }
    if (!converted || converted.content.length === 0) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === converted.role) {
      // Reasoning blocks stay first in a merged assistant turn.
      const merged = [...prev.content, ...converted.content];
      prev.content = [...merged.filter(isReasoningBlock), ...merged.filter((b) => !isReasoningBlock(b))];
    } else out.push(converted);
  }
  return { system, messages: out };
}

function toolChoice(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === "auto") return { auto: {} };
  if (choice === "required") return { any: {} };
  if (choice && typeof choice === "object") return { tool: { name: choice.function.name } };
  return undefined; // "none" has no Converse equivalent; tools stay declared for earlier tool turns
}

/** Claude model ids on Bedrock: `anthropic.claude-…` or an inference profile `us.anthropic.claude-…`. */
const ANTHROPIC_MODEL_RE = /(?:^|\.)anthropic\./;

/** Claude on Bedrock: the models whose `response_format` the adapter serves (natively or through a tool). */
export const isBedrockClaude = (mapping: ProviderMapping): boolean => ANTHROPIC_MODEL_RE.test(mapping.externalId);

/**
 * How `response_format` goes to Claude on Bedrock: Converse's `outputConfig.textFormat` on the
 * models that have it, else the forced tool. Other Bedrock models: not translated (none).
 */
export const bedrockJsonPlan = (req: ChatRequest, mapping: ProviderMapping): JsonOutputPlan =>
  isBedrockClaude(mapping) ? jsonOutputPlan(req, claudeHasNativeJson(mapping.externalId)) : { kind: "none" };

/** Claude on Bedrock with reasoning: the models whose `thinking` budget the adapter sets. */
const claudeThinks = (mapping: ProviderMapping): boolean => mapping.reasoning === true && ANTHROPIC_MODEL_RE.test(mapping.externalId);

/**
 * The most output tokens a Converse request may bill: the caller's cap (else the model's maximum),
 * raised for Claude's thinking exactly as `buildConverseBody` raises it (`claudeOutputBudget`);
 * the history rule is left out (it only turns thinking off), so this stays an upper bound.
 */
export function converseOutputTokensBound(req: ChatRequest, mapping: ProviderMapping): number {
  const cap = req.max_completion_tokens ?? req.max_tokens ?? mapping.maxOutput;
  if (!claudeThinks(mapping) || forcesToolUse(req) || planForcesTool(bedrockJsonPlan(req, mapping))) return cap;
  return claudeOutputBudget(cap, req.reasoning_effort, mapping.maxOutput).maxTokens;
}

const toolSpec = (name: string, description: string | undefined, schema: Record<string, unknown>) => ({
  toolSpec: { name, ...(description ? { description } : {}), inputSchema: { json: schema } },
});

export function buildConverseBody(req: ChatRequest, target: UpstreamTarget): Record<string, unknown> {
  const { system, messages } = convertMessages(req.messages);
  const body: Record<string, unknown> = { messages };
  if (system.length) body.system = system;
  const inference: Record<string, unknown> = {};
  let maxTokens = req.max_completion_tokens ?? req.max_tokens;
  const effort = req.reasoning_effort;
  // `thinking` is the Anthropic models' field; other Bedrock models reason without a budget knob.
  const plan = bedrockJsonPlan(req, target.mapping);
  const forced = forcesToolUse(req) || planForcesTool(plan);
  const allowed = !forced && finalToolTurnLeadsWithReasoning(messages, (b) => isRecord(b.toolUse), isReasoningBlock);
  if (effort && effort !== "none" && claudeThinks(target.mapping) && allowed) {
    const plan = claudeOutputBudget(maxTokens ?? target.mapping.maxOutput, effort, target.mapping.maxOutput);
    maxTokens = plan.maxTokens;
    if (plan.budget !== null) body.additionalModelRequestFields = { thinking: { type: "enabled", budget_tokens: plan.budget } };
  }
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (!body.additionalModelRequestFields) {
    if (req.temperature !== undefined) inference.temperature = req.temperature;
    if (req.top_p !== undefined) inference.topP = req.top_p;
  }
  if (req.stop !== undefined) inference.stopSequences = typeof req.stop === "string" ? [req.stop] : req.stop;
  if (Object.keys(inference).length) body.inferenceConfig = inference;
  const tools = (req.tools ?? []).map((t) => toolSpec(t.function.name, t.function.description, t.function.parameters ?? { type: "object", properties: {} }));
  if (plan.kind === "tool") tools.push(toolSpec(plan.tool.name, plan.tool.description, plan.tool.schema));
  if (tools.length) {
    const toolConfig: Record<string, unknown> = { tools };
    const choice = plan.kind === "tool" ? (plan.choice === "tool" ? { tool: { name: plan.tool.name } } : { any: {} }) : toolChoice(req.tool_choice);
    if (choice) toolConfig.toolChoice = choice;
    body.toolConfig = toolConfig;
  }
  if (plan.kind === "native") {
    // Converse takes the schema as a JSON string.
    const jsonSchema = { schema: JSON.stringify(plan.schema), name: plan.name, ...(plan.description ? { description: plan.description } : {}) };
    body.outputConfig = { textFormat: { type: "json_schema", structure: { jsonSchema } } };
  }
  return body;
}
