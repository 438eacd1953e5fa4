/**
 * Budget alerts (spec 2.1, 6): unless the organization turned `notifications.apiKeyBudgets` off
 * (unset means on, src/organizations/notification-settings.ts), when a settlement moves a key's
 * all-time or current-window spend across `thresholdPercent` (50..100,
 * default 80; a key's own `alert_threshold_percent` wins), one in-app notification is stored (unique per key, limit and window, so it is never
 * repeated) and one e-mail goes to the organization's owners and admins who accepted their membership through the `EMAIL`
 * send_email binding. Failures here are logged and never affect settlement.
 */
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { sendMail } from "../lib/mail";
import type { Env } from "../env";
import type { KeyContext } from "../context/key-context";
import type { SettleResult } from "../durable-objects/key-state";
import { getDb } from "../db/client";
import { apiKeys, members, notifications, organizations, users } from "../db/schema";
import { newId } from "../lib/ids";
import { emitWebhookEvent } from "../integrations/webhooks";

import { DEFAULT_THRESHOLD_PERCENT, effectiveNotifications, MIN_THRESHOLD_PERCENT as MIN_THRESHOLD, thresholdOf } from "../organizations/notification-settings";

export { DEFAULT_THRESHOLD_PERCENT, thresholdOf };

type Crossing = SettleResult["crossed"][number];

/** Crossings of `threshold` (from below to at-or-above) in one settlement. */
export const crossingsOf = (crossed: readonly Crossing[], threshold: number): Crossing[] =>
  crossed.filter((c) => c.percentBefore < threshold && c.percent >= threshold);

export async function processBudgetAlerts(env: Env, auth: KeyContext, crossed: readonly Crossing[], now = Date.now()): Promise<void> {
  // An end-user session's cap is the app's business (src/platform/): no alert to the organization.
  if (auth.key.kind === "session") return;
  // Nothing below the lowest possible threshold can cross one: skip the D1 read.
  if (!crossed.some((c) => c.percent >= MIN_THRESHOLD && c.percentBefore < 100)) return;
  // A limit reached is an event whatever the alert settings: spend only grows within a window, so
  // a settlement crosses 100% once.
  for (const c of crossed.filter((x) => x.percentBefore < 100 && x.percent >= 100)) {
    await emitWebhookEvent(env, auth.organization.id, "key.limit_reached", { apiKeyId: auth.key.id, description: auth.key.description, limit: c.limit, windowStart: c.windowStart === 0 ? null : new Date(c.windowStart).toISOString() });
  }
  const db = getDb(env.DB);
  const org = await db
    .select({ notifications: organizations.notifications, keyThreshold: apiKeys.alertThresholdPercent })
    .from(organizations)
    .leftJoin(apiKeys, eq(apiKeys.id, auth.key.id))
    .where(eq(organizations.id, auth.organization.id))
    .get();
  if (!org) return;
  const settings = effectiveNotifications(org.notifications);
  if (!settings.apiKeyBudgets) return;
  // The key's own threshold (dashboard, migration 0004) wins over the organization's.
  const threshold = org.keyThreshold !== null ? thresholdOf(org.keyThreshold) : settings.thresholdPercent;

  for (const c of crossingsOf(crossed, threshold)) {
    const limitText = c.limit === "all_time" ? `all-time limit of $${auth.key.usageLimit ?? "?"}` : `recurring limit of $${auth.key.periodUsageLimit ?? "?"} per ${auth.key.periodUsageDurationValue ?? "?"} ${auth.key.periodUsageDurationUnit ?? "period"}(s)`;
    const label = auth.key.description ? `"${auth.key.description.replace(/[\r\n]+/g, " ")}"` : auth.key.id;
    const message = `API key ${label} has used ${Math.floor(c.percent)}% of its ${limitText} (alert threshold ${threshold}%).`;
    const [row] = await db
      .insert(notifications)
      .values({
        id: newId("ntf"),
        organizationId: auth.organization.id,
        apiKeyId: auth.key.id,
        kind: "api_key_budget",
        limitType: c.limit,
        windowStart: c.windowStart,
        message,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: notifications.id });
    if (!row) continue; // already alerted for this key, limit and window
    await emitWebhookEvent(env, auth.organization.id, "key.budget_threshold", { apiKeyId: auth.key.id, description: auth.key.description, limit: c.limit, percent: Math.floor(c.percent), thresholdPercent: threshold, message });
    try {
      if (await sendAlertEmail(env, auth.organization.id, auth.organization.name, message)) {
        await db.update(notifications).set({ emailedAt: Date.now() }).where(eq(notifications.id, row.id));
      }
    } catch (err) {
      console.error("budget alert e-mail failed", err instanceof Error ? err.message : String(err));
    }
  }
}

/** Sends the alert to the organization's accepted owners and admins; true when at least one was sent. */
async function sendAlertEmail(env: Env, organizationId: string, organizationName: string, text: string): Promise<boolean> {
  if (!env.EMAIL_FROM || !env.EMAIL) return false;
  let sent = 0;
  for (const email of await budgetAlertRecipients(env, organizationId)) {
    if (await sendMail(env, { to: email, subject: "API key budget alert", text: `${text}\n\nOrganization: ${organizationName}\n` })) sent++;
  }
  return sent > 0;
}

/** Owners and admins who accepted their membership (contract section 5): nobody else gets e-mail. */
export async function budgetAlertRecipients(env: Env, organizationId: string): Promise<string[]> {
  const rows = await getDb(env.DB)
    .select({ email: users.email })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), inArray(members.role, ["owner", "admin"]), isNotNull(members.acceptedAt)));
  return rows.map((r) => r.email);
}

export { buildMime } from "../lib/mail";
