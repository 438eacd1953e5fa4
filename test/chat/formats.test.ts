import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { getDb } from "../../src/db/client";
import { iamRules } from "../../src/db/schema";
import { bumpKeyVersions } from "../../src/keys/sync";
import { chat, readSse, resetMetrics, user } from "./helpers";
import { recorded } from "../helpers/recorded";

type Body = Record<string, any>;
let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

// One pinned mapping per wire format.
const FORMATS: Array<[string, string]> = [
  ["openai", "openai/gpt-4o-mini"],
  ["azure", "azure/gpt-4o-mini"],
  ["anthropic", "anthropic/claude-sonnet-4"],
  ["google", "google-ai-studio/gemini-2.5-flash"],
  ["bedrock", "aws-bedrock/claude-sonnet-4"],
];

describe.each(FORMATS)("%s wire format", (_format, model) => {
  const provider = model.split("/")[0]!;

  it("answers a non-streamed completion", async () => {
    const res = await chat(org.key, { model, messages: user(`hello ${model} json`) });
    const body = (await res.json()) as Body;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.metadata.used_provider).toBe(provider);
    expect(typeof body.choices[0].message.content).toBe("string");
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.cost).toBeGreaterThan(0);
  });

  it("streams a completion with tool calls", async () => {
    const res = await chat(org.key, {
      model,
      stream: true,
      messages: user(`stream ${model} [[fake:tools]]`),
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }],
    });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.filter((e): e is Body => e !== "[DONE]");
    const calls = chunks.flatMap((c) => c.choices ?? []).flatMap((ch: Body) => ch.delta?.tool_calls ?? []);
    expect(calls[0]?.id, JSON.stringify(chunks)).toBeTruthy();
    expect(calls.map((c: Body) => c.function.arguments ?? "").join("")).toBe('{"q":"test"}');
    const finish = chunks.flatMap((c) => c.choices ?? []).find((ch: Body) => ch.finish_reason);
    expect(finish.finish_reason).toBe("tool_calls");
    const usage = chunks.at(-1)!;
    expect(usage.metadata.used_provider).toBe(provider);
    expect(usage.usage.completion_tokens).toBeGreaterThan(0);
  });
});

describe("IAM rules per mapping", () => {
  it("routes around a denied provider and answers 403 when every mapping is denied", async () => {
    const seeded = await seedOrg();
    const db = getDb(env.DB);
    await db.insert(iamRules).values({
      id: `iam_${crypto.randomUUID().slice(0, 12)}`,
      organizationId: seeded.orgId,
      level: "key",
      targetId: seeded.keyId,
      ruleType: "deny_providers",
      ruleValue: { providers: ["openai"] },
    });
    await bumpKeyVersions(env, { keyId: seeded.keyId });
    const routed = (await (await chat(seeded.key, { model: "gpt-4o-mini", messages: user("iam 1") })).json()) as Body;
    expect(routed.metadata.used_provider).toBe("azure");

    const pinned = await chat(seeded.key, { model: "openai/gpt-4o-mini", messages: user("iam 2") });
    expect(pinned.status).toBe(403);
    expect(((await pinned.json()) as Body).error.code).toBe("permission_denied");

    await db.insert(iamRules).values({
      id: `iam_${crypto.randomUUID().slice(0, 12)}`,
      organizationId: seeded.orgId,
      level: "key",
      targetId: seeded.keyId,
      ruleType: "deny_providers",
      ruleValue: { providers: ["azure"] },
    });
    await bumpKeyVersions(env, { keyId: seeded.keyId });
    const denied = await chat(seeded.key, { model: "gpt-4o-mini", messages: user("iam 3") });
    expect(denied.status).toBe(403);
    const err = (await denied.json()) as Body;
    expect(err.error).toMatchObject({ type: "invalid_request_error", code: "permission_denied" });
  });
});

describe("Gemini 3 thought signatures across a function-calling turn", () => {
  const model = "google-ai-studio/gemini-3-flash-preview";
  const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
  const nextTurn = (assistant: Body) => ({
    model,
    tools,
    messages: [
      ...user("find it [[fake:tools]]"),
      assistant,
      ...assistant.tool_calls.map((tc: Body) => ({ role: "tool", tool_call_id: tc.id, content: '{"found":true}' })),
    ],
  });

  it("returns the signature with the tool call and accepts the turn back with it, without it, but not with a forged one", async () => {
    const first = await chat(org.key, { model, tools, messages: user("find it [[fake:tools]]") });
    const body = (await first.json()) as Body;
    expect(first.status, JSON.stringify(body)).toBe(200);
    const assistant = body.choices[0].message;
    expect(assistant.tool_calls[0].extra_content.google.thought_signature).toMatch(/^fake-sig-/);

    // A client that keeps the message whole (the official SDKs keep unknown fields).
    const kept = await chat(org.key, nextTurn(assistant));
    expect(kept.status, await kept.clone().text()).toBe(200);
    expect(((await kept.json()) as Body).choices[0].message.content).toBeTruthy();

    // A client that rebuilt the message from id/type/function only.
    const stripped = { ...assistant, tool_calls: assistant.tool_calls.map(({ extra_content: _drop, ...tc }: Body) => tc) };
    const rebuilt = await chat(org.key, nextTurn(stripped));
    expect(rebuilt.status, await rebuilt.clone().text()).toBe(200);

    // The stand-in enforces Google's rule: a signature it never issued is refused upstream.
    const forged = { ...assistant, tool_calls: assistant.tool_calls.map((tc: Body) => ({ ...tc, extra_content: { google: { thought_signature: "forged" } } })) };
    const refused = await chat(org.key, nextTurn(forged));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Body).error.message).toMatch(/thought_signature/);
  });
});

// Claude's signed thinking through both of its wire formats: the same reasoning_details shape either way; what each upstream is sent.
const CLAUDE_THINKING: Array<[string, string, { thinking: (b: Body) => unknown; firstBlock: (text: string, signature: string) => unknown }]> = [
  ["Anthropic", "anthropic/claude-sonnet-4", {
    thinking: (b) => b.thinking,
    firstBlock: (thinking, signature) => ({ type: "thinking", thinking, signature }),
  }],
  ["Bedrock Converse", "aws-bedrock/claude-sonnet-4", {
    thinking: (b) => b.additionalModelRequestFields?.thinking,
    firstBlock: (text, signature) => ({ reasoningContent: { reasoningText: { text, signature } } }),
  }],
];

describe.each(CLAUDE_THINKING)("%s thinking signatures across a tool-use turn (reasoning_details)", (name, model, wire) => {
  const tag = `chat-think-loop-${name.split(" ")[0]!.toLowerCase()}`;
  const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
  const first = { model, tools, reasoning_effort: "low", max_tokens: 4000, messages: user(`find it [[fake:tools,reasoning]] [[tag:${tag}]]`) };
  const nextTurn = (assistant: Body) => ({
    ...first,
    messages: [...first.messages, assistant, ...assistant.tool_calls.map((tc: Body) => ({ role: "tool", tool_call_id: tc.id, content: "sunny" }))],
  });

  it("returns the signed thinking as reasoning_details and accepts the assistant message back as received", async () => {
    const res = await chat(org.key, first);
    const body = (await res.json()) as Body;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const assistant = body.choices[0].message;
    expect(assistant.reasoning).toMatch(/^Thinking about .*claude-sonnet-4/);
    expect(assistant.reasoning_details).toEqual([{ type: "reasoning.text", text: assistant.reasoning, signature: expect.stringMatching(/^fake-thinking-/), format: "anthropic-claude-v1", index: 0 }]);

    const kept = await chat(org.key, nextTurn(assistant));
    const keptBody = (await kept.json()) as Body;
    expect(kept.status, JSON.stringify(keptBody)).toBe(200);
    expect(keptBody.choices[0].message.content).toBe("Tool result received: sunny");
    const sent = await recorded<Body>(tag);
    const upstream = sent.find((r) => r.body.messages.length === 3)!.body;
    expect(wire.thinking(upstream)).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(upstream.messages[1].content[0]).toEqual(wire.firstBlock(assistant.reasoning, assistant.reasoning_details[0].signature));

    // A forged signature: the upstream's 400 comes back as an error envelope.
    const forged = { ...assistant, reasoning_details: [{ ...assistant.reasoning_details[0], signature: "forged" }] };
    const refused = await chat(org.key, nextTurn(forged));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Body).error.message).toMatch(/Invalid `signature` in `thinking` block/);
  });

  it("streams the signed block as a reasoning_details delta that a client can send back", async () => {
    const res = await chat(org.key, { ...first, stream: true });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    const deltas = events.flatMap((e) => (e === "[DONE]" ? [] : ((e.choices as Body[] | undefined) ?? []).map((c) => c.delta as Body)));
    const details = deltas.flatMap((d) => d.reasoning_details ?? []);
    expect(details).toEqual([expect.objectContaining({ type: "reasoning.text", signature: expect.stringMatching(/^fake-thinking-/) })]);
    const calls = new Map<number, Body>();
    for (const d of deltas) for (const tc of d.tool_calls ?? []) {
      const c = calls.get(tc.index) ?? { id: tc.id, type: "function", function: { name: tc.function.name, arguments: "" } };
      c.function.arguments += tc.function.arguments ?? "";
      calls.set(tc.index, c);
    }
    const assistant = { role: "assistant", content: null, reasoning_details: details, tool_calls: [...calls.values()] };
    const next = await chat(org.key, { ...nextTurn(assistant), stream: true });
    expect(next.status).toBe(200);
    const text = (await readSse(next)).events.flatMap((e) => (e === "[DONE]" ? [] : ((e.choices as Body[] | undefined) ?? []).map((c) => c.delta.content ?? ""))).join("");
    expect(text).toBe("Tool result received: sunny");
  });
});
