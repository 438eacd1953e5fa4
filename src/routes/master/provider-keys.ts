/** Master API: the organization's own provider credentials (BYOK), over src/actions/provider-keys.ts. */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import {
  createProviderKey,
  deleteProviderKey,
  listProviderKeys,
  PROVIDER_KEY_PATCH_HINTS,
  providerKeyCreateBody,
  providerKeyPatchBody,
  updateProviderKey,
} from "../../actions/provider-keys";

const idParam = z.object({ id: z.string().min(1) });

export const providerKeyRoutes = new Hono<AppEnv>();

providerKeyRoutes.post("/", validateBody(providerKeyCreateBody), async (c) => {
  return c.json({ providerKey: await createProviderKey(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201);
});

providerKeyRoutes.get("/", async (c) => c.json({ providerKeys: await listProviderKeys(c.env, c.get("master").organizationId) }));

providerKeyRoutes.patch("/:id", validate("param", idParam), validateBody(providerKeyPatchBody, PROVIDER_KEY_PATCH_HINTS), async (c) => {
  return c.json({ providerKey: await updateProviderKey(c.env, c.get("master").organizationId, c.req.valid("param").id, c.req.valid("json")) });
});

providerKeyRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const { id } = c.req.valid("param");
  await deleteProviderKey(c.env, c.get("master").organizationId, id);
  return c.json({ message: `Provider key '${id}' deleted.` });
});
