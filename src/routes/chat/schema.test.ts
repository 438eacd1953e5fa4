import { describe, expect, it } from "vitest";
import { parseChatRequest } from "./schema";
import { ApiError } from "../../errors/api-error";

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
