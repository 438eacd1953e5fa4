/** The bedrock adapter against the fake Bedrock runtime (JSON and binary eventstream). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, StreamEvent, UpstreamTarget } from "../types";
import { collectEvents, testTarget } from "../test-target";
import { bedrockAdapter } from "./index";

const bearer = testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", baseUrl: `${env.FAKE_UPSTREAM_URL}/aws-bedrock`, externalId: "anthropic.claude-fake-v1:0", apiKey: "bedrock-key" });
const sigv4 = { ...bearer, apiKey: "", settings: { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "secret", AWS_BEDROCK_REGION: "us-east-1" } };

async function complete(req: ChatRequest, t: UpstreamTarget = bearer) {
  const res = await fetch(await bedrockAdapter.buildRequest(req, t, { stream: false }));
  return { res, text: await res.text() };
}
async function stream(req: ChatRequest, t: UpstreamTarget = bearer): Promise<StreamEvent[]> {
  const res = await fetch(await bedrockAdapter.buildRequest(req, t, { stream: true }));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
  return collectEvents(bedrockAdapter.parseStream(res.body!, t));
}

describe("bedrock adapter through the fake upstream", () => {
  it("completes with Bearer and with SigV4", async () => {
    for (const t of [bearer, sigv4]) {
      const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "hello [[fake:cached]]" }] }, t);
      expect(res.status).toBe(200);
      const parsed = bedrockAdapter.parseResponse(JSON.parse(text), t);
      expect(parsed.choices[0]?.message.content).toBe("Hello from aws-bedrock/anthropic.claude-fake-v1:0");
      expect(parsed.usage).toMatchObject({ promptTokens: 5, cachedTokens: 2, cacheWrite5mTokens: 1, completionTokens: 3 });
    }
  });

  it("streams text, reasoning, parallel tool calls, finish and usage over the eventstream", async () => {
    const tools = [
      { type: "function" as const, function: { name: "a", parameters: { type: "object", properties: { q: { type: "string" } } } } },
      { type: "function" as const, function: { name: "b", parameters: { type: "object", properties: { n: { type: "number" } } } } },
    ];
    const events = await stream({ model: "m", tools, messages: [{ role: "user", content: "go [[fake:parallel_tools,reasoning]]" }] }, sigv4);
    expect(events[0]).toEqual({ type: "delta", choiceIndex: 0, delta: { role: "assistant" } });
    expect(events.flatMap((e) => (e.type === "delta" && e.delta.reasoning ? [e.delta.reasoning] : [])).join("")).toBe("Thinking about anthropic.claude-fake-v1:0 step by step.");
    const args = new Map<number, string>();
    for (const e of events) if (e.type === "delta") for (const tc of e.delta.tool_calls ?? []) args.set(tc.index, (args.get(tc.index) ?? "") + (tc.function.arguments ?? ""));
    expect([...args.entries()]).toEqual([[0, '{"q":"test"}'], [1, '{"n":1}']]);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    expect(events.at(-1)).toMatchObject({ type: "usage", usage: { completionTokens: 6 + 20 } });
  });

  it("streams plain text and reports exceptions and corrupt frames", async () => {
    const ok = await stream({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(ok.flatMap((e) => (e.type === "delta" && e.delta.content ? [e.delta.content] : [])).join("")).toBe("Hello from aws-bedrock/anthropic.claude-fake-v1:0");
    const ex = await stream({ model: "m", messages: [{ role: "user", content: "hi [[fake:error_midstream]]" }] });
    expect(ex.at(-1)).toEqual({ type: "error", message: "fake upstream failed mid-stream", errorType: "modelStreamErrorException", status: 424 });
    const bad = await stream({ model: "m", messages: [{ role: "user", content: "hi [[fake:malformed]]" }] });
    expect(bad.at(-1)).toMatchObject({ type: "error", errorType: "malformed_response" });
  });

  it("rejects unsigned requests and maps error statuses", async () => {
    const unsigned = await fetch(`${env.FAKE_UPSTREAM_URL}/aws-bedrock/model/x/converse`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(unsigned.status).toBe(403);
    const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "[[fake:status=429]]" }] });
    expect(res.status).toBe(429);
    expect(bedrockAdapter.parseError(429, text)).toEqual({ message: "fake upstream error 429", type: "rate_limit_error" });
  });
});
