import { describe, expect, it } from "vitest";
import { effortForBudget, parseCountTokensRequest, parseMessagesRequest, toChatRequest } from "./request";
import { messageFromCompletion, usageOf } from "./response";
import { MessagesStreamEncoder } from "./stream";

describe("Anthropic Messages -> chat request", () => {
  it("translates system blocks, images, documents, tool_use/tool_result and options", () => {
    const req = parseMessagesRequest({
      model: "m",
      max_tokens: 64,
      system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
      stop_sequences: ["END"],
      top_k: 5,
      metadata: { user_id: "u1" },
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      tools: [{ name: "t", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }, { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" }, title: "a.pdf" }] },
        { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "s" }, { type: "thinking", thinking: " more", signature: "" }, { type: "redacted_thinking", data: "opaque" }, { type: "text", text: "calling" }, { type: "tool_use", id: "tu1", name: "t", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "text", text: "ok" }] }, { type: "text", text: "and?" }] },
      ],
    });
    const chat = toChatRequest(req);
    expect(chat.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }] });
    expect(chat.messages[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
      ],
    });
    expect(chat.messages[2]).toEqual({
      role: "assistant",
      content: "calling",
      reasoning: "hmm more",
      // Signed blocks are kept for Anthropic-format upstreams; the unsigned one is text only.
      reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "s" }, { type: "reasoning.encrypted", data: "opaque" }],
      tool_calls: [{ id: "tu1", type: "function", function: { name: "t", arguments: '{"a":1}' } }] });
    expect(chat.messages[3]).toEqual({ role: "tool", tool_call_id: "tu1", content: "ok" });
    expect(chat.messages[4]).toEqual({ role: "user", content: [{ type: "text", text: "and?" }] });
    expect(chat).toMatchObject({ max_tokens: 64, stop: ["END"], user: "u1", tool_choice: "required", parallel_tool_calls: false });
    expect(chat.tools?.[0]?.function).toEqual({ name: "t", parameters: { type: "object" } });
    expect("top_k" in chat).toBe(false);
  });

  it("maps thinking budgets to efforts and requires max_tokens except for count_tokens", () => {
    expect([1024, 2000, 5000, 30000].map(effortForBudget)).toEqual(["minimal", "low", "medium", "high"]);
    expect(() => parseMessagesRequest({ model: "m", messages: [{ role: "user", content: "x" }] })).toThrow(/max_tokens/);
    expect(parseCountTokensRequest({ model: "m", messages: [{ role: "user", content: "x" }] }).model).toBe("m");
    expect(() => parseMessagesRequest({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "w", input_schema: {} }] })).toThrow(/tools\.0\.type/);
  });
});

describe("chat answer -> Anthropic message", () => {
  it("orders thinking, text, tool_use and reports usage without cached tokens in input_tokens", () => {
    const msg = messageFromCompletion(
      {
        model: "m",
        choices: [{ message: { content: "hi", reasoning: "r", tool_calls: [{ id: "c1", function: { name: "t", arguments: '{"x":2}' } }] }, finish_reason: "tool_calls" }],
        usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 10 } },
      },
      "msg_1",
    );
    expect(msg.content).toEqual([
      { type: "thinking", thinking: "r", signature: "" },
      { type: "text", text: "hi" },
      { type: "tool_use", id: "c1", name: "t", input: { x: 2 } },
    ]);
    expect(msg.stop_reason).toBe("tool_use");
    expect(msg.usage).toEqual({ input_tokens: 50, output_tokens: 7, cache_creation_input_tokens: 10, cache_read_input_tokens: 40 });
    expect(usageOf(null).input_tokens).toBe(0);
  });

  it("answers with the upstream's signed thinking blocks when it has them", () => {
    const msg = messageFromCompletion({
      model: "m",
      choices: [{ message: { content: "hi", reasoning: "r", reasoning_details: [{ type: "reasoning.text", text: "r", signature: "sig" }, { type: "reasoning.encrypted", data: "opaque" }] }, finish_reason: "stop" }],
    });
    expect(msg.content).toEqual([
      { type: "thinking", thinking: "r", signature: "sig" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "hi" },
    ]);
  });

  it("streams a thinking block's signature at its end, and redacted blocks whole", () => {
    const enc = new MessagesStreamEncoder("msg_1", "m");
    let out = enc.start();
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning: "r1" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning_details: [{ type: "reasoning.text", text: "r1", signature: "sig1" }] } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning_details: [{ type: "reasoning.encrypted", data: "opaque" }] } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning: "r2" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning_details: [{ type: "reasoning.text", text: "r2", signature: "sig2" }] } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { content: "a" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + enc.done();
    const data = out.split("\n\n").filter(Boolean).map((b) => JSON.parse(b.split("\n")[1]!.slice(6)) as Record<string, unknown>);
    const blocks = data.filter((d) => d.type !== "ping" && d.type !== "message_start" && d.type !== "message_delta" && d.type !== "message_stop");
    expect(blocks).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "r1" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig1" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "opaque" } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "thinking_delta", thinking: "r2" } },
      { type: "content_block_delta", index: 2, delta: { type: "signature_delta", signature: "sig2" } },
      { type: "content_block_stop", index: 2 },
      { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "a" } },
      { type: "content_block_stop", index: 3 },
    ]);
  });

  it("streams Anthropic's event sequence", () => {
    const enc = new MessagesStreamEncoder("msg_1", "m");
    let out = enc.start();
    out += enc.chunk({ choices: [{ index: 0, delta: { reasoning: "r" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { content: "a" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { content: "b" } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "t", arguments: "" } }] } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] } }] });
    out += enc.chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
    out += enc.keepAlive();
    out += enc.chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3 } });
    out += enc.done();
    const events = out.split("\n\n").filter(Boolean).map((b) => b.split("\n")[0]!.slice(7));
    expect(events).toEqual([
      "message_start", "ping",
      "content_block_start", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_stop",
      "ping", "message_delta", "message_stop",
    ]);
    expect(out).toContain('"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":5,"output_tokens":3');
    expect(out).toContain('"type":"input_json_delta","partial_json":"{\\"x\\":1}"');
  });

  it("ends a failed stream with an error event and no message_stop", () => {
    const enc = new MessagesStreamEncoder("msg_1", "m");
    const out = enc.start() + enc.chunk({ choices: [{ index: 0, delta: { content: "a" } }] }) + enc.error({ message: "boom", type: "upstream_error" }) + enc.done();
    expect(out).toContain("event: content_block_stop");
    expect(out).toContain('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"boom"}}');
    expect(out).not.toContain("message_stop");
  });
});
