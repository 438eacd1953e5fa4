/**
 * The request shapes of the Shapes list as the official `openai` SDK sends them on
 * `/v1/responses` (`reasoning.effort` `xhigh`, `tool_choice` `allowed_tools`, `custom` tools and
 * their calls; `text.format` on Claude is in claude-structured-outputs.test.ts), and the SDK's own
 * call to a route the gateway does not serve (`videos.remix`).
 */
import OpenAI from "openai";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { resetMetrics, sdkClient, recordedBodies } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});
beforeEach(resetMetrics);

const client = () => sdkClient(org.key);
const recorded = recordedBodies;
const fn = (name: string) => ({ type: "function" as const, name, parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false });

describe("responses request shapes of the openai SDK", () => {
  it("reasoning.effort xhigh: passed on to OpenAI, the largest thinking budgets on Claude", async () => {
    const r = await client().responses.create({ model: "openai/gpt-5", reasoning: { effort: "xhigh" }, input: "hi [[tag:resp-xhigh]]" });
    expect(r.output_text).toContain("Hello from");
    expect((await recorded("resp-xhigh"))[0]?.body.reasoning_effort).toBe("xhigh");
    const c = await client().responses.create({ model: "anthropic/claude-sonnet-4", reasoning: { effort: "xhigh" }, max_output_tokens: 1000, input: "hi [[tag:resp-claude-xhigh]]" });
    expect(c.output_text).toContain("Hello from");
    const thinking = (await recorded("resp-claude-xhigh"))[0]?.body.thinking as { budget_tokens: number };
    expect(thinking.budget_tokens).toBeGreaterThan(24576);
  });

  it("tool_choice allowed_tools: only the allowed tools go upstream, with the mode as the choice; an unknown name is a 400", async () => {
    const r = await client().responses.create({
      model: "openai/gpt-4o-mini",
      tools: [fn("get_weather"), fn("get_time")],
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_time" }] },
      input: "time? [[fake:tools]] [[tag:resp-allowed]]",
    });
    expect(r.output.find((o) => o.type === "function_call")).toMatchObject({ name: "get_time" });
    const body = (await recorded("resp-allowed"))[0]!.body;
    expect((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(["get_time"]);
    expect(body.tool_choice).toBe("required");
    const bad = await client()
      .responses.create({ model: "openai/gpt-4o-mini", tools: [fn("get_weather")], tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "nope" }] }, input: "x" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as Error).message).toContain("nope");
  });
});

describe("custom tools on /v1/responses (free-form or grammar input)", () => {
  const sql: OpenAI.Responses.CustomTool = { type: "custom", name: "run_sql", description: "runs SQL", format: { type: "grammar", syntax: "regex", definition: "SELECT .*" } };
  const input = "SELECT count(*) FROM run_sql";

  it("go to OpenAI as chat custom tools, and the model's call comes back as a custom_tool_call item", async () => {
    const r = await client().responses.create({ model: "openai/gpt-5", tools: [sql, fn("get_time")], input: "count rows [[fake:tools]] [[tag:resp-custom]]" });
    const body = (await recorded("resp-custom"))[0]!.body;
    expect(body.tools).toEqual([
      { type: "function", function: { name: "get_time", parameters: fn("get_time").parameters, strict: false } },
      { type: "custom", custom: { name: "run_sql", description: "runs SQL", format: { type: "grammar", grammar: { syntax: "regex", definition: "SELECT .*" } } } },
    ]);
    const only = await client().responses.create({ model: "openai/gpt-5", tools: [sql], input: "count rows [[fake:tools]]" });
    const call = only.output.find((o): o is OpenAI.Responses.ResponseCustomToolCall => o.type === "custom_tool_call");
    expect(call).toMatchObject({ type: "custom_tool_call", name: "run_sql", input, status: "completed" });
    expect(call?.call_id).toBeTruthy();
    expect(only.output.some((o) => o.type === "function_call")).toBe(false);
    expect(only.tools).toEqual([expect.objectContaining({ type: "custom", name: "run_sql" })]);
    expect(r.status).toBe("completed");
  });

  it("streamed: the call's input arrives as response.custom_tool_call_input events", async () => {
    const stream = await client().responses.create({ model: "openai/gpt-5", tools: [sql], input: "count rows [[fake:tools]]", stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const deltas = events.filter((e) => e.type === "response.custom_tool_call_input.delta");
    expect(deltas.map((e) => e.delta).join("")).toBe(input);
    expect(events.find((e) => e.type === "response.custom_tool_call_input.done")).toMatchObject({ input });
    expect(events.some((e) => e.type === "response.function_call_arguments.delta")).toBe(false);
    const completed = events.find((e): e is OpenAI.Responses.ResponseCompletedEvent => e.type === "response.completed");
    expect(completed?.response.output.find((o) => o.type === "custom_tool_call")).toMatchObject({ name: "run_sql", input });
  });

  it("a custom_tool_call and its custom_tool_call_output go back upstream as OpenAI's custom call and tool message", async () => {
    const r = await client().responses.create({
      model: "openai/gpt-5",
      tools: [sql],
      input: [
        { role: "user", content: "count rows [[tag:resp-custom-turn]]" },
        { type: "custom_tool_call", call_id: "call_sql_1", name: "run_sql", input },
        { type: "custom_tool_call_output", call_id: "call_sql_1", output: "42" },
      ],
    });
    expect(r.output_text).toContain("Tool result received: 42");
    const messages = (await recorded("resp-custom-turn"))[0]!.body.messages as Array<Record<string, unknown>>;
    expect(messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_sql_1", type: "custom", custom: { name: "run_sql", input } }] },
      { role: "tool", tool_call_id: "call_sql_1", content: "42" },
    ]);
  });

  it("a provider that cannot take them is a 400 naming the capability, never a silent drop", async () => {
    const err = await client().responses.create({ model: "anthropic/claude-sonnet-4", max_output_tokens: 50, tools: [sql], input: "count rows" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain("custom tools");
    // A conversation holding a custom tool's call needs the format as well.
    const history = await client()
      .responses.create({
        model: "anthropic/claude-sonnet-4",
        max_output_tokens: 50,
        input: [
          { role: "user", content: "count rows" },
          { type: "custom_tool_call", call_id: "call_sql_1", name: "run_sql", input },
          { type: "custom_tool_call_output", call_id: "call_sql_1", output: "42" },
        ],
      })
      .catch((e: unknown) => e);
    expect(history).toBeInstanceOf(OpenAI.BadRequestError);
    expect((history as Error).message).toContain("custom tools");
    const choice = await client().responses.create({ model: "openai/gpt-5", tools: [sql], tool_choice: { type: "custom", name: "run_sql" }, input: "x" }).catch((e: unknown) => e);
    expect(choice).toBeInstanceOf(OpenAI.BadRequestError);
    expect((choice as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tool_choice");
  });
});

describe("a route the gateway does not serve, called by the SDK", () => {
  it("videos.remix answers 404 route_not_found", async () => {
    const err = await client().videos.remix("video_123", { prompt: "again, at night" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("route_not_found");
  });
});
