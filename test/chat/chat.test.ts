import { describe, expect, it, beforeAll, beforeEach } from "vitest";
import OpenAI from "openai";
import { exports } from "cloudflare:workers";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, readSse, resetMetrics, user, waitForLog } from "./helpers";
import { recorded } from "../helpers/recorded";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

describe("POST /v1/chat/completions (non-streamed)", () => {
  it("answers an OpenAI chat.completion with cost and metadata, and logs it", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("Hi there [[tag:basic-json]]") });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^req_/);
    expect(Number(res.headers.get("x-gateway-overhead-ms"))).toBeGreaterThanOrEqual(0);
    const body = (await res.json()) as Record<string, any>;
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("gpt-4o-mini");
    expect(typeof body.created).toBe("number");
    expect(body.choices[0].message.role).toBe("assistant");
    expect(body.choices[0].message.content).toBe("Hello from openai/gpt-4o-mini");
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.cost).toBeGreaterThan(0);
    const m = body.metadata;
    expect(m).toMatchObject({
      request_id: requestId,
      requested_model: "gpt-4o-mini",
      requested_provider: "",
      used_model: "gpt-4o-mini",
      used_provider: "openai",
      underlying_used_model: "gpt-4o-mini",
      organization_id: org.orgId,
      project_id: org.projectId,
      cached: false,
      discount: 0,
    });
    expect(m.routing).toHaveLength(1);
    expect(m.routing[0]).toMatchObject({ provider: "openai", status_code: 200, succeeded: true, credentialSource: "credits" });

    const log = await waitForLog(requestId);
    expect(log.id).toBe(m.log_id);
    expect(log.statusCode).toBe(200);
    expect(log.usedProvider).toBe("openai");
    expect(log.promptTokens).toBe(body.usage.prompt_tokens);
    expect(log.costPico).toBeGreaterThan(0);
    expect(log.creditsCostPico).toBe(log.costPico);
    expect(log.byokCostPico).toBe(0);
    expect(log.cached).toBe(false);
    expect(log.routing).toHaveLength(1);

    // What went upstream: the provider's model id and the operator key.
    const sent = await recorded("basic-json");
    expect(sent[0]!.body.model).toBe("gpt-4o-mini");
    expect(sent[0]!.headers.authorization).toBe("Bearer test-operator-key-openai");
  });

  it("returns tool calls", async () => {
    const res = await chat(org.key, {
      model: "gpt-4o-mini",
      messages: user("weather? [[fake:parallel_tools]]"),
      tools: [
        { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
        { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.tool_calls.map((t: any) => t.function.name)).toEqual(["get_weather", "get_time"]);
  });

  it("400s with param naming the malformed field, and logs the rejection", async () => {
    const res = await chat(org.key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "be nice" },
        { role: "user", content: "hi" },
        { role: "user", content: 42 },
      ],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, any>;
    expect(body.error.param).toBe("messages.2.content");
    expect(body.error.type).toBe("invalid_request_error");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(400);
  });

  it("rejects temperature above 2 and tolerates unknown fields", async () => {
    const bad = await chat(org.key, { model: "gpt-4o-mini", messages: user("x"), temperature: 2.5 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe("temperature");
    const ok = await chat(org.key, { model: "gpt-4o-mini", messages: user("x [[tag:extra-field]]"), some_future_field: { a: 1 } });
    expect(ok.status).toBe(200);
    expect((await recorded("extra-field"))[0]!.body.some_future_field).toBeUndefined();
  });

  it("names unknown models and providers", async () => {
    const unknown = await chat(org.key, { model: "no-such-model", messages: user("x") });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error.message).toContain("no-such-model");
    const wrongProvider = await chat(org.key, { model: "groq/gpt-4o-mini", messages: user("x") });
    expect(wrongProvider.status).toBe(400);
    expect(((await wrongProvider.json()) as any).error.message).toContain("groq");
    const pinned = await chat(org.key, { model: "azure/gpt-4o-mini", messages: user("x") });
    const pinnedBody = (await pinned.json()) as any;
    expect(pinned.status, JSON.stringify(pinnedBody)).toBe(200);
    expect(pinnedBody.metadata.used_provider).toBe("azure");
    expect(pinnedBody.metadata.requested_provider).toBe("azure");
  });

  it("rejects a request no mapping can serve (tools on a model without tools)", async () => {
    // n > 1 is not possible on the anthropic wire format: claude-sonnet-4 has no eligible mapping.
    const res = await chat(org.key, { model: "claude-sonnet-4", messages: user("x"), n: 2 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toContain("multiple choices");
  });

  it("answers 400 (not 502) when no provider's wire format can carry the input, and tries none upstream", async () => {
    const res = await chat(org.key, {
      model: "anthropic/claude-sonnet-4",
      messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }],
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("audio");
  });
});

describe("POST /v1/chat/completions (streamed)", () => {
  it("streams OpenAI chunks, a usage chunk with cost and metadata, then [DONE]", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", stream: true, messages: user("Hi [[fake:reasoning]]") });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const { events } = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.filter((e): e is Record<string, any> => e !== "[DONE]");
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]!.choices[0].delta.role).toBe("assistant");
    const text = chunks.flatMap((c) => c.choices).map((ch: any) => ch.delta?.content ?? "").join("");
    expect(text).toBe("Hello from openai/gpt-4o-mini");
    const reasoning = chunks.flatMap((c) => c.choices).map((ch: any) => ch.delta?.reasoning ?? "").join("");
    expect(reasoning).toContain("step by step");
    const finish = chunks.flatMap((c) => c.choices).filter((ch: any) => ch.finish_reason);
    expect(finish).toEqual([expect.objectContaining({ finish_reason: "stop" })]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage.cost).toBeGreaterThan(0);
    expect(last.metadata.used_provider).toBe("openai");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.streamed).toBe(true);
    expect(log.statusCode).toBe(200);
    expect(log.completionTokens).toBe(last.usage.completion_tokens);
  });

  it("streams incremental tool calls with stable ids and indices", async () => {
    const res = await chat(org.key, {
      model: "gpt-4o-mini",
      stream: true,
      messages: user("tools [[fake:parallel_tools]]"),
      tools: [
        { type: "function", function: { name: "a", parameters: { type: "object", properties: { q: { type: "string" } } } } },
        { type: "function", function: { name: "b", parameters: { type: "object", properties: { n: { type: "number" } } } } },
      ],
    });
    const { events } = await readSse(res);
    const deltas = events.filter((e): e is Record<string, any> => e !== "[DONE]").flatMap((c) => c.choices).flatMap((ch: any) => ch.delta?.tool_calls ?? []);
    const byIndex = new Map<number, { id?: string; name?: string; args: string }>();
    for (const d of deltas) {
      const cur = byIndex.get(d.index) ?? { args: "" };
      if (d.id) {
        expect(cur.id).toBeUndefined(); // id only on the first piece
        cur.id = d.id;
        cur.name = d.function.name;
      }
      cur.args += d.function.arguments ?? "";
      byIndex.set(d.index, cur);
    }
    expect([...byIndex.keys()]).toEqual([0, 1]);
    expect(byIndex.get(0)).toMatchObject({ name: "a", args: '{"q":"test"}' });
    expect(byIndex.get(1)).toMatchObject({ name: "b", args: '{"n":1}' });
  });

  it("turns an upstream error mid-stream into an SSE error event followed by [DONE]", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", stream: true, messages: user("x [[fake:error_midstream]]") });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const err = events.at(-2) as Record<string, any>;
    expect(err.error.message).toContain("mid-stream");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(502);
    expect(log.costPico).toBe(0);
  });
});

describe("the official openai client", () => {
  const client = () =>
    new OpenAI({
      baseURL: "http://gw.test/v1",
      apiKey: org.key,
      fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)),
    });

  it("reads a completion", async () => {
    const c = await client().chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] });
    expect(c.choices[0]!.message.content).toBe("Hello from openai/gpt-4o-mini");
  });

  it("reads a stream with tool calls", async () => {
    const stream = await client().chat.completions.create({
      model: "gpt-4o-mini",
      stream: true,
      messages: [{ role: "user", content: "call it [[fake:tools]]" }],
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }],
    });
    let args = "";
    let name = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const ch of chunk.choices) {
        for (const tc of ch.delta.tool_calls ?? []) {
          name += tc.function?.name ?? "";
          args += tc.function?.arguments ?? "";
        }
        finish = ch.finish_reason ?? finish;
      }
    }
    expect(name).toBe("lookup");
    expect(JSON.parse(args)).toEqual({ q: "test" });
    expect(finish).toBe("tool_calls");
  });
});
