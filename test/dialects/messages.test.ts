/**
 * `POST /v1/messages` through the official `@anthropic-ai/sdk`, unmodified, against models of every
 * wire format (the fake upstreams speak each provider's real protocol).
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { exports } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, waitForLog } from "../chat/helpers";
import { recorded, type RecordedRequest } from "../helpers/recorded";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const client = (apiKey = org.key, headers: Record<string, string> = {}) =>
  new Anthropic({
    baseURL: "http://gw.test",
    apiKey,
    maxRetries: 0,
    defaultHeaders: headers,
    fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)),
  });

const FORMATS: Array<[string, string, string]> = [
  ["openai", "openai/gpt-4o-mini", "openai/gpt-4o-mini"],
  ["azure", "azure/gpt-4o-mini", "azure/"],
  ["anthropic", "anthropic/claude-sonnet-4", "anthropic/claude-sonnet-4"],
  ["google", "google-ai-studio/gemini-2.5-flash", "google-ai-studio/gemini-2.5-flash"],
  ["bedrock", "aws-bedrock/claude-sonnet-4", "aws-bedrock/"],
];

const weatherTool = {
  name: "get_weather",
  description: "Weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

/** A tool turn as a client that talked to another provider has it: thinking with `signature: ""`. */
const next0 = () => ({
  model: "anthropic/claude-sonnet-4",
  max_tokens: 4000,
  thinking: { type: "enabled", budget_tokens: 2000 },
  tools: [weatherTool],
  messages: [
    { role: "user", content: "weather? [[fake:tools,reasoning]]" },
    { role: "assistant", content: [{ type: "thinking", thinking: "from elsewhere", signature: "" }, { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "sunny" }] },
  ],
});

describe.each(FORMATS)("the Anthropic SDK against a %s-format model", (_format, model, replyPrefix) => {
  it("create: a message with text, stop_reason and usage", async () => {
    const msg = await client().messages.create({ model, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "hello there" }] });
    expect(msg.type).toBe("message");
    expect(msg.id).toMatch(/^msg_/);
    expect(msg.model).toBe(model);
    expect(msg.stop_reason).toBe("end_turn");
    const text = msg.content.find((b) => b.type === "text");
    expect(text && "text" in text ? text.text : "").toContain(`Hello from ${replyPrefix}`);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it("stream: the exact event sequence, text deltas and final usage", async () => {
    const stream = client().messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "stream please" }] });
    const types: string[] = [];
    stream.on("streamEvent", (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(types).toContain("content_block_start");
    expect(types).toContain("content_block_delta");
    expect(types.indexOf("content_block_stop")).toBeGreaterThan(types.lastIndexOf("content_block_delta"));
    const text = final.content.find((b) => b.type === "text");
    expect(text && "text" in text ? text.text : "").toContain(`Hello from ${replyPrefix}`);
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it("tool round trip: tool_use, then tool_result answered", async () => {
    const first = await client().messages.create({
      model,
      max_tokens: 100,
      tools: [weatherTool],
      messages: [{ role: "user", content: "weather in Paris? [[fake:tools]]" }],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use");
    if (!use || use.type !== "tool_use") throw new Error("no tool_use block");
    expect(use.name).toBe("get_weather");
    expect(use.input).toEqual({ city: "test" });
    const second = await client().messages.create({
      model,
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: "user", content: "weather in Paris? [[fake:tools]]" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
      ],
    });
    const text = second.content.find((b) => b.type === "text");
    expect(text && "text" in text ? text.text : "").toBe("Tool result received: sunny");
  });

  it("streams tool calls as input_json_delta", async () => {
    const stream = client().messages.stream({ model, max_tokens: 100, tools: [weatherTool], messages: [{ role: "user", content: "weather? [[fake:tools]]" }] });
    const deltas: string[] = [];
    stream.on("streamEvent", (e) => {
      if (e.type === "content_block_delta") deltas.push(e.delta.type);
    });
    const final = await stream.finalMessage();
    expect(deltas).toContain("input_json_delta");
    expect(final.stop_reason).toBe("tool_use");
    const use = final.content.find((b) => b.type === "tool_use");
    expect(use && use.type === "tool_use" ? use.input : null).toEqual({ city: "test" });
  });
});

/**
 * Claude Code's tool loop with thinking, JSON and stream: turn 1 asks for a tool with signed
 * thinking, turn 2 sends turn 1's content back as received with the tool result and must succeed.
 * Returns the request bodies the fake upstream recorded under `tag`.
 */
async function thinkingToolLoop<B>(model: string, tag: string): Promise<{ recorded: Array<RecordedRequest<B>>; first: Anthropic.MessageCreateParamsNonStreaming; next: (content: Anthropic.ContentBlockParam[]) => Anthropic.MessageCreateParamsNonStreaming }> {
  const first: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: 4000,
    thinking: { type: "enabled", budget_tokens: 2000 },
    tools: [weatherTool],
    messages: [{ role: "user", content: `weather? [[fake:tools,reasoning]] [[tag:${tag}]]` }],
  };
  const next = (content: Anthropic.ContentBlockParam[]): Anthropic.MessageCreateParamsNonStreaming => {
    const toolUse = content.find((b) => b.type === "tool_use");
    return { ...first, messages: [...first.messages, { role: "assistant", content }, { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse && "id" in toolUse ? toolUse.id : "", content: "sunny" }] }] };
  };
  for (const streamed of [false, true]) {
    const turn1 = streamed ? await client().messages.stream(first).finalMessage() : await client().messages.create(first);
    expect(turn1.stop_reason).toBe("tool_use");
    const thinking = turn1.content[0];
    expect(thinking?.type).toBe("thinking");
    expect(thinking && "signature" in thinking ? thinking.signature : "").toMatch(/^fake-thinking-/);
    const content = turn1.content as Anthropic.ContentBlockParam[];
    const turn2 = streamed ? await client().messages.stream(next(content)).finalMessage() : await client().messages.create(next(content));
    expect(turn2.content.find((b) => b.type === "text")).toMatchObject({ text: "Tool result received: sunny" });
  }
  return { recorded: await recorded<B>(tag), first, next };
}

describe("POST /v1/messages through the pipeline", () => {
  it("logs, bills and attributes the request (x-api-key auth, Claude Code user agent)", async () => {
    const res = await call("/v1/messages", {
      method: "POST",
      headers: { "x-api-key": org.key, "anthropic-version": "2023-06-01", "user-agent": "claude-cli/2.0.14 (external, cli)", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-4", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.sourceApp).toBe("claude-code");
    expect(log.statusCode).toBe(200);
    expect(log.costPico).toBeGreaterThan(0);
  });

  it("accepts the body Claude Code 2.1 sends to a non-Claude model (system turns, adaptive thinking, ?beta=true)", async () => {
    const res = await call("/v1/messages?beta=true", {
      method: "POST",
      headers: { "x-api-key": org.key, "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219", "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        max_tokens: 32000,
        stream: true,
        system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
        messages: [
          { role: "user", content: [{ type: "text", text: "<system-reminder>notes</system-reminder>" }] },
          { role: "system", content: [{ type: "text", text: "# Environment\nPrimary working directory: /tmp" }] },
          { role: "user", content: [{ type: "text", text: "say hello", cache_control: { type: "ephemeral" } }] },
        ],
        tools: [{ name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } }],
        metadata: { user_id: "user_abc_account__session_1" },
        thinking: { type: "adaptive", display: "omitted" },
        context_management: { edits: [] },
        output_config: { effort: "medium" },
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(deltas).toBe("Hello from openai/gpt-4o-mini");
    expect(text).toContain("event: message_stop");
  });

  it("maps thinking to reasoning and returns thinking blocks (streamed as thinking_delta)", async () => {
    const body = { model: "anthropic/claude-sonnet-4", max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2000 }, messages: [{ role: "user", content: "think [[fake:reasoning]] [[tag:msg-think]]" }] };
    const msg = await client().messages.create(body as Anthropic.MessageCreateParamsNonStreaming);
    expect(msg.content[0]?.type).toBe("thinking");
    const stream = client().messages.stream(body as Anthropic.MessageCreateParamsNonStreaming);
    const deltas: string[] = [];
    stream.on("streamEvent", (e) => {
      if (e.type === "content_block_delta") deltas.push(e.delta.type);
    });
    await stream.finalMessage();
    expect(deltas).toContain("thinking_delta");
    const sent = await recorded("msg-think");
    expect(sent[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("Claude Code's tool loop with thinking: turn 2 sends turn 1's signed thinking back as received and succeeds; a forged signature gets the upstream's 400", async () => {
    const { recorded: sent, first, next } = await thinkingToolLoop<{ thinking?: unknown; messages: Array<{ content: Array<{ type: string }> }> }>("anthropic/claude-sonnet-4", "msg-think-loop");
    const turn2Body = sent.find((r) => r.body.messages.length === 3)!.body;
    expect(turn2Body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(turn2Body.messages[1]!.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);

    const turn1 = await client().messages.create(first);
    const forged = turn1.content.map((b) => (b.type === "thinking" ? { ...b, signature: "forged" } : b)) as Anthropic.ContentBlockParam[];
    const res = await call("/v1/messages", { method: "POST", key: org.key, ...json(next(forged)) });
    expect(res.status).toBe(400);
    const err = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(err).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(err.error.message).toMatch(/Invalid `signature` in `thinking` block/);
  });

  it("a tool turn whose thinking came from another provider (no signature) goes to Anthropic without thinking instead of being refused", async () => {
    const body = next0();
    const res = await call("/v1/messages", { method: "POST", key: org.key, ...json(body) });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it("Claude Code's tool loop with thinking against Claude on Bedrock: the signed thinking goes back as reasoningContent and turn 2 succeeds (JSON and stream)", async () => {
    const { recorded: sent } = await thinkingToolLoop<{ additionalModelRequestFields?: unknown; messages: Array<{ content: Array<Record<string, unknown>> }> }>("aws-bedrock/claude-sonnet-4", "msg-think-loop-bedrock");
    const turn2Body = sent.find((r) => r.body.messages.length === 3)!.body;
    expect(turn2Body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(turn2Body.messages[1]!.content.map((b) => Object.keys(b)[0])).toEqual(["reasoningContent", "toolUse"]);

    // Thinking from elsewhere (no signature): Bedrock gets the turn without thinking instead of refusing it.
    const res = await call("/v1/messages", { method: "POST", key: org.key, ...json({ ...next0(), model: "aws-bedrock/claude-sonnet-4" }) });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it("passes cache_control to an Anthropic-format upstream", async () => {
    await client().messages.create({
      model: "anthropic/claude-sonnet-4",
      max_tokens: 50,
      system: [{ type: "text", text: "long system prompt", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi [[tag:msg-cache]]", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    });
    const sent = await recorded<{ system: unknown; messages: Array<{ content: unknown }> }>("msg-cache");
    expect(JSON.stringify(sent[0]!.body.system)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(JSON.stringify(sent[0]!.body.messages[0]!.content)).toContain('"ttl":"1h"');
  });

  it("count_tokens gives an estimate", async () => {
    const r = await client().messages.countTokens({ model: "claude-sonnet-4", messages: [{ role: "user", content: "count these few words please" }] });
    expect(r.input_tokens).toBeGreaterThan(5);
    expect(r.input_tokens).toBeLessThan(50);
  });

  it("errors are typed by the SDK: Anthropic's envelope with the gateway's status", async () => {
    await expect(client("swb_not_a_real_key_000000000000000000").messages.create({ model: "gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client().messages.create({ model: "no-such-model", max_tokens: 10, messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(client().messages.create({ model: "text-embedding-3-small", max_tokens: 10, messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const res = await call("/v1/messages", { method: "POST", key: org.key, ...json({ model: "gpt-4o-mini", messages: [] }) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const upstream = await call("/v1/messages", { method: "POST", key: org.key, ...json({ model: "openai/gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "x [[fake:status=500]]" }] }) });
    expect(upstream.status).toBe(502);
    expect(((await upstream.json()) as { error: { type: string } }).error.type).toBe("api_error");
  });

  it("a stream that fails after the first byte ends with an error event", async () => {
    const res = await call("/v1/messages", { method: "POST", key: org.key, ...json({ model: "openai/gpt-4o-mini", max_tokens: 10, stream: true, messages: [{ role: "user", content: "x [[fake:error_midstream]]" }] }) });
    const text = await res.text();
    expect(text.startsWith("event: message_start")).toBe(true);
    expect(text).toContain("event: error");
    expect(text).not.toContain("message_stop");
  });
});
