/** `GET /api/notifications`: budget alerts of the organization (developers: their own keys only). */
import { Hono } from "hono";
import * as z from "zod";
import type { DashboardEnv } from "./types";
import { validate } from "../../errors/validation";
import { listNotifications } from "../../actions/notifications";

const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });

export const dashboardNotificationRoutes = new Hono<DashboardEnv>();

dashboardNotificationRoutes.get("/", validate("query", listQuery), async (c) => {
  return c.json({ notifications: await listNotifications(c.env, c.get("session"), c.req.valid("query").limit) });
});
