/**
 * Input and output schemas of the MCP tools (spec 4.3). zod v4; the SDK turns them into JSON
 * Schema for `tools/list` and validates arguments and `structuredContent` with them.
 */
import * as z from "zod";
import { nanoBananaFilename } from "../generation/nano-banana";
import { imageSizeSchema } from "../generation/images";

const DATE = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected a UTC date YYYY-MM-DD");

// ---------- inputs ----------

export const getUsageInput = {
  from: DATE.optional().describe("First UTC date (YYYY-MM-DD), inclusive. Default: 29 days before `to`."),
  to: DATE.optional().describe("Last UTC date (YYYY-MM-DD), inclusive. Default: today."),
  granularity: z.enum(["day", "hour"]).optional().describe("Bucket size of the series: `day` (default) or `hour` (ranges up to 31 days)."),
};

export const getUsageBreakdownInput = {
  group_by: z.enum(["provider", "model", "app", "api_key", "end_user"]).describe("What to rank (`end_user`: the app end users of platform sessions; other keys rank as `unknown`)."),
  sort_by: z.enum(["requests", "cost", "tokens"]).optional().describe("Ranking order, descending (ties by id). Default `requests`."),
  from: getUsageInput.from,
  to: getUsageInput.to,
  limit: z.number().int().min(1).max(100).optional().describe("Rows per page, 1 to 100 (default 10)."),
  offset: z.number().int().min(0).max(10000).optional().describe("Rows to skip, 0 to 10000 (default 0). Next page: offset + limit."),
};

export const chatInput = {
  model: z.string().min(1).describe("Model id from list-models (canonical, or provider/model)."),
  messages: z
    .array(
      z.object({
        role: z.enum(["system", "developer", "user", "assistant", "tool"]),
        content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
      }),
    )
    .min(1)
    .describe("Conversation, oldest first."),
  temperature: z.number().min(0).max(2).optional().describe("Sampling temperature, 0 to 2."),
  max_tokens: z.number().int().min(1).optional().describe("Cap on generated tokens."),
};

export const generateImageInput = {
  prompt: z.string().min(1).describe("What to draw."),
  model: z.string().min(1).optional().describe("Image model id (default `qwen-image-3.0`); see list-image-models."),
  size: imageSizeSchema.optional().describe("Image size, `WIDTHxHEIGHT` or `auto` (the provider's default), default `1024x1024`."),
  n: z.number().int().min(1).max(4).optional().describe("Number of images, 1 to 4 (default 1)."),
};

export const generateNanoBananaInput = {
  prompt: z.string().min(1).describe("What to draw."),
  filename: nanoBananaFilename
    .optional()
    .describe("File name when saving is enabled (default `nano-banana-{timestamp}.png`); no path separators."),
  aspect_ratio: z.enum(["1:1", "16:9", "4:3", "5:4"]).optional().describe("Aspect ratio of the image."),
};

export const listModelsInput = {
  include_deactivated: z.boolean().optional().describe("Include deactivated models."),
  exclude_deprecated: z.boolean().optional().describe("Leave out deprecated models."),
  limit: z.number().int().min(1).max(500).optional().describe("Maximum models returned (default 20)."),
  family: z.string().min(1).optional().describe("Only models of this family (e.g. `gpt`, `claude`, `gemini`)."),
};

// ---------- outputs ----------

const usd = z.string().describe("USD amount as a decimal string");

const tokens = z.object({
  prompt: z.number(),
  completion: z.number(),
  reasoning: z.number(),
  cached: z.number(),
  total: z.number(),
});

const totals = {
  requests: z.number(),
  errors: z.number(),
  cacheHits: z.number(),
  tokens,
  costUsd: usd,
  creditsCostUsd: usd,
  byokCostUsd: usd,
  dataStorageCostUsd: usd,
  hedgedRequests: z.number(),
  hedgeCostUsd: usd,
};

const scope = z.object({
  type: z.enum(["project", "own_keys"]),
  organizationId: z.string(),
  projectId: z.string(),
  projectName: z.string(),
  role: z.enum(["owner", "admin", "developer"]),
  description: z.string(),
});

const ranked = z.object({ id: z.string(), name: z.string(), requests: z.number() }).nullable();

const coverage = z.object({ complete: z.boolean(), recordedRequests: z.number(), totalRequests: z.number() });

export const usageOutput = {
  scope,
  period: z.object({ from: z.string(), to: z.string(), granularity: z.enum(["day", "hour"]), timezone: z.literal("UTC") }),
  updatedAt: z.string().nullable(),
  totals: z.object(totals),
  series: z.array(z.object({ start: z.string(), ...totals })),
  mostUsedProvider: ranked,
  mostUsedModel: ranked,
  mostUsedApp: ranked,
  appUsageCoverage: coverage,
  note: z.string(),
};

export const breakdownOutput = {
  scope,
  period: z.object({ from: z.string(), to: z.string(), timezone: z.literal("UTC") }),
  groupBy: z.enum(["provider", "model", "app", "api_key", "end_user"]),
  sortBy: z.enum(["requests", "cost", "tokens"]),
  updatedAt: z.string().nullable(),
  rows: z.array(z.object({ id: z.string(), name: z.string(), rank: z.number(), ...totals })),
  totals: z.object(totals),
  coverage,
  pagination: z.object({ limit: z.number(), offset: z.number(), total: z.number(), hasMore: z.boolean(), nextOffset: z.number().nullable() }),
  note: z.string(),
};

export const accountOutput = {
  /** `id` is null while the membership is pending (the account id is never shown to an organization it has not joined). */
  user: z.object({ id: z.string().nullable(), email: z.string(), name: z.string() }),
  organization: z.object({ id: z.string(), name: z.string(), plan: z.string(), creditBalanceUsd: usd.optional() }),
  project: z.object({ id: z.string(), name: z.string(), mode: z.string() }),
  role: z.enum(["owner", "admin", "developer"]),
  analyticsScope: z.object({ type: z.enum(["project", "own_keys"]), description: z.string() }),
  apiKey: z.object({
    id: z.string(),
    description: z.string(),
    kind: z.string(),
    status: z.string(),
    expiresAt: z.string().nullable(),
    spendingLimits: z.object({
      usageLimitUsd: usd.nullable(),
      periodUsageLimitUsd: usd.nullable(),
      periodUsageDurationValue: z.number().nullable(),
      periodUsageDurationUnit: z.string().nullable(),
      usageUsd: usd.nullable(),
      periodUsageUsd: usd.nullable(),
      periodStartedAt: z.string().nullable(),
    }),
  }),
  authentication: z.object({ method: z.enum(["api_key", "oauth"]), oauthClientId: z.string().nullable() }),
};

const capabilities = z.object({
  streaming: z.boolean(),
  vision: z.boolean(),
  tools: z.boolean(),
  reasoning: z.boolean(),
  json_output: z.boolean(),
  structured_outputs: z.boolean(),
});

/** Fields both model listings start with. */
const modelIdentity = {
  id: z.string(),
  name: z.string(),
  family: z.string(),
  maker: z.string(),
  description: z.string(),
};

export const listModelsOutput = {
  models: z.array(
    z.object({
      ...modelIdentity,
      context_length: z.number(),
      max_output: z.number(),
      input_modalities: z.array(z.string()),
      output_modalities: z.array(z.string()),
      capabilities,
      pricing: z.object({ prompt: usd, completion: usd }).describe("Lowest price per token across providers"),
      providers: z.array(z.object({ providerId: z.string(), pricing: z.record(z.string(), z.unknown()) })),
      free: z.boolean(),
      deprecated_at: z.string().nullable(),
      deactivated_at: z.string().nullable(),
    }),
  ),
  returned: z.number(),
  total: z.number(),
};

export const listImageModelsOutput = {
  models: z.array(
    z.object({
      ...modelIdentity,
      aliases: z.array(z.string()),
      providers: z.array(z.string()),
      sizes: z.array(z.string()),
      pricing: z.record(z.string(), z.unknown()),
      deprecated_at: z.string().nullable(),
    }),
  ),
  defaultModel: z.string(),
};

export const chatOutput = {
  model: z.string(),
  provider: z.string().nullable(),
  content: z.string(),
  reasoning: z.string().nullable(),
  finish_reason: z.string().nullable(),
  usage: z.object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.number(),
    cost_usd: z.number().nullable(),
  }),
  request_id: z.string().nullable(),
};

export const generateImageOutput = {
  model: z.string(),
  images: z.array(z.object({ index: z.number(), mimeType: z.string(), url: z.string().nullable(), revised_prompt: z.string().nullable() })),
  cost_usd: z.number().nullable(),
  request_id: z.string().nullable(),
};

export const nanoBananaOutput = {
  model: z.string(),
  mimeType: z.string(),
  saved: z.boolean(),
  path: z.string().nullable(),
  text: z.string().nullable(),
  cost_usd: z.number().nullable(),
  request_id: z.string().nullable(),
};
