import { describe, expect, it } from "vitest";
import type { ChatRequest, StreamEvent } from "../types";
import { builtRequest, bytesStream, collectEvents, testTarget } from "../test-target";
import { openaiAdapter } from "./index";
import { buildOpenAIBody } from "./request";
import { parseOpenAIUsage } from "./usage";

const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "groq/llama",
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

describe("openai adapter: request", () => {
  it("targets baseUrl + chat path with Bearer auth and the external model id", async () => {
    const t = testTarget({ wireFormat: "openai", baseUrl: "https://up.test/v1", externalId: "llama-3.3-70b", apiKey: "sk-op" });
    const r = await builtRequest(openaiAdapter, req({ temperature: 0.2, seed: 7, n: 1 }), t, { stream: false });
    expect(r.url).toBe("https://up.test/v1/chat/completions");
    expect(r.method).toBe("POST");
    expect(r.headers.get("authorization")).toBe("Bearer sk-op");
    expect(r.headers.get("content-type")).toBe("application/json");
    const body = (await r.json()) as Record<string, unknown>;
    expect(body).toEqual({ model: "llama-3.3-70b", messages: [{ role: "user", content: "hi" }], temperature: 0.2, seed: 7, n: 1 });
  });

  it("gives the attempt the same request as fetch's arguments (one Request in the runtime instead of a copy)", async () => {
    const t = testTarget({ wireFormat: "openai", baseUrl: "https://up.test/v1", apiKey: "sk-op" });
    const signal = new AbortController().signal;
    for (const stream of [false, true]) {
      const built = await builtRequest(openaiAdapter, req({ temperature: 0.2 }), t, { stream, signal });
      const call = await openaiAdapter.buildCall(req({ temperature: 0.2 }), t, { stream, signal });
      const made = new Request(call.url, call.init);
      expect([made.url, made.method, made.redirect, [...made.headers]]).toEqual([built.url, built.method, built.redirect, [...built.headers]]);
      expect(made.redirect).toBe("manual");
      expect(call.init.signal).toBe(signal);
      expect(await made.json()).toEqual(await built.json());
    }
  });

  it("uses quirks.chatPath", async () => {
    const t = testTarget({ wireFormat: "openai", baseUrl: "https://up.test", quirks: { chatPath: "/api/v1/chat/completions" } });
    expect((await builtRequest(openaiAdapter, req(), t, { stream: false })).url).toBe("https://up.test/api/v1/chat/completions");
  });

  it("forwards every OpenAI field and drops non-OpenAI fields", () => {
    const full = {
      ...req(),
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: "auto",
      parallel_tool_calls: false,
      top_p: 0.9,
      stop: ["x"],
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      logit_bias: { "1": 2 },
      logprobs: true,
      top_logprobs: 2,
      response_format: { type: "json_object" },
      reasoning_effort: "low",
      user: "u1",
      modalities: ["text"],
      gateway_only_field: "nope",
    } as unknown as ChatRequest;
    const body = buildOpenAIBody(full, testTarget({ wireFormat: "openai" }), { stream: false });
    expect(body).toMatchObject({ tool_choice: "auto", parallel_tool_calls: false, top_p: 0.9, stop: ["x"], logit_bias: { "1": 2 }, top_logprobs: 2, reasoning_effort: "low", user: "u1", modalities: ["text"] });
    expect(body.tools).toEqual(full.tools);
    expect(body).not.toHaveProperty("gateway_only_field");
  });

  it("puts the output cap in the quirk's field (max_completion_tokens wins over max_tokens)", () => {
    const t = testTarget({ wireFormat: "openai", quirks: { maxTokensField: "max_completion_tokens" } });
    expect(buildOpenAIBody(req({ max_tokens: 10 }), t, { stream: false })).toMatchObject({ max_completion_tokens: 10 });
    expect(buildOpenAIBody(req({ max_tokens: 10 }), t, { stream: false })).not.toHaveProperty("max_tokens");
    const dflt = buildOpenAIBody(req({ max_completion_tokens: 20, max_tokens: 10 }), testTarget({ wireFormat: "openai" }), { stream: false });
    expect(dflt.max_tokens).toBe(20);
    expect(dflt).not.toHaveProperty("max_completion_tokens");
  });

  it("drops unsupported params and renames assistant reasoning per quirk", () => {
    const t = testTarget({ wireFormat: "openai", quirks: { unsupportedParams: ["seed", "logit_bias"], reasoningField: "reasoning_content" } });
    const body = buildOpenAIBody(
      req({ seed: 1, logit_bias: { "1": 1 }, messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a", reasoning: "because" }] }),
      t,
      { stream: false },
    );
    expect(body).not.toHaveProperty("seed");
    expect(body).not.toHaveProperty("logit_bias");
    expect(body.messages).toEqual([{ role: "user", content: "q" }, { role: "assistant", content: "a", reasoning_content: "because" }]);
    const plain = buildOpenAIBody(req({ messages: [{ role: "assistant", content: "a", reasoning: "r" }] }), testTarget({ wireFormat: "openai" }), { stream: false });
    expect(plain.messages).toEqual([{ role: "assistant", content: "a" }]);
  });

  it("drops Anthropic-only cache_control markers from content parts", () => {
    const body = buildOpenAIBody(req({ messages: [{ role: "user", content: [{ type: "text", text: "a", cache_control: { type: "ephemeral" } }] }] }), testTarget({ wireFormat: "openai" }), { stream: false });
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "a" }] }]);
  });

  it("asks for stream usage unless the quirk says the provider does not understand it", () => {
    const s = buildOpenAIBody(req({ stream: true, stream_options: { include_usage: false } }), testTarget({ wireFormat: "openai" }), { stream: true });
    expect(s).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const q = buildOpenAIBody(req({ stream: true }), testTarget({ wireFormat: "openai", quirks: { streamUsageOption: false } }), { stream: true });
    expect(q.stream).toBe(true);
    expect(q).not.toHaveProperty("stream_options");
    const ns = buildOpenAIBody(req({ stream: true, stream_options: { include_usage: true } }), testTarget({ wireFormat: "openai" }), { stream: false });
    expect(ns).not.toHaveProperty("stream");
    expect(ns).not.toHaveProperty("stream_options");
  });
});

describe("openai adapter: response", () => {
  it("parses content, reasoning (either field), tool calls, images, finish reason and usage", () => {
    const parsed = openaiAdapter.parseResponse(
      {
        id: "chatcmpl-1",
        model: "gpt-x-2025",
        system_fingerprint: "fp_1",
        choices: [
          { index: 0, message: { role: "assistant", content: "hi", reasoning_content: "think" }, finish_reason: "stop" },
          {
            index: 1,
            message: {
              role: "assistant",
              content: null,
              reasoning: "r2",
              tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
              images: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: {
          prompt_tokens: 100,
          completion_tokens: 50,
          total_tokens: 150,
          prompt_tokens_details: { cached_tokens: 40, audio_tokens: 5 },
          completion_tokens_details: { reasoning_tokens: 20, audio_tokens: 3, image_tokens: 7 },
        },
      },
      testTarget({ wireFormat: "openai" }),
    );
    expect(parsed.upstreamId).toBe("chatcmpl-1");
    expect(parsed.upstreamModel).toBe("gpt-x-2025");
    expect(parsed.systemFingerprint).toBe("fp_1");
    expect(parsed.choices[0]).toEqual({ index: 0, message: { role: "assistant", content: "hi", reasoning: "think" }, finish_reason: "stop" });
    expect(parsed.choices[1]?.message).toEqual({
      role: "assistant",
      content: null,
      reasoning: "r2",
      tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      images: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }],
    });
    expect(parsed.choices[1]?.finish_reason).toBe("tool_calls");
    expect(parsed.usage).toEqual({
      promptTokens: 100, completionTokens: 50, reasoningTokens: 20, cachedTokens: 40, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0,
      audioInputTokens: 5, videoInputTokens: 0, imageInputTokens: 0, imageOutputTokens: 7, audioOutputTokens: 3, webSearchRequests: 0,
    });
  });

  it("reads DeepSeek cache hits and Perplexity search counts", () => {
    const u = parseOpenAIUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_cache_hit_tokens: 6, num_search_queries: 2 });
    expect(u.cachedTokens).toBe(6);
    expect(u.webSearchRequests).toBe(2);
  });

  it("adds reasoning to completion tokens when the provider counts it outside (total = p + c + r)", () => {
    const u = parseOpenAIUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 45, completion_tokens_details: { reasoning_tokens: 30 } });
    expect(u).toMatchObject({ completionTokens: 35, reasoningTokens: 30 });
    const inside = parseOpenAIUsage({ prompt_tokens: 10, completion_tokens: 35, total_tokens: 45, completion_tokens_details: { reasoning_tokens: 30 } });
    expect(inside).toMatchObject({ completionTokens: 35, reasoningTokens: 30 });
  });

  it("throws on a body without choices", () => {
    expect(() => openaiAdapter.parseResponse({ error: { message: "boom" } }, testTarget({ wireFormat: "openai" }))).toThrow(/boom/);
    expect(() => openaiAdapter.parseResponse("nope", testTarget({ wireFormat: "openai" }))).toThrow(/malformed/);
  });

  it("parses error bodies", () => {
    expect(openaiAdapter.parseError(429, JSON.stringify({ error: { message: "slow down", type: "rate_limit_exceeded" } }))).toEqual({ message: "slow down", type: "rate_limit_exceeded" });
    expect(openaiAdapter.parseError(502, "<html>bad gateway</html>")).toEqual({ message: "<html>bad gateway</html>", type: "api_error" });
    expect(openaiAdapter.parseError(401, "")).toEqual({ message: "upstream returned HTTP 401", type: "authentication_error" });
  });
});

describe("openai adapter: stream", () => {
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  it("turns chunks into deltas, tool call pieces, finish and usage, stopping at [DONE]", async () => {
    const body = bytesStream([
      chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }),
      chunk({ choices: [{ index: 0, delta: { reasoning: "hm" } }] }),
      chunk({ choices: [{ index: 0, delta: { content: "Hel" } }] }) + chunk({ choices: [{ index: 0, delta: { content: "lo" } }] }),
      chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "" } }] } }] }),
      chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: null }),
      chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }),
      "data: [DONE]\n\n",
      chunk({ choices: [{ index: 0, delta: { content: "after done" } }] }),
    ]);
    const events = await collectEvents(openaiAdapter.parseStream(body, testTarget({ wireFormat: "openai" })));
    expect(events.slice(0, 6)).toEqual<StreamEvent[]>([
      { type: "delta", choiceIndex: 0, delta: { role: "assistant" } },
      { type: "delta", choiceIndex: 0, delta: { reasoning: "hm" } },
      { type: "delta", choiceIndex: 0, delta: { content: "Hel" } },
      { type: "delta", choiceIndex: 0, delta: { content: "lo" } },
      { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "" } }] } },
      { type: "delta", choiceIndex: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } },
    ]);
    expect(events[6]).toEqual({ type: "finish", choiceIndex: 0, finishReason: "tool_calls" });
    expect(events[7]).toMatchObject({ type: "usage", usage: { promptTokens: 5, completionTokens: 3 } });
    expect(events).toHaveLength(8);
  });

  it("reports in-stream errors and malformed chunks as error events", async () => {
    const errs = await collectEvents(openaiAdapter.parseStream(bytesStream([chunk({ error: { message: "overloaded", type: "server_error" } })]), testTarget({ wireFormat: "openai" })));
    expect(errs).toEqual([{ type: "error", message: "overloaded", errorType: "server_error" }]);
    const bad = await collectEvents(openaiAdapter.parseStream(bytesStream(["data: {nope\n\n"]), testTarget({ wireFormat: "openai" })));
    expect(bad).toEqual([{ type: "error", message: "malformed stream chunk from upstream", errorType: "malformed_response" }]);
  });
});

describe("openai adapter: tool calls from other providers", () => {
  it("drops Gemini's extra_content from assistant tool calls (OpenAI rejects unknown fields)", () => {
    const req: ChatRequest = {
      model: "m",
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" }, extra_content: { google: { thought_signature: "sig" } } }] },
        { role: "tool", tool_call_id: "c1", content: "{}" },
      ],
    };
    const body = buildOpenAIBody(req, testTarget({ wireFormat: "openai" }), { stream: false });
    expect((body.messages as Array<Record<string, unknown>>)[1]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] });
    expect(req.messages[1]).toMatchObject({ tool_calls: [{ extra_content: { google: { thought_signature: "sig" } } }] }); // input untouched
  });
});
