/**
 * Structured outputs on Claude as the official `openai` SDK asks for them: its zod helpers
 * (`zodResponseFormat`, `zodTextFormat`), `chat.completions.parse`, `chat.completions.stream`,
 * `responses.parse` and a streamed `json_object`, against Claude on Anthropic, Bedrock and Vertex,
 * on a model with native JSON output (claude-sonnet-4.5, not on Vertex) and one without
 * (claude-sonnet-4: a forced tool call the caller never sees).
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, waitForLog, sdkClient, recordedBodies } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const client = () => sdkClient(org.key);
const recorded = recordedBodies;

const City = z.object({ city: z.string(), population: z.number().int(), capital: z.boolean() });
const EXPECTED = { city: "test", population: 1, capital: true };
const MODELS = ["anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4", "aws-bedrock/claude-sonnet-4.5", "aws-bedrock/claude-sonnet-4", "google-vertex/claude-sonnet-4.5"];
/** Claude 4.5 has native JSON output on Anthropic's API and Bedrock, not on Vertex. */
const native = (model: string) => model.endsWith("4.5") && !model.startsWith("google-vertex/");

describe.each(MODELS)("structured outputs through the openai SDK on %s", (model) => {
  it("chat.completions.parse with zodResponseFormat: parsed object, finish stop, no tool calls, billed", async () => {
    const tag = `so-parse-${model.replace(/\W/g, "-")}`;
    const { data: r, response } = await client()
      .chat.completions.parse({ model, max_tokens: 500, response_format: zodResponseFormat(City, "city"), messages: [{ role: "user", content: `Paris? [[tag:${tag}]]` }] })
      .withResponse();
    const choice = r.choices[0]!;
    expect(choice.message.parsed).toEqual(EXPECTED);
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.tool_calls ?? []).toEqual([]);
    const sent = (await recorded(tag))[0]!.body;
    // Natively where the model has it, else the reserved tool, forced.
    if (native(model)) expect(JSON.stringify(sent)).toMatch(/"output_?[cC]onfig"/);
    else expect(JSON.stringify(sent)).toContain('"json_output"');
    const log = await waitForLog(response.headers.get("x-request-id")!);
    expect(log.statusCode).toBe(200);
    expect(log.costPico).toBeGreaterThan(0);
  });

  it("chat.completions.stream with zodResponseFormat: content deltas, parsed final message", async () => {
    const stream = client().chat.completions.stream({ model, max_tokens: 500, response_format: zodResponseFormat(City, "city"), messages: [{ role: "user", content: "Paris?" }] });
    let deltas = 0;
    stream.on("content", () => (deltas += 1));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.parsed).toEqual(EXPECTED);
    expect(final.choices[0]!.finish_reason).toBe("stop");
    expect(final.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(deltas).toBeGreaterThan(0);
  });

  it("json_object, streamed and not", async () => {
    const r = await client().chat.completions.create({ model, max_tokens: 500, response_format: { type: "json_object" }, messages: [{ role: "user", content: "JSON please" }] });
    expect(JSON.parse(r.choices[0]!.message.content!)).toEqual({});
    expect(r.choices[0]!.finish_reason).toBe("stop");
    const s = await client().chat.completions.create({ model, max_tokens: 500, stream: true, response_format: { type: "json_object" }, messages: [{ role: "user", content: "JSON please" }] });
    let text = "";
    const finishes: string[] = [];
    for await (const chunk of s) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
    }
    expect(JSON.parse(text)).toEqual({});
    expect(finishes).toEqual(["stop"]);
  });

  it("responses.parse with zodTextFormat (text.format), streamed and not", async () => {
    const r = await client().responses.parse({ model, max_output_tokens: 500, input: "Paris?", text: { format: zodTextFormat(City, "city") } });
    expect(r.output_parsed).toEqual(EXPECTED);
    expect(r.output.some((o) => o.type === "function_call")).toBe(false);
    const stream = client().responses.stream({ model, max_output_tokens: 500, input: "Paris?", text: { format: zodTextFormat(City, "city") } });
    let text = "";
    for await (const e of stream) if (e.type === "response.output_text.delta") text += e.delta;
    expect(JSON.parse(text)).toEqual(EXPECTED);
    expect((await stream.finalResponse()).output_parsed).toEqual(EXPECTED);
  });
});
