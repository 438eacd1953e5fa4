import { describe, expect, it } from "vitest";
import type { requestLogs } from "../db/schema";
import { LOG_COLUMNS, LOG_FIELDS, logRowJson } from "./request-log";

type LogRow = typeof requestLogs.$inferInsert;

/** What the consumer's INSERT expects in a column, by the column's own rule (the row builder writes it out by field). */
function expected(field: keyof LogRow, value: unknown): unknown {
  if (value === undefined || value === null) return field === "routing" ? "[]" : field === "dataStorageCostPico" ? 0 : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (field === "routing" || field === "extra") return JSON.stringify(value);
  return value;
}

/** Every field set, each to a value no other field has, so a column out of place shows. */
const full: Required<LogRow> = {
  id: "log_1", requestId: "req_1", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", kind: "embedding",
  sourceApp: "cursor", requestedModel: "gpt-4o", requestedProvider: "openai", usedModel: "gpt-4o-2024", usedProvider: "azure",
  usedRegion: "eu", statusCode: 200, errorType: "upstream_error", errorMessage: "boom", finishReason: "stop",
  streamed: true, cached: false, clientAborted: true, promptTokens: 11, completionTokens: 12, reasoningTokens: 13,
  cachedTokens: 14, cacheWriteTokens: 15, totalTokens: 16, costPico: 17, creditsCostPico: 18, byokCostPico: 19,
  dataStorageCostPico: 20, latencyMs: 21, ttftMs: 22, routing: [{ provider: "azure", model: "gpt-4o", status_code: 200, succeeded: true, credentialSource: "credits" }],
  extra: { bodies: true }, createdAt: 23, endUserId: "user_1",
};

describe("a request record's row", () => {
  it("puts every field in its column, in the consumer's column order", () => {
    const values = JSON.parse(logRowJson(full)) as unknown[];
    expect(values).toHaveLength(LOG_COLUMNS.length);
    LOG_FIELDS.forEach((field, i) => expect([field, values[i]]).toEqual([field, expected(field, full[field])]));
  });

  it("writes absent fields as NULL, an empty routing list and no storage cost", () => {
    const minimal: LogRow = { id: "log_2", requestId: "req_2", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", requestedModel: "m", statusCode: 401, createdAt: 5 };
    const values = JSON.parse(logRowJson(minimal)) as unknown[];
    LOG_FIELDS.forEach((field, i) => expect([field, values[i]]).toEqual([field, expected(field, minimal[field])]));
    expect(values[LOG_FIELDS.indexOf("routing")]).toBe("[]");
    expect(values[LOG_FIELDS.indexOf("dataStorageCostPico")]).toBe(0);
  });
});
