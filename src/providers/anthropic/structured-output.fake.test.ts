/**
 * `response_format` on Claude through the fake upstreams speaking Anthropic's and Bedrock's wire
 * formats: a strict json_schema natively on Claude 4.5 and newer (`output_config.format`,
 * Converse `outputConfig.textFormat`), everything else through the reserved forced tool, whose
 * input comes back as the message content (finish `stop`), streamed as content deltas.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatRequest, ParsedCompletion, ProviderAdapter, StreamEvent, UpstreamTarget } from "../types";
import { builtRequest, collectEvents, testTarget } from "../test-target";
import { anthropicAdapter } from "./index";
import { bedrockAdapter } from "../bedrock/index";
import { googleAdapter } from "../google/index";

const schema = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer" }, capital: { type: "boolean" } },
  required: ["city", "population", "capital"],
  additionalProperties: false,
};
const EXPECTED = { city: "test", population: 1, capital: true };
const strict = { type: "json_schema" as const, json_schema: { name: "city", strict: true, schema } };
const loose = { type: "json_schema" as const, json_schema: { name: "city", schema } };
const caller = [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }];

interface Case {
  name: string;
  adapter: ProviderAdapter;
  /** Claude 4.5 (native JSON output where the platform has it) and an older Claude (forced tool only). */
  native: UpstreamTarget;
  old: UpstreamTarget;
  /** Where the native schema sits in the upstream body. */
  nativeField: (body: Record<string, unknown>) => unknown;
}

const fake = (providerId: "anthropic" | "aws-bedrock" | "google-vertex") => `${env.FAKE_UPSTREAM_URL}/${providerId}`;
const CASES: Case[] = [
  {
    name: "anthropic",
    adapter: anthropicAdapter,
    native: testTarget({ wireFormat: "anthropic", providerId: "anthropic", baseUrl: fake("anthropic"), externalId: "claude-sonnet-4-5-20250929", apiKey: "k" }),
    old: testTarget({ wireFormat: "anthropic", providerId: "anthropic", baseUrl: fake("anthropic"), externalId: "claude-sonnet-4-20250514", apiKey: "k" }),
    nativeField: (b) => b.output_config,
  },
  {
    name: "bedrock",
    adapter: bedrockAdapter,
    native: testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", baseUrl: fake("aws-bedrock"), externalId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", apiKey: "k" }),
    old: testTarget({ wireFormat: "bedrock", providerId: "aws-bedrock", baseUrl: fake("aws-bedrock"), externalId: "us.anthropic.claude-sonnet-4-20250514-v1:0", apiKey: "k" }),
    nativeField: (b) => b.outputConfig,
  },
];
const vertex = (externalId: string) =>
  testTarget({ wireFormat: "google", providerId: "google-vertex", baseUrl: fake("google-vertex"), externalId, apiKey: "ya29.token", settings: { GOOGLE_VERTEX_PROJECT: "p", GOOGLE_VERTEX_LOCATION: "us-east5" } });
/** Claude on Vertex (rawPredict, Anthropic's format): no native JSON output, the tool every time. */
const VERTEX: Case = {
  name: "vertex",
  adapter: googleAdapter,
  native: vertex("claude-sonnet-4-5@20250929"),
  old: vertex("claude-sonnet-4@20250514"),
  nativeField: (b) => b.output_config,
};

async function complete(c: Case, target: UpstreamTarget, req: ChatRequest): Promise<{ body: Record<string, unknown>; parsed: ParsedCompletion }> {
  const upstream = await builtRequest(c.adapter, req, target, { stream: false });
  const body = (await upstream.clone().json()) as Record<string, unknown>;
  const res = await fetch(upstream);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { body, parsed: c.adapter.parseResponse(JSON.parse(text), target, req) };
}

async function stream(c: Case, target: UpstreamTarget, req: ChatRequest): Promise<StreamEvent[]> {
  const res = await fetch(await builtRequest(c.adapter, req, target, { stream: true }));
  expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
  return collectEvents(c.adapter.parseStream(res.body!, target, req));
}

const content = (events: StreamEvent[]) => events.map((e) => (e.type === "delta" ? (e.delta.content ?? "") : "")).join("");
const finish = (events: StreamEvent[]) => events.flatMap((e) => (e.type === "finish" ? [e.finishReason] : []));
const toolDeltas = (events: StreamEvent[]) => events.flatMap((e) => (e.type === "delta" ? (e.delta.tool_calls ?? []) : []));

describe.each(CASES)("structured outputs on Claude ($name)", (c) => {
  it("a strict json_schema on Claude 4.5 goes natively and comes back as text", async () => {
    const req: ChatRequest = { model: "m", response_format: strict, messages: [{ role: "user", content: "Paris?" }] };
    const { body, parsed } = await complete(c, c.native, req);
    expect(c.nativeField(body)).toBeDefined();
    expect(JSON.stringify(body)).not.toContain("json_output");
    expect(JSON.parse(parsed.choices[0]!.message.content!)).toEqual(EXPECTED);
    expect(parsed.choices[0]!.finish_reason).toBe("stop");
    const events = await stream(c, c.native, req);
    expect(JSON.parse(content(events))).toEqual(EXPECTED);
    expect(finish(events)).toEqual(["stop"]);
  });

});

describe.each([...CASES, VERTEX])("structured outputs on Claude through the forced tool ($name)", (c) => {
  it("on an older Claude, and for a non-strict schema, through the forced tool: JSON content, finish stop, no tool calls", async () => {
    const pairs = c === VERTEX ? [[c.old, strict], [c.native, strict], [c.native, loose]] as const : [[c.old, strict], [c.native, loose]] as const;
    for (const [target, response_format] of pairs) {
      const req: ChatRequest = { model: "m", response_format, reasoning_effort: "high", max_tokens: 3000, messages: [{ role: "user", content: "Paris?" }] };
      const { body, parsed } = await complete(c, target, req);
      expect(c.nativeField(body)).toBeUndefined();
      // A forced tool call and extended thinking do not go together on Claude.
      expect(JSON.stringify(body)).not.toContain("budget_tokens");
      const choice = parsed.choices[0]!;
      expect(JSON.parse(choice.message.content!)).toEqual(EXPECTED);
      expect(choice.message.tool_calls).toBeUndefined();
      expect(choice.finish_reason).toBe("stop");
      const events = await stream(c, target, req);
      expect(JSON.parse(content(events))).toEqual(EXPECTED);
      expect(toolDeltas(events)).toEqual([]);
      expect(finish(events)).toEqual(["stop"]);
    }
  });

  it("json_object goes through the forced tool and answers a JSON object", async () => {
    const req: ChatRequest = { model: "m", response_format: { type: "json_object" }, messages: [{ role: "user", content: "some JSON please" }] };
    for (const target of [c.native, c.old]) {
      const { parsed } = await complete(c, target, req);
      expect(JSON.parse(parsed.choices[0]!.message.content!)).toEqual({});
      expect(parsed.choices[0]!.finish_reason).toBe("stop");
      const events = await stream(c, target, req);
      expect(JSON.parse(content(events))).toEqual({});
      expect(finish(events)).toEqual(["stop"]);
    }
  });

  it("with the caller's tools: the model may call one of them (tool_calls) or answer in the format (stop)", async () => {
    const answer: ChatRequest = { model: "m", tools: caller, response_format: strict, messages: [{ role: "user", content: "Paris?" }] };
    const { parsed } = await complete(c, c.old, answer);
    expect(JSON.parse(parsed.choices[0]!.message.content!)).toEqual(EXPECTED);
    expect(parsed.choices[0]!.finish_reason).toBe("stop");

    const call: ChatRequest = { ...answer, messages: [{ role: "user", content: "Paris? [[fake:tools]]" }] };
    const called = await complete(c, c.old, call);
    expect(called.parsed.choices[0]!.message.tool_calls?.map((t) => t.function.name)).toEqual(["lookup"]);
    expect(called.parsed.choices[0]!.finish_reason).toBe("tool_calls");
    const events = await stream(c, c.old, call);
    expect(toolDeltas(events).find((t) => t.function.name)).toMatchObject({ index: 0, function: { name: "lookup" } });
    expect(content(events)).toBe("");
    expect(finish(events)).toEqual(["tool_calls"]);
  });

  it("a caller's tool named like the reserved one never collides with it", async () => {
    const taken = [{ type: "function" as const, function: { name: "json_output", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const req: ChatRequest = { model: "m", tools: taken, tool_choice: "none", response_format: strict, messages: [{ role: "user", content: "Paris?" }] };
    const { body, parsed } = await complete(c, c.old, req);
    expect(JSON.stringify(body)).toContain("json_output_");
    expect(JSON.parse(parsed.choices[0]!.message.content!)).toEqual(EXPECTED);
    expect(parsed.choices[0]!.message.tool_calls).toBeUndefined();
  });
});
