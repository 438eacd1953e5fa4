/**
 * The bench instruments' headers come from one middleware (src/routes/middleware/instruments.ts)
 * and only when the bench configures them: an ordinary request's answer carries none, a
 * production deployment carries none even with the bench vars set, and DEBUG_DO_CALLS and path
 * tracing still stamp the chat answer (the world bench reads them).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { seedOrg } from "../helpers/fixtures";
import { worldEnv } from "../../src/lib/debug-world";
import { app } from "../../src/app";
import type { Env } from "../../src/env";

const BENCH_HEADERS = ["x-gateway-do-calls", "x-gateway-path-calls", "x-gateway-path-timing"];

async function chat(key: string, e: Env): Promise<Response> {
  const ec = createExecutionContext();
  const res = await app.fetch(
    new Request("http://gw.test/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-no-cache": "true" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
    }),
    e,
    ec,
  );
  await res.text();
  await waitOnExecutionContext(ec);
  return res;
}

const withVars = (vars: Record<string, string>): Env =>
  Object.create(env, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { value: v, enumerable: true }]))) as Env;

const benchHeaders = (res: Response): Record<string, string | null> => Object.fromEntries(BENCH_HEADERS.map((h) => [h, res.headers.get(h)]));

describe("bench instruments on the chat answer", () => {
  it("an ordinary request carries no bench header", async () => {
    const org = await seedOrg();
    const res = await chat(org.key, worldEnv(env));
    expect(res.status).toBe(200);
    expect(benchHeaders(res)).toEqual({ "x-gateway-do-calls": null, "x-gateway-path-calls": null, "x-gateway-path-timing": null });
  });

  it("the bench's vars stamp the answer once per request: object calls, path calls and path timing", async () => {
    const org = await seedOrg();
    const res = await chat(org.key, worldEnv(withVars({ DEBUG_DO_CALLS: "1", DEBUG_PATH_CALLS: "1" })));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-do-calls")).toMatch(/^\d+$/);
    expect(res.headers.get("x-gateway-path-calls")).toMatch(/^far=\d+;near=\d+;cancelled=\d+$/);
    expect(res.headers.get("x-gateway-path-timing")).toMatch(/^at=\d+;.*\bkey=\d+;.*\bexec=\d+;.*\bfirst=\d+;.*release=\d+$/);
  });

  it("a refusal of a traced request is stamped too (the bench sees where a refused request's time went)", async () => {
    const res = await chat("sk-not-a-key", worldEnv(withVars({ DEBUG_PATH_CALLS: "1" })));
    expect(res.status).toBe(401);
    expect(res.headers.get("x-gateway-path-timing")).toMatch(/^at=\d+;.*release=\d+$/);
  });

  it("production never carries them, even with the bench vars set", async () => {
    const org = await seedOrg();
    const res = await chat(org.key, worldEnv(withVars({ ENVIRONMENT: "production", DEBUG_DO_CALLS: "1", DEBUG_PATH_CALLS: "1" })));
    expect(benchHeaders(res)).toEqual({ "x-gateway-do-calls": null, "x-gateway-path-calls": null, "x-gateway-path-timing": null });
  });
});
