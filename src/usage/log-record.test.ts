import { describe, expect, it } from "vitest";
import { EVERY_FIELD as full, MINIMAL as minimal } from "../../test/helpers/log-rows";
import { recordFromRow } from "./log-record";
import { LOG_FIELDS, logRowJson } from "./request-log";

describe("a serialized row read back as a record", () => {
  it("gives every field its own value back, in the row's field order", () => {
    const record = recordFromRow(JSON.parse(logRowJson(full)) as unknown[]);
    expect(Object.keys(record)).toEqual(LOG_FIELDS);
    for (const field of LOG_FIELDS) expect([field, record[field]]).toEqual([field, full[field]]);
  });

  it("reads absent values as null, flags as false and no routing as an empty list", () => {
    const record = recordFromRow(JSON.parse(logRowJson(minimal)) as unknown[]);
    expect(record).toMatchObject({ kind: null, usedModel: null, streamed: false, cached: false, clientAborted: false, routing: [], extra: null, costPico: null, dataStorageCostPico: 0, endUserId: null });
    // A row of an older shape, shorter than today's: its missing columns read as absent.
    const short = recordFromRow((JSON.parse(logRowJson(minimal)) as unknown[]).slice(0, 31));
    expect(short).toMatchObject({ routing: [], extra: null, createdAt: null, endUserId: null });
  });
});
