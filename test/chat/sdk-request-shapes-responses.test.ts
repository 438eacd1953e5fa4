/**
 * The request shapes of the Shapes list as the official `openai` SDK sends them on
 * `/v1/responses` (`reasoning.effort` `xhigh`, `tool_choice` `allowed_tools`, `text.format` on
 * Claude is in claude-structured-outputs.test.ts), and the SDK's own call to a route the gateway
 * does not serve (`videos.remix`).
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

describe("a route the gateway does not serve, called by the SDK", () => {
  it("videos.remix answers 404 route_not_found", async () => {
    const err = await client().videos.remix("video_123", { prompt: "again, at night" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("route_not_found");
  });
});
