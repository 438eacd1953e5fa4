/**
 * `POST /v1/responses` through the official `openai` client and the Vercel AI SDK's default
 * OpenAI provider (which speaks Responses), unmodified.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, streamText, tool } from "ai";
import { exports } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, waitForLog, recordedBodies, sdkClient } from "../chat/helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const gwFetch = (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i));
const client = () => sdkClient(org.key);
const recorded = recordedBodies;

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "Weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

describe("openai responses.create", () => {
  for (const model of ["gpt-4o-mini", "anthropic/claude-sonnet-4", "google-ai-studio/gemini-2.5-flash"]) {
    it(`plain text on ${model}, with usage and the request log`, async () => {
      const { data: r, response } = await client().responses.create({ model, instructions: "Be brief.", input: "hello responses" }).withResponse();
      expect(r.object).toBe("response");
      expect(r.status).toBe("completed");
      expect(r.output_text).toContain("Hello from");
      expect(r.usage?.input_tokens).toBeGreaterThan(0);
      expect(r.usage?.output_tokens).toBeGreaterThan(0);
      const log = await waitForLog(response.headers.get("x-request-id")!);
      expect(log.statusCode).toBe(200);
      expect(log.costPico).toBeGreaterThan(0);
    });
  }

  it("streams the typed events through response.completed with usage", async () => {
    const stream = await client().responses.create({ model: "gpt-4o-mini", input: [{ role: "user", content: "stream it" }], stream: true });
    const types: string[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | null = null;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") final = e.response;
    }
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
    expect(types).toContain("response.output_text.done");
    expect(types.slice(-2)).toEqual(["response.output_item.done", "response.completed"]);
    expect(text).toBe("Hello from openai/gpt-4o-mini");
    expect(final?.usage?.total_tokens).toBeGreaterThan(0);
    expect(final?.output_text ?? (final?.output[0] as { content: Array<{ text: string }> }).content[0]!.text).toBe("Hello from openai/gpt-4o-mini");
  });

  it("function tools: function_call, then function_call_output answered (and streamed arguments)", async () => {
    const first = await client().responses.create({ model: "gpt-4o-mini", tools: [weather], input: "weather in Paris? [[fake:tools]]" });
    const call1 = first.output.find((o) => o.type === "function_call");
    if (!call1 || call1.type !== "function_call") throw new Error("no function_call");
    expect(call1.name).toBe("get_weather");
    expect(JSON.parse(call1.arguments)).toEqual({ city: "test" });
    const second = await client().responses.create({
      model: "gpt-4o-mini",
      tools: [weather],
      input: [{ role: "user", content: "weather in Paris? [[fake:tools]]" }, call1, { type: "function_call_output", call_id: call1.call_id, output: "rainy" }],
    });
    expect(second.output_text).toBe("Tool result received: rainy");

    const stream = await client().responses.create({ model: "anthropic/claude-sonnet-4", tools: [weather], input: "weather? [[fake:tools]]", stream: true });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types).toContain("response.function_call_arguments.done");
  });

  it("maps reasoning.effort, text.format json_schema and max_output_tokens", async () => {
    await client().responses.create({
      model: "gpt-4o-mini",
      input: "json please [[tag:resp-map]]",
      max_output_tokens: 77,
      reasoning: { effort: "low" },
      text: { format: { type: "json_schema", name: "out", schema: { type: "object", properties: { a: { type: "string" } } }, strict: true } },
    });
    const sent = await recorded("resp-map");
    expect(sent[0]!.body).toMatchObject({ response_format: { type: "json_schema", json_schema: { name: "out", strict: true } } });
    expect(sent[0]!.body.max_completion_tokens ?? sent[0]!.body.max_tokens).toBe(77);
  });

  it("refuses previous_response_id and non-chat models with a 400 naming the field", async () => {
    await expect(client().responses.create({ model: "gpt-4o-mini", input: "x", previous_response_id: "resp_123" })).rejects.toMatchObject({ status: 400, param: "previous_response_id" });
    await expect(client().responses.create({ model: "text-embedding-3-small", input: "x" })).rejects.toMatchObject({ status: 400, param: "model" });
    const res = await call("/v1/responses", { method: "POST", key: org.key, ...json({ model: "gpt-4o-mini" }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("input");
  });
});

describe("what Codex sends", () => {
  it("a codex_exec body (developer items, hosted tools, store false, include) streams an answer; hosted tools are not sent upstream", async () => {
    const res = await call("/v1/responses", {
      method: "POST",
      key: org.key,
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        input: [
          { type: "message", id: "msg_1", role: "developer", content: [{ type: "input_text", text: "You are a coding agent." }] },
          { type: "message", id: "msg_2", role: "user", content: [{ type: "input_text", text: "say hello [[tag:codex-shape]]" }] },
        ],
        tools: [
          { type: "function", name: "exec_command", description: "Run", strict: false, parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] } },
          { type: "namespace", name: "multi_agent_v1", description: "Sub-agents", tools: [{ type: "function", name: "close_agent", parameters: { type: "object" } }] },
          { type: "web_search", external_web_access: false },
        ],
        tool_choice: "auto",
        parallel_tool_calls: false,
        reasoning: { summary: "auto" },
        store: false,
        include: ["reasoning.encrypted_content"],
        prompt_cache_key: "k",
        client_metadata: { a: "b" },
      }),
      headers: { "content-type": "application/json", "user-agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)" },
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(text).toContain("event: response.completed");
    const sent = await recorded("codex-shape");
    expect((sent[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(["exec_command"]);
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.sourceApp).toBe("codex-cli");
  });
});

describe("the Vercel AI SDK's default createOpenAI()(model) (Responses API)", () => {
  const provider = () => createOpenAI({ baseURL: "http://gw.test/v1", apiKey: org.key, fetch: gwFetch });

  it("generateText", async () => {
    const r = await generateText({ model: provider()("gpt-4o-mini"), prompt: "hello ai sdk", maxRetries: 0 });
    expect(r.text).toBe("Hello from openai/gpt-4o-mini");
    expect(r.usage.inputTokens).toBeGreaterThan(0);
  });

  it("streamText", async () => {
    const r = streamText({ model: provider()("anthropic/claude-sonnet-4"), prompt: "hello stream", maxRetries: 0 });
    let text = "";
    for await (const t of r.textStream) text += t;
    expect(text).toContain("Hello from anthropic/claude-sonnet-4");
    expect((await r.usage).outputTokens).toBeGreaterThan(0);
  });

  it("tool calls round trip", async () => {
    const r = await generateText({
      model: provider()("gpt-4o-mini"),
      prompt: "weather? [[fake:tools]]",
      maxRetries: 0,
      tools: { get_weather: tool({ description: "Weather", inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }), execute: async ({ city }) => `sunny in ${city}` }) },
    });
    expect(r.toolCalls[0]?.toolName).toBe("get_weather");
    expect(r.toolResults[0]?.output).toBe("sunny in test");
  });
});
