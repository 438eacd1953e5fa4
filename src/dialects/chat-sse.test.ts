import { describe, expect, it } from "vitest";
import { bytesStream } from "../providers/test-target";
import { reencodeChatSse, type ChunkEncoder } from "./chat-sse";

const recorder = (): ChunkEncoder & { log: string[] } => {
  const log: string[] = [];
  return {
    log,
    start: (model) => (log.push(model ? `start:${model}` : "start"), "S"),
    chunk: (c) => (log.push(`chunk:${c.choices?.[0]?.delta?.content ?? ""}`), "C"),
    keepAlive: () => (log.push("ka"), "K"),
    error: (e) => (log.push(`error:${e.message}`), "E"),
    done: () => (log.push("done"), "D"),
  };
};

describe("reencodeChatSse", () => {
  it("re-encodes frames split across reads, keep-alives and [DONE] (done once)", async () => {
    const enc = recorder();
    const body = bytesStream(['data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n', "\n: keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DO", "NE]\n\n"]);
    const text = await new Response(reencodeChatSse(body, enc)).text();
    expect(enc.log).toEqual(["start", "chunk:a", "ka", "chunk:b", "done"]);
    expect(text).toBe("SCKCD");
  });

  it("turns the error frame into the dialect's error and still ends once when the body ends without [DONE]", async () => {
    const enc = recorder();
    await new Response(reencodeChatSse(bytesStream(['data: {"error":{"message":"boom","type":"upstream_error"}}\n\n']), enc)).text();
    expect(enc.log).toEqual(["start", "error:boom", "done"]);
  });

  it("opens with the model the first chunk names (a fallback's id), before that chunk's own events", async () => {
    const enc = recorder();
    const body = bytesStream(['data: {"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n']);
    expect(await new Response(reencodeChatSse(body, enc)).text()).toBe("SCD");
    expect(enc.log).toEqual(["start:gpt-4o-mini", "chunk:a", "done"]);
  });
});
