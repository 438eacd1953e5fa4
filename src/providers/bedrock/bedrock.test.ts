import { AwsClient } from "aws4fetch";
import { describe, expect, it, vi } from "vitest";
import type { ChatRequest } from "../types";
import { builtRequest, bytesStream, collectEvents, encodeEventStreamMessage, testTarget } from "../test-target";
import { bedrockCredentials, bedrockRegion } from "./auth";
import { crc32 } from "./eventstream";
import { bedrockAdapter } from "./index";
import { buildConverseBody } from "./request";

const target = (apiKey = "bedrock-api-key", settings: Record<string, string> = {}) =>
  testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", baseUrl: "https://bedrock-runtime.eu-west-1.amazonaws.com", externalId: "anthropic.claude-x-v1:0", apiKey, settings, mapping: { maxOutput: 8192 } });
const hi: ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }] };

describe("bedrock adapter: request", () => {
  it("posts to /model/<encoded id>/converse(-stream) with a Bedrock API key as Bearer", async () => {
    const r = await builtRequest(bedrockAdapter, hi, target(), { stream: false });
    expect(r.url).toBe("https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-x-v1%3A0/converse");
    expect(r.headers.get("authorization")).toBe("Bearer bedrock-api-key");
    const s = await builtRequest(bedrockAdapter, hi, target(), { stream: true });
    expect(s.url).toMatch(/\/converse-stream$/);
    expect(await s.json()).toEqual({ messages: [{ role: "user", content: [{ text: "hi" }] }] });
  });

  it("signs with SigV4 from settings or from an AKID:SECRET key", async () => {
    const settings = { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_REGION: "us-west-2" };
    const r = await builtRequest(bedrockAdapter, hi, target("", settings), { stream: false });
    expect(r.headers.get("authorization")).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/);
    expect(r.headers.get("x-amz-date")).toMatch(/^\d{8}T\d{6}Z$/);
    expect(await r.json()).toEqual({ messages: [{ role: "user", content: [{ text: "hi" }] }] });
    expect(bedrockCredentials(target("AKIAIOSFODNN7EXAMPLE:secret:tok"))).toEqual({ kind: "sigv4", creds: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "secret", sessionToken: "tok" } });
    const byok = await builtRequest(bedrockAdapter, hi, target("AKIAIOSFODNN7EXAMPLE:secret"), { stream: false });
    expect(byok.headers.get("authorization")).toMatch(/Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-1\/bedrock\//);
    expect(bedrockRegion(target())).toBe("eu-west-1");
  });

  it("signs the call's own parts exactly as aws4fetch's client signed the Request it replaced", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-03-04T05:06:07Z"));
    try {
      const settings = { AWS_BEDROCK_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE", AWS_BEDROCK_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", AWS_BEDROCK_REGION: "us-west-2" };
      for (const [t, creds, region] of [
        [target("", settings), { accessKeyId: settings.AWS_BEDROCK_ACCESS_KEY_ID, secretAccessKey: settings.AWS_BEDROCK_SECRET_ACCESS_KEY }, "us-west-2"],
        [target("AKIAIOSFODNN7EXAMPLE:secret:session"), { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "secret", sessionToken: "session" }, "eu-west-1"],
      ] as const) {
        for (const stream of [false, true]) {
          const call = await bedrockAdapter.buildCall({ ...hi, temperature: 0.3 }, t, { stream });
          const accept = stream ? "application/vnd.amazon.eventstream" : "application/json";
          const body = JSON.stringify(buildConverseBody({ ...hi, temperature: 0.3 }, t));
          const before = new Request(call.url, { method: "POST", headers: { "content-type": "application/json", accept }, body });
          const signed = await new AwsClient({ ...creds, service: "bedrock", region }).sign(before);
          expect([...new Headers(call.init.headers)]).toEqual([...signed.headers]);
          expect(new Headers(call.init.headers).get("authorization")).toMatch(/^AWS4-HMAC-SHA256 /);
          expect(call.url).toBe(signed.url);
          expect(call.init.body).toBe(await signed.text());
        }
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("maps system, images, tools, tool choice, tool round trip and inference config", () => {
    const body = buildConverseBody(
      {
        model: "m", max_tokens: 500, temperature: 0.1, top_p: 0.5, stop: ["X"],
        tools: [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } } }],
        tool_choice: "required",
        messages: [
          { role: "system", content: "sys" },
          { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
          { role: "assistant", content: "ok", tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: '{"a":"b"}' } }] },
          { role: "tool", tool_call_id: "t1", content: '{"r":1}' },
          { role: "tool", tool_call_id: "t1", content: "text result" },
        ],
      },
      target(),
    );
    expect(body).toEqual({
      system: [{ text: "sys" }],
      messages: [
        { role: "user", content: [{ text: "look" }, { image: { format: "png", source: { bytes: "AAAA" } } }] },
        { role: "assistant", content: [{ text: "ok" }, { toolUse: { toolUseId: "t1", name: "f", input: { a: "b" } } }] },
        { role: "user", content: [
          { toolResult: { toolUseId: "t1", content: [{ json: { r: 1 } }] } },
          { toolResult: { toolUseId: "t1", content: [{ text: "text result" }] } },
        ] },
      ],
      inferenceConfig: { maxTokens: 500, temperature: 0.1, topP: 0.5, stopSequences: ["X"] },
      toolConfig: {
        tools: [{ toolSpec: { name: "f", description: "d", inputSchema: { json: { type: "object", properties: { a: { type: "string" } } } } } }],
        toolChoice: { any: {} },
      },
    });
    expect(() => buildConverseBody({ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, target())).toThrow(/base64/);
  });

  it("refuses data URLs typed after Object.prototype members (unsupported, never a format sent upstream)", () => {
    for (const mime of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"]) {
      const image: ChatRequest = { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:${mime};base64,AAAA` } }] }] };
      expect(() => buildConverseBody(image, target()), mime).toThrow(/accepts images only as base64 data URLs/);
      const file: ChatRequest = { model: "m", messages: [{ role: "user", content: [{ type: "file", file: { file_data: `data:${mime};base64,AAAA` } }] }] };
      expect(() => buildConverseBody(file, target()), mime).toThrow(/supported document type/);
    }
  });

  it("does not enable thinking when tool_choice forces tool use (Claude refuses the two together)", () => {
    const tools = [{ type: "function" as const, function: { name: "t", parameters: { type: "object" } } }];
    for (const tool_choice of ["required", { type: "function" as const, function: { name: "t" } }] as const) {
      expect(buildConverseBody({ ...hi, tools, tool_choice, reasoning_effort: "low" }, target())).not.toHaveProperty("additionalModelRequestFields");
    }
    expect(buildConverseBody({ ...hi, tools, tool_choice: "auto", reasoning_effort: "low" }, target()).additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
  });

  it("does not enable thinking when the last tool-use turn has no reasoning block to send back (Claude would refuse it)", () => {
    const tools = [{ type: "function" as const, function: { name: "t", parameters: { type: "object" } } }];
    const loop: ChatRequest = {
      model: "m", tools, reasoning_effort: "low",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, reasoning: "unsigned text only", tool_calls: [{ id: "t1", type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "t1", content: "ok" },
      ],
    };
    expect(buildConverseBody(loop, target())).not.toHaveProperty("additionalModelRequestFields");
    // A tool-use turn further back does not matter once a later assistant turn has no tools.
    const later: ChatRequest = { ...loop, messages: [...loop.messages, { role: "assistant", content: "done" }, { role: "user", content: "again" }] };
    expect(buildConverseBody(later, target()).additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
  });

  it("sends signed and redacted reasoning_details back first in the assistant turn, never unsigned ones, and then keeps thinking on", () => {
    const tools = [{ type: "function" as const, function: { name: "t", parameters: { type: "object" } } }];
    const body = buildConverseBody(
      {
        model: "m", tools, reasoning_effort: "low",
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant", content: "calling",
            reasoning_details: [
              { type: "reasoning.text", text: "unsigned", format: "openai" },
              { type: "reasoning.encrypted", data: "AAEC", format: "anthropic-claude-v1", index: 0 },
              { type: "reasoning.text", text: "why", signature: "sig", format: "anthropic-claude-v1", index: 1 },
            ],
            tool_calls: [{ id: "t1", type: "function", function: { name: "t", arguments: "{}" } }],
          },
          { role: "assistant", content: null, reasoning_details: [{ type: "reasoning.text", text: "more", signature: "sig2" }], tool_calls: [{ id: "t2", type: "function", function: { name: "t", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "t1", content: "ok" },
          { role: "tool", tool_call_id: "t2", content: "ok" },
        ],
      },
      target(),
    );
    const messages = body.messages as Array<{ content: unknown[] }>;
    expect(messages[1]!.content).toEqual([
      { reasoningContent: { redactedContent: "AAEC" } },
      { reasoningContent: { reasoningText: { text: "why", signature: "sig" } } },
      { reasoningContent: { reasoningText: { text: "more", signature: "sig2" } } },
      { text: "calling" },
      { toolUse: { toolUseId: "t1", name: "t", input: {} } },
      { toolUse: { toolUseId: "t2", name: "t", input: {} } },
    ]);
    expect(body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
  });

  it("enables thinking for reasoning efforts", () => {
    const b = buildConverseBody({ ...hi, reasoning_effort: "low", temperature: 0.5 }, target());
    expect(b.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(b.inferenceConfig).toEqual({ maxTokens: 8192 });
  });
});

describe("bedrock adapter: response", () => {
  it("parses text, reasoningContent, toolUse, stop reason and cache usage", () => {
    const parsed = bedrockAdapter.parseResponse(
      {
        output: { message: { role: "assistant", content: [
          { reasoningContent: { reasoningText: { text: "hmm", signature: "s" } } },
          { text: "Hi" },
          { toolUse: { toolUseId: "tu1", name: "f", input: { a: 1 } } },
        ] } },
        stopReason: "tool_use",
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 45, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 },
      },
      target(),
    );
    expect(parsed.choices[0]).toEqual({
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant", content: "Hi", reasoning: "hmm",
        reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "s", format: "anthropic-claude-v1", index: 0 }],
        tool_calls: [{ id: "tu1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      },
    });
    expect(parsed.usage).toMatchObject({ promptTokens: 40, cachedTokens: 20, cacheWrite5mTokens: 10, completionTokens: 5 });
  });

  it("keeps signed and redacted reasoning as reasoning_details in Anthropic's shape; unsigned reasoning stays text only", () => {
    const parse = (content: unknown[]) => bedrockAdapter.parseResponse({ output: { message: { role: "assistant", content } }, stopReason: "end_turn" }, target()).choices[0]!.message;
    expect(parse([{ reasoningContent: { redactedContent: "AAEC" } }, { reasoningContent: { reasoningText: { text: "a", signature: "sig" } } }, { text: "x" }]).reasoning_details).toEqual([
      { type: "reasoning.encrypted", data: "AAEC", format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.text", text: "a", signature: "sig", format: "anthropic-claude-v1", index: 1 },
    ]);
    const unsigned = parse([{ reasoningContent: { reasoningText: { text: "plain" } } }, { text: "x" }]);
    expect(unsigned.reasoning).toBe("plain");
    expect(unsigned).not.toHaveProperty("reasoning_details");
  });

  it("parses Bedrock error bodies", () => {
    expect(bedrockAdapter.parseError(429, '{"message":"Too many requests"}')).toEqual({ message: "Too many requests", type: "rate_limit_error" });
  });
});

describe("bedrock adapter: stream", () => {
  it("gives a reasoning block's text, signature and pieced redactedContent as reasoning_details when the block stops", async () => {
    const event = (type: string, payload: unknown) => encodeEventStreamMessage({ ":message-type": "event", ":event-type": type, ":content-type": "application/json" }, JSON.stringify(payload));
    const bytes = "\u0000\u0001\u0002\u0003\u0004\u00ff";
    const frames = [
      event("messageStart", { role: "assistant" }),
      event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: btoa(bytes.slice(0, 4)) } } }),
      event("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: btoa(bytes.slice(4)) } } }),
      event("contentBlockStop", { contentBlockIndex: 0 }),
      event("contentBlockDelta", { contentBlockIndex: 1, delta: { reasoningContent: { text: "thin" } } }),
      event("contentBlockDelta", { contentBlockIndex: 1, delta: { reasoningContent: { text: "king" } } }),
      event("contentBlockDelta", { contentBlockIndex: 1, delta: { reasoningContent: { signature: "sig" } } }),
      event("contentBlockStop", { contentBlockIndex: 1 }),
      event("contentBlockDelta", { contentBlockIndex: 2, delta: { reasoningContent: { text: "unsigned" } } }),
      event("contentBlockStop", { contentBlockIndex: 2 }),
      event("messageStop", { stopReason: "end_turn" }),
    ];
    const events = await collectEvents(bedrockAdapter.parseStream(bytesStream(frames), target()));
    expect(events.flatMap((e) => (e.type === "delta" && e.delta.reasoning ? [e.delta.reasoning] : [])).join("")).toBe("thinkingunsigned");
    expect(events.flatMap((e) => (e.type === "delta" ? (e.delta.reasoning_details ?? []) : []))).toEqual([
      { type: "reasoning.encrypted", data: btoa(bytes), format: "anthropic-claude-v1", index: 0 },
      { type: "reasoning.text", text: "thinking", signature: "sig", format: "anthropic-claude-v1", index: 1 },
    ]);
  });

  it("reports a corrupted frame as a malformed-stream error", async () => {
    const bad = new Uint8Array(20);
    new DataView(bad.buffer).setUint32(0, 20);
    new DataView(bad.buffer).setUint32(8, crc32(bad.subarray(0, 8)));
    const events = await collectEvents(bedrockAdapter.parseStream(bytesStream([bad]), target()));
    expect(events).toEqual([{ type: "error", message: "malformed event stream from upstream: message CRC mismatch", errorType: "malformed_response" }]);
  });

  it("gives an exception its known status, and none to types named after Object.prototype members", async () => {
    const exception = async (type: string) => {
      const frame = encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": type, ":content-type": "application/json" }, '{"message":"boom"}');
      return collectEvents(bedrockAdapter.parseStream(bytesStream([frame]), target()));
    };
    expect(await exception("throttlingException")).toEqual([{ type: "error", message: "boom", errorType: "throttlingException", status: 429 }]);
    for (const type of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"]) {
      expect(await exception(type), type).toEqual([{ type: "error", message: "boom", errorType: type }]);
    }
  });
});
