/**
 * Master API: the organization's master keys. Any active master key manages
 * them; the secret is in the answer to create and roll only.
 *
 *   POST /v1/master/master-keys {description?}   GET /v1/master/master-keys
 *   POST /v1/master/master-keys/{id}/roll        DELETE /v1/master/master-keys/{id}
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import { createMasterKey, listMasterKeys, masterKeyCreateBody, revokeMasterKey, rollMasterKey } from "../../organizations/master-keys";

const idParam = z.object({ id: z.string().min(1).max(64) });

export const masterMasterKeyRoutes = new Hono<AppEnv>();

masterMasterKeyRoutes.post("/", validateBody(masterKeyCreateBody), async (c) => {
  const { organizationId, masterKeyId } = c.get("master");
  const key = await createMasterKey(c.env, organizationId, c.req.valid("json").description, { via: "master_api", id: masterKeyId });
  return c.json({ masterKey: key }, 201);
});

masterMasterKeyRoutes.get("/", async (c) => c.json({ masterKeys: await listMasterKeys(c.env, c.get("master").organizationId) }));

masterMasterKeyRoutes.post("/:id/roll", validate("param", idParam), async (c) =>
  c.json({ masterKey: await rollMasterKey(c.env, c.get("master").organizationId, c.req.valid("param").id) }),
);

masterMasterKeyRoutes.delete("/:id", validate("param", idParam), async (c) =>
  c.json({ masterKey: await revokeMasterKey(c.env, c.get("master").organizationId, c.req.valid("param").id) }),
);
