/** Request records, the log consumer's bookkeeping and the hourly aggregates analytics read. (Part of the D1 schema: ../schema.ts.) */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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

/**
 * Request-body groups marked dropped before marks were per request (`droppedBodies`): read, no
 * longer written; retention deletes the last of them with their records.
 */
export const droppedBodyGroups = sqliteTable("dropped_body_groups", {
  organizationId: text("organization_id").notNull(),
  batch: text("batch").notNull(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
}, (t) => [primaryKey({ columns: [t.organizationId, t.batch] })]);

/**
 * Requests whose bodies were dropped (src/usage/bodies.ts `markDropped`, beside the marks in R2),
 * so the Requests page's kept-bodies filter can say "not kept" in SQL. Per request: a group's
 * parts and objects are stored or lost separately. `created_at`: when marked; deleted with the
 * records (retention).
 */
export const droppedBodies = sqliteTable("dropped_bodies", {
  organizationId: text("organization_id").notNull(),
  logId: text("log_id").notNull(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
}, (t) => [primaryKey({ columns: [t.organizationId, t.logId] })]);

/**
 * Request-body objects the log consumer stored (src/usage/bodies.ts `markStored`): one row per
 * object, holding its organization's requests of one hour with places `first_index` to
 * `last_index` in their group, so the kept-bodies filter can say "stored" in SQL. WITHOUT ROWID
 * (migration 0031, hand-written); retention deletes by `hour_start`, the requests' hour.
 */
export const storedBodyParts = sqliteTable("stored_body_parts", {
  hourStart: integer("hour_start", { mode: "number" }).notNull(),
  organizationId: text("organization_id").notNull(),
  batch: text("batch").notNull(),
  firstIndex: integer("first_index", { mode: "number" }).notNull(),
  lastIndex: integer("last_index", { mode: "number" }).notNull(),
}, (t) => [primaryKey({ columns: [t.hourStart, t.organizationId, t.batch, t.firstIndex] })]);

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
