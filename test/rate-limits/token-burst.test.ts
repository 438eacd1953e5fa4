/**
 * A key's tokens-per-minute limit holds in a burst: each request holds its token upper bound in
 * the key's window at admission (as spend reserves its cost), so 30 concurrent requests stop at
 * the limit plus one request, instead of all being admitted because none had settled yet.
 */
import { describe, expect, it } from "vitest";
import { addKey, call, seedOrg } from "../helpers/fixtures";

const LIMIT = 2_000;
const MAX_TOKENS = 400;

describe("tokens per minute under a burst", () => {
  it("a key limited to 2,000 tokens/min: 30 concurrent requests admit at most the limit plus one request", async () => {
    const org = await seedOrg();
    const key = await addKey(org, { description: "tpm", tokensPerMinute: LIMIT });
    const body = JSON.stringify({ model: "gpt-4o-mini", max_tokens: MAX_TOKENS, messages: [{ role: "user", content: "burst [[fake:words=300]]" }] });
    const answers = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const res = await call("/v1/chat/completions", { method: "POST", key: key.token, body, headers: { "content-type": "application/json", "x-no-cache": "true" } });
        const json = (await res.json()) as { usage?: { total_tokens: number }; error?: { code: string } };
        return { status: res.status, tokens: json.usage?.total_tokens ?? 0, code: json.error?.code };
      }),
    );
    const served = answers.filter((a) => a.status === 200);
    const admittedTokens = served.reduce((n, a) => n + a.tokens, 0);
    const oneRequest = Math.max(...served.map((a) => a.tokens));
    expect(served.length).toBeGreaterThan(0);
    expect(admittedTokens, JSON.stringify(answers.map((a) => a.status))).toBeLessThanOrEqual(LIMIT + oneRequest);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(429);
      expect(a.code).toBe("rate_limit_exceeded");
    }
  });
});
