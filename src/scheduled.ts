import type { Env } from "./env";
import { aggregateUsageJob } from "./usage/upgrade";
import { retentionJob } from "./usage/retention";
import { expireKeysJob } from "./keys/expire";
import { expiringKeysJob } from "./keys/expiring";
import { oauthCleanupJob } from "./oauth/cleanup";
import { auditRetentionJob } from "./audit/store";
import { storageWatchJob } from "./usage/storage-watch";

/**
 * Cron entry point (wrangler.jsonc `triggers.crons`). Each job is independent and idempotent;
 * one failing does not stop the others.
 *  - every minute: expire keys past their TTL, aggregate finished hours of request logs
 *  - daily: delete request logs past the retention period
 */
export type ScheduledJob = (env: Env, now: number, cron: string) => Promise<void>;

const jobs: ScheduledJob[] = [
  // jobs:begin (helpers register their jobs here)
  expireKeysJob,
  aggregateUsageJob,
  retentionJob,
  oauthCleanupJob,
  auditRetentionJob,
  storageWatchJob,
  expiringKeysJob,
  // jobs:end
];

export async function runScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const now = controller.scheduledTime || Date.now();
  const results = await Promise.allSettled(jobs.map((job) => job(env, now, controller.cron)));
  for (const r of results) if (r.status === "rejected") console.error("scheduled job failed", String(r.reason));
}
