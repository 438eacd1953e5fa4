/** Log rows for the row and record tests (pure: no runtime imports, so unit tests may use it). */
import type { requestLogs } from "../../src/db/schema";

export type LogRow = typeof requestLogs.$inferInsert;

/** Every field set, each to a value no other field has, so a field in another field's column shows. */
export const EVERY_FIELD: Required<LogRow> = {
  id: "log_1", requestId: "req_1", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", kind: "embedding",
  sourceApp: "cursor", requestedModel: "gpt-4o", requestedProvider: "openai", usedModel: "gpt-4o-2024", usedProvider: "azure",
  usedRegion: "eu", statusCode: 200, errorType: "upstream_error", errorMessage: "boom", finishReason: "stop",
  streamed: true, cached: false, clientAborted: true, promptTokens: 11, completionTokens: 12, reasoningTokens: 13,
  cachedTokens: 14, cacheWriteTokens: 15, totalTokens: 16, costPico: 17, creditsCostPico: 18, byokCostPico: 19,
  dataStorageCostPico: 20, latencyMs: 21, ttftMs: 22, routing: [{ provider: "azure", model: "gpt-4o", status_code: 200, succeeded: true, credentialSource: "credits" }],
  extra: { bodies: true }, createdAt: 23, endUserId: "user_1",
};

/** Only what every row has. */
export const MINIMAL: LogRow = { id: "log_2", requestId: "req_2", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", requestedModel: "m", statusCode: 401, createdAt: 5 };
