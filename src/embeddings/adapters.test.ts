import { describe, expect, it } from "vitest";
import { embeddingAdapterFor, toBase64Float32 } from "./adapters";
import { MalformedUpstreamError } from "../providers/errors";
import { testTarget } from "../providers/test-target";
import type { UpstreamCall } from "../providers/types";
import { upstreamRequest } from "../providers/test-target";

/**
 * The upstream request goes to fetch as (url, init), not as a Request that fetch would copy: a
 * JSON POST with the attempt's signal (its timeout) that never follows redirects.
 */
function expectCallBasics(call: UpstreamCall, signal: AbortSignal): void {
  expect(call.init).toMatchObject({ method: "POST", redirect: "manual" });
  expect(call.init.signal).toBe(signal);
  expect(new Headers(call.init.headers).get("content-type")).toBe("application/json");
  expect(typeof call.init.body).toBe("string");
}

describe("embedding adapters", () => {
  it("openai: always asks for floats, reorders by index and reads usage", async () => {
    const a = embeddingAdapterFor("openai")!;
    const signal = new AbortController().signal;
    const call = a.buildCall({ input: ["a", "b"], dimensions: 3 }, testTarget({ wireFormat: "openai", apiKey: "sk-e" }), signal);
    expectCallBasics(call, signal);
    const req = upstreamRequest(call);
    expect(req.headers.get("authorization")).toBe("Bearer sk-e");
    expect(new URL(req.url).pathname.endsWith("/embeddings")).toBe(true);
    expect(await req.json()).toMatchObject({ input: ["a", "b"], dimensions: 3, encoding_format: "float" });
    const r = a.parseResponse({ data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }], usage: { prompt_tokens: 7 } }, { input: ["a", "b"] });
    expect(r).toEqual({ vectors: [[1], [2]], promptTokens: 7 });
    expect(() => a.parseResponse({ data: [{ embedding: "x" }] }, { input: ["a"] })).toThrow(MalformedUpstreamError);
  });

  it("google: one batchEmbedContents request per input with outputDimensionality; tokens estimated", async () => {
    const a = embeddingAdapterFor("google")!;
    const signal = new AbortController().signal;
    const call = a.buildCall({ input: ["hello world"], dimensions: 5 }, testTarget({ wireFormat: "google", providerId: "google-ai-studio", apiKey: "gk" }), signal);
    expectCallBasics(call, signal);
    const req = upstreamRequest(call);
    expect(req.headers.get("x-goog-api-key")).toBe("gk");
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
