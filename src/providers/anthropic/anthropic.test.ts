import { describe, expect, it } from "vitest";
import type { ChatRequest, ReasoningDetail, StreamEvent } from "../types";
import { builtRequest, bytesStream, collectEvents, testTarget } from "../test-target";
import { anthropicAdapter } from "./index";
import { buildAnthropicBody } from "./request";
import { parseAnthropicUsage } from "./response";

const target = testTarget({ wireFormat: "anthropic", providerId: "anthropic", baseUrl: "https://api.anthropic.test", externalId: "claude-x", apiKey: "ak", mapping: { maxOutput: 64000 } });

describe("anthropic adapter: request", () => {
  it("posts to /v1/messages with x-api-key and anthropic-version", async () => {
    const r = await builtRequest(anthropicAdapter, { model: "m", messages: [{ role: "user", content: "hi" }] }, target, { stream: true });
    expect(r.url).toBe("https://api.anthropic.test/v1/messages");
    expect(r.headers.get("x-api-key")).toBe("ak");
    expect(r.headers.get("anthropic-version")).toBe("2023-06-01");
    expect(r.headers.get("authorization")).toBeNull();
    expect(await r.json()).toEqual({ model: "claude-x", max_tokens: 64000, stream: true, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
  });

  it("lifts system/developer messages, merges same roles, converts images and files", () => {
    const body = buildAnthropicBody(
      {
        model: "m",
        max_completion_tokens: 100,
        temperature: 0.5,
        top_p: 0.9,
        stop: "END",
        user: "u-1",
        messages: [
          { role: "system", content: "be brief" },
          { role: "developer", content: [{ type: "text", text: "and kind" }] },
          { role: "user", content: "one" },
          { role: "user", content: [
            { type: "text", text: "two" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "image_url", image_url: { url: "https://img.test/cat.jpg" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
          ] },
        ],
      },
      target,
      { stream: false },
    );
    expect(body).toEqual({
      model: "claude-x",
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ["END"],
      metadata: { user_id: "u-1" },
      system: [{ type: "text", text: "be brief" }, { type: "text", text: "and kind" }],
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          { type: "image", source: { type: "url", url: "https://img.test/cat.jpg" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } },
        ],
      }],
    });
  });

  it("maps tools, tool_choice, parallel_tool_calls and the tool round trip", () => {
    const req: ChatRequest = {
      model: "m",
      tools: [{ type: "function", function: { name: "get_weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
      tool_choice: "required",
      parallel_tool_calls: false,
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: "checking", tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: "not json" } },
        ] },
        { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
        { role: "tool", tool_call_id: "toolu_2", content: [{ type: "text", text: "rain" }] },
        { role: "user", content: "thanks" },
      ],
    };
    const body = buildAnthropicBody(req, target, { stream: false });
    expect(body.tools).toEqual([{ name: "get_weather", description: "w", input_schema: { type: "object", properties: { city: { type: "string" } } } }]);
    expect(body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      { role: "assistant", content: [
        { type: "text", text: "checking" },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} },
      ] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "rain" },
        { type: "text", text: "thanks" },
      ] },
    ]);
    const choice = (c: ChatRequest["tool_choice"], p?: boolean) => buildAnthropicBody({ ...req, tool_choice: c, parallel_tool_calls: p }, target, { stream: false }).tool_choice;
    expect(choice("auto")).toEqual({ type: "auto" });
    expect(choice("none")).toEqual({ type: "none" });
    expect(choice({ type: "function", function: { name: "get_weather" } })).toEqual({ type: "tool", name: "get_weather" });
    expect(choice(undefined, false)).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(choice(undefined)).toBeUndefined();
  });

  it("turns reasoning_effort into a thinking budget below max_tokens and drops temperature", () => {
    const b = buildAnthropicBody({ model: "m", reasoning_effort: "medium", temperature: 0.3, max_tokens: 20000, messages: [{ role: "user", content: "x" }] }, target, { stream: false });
    expect(b.thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
    expect(b.max_tokens).toBe(20000);
    expect(b).not.toHaveProperty("temperature");
    const small = buildAnthropicBody({ model: "m", reasoning_effort: "high", max_tokens: 1000, messages: [{ role: "user", content: "x" }] }, target, { stream: false });
    expect(small.max_tokens).toBe(25576);
    expect(small.thinking).toEqual({ type: "enabled", budget_tokens: 24576 });
    const none = buildAnthropicBody({ model: "m", reasoning_effort: "none", messages: [{ role: "user", content: "x" }] }, target, { stream: false });
    expect(none).not.toHaveProperty("thinking");
    const noReasoning = testTarget({ wireFormat: "anthropic", mapping: { reasoning: false } });
    expect(buildAnthropicBody({ model: "m", reasoning_effort: "high", messages: [{ role: "user", content: "x" }] }, noReasoning, { stream: false })).not.toHaveProperty("thinking");
  });

  it("sends signed thinking blocks back unchanged and first, never unsigned reasoning", () => {
    const body = buildAnthropicBody({
      model: "m",
      reasoning_effort: "low",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "Let me check.",
          reasoning: "plan",
          reasoning_details: [
            { type: "reasoning.text", text: "plan", signature: "sig", format: "anthropic-claude-v1", index: 0 },
            { type: "reasoning.text", text: "unsigned" },
            { type: "reasoning.encrypted", data: "opaque" },
          ],
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "ok" },
      ],
    }, target, { stream: false });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [
        { type: "thinking", thinking: "plan", signature: "sig" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "toolu_1", name: "f", input: {} },
      ] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] },
    ]);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });
  it("does not enable thinking when the last tool-use turn has no signed thinking to send back", () => {
    const turn = (details?: ReasoningDetail[]): ChatRequest => ({
      model: "m",
      reasoning_effort: "low",
      temperature: 0.5,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, reasoning: "from another provider", ...(details ? { reasoning_details: details } : {}), tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "t1", content: "ok" },
      ],
    });
    const unsigned = buildAnthropicBody(turn([{ type: "reasoning.text", text: "x" }]), target, { stream: false });
    expect(unsigned).not.toHaveProperty("thinking");
    expect(unsigned.temperature).toBe(0.5);
    expect((unsigned.messages as Array<{ content: Array<{ type: string }> }>)[1]!.content.map((b) => b.type)).toEqual(["tool_use"]);
    expect(buildAnthropicBody(turn(), target, { stream: false })).not.toHaveProperty("thinking");
    // A turn without tool use needs no thinking block.
    expect(buildAnthropicBody({ model: "m", reasoning_effort: "low", messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }] }, target, { stream: false }).thinking).toBeDefined();
  });
  it("keeps cache_control breakpoints on system and user text blocks", () => {
    const body = buildAnthropicBody({
      model: "m",
      messages: [
        { role: "system", content: [{ type: "text", text: "long context", cache_control: { type: "ephemeral", ttl: "1h" } }] },
        { role: "user", content: [{ type: "text", text: "doc", cache_control: { type: "ephemeral" } }, { type: "text", text: "q" }] },
      ],
    }, target, { stream: false });
    expect(body.system).toEqual([{ type: "text", text: "long context", cache_control: { type: "ephemeral", ttl: "1h" } }]);
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "doc", cache_control: { type: "ephemeral" } }, { type: "text", text: "q" }] }]);
  });

  it("rejects audio input with a 400", () => {
    expect(() => buildAnthropicBody({ model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }] }, target, { stream: false })).toThrow(/audio/);
  });
});

describe("anthropic adapter: response", () => {
  it("parses text, thinking, tool_use, stop reason and cache usage (prompt includes cache tokens)", () => {
    const parsed = anthropicAdapter.parseResponse(
      {
        id: "msg_1",
        type: "message",
        model: "claude-x-2025",
        content: [
          { type: "thinking", thinking: "hmm", signature: "s" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 }, output_tokens: 7 },
      },
      target,
    );
    expect(parsed.upstreamId).toBe("msg_1");
    expect(parsed.choices).toEqual([{
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Let me check.",
        reasoning: "hmm",
        reasoning_details: [
          { type: "reasoning.text", text: "hmm", signature: "s", format: "anthropic-claude-v1", index: 0 },
          { type: "reasoning.encrypted", data: "opaque", format: "anthropic-claude-v1", index: 1 },
        ],
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
    }]);
    expect(parsed.usage).toMatchObject({ promptTokens: 160, cachedTokens: 100, cacheWrite5mTokens: 20, cacheWrite1hTokens: 30, completionTokens: 7 });
  });

  it("keeps no reasoning_details when no thinking block is signed", () => {
    const parsed = anthropicAdapter.parseResponse({ content: [{ type: "thinking", thinking: "t" }, { type: "text", text: "x" }], stop_reason: "end_turn", usage: {} }, target);
    expect(parsed.choices[0]?.message).toEqual({ role: "assistant", content: "x", reasoning: "t" });
  });
  it("counts cache writes without a TTL split as 5-minute writes", () => {
    expect(parseAnthropicUsage({ input_tokens: 1, cache_creation_input_tokens: 9, output_tokens: 2 })).toMatchObject({ promptTokens: 10, cacheWrite5mTokens: 9, cacheWrite1hTokens: 0 });
  });

  it.each([["end_turn", "stop"], ["stop_sequence", "stop"], ["max_tokens", "length"], ["refusal", "content_filter"]])("stop_reason %s -> %s", (raw, fr) => {
    expect(anthropicAdapter.parseResponse({ content: [{ type: "text", text: "x" }], stop_reason: raw, usage: {} }, target).choices[0]?.finish_reason).toBe(fr);
  });

  it("parses Anthropic error bodies", () => {
    expect(anthropicAdapter.parseError(529, JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))).toEqual({ message: "Overloaded", type: "overloaded_error" });
  });
});

describe("anthropic adapter: stream", () => {
  const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  it("maps the event sequence to deltas, tool call pieces, finish and usage", async () => {
    const body = bytesStream([
      ev("message_start", { type: "message_start", message: { id: "m", usage: { input_tokens: 5, cache_read_input_tokens: 10, cache_creation_input_tokens: 0, output_tokens: 1 } } }),
      ev("ping", { type: "ping" }),
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "plan" } }),
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } }),
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "-more" } }),
      ev("content_block_stop", { type: "content_block_stop", index: 0 }),
      ev("content_block_start", { type: "content_block_start", index: 9, content_block: { type: "redacted_thinking", data: "opaque" } }),
      ev("content_block_stop", { type: "content_block_stop", index: 9 }),
      ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }),
      ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hi" } }),
      ev("content_block_start", { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_a", name: "f", input: {} } }),
      ev("content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"a":' } }),
      ev("content_block_start", { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_b", name: "g", input: {} } }),
      ev("content_block_delta", { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: "{}" } }),
      ev("content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "1}" } }),
      ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 42 } }),
      ev("message_stop", { type: "message_stop" }),
    ]);
    const events = await collectEvents(anthropicAdapter.parseStream(body, target));
    const deltas = events.filter((e) => e.type === "delta").map((e) => (e as Extract<StreamEvent, { type: "delta" }>).delta);
    expect(deltas).toEqual([
      { role: "assistant" },
      { reasoning: "plan" },
      { reasoning_details: [{ type: "reasoning.text", text: "plan", signature: "sig-more", format: "anthropic-claude-v1", index: 0 }] },
      { reasoning_details: [{ type: "reasoning.encrypted", data: "opaque", format: "anthropic-claude-v1", index: 1 }] },
      { content: "Hi" },
      { tool_calls: [{ index: 0, id: "toolu_a", type: "function", function: { name: "f", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 1, id: "toolu_b", type: "function", function: { name: "g", arguments: "" } }] },
      { tool_calls: [{ index: 1, function: { arguments: "{}" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "1}" } }] },
    ]);
    expect(events).toContainEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    const last = events.filter((e) => e.type === "usage").pop();
    expect(last).toMatchObject({ usage: { promptTokens: 15, cachedTokens: 10, completionTokens: 42 } });
  });

  it("turns error events into error StreamEvents", async () => {
    const events = await collectEvents(anthropicAdapter.parseStream(bytesStream([ev("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })]), target));
    expect(events).toEqual([{ type: "error", message: "Overloaded", errorType: "overloaded_error" }]);
  });
});
