/**
 * `usage.info` is a note, sent only when there is one: chat answers, streamed or not, carry no
 * empty `info` field in their usage.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, readSse, user } from "./helpers";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

describe("usage.info on chat answers", () => {
  it("is absent from a non-streamed answer's usage", async () => {
    const res = await chat(org.key, { model: "openai/gpt-4o-mini", messages: user("hello") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: Record<string, unknown> };
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    expect("info" in body.usage).toBe(false);
  });

  it("is absent from the usage of a streamed answer", async () => {
    const res = await chat(org.key, { model: "openai/gpt-4o-mini", messages: user("hello"), stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    const usages = events.flatMap((e) => (e !== "[DONE]" && e.usage && typeof e.usage === "object" ? [e.usage as Record<string, unknown>] : []));
    expect(usages.length).toBeGreaterThan(0);
    for (const u of usages) expect("info" in u).toBe(false);
  });
});
