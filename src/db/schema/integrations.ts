/** Notifications, the audit log, OTLP exports and webhooks. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns";
import { organizations } from "./organizations";

/** In-app notifications (budget alerts). Unique per key, limit and window so alerts never repeat. */
export const notifications = sqliteTable("notifications", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  apiKeyId: text("api_key_id").notNull(),
  kind: text("kind").notNull(),
  /** `all_time` or `period`. */
  limitType: text("limit_type").notNull(),
  /** Start of the spend window (0 for the all-time limit). */
  windowStart: integer("window_start", { mode: "number" }).notNull(),
  message: text("message").notNull(),
  emailedAt: integer("emailed_at", { mode: "number" }),
  readAt: integer("read_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("notifications_once_uq").on(t.apiKeyId, t.limitType, t.windowStart),
  index("notifications_org_idx").on(t.organizationId, t.createdAt),
]);

/**
 * Audit log: one row per state-changing call of the master API, the dashboard's session API and
 * the operator API (src/audit/). Kept a year (the daily cron), read newest first per organization.
 */
export const auditLog = sqliteTable("audit_log", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull(),
  at: integer("at", { mode: "number" }).notNull(),
  /** `member`, `master_key` or `operator`. */
  actorType: text("actor_type").notNull(),
  actorId: text("actor_id").notNull(),
  actorEmail: text("actor_email"),
  action: text("action").notNull(),
  targetType: text("target_type").notNull(),
  targetId: text("target_id"),
  /** JSON of the target as its GET route showed it before and after the call (secrets never shown there, and redacted again). */
  before: text("before"),
  after: text("after"),
  ip: text("ip"),
}, (t) => [index("audit_log_org_at_idx").on(t.organizationId, t.at, t.id)]);

/**
 * OpenTelemetry export of an organization (src/integrations/otlp.ts): its collector, the headers
 * sent to it (sealed with KEY_HASH_SECRET, never shown again: only their names are) and the last
 * delivery's outcome.
 */
export const otlpExports = sqliteTable("otlp_exports", {
  organizationId: text("organization_id").primaryKey().references(() => organizations.id, { onDelete: "cascade" }),
  endpoint: text("endpoint").notNull(),
  headersSealed: text("headers_sealed"),
  headerNames: text("header_names", { mode: "json" }).$type<string[]>().notNull().default([]),
  lastAttemptAt: integer("last_attempt_at", { mode: "number" }),
  lastSuccessAt: integer("last_success_at", { mode: "number" }),
  lastStatus: integer("last_status", { mode: "number" }),
  lastError: text("last_error"),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});

export const WEBHOOK_EVENTS = ["key.budget_threshold", "key.limit_reached", "key.expiring", "credits.low", "provider.down", "provider.recovered"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Webhook endpoints (src/integrations/webhooks.ts). The signing secret is sealed, shown once. */
export const webhooks = sqliteTable("webhooks", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  url: text("url").notNull(),
  events: text("events", { mode: "json" }).$type<string[]>().notNull(),
  secretSealed: text("secret_sealed").notNull(),
  createdAt: createdAt(),
}, (t) => [index("webhooks_org_idx").on(t.organizationId)]);

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** One event sent to one webhook (its `webhook-id`), with the outcome of its latest attempt. */
export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  id: text("id").primaryKey(),
  webhookId: text("webhook_id").notNull().references(() => webhooks.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").notNull(),
  eventType: text("event_type").notNull(),
  /** The exact body sent (signed as is on every attempt). */
  payload: text("payload").notNull(),
  status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default("pending"),
  attempts: integer("attempts", { mode: "number" }).notNull().default(0),
  responseCode: integer("response_code", { mode: "number" }),
  lastError: text("last_error"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
}, (t) => [index("webhook_deliveries_hook_idx").on(t.webhookId, t.createdAt)]);
