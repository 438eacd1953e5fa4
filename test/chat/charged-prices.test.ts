/**
 * What a request is charged, end to end through the stand-in: the long-context tier once the
 * prompt passes the threshold, Bedrock's regional-profile price, and Perplexity's per-request fee
 * by `web_search_options.search_context_size` (accepted only where it is priced).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user } from "./helpers";
import { recorded } from "../helpers/recorded";

type Body = Record<string, any>;
let org: SeededOrg;

beforeAll(async () => {
  org = await seedOrg({ creditsUsd: 1000 });
});

describe("prices as charged", () => {
  it("a gemini-2.5-pro prompt past 200K tokens is billed at 2.50/15 for the whole request, 1.25/10 below", async () => {
    // The stand-in counts a prompt token per word, plus 3.
    const short = await chat(org.key, { model: "google-ai-studio/gemini-2.5-pro", messages: user("short prompt [[tag:tier-short]]") });
    const s = (await short.json()) as Body;
    expect(short.status, JSON.stringify(s)).toBe(200);
    const sp = s.usage.prompt_tokens as number;
    const sc = s.usage.completion_tokens as number;
    expect(s.usage.cost).toBeCloseTo((sp * 1.25 + sc * 10) / 1e6, 12);

    const words = "w ".repeat(200_100);
    const long = await chat(org.key, { model: "google-ai-studio/gemini-2.5-pro", messages: user(`${words}[[tag:tier-long]]`) });
    const l = (await long.json()) as Body;
    expect(long.status, JSON.stringify(l).slice(0, 300)).toBe(200);
    const lp = l.usage.prompt_tokens as number;
    const lc = l.usage.completion_tokens as number;
    expect(lp).toBeGreaterThan(200_000);
    expect(l.usage.cost).toBeCloseTo((lp * 2.5 + lc * 15) / 1e6, 9);
    expect(l.usage.cost_details.input_cost).toBeCloseTo((lp * 2.5) / 1e6, 9);
    expect(l.usage.cost_details.price_tier_above_tokens).toBe(200_000);
    expect(s.usage.cost_details).not.toHaveProperty("price_tier_above_tokens");
  });

  it("Claude Sonnet 4.5 on a Bedrock us. profile is billed at 3.30/16.50", async () => {
    const res = await chat(org.key, { model: "aws-bedrock/claude-sonnet-4.5", messages: user("regional [[tag:bedrock-regional]]") });
    const b = (await res.json()) as Body;
    expect(res.status, JSON.stringify(b)).toBe(200);
    expect(b.usage.cost).toBeCloseTo((b.usage.prompt_tokens * 3.3 + b.usage.completion_tokens * 16.5) / 1e6, 12);
  });

  it("sonar's request fee follows web_search_options.search_context_size, which reaches Perplexity", async () => {
    const fee = async (size: "low" | "medium" | "high" | null, tag: string): Promise<number> => {
      const body: Body = { model: "sonar", messages: user(`search [[tag:${tag}]]`) };
      if (size) body.web_search_options = { search_context_size: size };
      const res = await chat(org.key, body);
      const b = (await res.json()) as Body;
      expect(res.status, JSON.stringify(b)).toBe(200);
      return b.usage.cost_details.request_cost as number;
    };
    expect(await fee(null, "sonar-default")).toBe(0.005);
    expect(await fee("medium", "sonar-medium")).toBe(0.008);
    expect(await fee("high", "sonar-high")).toBe(0.012);
    const sent = await recorded("sonar-high");
    expect(sent.at(-1)?.body?.web_search_options).toEqual({ search_context_size: "high" });
  });

  it("web_search_options stays refused on a model whose providers bill search otherwise", async () => {
    const res = await chat(org.key, { model: "gpt-4o-mini", messages: user("search"), web_search_options: { search_context_size: "low" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Body).error.param).toBe("web_search_options");
  });
});
