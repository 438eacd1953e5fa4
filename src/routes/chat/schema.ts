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
 *   prompts beyond the context window and `max_tokens` beyond the mapping's output cap.
 * - Dropped silently by the adapter (provider quirks `unsupportedParams`): sampling hints and
 *   extras such as `logit_bias`, `logprobs`/`top_logprobs`, `seed`, `user`, `reasoning_effort`,
 *   penalties, `stream_options`, `parallel_tool_calls` where a provider rejects them.
 */
import * as z from "zod";
import type { ChatRequest } from "../../providers/types";
import { badRequest } from "../../errors/api-error";
import { describeZodError } from "../../errors/validation";

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

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
  /** Sent back as we returned it (Gemini's thought signature); other keys are dropped. */
  extra_content: z.object({ google: z.object({ thought_signature: z.string().optional() }).optional() }).optional(),
});

const systemMessage = z.object({ role: z.enum(["system", "developer"]), content: textContent, name: z.string().optional() });
const userMessage = z.object({ role: z.literal("user"), content: userContent, name: z.string().optional() });
const assistantMessage = z.object({
  role: z.literal("assistant"),
  content: textContent.nullable().optional(),
  name: z.string().optional(),
  tool_calls: z.array(toolCall).optional(),
  reasoning: z.string().nullable().optional(),
});
const toolMessage = z.object({ role: z.literal("tool"), content: textContent, tool_call_id: z.string().min(1) });

const message = z.discriminatedUnion("role", [systemMessage, userMessage, assistantMessage, toolMessage]);

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

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) }),
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

/** Optional fields also accept `null` (OpenAI SDKs send it) and treat it as absent. */
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);

export const chatRequestSchema = z.object({
  model: z.string().min(1, "model is required").max(512),
  messages: z.array(message).min(1, "at least one message is required"),
  stream: opt(z.boolean()),
  stream_options: opt(z.object({ include_usage: z.boolean().optional() })),
  tools: opt(z.array(functionTool).max(128)),
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
  reasoning_effort: opt(z.enum(["none", "minimal", "low", "medium", "high"])),
  user: opt(z.string().max(256)),
  modalities: opt(z.array(z.enum(["text", "image", "audio"]))),
});

/** Validates a raw JSON body into a ChatRequest, or throws the 400 envelope naming the field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("The request body must be a JSON object.");
  const result = chatRequestSchema.safeParse(body);
  if (!result.success) {
    const { message, param } = describeZodError(result.error);
    throw badRequest(message, param);
  }
  const req = result.data;
  if (req.tool_choice !== undefined && req.tool_choice !== "none" && req.tool_choice !== "auto" && !req.tools?.length) {
    throw badRequest("'tool_choice' requires 'tools'.", "tool_choice");
  }
  if (req.top_logprobs !== undefined && req.logprobs !== true) {
    throw badRequest("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs");
  }
  // Drop undefined keys so the object is a clean, normalized request (also used as the cache key).
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) if (v !== undefined) out[k] = v;
  return out as unknown as ChatRequest;
}
