/**
 * Low credit balance alert: OrgCredits (src/durable-objects/org-credits.ts) checks the balance it
 * reads, and each settlement, against the organization's `notifications.lowCreditsThreshold`:
 * DEFAULT_LOW_CREDITS_THRESHOLD when it set none, off when it set zero.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { getDb } from "../db/client";
import { members, notifications, organizations, users } from "../db/schema";
import { newId } from "../lib/ids";
import { sendMail } from "../lib/mail";
import { emitWebhookEvent } from "../integrations/webhooks";
import { formatUsd, isDecimalString, parseUsd, type Pico } from "./money";

/**
 * The threshold of an organization that never set one (decimal USD): a webhook on `credits.low` or
 * an owner's inbox hears of a draining balance without anyone having to configure it first, early
 * enough to top up before credit-paid requests are refused (402 at zero).
 */
export const DEFAULT_LOW_CREDITS_THRESHOLD = "5";

/** What `lowCreditsThreshold: null` stores: the alert off (a zero threshold is never crossed). */
export const LOW_CREDITS_OFF = "0";

/** The threshold in effect (decimal USD): the stored one, the default when unset, null when off. */
export function effectiveLowCreditsThreshold(stored: string | undefined): string | null {
  if (stored === undefined) return DEFAULT_LOW_CREDITS_THRESHOLD;
  return isDecimalString(stored) && parseUsd(stored) > 0n ? stored : null;
}

/** The threshold in effect in pico-dollars, or null when the alert is off. */
export function lowCreditsThresholdPico(stored: string | undefined): Pico | null {
  const threshold = effectiveLowCreditsThreshold(stored);
  return threshold === null ? null : parseUsd(threshold);
}

/**
 * Called by OrgCredits when the balance it sees is below the organization's threshold. One alert
 * per "window": the time of the newest top-up in the ledger (0 before any), so after each top-up the
 * next fall below the threshold alerts again, and never twice in between (unique notification).
 * The e-mail goes to the organization's owners who accepted their membership.
 */
export async function alertLowCredits(env: Env, organizationId: string, balance: Pico, threshold: Pico, windowStart: number): Promise<void> {
  const db = getDb(env.DB);
  const message = `The organization's credit balance is $${formatUsd(balance)}, below the alert threshold of $${formatUsd(threshold)}. Add credits to keep credit-paid requests running.`;
  const [row] = await db
    .insert(notifications)
    .values({ id: newId("ntf"), organizationId, apiKeyId: organizationId, kind: "credits_low", limitType: "credits", windowStart, message, createdAt: Date.now() })
    .onConflictDoNothing()
    .returning({ id: notifications.id });
  if (!row) return;
  await emitWebhookEvent(env, organizationId, "credits.low", { balance: formatUsd(balance), threshold: formatUsd(threshold), message });
  const org = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId)).get();
  const owners = await db
    .select({ email: users.email })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), eq(members.role, "owner"), sql`${members.acceptedAt} IS NOT NULL`));
  let sent = 0;
  for (const o of owners) {
    if (await sendMail(env, { to: o.email, subject: "Credit balance low", text: `${message}\n\nOrganization: ${org?.name ?? organizationId}\n` })) sent++;
  }
  if (sent > 0) await db.update(notifications).set({ emailedAt: Date.now() }).where(eq(notifications.id, row.id));
}
