/** The fake upstream's directives (README.md), exercised over real HTTP from workerd. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseDirectives, plan } from "./fake-common.mjs";

const chat = (provider: string, text: string, extra: Record<string, unknown> = {}) =>
  fetch(`${env.FAKE_UPSTREAM_URL}/${provider}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: text }], ...extra }),
  });

describe("fake upstream directives", () => {
  it("parses unscoped and provider-scoped directives (scoped wins, other scopes ignored)", () => {
    const d = parseDirectives("x [[fake:status=500,tools]] [[fake@groq:status=429]] [[fake@openai:hang]]", "groq");
    expect(Object.fromEntries(d)).toEqual({ status: "429", tools: true });
    expect(Object.fromEntries(parseDirectives("[[fake@groq:status=429]]", "together-ai"))).toEqual({});
  });

  it("plans deterministic usage", () => {
    const p = plan({ provider: "p", model: "m", directives: parseDirectives("[[fake:words=4,reasoning,cached]]", "p"), allText: "a b c d", tools: [] });
    expect(p.text).toBe("w1 w2 w3 w4");
    expect(p.usage).toEqual({ prompt: 7, completion: 4 + 6, reasoning: 6, cached: 3, cacheWrite5m: 1, cacheWrite1h: 0, image: 0 });
  });

  it("fails over in one request: groq 500, together-ai 200", async () => {
    const text = "hi [[fake@groq:status=500]]";
    expect((await chat("groq", text)).status).toBe(500);
    const ok = await chat("together-ai", text);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe("Hello from together-ai/m");
  });

  it("resets the connection and hangs", async () => {
    await expect(chat("mistral", "[[fake:reset]]")).rejects.toThrow();
    const started = Date.now();
    await expect(
      fetch(`${env.FAKE_UPSTREAM_URL}/mistral/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer k" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "[[fake:hang]]" }] }),
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("drips, omits [DONE], returns malformed JSON and huge bodies", async () => {
    const started = Date.now();
    const dripped = await (await chat("groq", "[[fake:drip=40,no_done]]", { stream: true })).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40 * 4);
    expect(dripped).toContain('"finish_reason":"stop"');
    expect(dripped).not.toContain("[DONE]");
    const bad = await chat("groq", "[[fake:malformed]]");
    expect(bad.status).toBe(200);
    await expect(bad.clone().json()).rejects.toThrow();
    const huge = (await (await chat("groq", "[[fake:huge]]")).json()) as { choices: Array<{ message: { content: string } }>; usage: { completion_tokens: number } };
    expect(huge.choices[0]?.message.content.split(" ")).toHaveLength(10000);
    expect(huge.usage.completion_tokens).toBe(10000);
  });

  it("rejects missing credentials like the real APIs", async () => {
    const res = await fetch(`${env.FAKE_UPSTREAM_URL}/openai/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    const anth = await fetch(`${env.FAKE_UPSTREAM_URL}/anthropic/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" }, body: "{}" });
    expect(anth.status).toBe(400);
  });
});
