import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatUsd, toUsdNumber } from "./money";

describe("toUsdNumber", () => {
  it("gives exactly the number the decimal string parses to, on the fast path and past it", () => {
    const edges = [0n, 1n, -1n, 5n, 150_000n, 999_999_999_999n, 10n ** 12n, 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, 2n ** 60n + 7n, -(2n ** 64n)];
    for (const p of edges) expect(toUsdNumber(p), String(p)).toBe(Number(formatUsd(p)));
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (p) => toUsdNumber(p) === Number(formatUsd(p))),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 13n }), (p) => toUsdNumber(p) === Number(formatUsd(p))),
      { numRuns: 20_000 },
    );
  });
});
