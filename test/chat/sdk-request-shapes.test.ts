/**
 * Request shapes the official `openai` SDK sends that the gateway once refused with 400:
 * `reasoning_effort` `xhigh`/`max`, an assistant `refusal` part in the history,
 * `tool_choice: {type: "allowed_tools"}`, and the `text-moderation-latest` model id.
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
const tool = (name: string) => ({ type: "function" as const, function: { name, parameters: { type: "object", properties: { city: { type: "string" } } } } });

describe("request shapes of the openai SDK", () => {
  it("reasoning_effort xhigh and max: passed on to OpenAI, the largest thinking budget on Claude", async () => {
    for (const effort of ["xhigh", "max"] as const) {
      const r = await client().chat.completions.create({ model: "openai/gpt-5", reasoning_effort: effort as "high", messages: [{ role: "user", content: `hi [[tag:effort-${effort}]]` }] });
      expect(r.choices[0]?.message.content).toContain("Hello from");
      expect((await recorded(`effort-${effort}`))[0]?.body.reasoning_effort).toBe(effort);
      const c = await client().chat.completions.create({ model: "anthropic/claude-sonnet-4", reasoning_effort: effort as "high", max_tokens: 1000, messages: [{ role: "user", content: `hi [[tag:claude-effort-${effort}]]` }] });
      expect(c.choices[0]?.message.content).toContain("Hello from");
      const thinking = (await recorded(`claude-effort-${effort}`))[0]?.body.thinking as { budget_tokens: number };
      expect(thinking.budget_tokens).toBeGreaterThan(24576);
    }
  });

  it("an assistant refusal part in the history goes upstream as the assistant's text", async () => {
    const r = await client().chat.completions.create({
      model: "anthropic/claude-sonnet-4",
      max_tokens: 100,
      messages: [
        { role: "user", content: "do something bad" },
        { role: "assistant", content: [{ type: "refusal", refusal: "I can't help with that." }] },
        { role: "user", content: "ok, say hi [[tag:refusal-part]]" },
      ],
    });
    expect(r.choices[0]?.message.content).toContain("Hello from");
    const sent = (await recorded("refusal-part"))[0]?.body.messages as Array<{ role: string; content: unknown }>;
    expect(JSON.stringify(sent[1])).toContain("I can't help with that.");
  });

  it("tool_choice allowed_tools: only the allowed tools go upstream, with the mode as the tool choice", async () => {
    const r = await client().chat.completions.create({
      model: "openai/gpt-4o-mini",
      tools: [tool("get_weather"), tool("get_time"), tool("book_flight")],
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_time" } }] } },
      messages: [{ role: "user", content: "time? [[fake:tools]] [[tag:allowed-tools]]" }],
    });
    expect(r.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: "get_time" } });
    const body = (await recorded("allowed-tools"))[0]!.body;
    expect((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(["get_time"]);
    expect(body.tool_choice).toBe("required");
    const bad = await client().chat.completions.create({
      model: "openai/gpt-4o-mini",
      tools: [tool("get_weather")],
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "nope" } }] } },
      messages: [{ role: "user", content: "x" }],
    }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("nope");
  });

  it("text-moderation-latest is a known moderation model", async () => {
    const r = await client().moderations.create({ model: "text-moderation-latest", input: "hello" });
    expect(r.results).toHaveLength(1);
  });
});
