/**
 * Rate limits (contract section 7): requests and tokens per minute, per key and
 * per organization, counted by lease in RateLimiter objects, on `/v1/*` and `/mcp` alike.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addKey, call, json, seedOrg, type SeededOrg } from "../helpers/fixtures";
import { chat, user } from "../chat/helpers";
import { rpc } from "../mcp/helpers";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { PLAN_RATE_LIMITS } from "../../src/rate-limits/plans";
import { signIn } from "../dashboard/session";

/** Tests that count within one window start at least 5 s before it ends. */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((r) => setTimeout(r, left + 20));
}

const ok = (key: string, content = "hi") => chat(key, { model: "gpt-4o-mini", max_tokens: 5, messages: user(content) }, { "x-no-cache": "true" });

function expectRateHeaders(res: Response, limit: number): void {
  expect(res.headers.get("x-ratelimit-limit"), `${res.url} ${res.status}`).toBe(String(limit));
  const remaining = Number(res.headers.get("x-ratelimit-remaining"));
  expect(remaining).toBeGreaterThanOrEqual(0);
  expect(remaining).toBeLessThan(limit);
  const reset = Number(res.headers.get("x-ratelimit-reset"));
  expect(reset).toBeGreaterThanOrEqual(0);
  expect(reset).toBeLessThanOrEqual(60);
}

async function expect429(res: Response, message: RegExp): Promise<void> {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  const body = (await res.json()) as { error: { type: string; code: string; message: string } };
  expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
  expect(body.error.message).toMatch(message);
}

const patchOrg = (org: SeededOrg, body: unknown) => call("/v1/master/organization", { method: "PATCH", key: org.masterKey, ...json(body) });

describe("rate limits", () => {
  it("every /v1 answer that takes a gateway key carries x-ratelimit-limit/remaining/reset (the plan's default here), errors too", async () => {
    const org = await seedOrg({ plan: "pro" });
    const limit = PLAN_RATE_LIMITS.pro.requestsPerMinute;
    const k = org.key;
    const answers: Response[] = [
      await ok(k),
      await chat(k, { model: "gpt-4o-mini", max_tokens: 5, stream: true, messages: user("stream") }, { "x-no-cache": "true" }),
      await chat(k, { model: "gpt-4o-mini" }),
      await chat(k, { model: "no-such-model", messages: user("x") }),
      await call("/v1/models", { key: k }),
      await call("/v1/models/gpt-4o-mini", { key: k }),
      await call("/v1/embeddings", { method: "POST", key: k, ...json({ model: "text-embedding-3-small", input: "hello" }) }),
      await call("/v1/messages", { method: "POST", key: k, ...json({ model: "claude-sonnet-4", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }),
      await call("/v1/responses", { method: "POST", key: k, ...json({ model: "gpt-4o-mini", input: "hi", max_output_tokens: 16 }) }),
      await call("/v1/moderations", { method: "POST", key: k, ...json({ input: "hello" }) }),
      await call("/v1/videos/video_unknown", { key: k }),
    ];
    const statuses = [];
    for (const res of answers) {
      statuses.push(res.status);
      expectRateHeaders(res, limit);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.some((s) => s >= 400)).toBe(true);
    // No key, no limit headers; the master API is not rate limited this way.
    const open = await call("/v1/models");
    expect(open.headers.get("x-ratelimit-limit")).toBeNull();
    expect((await call("/v1/master/keys", { key: org.masterKey })).headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("over a key's requests per minute: 429 with Retry-After, the error envelope and the headers; the tightest limit is the one shown", async () => {
    await freshWindow();
    const org = await seedOrg();
    const created = await call("/v1/master/keys", { method: "POST", key: org.masterKey, ...json({ projectId: org.projectId, requestsPerMinute: 3 }) });
    expect(created.status).toBe(201);
    const key = ((await created.json()) as { apiKey: { id: string; token: string; requestsPerMinute: number } }).apiKey;
    expect(key.requestsPerMinute).toBe(3);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await ok(key.token);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("3");
      remaining.push(res.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const refused = await ok(key.token);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("3");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    // The window slides, counted per second: the first request leaves it a minute after its second ends.
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(61);
    await expect429(refused, /this API key allows 3 requests per minute/);
    // Non-spending routes too.
    await expect429(await call("/v1/models", { key: key.token }), /3 requests per minute/);
    // Other keys of the organization are not affected; raising the limit (PATCH) lets the key through.
    expect((await ok(org.key)).status).toBe(200);
    const patched = await call(`/v1/master/keys/${key.id}`, { method: "PATCH", key: org.masterKey, ...json({ requestsPerMinute: 100 }) });
    expect(((await patched.json()) as { apiKey: { requestsPerMinute: number } }).apiKey.requestsPerMinute).toBe(100);
    const after = await ok(key.token);
    expect(after.status, await after.clone().text()).toBe(200);
  });

  it("an organization's limit is shared by all its keys, set with PATCH /v1/master/organization; null returns to the plan's", async () => {
    await freshWindow();
    const org = await seedOrg({ plan: "free" });
    const set = await patchOrg(org, { rateLimits: { requestsPerMinute: 4 } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { organization: { rateLimits: unknown } }).organization.rateLimits).toEqual({
      requestsPerMinute: 4,
      tokensPerMinute: PLAN_RATE_LIMITS.free.tokensPerMinute,
      planDefaults: PLAN_RATE_LIMITS.free,
      max: PLAN_RATE_LIMITS.free,
    });
    const a = await addKey(org, { description: "a" });
    const b = await addKey(org, { description: "b" });
    expect((await ok(a.token)).status).toBe(200);
    expect((await ok(b.token)).status).toBe(200);
    expect((await ok(a.token)).status).toBe(200);
    const last = await ok(b.token);
    expect(last.status).toBe(200);
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    await expect429(await ok(a.token), /this organization allows 4 requests per minute/);
    await expect429(await ok(b.token), /this organization allows 4 requests per minute/);

    const reset = await patchOrg(org, { rateLimits: { requestsPerMinute: null } });
    expect(((await reset.json()) as { organization: { rateLimits: { requestsPerMinute: number } } }).organization.rateLimits.requestsPerMinute).toBe(
      PLAN_RATE_LIMITS.free.requestsPerMinute,
    );
    expect((await ok(a.token)).status).toBe(200);
    expect((await patchOrg(org, { rateLimits: { requestsPerMinute: 0 } })).status).toBe(400);
  });

  it("/mcp calls count in the same window as /v1 (the fixed per-key MCP limit is gone)", async () => {
    await freshWindow();
    const org = await seedOrg();
    const key = await addKey(org, { requestsPerMinute: 3 });
    expect((await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { key: key.token })).status).toBe(200);
    expect((await call("/v1/models", { key: key.token })).headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await rpc({ jsonrpc: "2.0", id: 2, method: "ping" }, { key: key.token })).status).toBe(200);
    const refused = await rpc({ jsonrpc: "2.0", id: 3, method: "ping" }, { key: key.token });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    await expect429(await call("/v1/models", { key: key.token }), /3 requests per minute/);
  });

  it("tokens per minute count settled tokens: once the window's tokens are spent, requests are refused", async () => {
    await freshWindow();
    const org = await seedOrg();
    const key = await addKey(org, { tokensPerMinute: 30 });
    let res = await ok(key.token, "one");
    expect(res.status).toBe(200);
    const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    const perRequest = usage.prompt_tokens + usage.completion_tokens;
    expect(perRequest).toBeGreaterThan(0);
    expect(perRequest).toBeLessThan(30);
    // No refusal before the settled tokens reach the limit.
    let spent = perRequest;
    while (spent < 30) {
      res = await ok(key.token, "one");
      expect(res.status).toBe(200);
      const u = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
      spent += u.prompt_tokens + u.completion_tokens;
    }
    // Once the tokens are reported (within SETTLE_BATCH_MS) and the isolate's lease ended (1 s), refused.
    await new Promise((r) => setTimeout(r, 1_200));
    await expect429(await ok(key.token), /this API key allows 30 tokens per minute/);
    // The organization's other keys are not affected.
    expect((await ok(org.key)).status).toBe(200);
  });

  it("the dashboard sets the organization's and a key's limits through the session API and shows them", async () => {
    const org = await seedOrg({ plan: "pro" });
    const s = await signIn(org.ownerEmail, org.ownerPassword);
    const session = (path: string, body: unknown) =>
      call(`/api${path}`, { method: "PATCH", headers: { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await session("/organization", { rateLimits: { requestsPerMinute: 250, tokensPerMinute: null } })).status).toBe(200);
    expect((await session(`/keys/${org.keyId}`, { requestsPerMinute: 20, tokensPerMinute: 5000 })).status).toBe(200);
    const page = async (path: string) => (await call(path, { headers: { cookie: s.cookie, accept: "text/html" } })).text();
    const orgHtml = await page("/dashboard/organization");
    expect(orgHtml).toContain("Rate limits");
    expect(orgHtml).toMatch(/name="rateLimits.requestsPerMinute"[^>]*value="250"/);
    expect(orgHtml).toContain(`plan: ${PLAN_RATE_LIMITS.pro.tokensPerMinute}`);
    const keyHtml = await page(`/dashboard/keys?edit=${org.keyId}`);
    expect(keyHtml).toMatch(/name="requestsPerMinute"[^>]*value="20"/);
    expect(keyHtml).toMatch(/name="tokensPerMinute"[^>]*value="5000"/);
    // In force at once: the key's 20 is the tightest limit.
    expect((await ok(org.key)).headers.get("x-ratelimit-limit")).toBe("20");
  });

  it("steady state: no call to a rate or budget object on the request path once the isolate holds leases", async () => {
    const org = await seedOrg();
    const key = await addKey(org, { requestsPerMinute: 100_000, tokensPerMinute: 100_000_000 });
    const counted = async (): Promise<{ status: number; rate: number; keyState: number; headers: Headers }> => {
      let rate = 0;
      let keyState = 0;
      const counting = <T extends object>(ns: T, bump: () => void): T =>
        new Proxy(ns, {
          get(target, prop) {
            const value: unknown = Reflect.get(target, prop, target);
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              if (prop === "get" || prop === "getByName") bump();
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      const patched = Object.create(env, {
        RATE_LIMITER: { value: counting(env.RATE_LIMITER, () => rate++), enumerable: true },
        KEY_STATE: { value: counting(env.KEY_STATE, () => keyState++), enumerable: true },
      }) as Env;
      const req = new Request("http://gw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json", "x-no-cache": "true" },
        // Streamed: its headers leave with the first event, before the record's commit (one call to
        // the key's object per round trip, by design), which a JSON answer waits for whole.
        body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, stream: true, messages: user("steady") }),
      });
      const res = await app.fetch(req, patched, createExecutionContext());
      // Counted up to the response's headers: admission and the upstream call (background renewals
      // and the record come later).
      const counts = { rate, keyState };
      await res.arrayBuffer();
      return { status: res.status, ...counts, headers: res.headers };
    };
    const first = await counted();
    expect(first.status).toBe(200);
    // The organization's window and the key's, side by side; and, before this isolate knows the
    // key's window, the hold of the request's token bound there (its own token limit).
    expect(first.rate).toBeGreaterThanOrEqual(2);
    const next = await counted();
    expect(next.status).toBe(200);
    expect(next.rate).toBe(0);
    expect(next.keyState).toBe(0);
    expect(Number(next.headers.get("x-ratelimit-remaining"))).toBeLessThan(Number(next.headers.get("x-ratelimit-limit")));
  });
});
