/**
 * KEY_HASH_SECRET is required (contract section 1): without it the Worker authenticates nothing,
 * whichever door a secret comes through (gateway key, x-api-key, master key, MCP), even a key whose
 * context this isolate already holds. The answer is the error envelope, never a 200 or a stack.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { call, seedOrg } from "../helpers/fixtures";

async function withoutSecret(path: string, init: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://gw.test${path}`, init), { ...env, KEY_HASH_SECRET: undefined }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("KEY_HASH_SECRET unset", () => {
  it("refuses every credential with an error envelope", async () => {
    const org = await seedOrg();
    const chatBody = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    // Warm this isolate's key cache first: a cached context must not stand in for the fingerprint.
    expect((await call("/v1/chat/completions", { method: "POST", key: org.key, body: chatBody })).status).toBe(200);
    const answers = [
      await withoutSecret("/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" }, body: chatBody }),
      await withoutSecret("/v1/chat/completions", { method: "POST", headers: { "x-api-key": org.key, "content-type": "application/json" }, body: chatBody }),
      await withoutSecret("/v1/master/keys", { headers: { authorization: `Bearer ${org.masterKey}` } }),
      await withoutSecret("/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    ];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      const text = await res.text();
      expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(text).toContain("KEY_HASH_SECRET");
    }
  });
});
