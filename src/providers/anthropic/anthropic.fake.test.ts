/** The anthropic adapter against the fake Anthropic upstream. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, ReasoningDetail, StreamEvent } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { anthropicAdapter } from "./index";

const target = testTarget({ wireFormat: "anthropic", providerId: "anthropic", baseUrl: `${env.FAKE_UPSTREAM_URL}/anthropic`, externalId: "claude-fake", apiKey: "k" });
const tools = [
  { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: { tz: { type: "string" } } } } },
];

async function complete(req: ChatRequest) {
  const res = await fetch(await builtRequest(anthropicAdapter, req, target, { stream: false }));
  const text = await res.text();
  return { res, text };
}
async function stream(req: ChatRequest): Promise<StreamEvent[]> {
  const res = await fetch(await builtRequest(anthropicAdapter, req, target, { stream: true }));
  expect(res.status).toBe(200);
  return collectEvents(anthropicAdapter.parseStream(res.body!, target));
}

describe("anthropic adapter through the fake upstream", () => {
  it("a forced tool choice goes without thinking (Claude refuses the two together); auto keeps it", async () => {
    for (const tool_choice of ["required", { type: "function" as const, function: { name: "get_weather" } }] as const) {
      const { res, text } = await complete({ model: "m", tools, tool_choice, reasoning_effort: "high", max_tokens: 5000, messages: [{ role: "user", content: "weather? [[fake:tools]]" }] });
      expect(res.status, text).toBe(200);
      expect(anthropicAdapter.parseResponse(JSON.parse(text), target).choices[0]?.message.tool_calls?.length).toBeGreaterThan(0);
    }
    const auto = await builtRequest(anthropicAdapter, { model: "m", tools, tool_choice: "auto", reasoning_effort: "high", max_tokens: 5000, messages: [{ role: "user", content: "x" }] }, target, { stream: false });
    expect(((await auto.json()) as { thinking?: unknown }).thinking).toEqual({ type: "enabled", budget_tokens: expect.any(Number) });
  });

  it("completes with text and cache usage", async () => {
    const { res, text } = await complete({ model: "m", messages: [{ role: "system", content: "sys" }, { role: "user", content: "hello there [[fake:cached]]" }] });
    expect(res.status).toBe(200);
    const parsed = anthropicAdapter.parseResponse(JSON.parse(text), target);
    expect(parsed.choices[0]?.message.content).toBe("Hello from anthropic/claude-fake");
    // prompt = 4 words + 3 = 7; cached = 3, 5m writes = 1
    expect(parsed.usage).toMatchObject({ promptTokens: 7, cachedTokens: 3, cacheWrite5mTokens: 1, completionTokens: 3 });
  });

  it("streams reasoning and parallel tool calls; round-trips the tool results", async () => {
    const events = await stream({ model: "m", tools, reasoning_effort: "low", max_tokens: 5000, messages: [{ role: "user", content: "go [[fake:parallel_tools,reasoning]]" }] });
    const reasoning = events.flatMap((e) => (e.type === "delta" && e.delta.reasoning ? [e.delta.reasoning] : [])).join("");
    expect(reasoning).toBe("Thinking about claude-fake step by step.");
    const args = new Map<number, string>();
    const ids = new Map<number, string>();
    for (const e of events) if (e.type === "delta") for (const tc of e.delta.tool_calls ?? []) {
      args.set(tc.index, (args.get(tc.index) ?? "") + (tc.function.arguments ?? ""));
      if (tc.id) ids.set(tc.index, tc.id);
    }
    expect([...args.values()]).toEqual(['{"city":"test"}', '{"tz":"test"}']);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });

    const { text } = await complete({
      model: "m",
      tools,
      messages: [
        { role: "user", content: "go [[fake:parallel_tools]]" },
        { role: "assistant", content: null, tool_calls: [
          { id: ids.get(0)!, type: "function", function: { name: "get_weather", arguments: args.get(0)! } },
          { id: ids.get(1)!, type: "function", function: { name: "get_time", arguments: args.get(1)! } },
        ] },
        { role: "tool", tool_call_id: ids.get(0)!, content: "sunny" },
        { role: "tool", tool_call_id: ids.get(1)!, content: "noon" },
      ],
    });
    expect(anthropicAdapter.parseResponse(JSON.parse(text), target).choices[0]?.message.content).toBe("Tool result received: sunny");
  });

  it("round-trips signed thinking with thinking enabled; the fake refuses forged or missing thinking like the real API", async () => {
    const first: ChatRequest = { model: "m", tools, reasoning_effort: "low", max_tokens: 5000, messages: [{ role: "user", content: "go [[fake:tools,reasoning,redacted_thinking]]" }] };
    const events = await stream(first);
    const details = events.flatMap((e) => (e.type === "delta" ? e.delta.reasoning_details ?? [] : []));
    expect(details.map((d) => d.type)).toEqual(["reasoning.encrypted", "reasoning.text"]);
    const json = await complete(first);
    const message = anthropicAdapter.parseResponse(JSON.parse(json.text), target).choices[0]!.message;
    expect(message.reasoning_details?.map((d) => d.type)).toEqual(["reasoning.encrypted", "reasoning.text"]);
    const call = message.tool_calls![0]!;
    const next = (reasoning_details: ReasoningDetail[] | undefined): ChatRequest => ({
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: message.content, tool_calls: [call], ...(reasoning_details ? { reasoning_details } : {}) },
        { role: "tool", tool_call_id: call.id, content: "sunny" },
      ],
    });
    for (const sent of [details, message.reasoning_details]) {
      const ok = await complete(next(sent));
      expect(ok.res.status, ok.text).toBe(200);
      expect(JSON.parse(ok.text).content.at(-1)).toEqual({ type: "text", text: "Tool result received: sunny" });
    }
    const forged = await complete(next(details.map((d) => (d.type === "reasoning.text" ? { ...d, signature: "forged" } : d))));
    expect(forged.res.status).toBe(400);
    expect(anthropicAdapter.parseError(400, forged.text)).toEqual({ type: "invalid_request_error", message: "messages.1.content.1: Invalid `signature` in `thinking` block" });
    // Without the blocks the adapter leaves thinking off, so the request stays valid.
    const dropped = await complete(next(undefined));
    expect(dropped.res.status, dropped.text).toBe(200);
  });
  it("reports upstream errors, mid-stream errors and overloads", async () => {
    const { res, text } = await complete({ model: "m", messages: [{ role: "user", content: "[[fake:status=529]]" }] });
    expect(res.status).toBe(529);
    expect(anthropicAdapter.parseError(529, text)).toEqual({ message: "fake upstream error 529", type: "overloaded_error" });
    const events = await stream({ model: "m", messages: [{ role: "user", content: "x [[fake:error_midstream]]" }] });
    expect(events.at(-1)).toEqual({ type: "error", message: "Overloaded", errorType: "overloaded_error" });
  });
});
