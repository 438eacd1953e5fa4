/**
 * Master keys from the dashboard: owners only (admins and developers get 403),
 * the same service as the master API (src/organizations/master-keys.ts).
 *
 *   GET /api/master-keys   POST /api/master-keys {description?}   POST /api/master-keys/{id}/roll   DELETE /api/master-keys/{id}
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { DashboardEnv } from "./types";
import { forbidden } from "../../errors/api-error";
import { validateBody } from "../../errors/validation";
import { createMasterKey, listMasterKeys, masterKeyCreateBody, revokeMasterKey, rollMasterKey } from "../../organizations/master-keys";

export const requireOwner: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.get("session").role !== "owner") throw forbidden("Only owners manage master keys.", "owner_required");
  await next();
};

export const dashboardMasterKeyRoutes = new Hono<DashboardEnv>();
const r = dashboardMasterKeyRoutes;
r.use("*", requireOwner);

r.get("/", async (c) => c.json({ masterKeys: await listMasterKeys(c.env, c.get("session").organizationId) }));
r.post("/", validateBody(masterKeyCreateBody), async (c) => {
  const s = c.get("session");
  return c.json({ masterKey: await createMasterKey(c.env, s.organizationId, c.req.valid("json").description, { via: "dashboard", id: s.memberId }) }, 201);
});
r.post("/:id/roll", async (c) => c.json({ masterKey: await rollMasterKey(c.env, c.get("session").organizationId, c.req.param("id")) }));
r.delete("/:id", async (c) => c.json({ masterKey: await revokeMasterKey(c.env, c.get("session").organizationId, c.req.param("id")) }));
