/**
 * Master API: webhooks (contract section 8). `POST` -> 201 `{webhook: {id, url, events, secret}}`
 * (the secret shown this once), `GET`, `DELETE /{id}`, `POST /{id}/test` (a `webhook.test` event),
 * `GET /{id}/deliveries` (the delivery log: status, attempts, response code).
 */
import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../../app-types";
import { validate, validateBody } from "../../errors/validation";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, sendTestEvent, webhookCreateBody } from "../../integrations/webhooks";

export const webhookRoutes = new Hono<AppEnv>();
const idParam = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

webhookRoutes.post("/", validateBody(webhookCreateBody), async (c) => c.json({ webhook: await createWebhook(c.env, c.get("master").organizationId, c.req.valid("json")) }, 201));
webhookRoutes.get("/", async (c) => c.json({ webhooks: await listWebhooks(c.env, c.get("master").organizationId) }));
webhookRoutes.delete("/:id", validate("param", idParam), async (c) => {
  const { id } = c.req.valid("param");
  await deleteWebhook(c.env, c.get("master").organizationId, id);
  return c.json({ message: `Webhook '${id}' deleted.` });
});
webhookRoutes.post("/:id/test", validate("param", idParam), async (c) => c.json({ delivery: { id: await sendTestEvent(c.env, c.get("master").organizationId, c.req.valid("param").id), status: "pending" } }, 202));
webhookRoutes.get("/:id/deliveries", validate("param", idParam), async (c) => c.json({ deliveries: await listDeliveries(c.env, c.get("master").organizationId, c.req.valid("param").id) }));
