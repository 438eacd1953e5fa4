/** The bedrock adapter against the fake Bedrock runtime (JSON and binary eventstream). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, StreamEvent, UpstreamTarget } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { bedrockAdapter } from "./index";

const bearer = testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", baseUrl: `${env.FAKE_UPSTREAM_URL}/aws-bedrock`, externalId: "anthropic.claude-fake-v1:0", apiKey: "bedrock-key" });
const sigv4 = { ...bearer, apiKey: "", settings: { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "secret", AWS_BEDROCK_REGION: "us-east-1" } };

async function complete(req: ChatRequest, t: UpstreamTarget = bearer) {
  const res = await fetch(await builtRequest(bedrockAdapter, req, t, { stream: false }));
  return { res, text: await res.text() };
}
async function stream(req: ChatRequest, t: UpstreamTarget = bearer): Promise<StreamEvent[]> {
  const res = await fetch(await builtRequest(bedrockAdapter, req, t, { stream: true }));
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

  it("enforces Claude's thinking rule: signed and redacted reasoning go back as issued, forged or missing ones are a ValidationException", async () => {
    const tools = [{ type: "function" as const, function: { name: "a", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const first: ChatRequest = { model: "m", tools, reasoning_effort: "low", messages: [{ role: "user", content: "go [[fake:tools,reasoning,redacted_thinking]]" }] };
    const { res, text } = await complete(first);
    expect(res.status, text).toBe(200);
    const assistant = bedrockAdapter.parseResponse(JSON.parse(text), bearer).choices[0]!.message;
    expect(assistant.reasoning_details).toEqual([
      { type: "reasoning.encrypted", data: expect.any(String), format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.text", text: assistant.reasoning, signature: expect.stringMatching(/^fake-thinking-/), format: "anthropic-claude-v1", index: 1 },
    ]);
    const next = (a: typeof assistant): ChatRequest => ({ ...first, messages: [...first.messages, { ...a, role: "assistant" }, { role: "tool", tool_call_id: a.tool_calls![0]!.id, content: "sunny" }] });
    const kept = await complete(next(assistant));
    expect(kept.res.status, kept.text).toBe(200);
    expect(bedrockAdapter.parseResponse(JSON.parse(kept.text), bearer).choices[0]!.message.content).toBe("Tool result received: sunny");

    // The streamed blocks (signature and redactedContent in their own deltas) go back as well.
    const events = await stream(first);
    const streamed = events.flatMap((e) => (e.type === "delta" ? (e.delta.reasoning_details ?? []) : []));
    expect(streamed).toEqual([
      { type: "reasoning.encrypted", data: expect.stringMatching(/^ZmFrZS1yZWRhY3Rl/), format: "anthropic-claude-v1", index: 0 },
      assistant.reasoning_details![1],
    ]);
    const keptStream = await stream(next({ ...assistant, reasoning_details: streamed }));
    expect(keptStream.flatMap((e) => (e.type === "delta" && e.delta.content ? [e.delta.content] : [])).join("")).toBe("Tool result received: sunny");

    const forged = await complete(next({ ...assistant, reasoning_details: [{ type: "reasoning.text", text: assistant.reasoning ?? "", signature: "forged" }] }));
    expect(forged.res.status).toBe(400);
    expect(forged.res.headers.get("x-amzn-errortype")).toBe("ValidationException");
    expect(bedrockAdapter.parseError(400, forged.text).message).toMatch(/Invalid `signature` in `thinking` block/);
    const badRedacted = await complete(next({ ...assistant, reasoning_details: [{ type: "reasoning.encrypted", data: btoa("forged.x") }] }));
    expect(badRedacted.res.status).toBe(400);

    // The raw upstream rule: thinking on and a final tool-use turn without a leading reasoning block.
    const body = { messages: [
      { role: "user", content: [{ text: "go" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "a", input: {} } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "t1", content: [{ text: "sunny" }] } }] },
    ], additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 2048 } } };
    const raw = await fetch(`${env.FAKE_UPSTREAM_URL}/aws-bedrock/model/anthropic.claude-fake-v1%3A0/converse`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", authorization: "Bearer k" } });
    expect(raw.status).toBe(400);
    expect(raw.headers.get("x-amzn-errortype")).toBe("ValidationException");
    expect(((await raw.json()) as { message: string }).message).toMatch(/Expected `thinking` or `redacted_thinking`, but found `tool_use`/);
  });

  it("rejects unsigned requests and maps error statuses", async () => {
    const unsigned = await fetch(`${env.FAKE_UPSTREAM_URL}/aws-bedrock/model/x/converse`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(unsigned.status).toBe(403);
    const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "[[fake:status=429]]" }] });
    expect(res.status).toBe(429);
    expect(bedrockAdapter.parseError(429, text)).toEqual({ message: "fake upstream error 429", type: "rate_limit_error" });
  });
});
