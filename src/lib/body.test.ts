import { describe, expect, it } from "vitest";
import { DRAIN_MAX_BYTES, readUpTo } from "./body";

/** A body of `chunks` chunks of `size` bytes that records what the reader did. */
function source(chunks: number, size: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) return controller.close();
      seen.pulled++;
      controller.enqueue(new Uint8Array(size));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("readUpTo", () => {
  it("returns the body when it fits", async () => {
    const { stream } = source(3, 10);
    expect((await readUpTo(stream, 30))?.byteLength).toBe(30);
  });

  it("over the limit: null, and the rest is read to its end rather than cancelled (the client can finish its upload)", async () => {
    const { stream, seen } = source(40, 1024);
    expect(await readUpTo(stream, 4096)).toBeNull();
    expect(seen.pulled).toBe(40);
    expect(seen.cancelled).toBe(false);
  });

  it("a body past DRAIN_MAX_BYTES is cancelled after all", async () => {
    const size = 1024 * 1024;
    const { stream, seen } = source(DRAIN_MAX_BYTES / size + 10, size);
    expect(await readUpTo(stream, 4 * size)).toBeNull();
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(DRAIN_MAX_BYTES / size + 10);
  });
});
