import { describe, expect, it } from "vitest";
import { newId, randomAlphanumeric } from "./ids";

describe("random ids", () => {
  it("draws strings of the asked length from [A-Za-z0-9]", () => {
    for (const n of [0, 1, 12, 20, 43, 64]) expect(randomAlphanumeric(n)).toMatch(new RegExp(`^[A-Za-z0-9]{${n}}$`));
  });

  it("keeps a shorter id whole after a longer one (the code buffer is reused)", () => {
    randomAlphanumeric(64);
    expect(randomAlphanumeric(5)).toHaveLength(5);
  });

  it("gives resource ids their prefix and never repeats one in 10,000 draws", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("log")));
    expect(ids.size).toBe(10_000);
    for (const id of [...ids].slice(0, 10)) expect(id).toMatch(/^log_[A-Za-z0-9]{20}$/);
  });

  it("uses every character of the alphabet", () => {
    const seen = new Set(randomAlphanumeric(20_000));
    expect(seen.size).toBe(62);
  });
});
