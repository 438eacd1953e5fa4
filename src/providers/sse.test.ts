import { describe, expect, it } from "vitest";
import { readSse, SseParser, type SseFrame } from "./sse";

const enc = new TextEncoder();

function streamOf(parts: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(typeof p === "string" ? enc.encode(p) : p);
      c.close();
    },
  });
}

async function collect(parts: Array<string | Uint8Array>): Promise<SseFrame[]> {
  const out: SseFrame[] = [];
  for await (const f of readSse(streamOf(parts))) out.push(f);
  return out;
}

describe("SSE parser", () => {
  it("parses data frames, event names, comments and ids", async () => {
    const frames = await collect([": keep-alive\n\nevent: message_start\ndata: {\"a\":1}\nid: 7\n\ndata: [DONE]\n\n"]);
    // The last event id persists across frames (EventSource semantics).
    expect(frames).toEqual([{ event: "message_start", data: '{"a":1}', id: "7" }, { data: "[DONE]", id: "7" }]);
  });

  it("joins multi-line data with newlines and strips one leading space only", async () => {
    expect(await collect(["data: line1\ndata:  line2\ndata:line3\n\n"])).toEqual([{ data: "line1\n line2\nline3" }]);
  });

  it("handles CRLF and bare CR line endings, including CRLF split across chunks", async () => {
    expect(await collect(["data: a\r", "\n\r", "\ndata: b\r\rdata: c\r\n\r\n"])).toEqual([{ data: "a" }, { data: "b" }, { data: "c" }]);
  });

  it("produces identical frames for every possible split point", async () => {
    const text = 'event: x\r\ndata: {"t":"héllo ✓"}\r\n\r\n: c\ndata: 2\n\n';
    const bytes = enc.encode(text);
    const whole = await collect([bytes]);
    expect(whole).toEqual([{ event: "x", data: '{"t":"héllo ✓"}' }, { data: "2" }]);
    for (let i = 1; i < bytes.length; i++) {
      expect(await collect([bytes.slice(0, i), bytes.slice(i)])).toEqual(whole);
    }
    expect(await collect([...bytes].map((b) => new Uint8Array([b])))).toEqual(whole);
  });

  it("dispatches a pending frame at end of input without a trailing blank line", async () => {
    expect(await collect(["data: a\n\ndata: tail"])).toEqual([{ data: "a" }, { data: "tail" }]);
  });

  it("yields a frame as soon as it completes, before the stream ends", async () => {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const it = readSse(body)[Symbol.asyncIterator]();
    controller.enqueue(enc.encode("data: first\n\n"));
    const first = await it.next();
    expect(first.value).toEqual({ data: "first" });
    controller.enqueue(enc.encode("data: second\n\n"));
    controller.close();
    expect((await it.next()).value).toEqual({ data: "second" });
    expect((await it.next()).done).toBe(true);
  });

  it("keeps a CR pending across an empty chunk", () => {
    const p = new SseParser();
    expect([...p.push("data: a\r"), ...p.push(""), ...p.push("\ndata: b\r\n\r\n")]).toEqual([{ data: "a\nb" }]);
  });

  it("the incremental parser ignores unknown fields and empty frames", () => {
    const p = new SseParser();
    expect(p.push("retry: 10\n\n\nfoo: bar\ndata\n\n")).toEqual([{ data: "" }]);
  });
});
