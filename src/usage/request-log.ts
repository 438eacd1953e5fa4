/**
 * One request record per gateway request (success, upstream error, cache hit, and 4xx after
 * authentication), always sent off the hot path (waitUntil) to the LOGS queue, whose consumer
 * stores it in R2, adds it to the hourly aggregates and keeps it in the D1 window (`request_logs`,
 * same columns). Costs are pico-dollars split into the credit-paid and BYOK parts.
 */
import { requestLogs, type RequestKind, type RoutingAttempt } from "../db/schema";
import type { KeyContext } from "../context/key-context";
import type { NormalizedUsage } from "../providers/types";
import { picoToDbNumber, type Pico } from "../billing/money";

/** Where a request's bodies left (src/usage/body-batch.ts): the group, and the request's place in it (from 0, in the order requests joined). */
export interface BodyPlace {
  group: string;
  index: number;
}

export interface RequestLogInput {
  logId: string;
  requestId: string;
  auth: KeyContext;
  kind?: RequestKind;
  sourceApp: string;
  requestedModel: string;
  requestedProvider?: string | null;
  usedModel?: string | null;
  usedProvider?: string | null;
  usedRegion?: string | null;
  statusCode: number;
  errorType?: string | null;
  errorMessage?: string | null;
  finishReason?: string | null;
  streamed?: boolean;
  cached?: boolean;
  clientAborted?: boolean;
  usage?: NormalizedUsage | null;
  /** Everything the request cost. */
  costPico?: Pico;
  creditsCostPico?: Pico;
  byokCostPico?: Pico;
  /** Storage of generated files (nano-banana's R2 save); not part of costPico (spec 2.8). */
  dataStorageCostPico?: Pico;
  latencyMs?: number | null;
  ttftMs?: number | null;
  routing?: RoutingAttempt[];
  extra?: Record<string, unknown> | null;
  /** The group its bodies left with and its place there (src/usage/body-batch.ts), for a project that keeps them. */
  bodyBatch?: BodyPlace | null;
  createdAt: number;
}

const MAX_ERROR_MESSAGE = 1000;

export function toLogRow(i: RequestLogInput): typeof requestLogs.$inferInsert {
  const u = i.usage;
  return {
    id: i.logId,
    requestId: i.requestId,
    organizationId: i.auth.organization.id,
    projectId: i.auth.project.id,
    apiKeyId: i.auth.key.id,
    kind: i.kind ?? "chat",
    sourceApp: i.sourceApp,
    requestedModel: i.requestedModel.slice(0, 300),
    requestedProvider: i.requestedProvider ?? null,
    usedModel: i.usedModel ?? null,
    usedProvider: i.usedProvider ?? null,
    usedRegion: i.usedRegion ?? null,
    statusCode: i.statusCode,
    errorType: i.errorType ?? null,
    errorMessage: i.errorMessage ? i.errorMessage.slice(0, MAX_ERROR_MESSAGE) : null,
    finishReason: i.finishReason ?? null,
    streamed: i.streamed ?? false,
    cached: i.cached ?? false,
    clientAborted: i.clientAborted ?? false,
    promptTokens: u?.promptTokens ?? 0,
    completionTokens: u?.completionTokens ?? 0,
    reasoningTokens: u?.reasoningTokens ?? 0,
    cachedTokens: u?.cachedTokens ?? 0,
    cacheWriteTokens: (u?.cacheWrite5mTokens ?? 0) + (u?.cacheWrite1hTokens ?? 0),
    totalTokens: (u?.promptTokens ?? 0) + (u?.completionTokens ?? 0),
    costPico: picoToDbNumber(i.costPico ?? 0n),
    creditsCostPico: picoToDbNumber(i.creditsCostPico ?? 0n),
    byokCostPico: picoToDbNumber(i.byokCostPico ?? 0n),
    dataStorageCostPico: picoToDbNumber(i.dataStorageCostPico ?? 0n),
    latencyMs: i.latencyMs ?? null,
    ttftMs: i.ttftMs ?? null,
    routing: i.routing ?? [],
    // Whether this request's bodies were kept (the project's `logBodies`; every kind but video jobs
    // queues them: src/usage/bodies.ts): the Requests page filters on it, spans carry them. The
    // group they left with says where they are stored, their place in it whether they were.
    extra: i.auth.project.logBodies === true && (i.kind ?? "chat") !== "video" ? { ...(i.extra ?? {}), bodies: true, ...(i.bodyBatch ? { bodyBatch: i.bodyBatch.group, bodyIndex: i.bodyBatch.index } : {}) } : (i.extra ?? null),
    createdAt: i.createdAt,
    endUserId: i.auth.key.endUserId ?? null,
  };
}

type LogRow = typeof requestLogs.$inferInsert;

/** Column order of the INSERT; keys of `LogRow` (drizzle names) to SQL columns. */
const COLUMNS: ReadonlyArray<readonly [keyof LogRow, string]> = [
  ["id", "id"], ["requestId", "request_id"], ["organizationId", "organization_id"], ["projectId", "project_id"],
  ["apiKeyId", "api_key_id"], ["kind", "kind"], ["sourceApp", "source_app"], ["requestedModel", "requested_model"],
  ["requestedProvider", "requested_provider"], ["usedModel", "used_model"], ["usedProvider", "used_provider"],
  ["usedRegion", "used_region"], ["statusCode", "status_code"], ["errorType", "error_type"], ["errorMessage", "error_message"],
  ["finishReason", "finish_reason"], ["streamed", "streamed"], ["cached", "cached"], ["clientAborted", "client_aborted"],
  ["promptTokens", "prompt_tokens"], ["completionTokens", "completion_tokens"], ["reasoningTokens", "reasoning_tokens"],
  ["cachedTokens", "cached_tokens"], ["cacheWriteTokens", "cache_write_tokens"], ["totalTokens", "total_tokens"],
  ["costPico", "cost_pico"], ["creditsCostPico", "credits_cost_pico"], ["byokCostPico", "byok_cost_pico"],
  ["dataStorageCostPico", "data_storage_cost_pico"], ["latencyMs", "latency_ms"], ["ttftMs", "ttft_ms"],
  ["routing", "routing"], ["extra", "extra"], ["createdAt", "created_at"], ["endUserId", "end_user_id"],
];

/** SQL column names in the order of a serialized row (`requestLogJson`, the queue's records). */
export const LOG_COLUMNS: readonly string[] = COLUMNS.map(([, c]) => c);
/** Drizzle (record) field names in the same order. */
export const LOG_FIELDS: ReadonlyArray<keyof LogRow> = COLUMNS.map(([k]) => k);

type SqlValue = string | number | null;
const orNull = <T>(v: T | null | undefined): T | null => v ?? null;
const flag = (v: boolean | null | undefined): number | null => (v === undefined || v === null ? null : v ? 1 : 0);

/**
 * The row's SQLite values in COLUMNS order: booleans as 0/1, JSON columns serialized, absent as
 * NULL (or the column's default where the consumer's INSERT needs a value). Written out by field,
 * not mapped over COLUMNS: every request's record is built here, and a lookup by a varying key
 * per column was most of its cost. request-log.test.ts checks the order against COLUMNS.
 */
const rowValues = (r: LogRow): SqlValue[] => [
  r.id, r.requestId, r.organizationId, r.projectId,
  r.apiKeyId, orNull(r.kind), orNull(r.sourceApp), r.requestedModel,
  orNull(r.requestedProvider), orNull(r.usedModel), orNull(r.usedProvider),
  orNull(r.usedRegion), r.statusCode, orNull(r.errorType), orNull(r.errorMessage),
  orNull(r.finishReason), flag(r.streamed), flag(r.cached), flag(r.clientAborted),
  orNull(r.promptTokens), orNull(r.completionTokens), orNull(r.reasoningTokens),
  orNull(r.cachedTokens), orNull(r.cacheWriteTokens), orNull(r.totalTokens),
  orNull(r.costPico), orNull(r.creditsCostPico), orNull(r.byokCostPico),
  r.dataStorageCostPico ?? 0, orNull(r.latencyMs), orNull(r.ttftMs),
  r.routing == null ? "[]" : JSON.stringify(r.routing), r.extra == null ? null : JSON.stringify(r.extra), r.createdAt, orNull(r.endUserId),
];

/** A row already built as one JSON array of its SQL values (generation logs adjust token counts on it first). */
export const logRowJson = (row: LogRow): string => JSON.stringify(rowValues(row));

/** A request's row as one JSON array (the KeyState outbox stores it, the LOGS queue carries it). */
export const requestLogJson = (input: RequestLogInput): string => logRowJson(toLogRow(input));

/** Kind and id suffix of a refund record: the negative of a charge given back (a failed video job). */
export const REFUND_KIND = "refund";
export const REFUND_SUFFIX = ":refund";

/**
 * The record of a refund: the charged request's labels and hour, its costs negated, no tokens.
 * Aggregates add it without counting a request; the D1 window and the request log leave it out.
 */
export function refundRecordJson(charged: LogRow): string {
  return logRowJson({
    ...charged,
    id: `${charged.id}${REFUND_SUFFIX}`,
    kind: REFUND_KIND as RequestKind,
    promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0,
    costPico: -(charged.costPico ?? 0), creditsCostPico: -(charged.creditsCostPico ?? 0), byokCostPico: -(charged.byokCostPico ?? 0), dataStorageCostPico: 0,
    routing: [],
    extra: { refundOf: charged.id },
  });
}
