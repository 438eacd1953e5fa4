import { describe, expect, it } from "vitest";
import { EVERY_FIELD as full, MINIMAL as minimal, type LogRow } from "../../test/helpers/log-rows";
import { LOG_COLUMNS, LOG_FIELDS, logRowJson } from "./request-log";

/** What the consumer's INSERT expects in a column, by the column's own rule (the row builder writes it out by field). */
function expected(field: keyof LogRow, value: unknown): unknown {
  if (value === undefined || value === null) return field === "routing" ? "[]" : field === "dataStorageCostPico" ? 0 : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (field === "routing" || field === "extra") return JSON.stringify(value);
  return value;
}


describe("a request record's row", () => {
  it("puts every field in its column, in the consumer's column order", () => {
    const values = JSON.parse(logRowJson(full)) as unknown[];
    expect(values).toHaveLength(LOG_COLUMNS.length);
    LOG_FIELDS.forEach((field, i) => expect([field, values[i]]).toEqual([field, expected(field, full[field])]));
  });

  it("writes absent fields as NULL, an empty routing list and no storage cost", () => {
    const values = JSON.parse(logRowJson(minimal)) as unknown[];
    LOG_FIELDS.forEach((field, i) => expect([field, values[i]]).toEqual([field, expected(field, minimal[field])]));
    expect(values[LOG_FIELDS.indexOf("routing")]).toBe("[]");
    expect(values[LOG_FIELDS.indexOf("dataStorageCostPico")]).toBe(0);
  });
});
