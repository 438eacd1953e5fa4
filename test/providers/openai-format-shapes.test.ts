/**
 * OpenAI-format answers as providers really send them, fed to the gateway exactly (fake upstream
 * replay), streamed and not: content as arrays of parts (Mistral's Magistral: thinking and text
 * parts), refusals, parts the gateway cannot translate; and DeepSeek's reasoner with tools.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, waitForLog } from "../chat/helpers";
import { replay, viaChat, viaMessages, viaResponses, type Replay } from "./replay";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const MAGISTRAL = "mistral/magistral-medium";
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null, usage?: Record<string, number>) => ({
  data: { id: "cmpl-1", object: "chat.completion.chunk", created: 1, model: "magistral-medium-2509", choices: [{ index: 0, delta, finish_reason }], ...(usage ? { usage } : {}) },
});
const done = { data: "[DONE]" };
const completion = (message: Record<string, unknown>, finish_reason = "stop"): Replay => ({
  json: { id: "cmpl-1", object: "chat.completion", created: 1, model: "magistral-medium-2509", choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason }], usage: { prompt_tokens: 10, completion_tokens: 46, total_tokens: 56 } },
});
const thinking = (text: string) => ({ type: "thinking", thinking: [{ type: "text", text }] });

describe("OpenAI-format content as arrays of parts", () => {
  const streamed: Replay = {
    sse: [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: [thinking("Adding 2 and 2.")] }),
      chunk({ content: [{ type: "text", text: "2 + 2 = 4" }] }),
      chunk({ content: "" }, "stop", { prompt_tokens: 10, completion_tokens: 46, total_tokens: 56 }),
      done,
    ],
  };
  const whole = completion({ content: [thinking("Adding 2 and 2."), { type: "text", text: "2 + 2 = 4" }] });

  it("Magistral's thinking parts become reasoning and its text parts the answer, streamed and not, through every front door", async () => {
    for (const [door, via] of [["chat", viaChat], ["messages", viaMessages], ["responses", viaResponses]] as const) {
      for (const [stream, r] of [[true, streamed], [false, whole]] as const) {
        const a = await via(org.key, MAGISTRAL, await replay(r), stream);
        const where = `${door} stream=${stream}: ${a.body}`;
        expect(a.status, where).toBe(200);
        expect(a.text, where).toBe("2 + 2 = 4");
        expect(a.reasoning, where).toBe("Adding 2 and 2.");
        expect(a.error, where).toBeNull();
      }
    }
  });

  it("a refusal (delta.refusal, or a refusal part) is kept as the message's refusal", async () => {
    const s = await viaChat(org.key, "openai/gpt-4o-mini", await replay({ sse: [chunk({ role: "assistant", content: null, refusal: "" }), chunk({ refusal: "I can't " }), chunk({ refusal: "help with that." }), chunk({}, "stop"), done] }), true);
    expect(s.refusal).toBe("I can't help with that.");
    expect(s.finish).toBe("stop");
    const j = await viaChat(org.key, "openai/gpt-4o-mini", await replay(completion({ content: null, refusal: "I can't help with that." })), false);
    expect(j.refusal).toBe("I can't help with that.");
    const parts = await viaChat(org.key, "openai/gpt-4o-mini", await replay(completion({ content: [{ type: "refusal", refusal: "No." }] })), false);
    expect(parts.refusal).toBe("No.");
  });

  it("a refusal reaches /v1/responses as a refusal part and /v1/messages as text with stop_reason refusal, streamed and not", async () => {
    const streamed: Replay = { sse: [chunk({ role: "assistant", content: null, refusal: "" }), chunk({ refusal: "I can't " }), chunk({ refusal: "help with that." }), chunk({}, "stop"), done] };
    const whole = completion({ content: null, refusal: "I can't help with that." });
    for (const [stream, r] of [[true, streamed], [false, whole]] as const) {
      const responses = await viaResponses(org.key, "openai/gpt-4o-mini", await replay(r), stream);
      expect(responses.refusal, responses.body).toBe("I can't help with that.");
      expect(responses.finish).toBe("completed");
      const messages = await viaMessages(org.key, "openai/gpt-4o-mini", await replay(r), stream);
      expect(messages.text, messages.body).toBe("I can't help with that.");
      expect(messages.finish).toBe("refusal");
    }
  });

  it("an answer made only of parts the gateway cannot translate ends with an error envelope and costs nothing; next to text they are skipped", async () => {
    const s = await viaChat(org.key, MAGISTRAL, await replay({ sse: [chunk({ role: "assistant", content: [{ type: "hologram", data: "x" }] }), chunk({}, "stop", { prompt_tokens: 10, completion_tokens: 46, total_tokens: 56 }), done] }), true);
    expect(s.error).toMatch(/cannot translate \(hologram\)/);
    expect(s.finish).toBeNull();
    const res = await viaChat(org.key, MAGISTRAL, await replay(completion({ content: [{ type: "hologram", data: "x" }] })), false);
    expect(res.status).toBe(502);
    expect(res.error).toMatch(/cannot translate \(hologram\)/);
    const mixed = await viaChat(org.key, MAGISTRAL, await replay(completion({ content: [{ type: "hologram" }, { type: "text", text: "ok" }] })), false);
    expect(mixed.text).toBe("ok");
  });

  it("a streamed Magistral answer is billed for an answer the caller got (not for an empty one)", async () => {
    const { call } = await import("../helpers/fixtures");
    const res = await call("/v1/chat/completions", { method: "POST", key: org.key, headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MAGISTRAL, stream: true, messages: [{ role: "user", content: `x ${await replay(streamed)}` }] }) });
    const body = await res.text();
    expect(body).toContain("2 + 2 = 4");
    const log = await waitForLog(res.headers.get("x-request-id")!);
    expect(log.completionTokens).toBe(46);
  });
});

describe("DeepSeek's reasoner", () => {
  it("takes tools (DeepSeek serves tool calls in thinking mode)", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const a = await viaChat(org.key, "deepseek/deepseek-reasoner", "weather? [[fake:tools,reasoning]]", false, { tools });
    expect(a.status, a.body).toBe(200);
    expect(a.tools).toEqual([{ name: "get_weather", arguments: '{"city":"test"}' }]);
  });
});
