/**
 * The stream parsers take time linear in the bytes: one 3 MB frame (a base64 image in one SSE
 * `data:` line, or one event-stream message) delivered in small chunks costs, per byte, a small
 * multiple of what 3 KB frames cost. Ratios, not absolute times, with generous slack (the machine
 * running the tests may be loaded); the absolute figure is in `npm run bench` (docs/benchmarks.md).
 */
import { describe, expect, it } from "vitest";
import { reencodeChatSse, type ChunkEncoder } from "../dialects/chat-sse";
import { readEventStream } from "./bedrock/eventstream";
import { SseParser } from "./sse";
import { bytesStream, encodeEventStreamMessage } from "./test-target";

const CHUNK = 8 * 1024;
const TOTAL = 3 * 1024 * 1024;
/** Per-byte time of the 3 MB frame over that of the 3 KB frames may be at most this. */
const SLACK = 8;

const chunks = (text: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK) out.push(text.slice(i, i + CHUNK));
  return out;
};
const byteChunks = (bytes: Uint8Array): Uint8Array[] => {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK) out.push(bytes.subarray(i, i + CHUNK));
  return out;
};
/** `frames` SSE frames whose data lines together are about TOTAL characters. */
const sseText = (frames: number): string => {
  const frame = `data: ${"A".repeat(Math.floor(TOTAL / frames))}\n\n`;
  return frame.repeat(frames);
};

/** The best of a few timed runs (ms), after one warm-up. */
async function best(run: () => unknown): Promise<number> {
  await run();
  let min = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await run();
    min = Math.min(min, performance.now() - t0);
  }
  return Math.max(min, 1);
}

describe("linear-time stream parsing", () => {
  it("SSE: a 3 MB data line in 8 KB chunks costs per byte a small multiple of 3 KB frames", async () => {
    const parse = (parts: string[]) => () => {
      const p = new SseParser();
      let n = 0;
      for (const part of parts) n += p.push(part).length;
      n += p.end().length;
      return n;
    };
    const big = chunks(sseText(1));
    const small = chunks(sseText(1024));
    expect(parse(big)()).toBe(1);
    expect(parse(small)()).toBe(1024);
    const ratio = (await best(parse(big))) / (await best(parse(small)));
    expect(ratio).toBeLessThan(SLACK);
  });

  it("the dialects' re-encoding of chat SSE: the same", async () => {
    const chatSse = (frames: number): string => {
      const frame = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "A".repeat(Math.floor(TOTAL / frames)) } }] })}\n\n`;
      return frame.repeat(frames);
    };
    const enc: ChunkEncoder = { start: () => "", chunk: () => "x", keepAlive: () => "", error: () => "", done: () => "" };
    const reencode = (parts: string[]) => async () => {
      const reader = reencodeChatSse(bytesStream(parts), enc).getReader();
      let n = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.length;
      return n;
    };
    const big = chunks(chatSse(1));
    const small = chunks(chatSse(1024));
    expect(await reencode(big)()).toBe(1);
    expect(await reencode(small)()).toBe(1024);
    const ratio = (await best(reencode(big))) / (await best(reencode(small)));
    expect(ratio).toBeLessThan(SLACK);
  });

  it("Bedrock event stream: a 3 MB message in 8 KB chunks costs per byte a small multiple of 3 KB messages", async () => {
    const headers = { ":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event" };
    const stream = (messages: number): Uint8Array => {
      const one = encodeEventStreamMessage(headers, JSON.stringify({ delta: { text: "A".repeat(Math.floor(TOTAL / messages)) } }));
      const all = new Uint8Array(one.length * messages);
      for (let i = 0; i < messages; i++) all.set(one, i * one.length);
      return all;
    };
    const read = (parts: Uint8Array[]) => async () => {
      let n = 0;
      for await (const _ of readEventStream(bytesStream(parts))) n++;
      return n;
    };
    const big = byteChunks(stream(1));
    const small = byteChunks(stream(1024));
    expect(await read(big)()).toBe(1);
    expect(await read(small)()).toBe(1024);
    const ratio = (await best(read(big))) / (await best(read(small)));
    expect(ratio).toBeLessThan(SLACK);
  });
});
