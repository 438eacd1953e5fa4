import { describe, expect, it } from "vitest";
import { D1_MAX_BOUND_PARAMETERS, inSlices } from "./client";

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("inSlices", () => {
  it("keeps every statement within D1's 100 bound parameters, the other parameters included", async () => {
    const sizes: number[] = [];
    const out = await inSlices(range(250), 1, async (slice) => {
      sizes.push(slice.length);
      return slice.map((n) => n * 2);
    });
    expect(D1_MAX_BOUND_PARAMETERS).toBe(100);
    expect(sizes).toEqual([99, 99, 52]);
    expect(out).toEqual(range(250).map((n) => n * 2));
  });

  it("runs one statement for a list that fits, none for an empty list", async () => {
    const sizes: number[] = [];
    const run = async (slice: number[]) => {
      sizes.push(slice.length);
      return slice;
    };
    expect(await inSlices(range(98), 2, run)).toEqual(range(98));
    expect(await inSlices([], 2, run)).toEqual([]);
    expect(sizes).toEqual([98]);
  });

  it("returns the slices' rows in slice order whatever order the statements finish in", async () => {
    const out = await inSlices(range(300), 0, async (slice) => {
      await new Promise((r) => setTimeout(r, slice[0] === 0 ? 20 : 0));
      return [slice[0]];
    });
    expect(out).toEqual([0, 100, 200]);
  });

  it("refuses a statement whose other parameters leave no room", async () => {
    await expect(inSlices([1], 100, async (s) => s)).rejects.toThrow(RangeError);
    await expect(inSlices([1], -1, async (s) => s)).rejects.toThrow(RangeError);
  });
});
