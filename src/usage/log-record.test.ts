import { describe, expect, it } from "vitest";
import type { requestLogs } from "../db/schema";
import { recordFromRow } from "./log-record";
import { LOG_FIELDS, logRowJson } from "./request-log";

type LogRow = typeof requestLogs.$inferInsert;

/** Every field set, each to a value no other field has, so a field read from another column shows. */
const full: Required<LogRow> = {
  id: "log_1", requestId: "req_1", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", kind: "embedding",
  sourceApp: "cursor", requestedModel: "gpt-4o", requestedProvider: "openai", usedModel: "gpt-4o-2024", usedProvider: "azure",
  usedRegion: "eu", statusCode: 200, errorType: "upstream_error", errorMessage: "boom", finishReason: "stop",
  streamed: true, cached: false, clientAborted: true, promptTokens: 11, completionTokens: 12, reasoningTokens: 13,
  cachedTokens: 14, cacheWriteTokens: 15, totalTokens: 16, costPico: 17, creditsCostPico: 18, byokCostPico: 19,
  dataStorageCostPico: 20, latencyMs: 21, ttftMs: 22, routing: [{ provider: "azure", model: "gpt-4o", status_code: 200, succeeded: true, credentialSource: "credits" }],
  extra: { bodies: true }, createdAt: 23, endUserId: "user_1",
};

describe("a serialized row read back as a record", () => {
  it("gives every field its own value back, in the row's field order", () => {
    const record = recordFromRow(JSON.parse(logRowJson(full)) as unknown[]);
    expect(Object.keys(record)).toEqual(LOG_FIELDS);
    for (const field of LOG_FIELDS) expect([field, record[field]]).toEqual([field, full[field]]);
  });

  it("reads absent values as null, flags as false and no routing as an empty list", () => {
    const minimal: LogRow = { id: "log_2", requestId: "req_2", organizationId: "org_1", projectId: "prj_1", apiKeyId: "key_1", requestedModel: "m", statusCode: 401, createdAt: 5 };
    const record = recordFromRow(JSON.parse(logRowJson(minimal)) as unknown[]);
    expect(record).toMatchObject({ kind: null, usedModel: null, streamed: false, cached: false, clientAborted: false, routing: [], extra: null, costPico: null, dataStorageCostPico: 0, endUserId: null });
    // A row of an older shape, shorter than today's: its missing columns read as absent.
    const short = recordFromRow((JSON.parse(logRowJson(minimal)) as unknown[]).slice(0, 31));
    expect(short).toMatchObject({ routing: [], extra: null, createdAt: null, endUserId: null });
  });
});
