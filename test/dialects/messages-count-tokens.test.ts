/**
 * `POST /v1/messages/count_tokens` through the official `@anthropic-ai/sdk`: exact through
 * Anthropic's own counter when the model routes to Claude on Anthropic with a credential
 * (operator key or the organization's own), the estimate otherwise; `x-gateway-token-count` says
 * which. The fake Anthropic counts what its /v1/messages reports as input tokens, which differs
 * from the estimate for the prompts below.
 */
import { beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { env, exports } from "cloudflare:workers";
import { call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { setProject } from "../chat/helpers";
import { estimatePromptTokens } from "../../src/billing/estimate";

let org: SeededOrg;
beforeAll(async () => {
  org = await seedOrg();
});

const client = (apiKey = org.key) =>
  new Anthropic({ baseURL: "http://gw.test", apiKey, maxRetries: 0, fetch: (u: RequestInfo | URL, i?: RequestInit) => exports.default.fetch(new Request(u, i)) });

// Ten one-letter words: the fake counts 10 + 3 tokens, the estimate (4 characters a token) fewer.
const PROMPT = "a b c d e f g h i j";
const estimate = estimatePromptTokens({ model: "m", messages: [{ role: "user", content: PROMPT }] });

async function count(model: string, content = PROMPT, apiKey = org.key) {
  const { data, response } = await client(apiKey).messages.countTokens({ model, messages: [{ role: "user", content }] }).withResponse();
  return { tokens: data.input_tokens, source: response.headers.get("x-gateway-token-count") };
}

describe("count_tokens", () => {
  it("is exact for Claude with an Anthropic credential: what the model bills as input", async () => {
    expect(estimate).not.toBe(13);
    const counted = await count("claude-sonnet-4");
    expect(counted).toEqual({ tokens: 13, source: "exact" });
    const msg = await client().messages.create({ model: "anthropic/claude-sonnet-4", max_tokens: 50, messages: [{ role: "user", content: PROMPT }] });
    expect(msg.usage.input_tokens).toBe(counted.tokens);
    // Tools, a system prompt and thinking go to the counter too; fields it refuses do not.
    const res = await call("/v1/messages/count_tokens", {
      method: "POST",
      key: org.key,
      ...json({ model: "claude-sonnet-4", system: "be brief", thinking: { type: "enabled", budget_tokens: 2000 }, tools: [{ name: "t", input_schema: { type: "object" } }], messages: [{ role: "user", content: PROMPT }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-token-count")).toBe("exact");
    expect(await res.json()).toEqual({ input_tokens: 15 });
  });

  it("is the estimate for a model no provider counts for, and says so", async () => {
    expect(await count("gpt-4o-mini")).toEqual({ tokens: estimate, source: "estimate" });
    expect(await count("no-such-model")).toEqual({ tokens: estimate, source: "estimate" });
  });

  it("falls back to the estimate when Anthropic's counter fails", async () => {
    const text = `${PROMPT} [[fake:status=500]]`;
    const expected = estimatePromptTokens({ model: "m", messages: [{ role: "user", content: text }] });
    expect(await count("claude-sonnet-4", text)).toEqual({ tokens: expected, source: "estimate" });
  });

  it("uses the organization's own Anthropic key in api-keys mode, and estimates without one", async () => {
    const own = await seedOrg();
    await setProject(own.projectId, { mode: "api-keys" });
    expect(await count("claude-sonnet-4", PROMPT, own.key)).toEqual({ tokens: estimate, source: "estimate" });
    const added = await call("/v1/master/provider-keys", { method: "POST", key: own.masterKey, ...json({ provider: "anthropic", token: "sk-ant-own", baseUrl: `${env.FAKE_UPSTREAM_URL}/anthropic` }) });
    expect(added.status).toBe(201);
    expect(await count("claude-sonnet-4", PROMPT, own.key)).toEqual({ tokens: 13, source: "exact" });
  });
});
