/** The google adapter against the fake Gemini upstream (AI Studio and Vertex). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, StreamEvent, UpstreamTarget } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { googleAdapter } from "./index";

const studio = testTarget({ wireFormat: "google", providerId: "google-ai-studio", baseUrl: `${env.FAKE_UPSTREAM_URL}/google-ai-studio`, externalId: "gemini-fake", apiKey: "k" });
const vertex = testTarget({ wireFormat: "google", providerId: "google-vertex", baseUrl: `${env.FAKE_UPSTREAM_URL}/google-vertex`, externalId: "gemini-fake", apiKey: "tok" });

async function complete(req: ChatRequest, t: UpstreamTarget = studio) {
  const res = await fetch(await builtRequest(googleAdapter, req, t, { stream: false }));
  return { res, text: await res.text() };
}
async function stream(req: ChatRequest, t: UpstreamTarget = studio): Promise<StreamEvent[]> {
  const res = await fetch(await builtRequest(googleAdapter, req, t, { stream: true }));
  expect(res.status).toBe(200);
  return collectEvents(googleAdapter.parseStream(res.body!, t));
}

describe("google adapter through the fake upstream", () => {
  it("completes on AI Studio and Vertex", async () => {
    for (const t of [studio, vertex]) {
      const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "hi there [[fake:reasoning]]" }] }, t);
      expect(res.status).toBe(200);
      const parsed = googleAdapter.parseResponse(JSON.parse(text), t);
      expect(parsed.choices[0]?.message.content).toBe(`Hello from ${t.provider.id}/gemini-fake`);
      expect(parsed.choices[0]?.message.reasoning).toBe("Thinking about gemini-fake step by step.");
      expect(parsed.usage).toMatchObject({ promptTokens: 6, reasoningTokens: 6, completionTokens: 9 });
    }
  });

  it("returns generated images as data URLs", async () => {
    const { text } = await complete({ model: "m", modalities: ["image", "text"], messages: [{ role: "user", content: "draw [[fake:image]]" }] });
    const parsed = googleAdapter.parseResponse(JSON.parse(text), studio);
    expect(parsed.choices[0]?.message.images?.[0]?.image_url.url).toMatch(/^data:image\/png;base64,/);
    expect(parsed.usage.imageOutputTokens).toBe(1290);
  });

  it("streams parallel tool calls and round-trips the result", async () => {
    const tools = [
      { type: "function" as const, function: { name: "a", parameters: { type: "object", properties: { x: { type: "integer" } } } } },
      { type: "function" as const, function: { name: "b", parameters: { type: "object", properties: {} } } },
    ];
    const events = await stream({ model: "m", tools, messages: [{ role: "user", content: "go [[fake:parallel_tools]]" }] });
    const calls = events.flatMap((e) => (e.type === "delta" ? e.delta.tool_calls ?? [] : []));
    expect(calls.map((c) => [c.index, c.function.name, c.function.arguments])).toEqual([[0, "a", '{"x":1}'], [1, "b", "{}"]]);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    const { text } = await complete({
      model: "m",
      tools,
      messages: [
        { role: "user", content: "go [[fake:parallel_tools]]" },
        { role: "assistant", content: null, tool_calls: calls.map((c) => ({ id: c.id!, type: "function" as const, function: { name: c.function.name!, arguments: c.function.arguments! } })) },
        { role: "tool", tool_call_id: calls[0]!.id!, content: "42" },
      ],
    });
    expect(googleAdapter.parseResponse(JSON.parse(text), studio).choices[0]?.message.content).toBe("Tool result received: 42");
  });

  it("maps errors and mid-stream errors", async () => {
    const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "[[fake@google-vertex:status=429]]" }] }, vertex);
    expect(res.status).toBe(429);
    expect(googleAdapter.parseError(429, text)).toEqual({ message: "fake upstream error 429", type: "RESOURCE_EXHAUSTED" });
    const events = await stream({ model: "m", messages: [{ role: "user", content: "x [[fake:error_midstream]]" }] });
    expect(events.at(-1)).toMatchObject({ type: "error", errorType: "UNAVAILABLE", status: 503 });
  });
});
