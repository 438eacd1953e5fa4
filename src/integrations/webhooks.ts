/**
 * Webhooks (contract section 8), signed per Standard Webhooks: headers `webhook-id` (the
 * delivery's id, the same on every retry so receivers can skip repeats), `webhook-timestamp`
 * (seconds, of the attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * keyed with the bytes of the secret (`whsec_<base64>`, shown once, stored sealed). Body:
 * `{type, timestamp, data}`. Events are queued on DELIVERIES and retried with backoff
 * (src/integrations/deliveries.ts); each delivery's outcome is kept for the delivery log.
 */
import { and, desc, eq } from "drizzle-orm";
import * as z from "zod";
import type { Env } from "../env";
import { isProduction } from "../env";
import { getDb } from "../db/client";
import { webhookDeliveries, webhooks, WEBHOOK_EVENTS, type WebhookEvent } from "../db/schema";
import { badRequest, notFound } from "../errors/api-error";
import { newId } from "../lib/ids";
import { decryptSecret, encryptSecret, fromBase64, toBase64 } from "../lib/crypto";
import { checkUpstreamUrl } from "../lib/ssrf";
import { requireHashSecret } from "../lib/crypto";
import { postJson } from "./post";

export interface WebhookMessage {
  kind: "webhook";
  deliveryId: string;
}

/** The test event of `POST /v1/master/webhooks/{id}/test`, beside the subscribable ones. */
export const TEST_EVENT = "webhook.test";

export const webhookCreateBody = z.object({
  url: z.string().min(1).max(2000),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
});

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's bytes. */
export async function signatureOf(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice(SECRET_PREFIX.length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

const view = (w: typeof webhooks.$inferSelect) => ({ id: w.id, object: "webhook" as const, url: w.url, events: w.events, createdAt: new Date(w.createdAt).toISOString() });

export async function createWebhook(env: Env, organizationId: string, body: z.infer<typeof webhookCreateBody>) {
  const check = checkUpstreamUrl(body.url, { production: isProduction(env) });
  if (!check.ok) throw badRequest(`Invalid value for 'url': ${check.reason}`, "url");
  const secret = `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(24)))}`;
  const row = await getDb(env.DB)
    .insert(webhooks)
    .values({ id: newId("wh"), organizationId, url: body.url, events: [...new Set(body.events)], secretSealed: await encryptSecret(requireHashSecret(env), secret), createdAt: Date.now() })
    .returning()
    .get();
  // The secret is shown here only.
  return { ...view(row), secret };
}

export async function listWebhooks(env: Env, organizationId: string) {
  const rows = await getDb(env.DB).select().from(webhooks).where(eq(webhooks.organizationId, organizationId)).orderBy(webhooks.createdAt, webhooks.id);
  return rows.map(view);
}

async function loadWebhook(env: Env, organizationId: string, id: string) {
  const row = await getDb(env.DB).select().from(webhooks).where(and(eq(webhooks.id, id), eq(webhooks.organizationId, organizationId))).get();
  if (!row) throw notFound(`Webhook '${id}' not found.`);
  return row;
}

export async function deleteWebhook(env: Env, organizationId: string, id: string): Promise<void> {
  await loadWebhook(env, organizationId, id);
  await getDb(env.DB).delete(webhooks).where(eq(webhooks.id, id));
}

/** The delivery log of one webhook, newest first. */
export async function listDeliveries(env: Env, organizationId: string, id: string, limit = 50) {
  await loadWebhook(env, organizationId, id);
  const rows = await getDb(env.DB).select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id)).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(limit);
  return rows.map((d) => ({
    id: d.id,
    type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode,
    lastError: d.lastError,
    createdAt: new Date(d.createdAt).toISOString(),
    updatedAt: new Date(d.updatedAt).toISOString(),
  }));
}

/** Queues one delivery per (webhook, event); the rows are written first so the log shows pending ones. */
async function enqueue(env: Env, targets: ReadonlyArray<{ id: string; organizationId: string }>, type: string, data: Record<string, unknown>): Promise<string[]> {
  if (targets.length === 0) return [];
  const now = Date.now();
  const payload = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  const rows = targets.map((t) => ({ id: newId("msg"), webhookId: t.id, organizationId: t.organizationId, eventType: type, payload, createdAt: now, updatedAt: now }));
  const db = getDb(env.DB);
  // A queue batch takes at most 100 messages.
  for (let i = 0; i < rows.length; i += 100) {
    const part = rows.slice(i, i + 100);
    for (const r of part) await db.insert(webhookDeliveries).values(r);
    await env.DELIVERIES.sendBatch(part.map((r) => ({ body: { kind: "webhook", deliveryId: r.id } satisfies WebhookMessage })));
  }
  return rows.map((r) => r.id);
}

/**
 * An event of an organization to every webhook subscribed to it. Never throws: callers are alert
 * paths (budget, credits, expiry) whose other channels must not suffer.
 */
export async function emitWebhookEvent(env: Env, organizationId: string, type: WebhookEvent, data: Record<string, unknown>): Promise<void> {
  try {
    const res = await env.DB.prepare("SELECT id, organization_id FROM webhooks WHERE organization_id = ?1 AND EXISTS (SELECT 1 FROM json_each(webhooks.events) WHERE value = ?2)").bind(organizationId, type).all<{ id: string; organization_id: string }>();
    await enqueue(env, res.results.map((r) => ({ id: r.id, organizationId: r.organization_id })), type, { organizationId, ...data });
  } catch (err) {
    console.error("webhook event not queued", type, err instanceof Error ? err.message : String(err));
  }
}

/** An event of no one organization (a provider's health) to every webhook subscribed to it. Never throws. */
export async function emitGlobalWebhookEvent(env: Env, type: WebhookEvent, data: Record<string, unknown>): Promise<void> {
  try {
    const res = await env.DB.prepare("SELECT id, organization_id FROM webhooks WHERE EXISTS (SELECT 1 FROM json_each(webhooks.events) WHERE value = ?1)").bind(type).all<{ id: string; organization_id: string }>();
    const byOrg = new Map<string, Array<{ id: string; organizationId: string }>>();
    for (const r of res.results) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), { id: r.id, organizationId: r.organization_id }]);
    for (const [org, targets] of byOrg) await enqueue(env, targets, type, { organizationId: org, ...data });
  } catch (err) {
    console.error("webhook event not queued", type, err instanceof Error ? err.message : String(err));
  }
}

/** `POST /v1/master/webhooks/{id}/test`: a `webhook.test` event to that webhook only. */
export async function sendTestEvent(env: Env, organizationId: string, id: string): Promise<string> {
  const hook = await loadWebhook(env, organizationId, id);
  const [deliveryId] = await enqueue(env, [hook], TEST_EVENT, { organizationId, webhookId: hook.id, message: "Test event from Switchboard." });
  return deliveryId!;
}

/** The consumer's step: one signed POST of a delivery; records the outcome. True when delivered (or nothing to do). */
export async function deliverWebhook(env: Env, m: WebhookMessage, attempts: number, last: boolean): Promise<boolean> {
  const db = getDb(env.DB);
  const row = await db
    .select({ d: webhookDeliveries, url: webhooks.url, secretSealed: webhooks.secretSealed })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(eq(webhookDeliveries.id, m.deliveryId))
    .get();
  // Webhook deleted since, or already delivered (a redelivered message): nothing to send.
  if (!row || row.d.status === "delivered") return true;
  const secret = await decryptSecret(requireHashSecret(env), row.secretSealed);
  const timestamp = Math.floor(Date.now() / 1000);
  const out = await postJson(row.url, row.d.payload, {
    "webhook-id": row.d.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signatureOf(secret, row.d.id, timestamp, row.d.payload),
    "user-agent": "Switchboard-Webhooks/1",
  });
  await db
    .update(webhookDeliveries)
    .set({ status: out.ok ? "delivered" : last ? "failed" : "pending", attempts: attempts, responseCode: out.status, lastError: out.error, updatedAt: Date.now() })
    .where(eq(webhookDeliveries.id, row.d.id));
  return out.ok;
}
