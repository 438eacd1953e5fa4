/** Gateway keys, their settled spend and retired fingerprints, master keys and platform secret keys. (Part of the D1 schema: ../schema.ts.) */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { KEY_KINDS, KEY_STATUSES, PERIOD_UNITS, createdAt } from "./columns";
import { organizations, members, projects } from "./organizations";

/** Gateway keys (`swb_...`). Only the HMAC fingerprint of the secret is stored. */
export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  projectId: text("project_id").notNull().references(() => projects.id, { onDelete: "cascade" }),
  /** Member who created the key; member and team rules of this member apply to it. */
  createdBy: text("created_by").notNull().references(() => members.id),
  description: text("description").notNull().default(""),
  kind: text("kind", { enum: KEY_KINDS }).notNull().default("standard"),
  status: text("status", { enum: KEY_STATUSES }).notNull().default("active"),
  fingerprint: text("fingerprint").notNull(),
  /** e.g. `swb_AbCd...wxYz`: enough to recognise a key, useless to an attacker. */
  prefixHint: text("prefix_hint").notNull(),
  expiresAt: integer("expires_at", { mode: "number" }),
  /** All-time spend cap, decimal USD string. */
  usageLimit: text("usage_limit"),
  periodUsageLimit: text("period_usage_limit"),
  periodUsageDurationValue: integer("period_usage_duration_value", { mode: "number" }),
  periodUsageDurationUnit: text("period_usage_duration_unit", { enum: PERIOD_UNITS }),
  /** Disabled by an owner, admin or the master API: a developer cannot enable it. */
  disabledByManager: integer("disabled_by_manager", { mode: "boolean" }).notNull().default(false),
  /** Limits set by an owner, admin or the master API: a developer cannot change them. */
  limitsSetByManager: integer("limits_set_by_manager", { mode: "boolean" }).notNull().default(false),
  /** Expiry set by an owner or admin: a developer cannot change or remove it. */
  expirySetByManager: integer("expiry_set_by_manager", { mode: "boolean" }).notNull().default(false),
  /** Bumped on every change that affects authorization (status, secret, limits, rules, org policy). */
  version: integer("version", { mode: "number" }).notNull().default(1),
  lastRolledAt: integer("last_rolled_at", { mode: "number" }),
  /** Budget alert threshold of this key (percent, 50..100); null: the organization's threshold. */
  alertThresholdPercent: integer("alert_threshold_percent", { mode: "number" }),
  /** Rate limits of this key on top of the organization's (docs/admission.md); null: none of its own. */
  requestsPerMinute: integer("requests_per_minute", { mode: "number" }),
  tokensPerMinute: integer("tokens_per_minute", { mode: "number" }),
  deletedAt: integer("deleted_at", { mode: "number" }),
  /** Sessions (`kind: "session"`): the app's end user and the platform secret key that minted it. */
  endUserId: text("end_user_id"),
  platformKeyId: text("platform_key_id"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull().default(sql`(unixepoch() * 1000)`),
}, (t) => [
  uniqueIndex("api_keys_fingerprint_uq").on(t.fingerprint),
  index("api_keys_end_user_idx").on(t.projectId, t.endUserId),
  index("api_keys_platform_key_idx").on(t.platformKeyId),
  index("api_keys_project_idx").on(t.projectId),
  index("api_keys_org_idx").on(t.organizationId),
  index("api_keys_created_by_idx").on(t.createdBy),
  index("api_keys_expiry_idx").on(t.status, t.expiresAt),
]);

/**
 * Settled spend of each key as its KeyState object last reported it (with its outbox flush, see
 * src/durable-objects/key-state.ts): what key lists show without asking every key's object.
 * Pico-dollar amounts as decimal strings (read as they are, never added up in SQL); `seq` orders
 * the reports, an older one never overwrites a newer. No foreign key: a report must never fail
 * the outbox's D1 batch it rides in.
 */
export const keySpend = sqliteTable("key_spend", {
  apiKeyId: text("api_key_id").primaryKey(),
  usagePico: text("usage_pico").notNull().default("0"),
  /** Spend in the recurring window that started at `periodStartedAt` (null: none running). */
  periodUsagePico: text("period_usage_pico").notNull().default("0"),
  periodStartedAt: integer("period_started_at", { mode: "number" }),
  seq: integer("seq", { mode: "number" }).notNull().default(0),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});

/** Fingerprints a key had before it was rolled, so the old secret gets a precise 401. */
export const retiredKeyFingerprints = sqliteTable("retired_key_fingerprints", {
  fingerprint: text("fingerprint").primaryKey(),
  apiKeyId: text("api_key_id").notNull().references(() => apiKeys.id, { onDelete: "cascade" }),
  retiredAt: integer("retired_at", { mode: "number" }).notNull(),
});

export const MASTER_KEY_ORIGINS = ["bootstrap", "admin", "master_api", "dashboard"] as const;
export type MasterKeyOrigin = (typeof MASTER_KEY_ORIGINS)[number];

/** Master keys (`swbm_...`), one organization each; several may be active (src/organizations/master-keys.ts). */
export const masterKeys = sqliteTable("master_keys", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  fingerprint: text("fingerprint").notNull(),
  prefixHint: text("prefix_hint").notNull(),
  description: text("description").notNull().default(""),
  /** How the key was made; `createdBy` is the member (dashboard) or master key (master API) that made it. */
  createdVia: text("created_via", { enum: MASTER_KEY_ORIGINS }).notNull().default("bootstrap"),
  createdBy: text("created_by"),
  /** Updated at most once a minute (src/auth/master-auth.ts). */
  lastUsedAt: integer("last_used_at", { mode: "number" }),
  lastRolledAt: integer("last_rolled_at", { mode: "number" }),
  revokedAt: integer("revoked_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("master_keys_fingerprint_uq").on(t.fingerprint), index("master_keys_org_idx").on(t.organizationId)]);

/**
 * Platform secret keys (`sk_...`): held by an app's backend to mint end-user
 * sessions for one project. Only the HMAC fingerprint is stored.
 */
export const platformKeys = sqliteTable("platform_keys", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  projectId: text("project_id").notNull().references(() => projects.id, { onDelete: "cascade" }),
  /** The member the sessions act for (their member and team rules apply to every session). */
  createdBy: text("created_by").notNull().references(() => members.id),
  description: text("description").notNull().default(""),
  fingerprint: text("fingerprint").notNull(),
  prefixHint: text("prefix_hint").notNull(),
  lastUsedAt: integer("last_used_at", { mode: "number" }),
  lastRolledAt: integer("last_rolled_at", { mode: "number" }),
  revokedAt: integer("revoked_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("platform_keys_fingerprint_uq").on(t.fingerprint), index("platform_keys_org_idx").on(t.organizationId)]);
