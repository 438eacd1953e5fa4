import { describe, expect, it } from "vitest";
import { periodDay, periodDays } from "./period";

describe("a dashboard page's period", () => {
  it("takes a UTC day as written, and nothing as the page's default", () => {
    expect(periodDay("2026-11-27", "from")).toEqual({ ok: true, day: "2026-11-27" });
    expect(periodDay(undefined, "from")).toEqual({ ok: true, day: undefined });
    expect(periodDay("", "to")).toEqual({ ok: true, day: undefined });
  });

  it("takes an ISO 8601 time as the UTC day it falls in, whatever its offset", () => {
    expect(periodDay("2026-11-27T10:00:00Z", "from")).toEqual({ ok: true, day: "2026-11-27" });
    expect(periodDay("2026-11-27T23:30:00-02:00", "to")).toEqual({ ok: true, day: "2026-11-28" });
    expect(periodDay("2026-11-27T00:15:00.000+01:00", "from")).toEqual({ ok: true, day: "2026-11-26" });
  });

  it("names what is neither, instead of falling back to the default period", () => {
    for (const bad of ["yesterday", "2026-13-45", "2026-02-30", "27/11/2026", "2026-11-27Tnoon"]) {
      const r = periodDay(bad, "from");
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toBe(`'from' must be a UTC date written YYYY-MM-DD, or an ISO 8601 time such as 2026-01-31T10:00:00Z (got '${bad}').`);
    }
  });

  it("reports the first bad end of a period", () => {
    expect(periodDays({ from: "2026-11-01", to: "2026-11-27T12:00:00Z" })).toEqual({ ok: true, from: "2026-11-01", to: "2026-11-27" });
    const r = periodDays({ from: "2026-11-01", to: "soon" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain("'to' must be");
  });
});
