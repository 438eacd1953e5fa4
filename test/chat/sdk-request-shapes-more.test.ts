/**
 * More request and answer shapes of the official `openai` SDK: bodies of any type sent to routes we
 * do not serve, image `size: "auto"`, `role: "function"` messages, `custom` tools, and the
 * Responses usage/logprobs fields the SDK types declare.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI, { toFile } from "openai";
import { exports } from "cloudflare:workers";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, recordedBodies, sdkClient } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const gwFetch = (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i));
const client = () => sdkClient(org.key);
const recorded = recordedBodies;

describe("routes we do not serve", () => {
  it("a multipart images.edits call answers 404 with the envelope, not a content-type error", async () => {
    const err = await client()
      .images.edit({ model: "openai/gpt-image-1", prompt: "a hat", image: await toFile(new Uint8Array([1, 2, 3]), "a.png", { type: "image/png" }) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("route_not_found");
  });

  it("any content type to an unknown path (or a video remix) answers 404 with the envelope", async () => {
    for (const path of ["/v1/videos/video_123/remix", "/v1/nope", "/v1/images/variations"]) {
      const res = await gwFetch(`http://gw.test${path}`, { method: "POST", body: "x=1", headers: { "content-type": "text/plain", authorization: `Bearer ${org.key}` } });
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: { code: string; type: string } };
      expect(body.error).toMatchObject({ type: "not_found_error", code: "route_not_found" });
    }
  });

  it("a served JSON route still refuses a wrong content type", async () => {
    const res = await gwFetch("http://gw.test/v1/chat/completions", { method: "POST", body: "hi", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_content_type");
  });
});

describe("images", () => {
  it("size auto goes on to OpenAI; the answer carries usage.input_tokens_details", async () => {
    const r = await client().images.generate({ model: "openai/gpt-image-1", prompt: "a red fox [[tag:img-auto]]", size: "auto" });
    expect(r.data?.[0]?.b64_json).toBeTruthy();
    expect((await recorded("img-auto"))[0]?.body.size).toBe("auto");
    expect(r.usage?.input_tokens_details).toEqual({ text_tokens: r.usage?.input_tokens, image_tokens: 0 });
  });

  it("size auto becomes the provider's default size where the API has no auto", async () => {
    const r = await client().images.generate({ model: "alibaba/qwen-image-3.0", prompt: "a poster [[tag:img-auto-qwen]]", size: "auto" });
    expect(r.data?.length).toBe(1);
    const sent = (await recorded("img-auto-qwen"))[0]?.body as { parameters: { size: string } };
    expect(sent.parameters.size).toBe("1024*1024");
    expect(r.usage?.input_tokens_details).toMatchObject({ image_tokens: 0 });
  });
});

describe("legacy function messages", () => {
  const history = (tag: string) =>
    [
      { role: "user", content: "weather in Paris?" },
      { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { role: "function", name: "get_weather", content: '{"temp":21}' },
      { role: "user", content: `so? [[tag:${tag}]]` },
    ] as OpenAI.Chat.ChatCompletionMessageParam[];

  it("role function goes to Claude as the tool result of the assistant's function call", async () => {
    const r = await client().chat.completions.create({ model: "anthropic/claude-sonnet-4", max_tokens: 100, messages: history("fn-claude") });
    expect(r.choices[0]?.message.content).toContain('{"temp":21}');
    const sent = (await recorded("fn-claude"))[0]?.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    const use = sent[1]!.content.find((b) => b.type === "tool_use")!;
    expect(use).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
    expect(sent[2]!.content[0]).toMatchObject({ type: "tool_result", tool_use_id: use.id });
  });

  it("role function goes to OpenAI-format providers as a tool message tied to the call", async () => {
    await client().chat.completions.create({ model: "openai/gpt-4o-mini", messages: history("fn-openai") });
    const sent = (await recorded("fn-openai"))[0]?.body.messages as Array<Record<string, unknown>>;
    const calls = sent[1]!.tool_calls as Array<{ id: string; function: { name: string } }>;
    expect(calls[0]?.function.name).toBe("get_weather");
    expect(sent[2]).toEqual({ role: "tool", tool_call_id: calls[0]!.id, content: '{"temp":21}' });
  });

  it("a truly wrong role still gets a clear 400 naming the message", async () => {
    const err = await client()
      .chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "wizard", content: "hi" } as unknown as OpenAI.Chat.ChatCompletionMessageParam] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.param).toBe("messages.0.role");
    expect(e.message).toContain("must be one of 'system', 'developer', 'user', 'assistant', 'tool', 'function'");
  });
});

describe("custom tools", () => {
  const customTool = { type: "custom" as const, custom: { name: "run_sql", description: "runs SQL", format: { type: "grammar" as const, grammar: { syntax: "regex" as const, definition: "SELECT .*" } } } };

  it("go to OpenAI in tools, next to the function tools", async () => {
    const r = await client().chat.completions.create({
      model: "openai/gpt-5",
      tools: [{ type: "function", function: { name: "get_time", parameters: { type: "object" } } }, customTool],
      messages: [{ role: "user", content: "count rows [[tag:custom-tool]]" }],
    });
    expect(r.choices[0]?.message.content).toContain("Hello from");
    const tools = (await recorded("custom-tool"))[0]?.body.tools as Array<Record<string, unknown>>;
    expect(tools.map((t) => t.type)).toEqual(["function", "custom"]);
    expect(tools[1]).toEqual(customTool);
  });

  it("the model's call of a custom tool comes back in OpenAI's custom shape, whole and streamed, and goes back upstream in the next turn", async () => {
    const input = "SELECT count(*) FROM run_sql";
    const r = await client().chat.completions.create({ model: "openai/gpt-5", tools: [customTool], messages: [{ role: "user", content: "count rows [[fake:tools]]" }] });
    const call = r.choices[0]?.message.tool_calls?.[0];
    expect(call).toMatchObject({ type: "custom", custom: { name: "run_sql", input } });
    expect(r.choices[0]?.finish_reason).toBe("tool_calls");
    const stream = await client().chat.completions.create({ model: "openai/gpt-5", tools: [customTool], messages: [{ role: "user", content: "count rows [[fake:tools]]" }], stream: true });
    const pieces: Array<Record<string, unknown>> = [];
    for await (const c of stream) for (const tc of c.choices[0]?.delta.tool_calls ?? []) pieces.push(tc as unknown as Record<string, unknown>);
    expect(pieces[0]).toMatchObject({ index: 0, type: "custom", custom: { name: "run_sql" } });
    expect(pieces.map((p) => (p.custom as { input?: string } | undefined)?.input ?? "").join("")).toBe(input);
    expect(pieces.some((p) => p.function !== undefined)).toBe(false);
    const next = await client().chat.completions.create({
      model: "openai/gpt-5",
      tools: [customTool],
      messages: [
        { role: "user", content: "count rows [[tag:custom-turn]]" },
        { role: "assistant", content: null, tool_calls: [{ id: call!.id, type: "custom", custom: { name: "run_sql", input } }] },
        { role: "tool", tool_call_id: call!.id, content: "42" },
      ],
    });
    expect(next.choices[0]?.message.content).toContain("Tool result received: 42");
    const sent = (await recorded("custom-turn"))[0]?.body.messages as Array<Record<string, unknown>>;
    expect(sent[1]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: call!.id, type: "custom", custom: { name: "run_sql", input } }] });
  });

  it("a provider that cannot take them is a clear 400 naming the provider and the capability", async () => {
    const err = await client()
      .chat.completions.create({ model: "anthropic/claude-sonnet-4", max_tokens: 50, tools: [customTool], messages: [{ role: "user", content: "count rows" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const message = (err as Error).message;
    expect(message).toContain("custom tools");
    expect(message).toContain("anthropic");
  });
});

describe("responses answer shapes", () => {
  type Details = { cached_tokens: number; cache_write_tokens?: number };
  type TextPart = { type: string; logprobs?: unknown };

  it("usage.input_tokens_details.cache_write_tokens and output_text.logprobs, not streamed", async () => {
    const r = await client().responses.create({ model: "anthropic/claude-sonnet-4", max_output_tokens: 100, input: "a long prompt to cache [[fake:cached]]" });
    const details = r.usage?.input_tokens_details as Details;
    expect(details.cache_write_tokens).toBeGreaterThan(0);
    expect(details.cached_tokens).toBeGreaterThan(0);
    const part = (r.output.find((o) => o.type === "message") as { content: TextPart[] }).content[0]!;
    expect(part).toMatchObject({ type: "output_text", logprobs: [] });
  });

  it("the same fields streamed (0 cache writes where the provider reports none)", async () => {
    const stream = await client().responses.create({ model: "openai/gpt-4o-mini", input: "stream it", stream: true });
    const parts: TextPart[] = [];
    let details: Details | undefined;
    for await (const ev of stream) {
      if (ev.type === "response.content_part.added" || ev.type === "response.content_part.done") parts.push(ev.part as TextPart);
      if (ev.type === "response.completed") details = ev.response.usage?.input_tokens_details as Details;
    }
    expect(parts.length).toBe(2);
    for (const p of parts) expect(p.logprobs).toEqual([]);
    expect(details).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
  });
});
