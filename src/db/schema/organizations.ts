/** Organizations, their users and members, invitations, teams and projects. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ProviderPreferences } from "../../routing/preferences";
import { PLANS, ROLES, PROJECT_MODES, PERIOD_UNITS, createdAt, type CompliancePolicy, type NotificationSettings } from "./columns";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan", { enum: PLANS }).notNull().default("free"),
  /** Prepaid credit balance in pico-dollars; debited for credit-paid usage. Read it with CAST(... AS TEXT). */
  creditsPico: integer("credits_pico", { mode: "number" }).notNull().default(0),
  compliance: text("compliance", { mode: "json" }).$type<CompliancePolicy>().notNull().default({}),
  notifications: text("notifications", { mode: "json" }).$type<NotificationSettings>().notNull().default({}),
  /** Rate limits of the whole organization (docs/admission.md); null: the plan's default. */
  requestsPerMinute: integer("requests_per_minute", { mode: "number" }),
  tokensPerMinute: integer("tokens_per_minute", { mode: "number" }),
  /** The most the organization may set for itself, granted by the operator; null: its plan's (src/rate-limits/plans.ts). */
  maxRequestsPerMinute: integer("max_requests_per_minute", { mode: "number" }),
  maxTokensPerMinute: integer("max_tokens_per_minute", { mode: "number" }),
  createdAt: createdAt(),
});

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull(),
  name: text("name").notNull(),
  /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`; null for users who cannot sign in. */
  passwordHash: text("password_hash"),
  /**
   * Set when an organization chose this password while creating the account (add-member with a
   * password): it then opens that organization only. Null once the account owner sets their own
   * (membership acceptance). Contract section 5.
   */
  passwordOrgId: text("password_org_id"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("users_email_uq").on(t.email)]);

export const members = sqliteTable("members", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  role: text("role", { enum: ROLES }).notNull(),
  /** The name this organization gave the member (never the account's own name, contract section 5). */
  name: text("name"),
  /** When the person accepted the membership (e-mailed token); null while pending. */
  acceptedAt: integer("accepted_at", { mode: "number" }),
  /** Spending limits of the member over every key they own (src/members/budget.ts); null: none. */
  usageLimit: text("usage_limit"),
  periodUsageLimit: text("period_usage_limit"),
  periodUsageDurationValue: integer("period_usage_duration_value", { mode: "number" }),
  periodUsageDurationUnit: text("period_usage_duration_unit", { enum: PERIOD_UNITS }),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("members_org_user_uq").on(t.organizationId, t.userId), index("members_user_idx").on(t.userId)]);

/** One-time membership acceptance tokens; only the keyed fingerprint of the token is stored. */
export const membershipInvitations = sqliteTable("membership_invitations", {
  id: text("id").primaryKey(),
  memberId: text("member_id").notNull().references(() => members.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull(),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("membership_invitations_token_uq").on(t.tokenHash), index("membership_invitations_member_idx").on(t.memberId)]);

export const teams = sqliteTable("teams", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  /** Spending limits applied to each member of the team (src/members/budget.ts); null: none. */
  usageLimit: text("usage_limit"),
  periodUsageLimit: text("period_usage_limit"),
  periodUsageDurationValue: integer("period_usage_duration_value", { mode: "number" }),
  periodUsageDurationUnit: text("period_usage_duration_unit", { enum: PERIOD_UNITS }),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("teams_org_name_uq").on(t.organizationId, t.name)]);

export const teamMembers = sqliteTable("team_members", {
  teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
  memberId: text("member_id").notNull().references(() => members.id, { onDelete: "cascade" }),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.teamId, t.memberId] }), index("team_members_member_idx").on(t.memberId)]);

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  mode: text("mode", { enum: PROJECT_MODES }).notNull().default("hybrid"),
  /**
   * Response cache, opt-in: every insert sets it (`false` unless asked: src/actions/projects.ts,
   * src/organizations/bootstrap.ts). The SQL default (true) predates the opt-in and stays: SQLite
   * cannot change a column's default without rebuilding the table, whose keys cascade from it.
   */
  cachingEnabled: integer("caching_enabled", { mode: "boolean" }).notNull().default(true),
  cacheDurationSeconds: integer("cache_duration_seconds", { mode: "number" }).notNull().default(3600),
  /** The project's first-byte and whole-answer timeouts of an upstream attempt (ms); null: the gateway's. */
  firstByteTimeoutMs: integer("first_byte_timeout_ms", { mode: "number" }),
  timeoutMs: integer("timeout_ms", { mode: "number" }),
  /** Hedged requests: a second candidate starts when the first is slow to its first token. */
  hedging: integer("hedging", { mode: "boolean" }).notNull().default(false),
  /** Default `provider` routing preferences of requests that send none (src/routing/preferences.ts); null: none. */
  providerPreferences: text("provider_preferences", { mode: "json" }).$type<ProviderPreferences>(),
  /** Hybrid: after the organization's own keys of a provider failed, try the operator's key (credits). */
  operatorKeyFallback: integer("operator_key_fallback", { mode: "boolean" }).notNull().default(false),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  /** Keep each request's body and answer in R2 beside its record (src/usage/bodies.ts). */
  logBodies: integer("log_bodies", { mode: "boolean" }).notNull().default(false),
  deletedAt: integer("deleted_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [index("projects_org_idx").on(t.organizationId)]);
