/** Master API: models of the organization's custom providers, over src/actions/custom-models.ts. */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import {
  createCustomModel,
  customModelCreateBody,
  customModelPatchBody,
  deleteCustomModel,
  getCustomModel,
  listCustomModels,
  updateCustomModel,
} from "../../actions/custom-models";

const idParam = z.object({ id: z.string().min(1) });

export const customModelRoutes = new Hono<AppEnv>();

customModelRoutes.post("/", validateBody(customModelCreateBody), async (c) => {
  return c.json({ customModel: await createCustomModel(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

customModelRoutes.get("/", async (c) => c.json({ customModels: await listCustomModels(c.env, c.get("master").organizationId) }));

customModelRoutes.get("/:id", validate("param", idParam), async (c) => {
  return c.json({ customModel: await getCustomModel(c.env, c.get("master").organizationId, c.req.valid("param").id) });
});

customModelRoutes.patch("/:id", validate("param", idParam), validateBody(customModelPatchBody), async (c) => {
  return c.json({ customModel: await updateCustomModel(c.env, c.get("master").organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

customModelRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const model = await deleteCustomModel(c.env, c.get("master").organizationId, c.req.valid("param").id);
  return c.json({ message: `Custom model '${model}' deleted.` });
});
