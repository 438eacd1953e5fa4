/**
 * Success response bodies for the OpenAPI document (GET /openapi.json), as zod schemas converted
 * like the request schemas: the wire formats the gateway returns (OpenAI chat/embeddings/responses/
 * moderations/images/models, Anthropic messages) and the IAM rule objects. Loose objects: the
 * fields listed are always present, providers may add more. Operations without an entry here get
 * a described JSON object (src/openapi/document.ts), never an empty schema.
 */
import * as z from "zod";
import { RULE_TYPES } from "../db/schema";

const usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }).loose();

export const chatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z
        .object({
          index: z.number().int(),
          message: z.object({ role: z.literal("assistant"), content: z.string().nullable(), tool_calls: z.array(z.object({ id: z.string(), type: z.literal("function"), function: z.object({ name: z.string(), arguments: z.string() }) })).optional() }).loose(),
          finish_reason: z.string().nullable(),
        })
        .loose(),
    ),
    usage: usage.optional(),
  })
  .loose()
  .describe("Chat completion (or, with `stream: true`, Server-Sent Events of `chat.completion.chunk`)");

export const embeddingsResponse = z
  .object({ object: z.literal("list"), data: z.array(z.object({ object: z.literal("embedding"), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string()]) }).loose()), model: z.string(), usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }).loose() })
  .loose();

export const responsesResponse = z
  .object({ id: z.string(), object: z.literal("response"), created_at: z.number(), model: z.string(), status: z.string(), output: z.array(z.object({ type: z.string() }).loose()), usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).loose().optional() })
  .loose()
  .describe("OpenAI Responses object (or Server-Sent Events with `stream: true`)");

export const messagesResponse = z
  .object({ id: z.string(), type: z.literal("message"), role: z.literal("assistant"), model: z.string(), content: z.array(z.object({ type: z.string() }).loose()), stop_reason: z.string().nullable(), usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).loose() })
  .loose()
  .describe("Anthropic Messages object (or Server-Sent Events with `stream: true`)");

export const countTokensResponse = z.object({ input_tokens: z.number().int() });

const model = z.object({ id: z.string(), object: z.literal("model"), created: z.number().int(), owned_by: z.string() }).loose();
export const modelResponse = model;
export const modelListResponse = z.object({ object: z.literal("list"), data: z.array(model) });

export const moderationResponse = z.object({ id: z.string(), model: z.string(), results: z.array(z.object({ flagged: z.boolean(), categories: z.record(z.string(), z.boolean()), category_scores: z.record(z.string(), z.number()) }).loose()) }).loose();

export const imagesResponse = z.object({ created: z.number().int(), data: z.array(z.object({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() }).loose()) }).loose();

const rule = z.object({ id: z.string(), ruleType: z.enum(RULE_TYPES), ruleValue: z.object({ models: z.array(z.string()).optional(), providers: z.array(z.string()).optional(), pricingType: z.enum(["free", "paid"]).optional(), ipCidrs: z.array(z.string()).optional() }), status: z.enum(["active", "inactive"]) }).loose();
export const ruleResponse = z.object({ rule });
export const ruleListResponse = z.object({ rules: z.array(rule) });

export const htmlPage = z.string().describe("HTML page");
