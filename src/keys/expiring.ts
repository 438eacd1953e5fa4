/**
 * Cron job (every minute): `key.expiring` webhook events for active keys that expire within
 * EXPIRING_WITHIN_MS, once per key and expiry (an in-app notification row, unique per key, kind
 * and expiry, is the record that it was sent). Only organizations with a webhook subscribed to
 * the event are looked at.
 */
import type { Env } from "../env";
import { emitWebhookEvent } from "../integrations/webhooks";
import { randomAlphanumeric } from "../lib/ids";

export const EXPIRING_WITHIN_MS = 7 * 86_400_000;
const BATCH = 200;

export async function notifyExpiringKeys(env: Env, now: number): Promise<number> {
  // One statement: the keys are picked by a subquery (never bound one by one); the unique index
  // on (api_key_id, limit_type, window_start) makes a second run insert nothing for them.
  const res = await env.DB.prepare(
    `INSERT INTO notifications (id, organization_id, api_key_id, kind, limit_type, window_start, message, created_at)
     SELECT 'ntf_' || ?3 || k.id, k.organization_id, k.id, 'api_key_expiring', 'expiring', k.expires_at,
       'API key ' || CASE WHEN k.description = '' THEN k.id ELSE '"' || k.description || '"' END || ' expires on ' || strftime('%Y-%m-%d %H:%M UTC', k.expires_at / 1000, 'unixepoch') || '.', ?1
     FROM api_keys k
     WHERE k.status = 'active' AND k.expires_at > ?1 AND k.expires_at <= ?2 AND k.kind <> 'session'
       AND EXISTS (SELECT 1 FROM webhooks w WHERE w.organization_id = k.organization_id AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = 'key.expiring'))
     LIMIT ${BATCH}
     ON CONFLICT DO NOTHING
     RETURNING organization_id, api_key_id, window_start, message`,
  )
    .bind(now, now + EXPIRING_WITHIN_MS, randomAlphanumeric(6))
    .all<{ organization_id: string; api_key_id: string; window_start: number; message: string }>();
  for (const r of res.results) {
    await emitWebhookEvent(env, r.organization_id, "key.expiring", { apiKeyId: r.api_key_id, expiresAt: new Date(r.window_start).toISOString(), message: r.message });
  }
  return res.results.length;
}

/** ScheduledJob adapter (src/scheduled.ts). */
export const expiringKeysJob = async (env: Env, now: number): Promise<void> => {
  await notifyExpiringKeys(env, now);
};
