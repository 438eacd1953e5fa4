/**
 * Validation of `POST /v1/chat/completions` bodies (OpenAI Chat Completions request).
 *
 * Every documented OpenAI field is checked; unknown extra fields are tolerated and dropped (zod
 * objects strip them). Malformed values are a 400 whose `param` is the dotted path of the field
 * (`messages.2.content`).
 *
 * What happens to each parameter per provider (see also src/routing/candidates.ts):
 * - Rejected for a mapping (it becomes ineligible; 400 when no mapping is left), because dropping
 *   them would change the answer's meaning:
 *   `tools`/`tool_choice` on a model without tool support, image parts on a non-vision mapping,
 *   `response_format: json_object|json_schema` without JSON/structured-output support, `n > 1`
 *   where the wire format has no multiple choices, `stream` where the mapping cannot stream,
 *   prompts beyond the context window and `max_tokens` beyond the mapping's output cap, and audio
 *   output (`modalities` with "audio", or `audio`) where the model cannot answer in audio or the
 *   catalogue has no `output_audio` price for the mapping (none has today).
 * - Dropped silently by the adapter (provider quirks `unsupportedParams`): sampling hints and
 *   extras such as `logit_bias`, `logprobs`/`top_logprobs`, `seed`, `user`, `reasoning_effort`,
 *   penalties, `stream_options`, `parallel_tool_calls` where a provider rejects them. The
 *   OpenAI-platform extras `store`, `metadata`, `prompt_cache_key`, `safety_identifier`,
 *   `service_tier` (`auto`/`default` only), `verbosity` and `prediction` are of this kind: OpenAI
 *   receives them unchanged, every other provider drops them (the Anthropic, Google and Bedrock
 *   adapters never send them; OpenAI-compatible hosts and Azure list them in `unsupportedParams`).
 * - Refused with a 400 (`param` = the field, code `unsupported_parameter`) because the gateway
 *   would bill them wrongly (it prices from its catalogue, src/billing/cost.ts):
 *   `service_tier` `flex`/`scale`/`priority` (the provider charges other than the standard prices
 *   the catalogue holds) and `web_search_options` except on models every provider of which bills
 *   it by search context size at prices the catalogue holds (Perplexity Sonar).
 */
import * as z from "zod";
import type { ChatMessage, ChatRequest, ToolCall } from "../../providers/types";
import { badRequest } from "../../errors/api-error";
import { pricesSearchContext } from "../../catalog";
import { describeZodError } from "../../errors/validation";
import { fallbackModelsSchema, providerPreferencesSchema } from "../../routing/preferences";

/** Anthropic-style prompt-cache breakpoint; other formats drop it (src/providers/openai strips it). */
const cacheControl = z.object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() });
const textPart = z.object({ type: z.literal("text"), text: z.string(), cache_control: cacheControl.optional() });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(["auto", "low", "high"]).optional() }),
});
const audioPart = z.object({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: z.string().min(1), format: z.string().min(1) }),
});
const filePart = z.object({
  type: z.literal("file"),
  file: z.object({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
const contentPart = z.discriminatedUnion("type", [textPart, imagePart, audioPart, filePart]);

const textContent = z.union([z.string(), z.array(textPart)]);
const userContent = z.union([z.string(), z.array(contentPart).min(1)]);

const functionToolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
  /** Sent back as we returned it (Gemini's thought signature); other keys are dropped. */
  extra_content: z.object({ google: z.object({ thought_signature: z.string().optional() }).optional() }).optional(),
});
/** An earlier call of a `custom` tool; its free-form input travels as the internal call's `arguments` (ToolCall). */
const customToolCall = z
  .object({ id: z.string().min(1), type: z.literal("custom"), custom: z.object({ name: z.string().min(1), input: z.string() }) })
  .transform((c): ToolCall => ({ id: c.id, type: "custom", function: { name: c.custom.name, arguments: c.custom.input } }));
const toolCall = z.union([functionToolCall, customToolCall]);

const systemMessage = z.object({ role: z.enum(["system", "developer"]), content: textContent, name: z.string().optional() });
const userMessage = z.object({ role: z.literal("user"), content: userContent, name: z.string().optional() });
/**
 * An earlier turn's refusal, sent back as the OpenAI SDKs keep it (a `refusal` part): it was the
 * assistant's answer, so it goes upstream as text (no provider takes refusal parts in a history).
 */
const refusalPart = z.object({ type: z.literal("refusal"), refusal: z.string() }).transform((p) => ({ type: "text" as const, text: p.refusal }));
const assistantContent = z.union([z.string(), z.array(z.union([textPart, refusalPart]))]);

const assistantMessage = z.object({
  role: z.literal("assistant"),
  content: assistantContent.nullable().optional(),
  name: z.string().optional(),
  tool_calls: z.array(toolCall).optional(),
  /** Legacy function calling (before `tool_calls`); becomes a tool call (`legacyFunctionCalls`). */
  function_call: z.object({ name: z.string().min(1), arguments: z.string() }).nullish(),
  reasoning: z.string().nullable().optional(),
  /** Signed reasoning blocks as the gateway returned them (Anthropic thinking); only anthropic-format upstreams get them. */
  reasoning_details: z
    .array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("reasoning.text"), text: z.string(), signature: z.string().optional(), format: z.string().optional(), index: z.number().int().optional() }),
        z.object({ type: z.literal("reasoning.encrypted"), data: z.string(), format: z.string().optional(), index: z.number().int().optional() }),
        // Other gateways' kinds (e.g. `reasoning.summary`) are accepted and dropped.
        z.object({ type: z.literal("reasoning.summary"), summary: z.string().optional() }).loose(),
      ]),
    )
    .optional()
    .transform((v) => v?.filter((d): d is Exclude<typeof d, { type: "reasoning.summary" }> => d.type !== "reasoning.summary")),
});
const toolMessage = z.object({ role: z.literal("tool"), content: textContent, tool_call_id: z.string().min(1) });

/** Legacy function result (`role: "function"`, named by the function); becomes a tool result. */
const functionMessage = z.object({ role: z.literal("function"), name: z.string().min(1), content: z.string().nullable() });

const message = z.discriminatedUnion("role", [systemMessage, userMessage, assistantMessage, toolMessage, functionMessage]);
type ParsedMessage = z.infer<typeof message>;

/**
 * Legacy function calling as the OpenAI SDKs still type it: an assistant `function_call` becomes a
 * tool call and the `role: "function"` answer that follows becomes its tool result, so every
 * adapter (Anthropic, Gemini and Bedrock need a result tied to a call) serves one shape. A function
 * result no call precedes is passed on as the user's text: no provider takes an orphan result.
 */
function legacyFunctionCalls(messages: ParsedMessage[]): ChatMessage[] {
  const callIds = new Map<string, string>();
  return messages.map((m, i): ChatMessage => {
    if (m.role === "assistant") {
      const { function_call: call, ...rest } = m;
      if (!call) return rest;
      const id = `call_fn_${i}`;
      callIds.set(call.name, id);
      return { ...rest, tool_calls: [...(rest.tool_calls ?? []), { id, type: "function", function: call }] };
    }
    if (m.role !== "function") return m;
    const id = callIds.get(m.name);
    if (!id) return { role: "user", content: `Result of function ${m.name}: ${m.content ?? ""}` };
    callIds.delete(m.name);
    return { role: "tool", tool_call_id: id, content: m.content ?? "" };
  });
}

/** Free-form JSON (tool parameters, JSON schemas) may nest at most this deep: deeper input would
 * overflow the stack of the recursive code that walks it (cache key, schema sanitizers). */
const MAX_JSON_DEPTH = 64;
const withinDepth = (v: unknown, depth = 0): boolean => {
  if (v === null || typeof v !== "object") return true;
  if (depth >= MAX_JSON_DEPTH) return false;
  return (Array.isArray(v) ? v : Object.values(v)).every((x) => withinDepth(x, depth + 1));
};
const freeFormObject = z
  .record(z.string(), z.unknown())
  .refine((v) => withinDepth(v), `must not be nested more than ${MAX_JSON_DEPTH} levels deep`);

const functionTool = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, underscores and dashes"),
    description: z.string().optional(),
    parameters: freeFormObject.optional(),
    strict: z.boolean().nullable().optional().transform((v) => v ?? undefined),
  }),
});

const customTool = z.object({
  type: z.literal("custom"),
  custom: z.object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, underscores and dashes"),
    description: z.string().optional(),
    format: z
      .discriminatedUnion("type", [
        z.object({ type: z.literal("text") }),
        z.object({ type: z.literal("grammar"), grammar: z.object({ definition: z.string().min(1), syntax: z.enum(["lark", "regex"]) }) }),
      ])
      .optional(),
  }),
});

/** A tool named in `allowed_tools`: the Chat shape (`function.name`) or the Responses one (`name`). */
const allowedTool = z
  .object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }).optional(), name: z.string().min(1).optional() })
  .refine((t) => t.function?.name ?? t.name, "names no function")
  .transform((t) => t.function?.name ?? t.name ?? "");

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) }),
  z.object({ type: z.literal("allowed_tools"), allowed_tools: z.object({ mode: z.enum(["auto", "required"]), tools: z.array(allowedTool).min(1) }) }),
]);

const responseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, underscores and dashes"),
      description: z.string().optional(),
      schema: freeFormObject.optional(),
      strict: z.boolean().nullable().optional().transform((v) => v ?? undefined),
    }),
  }),
]);

const positiveInt = z.number().int().positive();

// ---- OpenAI-platform extras (exported for the Responses dialect, which carries them 1:1) ----

/** Up to 16 pairs; keys up to 64 characters, values up to 512 (OpenAI's documented limits). */
export const metadataSchema = z
  .record(z.string().max(64, "keys must be at most 64 characters"), z.string().max(512, "values must be at most 512 characters"))
  .refine((m) => Object.keys(m).length <= 16, "must have at most 16 key-value pairs");
export const verbositySchema = z.enum(["low", "medium", "high"]);
/** Every documented tier, so a typo is "malformed" and a real tier the gateway cannot bill is "refused". */
export const serviceTierSchema = z.enum(["auto", "default", "flex", "scale", "priority"]);
/** Tiers billed at the standard prices the catalogue holds: `auto` (the account's default) and `default`. */
const BILLED_SERVICE_TIERS: ReadonlySet<string> = new Set(["auto", "default"]);

const prediction = z.object({
  type: z.literal("content"),
  content: z.union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() })).min(1)]),
});
const audioOutput = z.object({
  voice: z.union([z.string().min(1), z.object({ id: z.string().min(1) })]),
  format: z.enum(["wav", "aac", "mp3", "flac", "opus", "pcm16"]),
});
const webSearchOptions = z.object({
  search_context_size: z.enum(["low", "medium", "high"]).nullish(),
  user_location: z
    .object({
      type: z.literal("approximate"),
      approximate: z.object({ city: z.string().nullish(), country: z.string().nullish(), region: z.string().nullish(), timezone: z.string().nullish() }),
    })
    .nullish(),
});

/** Optional fields also accept `null` (OpenAI SDKs send it) and treat it as absent. */
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);

export const chatRequestSchema = z.object({
  model: z.string().min(1, "model is required").max(512),
  messages: z.array(message).min(1, "at least one message is required"),
  stream: opt(z.boolean()),
  stream_options: opt(z.object({ include_usage: z.boolean().optional() })),
  tools: opt(z.array(z.discriminatedUnion("type", [functionTool, customTool])).max(128)),
  tool_choice: opt(toolChoice),
  parallel_tool_calls: opt(z.boolean()),
  temperature: opt(z.number().min(0).max(2)),
  top_p: opt(z.number().min(0).max(1)),
  max_tokens: opt(positiveInt),
  max_completion_tokens: opt(positiveInt),
  stop: opt(z.union([z.string(), z.array(z.string()).max(4)])),
  seed: opt(z.number().int()),
  n: opt(z.number().int().min(1).max(128)),
  presence_penalty: opt(z.number().min(-2).max(2)),
  frequency_penalty: opt(z.number().min(-2).max(2)),
  logit_bias: opt(z.record(z.string(), z.number().min(-100).max(100))),
  logprobs: opt(z.boolean()),
  top_logprobs: opt(z.number().int().min(0).max(20)),
  response_format: opt(responseFormat),
  reasoning_effort: opt(z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"])),
  user: opt(z.string().max(256)),
  modalities: opt(z.array(z.enum(["text", "image", "audio"]))),
  audio: opt(audioOutput),
  metadata: opt(metadataSchema),
  prediction: opt(prediction),
  prompt_cache_key: opt(z.string()),
  safety_identifier: opt(z.string()),
  service_tier: opt(serviceTierSchema),
  store: opt(z.boolean()),
  verbosity: opt(verbositySchema),
  /** Accepted only where the fee by search context size is priced (parseChatRequest), else refused. */
  web_search_options: opt(webSearchOptions),
  /** OpenRouter-style routing preferences and fallback models (src/routing/preferences.ts). */
  provider: opt(providerPreferencesSchema),
  models: opt(fallbackModelsSchema),
});

/**
 * zod's records skip a `__proto__` key (it cannot be an own key of the object they build), so a
 * `metadata` pair named so would vanish: refused instead. Call with the raw body.
 */
export function refuseProtoMetadataKey(body: object): void {
  const metadata: unknown = Object.hasOwn(body, "metadata") ? (body as Record<string, unknown>).metadata : undefined;
  if (typeof metadata === "object" && metadata !== null && Object.hasOwn(metadata, "__proto__")) {
    throw badRequest("Invalid value for 'metadata': '__proto__' cannot be a key.", "metadata");
  }
}

/** Values the gateway cannot bill honestly: a 400 saying what is supported. */
function refuseUnpriced(req: Pick<z.infer<typeof chatRequestSchema>, "service_tier" | "web_search_options" | "model" | "models">): void {
  if (req.service_tier !== undefined && !BILLED_SERVICE_TIERS.has(req.service_tier)) {
    throw badRequest(
      `service_tier '${req.service_tier}' is not supported: the provider bills it at other prices than the standard ones this gateway charges. Use 'auto' or 'default', or leave it out.`,
      "service_tier",
      "unsupported_parameter",
    );
  }
  if (req.web_search_options !== undefined && ![req.model, ...(req.models ?? [])].every((m) => pricesSearchContext(m))) {
    throw badRequest(
      "'web_search_options' is supported only on models billed by search context size (Perplexity Sonar: 'sonar', 'sonar-pro', 'sonar-reasoning-pro'); other providers bill web search at prices this gateway does not charge.",
      "web_search_options",
      "unsupported_parameter",
    );
  }
}

/**
 * The chat schema narrowed to the fields a body carries (and the required ones), built once per set
 * of fields and kept per isolate. zod runs every field of an object's shape, an absent one too
 * (an optional field is a pipe of optional, nullable and transform): about 35 absent fields per
 * typical request were most of the parse. Each field present is validated by the same schema as
 * before and an absent one was `undefined` either way, so the result and the errors are the same.
 */
const REQUIRED_FIELDS = ["model", "messages"] as const;
const MAX_NARROWED = 256;
const SHAPE_KEYS: readonly string[] = Object.keys(chatRequestSchema.shape);
/** Longest list of body keys kept: every field of the shape together is 432 characters. */
const MAX_BODY_KEYS_CHARS = 1024;
const narrowed = new Map<string, z.ZodType<z.infer<typeof chatRequestSchema>>>();
/**
 * The narrowed schema by the body's own keys as they come (a client sends the same keys in the same
 * order on every request), so a request finds its schema with one walk of its keys instead of a walk
 * of the whole shape. Unknown keys are part of this key but not of `narrowed`'s: a client that
 * varies them churns only this map, and a new narrowed schema is built only for a new set of
 * known fields.
 */
const byBodyKeys = new Map<string, z.ZodType<z.infer<typeof chatRequestSchema>>>();

function schemaFor(body: object): z.ZodType<z.infer<typeof chatRequestSchema>> {
  // Length-prefixed, so no key's text can pass for several keys (`{"a,b": 1}` is not `{a, b}`):
  // one body must never find the schema of another set of fields.
  let bodyKeys = "";
  for (const k in body) bodyKeys += `${k.length}:${k}`;
  const hit = byBodyKeys.get(bodyKeys);
  if (hit) return hit;
  const shape = chatRequestSchema.shape;
  const present = new Set<string>(REQUIRED_FIELDS);
  for (const k in body) if (Object.hasOwn(shape, k)) present.add(k);
  // In the shape's order: the parsed object's fields come out in it (the cache key reads them so).
  const fields = SHAPE_KEYS.filter((k) => present.has(k));
  const signature = fields.join(",");
  let schema = narrowed.get(signature);
  if (!schema) {
    // Bodies name few distinct sets of fields; a client that varies them without end cannot grow this.
    if (narrowed.size >= MAX_NARROWED) narrowed.clear();
    const mask: Partial<Record<keyof typeof shape, true>> = {};
    for (const k of fields) mask[k as keyof typeof shape] = true;
    schema = chatRequestSchema.pick(mask) as unknown as z.ZodType<z.infer<typeof chatRequestSchema>>;
    narrowed.set(signature, schema);
  }
  // A body's keys are the caller's text: only a short list is kept (a body of huge or countless
  // keys would otherwise park its key text in this map), and the map clears when full.
  if (bodyKeys.length <= MAX_BODY_KEYS_CHARS) {
    if (byBodyKeys.size >= MAX_NARROWED) byBodyKeys.clear();
    byBodyKeys.set(bodyKeys, schema);
  }
  return schema;
}

/** Validates a raw JSON body into a ChatRequest, or throws the 400 envelope naming the field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("The request body must be a JSON object.");
  refuseProtoMetadataKey(body);
  const result = schemaFor(body).safeParse(body);
  if (!result.success) {
    const { message, param } = describeZodError(result.error);
    throw badRequest(message, param);
  }
  // The rest of the destructuring is already a fresh object: the request is built on it.
  const { tools: allTools, ...parsed } = result.data;
  const req: typeof parsed & Pick<ChatRequest, "tools" | "custom_tools"> = parsed;
  const functionTools = allTools?.filter((t) => t.type === "function");
  const customTools = allTools?.filter((t) => t.type === "custom");
  if (functionTools?.length || (allTools && !customTools?.length)) req.tools = functionTools;
  if (customTools?.length) req.custom_tools = customTools;
  // `allowed_tools` restricts which of the tools the model may call: every provider serves that as
  // the same request with only those tools, and the mode as the tool choice.
  if (typeof req.tool_choice === "object" && req.tool_choice.type === "allowed_tools") {
    const allowed = new Set(req.tool_choice.allowed_tools.tools);
    const tools = (req.tools ?? []).filter((t) => allowed.has(t.function.name));
    const unknown = [...allowed].filter((n) => !tools.some((t) => t.function.name === n));
    if (unknown.length) throw badRequest(`'tool_choice.allowed_tools' names tools that are not in 'tools': ${unknown.join(", ")}.`, "tool_choice");
    req.tool_choice = req.tool_choice.allowed_tools.mode;
    req.tools = tools;
    // The allowed list names function tools only, so custom tools are not among the allowed.
    delete req.custom_tools;
  }
  if (req.tool_choice !== undefined && req.tool_choice !== "none" && req.tool_choice !== "auto" && !req.tools?.length && !req.custom_tools?.length) {
    throw badRequest("'tool_choice' requires 'tools'.", "tool_choice");
  }
  if (req.top_logprobs !== undefined && req.logprobs !== true) {
    throw badRequest("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs");
  }
  if (req.modalities?.includes("audio") && !req.audio) {
    throw badRequest("'modalities' with \"audio\" requires 'audio' (voice and format).", "audio");
  }
  refuseUnpriced(req);
  const messages = legacyFunctionCalls(req.messages);
  // Drop undefined keys so the object is a clean, normalized request (also used as the cache key);
  // one pass over the fields, in their order, with the messages in theirs.
  const out: Record<string, unknown> = {};
  const fields = req as Record<string, unknown>;
  for (const k in fields) {
    const v = k === "messages" ? messages : fields[k];
    if (v !== undefined) out[k] = v;
  }
  return out as unknown as ChatRequest;
}
