import { describe, expect, it } from "vitest";
import { formatUsd } from "./money";
import { storageCostPico } from "./storage";

describe("storageCostPico", () => {
  it("charges one R2 write plus a month of storage, rounded up", () => {
    expect(formatUsd(storageCostPico(0))).toBe("0.0000045");
    // 1 GiB for a month: $0.015 + the write.
    expect(formatUsd(storageCostPico(2 ** 30))).toBe("0.0150045");
    expect(storageCostPico(1)).toBe(storageCostPico(0) + 14n);
  });
});
