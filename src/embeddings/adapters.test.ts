import { describe, expect, it } from "vitest";
import { embeddingAdapterFor, toBase64Float32 } from "./adapters";
import { MalformedUpstreamError } from "../providers/errors";
import { testTarget } from "../providers/test-target";

describe("embedding adapters", () => {
  it("openai: always asks for floats, reorders by index and reads usage", async () => {
    const a = embeddingAdapterFor("openai")!;
    const req = a.buildRequest({ input: ["a", "b"], dimensions: 3 }, testTarget({ wireFormat: "openai" }), new AbortController().signal);
    expect(new URL(req.url).pathname.endsWith("/embeddings")).toBe(true);
    expect(await req.json()).toMatchObject({ input: ["a", "b"], dimensions: 3, encoding_format: "float" });
    const r = a.parseResponse({ data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }], usage: { prompt_tokens: 7 } }, { input: ["a", "b"] });
    expect(r).toEqual({ vectors: [[1], [2]], promptTokens: 7 });
    expect(() => a.parseResponse({ data: [{ embedding: "x" }] }, { input: ["a"] })).toThrow(MalformedUpstreamError);
  });

  it("google: one batchEmbedContents request per input with outputDimensionality; tokens estimated", async () => {
    const a = embeddingAdapterFor("google")!;
    const req = a.buildRequest({ input: ["hello world"], dimensions: 5 }, testTarget({ wireFormat: "google", providerId: "google-ai-studio" }), new AbortController().signal);
    expect(req.url).toMatch(/\/v1beta\/models\/[^/]+:batchEmbedContents$/);
    const body = (await req.json()) as { requests: Array<Record<string, unknown>> };
    expect(body.requests[0]).toMatchObject({ content: { parts: [{ text: "hello world" }] }, outputDimensionality: 5 });
    expect(a.parseResponse({ embeddings: [{ values: [0.5] }] }, { input: ["hello world"] })).toEqual({ vectors: [[0.5]], promptTokens: 3 });
    expect(embeddingAdapterFor("anthropic")).toBeUndefined();
  });

  it("encodes base64 as little-endian float32, like OpenAI", () => {
    const b64 = toBase64Float32([1, -2.5]);
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    expect(Array.from(new Float32Array(bytes.buffer))).toEqual([1, -2.5]);
  });
});
