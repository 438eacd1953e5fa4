/** Master API: the organization's custom providers (OpenAI-compatible upstreams), over src/actions/custom-providers.ts. */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import {
  createCustomProvider,
  customProviderCreateBody,
  customProviderPatchBody,
  deleteCustomProvider,
  getCustomProvider,
  listCustomProviders,
  updateCustomProvider,
} from "../../actions/custom-providers";

const idParam = z.object({ id: z.string().min(1) });

export const customProviderRoutes = new Hono<AppEnv>();

customProviderRoutes.post("/", validateBody(customProviderCreateBody), async (c) => {
  return c.json({ customProvider: await createCustomProvider(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

customProviderRoutes.get("/", async (c) => c.json({ customProviders: await listCustomProviders(c.env, c.get("master").organizationId) }));

customProviderRoutes.get("/:id", validate("param", idParam), async (c) => {
  return c.json({ customProvider: await getCustomProvider(c.env, c.get("master").organizationId, c.req.valid("param").id) });
});

customProviderRoutes.patch("/:id", validate("param", idParam), validateBody(customProviderPatchBody), async (c) => {
  return c.json({ customProvider: await updateCustomProvider(c.env, c.get("master").organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

customProviderRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const name = await deleteCustomProvider(c.env, c.get("master").organizationId, c.req.valid("param").id);
  return c.json({ message: `Custom provider '${name}' and its models deleted.` });
});
