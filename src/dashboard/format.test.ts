import { describe, expect, it } from "vitest";
import { compactNumber, formatDate, formatUsd, toDateTimeLocal, usdColumn, windowLabel } from "./format";
import { fillBuckets, niceMax } from "./charts";

describe("dashboard formatting", () => {
  it("formats dates in UTC and datetime-local values", () => {
    expect(formatDate("2026-03-12T14:05:00.000Z")).toBe("12 Mar 2026, 14:05 UTC");
    expect(formatDate(null, "never")).toBe("never");
    expect(toDateTimeLocal(Date.UTC(2026, 2, 12, 14, 5))).toBe("2026-03-12T14:05");
    expect(toDateTimeLocal(null)).toBe("");
  });

  it("formats USD amounts, keeping small non-zero amounts visible", () => {
    expect(formatUsd("1234.5")).toBe("$1,234.50");
    expect(formatUsd("0")).toBe("$0.00");
    expect(formatUsd("0.000003")).toBe("$0.000003");
    expect(formatUsd(null)).toBe("—");
  });

  it("formats a column of USD amounts with one precision", () => {
    const col = usdColumn([0.04, 0.000243, 0.00001, 0]);
    expect([0.04, 0.000243, 0.00001, 0].map(col)).toEqual(["$0.04000000", "$0.00024300", "$0.00001000", "$0.00000000"]);
    expect([12.5, 0.5].map(usdColumn([12.5, 0.5]))).toEqual(["$12.50", "$0.50"]);
    expect([0.000243, 0.01].map(usdColumn([0.000243, 0.01]))).toEqual(["$0.000243", "$0.010000"]);
    expect(usdColumn([1e-14])(1e-14)).toBe("$0.0000000000");
  });

  it("compacts counts and names windows", () => {
    expect(compactNumber(999)).toBe("999");
    expect(compactNumber(12_345)).toBe("12.3k");
    expect(compactNumber(2_000_000)).toBe("2M");
    expect(windowLabel(1, "day")).toBe("per day");
    expect(windowLabel(2, "week")).toBe("per 2 weeks");
    expect(windowLabel(null, null)).toBe("");
  });
});

describe("chart data", () => {
  it("fills the buckets the report leaves out with zeros", () => {
    const from = Date.UTC(2026, 0, 1);
    const b = fillBuckets([{ start: "2026-01-02T00:00:00.000Z", values: [5] }], from, from + 3 * 86_400_000, "day", 1);
    expect(b.map((x) => x.values[0])).toEqual([0, 5, 0]);
    expect(fillBuckets([], from, from + 2 * 3_600_000, "hour", 2)).toEqual([
      { start: from, values: [0, 0] },
      { start: from + 3_600_000, values: [0, 0] },
    ]);
  });

  it("rounds the axis up to a nice maximum", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(7)).toBe(10);
    expect(niceMax(18)).toBe(20);
    expect(niceMax(230)).toBe(250);
    expect(niceMax(0.0003)).toBeCloseTo(0.0005);
  });
});
