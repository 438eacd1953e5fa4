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

describe("an OpenAI stream that stops at [DONE]", () => {
  const enc = new TextEncoder();
  /** A body that sends `frames`, then closes (or, `open`, stays open); records a cancel. */
  function body(frames: string[], open = false) {
    const seen = { cancelled: false, closed: false };
    const stream = new ReadableStream<Uint8Array>({
      start(ctl) {
        for (const f of frames) ctl.enqueue(enc.encode(f));
        // The end of the body arrives a moment after its last frame, as over a network.
        if (!open)
          setTimeout(() => {
            seen.closed = true;
            if (!seen.cancelled) ctl.close();
          }, 5);
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    return { stream, seen };
  }
  const chunk = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n';

  it("reads the rest of the body instead of cancelling it (the upstream connection stays reusable)", async () => {
    const { parseOpenAIStream } = await import("./openai/stream");
    const { stream, seen } = body([chunk, "data: [DONE]\n\n"]);
    const events = [];
    for await (const e of parseOpenAIStream(stream)) events.push(e);
    expect(events.length).toBeGreaterThan(0);
    // Before: returning at [DONE] cancelled the body (a torn-down connection per streamed request).
    expect(seen.cancelled).toBe(false);
  });

  it("cancels a body the upstream keeps open after [DONE], within the drain bound", async () => {
    const { parseOpenAIStream } = await import("./openai/stream");
    const { SSE_DRAIN_MS } = await import("./sse");
    const { stream, seen } = body([chunk, "data: [DONE]\n\n"], true);
    const t0 = Date.now();
    for await (const _ of parseOpenAIStream(stream)) void _;
    expect(seen.cancelled).toBe(true);
    expect(Date.now() - t0).toBeLessThan(SSE_DRAIN_MS + 1000);
  });

  it("a consumer that stops before the end (the client went away) still cancels at once", async () => {
    const { parseOpenAIStream } = await import("./openai/stream");
    const { stream, seen } = body([chunk, chunk], true);
    const it = parseOpenAIStream(stream)[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
    expect(seen.cancelled).toBe(true);
  });
});
