/** The openai adapter against the fake OpenAI-compatible upstream (real HTTP, real SSE). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, StreamEvent } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { openaiAdapter } from "./index";

const target = (provider: "groq" | "together-ai" = "groq") =>
  testTarget({ wireFormat: "openai", providerId: provider, baseUrl: `${env.FAKE_UPSTREAM_URL}/${provider}`, externalId: "llama-fake", apiKey: "k" });

const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: "x", messages: [{ role: "user", content: text }], ...extra });

async function complete(request: ChatRequest, t = target()) {
  const res = await fetch(await builtRequest(openaiAdapter, request, t, { stream: false }));
  return { res, text: await res.text() };
}

async function stream(request: ChatRequest, t = target()): Promise<StreamEvent[]> {
  const res = await fetch(await builtRequest(openaiAdapter, request, t, { stream: true }));
  expect(res.status).toBe(200);
  return collectEvents(openaiAdapter.parseStream(res.body!, t));
}

describe("openai adapter through the fake upstream", () => {
  it("completes with deterministic text and usage", async () => {
    const { res, text } = await complete(ask("say hello please"));
    expect(res.status).toBe(200);
    const parsed = openaiAdapter.parseResponse(JSON.parse(text), target());
    expect(parsed.choices[0]?.message.content).toBe("Hello from groq/llama-fake");
    expect(parsed.choices[0]?.finish_reason).toBe("stop");
    expect(parsed.usage.promptTokens).toBe(3 + 3);
    expect(parsed.usage.completionTokens).toBe(3);
  });

  it("streams text, usage and finish", async () => {
    const events = await stream(ask("hi [[fake:cached,reasoning]]"));
    const text = events.flatMap((e) => (e.type === "delta" && e.delta.content ? [e.delta.content] : [])).join("");
    const reasoning = events.flatMap((e) => (e.type === "delta" && e.delta.reasoning ? [e.delta.reasoning] : [])).join("");
    expect(text).toBe("Hello from groq/llama-fake");
    expect(reasoning).toBe("Thinking about llama-fake step by step.");
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "stop" });
    const usage = events.filter((e) => e.type === "usage").pop();
    expect(usage).toMatchObject({ usage: { promptTokens: 5, cachedTokens: 2, reasoningTokens: 6, completionTokens: 3 + 6 } });
  });

  it("streams parallel tool calls with stable indexes", async () => {
    const tools = [
      { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
      { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: { tz: { type: "string" } } } } },
    ];
    const events = await stream(ask("weather and time [[fake:parallel_tools]]", { tools }));
    const calls = new Map<number, { id?: string; name?: string; args: string }>();
    for (const e of events) {
      if (e.type !== "delta") continue;
      for (const tc of e.delta.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { args: "" };
        if (tc.id) c.id = tc.id;
        if (tc.function.name) c.name = tc.function.name;
        c.args += tc.function.arguments ?? "";
        calls.set(tc.index, c);
      }
    }
    expect([...calls.values()]).toEqual([
      { id: "call_fake_0", name: "get_weather", args: '{"city":"test"}' },
      { id: "call_fake_1", name: "get_time", args: '{"tz":"test"}' },
    ]);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
  });

  it("answers a tool result with text (tool round trip)", async () => {
    const { text } = await complete({
      model: "x",
      messages: [
        { role: "user", content: "weather? [[fake:tools]]" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_fake_0", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_fake_0", content: "sunny" },
      ],
    });
    expect(openaiAdapter.parseResponse(JSON.parse(text), target()).choices[0]?.message.content).toBe("Tool result received: sunny");
  });

  it("applies provider-scoped directives only under that provider", async () => {
    const msg = ask("hi [[fake@groq:status=500]]");
    const failed = await complete(msg, target("groq"));
    expect(failed.res.status).toBe(500);
    expect(openaiAdapter.parseError(500, failed.text)).toEqual({ message: "fake upstream error 500", type: "server_error" });
    const ok = await complete(msg, target("together-ai"));
    expect(ok.res.status).toBe(200);
  });

  it("sends retry-after on 429", async () => {
    const { res } = await complete(ask("[[fake:status=429,retry_after=1]]"));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
  });

  it("surfaces a mid-stream error and a truncated stream without finish", async () => {
    const err = await stream(ask("hi [[fake:error_midstream]]"));
    expect(err.at(-1)).toEqual({ type: "error", message: "fake upstream failed mid-stream", errorType: "server_error" });
    const cut = await stream(ask("one two three [[fake:truncate]]"));
    expect(cut.some((e) => e.type === "finish")).toBe(false);
  });
});
