/**
 * Models of the organization's custom providers, callable as `<providerName>/<modelId>`, shared by
 * `/v1/master/custom-models` and the session API (`/api/custom-models`). Prices are decimal USD
 * strings per token (per request for `request`).
 */
import { and, eq } from "drizzle-orm";
import * as z from "zod";
import { getDb } from "../db/client";
import { customModels, customProviders } from "../db/schema";
import { isDecimalString } from "../billing/money";
import { ApiError, badRequest, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { bumpKeyVersions } from "../keys/sync";
import type { Env } from "../env";

type CustomModelRow = typeof customModels.$inferSelect;

const price = z.string().refine((v) => isDecimalString(v) && !v.startsWith("-"), 'must be a non-negative decimal string, e.g. "0.000001"');
const pricing = z.strictObject({ prompt: price.optional(), completion: price.optional(), request: price.optional(), input_cache_read: price.optional() });
const capabilities = z.strictObject({
  streaming: z.boolean().optional(),
  tools: z.boolean().optional(),
  vision: z.boolean().optional(),
  reasoning: z.boolean().optional(),
  json_output: z.boolean().optional(),
});
const modelId = z.string().trim().min(1).max(200).regex(/^\S+$/, "must not contain whitespace");

export const customModelCreateBody = z.object({
  providerName: z.string().trim().min(1).max(63),
  modelId,
  name: z.string().trim().min(1).max(200).optional(),
  pricing: pricing.optional(),
  contextLength: z.number().int().positive().max(100_000_000).optional(),
  capabilities: capabilities.optional(),
});
export const customModelPatchBody = z.object({
  name: z.string().trim().min(1).max(200).nullable().optional(),
  pricing: pricing.optional(),
  contextLength: z.number().int().positive().max(100_000_000).nullable().optional(),
  capabilities: capabilities.optional(),
}).refine((b) => Object.values(b).some((v) => v !== undefined), { message: "nothing to update: send name, pricing, contextLength or capabilities" });
const view = (r: CustomModelRow) => ({
  id: r.id,
  object: "custom_model" as const,
  organizationId: r.organizationId,
  providerName: r.providerName,
  modelId: r.modelId,
  /** What clients send as `model`. */
  model: `${r.providerName}/${r.modelId}`,
  name: r.name,
  pricing: r.pricing,
  contextLength: r.contextLength,
  capabilities: r.capabilities,
  createdAt: new Date(r.createdAt).toISOString(),
});

async function loadModel(env: Env, organizationId: string, id: string): Promise<CustomModelRow> {
  const row = await getDb(env.DB)
    .select()
    .from(customModels)
    .where(and(eq(customModels.id, id), eq(customModels.organizationId, organizationId)))
    .get();
  if (!row) throw notFound(`Custom model '${id}' not found.`);
  return row;
}

export async function createCustomModel(env: Env, orgId: string, body: z.infer<typeof customModelCreateBody>) {
  const db = getDb(env.DB);
  const provider = await db
    .select({ id: customProviders.id })
    .from(customProviders)
    .where(and(eq(customProviders.organizationId, orgId), eq(customProviders.name, body.providerName)))
    .get();
  if (!provider) throw badRequest(`Invalid value for 'providerName': no custom provider named '${body.providerName}'.`, "providerName");
  const row = await db
    .insert(customModels)
    .values({
      id: newId("cm"),
      organizationId: orgId,
      providerName: body.providerName,
      modelId: body.modelId,
      name: body.name ?? null,
      pricing: body.pricing ?? {},
      contextLength: body.contextLength ?? null,
      capabilities: body.capabilities ?? {},
      createdAt: Date.now(),
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) {
    throw new ApiError(409, `Model '${body.providerName}/${body.modelId}' already exists.`, { type: "invalid_request_error", code: "custom_model_exists", param: "modelId" });
  }
  await bumpKeyVersions(env, { organizationId: orgId });
  return view(row);
}

export async function listCustomModels(env: Env, orgId: string) {
  const rows = await getDb(env.DB).select().from(customModels).where(eq(customModels.organizationId, orgId)).orderBy(customModels.createdAt, customModels.id);
  return rows.map(view);
}

export const getCustomModel = async (env: Env, orgId: string, id: string) => view(await loadModel(env, orgId, id));

export async function updateCustomModel(env: Env, orgId: string, id: string, body: z.infer<typeof customModelPatchBody>) {
  const current = await loadModel(env, orgId, id);
  const changes: Partial<Pick<CustomModelRow, "name" | "pricing" | "contextLength" | "capabilities">> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.pricing !== undefined) changes.pricing = body.pricing;
  if (body.contextLength !== undefined) changes.contextLength = body.contextLength;
  if (body.capabilities !== undefined) changes.capabilities = body.capabilities;
  if (!Object.keys(changes).length) return view(current);
  const row = await getDb(env.DB).update(customModels).set(changes).where(eq(customModels.id, current.id)).returning().get();
  await bumpKeyVersions(env, { organizationId: orgId });
  return view(row ?? current);
}

/** Deletes the model; returns what clients called it (`provider/model`). */
export async function deleteCustomModel(env: Env, orgId: string, id: string): Promise<string> {
  const current = await loadModel(env, orgId, id);
  await getDb(env.DB).delete(customModels).where(eq(customModels.id, current.id));
  await bumpKeyVersions(env, { organizationId: orgId });
  return `${current.providerName}/${current.modelId}`;
}
