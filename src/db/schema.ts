/**
 * D1 schema (drizzle). Migrations are generated from this file into migrations/ with
 * `npm run db:generate`. Conventions:
 * - ids are prefixed random strings (src/lib/ids.ts), timestamps are epoch milliseconds;
 * - money is an INTEGER count of pico-dollars (1e-12 USD, src/billing/money.ts) where SQL must add
 *   it up, and a decimal string where it is only configuration (limits);
 * - JSON columns hold small typed objects (mode: "json").
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ProviderPreferences } from "../routing/preferences";

export const PLANS = ["free", "pro", "enterprise"] as const;
export const ROLES = ["owner", "admin", "developer"] as const;
export const PROJECT_MODES = ["credits", "api-keys", "hybrid"] as const;
/** `session`: a short-lived end-user session minted with a platform secret key (src/platform/). */
export const KEY_KINDS = ["standard", "coding-plan", "playground", "session"] as const;
export const KEY_STATUSES = ["active", "inactive", "deleted"] as const;
export const PERIOD_UNITS = ["hour", "day", "week", "month"] as const;
export const RULE_LEVELS = ["key", "member", "team"] as const;
export const RULE_TYPES = [
  "allow_models",
  "deny_models",
  "allow_providers",
  "deny_providers",
  "allow_pricing",
  "deny_pricing",
  "allow_ip_cidrs",
  "deny_ip_cidrs",
  "allow_regions",
  "deny_regions",
] as const;

export type Plan = (typeof PLANS)[number];
export type Role = (typeof ROLES)[number];
export type ProjectMode = (typeof PROJECT_MODES)[number];
export type KeyKind = (typeof KEY_KINDS)[number];
export type KeyStatus = (typeof KEY_STATUSES)[number];
export type PeriodUnit = (typeof PERIOD_UNITS)[number];
export type RuleLevel = (typeof RULE_LEVELS)[number];
export type RuleType = (typeof RULE_TYPES)[number];

export interface CompliancePolicy {
  /** Only provider mappings whose provider does not train on API data. */
  noTraining?: boolean;
  deniedProviders?: string[];
  /**
   * No upstream call starts before the key's current rules are confirmed by its object (no early
   * call under rules this isolate may hold from before a change; docs/admission.md).
   */
  strictPolicy?: boolean;
  /** Stored request and response bodies have e-mail addresses, phone and card numbers masked. */
  redactBodies?: boolean;
  /** Residency: only endpoints in these regions or continents (`eu-central-1`, `EU`); global endpoints excluded. */
  regions?: string[];
}

export interface NotificationSettings {
  apiKeyBudgets?: boolean;
  /** 50..100, default 80. */
  thresholdPercent?: number;
  /** Owners get an e-mail when the credit balance falls below this (decimal USD); unset: no alert. */
  lowCreditsThreshold?: string;
}

export interface RuleValue {
  /** As the caller sent them (shown back); matching uses `canonicalModels`. */
  models?: string[];
  /** Internal: `models` resolved at creation (src/iam/model-refs.ts). Never returned by the API. */
  canonicalModels?: string[];
  providers?: string[];
  pricingType?: "free" | "paid";
  ipCidrs?: string[];
  /** Regions (`eu-central-1`) or continent codes (`EU`) of `allow_regions` / `deny_regions`. */
  regions?: string[];
}

const createdAt = () => integer("created_at", { mode: "number" }).notNull().default(sql`(unixepoch() * 1000)`);

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

export const CREDIT_SOURCES = ["bootstrap", "admin"] as const;
export type CreditSource = (typeof CREDIT_SOURCES)[number];

/**
 * Credit ledger: every credit added to or taken off an organization other
 * than usage (usage is in `request_logs`). `amount_pico` is signed (a correction is negative);
 * `balance_after_pico` is the D1 balance right after the entry. An idempotency key is used once
 * per organization: the same key again is the same entry (src/billing/credit-ledger.ts).
 */
export const creditLedger = sqliteTable("credit_ledger", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  amountPico: integer("amount_pico", { mode: "number" }).notNull(),
  balanceAfterPico: integer("balance_after_pico", { mode: "number" }),
  reason: text("reason").notNull(),
  source: text("source", { enum: CREDIT_SOURCES }).notNull(),
  idempotencyKey: text("idempotency_key"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("credit_ledger_idempotency_uq").on(t.organizationId, t.idempotencyKey),
  index("credit_ledger_org_created_idx").on(t.organizationId, t.createdAt),
]);

export const iamRules = sqliteTable("iam_rules", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  level: text("level", { enum: RULE_LEVELS }).notNull(),
  /** api key id, member id or team id depending on `level`. */
  targetId: text("target_id").notNull(),
  ruleType: text("rule_type", { enum: RULE_TYPES }).notNull(),
  ruleValue: text("rule_value", { mode: "json" }).$type<RuleValue>().notNull(),
  status: text("status", { enum: ["active", "inactive"] }).notNull().default("active"),
  createdAt: createdAt(),
}, (t) => [index("iam_rules_target_idx").on(t.level, t.targetId), index("iam_rules_org_idx").on(t.organizationId)]);

/** The organization's own upstream credentials (BYOK). Token encrypted with AES-GCM. */
export const providerKeys = sqliteTable("provider_keys", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  provider: text("provider").notNull(),
  label: text("label"),
  baseUrl: text("base_url"),
  tokenCiphertext: text("token_ciphertext").notNull(),
  tokenHint: text("token_hint").notNull(),
  /** Share of the provider's requests this key takes, relative to the others' weights. */
  weight: integer("weight", { mode: "number" }).notNull().default(1),
  /** The region whose endpoint this key serves (src/routing/endpoints.ts); null: every endpoint. */
  region: text("region"),
  createdAt: createdAt(),
}, (t) => [index("provider_keys_org_provider_idx").on(t.organizationId, t.provider)]);

/** OpenAI-compatible upstreams of one organization, addressed as `<name>/<model>`. */
export const customProviders = sqliteTable("custom_providers", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  baseUrl: text("base_url").notNull(),
  tokenCiphertext: text("token_ciphertext").notNull(),
  tokenHint: text("token_hint").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("custom_providers_org_name_uq").on(t.organizationId, t.name)]);

export interface CustomModelPricing {
  prompt?: string;
  completion?: string;
  request?: string;
  input_cache_read?: string;
}

export interface CustomModelCapabilities {
  streaming?: boolean;
  tools?: boolean;
  vision?: boolean;
  reasoning?: boolean;
  json_output?: boolean;
}

export const customModels = sqliteTable("custom_models", {
  id: text("id").primaryKey(),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  providerName: text("provider_name").notNull(),
  modelId: text("model_id").notNull(),
  name: text("name"),
  pricing: text("pricing", { mode: "json" }).$type<CustomModelPricing>().notNull().default({}),
  contextLength: integer("context_length", { mode: "number" }),
  capabilities: text("capabilities", { mode: "json" }).$type<CustomModelCapabilities>().notNull().default({}),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("custom_models_org_provider_model_uq").on(t.organizationId, t.providerName, t.modelId)]);

/** One attempt at an upstream, as in `metadata.routing[]` (spec 2.4). */
export interface RoutingAttempt {
  provider: string;
  model: string;
  region?: string;
  status_code: number;
  error_type?: string;
  succeeded: boolean;
  credentialSource: "credits" | "byok";
  providerKeyId?: string;
  providerKeyLabel?: string;
  apiKeyHash?: string;
  logId?: string;
  latency_ms?: number;
  /** When the attempt started, ms after the request's start (the request page's timeline). */
  start_ms?: number;
  /** A hedged attempt cancelled because the other answered first: what it cost (USD; 0 when cancelled before its answer). */
  hedge_cost?: number;
}

export const REQUEST_KINDS = ["chat", "image", "video", "moderation", "embedding"] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** One row per gateway request, written off the hot path. Costs in pico-dollars. */
export const requestLogs = sqliteTable("request_logs", {
  id: text("id").primaryKey(),
  requestId: text("request_id").notNull(),
  organizationId: text("organization_id").notNull(),
  projectId: text("project_id").notNull(),
  apiKeyId: text("api_key_id").notNull(),
  kind: text("kind", { enum: REQUEST_KINDS }).notNull().default("chat"),
  sourceApp: text("source_app").notNull().default("unknown"),
  requestedModel: text("requested_model").notNull(),
  requestedProvider: text("requested_provider"),
  usedModel: text("used_model"),
  usedProvider: text("used_provider"),
  usedRegion: text("used_region"),
  statusCode: integer("status_code", { mode: "number" }).notNull(),
  errorType: text("error_type"),
  errorMessage: text("error_message"),
  finishReason: text("finish_reason"),
  streamed: integer("streamed", { mode: "boolean" }).notNull().default(false),
  cached: integer("cached", { mode: "boolean" }).notNull().default(false),
  /** Client went away before the response was complete (stream billed for what was generated). */
  clientAborted: integer("client_aborted", { mode: "boolean" }).notNull().default(false),
  promptTokens: integer("prompt_tokens", { mode: "number" }).notNull().default(0),
  completionTokens: integer("completion_tokens", { mode: "number" }).notNull().default(0),
  reasoningTokens: integer("reasoning_tokens", { mode: "number" }).notNull().default(0),
  cachedTokens: integer("cached_tokens", { mode: "number" }).notNull().default(0),
  cacheWriteTokens: integer("cache_write_tokens", { mode: "number" }).notNull().default(0),
  totalTokens: integer("total_tokens", { mode: "number" }).notNull().default(0),
  costPico: integer("cost_pico", { mode: "number" }).notNull().default(0),
  creditsCostPico: integer("credits_cost_pico", { mode: "number" }).notNull().default(0),
  byokCostPico: integer("byok_cost_pico", { mode: "number" }).notNull().default(0),
  dataStorageCostPico: integer("data_storage_cost_pico", { mode: "number" }).notNull().default(0),
  latencyMs: integer("latency_ms", { mode: "number" }),
  ttftMs: integer("ttft_ms", { mode: "number" }),
  routing: text("routing", { mode: "json" }).$type<RoutingAttempt[]>().notNull().default([]),
  /** Kind-specific extras, e.g. the stored object key of a generated video. */
  extra: text("extra", { mode: "json" }).$type<Record<string, unknown>>(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  /** The app's end user of a session key (src/platform/); null for other keys. */
  endUserId: text("end_user_id"),
}, (t) => [
  index("request_logs_created_idx").on(t.createdAt),
  index("request_logs_project_created_idx").on(t.projectId, t.createdAt),
  index("request_logs_key_created_idx").on(t.apiKeyId, t.createdAt),
  index("request_logs_org_created_idx").on(t.organizationId, t.createdAt),
  index("request_logs_org_request_idx").on(t.organizationId, t.requestId),
]);

/**
 * Per organization, the time from which the request window (`request_logs`) holds every record:
 * raised by the window's row bound (REQUEST_LOG_WINDOW_ROWS) and by a window insert that was
 * dropped. Readers of the request log go to R2 for anything before it (src/usage/window.ts).
 * WITHOUT ROWID (migration 0018, hand-written).
 */
export const requestWindowFloors = sqliteTable("request_window_floors", {
  organizationId: text("organization_id").primaryKey(),
  keptFrom: integer("kept_from", { mode: "number" }).notNull().default(0),
  /** When the trim by rows last found the organization within the bound (0: to be checked). */
  checkedAt: integer("checked_at", { mode: "number" }).notNull().default(0),
});

/**
 * Log ids the queue consumer has applied (aggregates, debit, window), written in the same D1 batch:
 * a redelivered record is skipped. Keyed by the hour of the record's `created_at` (known to every
 * copy of the record, so a redelivery finds it) and kept while that hour is within LOG_DEDUP_HOURS
 * (docs/scale.md). The table is WITHOUT ROWID (migration 0012, hand-written: drizzle cannot say
 * so): one written row per record, no index of its own; expiry deletes a primary-key prefix.
 */
export const logApplied = sqliteTable("log_applied", {
  hourStart: integer("hour_start", { mode: "number" }).notNull(),
  id: text("id").notNull(),
}, (t) => [primaryKey({ columns: [t.hourStart, t.id] })]);

/** A key's last use (newest request start), kept by the log consumer; never ages out. */
export const keyLastUse = sqliteTable("key_last_use", {
  apiKeyId: text("api_key_id").notNull(),
  organizationId: text("organization_id").notNull(),
  lastUsedAt: integer("last_used_at", { mode: "number" }).notNull(),
}, (t) => [primaryKey({ columns: [t.apiKeyId, t.organizationId] })]);

/** A histogram bucket's request count. */
const hcount = (name: string) => integer(name, { mode: "number" }).notNull().default(0);

/** Hourly aggregates of request records (the log consumer adds each batch); analytics read only these. */
export const usageHourly = sqliteTable("usage_hourly", {
  hourStart: integer("hour_start", { mode: "number" }).notNull(),
  organizationId: text("organization_id").notNull(),
  projectId: text("project_id").notNull(),
  apiKeyId: text("api_key_id").notNull(),
  provider: text("provider").notNull(),
  model: text("model").notNull(),
  sourceApp: text("source_app").notNull(),
  requests: integer("requests", { mode: "number" }).notNull().default(0),
  errors: integer("errors", { mode: "number" }).notNull().default(0),
  cacheHits: integer("cache_hits", { mode: "number" }).notNull().default(0),
  promptTokens: integer("prompt_tokens", { mode: "number" }).notNull().default(0),
  completionTokens: integer("completion_tokens", { mode: "number" }).notNull().default(0),
  reasoningTokens: integer("reasoning_tokens", { mode: "number" }).notNull().default(0),
  cachedTokens: integer("cached_tokens", { mode: "number" }).notNull().default(0),
  totalTokens: integer("total_tokens", { mode: "number" }).notNull().default(0),
  costPico: integer("cost_pico", { mode: "number" }).notNull().default(0),
  creditsCostPico: integer("credits_cost_pico", { mode: "number" }).notNull().default(0),
  byokCostPico: integer("byok_cost_pico", { mode: "number" }).notNull().default(0),
  dataStorageCostPico: integer("data_storage_cost_pico", { mode: "number" }).notNull().default(0),
  /** Requests whose hedge was cancelled by the other attempt's answer, and what those attempts cost (src/usage/hedging.ts). */
  hedgedRequests: integer("hedged_requests", { mode: "number" }).notNull().default(0),
  hedgeCostPico: integer("hedge_cost_pico", { mode: "number" }).notNull().default(0),
  /** Latency histograms: requests per bucket of total latency and of time to first token (src/usage/latency.ts). */
  latB0: hcount("lat_b0"), latB1: hcount("lat_b1"), latB2: hcount("lat_b2"), latB3: hcount("lat_b3"), latB4: hcount("lat_b4"),
  latB5: hcount("lat_b5"), latB6: hcount("lat_b6"), latB7: hcount("lat_b7"), latB8: hcount("lat_b8"), latB9: hcount("lat_b9"),
  latB10: hcount("lat_b10"), latB11: hcount("lat_b11"), latB12: hcount("lat_b12"),
  ttftB0: hcount("ttft_b0"), ttftB1: hcount("ttft_b1"), ttftB2: hcount("ttft_b2"), ttftB3: hcount("ttft_b3"), ttftB4: hcount("ttft_b4"),
  ttftB5: hcount("ttft_b5"), ttftB6: hcount("ttft_b6"), ttftB7: hcount("ttft_b7"), ttftB8: hcount("ttft_b8"), ttftB9: hcount("ttft_b9"),
  ttftB10: hcount("ttft_b10"), ttftB11: hcount("ttft_b11"), ttftB12: hcount("ttft_b12"),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
}, (t) => [
  primaryKey({ columns: [t.hourStart, t.projectId, t.apiKeyId, t.provider, t.model, t.sourceApp] }),
  index("usage_hourly_project_hour_idx").on(t.projectId, t.hourStart),
]);

/**
 * Bookkeeping of the hourly aggregates (src/usage/aggregate.ts, src/usage/upgrade.ts): the row
 * `usage_hourly` (closed hours), the upgrade's catch-up rows, and one `rebuild:<hour ms>` row per
 * hour marked for a rebuild (`aggregated_until` = the hour, `updated_at` = the mark's token).
 */
export const aggregationState = sqliteTable("aggregation_state", {
  id: text("id").primaryKey(),
  /** Hours before this start (epoch ms) are aggregated. */
  aggregatedUntil: integer("aggregated_until", { mode: "number" }).notNull(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});

/** Dashboard sessions; the cookie holds the raw token, this table its keyed fingerprint. */
export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull(),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  memberId: text("member_id").notNull().references(() => members.id, { onDelete: "cascade" }),
  csrfToken: text("csrf_token").notNull(),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  /** `sso`: opened by an organization's identity provider, good for that organization only. */
  signInMethod: text("sign_in_method", { enum: ["password", "sso"] }).notNull().default("password"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("sessions_token_uq").on(t.tokenHash)]);

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

export const oauthClients = sqliteTable("oauth_clients", {
  id: text("id").primaryKey(),
  /** SHA-256 of the client secret; null for public clients (PKCE only). */
  secretHash: text("secret_hash"),
  name: text("name").notNull(),
  redirectUris: text("redirect_uris", { mode: "json" }).$type<string[]>().notNull().default([]),
  grantTypes: text("grant_types", { mode: "json" }).$type<string[]>().notNull().default([]),
  /** For client-credentials clients: the gateway key the client acts as. */
  apiKeyId: text("api_key_id"),
  createdAt: createdAt(),
}, (t) => [index("oauth_clients_api_key_idx").on(t.apiKeyId)]);

export const oauthGrants = sqliteTable("oauth_grants", {
  id: text("id").primaryKey(),
  /** `code`, `access` or `refresh`; the token itself is never stored, only its SHA-256. */
  kind: text("kind", { enum: ["code", "access", "refresh"] }).notNull(),
  tokenHash: text("token_hash").notNull(),
  clientId: text("client_id").notNull().references(() => oauthClients.id, { onDelete: "cascade" }),
  apiKeyId: text("api_key_id").notNull(),
  scope: text("scope"),
  redirectUri: text("redirect_uri"),
  codeChallenge: text("code_challenge"),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  revokedAt: integer("revoked_at", { mode: "number" }),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("oauth_grants_token_uq").on(t.tokenHash),
  index("oauth_grants_client_idx").on(t.clientId),
  // Rolling, disabling or deleting a key revokes its grants (src/oauth/tokens.ts endKeyOAuth).
  index("oauth_grants_api_key_idx").on(t.apiKeyId),
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

/**
 * OpenID Connect sign-in of one organization (src/sso/). The client secret is sealed
 * (`encryptSecret`) and never shown again; `allowedDomains` are lower-case e-mail domains.
 */
export const organizationSso = sqliteTable("organization_sso", {
  organizationId: text("organization_id").primaryKey().references(() => organizations.id, { onDelete: "cascade" }),
  issuer: text("issuer").notNull(),
  clientId: text("client_id").notNull(),
  clientSecretEncrypted: text("client_secret_encrypted").notNull(),
  clientSecretHint: text("client_secret_hint").notNull(),
  allowedDomains: text("allowed_domains", { mode: "json" }).$type<string[]>().notNull(),
  defaultRole: text("default_role", { enum: ["developer", "admin"] }).notNull(),
  required: integer("required", { mode: "boolean" }).notNull().default(false),
  /** The one owner who may still sign in with a password when SSO is required. */
  breakGlassMemberId: text("break_glass_member_id"),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});
