/**
 * OpenAI Responses request -> the gateway's chat request. Pure.
 *
 * - `instructions` -> a leading system message; `input` string -> one user message.
 * - message items (roles user/assistant/system/developer; `input_text`, `input_image`,
 *   `input_file`, `output_text`, `refusal` parts) -> chat messages.
 * - `function_call` items -> assistant `tool_calls` (merged with the assistant message before
 *   them); `function_call_output` -> `role: "tool"` messages; `reasoning` items are dropped
 *   (reasoning is not replayed to providers).
 * - function tools -> chat function tools; `custom` tools (free-form or grammar input) -> chat
 *   `custom_tools`, served only by providers whose format has them (routing answers a 400 naming
 *   the capability elsewhere); `custom_tool_call` items -> assistant tool calls of type custom,
 *   `custom_tool_call_output` -> `role: "tool"` messages; `tool_choice`, `parallel_tool_calls`
 *   (`tool_choice: {type: "custom"}` is a 400: no provider format here names one).
 * - `reasoning.effort` -> `reasoning_effort`; `text.format` (text, json_object, json_schema) ->
 *   `response_format`; `text.verbosity` -> `verbosity`; `max_output_tokens` -> `max_tokens`.
 * - Same name and meaning in both APIs, carried as they are (and then treated as on
 *   /v1/chat/completions, src/routes/chat/schema.ts): `prompt_cache_key`, `safety_identifier`,
 *   `metadata`, `service_tier` (`flex`/`scale`/`priority` refused there), `user`.
 * - `store` is accepted and not carried: in Responses it keeps the response for
 *   `previous_response_id` (default true), which this gateway does not offer; Chat Completions'
 *   `store` is another thing (stored completions, default false). The response says `store: false`.
 * - Refused with 400: `previous_response_id` and `item_reference` (no stored state: send the whole
 *   conversation). Hosted tools (web_search, file_search, namespace, …) are left out.
 */
import * as z from "zod";
import { fallbackModelsSchema, providerPreferencesSchema } from "../../routing/preferences";
import { badRequest } from "../../errors/api-error";
import { describeZodError, parseOrThrow } from "../../errors/validation";
import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat, TextPart, ToolChoice } from "../../providers/types";
import { metadataSchema, refuseProtoMetadataKey, serviceTierSchema, verbositySchema } from "../../routes/chat/schema";

const inputText = z.object({ type: z.literal("input_text"), text: z.string() });
const outputText = z.object({ type: z.literal("output_text"), text: z.string() }).passthrough();
const refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });
const inputImage = z.object({ type: z.literal("input_image"), image_url: z.string().nullish(), file_id: z.string().nullish(), detail: z.enum(["auto", "low", "high"]).nullish() });
const inputFile = z.object({ type: z.literal("input_file"), file_data: z.string().nullish(), file_id: z.string().nullish(), filename: z.string().nullish(), file_url: z.string().nullish() });
const part = z.discriminatedUnion("type", [inputText, outputText, refusal, inputImage, inputFile]);
type Part = z.infer<typeof part>;

const messageItem = z.object({
  type: z.literal("message").optional(),
  id: z.string().optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(part)]),
  status: z.string().optional(),
});
const functionCallItem = z.object({ type: z.literal("function_call"), id: z.string().optional(), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string(), status: z.string().optional() });
const functionOutputItem = z.object({
  type: z.literal("function_call_output"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(part)]),
  status: z.string().optional(),
});
const customCallItem = z.object({
  type: z.literal("custom_tool_call"),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
  namespace: z.string().optional(),
  status: z.string().optional(),
});
const customOutputItem = z.object({ type: z.literal("custom_tool_call_output"), id: z.string().optional(), call_id: z.string().min(1), output: z.union([z.string(), z.array(part)]) });
const reasoningItem = z.object({ type: z.literal("reasoning") }).passthrough();
const itemReference = z.object({ type: z.literal("item_reference"), id: z.string() });

const item = z.union([messageItem, functionCallItem, functionOutputItem, customCallItem, customOutputItem, reasoningItem, itemReference]);
type Item = z.infer<typeof item>;

const functionTool = z.object({
  type: z.literal("function"),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, underscores and dashes"),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, underscores and dashes");
/** OpenAI's `custom` tool (Responses shape: name at the top level). */
const customTool = z.object({
  type: z.literal("custom"),
  name: toolName,
  description: z.string().nullish(),
  format: z
    .discriminatedUnion("type", [
      z.object({ type: z.literal("text") }),
      z.object({ type: z.literal("grammar"), definition: z.string().min(1), syntax: z.enum(["lark", "regex"]) }),
    ])
    .nullish(),
  defer_loading: z.boolean().nullish(),
});
export type ResponsesCustomTool = z.infer<typeof customTool>;

const format = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({ type: z.literal("json_schema"), name: z.string().min(1), schema: z.record(z.string(), z.unknown()), description: z.string().nullish(), strict: z.boolean().nullish() }),
]);

export const responsesRequestSchema = z.object({
  model: z.string().min(1, "model is required"),
  input: z.union([z.string(), z.array(item).min(1)]),
  instructions: z.string().nullish(),
  tools: z.array(z.object({ type: z.string().min(1) }).passthrough()).nullish(),
  tool_choice: z
    .union([
      z.enum(["none", "auto", "required"]),
      z.object({ type: z.literal("function"), name: z.string().min(1) }),
      z.object({ type: z.literal("custom"), name: z.string().min(1) }),
      z.object({ type: z.literal("allowed_tools"), mode: z.enum(["auto", "required"]), tools: z.array(z.object({ type: z.string().min(1), name: z.string().min(1).optional() }).passthrough()).min(1) }),
    ])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  // `xhigh` and `max` as on chat completions (the SDK's ReasoningEffort has `xhigh`).
  reasoning: z.object({ effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]).nullish(), summary: z.string().nullish() }).nullish(),
  text: z.object({ format: format.optional(), verbosity: verbositySchema.nullish() }).nullish(),
  stream: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  store: z.boolean().nullish(),
  metadata: metadataSchema.nullish(),
  user: z.string().max(256).nullish(),
  prompt_cache_key: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  service_tier: serviceTierSchema.nullish(),  /** Routing preferences and fallback models, as on /v1/chat/completions (src/routing/preferences.ts). */
  provider: providerPreferencesSchema.nullish(),
  models: fallbackModelsSchema.nullish(),
});
export type ResponsesRequest = Omit<z.infer<typeof responsesRequestSchema>, "tools"> & { tools: Array<z.infer<typeof functionTool>>; customTools: ResponsesCustomTool[] };

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("The request body must be a JSON object.");
  refuseProtoMetadataKey(body);
  const data = parseOrThrow(responsesRequestSchema, body);
  if (data.previous_response_id) {
    throw badRequest("'previous_response_id' is not supported: this gateway stores no responses. Send the whole conversation in 'input'.", "previous_response_id", "unsupported_parameter");
  }
  const tools: Array<z.infer<typeof functionTool>> = [];
  const customTools: ResponsesCustomTool[] = [];
  const parse = <T>(schema: z.ZodType<T>, t: unknown, i: number): T => {
    const parsed = schema.safeParse(t);
    if (parsed.success) return parsed.data;
    const { message, param } = describeZodError(parsed.error);
    throw badRequest(message.replace(`'${param}'`, `'tools.${i}.${param}'`), `tools.${i}${param ? `.${param}` : ""}`);
  };
  (data.tools ?? []).forEach((t, i) => {
    if (t.type === "function") tools.push(parse(functionTool, t, i));
    // Custom tools run in the caller's code like function tools: they go on (or the request is refused where no provider takes them).
    else if (t.type === "custom") customTools.push(parse(customTool, t, i));
    // Hosted tools (web_search, file_search, namespaces of sub-agent tools, …) run at OpenAI, not in
    // the model: no other provider can honour them, so they are left out (Codex always sends some).
  });
  return { ...data, tools, customTools };
}

function partOf(p: Part, path: string): ContentPart {
  switch (p.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: p.text };
    case "refusal":
      return { type: "text", text: p.refusal };
    case "input_image":
      if (!p.image_url) throw badRequest("'input_image' needs an 'image_url' (file ids are not supported).", path);
      return { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
    case "input_file": {
      const data = p.file_data ?? p.file_url;
      if (!data) throw badRequest("'input_file' needs 'file_data' or 'file_url' (file ids are not supported).", path);
      return { type: "file", file: { file_data: data, ...(p.filename ? { filename: p.filename } : {}) } };
    }
  }
}

const textOf = (content: string | Part[]): string =>
  typeof content === "string" ? content : content.map((p) => (p.type === "input_text" || p.type === "output_text" ? p.text : p.type === "refusal" ? p.refusal : "")).join("");

function translateItems(items: Item[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  items.forEach((it, i) => {
    const path = `input.${i}`;
    if (it.type === "item_reference") throw badRequest("'item_reference' items are not supported: this gateway stores no responses.", `${path}.type`, "unsupported_parameter");
    if (it.type === "reasoning") return;
    if (it.type === "function_call" || it.type === "custom_tool_call") {
      // A custom tool's input travels as the internal call's `arguments` (ToolCall).
      const call = it.type === "function_call"
        ? { id: it.call_id, type: "function" as const, function: { name: it.name, arguments: it.arguments } }
        : { id: it.call_id, type: "custom" as const, function: { name: it.name, arguments: it.input } };
      const prev = out[out.length - 1];
      if (prev?.role === "assistant") prev.tool_calls = [...(prev.tool_calls ?? []), call];
      else out.push({ role: "assistant", content: null, tool_calls: [call] });
      return;
    }
    if (it.type === "function_call_output" || it.type === "custom_tool_call_output") {
      out.push({ role: "tool", tool_call_id: it.call_id, content: textOf(it.output) });
      return;
    }
    if (it.role === "assistant") {
      out.push({ role: "assistant", content: textOf(it.content) || null });
    } else if (it.role === "user") {
      out.push({ role: "user", content: typeof it.content === "string" ? it.content : it.content.map((p, j) => partOf(p, `${path}.content.${j}`)) });
    } else {
      out.push({ role: it.role, content: typeof it.content === "string" ? it.content : [{ type: "text", text: textOf(it.content) } satisfies TextPart] });
    }
  });
  return out;
}

function formatOf(f: z.infer<typeof format>): ResponseFormat {
  if (f.type !== "json_schema") return { type: f.type };
  return {
    type: "json_schema",
    json_schema: { name: f.name, schema: f.schema, ...(f.description ? { description: f.description } : {}), ...(typeof f.strict === "boolean" ? { strict: f.strict } : {}) },
  };
}

/**
 * `allowed_tools` is served as on chat completions: only the allowed function tools go on, with the
 * mode as the choice (hosted tools named in it were left out with the others); a function name
 * not among `tools` is a 400.
 */
function toolChoiceOf(choice: NonNullable<ResponsesRequest["tool_choice"]>, out: ChatRequest): ToolChoice {
  if (typeof choice === "string") return choice;
  if (choice.type === "function") return { type: "function", function: { name: choice.name } };
  if (choice.type === "custom") {
    throw badRequest("'tool_choice' of type 'custom' is not supported: use 'required', or 'allowed_tools' naming the custom tool, to make the model call it.", "tool_choice", "unsupported_parameter");
  }
  const named = (type: string) => new Set(choice.tools.flatMap((t) => (t.type === type && t.name ? [t.name] : [])));
  const allowed = named("function");
  const allowedCustom = named("custom");
  const tools = (out.tools ?? []).filter((t) => allowed.has(t.function.name));
  const custom = (out.custom_tools ?? []).filter((t) => allowedCustom.has(t.custom.name));
  const unknown = [...[...allowed].filter((n) => !tools.some((t) => t.function.name === n)), ...[...allowedCustom].filter((n) => !custom.some((t) => t.custom.name === n))];
  if (unknown.length) throw badRequest(`'tool_choice.tools' names tools that are not in 'tools': ${unknown.join(", ")}.`, "tool_choice");
  if (tools.length) out.tools = tools;
  else delete out.tools;
  if (custom.length) out.custom_tools = custom;
  else delete out.custom_tools;
  return tools.length || custom.length ? choice.mode : "auto";
}

export function toChatRequest(req: ResponsesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: "system", content: req.instructions });
  messages.push(...(typeof req.input === "string" ? [{ role: "user" as const, content: req.input }] : translateItems(req.input)));
  const out: ChatRequest = { model: req.model, messages };
  if (req.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  if (req.max_output_tokens != null) out.max_tokens = req.max_output_tokens;
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  if (req.user) out.user = req.user;
  if (req.text?.verbosity) out.verbosity = req.text.verbosity;
  if (req.prompt_cache_key != null) out.prompt_cache_key = req.prompt_cache_key;
  if (req.safety_identifier != null) out.safety_identifier = req.safety_identifier;
  if (req.metadata) out.metadata = req.metadata;
  // The chat schema validates the translated request again and refuses the tiers it cannot bill.
  if (req.service_tier) out.service_tier = req.service_tier;
  if (req.reasoning?.effort) out.reasoning_effort = req.reasoning.effort;
  if (req.text?.format) out.response_format = formatOf(req.text.format);
  if (req.tools?.length) {
    out.tools = req.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
        ...(typeof t.strict === "boolean" ? { strict: t.strict } : {}),
      },
    }));
  }
  if (req.customTools.length) {
    out.custom_tools = req.customTools.map((t) => ({
      type: "custom",
      custom: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        // Chat Completions nests a grammar's definition and syntax under `grammar`.
        ...(t.format ? { format: t.format.type === "text" ? { type: "text" as const } : { type: "grammar" as const, grammar: { definition: t.format.definition, syntax: t.format.syntax } } } : {}),
      },
    }));
  }
  if (req.tool_choice) out.tool_choice = toolChoiceOf(req.tool_choice, out);
  if (req.parallel_tool_calls != null) out.parallel_tool_calls = req.parallel_tool_calls;
  if (req.provider) out.provider = req.provider;
  if (req.models?.length) out.models = req.models;
  return out;
}
