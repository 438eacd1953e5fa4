/**
 * Master API: models of the organization's custom providers, callable as `<providerName>/<modelId>`.
 * Prices are decimal USD strings per token (per request for `request`).
 */
import { Hono } from "hono";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { AppEnv } from "../../app-types";
import { getDb } from "../../db/client";
import { customModels, customProviders } from "../../db/schema";
import { isDecimalString } from "../../billing/money";
import { ApiError, badRequest, notFound } from "../../errors/api-error";
import { validate, validateBody } from "../../errors/validation";
import { newId } from "../../lib/ids";
import { bumpKeyVersions } from "../../keys/sync";
import type { Env } from "../../env";

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

const createBody = z.object({
  providerName: z.string().trim().min(1).max(63),
  modelId,
  name: z.string().trim().min(1).max(200).optional(),
  pricing: pricing.optional(),
  contextLength: z.number().int().positive().max(100_000_000).optional(),
  capabilities: capabilities.optional(),
});
const patchBody = z.object({
  name: z.string().trim().min(1).max(200).nullable().optional(),
  pricing: pricing.optional(),
  contextLength: z.number().int().positive().max(100_000_000).nullable().optional(),
  capabilities: capabilities.optional(),
});
const idParam = z.object({ id: z.string().min(1) });

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

export const customModelRoutes = new Hono<AppEnv>();

customModelRoutes.post("/", validateBody(createBody), async (c) => {
  const body = c.req.valid("json");
  const orgId = c.get("master").organizationId;
  const db = getDb(c.env.DB);
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
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ customModel: view(row) }, 201);
});

customModelRoutes.get("/", async (c) => {
  const rows = await getDb(c.env.DB)
    .select()
    .from(customModels)
    .where(eq(customModels.organizationId, c.get("master").organizationId))
    .orderBy(customModels.createdAt, customModels.id);
  return c.json({ customModels: rows.map(view) });
});

customModelRoutes.get("/:id", validate("param", idParam), async (c) => {
  return c.json({ customModel: view(await loadModel(c.env, c.get("master").organizationId, c.req.valid("param").id)) });
});

customModelRoutes.patch("/:id", validate("param", idParam), validateBody(patchBody), async (c) => {
  const orgId = c.get("master").organizationId;
  const current = await loadModel(c.env, orgId, c.req.valid("param").id);
  const body = c.req.valid("json");
  const changes: Partial<Pick<CustomModelRow, "name" | "pricing" | "contextLength" | "capabilities">> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.pricing !== undefined) changes.pricing = body.pricing;
  if (body.contextLength !== undefined) changes.contextLength = body.contextLength;
  if (body.capabilities !== undefined) changes.capabilities = body.capabilities;
  if (!Object.keys(changes).length) return c.json({ customModel: view(current) });
  const row = await getDb(c.env.DB).update(customModels).set(changes).where(eq(customModels.id, current.id)).returning().get();
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ customModel: view(row ?? current) });
});

customModelRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const orgId = c.get("master").organizationId;
  const current = await loadModel(c.env, orgId, c.req.valid("param").id);
  await getDb(c.env.DB).delete(customModels).where(eq(customModels.id, current.id));
  await bumpKeyVersions(c.env, { organizationId: orgId });
  return c.json({ message: `Custom model '${current.providerName}/${current.modelId}' deleted.` });
});
