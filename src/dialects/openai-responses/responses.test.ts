import { describe, expect, it } from "vitest";
import { parseResponsesRequest, toChatRequest } from "./request";
import { responseFromCompletion } from "./response";
import { ResponsesStreamEncoder } from "./stream";

describe("Responses request -> chat request", () => {
  it("translates instructions, items, function calls and outputs, and options", () => {
    const req = parseResponsesRequest({
      model: "m",
      instructions: "sys",
      input: [
        { role: "developer", content: "dev" },
        { role: "user", content: [{ type: "input_text", text: "hi" }, { type: "input_image", image_url: "https://x.test/a.png", detail: "low" }] },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "calling", annotations: [] }] },
        { type: "function_call", call_id: "c1", name: "t", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "t", arguments: '{"a":1}' },
        { type: "function_call_output", call_id: "c1", output: "one" },
        { type: "function_call_output", call_id: "c2", output: "two" },
      ],
      tools: [{ type: "function", name: "t", parameters: { type: "object" }, strict: true }],
      tool_choice: { type: "function", name: "t" },
      reasoning: { effort: "high" },
      text: { format: { type: "json_object" } },
      max_output_tokens: 10,
      stream: true,
    });
    const chat = toChatRequest(req);
    expect(chat.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "developer", content: "dev" },
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: "https://x.test/a.png", detail: "low" } }] },
      {
        role: "assistant",
        content: "calling",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "t", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "t", arguments: '{"a":1}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "one" },
      { role: "tool", tool_call_id: "c2", content: "two" },
    ]);
    expect(chat).toMatchObject({
      max_tokens: 10,
      reasoning_effort: "high",
      response_format: { type: "json_object" },
      tool_choice: { type: "function", function: { name: "t" } },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(chat.tools?.[0]?.function).toEqual({ name: "t", parameters: { type: "object" }, strict: true });
  });

  it("refuses stored state, leaves hosted tools out, validates function tools", () => {
    expect(() => parseResponsesRequest({ model: "m", input: "x", previous_response_id: "resp_1" })).toThrow(/previous_response_id/);
    expect(() => toChatRequest(parseResponsesRequest({ model: "m", input: [{ type: "item_reference", id: "rs_1" }] }))).toThrow(/item_reference/);
    const kept = parseResponsesRequest({ model: "m", input: "x", tools: [{ type: "web_search", external_web_access: false }, { type: "namespace", name: "n", tools: [] }, { type: "function", name: "f" }] });
    expect(kept.tools.map((t) => t.name)).toEqual(["f"]);
    expect(() => parseResponsesRequest({ model: "m", input: "x", tools: [{ type: "function", name: "bad name" }] })).toThrow(/tools\.0\.name/);
  });
});

describe("chat answer -> Responses shapes", () => {
  const req = parseResponsesRequest({ model: "m", input: "x" });

  it("builds output items and marks a length finish incomplete", () => {
    const r = responseFromCompletion(
      req,
      { model: "m", choices: [{ message: { content: "hi", reasoning: "r", tool_calls: [{ id: "c1", function: { name: "t", arguments: "{}" } }] }, finish_reason: "length" }], usage: { prompt_tokens: 3, completion_tokens: 4 } },
      "resp_1",
      1,
    );
    expect((r.output as Array<{ type: string }>).map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
  });

  it("streams typed events with increasing sequence numbers", () => {
    const enc = new ResponsesStreamEncoder(req, "resp_1", 1);
    const out =
      enc.start() +
      enc.chunk({ choices: [{ index: 0, delta: { content: "a" } }] }) +
      enc.chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "t", arguments: "{" } }] } }] }) +
      enc.chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "}" } }] } }] }) +
      enc.chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) +
      enc.chunk({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }) +
      enc.done();
    const events = out.split("\n\n").filter(Boolean).map((b) => JSON.parse(b.split("\n")[1]!.slice(6)) as { type: string; sequence_number: number; response?: { usage: unknown; output: unknown[] } });
    expect(events.map((e) => e.type)).toEqual([
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const last = events[events.length - 1]!.response!;
    expect(last.output).toHaveLength(2);
    expect(last.usage).toMatchObject({ input_tokens: 1, output_tokens: 2 });
  });

  it("ends a failed stream with error and response.failed", () => {
    const enc = new ResponsesStreamEncoder(req, "resp_1", 1);
    const out = enc.start() + enc.error({ message: "boom", type: "upstream_error" }) + enc.done();
    expect(out).toContain("event: error");
    expect(out).toContain("event: response.failed");
    expect(out).not.toContain("response.completed");
  });
});
