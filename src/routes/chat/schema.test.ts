import { afterEach, describe, expect, it, vi } from "vitest";
import { chatRequestSchema, parseChatRequest } from "./schema";
import { ApiError } from "../../errors/api-error";
import { describeZodError } from "../../errors/validation";

const fails = (body: unknown): ApiError => {
  try {
    parseChatRequest(body);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected a 400");
};

describe("chat request schema", () => {
  it("accepts a full OpenAI request, drops unknown fields and nulls", () => {
    const req = parseChatRequest({
      model: "gpt-4o-mini",
      messages: [
        { role: "developer", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: "https://x.test/a.png" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
      temperature: 0,
      max_completion_tokens: 100,
      stop: ["\n"],
      seed: 1,
      logprobs: true,
      top_logprobs: 2,
      reasoning_effort: "low",
      user: null,
      vendor_extension: true,
    });
    expect(req.messages).toHaveLength(4);
    expect("vendor_extension" in req).toBe(false);
    expect("user" in req).toBe(false);
    expect(req.response_format?.type).toBe("json_schema");
  });

  it("names the malformed field in param", () => {
    expect(fails({ model: "m", messages: [{ role: "user", content: "a" }, { role: "tool", content: "x" }] }).param).toBe("messages.1.tool_call_id");
    expect(fails({ model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] }).param).toBe("messages.0.content");
    expect(fails({ model: "m", messages: [] }).param).toBe("messages");
    expect(fails({ messages: [{ role: "user", content: "a" }] }).param).toBe("model");
    expect(fails({ model: "m", messages: [{ role: "user", content: "a" }], top_p: 2 }).param).toBe("top_p");
    expect(fails({ model: "m", messages: [{ role: "user", content: "a" }], n: 0 }).param).toBe("n");
    expect(fails({ model: "m", messages: [{ role: "user", content: "a" }], tool_choice: "required" }).param).toBe("tool_choice");
  });

  it("keeps the OpenAI-platform fields, refuses the ones the gateway cannot bill", () => {
    const base = { model: "m", messages: [{ role: "user", content: "a" }] };
    const extras = {
      prompt_cache_key: "k",
      safety_identifier: "s",
      metadata: { a: "b" },
      store: false,
      verbosity: "medium",
      prediction: { type: "content", content: "x" },
      service_tier: "auto",
      audio: { voice: { id: "voice_1" }, format: "mp3" },
      modalities: ["text", "audio"],
    };
    expect(parseChatRequest({ ...base, ...extras })).toMatchObject(extras);
    const nulls = parseChatRequest({ ...base, verbosity: null, service_tier: null, web_search_options: null });
    expect(Object.keys(nulls).sort()).toEqual(["messages", "model"]);
    const flex = fails({ ...base, service_tier: "flex" });
    expect([flex.param, flex.code]).toEqual(["service_tier", "unsupported_parameter"]);
    expect(fails({ ...base, web_search_options: {} }).param).toBe("web_search_options");
    expect(fails({ ...base, web_search_options: { search_context_size: "huge" } }).param).toBe("web_search_options.search_context_size");
    expect(fails({ ...base, modalities: ["audio"] }).param).toBe("audio");
    // JSON.parse makes `__proto__` an own key; zod would drop it silently.
    expect(fails(JSON.parse('{"model":"m","messages":[{"role":"user","content":"a"}],"metadata":{"__proto__":"x"}}')).param).toBe("metadata");
  });

  it("rejects roles that do not exist and non-object bodies", () => {
    expect(fails({ model: "m", messages: [{ role: "wizard", content: "a" }] }).param).toMatch(/^messages\.0/);
    expect(fails([1, 2]).status).toBe(400);
  });
});

describe("chat request schema: only the fields a body carries are parsed", () => {
  afterEach(() => vi.restoreAllMocks());

  it("an absent optional field's schema does not run; a present one does", () => {
    const logitBias = vi.spyOn(chatRequestSchema.shape.logit_bias._zod, "run");
    const temperature = vi.spyOn(chatRequestSchema.shape.temperature._zod, "run");
    parseChatRequest({ model: "m", messages: [{ role: "user", content: "a" }], temperature: 0.5 });
    expect(logitBias).not.toHaveBeenCalled();
    expect(temperature).toHaveBeenCalledTimes(1);
    // A bad value of a present field is still refused, naming it.
    expect(fails({ model: "m", messages: [{ role: "user", content: "a" }], logit_bias: { "1": 500 } }).param).toMatch(/^logit_bias/);
    expect(logitBias).toHaveBeenCalled();
  });

  it("gives what the whole schema gives: the same request, the same first error", () => {
    const msg = [{ role: "user", content: "hi" }];
    const bodies: unknown[] = [
      { model: "gpt-4o-mini", messages: msg },
      { model: "gpt-4o-mini", messages: msg, max_tokens: 16, temperature: 0, stream: true, unknown_field: 1 },
      { messages: msg, temperature: 0.2 },
      { model: "m" },
      { model: "m", messages: msg, temperature: 9, top_p: 2 },
      { model: "m", messages: msg, stream: null, user: null, seed: 3, metadata: { a: "b" }, stop: ["x"] },
      { model: "m", messages: [], n: 0 },
    ];
    for (const body of bodies) {
      const whole = chatRequestSchema.safeParse(body);
      if (whole.success) {
        const expected = Object.fromEntries(Object.entries(whole.data).filter(([, v]) => v !== undefined));
        expect(JSON.stringify(parseChatRequest(body))).toBe(JSON.stringify(expected));
      } else {
        const e = fails(body);
        expect([e.message, e.param]).toEqual([describeZodError(whole.error).message, describeZodError(whole.error).param]);
      }
    }
  });
});

describe("the schema kept per set of body keys", () => {
  it("never hands one body the schema of another whose keys read alike", () => {
    const base = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], n: 1 };
    // A key whose text joins two field names comes first, then a body with those two fields.
    const odd = parseChatRequest({ ...base, "presence_penalty,frequency_penalty": 1 });
    expect("presence_penalty" in odd).toBe(false);
    const real = parseChatRequest({ ...base, presence_penalty: 0.5, frequency_penalty: 0.25 });
    expect(real.presence_penalty).toBe(0.5);
    expect(real.frequency_penalty).toBe(0.25);
  });

  it("validates the same fields whatever order a client sends them in", () => {
    const a = parseChatRequest({ model: "m", temperature: 0.2, messages: [{ role: "user", content: "hi" }] });
    const b = parseChatRequest({ messages: [{ role: "user", content: "hi" }], temperature: 0.2, model: "m" });
    expect(b).toEqual(a);
    expect(fails({ temperature: "hot", model: "m", messages: [{ role: "user", content: "hi" }] }).message).toMatch(/temperature/);
  });
});

